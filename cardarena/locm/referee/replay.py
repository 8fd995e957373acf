"""A readable, turn-by-turn account of a logged game.

A GameResult log (ours, or the official referee's) holds every answer of both
bots and the parameters of the game, which is all the engine needs to play the
game again exactly: the replay re-runs it through
:class:`~cardarena.locm.referee.protocol_game.ProtocolGame` and describes each turn.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...untrusted import MAX_LOG_BYTES, UntrustedInputError, load_json
from ..engine.drawing import board_text, hand_text, side_text
from ..engine.state import Phase
from .gameresult import answers_from_log
from .protocol_game import ProtocolGame, Request


class ReplayError(ValueError):
    """The log cannot be replayed (not a GameResult, no parameters, unknown version)."""


SQLITE_HEADER = b"SQLite format 3\x00"


def load_log(path: str | Path) -> dict[str, Any]:
    """A GameResult log read from ``path``; every problem is a one-line ReplayError
    that names the file."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_LOG_BYTES + 1)
    except OSError as error:
        raise ReplayError(f"cannot read {path}: {error.strerror}") from None
    not_a_log = f"{path} is not a game log (a GameResult JSON file)"
    if raw.startswith(SQLITE_HEADER):
        raise ReplayError(
            f"{not_a_log}: it is an SQLite database (a tournament's games: "
            f"locm view --db {path} --game N)"
        )
    try:
        data = load_json(raw)
    except UntrustedInputError as error:
        raise ReplayError(f"{not_a_log}: {error}") from None
    if not isinstance(data, dict) or "outputs" not in data:
        raise ReplayError(f"{not_a_log}: JSON without 'outputs'")
    return data


PER_PLAYER_LISTS = ("outputs", "errors")
"""Entries that hold, per player (``"0"``, ``"1"``, and ``"referee"``), a list of texts."""
TEXT_LISTS = ("gameParameters", "uinput", "summaries")


def check_log_shape(log: Mapping[str, Any]) -> None:
    """ReplayError naming the entry, for a log whose SDK entries are not of the GameResult's
    shape (``"outputs": "x"``), before anything reads them: a crafted file gets a line that
    says what is wrong with it, not a Python error from deep inside the replay."""
    for name in PER_PLAYER_LISTS:
        entry = log.get(name)
        if entry is None and name != "outputs":  # the answers are what a replay replays
            continue
        if not isinstance(entry, Mapping):
            raise ReplayError(f"the log's {name!r} is not a JSON object (one list per player)")
        for key, lines in entry.items():
            if not isinstance(lines, list) and (lines is not None or name == "outputs"):
                raise ReplayError(f"the log's {name}[{key!r}] is not a list")
            if any(line is not None and not isinstance(line, str) for line in lines or ()):
                raise ReplayError(f"the log's {name}[{key!r}] holds something else than text")
    for name in TEXT_LISTS:
        entry = log.get(name)
        if entry is not None and (
            not isinstance(entry, list)
            or any(line is not None and not isinstance(line, str) for line in entry)
        ):
            raise ReplayError(f"the log's {name!r} is not a list of texts")
    scores = log.get("scores")
    if scores is not None and (
        not isinstance(scores, Mapping)
        or any(
            value is not None and (not isinstance(value, int) or isinstance(value, bool))
            for value in scores.values()
        )
    ):
        raise ReplayError("the log's 'scores' is not a JSON object of whole numbers per player")


def log_setup(
    log: Mapping[str, Any], version: str | None = None, league: int | None = None
) -> tuple[str, dict[str, str], int]:
    """(version, parameters, league) of a logged game; options override the log."""
    check_log_shape(log)
    ours = log.get("cardarena") or {}
    if not isinstance(ours, Mapping):
        raise ReplayError("the log's 'cardarena' entry is not a JSON object")
    params: dict[str, str] = {}
    # SDK 3 (1.5 jar, ours): "gameParameters", one line each; SDK 2 (1.2 jar): "uinput".
    for entry in log.get("gameParameters") or log.get("uinput") or []:
        for line in str(entry).splitlines():
            key, sep, value = line.partition("=")
            if sep:
                params[key] = value
    if not params:
        raise ReplayError("the log has no game parameters (an aborted official run?)")
    if version is None:
        version = ours.get("version") or _guess_version(log, params)
    if league is None:
        logged = ours.get("league", 4)
        if isinstance(logged, str) and logged.strip().isdigit():
            logged = int(logged)
        if not isinstance(logged, int) or isinstance(logged, bool):
            shown = repr(logged)[:40] if isinstance(logged, float | str) else type(logged).__name__
            raise ReplayError(f"the log's league is {shown}, not a whole number")
        league = logged
    return str(version), params, league


def _guess_version(log: Mapping[str, Any], params: Mapping[str, str]) -> str:
    """1.5 or 1.2 for a jar's log. The parameters alone can mislead (contest scripts
    pass every version's keys, and the jars print them all back): the deck-building
    summary says which game it was."""
    text = "".join(entry for entry in log.get("summaries") or [] if isinstance(entry, str))
    if "Generated cards: " in text or "Player $0 chose cards " in text:
        return "1.5"
    if "Player $0 chose " in text:
        return "1.2"
    return "1.5" if "cardGenSeed" in params else "1.2"


def readable_tokens(line: str) -> str:
    """Summary lines name players by SDK token (``$0``, ``Player $0``): say "player 0"."""
    return re.sub(r"(?:Player )?\$([01])", r"player \1", line)


class LogReplay:
    """A logged game set up to be played again by the engine, answer by answer.

    Both the text replay and the web viewer (:mod:`cardarena.locm.viewer`) walk it, so
    there is one re-simulation; set ``game.on_action`` to see each battle action.
    """

    def __init__(
        self, log: Mapping[str, Any], version: str | None = None, league: int | None = None
    ) -> None:
        self.log = log
        self.version, self.params, self.league = log_setup(log, version, league)
        try:
            self.game = ProtocolGame(self.version, self.params, self.league)
        except ValueError as error:
            raise ReplayError(str(error)) from None
        names = (log.get("cardarena") or {}).get("players") or ["player 0", "player 1"]
        if not isinstance(names, list) or len(names) != 2:
            raise ReplayError("the log's 'players' must name exactly two players")
        if not all(isinstance(name, str) for name in names):
            raise ReplayError("the log's 'players' must be two names (strings)")
        self.names = list(names)
        ours = log.get("cardarena")
        self.interrupted = isinstance(ours, Mapping) and ours.get("interrupted") is True
        """The game was stopped before its end (``locm play`` on Ctrl-C or SIGTERM): the
        replay stops where its answers stop, instead of playing a missing one as a timeout."""
        self.answers = answers_from_log(log)
        self.used = [0, 0]
        """How many answers of each player were given to the engine so far."""

    def steps(self) -> Iterator[tuple[list[Request], list[str | None]]]:
        """Each round of requests with the logged answers, yielded *before* the engine
        takes them (the state is the one the bots saw); ``None`` is a missing answer."""
        game = self.game
        while requests := game.requests():
            if self.interrupted and any(
                self.used[r.player] >= len(self.answers[r.player]) for r in requests
            ):
                return  # where the game was stopped
            lines: list[str | None] = []
            for request in requests:
                pending, used = self.answers[request.player], self.used[request.player]
                lines.append(pending[used] if used < len(pending) else None)
                self.used[request.player] += 1
            yield requests, lines
            game.answer(lines)

    def mismatch(self) -> str | None:
        """After :meth:`steps`: why the log and the re-simulation disagree, or None."""
        logged = self.log.get("scores") or {}
        scores = list(self.game.scores or ())
        if logged and [logged.get("0"), logged.get("1")] != scores:
            return (
                f"the log says scores {logged.get('0')} {logged.get('1')}, "
                f"the engine gives {' '.join(map(str, scores)) or 'no result'}"
            )
        for player, answers in enumerate(self.answers):
            if self.used[player] < len(answers):
                return (
                    f"the engine ended the game with {len(answers) - self.used[player]} "
                    f"answer(s) of player {player} left over"
                )
        return None


def replay_lines(
    log: Mapping[str, Any],
    version: str | None = None,
    league: int | None = None,
    differences: list[str] | None = None,
) -> Iterator[str]:
    """The account of a logged game, line by line. Where the engine's game differs from the
    log (other scores, answers left over), the last line says so, and so does an entry
    appended to ``differences`` (the command line's exit status)."""
    replay = LogReplay(log, version, league)
    game, names = replay.game, replay.names
    yield f"LOCM {replay.version}: player 0 = {names[0]}, player 1 = {names[1]}"
    yield "parameters: " + " ".join(f"{key}={value}" for key, value in replay.params.items())
    state = game.state
    seen = 0
    for requests, lines in replay.steps():
        for line in game.summaries[seen:]:
            yield "  " + readable_tokens(line)
        seen = len(game.summaries)
        if state.phase == Phase.BATTLE:
            active = requests[0].player
            yield ""
            yield f"turn {state.turn + 1}: player {active} plays"
            for index in (active, 1 - active):
                yield "  " + side_text(state, index)
            yield hand_text(state, active)
            for index in (active, 1 - active):
                yield board_text(state, index)
            yield f"  says: {lines[0]!r}" if lines[0] is not None else "  says nothing (timeout)"
    for line in game.summaries[seen:]:
        yield "  " + readable_tokens(line)
    yield ""
    yield _result(game, log, replay.interrupted)
    mismatch = replay.mismatch()
    if mismatch is not None:
        if differences is not None:
            differences.append(mismatch)
        if "scores" not in mismatch:  # (the result line already told other scores)
            yield f"replay differs: {mismatch}"


def _result(game: ProtocolGame, log: Mapping[str, Any], interrupted: bool = False) -> str:
    reason = game.end_reason.name.lower().replace("_", " ")
    if interrupted and not game.over:
        turn = f"at turn {game.state.turn + 1}" if game.state.turn >= 0 else "in deck building"
        return f"result: none: the game was interrupted {turn} (Ctrl-C or SIGTERM)"
    if game.winner is None or game.scores is None:
        text = f"no winner ({reason})"
    else:
        text = f"player {game.winner} wins ({reason}); scores {game.scores[0]} {game.scores[1]}"
    logged = log.get("scores") or {}
    if logged and [logged.get("0"), logged.get("1")] != list(game.scores or ()):
        text += f" -- the log says scores {logged.get('0')} {logged.get('1')}: replay differs!"
    return "result: " + text
