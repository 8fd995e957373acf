"""Build battle positions by hand for scenario tests."""

from __future__ import annotations

from collections.abc import Sequence

from cardarena.locm import Card, CardInstance, Creature, Phase, State
from cardarena.locm.engine.cards import CardType

CREATURE, GREEN, RED, BLUE = (
    CardType.CREATURE,
    CardType.GREEN_ITEM,
    CardType.RED_ITEM,
    CardType.BLUE_ITEM,
)


def creature_card(
    attack: int, defense: int, keywords: int = 0, cost: int = 0, **effects: int
) -> Card:
    return Card(99, CREATURE, cost, attack, defense, keywords, **effects)


def item_card(kind: CardType, attack: int, defense: int, keywords: int = 0, cost: int = 0,
              **effects: int) -> Card:  # fmt: skip
    return Card(98, kind, cost, attack, defense, keywords, **effects)


def on_board(card: Card, instance_id: int, lane: int = 0, can_attack: bool = True) -> Creature:
    creature = Creature(instance_id, card, lane)
    creature.can_attack = can_attack
    return creature


def battle(
    version: str = "1.5",
    *,
    hands: Sequence[Sequence[tuple[int, Card]]] = ((), ()),
    boards: Sequence[Sequence[Creature]] = ((), ()),
    decks: Sequence[Sequence[tuple[int, Card]]] | None = None,
    health: tuple[int, int] = (30, 30),
    mana: int = 12,
    active: int = 0,
    turn: int = 10,
) -> State:
    """A battle state with exactly these hands, boards and decks; ``active`` to move."""
    state = State.new(version, {"seed": 1})
    while state.phase == Phase.DECK_BUILDING:
        state.apply(state.legal_actions()[0])
    for index, player in enumerate(state.players):
        player.hand = [CardInstance(i, c) for i, c in hands[index]]
        player.board = list(boards[index])
        if decks is not None:
            player.deck = [CardInstance(i, c) for i, c in decks[index]]
        player.health = health[index]
        player.mana = player.max_mana = mana
        player.performed = []
    state.active = active
    state.turn = 2 * (turn // 2) + active
    return state
