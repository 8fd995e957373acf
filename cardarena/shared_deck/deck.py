"""The deck generator: one valid deck per tournament, reproducible from a logged seed.

``random.Random`` seeded with an integer gives the same sequence on every Python version we
support, and the deck is stored with each tournament anyway, so a replay never depends on the
generator staying unchanged.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from .rules import (
    BUFF,
    CREATURE,
    DAMAGE,
    DEACTIVATE,
    HEAL,
    MAX_CARD_ID,
    SPELL_TYPES,
    TAKE,
    Card,
)

# How often each type is drawn once every type has appeared; creatures make half the deck.
TYPE_WEIGHTS = {CREATURE: 50, HEAL: 10, DAMAGE: 12, TAKE: 8, BUFF: 10, DEACTIVATE: 10}
STARTERS_PER_CARDS = 10
"""One free creature that makes mana (a "starter") per this many cards, at least one."""
STARTER_WITHIN_TOP = 3
"""A starter is placed among the top cards so that whoever draws first can build mana."""


def generate_deck(seed: int, size: int = 80) -> tuple[Card, ...]:
    """A shuffled deck of ``size`` valid cards with unique ids; every type appears if size >= 6."""
    if not 1 <= size <= MAX_CARD_ID:
        raise ValueError(f"deck size must be in 1..{MAX_CARD_ID}, got {size}")
    rng = random.Random(seed)
    ids = rng.sample(range(1, MAX_CARD_ID + 1), size)
    starters = max(1, size // STARTERS_PER_CARDS)
    kinds = ["starter"] * starters
    kinds += list(SPELL_TYPES)[: size - len(kinds)]  # starters are the creatures
    types, weights = zip(*TYPE_WEIGHTS.items(), strict=True)
    kinds += rng.choices(types, weights=weights, k=size - len(kinds))
    rng.shuffle(kinds)
    top = min(STARTER_WITHIN_TOP, size)
    if "starter" not in kinds[:top]:
        first_starter = kinds.index("starter")
        swap = rng.randrange(top)
        kinds[swap], kinds[first_starter] = kinds[first_starter], kinds[swap]
    deck = tuple(_make_card(rng, card_id, kind) for card_id, kind in zip(ids, kinds, strict=True))
    for card in deck:
        card.validate()
    return deck


def _make_card(rng: random.Random, card_id: int, kind: str) -> Card:
    """One card of the given kind; costs grow with what the card does."""
    if kind == "starter":
        hp = rng.randint(1, 2)
        return Card(card_id, CREATURE, rng.randint(0, 1), hp, hp, 0, rng.randint(1, 2))
    if kind == CREATURE:
        attack = rng.randint(0, 6)
        hp = rng.randint(1, 7)
        mana = rng.choice((0, 0, 1, 1, 2, 3))
        cost = max(0, min(9, (attack + hp + 2 * mana) // 3 + rng.randint(-1, 1)))
        return Card(card_id, CREATURE, attack, hp, hp, cost, mana)
    if kind == HEAL:
        amount = rng.randint(1, 6)
        return Card(card_id, HEAL, 0, amount, 0, amount // 2 + rng.randint(0, 1), -1)
    if kind == DAMAGE:
        amount = rng.randint(1, 6)
        return Card(card_id, DAMAGE, amount, 0, 0, (amount + 1) // 2 + rng.randint(0, 1), -1)
    if kind == TAKE:
        amount = rng.randint(1, 3)
        return Card(card_id, TAKE, amount, 0, 0, rng.randint(0, amount), -1)
    if kind == BUFF:
        attack, health = rng.randint(0, 3), rng.randint(1, 3)
        return Card(card_id, BUFF, attack, health, 0, (attack + health) // 2, -1)
    return Card(card_id, DEACTIVATE, 0, 0, 0, rng.randint(0, 2), -1)


def deck_to_text(deck: Iterable[Card]) -> str:
    """One card per line, top first: the form stored with each tournament."""
    return "\n".join(card.line for card in deck)


def deck_from_text(text: str) -> tuple[Card, ...]:
    """Read a deck written by :func:`deck_to_text` and check every card."""
    deck = tuple(Card.parse(line) for line in text.splitlines() if line.strip())
    if len({card.id for card in deck}) != len(deck):
        raise ValueError("card ids in a deck must be unique")
    for card in deck:
        card.validate()
    return deck
