"""Deck building for the built-in agents: a card scoring function and a mana curve.

Every card gets a value in "stat points" (a vanilla creature of cost ``c`` has
about ``2c + 1`` of them); its *surplus* over that baseline says how efficient it
is. The 1.0/1.2 draft takes the best surplus of each triple, nudged towards a
mana curve and enough creatures; the 1.5 constructed turn fills a whole deck the
same way. Both are pure functions of the cards on offer, so they work in-process
(on a :class:`~cardarena.locm.engine.state.State`) and in a bot process (on parsed input).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..engine.cards import (
    BREAKTHROUGH,
    CHARGE,
    DRAIN,
    GUARD,
    LETHAL,
    WARD,
    Area,
    Card,
    CardType,
)
from ..engine.deckbuilding import MAX_COPIES
from ..engine.rules import DECK_SIZE, RuleSet
from ..engine.state import Action, ActionType, Phase, State
from .cardvalues import fitted_value

CURVE_BONUS = 1.5
CREATURE_BONUS = 1.5


@dataclass(frozen=True)
class DeckPolicy:
    """The shape of deck an agent wants."""

    curve: tuple[int, ...] = (3, 5, 6, 5, 4, 3, 2, 2)
    """Wanted cards per cost 0-1, 2, 3, 4, 5, 6, 7, 8+ (sums to 30)."""
    min_creatures: int = 18
    """Fewer creatures than this and a deck cannot hold the board."""
    cost_weight: float = 2.0
    """Stat points a mana point is expected to buy (the baseline of the surplus)."""
    values: str = "scored"
    """How cards are valued: ``"scored"`` by the hand-set :func:`card_value` above its
    cost's baseline, ``"fitted"`` by the self-play fit of :mod:`.cardvalues`."""


DEFAULT_DECK = DeckPolicy()
"""A balanced curve, chosen by hand: the greedy baseline's deck."""
AGGRO_DECK = DeckPolicy(curve=(9, 9, 8, 4, 0, 0, 0, 0))
"""Cheap cards first: tuned by self-play (greedy with it beats greedy with
:data:`DEFAULT_DECK` in about 84% of 1.5 games; the draft barely cares)."""


FITTED_DECK = DeckPolicy(curve=(DECK_SIZE,) * 8, min_creatures=0, values="fitted")
"""Card values fitted to self-play results (:mod:`.cardvalues`) alone: no curve and no
creature quota, for the fitted values already price a card's cost and kind."""
DECK_POLICIES: dict[str, DeckPolicy] = {
    "default": DEFAULT_DECK,
    "aggro": AGGRO_DECK,
    "fitted": FITTED_DECK,
}
"""The named deck policies (benchmarks/decks.py compares them)."""


def curve_bucket(cost: int, policy: DeckPolicy = DEFAULT_DECK) -> int:
    """The index of ``cost`` in the policy's curve."""
    return max(0, min(cost - 1, len(policy.curve) - 1))


def _keyword_value(keywords: int, attack: int, defense: int) -> float:
    value = 0.0
    if keywords & BREAKTHROUGH:
        value += 0.3 * attack
    if keywords & CHARGE:
        value += 0.4 * attack + 0.3
    if keywords & DRAIN:
        value += 0.5 * attack
    if keywords & GUARD:
        value += 0.3 * defense + 0.5
    if keywords & LETHAL:
        value += 2.5 if attack > 0 else 0.5
    if keywords & WARD:
        value += 0.6 * min(attack, 5) + 1.0
    return value


def _player_effects_value(card: Card) -> float:
    return 0.5 * card.my_health - 0.8 * card.opp_health + 2.0 * card.draw


def card_value(card: Card, rules: RuleSet) -> float:
    """What a card is worth when played, in stat points."""
    kind = card.type
    if kind == CardType.CREATURE:
        value = (
            card.attack + card.defense + _keyword_value(card.keywords, card.attack, card.defense)
        )
        if card.attack == 0:
            value -= 1.5
    elif kind == CardType.GREEN_ITEM:
        value = 0.8 * (card.attack + card.defense) + 0.6 * _keyword_value(
            card.keywords, card.attack + 2, card.defense + 2
        )
    elif kind == CardType.RED_ITEM:
        # Removal: damage kills, keyword removal answers Guard/Ward/Lethal threats.
        value = 1.1 * -card.defense - 0.5 * card.attack + 0.7 * bin(card.keywords).count("1")
    else:  # blue: damage to a creature or to the face
        value = 0.9 * -card.defense
    value += _player_effects_value(card)
    if rules.area_effects and card.area != Area.TARGET:
        value *= 1.6 if card.area == Area.LANE1 else 1.8
    return value


def card_surplus(card: Card, rules: RuleSet, policy: DeckPolicy = DEFAULT_DECK) -> float:
    """Value above the vanilla baseline of the card's cost: the card's efficiency."""
    if policy.values == "fitted":
        return fitted_value(card, rules)
    return card_value(card, rules) - (policy.cost_weight * card.cost + 1.0)


def draft_pick(
    offered: Sequence[Card],
    chosen: Sequence[Card],
    rules: RuleSet,
    policy: DeckPolicy = DEFAULT_DECK,
) -> int:
    """The index of the card to take from a draft triple, given the picks so far."""
    picks = len(chosen)
    curve = policy.curve
    buckets = Counter(curve_bucket(card.cost, policy) for card in chosen)
    creatures = sum(1 for card in chosen if card.type == CardType.CREATURE)
    progress = (picks + 1) / DECK_SIZE

    def score(card: Card) -> float:
        value = card_surplus(card, rules, policy)
        bucket = curve_bucket(card.cost, policy)
        if buckets[bucket] < curve[bucket] * progress:
            value += CURVE_BONUS
        elif buckets[bucket] >= curve[bucket] + 1:
            value -= CURVE_BONUS
        if card.type == CardType.CREATURE and creatures < policy.min_creatures * progress:
            value += CREATURE_BONUS
        return value

    return max(range(len(offered)), key=lambda index: (score(offered[index]), -index))


def constructed_deck(
    pool: Sequence[Card], rules: RuleSet, policy: DeckPolicy = DEFAULT_DECK
) -> list[Card]:
    """Thirty cards (at most two copies each) from the 1.5 pool, best first."""
    ranked = sorted(pool, key=lambda card: (-card_surplus(card, rules, policy), card.base_id))
    deck: list[Card] = []
    copies: Counter[int] = Counter()
    buckets: Counter[int] = Counter()
    creatures = 0
    items_allowed = DECK_SIZE - policy.min_creatures
    # First pass: respect the curve and the creature quota; second: best of the rest.
    for strict in (True, False):
        for card in ranked:
            while len(deck) < DECK_SIZE and copies[card.base_id] < MAX_COPIES:
                bucket = curve_bucket(card.cost, policy)
                is_creature = card.type == CardType.CREATURE
                if strict and (
                    buckets[bucket] >= policy.curve[bucket]
                    or (not is_creature and len(deck) - creatures >= items_allowed)
                ):
                    break
                deck.append(card)
                copies[card.base_id] += 1
                buckets[bucket] += 1
                creatures += is_creature
    return deck


_deck_cache: dict[tuple[int, DeckPolicy], tuple[tuple[Card, ...], list[Card]]] = {}


def deck_building_action(state: State, policy: DeckPolicy = DEFAULT_DECK) -> Action:
    """The scored deck-building choice of ``state.current_player`` (PICK or CHOOSE)."""
    if state.phase != Phase.DECK_BUILDING:
        raise ValueError("deck_building_action outside deck building")
    player = state.players[state.current_player]
    if state.rules.draft:
        offered = state.draft[len(player.chosen)]
        return Action(ActionType.PICK, draft_pick(offered, player.chosen, state.rules, policy))
    key = (id(state.pool), policy)
    cached = _deck_cache.get(key)
    if cached is None or cached[0] is not state.pool:
        if len(_deck_cache) > 64:
            _deck_cache.clear()
        cached = (state.pool, constructed_deck(state.pool, state.rules, policy))
        _deck_cache[key] = cached
    wanted = Counter(card.base_id for card in cached[1])
    for card in cached[1]:
        if player.chosen_counts.get(card.base_id, 0) < wanted[card.base_id]:
            return Action(ActionType.CHOOSE, card.base_id)
    # Already past the plan (someone else chose for us): the best card still open.
    open_ids = {action.id for action in state.legal_actions()}
    best = max(
        (card for card in state.pool if card.base_id in open_ids),
        key=lambda card: card_surplus(card, state.rules, policy),
    )
    return Action(ActionType.CHOOSE, best.base_id)
