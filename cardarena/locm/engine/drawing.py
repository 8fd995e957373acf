"""A LOCM state drawn as text for people: one home for every text picture of a game.

Two pictures, built from the same pieces (card, creature, keywords, type names): the
frame of a state as one player sees it (the environments' ``render_mode="ansi"``) and
the lines of a turn in a game's account (``locm replay``). Pure functions of a state;
the viewer's pages draw from the same engine state in the browser.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .cards import ABILITIES_TEXT, Card, CardType
from .state import Creature, Phase, Player, State

TYPE_NAMES = {
    CardType.CREATURE: "creature",
    CardType.GREEN_ITEM: "green item",
    CardType.RED_ITEM: "red item",
    CardType.BLUE_ITEM: "blue item",
}
"""What a card type is called in every text picture."""

BoardSlots = Callable[[Sequence[Creature]], Sequence[int]]
"""The slot number of each creature of a board (the environments' action table)."""


def keywords_text(bits: int, *, blanks: bool = True) -> str:
    """``BCDGLW`` with ``-`` for the missing ones (the protocol's form), or without them."""
    text = ABILITIES_TEXT[bits]
    return text if blanks else text.replace("-", "")


def _type(card: Card) -> str:
    """``green`` for a green item: the short name the frame uses."""
    return TYPE_NAMES[CardType(card.type)].removesuffix(" item")


# --- a state as one player sees it (the environments' ansi frame) -------------------


def _card(card: Card) -> str:
    text = f"#{card.base_id} {_type(card)} cost {card.cost} "
    text += f"{card.attack}/{card.defense} {card.abilities}"
    extras = [f"{name} {value:+d}" for name, value in
              (("me", card.my_health), ("opp", card.opp_health), ("draw", card.draw)) if value]
    return text + (" " + " ".join(extras) if extras else "")  # fmt: skip


def _creature_in_slot(creature: Creature, slot: int) -> str:
    ready = " ready" if creature.can_attack else ""
    return (f"  [{slot}] #{creature.card.base_id} {creature.attack}/{creature.defense} "
            f"{keywords_text(creature.keywords)}{ready}")  # fmt: skip


def state_frame(state: State, viewer: int, board_slots: BoardSlots) -> str:
    """The frame: phase and turn, both players, the boards by slot, the viewer's hand."""
    me, opp = state.players[viewer], state.players[1 - viewer]
    lines = [f"LOCM {state.version} — {state.phase.name.lower().replace('_', ' ')}, "
             f"turn {max(state.turn, 0)}, you are player {viewer}"]  # fmt: skip
    if state.phase is Phase.ENDED:
        outcome = "draw" if state.winner is None else (
            "you win" if state.winner == viewer else "you lose")
        lines.append(f"game over: {outcome} ({state.end_reason.name.lower()})")
    elif state.current_player == viewer:
        lines.append("your move")
    for label, side in (("you", me), ("opponent", opp)):
        rune = f" rune {side.runes[0]}" if side.runes else ""
        lines.append(f"{label}: health {side.health} mana {side.mana}/{side.max_mana} "
                     f"deck {len(side.deck)} hand {len(side.hand)}{rune}")  # fmt: skip
    if state.phase is Phase.DECK_BUILDING:
        if state.rules.draft:
            turn = len(me.chosen)
            offered = state.draft[turn] if turn < len(state.draft) else ()
            lines.append(f"draft pick {turn + 1}/30:")
            lines.extend(f"  PICK {i}: {_card(card)}" for i, card in enumerate(offered))
        else:
            lines.append(f"constructed: {len(me.chosen)}/30 chosen from {len(state.pool)} cards")
        return "\n".join(lines) + "\n"
    for label, side in (("opponent board", opp), ("your board", me)):
        lines.append(f"{label}:")
        for creature, slot in zip(side.board, board_slots(side.board), strict=True):
            lines.append(_creature_in_slot(creature, slot))
    lines.append("your hand:")
    lines.extend(f"  [{i}] {_card(inst.card)}" for i, inst in enumerate(me.hand))
    return "\n".join(lines) + "\n"


# --- a turn in a game's account (``locm replay``) ---------------------------------


def creature_text(creature: Creature) -> str:
    """``#id(baseId) attack/defense keywords``."""
    text = f"#{creature.id}({creature.card.base_id}) {creature.attack}/{creature.defense}"
    keywords = keywords_text(creature.keywords, blanks=False)
    return f"{text} {keywords}" if keywords else text


def side_text(state: State, index: int) -> str:
    """One player's health, mana, deck, hand (and next rune where there are runes)."""
    player: Player = state.players[index]
    runes = f", next rune {player.next_rune}" if state.rules.runes else ""
    return (
        f"player {index}: {player.health} HP, {player.max_mana} mana, deck {len(player.deck)}, "
        f"hand {len(player.hand)}{runes}"
    )


def board_text(state: State, index: int) -> str:
    """One player's creatures, lane by lane."""
    board = state.players[index].board
    lanes = []
    for lane in range(state.rules.lanes):
        creatures = [creature_text(c) for c in board if c.lane == lane or state.rules.lanes == 1]
        lanes.append(" ".join(creatures) or "-")
    return f"  board {index}: " + " | ".join(lanes)


def hand_text(state: State, index: int) -> str:
    """One player's hand: instance id, card, cost and the kind of an item."""
    cards = []
    for inst in state.players[index].hand:
        card = inst.card
        kind = "" if card.type == CardType.CREATURE else f" {TYPE_NAMES[CardType(card.type)]}"
        cards.append(f"#{inst.id}({card.base_id}, {card.cost} mana{kind})")
    return f"  hand {index}: " + (" ".join(cards) or "-")
