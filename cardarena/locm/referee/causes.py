"""Why a LOCM game ended, in words a bot writer reads: the cause a tournament stores with
each game (:attr:`cardarena.tournaments.store.GameRecord.cause`) and the report shows.

Said of the seat that lost where one did (``crashed at turn 6: ZeroDivisionError: …``,
``lost on health at turn 14 (3 illegal actions dropped)``), else of the game (``draw:
the 1,400-frame limit at turn 90``); the report puts the loser's name in front. A game a
database from before the cause column holds gets its words from the columns it has
(:func:`stored_cause`). The viewer's end banner has its own words (:func:`.gameresult.end_cause`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ...tournaments.store import REFEREE, GameRecord
from ..engine.rules import MAX_ANSWER_BYTES
from ..engine.state import EndReason

TIMEOUT = "timeout"
"""The error kind of a bot that gave no line within its time (and did not exit)."""

STDERR_SHOWN = 200
"""At most this many characters of a crashed bot's last stderr line go into its cause."""
_ILLEGAL = re.compile(r"\[Warning\] \$(\d) (?:Action is not legal|Performed another (\d+) )")
_PLAYER_TOKEN = re.compile(r"^\$\d:? ?")


def last_stderr_line(log: Mapping[str, object], seat: int) -> str | None:
    """The last non-blank line ``seat`` wrote on stderr in the game (from its log), clipped:
    what a crash says about itself (a traceback's last line)."""
    errors = log.get("errors")
    chunks = errors.get(str(seat)) if isinstance(errors, dict) else None
    for chunk in reversed(chunks if isinstance(chunks, list) else []):
        lines = [line.strip() for line in chunk.splitlines()] if isinstance(chunk, str) else []
        lines = [line for line in lines if line]
        if lines:
            last = lines[-1]
            return last if len(last) <= STDERR_SHOWN else last[:STDERR_SHOWN] + "…"
    return None


def illegal_actions(summaries: Sequence[str], seat: int) -> int:
    """How many of ``seat``'s actions the referee dropped as illegal (its warnings)."""
    count = 0
    for line in summaries:
        found = _ILLEGAL.match(line)
        if found and int(found[1]) == seat:
            count += int(found[2]) if found[2] else 1
    return count


def game_cause(
    end_reason: str,
    kind: str | None,
    turns: int,
    *,
    detail: str | None = None,
    overloaded: bool | None = None,
    budget_mb: int | None = None,
    stderr: str | None = None,
    illegal: int = 0,
    draw: bool = False,
) -> str:
    """Why a LOCM game ended, in words (:attr:`GameRecord.cause`): said of the seat that
    lost where one did (``crashed at turn 6: ZeroDivisionError: division by zero``), else
    of the game (``draw: the 1,400-frame limit at turn 90``). ``turns``: the battle turns
    played, both seats together (the viewer's turn number); ``kind``: the error charged;
    ``draw``: the game has no winner and no one was charged."""
    when = f"at turn {turns}" if turns else "in deck building"
    what = _PLAYER_TOKEN.sub("", detail or "")
    if kind == "crash":
        words = f"crashed {when}" + (f": {stderr}" if stderr else " (its process ended)")
    elif kind == TIMEOUT:
        starved = " (the machine starved it of CPU)" if overloaded else ""
        words = f"timed out {when}{starved}"
    elif kind == "invalid":
        words = f"sent an invalid output {when}" + (f": {what}" if what else "")
    elif kind == "too long":
        words = f"answered a line of {MAX_ANSWER_BYTES:,} bytes or more {when}"
    elif kind == "empty line":
        words = f"answered an empty line {when} (the official runner aborts the game)"
    elif kind == "memory":
        over = f" (over its {budget_mb} MB budget)" if budget_mb else ""
        words = f"ran out of memory {when}{over}"
    elif kind == REFEREE:
        return f"the referee failed: {detail}" if detail else "the referee failed"
    elif kind:
        words = f"{kind} {when}"
    elif draw:  # no winner, and no one charged
        words = {
            EndReason.FRAME_LIMIT.name: f"draw: the 1,400-frame limit {when}",
            EndReason.ABORTED_TIME_QUOTA.name: f"no result: the 30 s total time quota ran out "
            f"{when}",
        }.get(end_reason, f"draw {when} ({_words(end_reason)})")
    else:
        words = {
            EndReason.HEALTH.name: f"lost on health {when}",
            EndReason.DECK_OUT.name: f"lost by deck-out {when} (drew from an empty deck)",
            EndReason.TURN_LIMIT.name: f"lost at the turn limit {when} (a draw after turn 50)",
        }.get(end_reason, f"lost {when} ({_words(end_reason)})")
    if illegal:
        words += f" ({illegal} illegal action{'s' if illegal != 1 else ''} dropped)"
    return words


def stored_cause(record: GameRecord) -> str:
    """The cause of a game a database from before the cause column holds, from the columns
    it has (no stderr line, no illegal actions: they are only in the stored log)."""
    if record.result == "error":
        return game_cause(record.end_reason, REFEREE, record.turns, detail=record.detail)
    detail = record.detail if record.error_kind == "invalid" else None
    return game_cause(record.end_reason, record.error_kind, record.turns, detail=detail,
                      overloaded=record.overloaded,
                      draw=record.winner is None and record.error_seat is None)  # fmt: skip


def _words(end_reason: str) -> str:
    """An end reason's name in words: ``SOMETHING_NEW`` -> ``something new``."""
    return end_reason.lower().replace("_", " ")
