"""Views of a state: what one player may see, and a JSON form of the whole state.

Kept apart from the rules (OpenSpiel's observers): nothing here changes a game.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .cards import CARDS_BY_ID, Card
from .deckbuilding import MAX_COPIES
from .errors import InvalidStateError
from .params import ParameterError
from .rules import DECK_SIZE, HAND_LIMIT, RUNES, VERSIONS
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
from .validation import (
    MAX_DRAWS,
    MAX_PERFORMED,
    check_state,
    expect_bool,
    expect_int,
    expect_list,
    expect_mapping,
    expect_str,
    show,
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


_STATE_KEYS = (
    "format", "version", "params", "league", "phase", "active", "turn", "winner",
    "end_reason", "players",
)  # fmt: skip
_PLAYER_KEYS = (
    "health", "max_mana", "mana", "bonus_mana_turns", "hand", "deck", "board", "runes",
    "next_turn_draw", "draw_shown", "health_lost", "performed", "chosen",
)  # fmt: skip
_CREATURE_KEYS = (
    "id", "base_id", "attack", "defense", "keywords", "lane", "can_attack", "has_attacked",
    "shows_effects",
)  # fmt: skip
_PHASES = tuple(phase.name.lower() for phase in Phase)
_END_REASONS = tuple(reason.name.lower() for reason in EndReason)
_PERFORMED_TYPES = (ActionType.SUMMON, ActionType.ATTACK, ActionType.USE)


def state_from_dict(data: Mapping[str, Any], version: str | None = None) -> State:
    """Rebuild a state from :func:`state_to_dict`; ``version`` guards against mix-ups.

    Anything a game cannot hold (a wrong type, a number out of range, an item on the
    board, two cards with one instance id, ...) raises :class:`InvalidStateError`
    naming the field.
    """
    if not isinstance(data, Mapping) or data.get("format") != STATE_FORMAT:
        shown = data.get("format") if isinstance(data, Mapping) else data
        raise InvalidStateError(f"format: not a cardarena LOCM state (format {show(shown)})")
    root = expect_mapping(data, "state", _STATE_KEYS)
    data_version = expect_str(root["version"], "version", VERSIONS)
    if version is not None and data_version != version:
        raise InvalidStateError(
            f"version: this state is LOCM {data_version}, expected LOCM {version}"
        )
    params = root["params"]
    if not isinstance(params, Mapping):
        raise InvalidStateError(f"params: expected an object (mapping), got {show(params)}")
    for name, value in params.items():
        expect_str(name, "params: a parameter name")
        if not isinstance(value, str):
            raise InvalidStateError(f"params.{name}: expected a string, got {show(value)}")
    league = expect_int(root["league"], "league")
    try:
        state = State.new(data_version, params, league)
    except ParameterError as error:
        raise InvalidStateError(f"params: {error}") from None
    cards = state.pool_by_id if not state.rules.draft else CARDS_BY_ID

    def card(base_id: object, field: str) -> Card:
        try:
            return cards[expect_int(base_id, field)]
        except KeyError:
            raise InvalidStateError(
                f"{field}: card {base_id} does not exist in this game"
            ) from None

    def instances(value: object, field: str, most: int) -> list[CardInstance]:
        out = []
        for k, pair in enumerate(expect_list(value, field, most)):
            entry = f"{field}[{k}]"
            pair = expect_list(pair, entry)
            if len(pair) != 2:
                raise InvalidStateError(f"{entry}: expected [instance id, base id]")
            out.append(CardInstance(expect_int(pair[0], f"{entry}.id"), card(pair[1], entry)))
        return out

    raw_players = expect_list(root["players"], "players")
    if len(raw_players) != 2:
        raise InvalidStateError(f"players: expected 2 players, got {len(raw_players)}")
    for index, (player, raw) in enumerate(zip(state.players, raw_players, strict=True)):
        where = f"players[{index}]"
        raw = expect_mapping(raw, where, _PLAYER_KEYS)
        player.health = expect_int(raw["health"], f"{where}.health")
        player.max_mana = expect_int(raw["max_mana"], f"{where}.max_mana")
        player.mana = expect_int(raw["mana"], f"{where}.mana")
        player.bonus_mana_turns = expect_int(raw["bonus_mana_turns"], f"{where}.bonus_mana_turns")
        player.hand = instances(raw["hand"], f"{where}.hand", HAND_LIMIT)
        player.deck = instances(raw["deck"], f"{where}.deck", DECK_SIZE)
        player.board = []
        boards = expect_list(
            raw["board"], f"{where}.board", state.rules.lanes * state.rules.lane_capacity
        )
        for k, c in enumerate(boards):
            field = f"{where}.board[{k}]"
            c = expect_mapping(c, field, _CREATURE_KEYS)
            creature = Creature(
                expect_int(c["id"], f"{field}.id"),
                card(c["base_id"], f"{field}.base_id"),
                expect_int(c["lane"], f"{field}.lane"),
            )
            creature.attack = expect_int(c["attack"], f"{field}.attack")
            creature.defense = expect_int(c["defense"], f"{field}.defense")
            creature.keywords = expect_int(c["keywords"], f"{field}.keywords")
            creature.can_attack = expect_bool(c["can_attack"], f"{field}.can_attack")
            creature.has_attacked = expect_bool(c["has_attacked"], f"{field}.has_attacked")
            creature.shows_effects = expect_bool(c["shows_effects"], f"{field}.shows_effects")
            player.board.append(creature)
        player.runes = [
            expect_int(rune, f"{where}.runes[{k}]")
            for k, rune in enumerate(expect_list(raw["runes"], f"{where}.runes", len(RUNES)))
        ]
        player.next_turn_draw = expect_int(
            raw["next_turn_draw"], f"{where}.next_turn_draw", 0, MAX_DRAWS
        )
        player.draw_shown = expect_int(raw["draw_shown"], f"{where}.draw_shown", 0, MAX_DRAWS)
        player.health_lost = expect_int(raw["health_lost"], f"{where}.health_lost", 0)
        player.performed = []
        performed = expect_list(raw["performed"], f"{where}.performed", MAX_PERFORMED)
        for k, entry in enumerate(performed):
            field = f"{where}.performed[{k}]"
            entry = expect_list(entry, field)
            if len(entry) != 4:
                raise InvalidStateError(f"{field}: expected [base id, type, id, target]")
            base_id, kind, instance_id, target = (
                expect_int(value, f"{field}[{i}]") for i, value in enumerate(entry)
            )
            if kind not in _PERFORMED_TYPES:
                raise InvalidStateError(
                    f"{field}[1]: expected an action type of "
                    f"{', '.join(f'{int(t)} ({t.name})' for t in _PERFORMED_TYPES)}, got {kind}"
                )
            player.performed.append((base_id, Action(ActionType(kind), instance_id, target)))
        chosen = expect_list(raw["chosen"], f"{where}.chosen", DECK_SIZE)
        player.chosen = [card(b, f"{where}.chosen[{k}]") for k, b in enumerate(chosen)]
        player.chosen_counts = {}
        for picked in player.chosen:
            player.chosen_counts[picked.base_id] = player.chosen_counts.get(picked.base_id, 0) + 1
        player.choosable = None
    state.phase = Phase[expect_str(root["phase"], "phase", _PHASES).upper()]
    state.active = expect_int(root["active"], "active", 0, 1)
    state.turn = expect_int(root["turn"], "turn")
    if root["winner"] is not None:
        state.winner = expect_int(root["winner"], "winner", 0, 1)
    state.end_reason = EndReason[expect_str(root["end_reason"], "end_reason", _END_REASONS).upper()]
    check_state(state)
    _check_deck_building(state)
    return state


def _check_deck_building(state: State) -> None:
    """The choices: each pick among the offered cards, the players in step, and (in deck
    building) nothing of the battle yet."""
    rules = state.rules
    counts = [len(player.chosen) for player in state.players]
    for index, player in enumerate(state.players):
        where = f"players[{index}]"
        for k, picked in enumerate(player.chosen):
            if rules.draft and picked not in state.draft[k]:
                raise InvalidStateError(
                    f"{where}.chosen[{k}]: card {picked.base_id} was not offered at draft turn {k}"
                )
        for base_id, copies in player.chosen_counts.items():
            if not rules.draft and copies > MAX_COPIES:
                raise InvalidStateError(
                    f"{where}.chosen: card {base_id} chosen {copies} times, at most {MAX_COPIES}"
                )
        if state.phase is Phase.BATTLE and counts[index] != DECK_SIZE:
            raise InvalidStateError(
                f"{where}.chosen: {counts[index]} cards during the battle, expected {DECK_SIZE}"
            )
        if state.phase is Phase.DECK_BUILDING:
            fresh = Player(index, rules.runes)
            for name in Player.__slots__:
                if name in ("chosen", "chosen_counts", "choosable"):
                    continue
                value, expected = getattr(player, name), getattr(fresh, name)
                if value != expected:
                    raise InvalidStateError(
                        f"{where}.{name}: expected {show(expected)} during deck building, "
                        f"got {show(value)}"
                    )
    if state.phase is Phase.DECK_BUILDING and not (
        counts[1] <= counts[0] <= counts[1] + 1 and counts[1] < DECK_SIZE
    ):
        raise InvalidStateError(
            f"players: {counts[0]} and {counts[1]} cards chosen: not a deck-building position "
            "(player 0 chooses first, one card at a time, until both have "
            f"{DECK_SIZE})"
        )
