"""Card values fitted to self-play results: what a card adds to a deck's chance to win.

A card is described by a few numbers per card type (:func:`card_features`); its
value is a weighted sum of them (``cardvalues_data.FEATURE_WEIGHTS``, one set per
version), or in 1.0/1.2 a value of its own (``cardvalues_data.CARD_VALUES``, one per
card of the fixed list). Both come from logistic regressions of who won on the
difference of the two decks, over games whose decks were built at random (or by a
deck policy with random deviations) and whose battles ``builtin:greedy`` played
(``scripts/fit_card_values.py`` makes the games and the fit; docs/agents.md says
how many and how well it predicts). Values are in
log-odds of winning per card; :func:`fitted_value` rescales them to the stat points
the deck-building rules of :mod:`.cardscore` work in.
"""

from __future__ import annotations

from ..engine.cards import Card
from ..engine.rules import RuleSet
from .cardvalues_data import CARD_VALUES, FEATURE_WEIGHTS

_TYPE_NAMES = ("creature", "green", "red", "blue")
_PER_TYPE = (
    "count", "cost", "cost_squared", "attack", "defense",
    "breakthrough", "charge", "drain", "guard", "lethal", "ward",
    "my_health", "opp_health", "draw", "area_lane", "area_both",
)  # fmt: skip
_CREATURE_EXTRA = (
    "creature_attack_x_defense", "creature_zero_attack",
    "creature_ward_x_attack", "creature_lethal_x_attack", "creature_drain_x_attack",
)  # fmt: skip
FEATURE_NAMES: tuple[str, ...] = (
    *(f"{kind}_{name}" for kind in _TYPE_NAMES for name in _PER_TYPE),
    *_CREATURE_EXTRA,
)
"""The features of a card, in the order of the weights."""


def card_features(card: Card, rules: RuleSet) -> tuple[float, ...]:
    """The card's features: its type's block filled, the other types' blocks zero."""
    width = len(_PER_TYPE)
    values = [0.0] * len(FEATURE_NAMES)
    keywords = card.keywords
    block = (
        1.0, card.cost, card.cost * card.cost, card.attack, card.defense,
        *(float(keywords >> bit & 1) for bit in range(6)),
        card.my_health, card.opp_health, card.draw,
        float(rules.area_effects and card.area == 1), float(rules.area_effects and card.area == 2),
    )  # fmt: skip
    start = card.type * width
    values[start : start + width] = block
    if card.type == 0:
        extra = 4 * width
        attack = card.attack
        values[extra] = attack * card.defense
        values[extra + 1] = float(attack == 0)
        values[extra + 2] = attack * (keywords >> 5 & 1)
        values[extra + 3] = attack * (keywords >> 4 & 1)
        values[extra + 4] = attack * (keywords >> 2 & 1)
    return tuple(values)


STAT_POINTS_PER_LOG_ODDS = 100.0
"""Rescales a fitted value to about the spread of :func:`~.cardscore.card_surplus`."""


def fitted_value(card: Card, rules: RuleSet) -> float:
    """The card's fitted worth in a deck, in stat points (its cost already counted).

    1.0/1.2 cards of the fixed list have a value of their own; generated 1.5 cards
    (and cards from outside the list) are valued by their features.
    """
    values = CARD_VALUES.get(rules.version)
    if values is not None and 0 < card.base_id <= len(values):
        return STAT_POINTS_PER_LOG_ODDS * values[card.base_id - 1]
    weights = FEATURE_WEIGHTS[rules.version]
    features = card_features(card, rules)
    return STAT_POINTS_PER_LOG_ODDS * sum(w * f for w, f in zip(weights, features, strict=True))
