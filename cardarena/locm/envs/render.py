"""A readable text frame of a LOCM state as one player sees it (``render_mode="ansi"``)."""

from __future__ import annotations

from ..cards import Card, CardType
from ..state import Creature, Phase, State
from .encoding import Encoder

_TYPES = {CardType.CREATURE: "creature", CardType.GREEN_ITEM: "green",
          CardType.RED_ITEM: "red", CardType.BLUE_ITEM: "blue"}  # fmt: skip


def _card(card: Card) -> str:
    text = f"#{card.base_id} {_TYPES[CardType(card.type)]} cost {card.cost} "
    text += f"{card.attack}/{card.defense} {card.abilities}"
    extras = [f"{name} {value:+d}" for name, value in
              (("me", card.my_health), ("opp", card.opp_health), ("draw", card.draw)) if value]
    return text + (" " + " ".join(extras) if extras else "")  # fmt: skip


def _creature(creature: Creature, slot: int) -> str:
    ready = " ready" if creature.can_attack else ""
    return (f"  [{slot}] #{creature.card.base_id} {creature.attack}/{creature.defense} "
            f"{_abilities(creature.keywords)}{ready}")  # fmt: skip


def _abilities(bits: int) -> str:
    return "".join(letter if bits >> i & 1 else "-" for i, letter in enumerate("BCDGLW"))


def render_text(state: State, viewer: int, encoder: Encoder) -> str:
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
        for creature, slot in zip(side.board, encoder.board_slots(side.board), strict=True):
            lines.append(_creature(creature, slot))
    lines.append("your hand:")
    lines.extend(f"  [{i}] {_card(inst.card)}" for i, inst in enumerate(me.hand))
    return "\n".join(lines) + "\n"
