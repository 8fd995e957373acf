"""Views of a state: what one player may see, and a JSON form of the whole state.

Kept apart from the rules (OpenSpiel's observers): nothing here changes a game.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .cards import CARDS_BY_ID, Card
from .state import (
    Action,
    ActionType,
    CardInstance,
    Creature,
    EndReason,
    Phase,
    Player,
    State,
)

STATE_FORMAT = "cardarena.locm.state/1"


# --- what a player may see ---------------------------------------------------------


@dataclass(frozen=True)
class CreatureView:
    id: int
    card: Card
    attack: int
    defense: int
    keywords: int
    lane: int
    can_attack: bool


@dataclass(frozen=True)
class SideView:
    """One player's side as seen by the viewer (hand only if it is the viewer's)."""

    health: int
    max_mana: int
    mana: int
    deck_size: int
    next_rune: int
    draw: int
    hand_size: int
    board: tuple[CreatureView, ...]
    hand: tuple[CardInstance, ...] | None
    """None for the opponent: its cards are hidden."""
    last_actions: tuple[tuple[int, Action], ...]


@dataclass(frozen=True)
class PlayerView:
    """Everything one player can know, and nothing more (no deck order, no enemy hand).

    ``my_deck`` is the multiset of the viewer's undrawn cards (it built the deck),
    sorted by baseId so that it does not reveal the order.
    """

    player: int
    version: str
    phase: Phase
    turn: int
    active: int
    me: SideView
    opponent: SideView
    my_deck: tuple[Card, ...]
    offered: tuple[Card, ...]
    """Deck building: the cards on offer (the draft triple or the 1.5 pool)."""
    my_choices: tuple[Card, ...]


def _creature_view(creature: Creature) -> CreatureView:
    return CreatureView(
        creature.id,
        creature.card,
        creature.attack,
        creature.defense,
        creature.keywords,
        creature.lane,
        creature.can_attack,
    )


def _side(player: Player, own: bool) -> SideView:
    return SideView(
        health=player.health,
        max_mana=player.max_mana,
        mana=player.mana,
        deck_size=len(player.deck),
        next_rune=player.next_rune,
        draw=player.draw_shown,
        hand_size=len(player.hand),
        board=tuple(_creature_view(c) for c in player.board),
        hand=tuple(player.hand) if own else None,
        last_actions=tuple(player.performed),
    )


def player_view(state: State, player: int) -> PlayerView:
    """What ``player`` can see of ``state``."""
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player!r}")
    me, opp = state.players[player], state.players[1 - player]
    offered: tuple[Card, ...] = ()
    if state.phase == Phase.DECK_BUILDING:
        if state.rules.draft:
            turn = len(me.chosen)
            offered = state.draft[turn] if turn < len(state.draft) else ()
        else:
            offered = state.pool
    return PlayerView(
        player=player,
        version=state.version,
        phase=state.phase,
        turn=state.turn,
        active=state.active,
        me=_side(me, True),
        opponent=_side(opp, False),
        my_deck=tuple(sorted((inst.card for inst in me.deck), key=lambda c: c.base_id)),
        offered=offered,
        my_choices=tuple(me.chosen),
    )


# --- JSON ----------------------------------------------------------------------------


def _action_json(action: Action) -> list[int]:
    return [int(action.type), action.id, action.target]


def _player_json(player: Player) -> dict[str, Any]:
    return {
        "health": player.health,
        "max_mana": player.max_mana,
        "mana": player.mana,
        "bonus_mana_turns": player.bonus_mana_turns,
        "hand": [[inst.id, inst.card.base_id] for inst in player.hand],
        "deck": [[inst.id, inst.card.base_id] for inst in player.deck],
        "board": [
            {
                "id": c.id,
                "base_id": c.card.base_id,
                "attack": c.attack,
                "defense": c.defense,
                "keywords": c.keywords,
                "lane": c.lane,
                "can_attack": c.can_attack,
                "has_attacked": c.has_attacked,
                "shows_effects": c.shows_effects,
            }
            for c in player.board
        ],
        "runes": list(player.runes),
        "next_turn_draw": player.next_turn_draw,
        "draw_shown": player.draw_shown,
        "health_lost": player.health_lost,
        "performed": [[base_id, *_action_json(action)] for base_id, action in player.performed],
        "chosen": [card.base_id for card in player.chosen],
    }


def state_to_dict(state: State) -> dict[str, Any]:
    """A JSON-ready snapshot of the whole state (cards by baseId, rebuilt from params)."""
    return {
        "format": STATE_FORMAT,
        "version": state.version,
        "params": state.params.as_dict(),
        "league": state.league,
        "phase": state.phase.name.lower(),
        "active": state.active,
        "turn": state.turn,
        "winner": state.winner,
        "end_reason": state.end_reason.name.lower(),
        "players": [_player_json(p) for p in state.players],
    }


def state_from_dict(data: Mapping[str, Any], version: str | None = None) -> State:
    """Rebuild a state from :func:`state_to_dict`; ``version`` guards against mix-ups."""
    if data.get("format") != STATE_FORMAT:
        raise ValueError(f"not a cardarena LOCM state (format {data.get('format')!r})")
    if version is not None and data["version"] != version:
        raise ValueError(f"this state is LOCM {data['version']}, expected LOCM {version}")
    state = State.new(data["version"], data["params"], data["league"])
    cards = state.pool_by_id if not state.rules.draft else CARDS_BY_ID

    def card(base_id: int) -> Card:
        try:
            return cards[base_id]
        except KeyError:
            raise ValueError(f"card {base_id} does not exist in this game") from None

    for player, raw in zip(state.players, data["players"], strict=True):
        player.health = raw["health"]
        player.max_mana = raw["max_mana"]
        player.mana = raw["mana"]
        player.bonus_mana_turns = raw["bonus_mana_turns"]
        player.hand = [CardInstance(i, card(b)) for i, b in raw["hand"]]
        player.deck = [CardInstance(i, card(b)) for i, b in raw["deck"]]
        player.board = []
        for c in raw["board"]:
            creature = Creature(c["id"], card(c["base_id"]), c["lane"])
            creature.attack = c["attack"]
            creature.defense = c["defense"]
            creature.keywords = c["keywords"]
            creature.can_attack = c["can_attack"]
            creature.has_attacked = c["has_attacked"]
            creature.shows_effects = c["shows_effects"]
            player.board.append(creature)
        player.runes = list(raw["runes"])
        player.next_turn_draw = raw["next_turn_draw"]
        player.draw_shown = raw["draw_shown"]
        player.health_lost = raw["health_lost"]
        player.performed = [(b, Action(ActionType(t), i, g)) for b, t, i, g in raw["performed"]]
        player.chosen = [card(b) for b in raw["chosen"]]
        player.chosen_counts = {}
        for chosen in player.chosen:
            player.chosen_counts[chosen.base_id] = player.chosen_counts.get(chosen.base_id, 0) + 1
        player.choosable = None
    state.phase = Phase[data["phase"].upper()]
    state.active = data["active"]
    state.turn = data["turn"]
    state.winner = data["winner"]
    state.end_reason = EndReason[data["end_reason"].upper()]
    return state
