"""One match between two named players on the global turn clock, with its action log.

The match follows the clock lazily: a tick costs nothing per match, and a match catches up
(:meth:`Match.sync`) when it is next looked at. Every action that reached the rules engine is
logged with its turn and outcome, which is enough to replay the match exactly (:func:`replay`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from .errors import ErrorCode, GameError
from .rules import Card, MatchState, RuleSet


def _draw(state: MatchState, args: tuple[int, ...]) -> Card:
    return state.draw()


def _burn(state: MatchState, args: tuple[int, ...]) -> None:
    state.burn()


def _discard(state: MatchState, args: tuple[int, ...]) -> None:
    state.discard(args[0])


def _add_mana(state: MatchState, args: tuple[int, ...]) -> None:
    state.add_mana(args[0])


def _play(state: MatchState, args: tuple[int, ...]) -> None:
    state.play(args[0], args[1])


def _attack(state: MatchState, args: tuple[int, ...]) -> None:
    state.attack(args[0])


def _block(state: MatchState, args: tuple[int, ...]) -> None:
    state.block(args[0], args[1])


def _finish_block(state: MatchState, args: tuple[int, ...]) -> None:
    state.finish_block()


ACTIONS: dict[str, Callable[[MatchState, tuple[int, ...]], Card | None]] = {
    "DRAW_CARD": _draw,
    "BURN_CARD": _burn,
    "DISCARD_CARD": _discard,
    "ADD_MANA": _add_mana,
    "PLAY_CARD": _play,
    "ATTACK": _attack,
    "BLOCK": _block,
    "FINISH_BLOCK": _finish_block,
}
"""The state-changing commands, by protocol name, with their match id already removed."""


class Action(NamedTuple):
    """One logged action: match turn (0-based), side, command, arguments, answer code (0 = OK)."""

    turn: int
    side: int
    command: str
    args: tuple[int, ...]
    code: int

    def to_line(self) -> str:
        """``TURN SIDE CODE COMMAND ARGS...``: the stored form."""
        return " ".join(map(str, (self.turn, self.side, self.code, self.command, *self.args)))

    @classmethod
    def from_line(cls, line: str) -> Action:
        turn, side, code, command, *args = line.split()
        return cls(int(turn), int(side), command, tuple(map(int, args)), int(code))


class Match:
    """A match of a tournament: who plays which side, from which global turn, and its log."""

    __slots__ = ("id", "log", "players", "start_turn", "state")

    def __init__(
        self,
        match_id: int,
        players: tuple[str, str],
        deck: tuple[Card, ...],
        rules: RuleSet,
        start_turn: int,
        card_ids: frozenset[int] | None = None,
    ) -> None:
        self.id = match_id
        self.players = players  # players[0] moves first
        self.start_turn = start_turn
        self.state = MatchState(deck, rules, card_ids)
        self.log: list[Action] = []

    def side_of(self, player: str) -> int:
        """0 or 1 for the match's players; anyone else gets NotYourMatch."""
        if player == self.players[0]:
            return 0
        if player == self.players[1]:
            return 1
        raise GameError(ErrorCode.NotYourMatch)

    def sync(self, global_turn: int) -> MatchState:
        """Bring the state up to the global clock and return it."""
        state = self.state
        if not state.ended and state.turn_index < global_turn - self.start_turn:
            state.advance_to(global_turn - self.start_turn)
        return state

    def perform(self, side: int, command: str, args: tuple[int, ...]) -> Card | None:
        """Run an action for ``side`` (state already synced); log it whatever its outcome."""
        state = self.state
        if state.ended:
            raise GameError(ErrorCode.GameHasEnded)
        if state.current != side:
            raise GameError(ErrorCode.NotYourTurn)
        try:
            result = ACTIONS[command](state, args)
        except GameError as error:
            self.log.append(Action(state.turn_index, side, command, args, error.code.value))
            raise
        self.log.append(Action(state.turn_index, side, command, args, 0))
        return result

    def final_scores(self) -> tuple[int, int]:
        """The scores of players[0] and players[1] (meaningful once the match has ended)."""
        return self.state.score(0), self.state.score(1)


def replay(deck: tuple[Card, ...], rules: RuleSet, actions: Iterable[Action]) -> MatchState:
    """Play a logged match again through the rules engine, checking every recorded outcome.

    Raises ValueError when the log does not fit the rules, which is how tests prove that the
    server applied exactly these rules.
    """
    state = MatchState(deck, rules)
    for action in actions:
        state.advance_to(action.turn)
        if state.turn_index != action.turn or state.current != action.side or state.ended:
            raise ValueError(f"{action} cannot happen: the match is elsewhere")
        try:
            ACTIONS[action.command](state, action.args)
            code = 0
        except GameError as error:
            code = error.code.value
        if code != action.code:
            raise ValueError(f"{action} was answered {action.code}, the rules say {code}")
    state.advance_to(rules.turns_per_match)
    return state
