"""Checks at the engine's boundary: what a game can hold, field by field.

A state read from a dict (:meth:`State.from_dict`) or from a bot's input text
(:meth:`State.from_input`) is checked once, here, and refused with one
:class:`~.errors.InvalidStateError` naming the field unless a game could hold it
(types, ranges, counts, lanes, instance ids). ``apply`` and ``clone`` trust the
states they are given, so the hot path pays nothing: a state that passed these
checks lists no action that ``apply`` refuses and crashes nowhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .cards import ALL_KEYWORDS, CardType
from .errors import InvalidStateError
from .rules import DECK_SIZE, HAND_LIMIT, MAX_MANA, RUNES, RuleSet
from .state import EndReason, Phase, Player, State

JAVA_INT_MIN, JAVA_INT_MAX = -(2**31), 2**31 - 1
"""The official referees hold every number in a Java int."""
MAX_DRAWS = 1000
"""More draws than any turn can ask for (a larger count only makes the draw loop long)."""
MAX_PERFORMED = 64
"""More actions than one turn can execute (8 cards in hand, 6 creatures attacking, ...)."""


def show(value: object) -> str:
    """A short, safe rendering of a refused value (no huge or deeply nested repr)."""
    if value is None or isinstance(value, bool | int | float | str):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return f"a {type(value).__name__}"


def expect_int(value: object, field: str, low: int = JAVA_INT_MIN, high: int = JAVA_INT_MAX) -> int:
    """``value`` if it is an int (not a bool) in ``low..high``."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidStateError(f"{field}: expected an int, got {show(value)}")
    if not low <= value <= high:
        raise InvalidStateError(f"{field}: {value} is outside {low}..{high}")
    return int(value)


def expect_bool(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidStateError(f"{field}: expected true or false, got {show(value)}")
    return value


def expect_str(value: object, field: str, choices: Sequence[str] | None = None) -> str:
    if not isinstance(value, str):
        raise InvalidStateError(f"{field}: expected a string, got {show(value)}")
    if choices is not None and value not in choices:
        raise InvalidStateError(f"{field}: expected one of {', '.join(choices)}, got {show(value)}")
    return value


def expect_list(value: object, field: str, most: int | None = None) -> list[Any]:
    """``value`` as a list if it is a list or tuple of at most ``most`` entries."""
    if not isinstance(value, list | tuple):
        raise InvalidStateError(f"{field}: expected a list, got {show(value)}")
    if most is not None and len(value) > most:
        raise InvalidStateError(f"{field}: {len(value)} entries, at most {most}")
    return list(value)


def expect_mapping(value: object, field: str, keys: Sequence[str]) -> Mapping[str, Any]:
    """``value`` if it is a mapping with exactly ``keys``."""
    if not isinstance(value, Mapping):
        raise InvalidStateError(f"{field}: expected an object (mapping), got {show(value)}")
    for key in keys:
        if key not in value:
            raise InvalidStateError(f"{field}.{key}: missing")
    for key in value:
        if key not in keys:
            raise InvalidStateError(f"{field}: unknown key {show(key)}")
    return value


# --- what every accepted state holds ---------------------------------------------------


def check_state(state: State, turn_start_input: bool = False) -> None:
    """Refuse a state that no game reaches: phase, turn and result, then each player.

    ``turn_start_input``: the state was read from a turn's input text, which the official
    referees also send to a player who has just died in its own draw step (health 0 or
    less in a running battle); elsewhere a battle has both players alive.
    """
    phase = state.phase
    if state.active not in (0, 1):
        raise InvalidStateError(f"active: expected 0 or 1, got {show(state.active)}")
    if state.winner not in (None, 0, 1):
        raise InvalidStateError(f"winner: expected null, 0 or 1, got {show(state.winner)}")
    if phase is not Phase.ENDED:
        if state.winner is not None:
            raise InvalidStateError(
                f"winner: {state.winner} while the game is in {phase.name.lower()}"
            )
        if state.end_reason is not EndReason.NONE:
            raise InvalidStateError(
                f"end_reason: {state.end_reason.name.lower()} while the game is in "
                f"{phase.name.lower()}"
            )
    if phase is Phase.DECK_BUILDING:
        if state.turn != -1 or state.active != 0:
            raise InvalidStateError(
                f"turn: deck building has turn -1 and active 0, got turn {state.turn} "
                f"and active {state.active}"
            )
    elif phase is Phase.BATTLE:
        if state.turn < 0:
            raise InvalidStateError(f"turn: a battle turn is 0 or more, got {state.turn}")
        if state.active != state.turn % 2:
            raise InvalidStateError(
                f"active: player {state.turn % 2} acts at turn {state.turn}, got {state.active}"
            )
    elif state.turn < -1:
        raise InvalidStateError(f"turn: expected -1 or more, got {state.turn}")
    owners: dict[int, str] = {}
    for index, player in enumerate(state.players):
        _check_player(state, index, player, owners, turn_start_input)


def _check_player(
    state: State, index: int, player: Player, owners: dict[int, str], turn_start_input: bool
) -> None:
    rules = state.rules
    where = f"players[{index}]"
    if player.bonus_mana_turns not in ((0, 1) if index == 1 else (0,)):
        raise InvalidStateError(
            f"{where}.bonus_mana_turns: expected {'0 or 1' if index == 1 else '0'}, "
            f"got {player.bonus_mana_turns}"
        )
    most_mana = MAX_MANA + player.bonus_mana_turns
    if not 0 <= player.max_mana <= most_mana:
        raise InvalidStateError(f"{where}.max_mana: {player.max_mana} is outside 0..{most_mana}")
    if not 0 <= player.mana <= player.max_mana:
        raise InvalidStateError(
            f"{where}.mana: {player.mana} is outside 0..{player.max_mana} (max_mana)"
        )
    if len(player.hand) > HAND_LIMIT:
        raise InvalidStateError(f"{where}.hand: {len(player.hand)} cards, at most {HAND_LIMIT}")
    if len(player.deck) > DECK_SIZE:
        raise InvalidStateError(f"{where}.deck: {len(player.deck)} cards, at most {DECK_SIZE}")
    if rules.runes:
        if tuple(player.runes) != RUNES[len(RUNES) - len(player.runes) :]:
            raise InvalidStateError(
                f"{where}.runes: expected the last runes of {list(RUNES)}, got {player.runes}"
            )
    elif player.runes:
        raise InvalidStateError(f"{where}.runes: LOCM {rules.version} has no runes")
    if state.phase is Phase.BATTLE:
        if player.health <= 0 and not turn_start_input:
            raise InvalidStateError(
                f"{where}.health: {player.health} during the battle (the game ends at 0)"
            )
        if player.runes and player.health <= player.runes[0]:
            raise InvalidStateError(
                f"{where}.health: {player.health} with rune {player.runes[0]} unbroken"
            )
    for area, cards in (("hand", player.hand), ("deck", player.deck)):
        for k, inst in enumerate(cards):
            _check_id(inst.id, f"{where}.{area}[{k}].id", owners, rules, even=True)
    _check_board(rules, where, player, owners)


def _check_id(
    instance_id: int, field: str, owners: dict[int, str], rules: RuleSet, even: bool
) -> None:
    if instance_id < 0:
        raise InvalidStateError(f"{field}: instance ids are 0 or more, got {instance_id}")
    if even and rules.area_effects and instance_id % 2:
        # 1.5 numbers deck cards with even ids; an area clone takes the odd id after its card.
        raise InvalidStateError(
            f"{field}: LOCM {rules.version} hand and deck cards have even ids, got {instance_id}"
        )
    other = owners.get(instance_id)
    if other is not None:
        raise InvalidStateError(f"{field}: instance id {instance_id} is also {other}'s")
    owners[instance_id] = field.removesuffix(".id")


def _check_board(rules: RuleSet, where: str, player: Player, owners: dict[int, str]) -> None:
    per_lane = [0] * rules.lanes
    for k, creature in enumerate(player.board):
        field = f"{where}.board[{k}]"
        if creature.card.type != CardType.CREATURE:
            raise InvalidStateError(
                f"{field}: card {creature.card.base_id} is a "
                f"{CardType(creature.card.type).name.lower().replace('_', ' ')}, "
                "only creatures are on the board"
            )
        if not 0 <= creature.lane < rules.lanes:
            lanes = "0" if rules.lanes == 1 else f"0..{rules.lanes - 1}"
            raise InvalidStateError(
                f"{field}.lane: LOCM {rules.version} lanes are {lanes}, got {creature.lane}"
            )
        per_lane[creature.lane] += 1
        if per_lane[creature.lane] > rules.lane_capacity:
            what = "lane " + str(creature.lane) if rules.has_lanes else "the board"
            raise InvalidStateError(
                f"{where}.board: more than {rules.lane_capacity} creatures in {what}"
            )
        if creature.attack < 0:
            raise InvalidStateError(f"{field}.attack: expected 0 or more, got {creature.attack}")
        if creature.defense < 1:
            raise InvalidStateError(
                f"{field}.defense: a creature on the board has 1 or more, got {creature.defense}"
            )
        if not 0 <= creature.keywords <= ALL_KEYWORDS:
            raise InvalidStateError(
                f"{field}.keywords: expected 0..{ALL_KEYWORDS}, got {creature.keywords}"
            )
        _check_id(creature.id, f"{field}.id", owners, rules, even=False)
