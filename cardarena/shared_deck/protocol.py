"""The text protocol: command lines in, answers out, and the typed reading of answers.

The server side (:func:`parse_command`, :func:`execute`) and the client side
(:func:`fixed_data_lines`, :func:`counted_data_lines`, the ``read_*`` functions) live together
so that both always agree on every answer's layout. Nothing here knows about sockets or the
clock; WAIT is the server's business.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .arena import Arena
from .errors import ErrorCode, GameError
from .match import ACTIONS
from .rules import Card, Creature

MAX_LINE_BYTES: Final = 1024
"""Longer lines (not counting the line end) are answered ``ERR 952 LineTooLong`` and dropped."""

ARGUMENT_COUNTS: Final[dict[str, int]] = {
    "WAIT": 0,
    "GET_MY_MATCHES": 0,
    "GET_FINAL_SCORE": 1,
    "GET_TURN_INFO": 1,
    "GET_HP": 1,
    "GET_CARD_LIMITS": 1,
    "GET_CURRENT_MANA": 1,
    "GET_DECK": 1,
    "GET_HANDS": 1,
    "GET_BOARD": 1,
    "GET_ATTACKERS": 1,
    "DRAW_CARD": 1,
    "BURN_CARD": 1,
    "DISCARD_CARD": 2,
    "ADD_MANA": 2,
    "PLAY_CARD": 3,
    "ATTACK": 2,
    "BLOCK": 3,
    "FINISH_BLOCK": 1,
}
"""Every command and its number of integer arguments (the match id first, where there is one)."""

OK: Final = "OK\n"


_COMMAND_LINE = re.compile(rb"\s*([A-Z_]+)((?:\s+-?[0-9]{1,18})*)\s*")
"""A command word and plain ASCII decimal integers: ``1_000``, ``+5`` or digits from other
scripts are refused rather than half-understood (one regular expression: this is the hot path)."""


def parse_command(line: bytes | bytearray) -> tuple[str, tuple[int, ...]]:
    """Split one line (without its ``\\n``) into a command and integer arguments.

    Raises UnknownCommand or WrongArguments.
    """
    match = _COMMAND_LINE.fullmatch(line)
    if match is None:
        words = line.split(None, 1)
        known = bool(words) and words[0].decode("latin-1") in ARGUMENT_COUNTS
        raise GameError(ErrorCode.WrongArguments if known else ErrorCode.UnknownCommand)
    command = match[1].decode()
    expected = ARGUMENT_COUNTS.get(command)
    if expected is None:
        raise GameError(ErrorCode.UnknownCommand)
    args = match[2].split()
    if len(args) != expected:
        raise GameError(ErrorCode.WrongArguments)
    return command, tuple(map(int, args))


# ------------------------------------------------------------------------- server side
def execute(arena: Arena, player: str, command: str, args: tuple[int, ...]) -> str:
    """Answer one parsed command (anything but WAIT) for a logged-in player.

    Returns the whole answer with its line ends; a refusal raises GameError.
    """
    if command == "GET_MY_MATCHES":
        tournament = arena.current
        ids = tournament.matches_of.get(player, []) if tournament is not None else []
        return f"OK\n{len(ids)}\n{' '.join(map(str, ids))}\n"
    found = arena.match(args[0])
    if found is None:
        raise GameError(ErrorCode.NoSuchMatch)
    match, tournament = found
    side = match.side_of(player)
    state = match.sync(arena.turn)
    if command in ACTIONS:
        try:
            drawn = match.perform(side, command, args[1:])
        finally:
            tournament.note_if_ended(match)
        return OK if drawn is None else f"OK\n{drawn.line}\n"
    if state.ended:
        tournament.note_if_ended(match)
    if command == "GET_TURN_INFO":
        my_turn = not state.ended and state.current == side
        return f"OK\n{int(my_turn)} {state.turns_left}\n"
    if command == "GET_FINAL_SCORE":
        if not state.ended:
            raise GameError(ErrorCode.GameHasNotEndedYet)
        return f"OK\n{state.score(side)} {state.score(1 - side)}\n"
    if not state.ended and state.current != side:
        raise GameError(ErrorCode.NotYourTurn)
    other = 1 - side
    if command == "GET_HP":
        return f"OK\n{state.rules.init_hp} {state.hp[side]} {state.hp[other]}\n"
    if command == "GET_CARD_LIMITS":
        return f"OK\n{state.draws_left} {state.burns_left} {state.rules.hand_limit}\n"
    if command == "GET_CURRENT_MANA":
        return f"OK\n{state.mana}\n"
    if command == "GET_DECK":
        return _card_list(state.deck_cards())
    if command == "GET_HANDS":
        mine, theirs = state.hands[side], state.hands[other]
        lines = [f"OK\n{len(mine)} {len(theirs)}"]
        lines.extend(mine[card_id].line for card_id in sorted(mine))
        lines.extend(theirs[card_id].line for card_id in sorted(theirs))
        return "\n".join(lines) + "\n"
    if command == "GET_BOARD":
        mine, theirs = state.boards[side], state.boards[other]
        lines = [f"OK\n{len(mine)} {len(theirs)}"]
        for board in (mine, theirs):
            lines.extend(f"{board[i].line} {int(board[i].active)}" for i in sorted(board))
        return "\n".join(lines) + "\n"
    if command == "GET_ATTACKERS":
        return _card_list(state.attacking_creatures())
    raise GameError(ErrorCode.UnknownCommand)  # parse_command lets no other name through


def _card_list(cards: Sequence[Card | Creature]) -> str:
    if not cards:
        return "OK\n0\n"
    return f"OK\n{len(cards)}\n" + "\n".join(card.line for card in cards) + "\n"


# ------------------------------------------------------------------------- client side
@dataclass(frozen=True, slots=True)
class TurnInfo:
    my_turn: bool
    turns_left: int


@dataclass(frozen=True, slots=True)
class HitPoints:
    initial: int
    mine: int
    opponent: int


@dataclass(frozen=True, slots=True)
class CardLimits:
    draws_left: int
    burns_left: int
    hand_limit: int


@dataclass(frozen=True, slots=True)
class FinalScore:
    mine: int
    opponent: int


@dataclass(frozen=True, slots=True)
class Hands:
    mine: tuple[Card, ...]
    opponent: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class BoardCreature:
    """A creature as GET_BOARD shows it: current stats and whether it is active."""

    card: Card
    active: bool


@dataclass(frozen=True, slots=True)
class Board:
    mine: tuple[BoardCreature, ...]
    opponent: tuple[BoardCreature, ...]


_FIXED_DATA_LINES: Final[dict[str, int]] = {
    "GET_MY_MATCHES": 2,
    "GET_FINAL_SCORE": 1,
    "GET_TURN_INFO": 1,
    "GET_HP": 1,
    "GET_CARD_LIMITS": 1,
    "GET_CURRENT_MANA": 1,
    "DRAW_CARD": 1,
}
_COUNTED: Final = ("GET_DECK", "GET_ATTACKERS")
_TWO_COUNTS: Final = ("GET_HANDS", "GET_BOARD")


def fixed_data_lines(command: str) -> int | None:
    """How many data lines follow ``OK``; None when the first data line tells (see below)."""
    if command in _COUNTED or command in _TWO_COUNTS:
        return None
    return _FIXED_DATA_LINES.get(command, 0)


def counted_data_lines(command: str, first_data_line: str) -> int:
    """For GET_DECK, GET_ATTACKERS, GET_HANDS, GET_BOARD: the lines after the first one."""
    counts = [int(word) for word in first_data_line.split()]
    if len(counts) != (1 if command in _COUNTED else 2) or min(counts) < 0:
        raise ValueError(f"bad count line for {command}: {first_data_line!r}")
    return sum(counts)


def error_from_line(line: str) -> ErrorCode:
    """The code of an ``ERR <code> <Description>`` line (ValueError for anything else)."""
    words = line.split()
    if len(words) < 2 or words[0] != "ERR":
        raise ValueError(f"not an error line: {line!r}")
    return ErrorCode(int(words[1]))


def _ints(line: str) -> list[int]:
    return [int(word) for word in line.split()]


def read_match_ids(lines: Sequence[str]) -> list[int]:
    count = int(lines[0])
    ids = _ints(lines[1]) if len(lines) > 1 else []
    if len(ids) != count:
        raise ValueError(f"GET_MY_MATCHES announced {count} ids, sent {len(ids)}")
    return ids


def read_turn_info(lines: Sequence[str]) -> TurnInfo:
    my_turn, turns_left = _ints(lines[0])
    return TurnInfo(my_turn == 1, turns_left)


def read_hit_points(lines: Sequence[str]) -> HitPoints:
    return HitPoints(*_ints(lines[0]))


def read_card_limits(lines: Sequence[str]) -> CardLimits:
    return CardLimits(*_ints(lines[0]))


def read_final_score(lines: Sequence[str]) -> FinalScore:
    return FinalScore(*_ints(lines[0]))


def read_int(lines: Sequence[str]) -> int:
    return int(lines[0])


def read_card(lines: Sequence[str]) -> Card:
    return Card.parse(lines[0])


def read_cards(lines: Sequence[str]) -> list[Card]:
    """A count line, then that many cards (GET_DECK, GET_ATTACKERS)."""
    return [Card.parse(line) for line in lines[1 : 1 + int(lines[0])]]


def read_hands(lines: Sequence[str]) -> Hands:
    mine, theirs = _ints(lines[0])
    cards = [Card.parse(line) for line in lines[1 : 1 + mine + theirs]]
    return Hands(tuple(cards[:mine]), tuple(cards[mine:]))


def read_board(lines: Sequence[str]) -> Board:
    mine, theirs = _ints(lines[0])
    creatures = [
        BoardCreature(Card.parse(line), line.split()[7] == "1")
        for line in lines[1 : 1 + mine + theirs]
    ]
    return Board(tuple(creatures[:mine]), tuple(creatures[mine:]))
