"""Why a LOCM game ended, in words (cardarena/locm/referee/causes.py): what a tournament
stores with each game, and what it derives for the games of an older database."""

from __future__ import annotations

import pytest

from cardarena.locm.referee.causes import (
    STDERR_SHOWN,
    game_cause,
    illegal_actions,
    last_stderr_line,
    stored_cause,
)
from cardarena.tournaments.store import GameRecord


@pytest.mark.parametrize(
    ("reason", "kind", "turns", "extra", "words"),
    [
        ("HEALTH", None, 14, {}, "lost on health at turn 14"),
        ("HEALTH", None, 14, {"illegal": 3},
         "lost on health at turn 14 (3 illegal actions dropped)"),
        ("DECK_OUT", None, 41, {}, "lost by deck-out at turn 41 (drew from an empty deck)"),
        ("TIMEOUT", "crash", 6, {"stderr": "ZeroDivisionError: division by zero"},
         "crashed at turn 6: ZeroDivisionError: division by zero"),
        ("TIMEOUT", "crash", 0, {}, "crashed in deck building (its process ended)"),
        ("TIMEOUT", "timeout", 9, {}, "timed out at turn 9"),
        ("TIMEOUT", "timeout", 9, {"overloaded": True},
         "timed out at turn 9 (the machine starved it of CPU)"),
        ("INVALID_OUTPUT", "invalid", 3, {"detail": "$1: Invalid SUMMON argument."},
         "sent an invalid output at turn 3: Invalid SUMMON argument."),
        ("TIMEOUT", "too long", 2, {}, "answered a line of 10,000 bytes or more at turn 2"),
        ("ABORTED_EMPTY_LINE", "empty line", 0, {},
         "answered an empty line in deck building (the official runner aborts the game)"),
        ("TIMEOUT", "memory", 5, {"budget_mb": 512},
         "ran out of memory at turn 5 (over its 512 MB budget)"),
        ("FRAME_LIMIT", None, 90, {"draw": True}, "draw: the 1,400-frame limit at turn 90"),
        ("ABORTED_TIME_QUOTA", None, 80, {"draw": True},
         "no result: the 30 s total time quota ran out at turn 80"),
        ("HEALTH", None, 30, {"draw": True}, "draw at turn 30 (health)"),
        ("ERROR", "referee", 0, {"detail": "worker lost"}, "the referee failed: worker lost"),
        ("SOMETHING_NEW", None, 7, {}, "lost at turn 7 (something new)"),
        ("TIMEOUT", "out of memory", 7, {}, "out of memory at turn 7"),
    ],
)  # fmt: skip
def test_the_words_of_each_cause(
    reason: str, kind: str | None, turns: int, extra: dict[str, object], words: str
) -> None:
    assert game_cause(reason, kind, turns, **extra) == words  # type: ignore[arg-type]


def test_a_crash_quotes_the_last_line_its_bot_wrote_on_stderr() -> None:
    log = {"errors": {"0": [None, "turn 1\n", "Traceback ...\n  File x\nValueError: bad\n\n",
                            None], "1": [None, "x" * 500]}}  # fmt: skip
    assert last_stderr_line(log, 0) == "ValueError: bad"
    assert last_stderr_line(log, 1) == "x" * STDERR_SHOWN + "…"
    assert last_stderr_line({"errors": "nonsense"}, 0) is None


def test_illegal_actions_are_counted_per_seat_from_the_warnings() -> None:
    summaries = [
        "[Warning] $0 Action is not legal: ATTACK 999 -1",
        "[Warning] $1 Action is not legal: USE 3 4",
        "[Warning] $0 Action is not legal: ATTACK 998 -1",
        "[Warning] $0 Performed another 4 illegalActions",
        "$0 won!",
    ]
    assert (illegal_actions(summaries, 0), illegal_actions(summaries, 1)) == (6, 1)


def record(**fields: object) -> GameRecord:
    base: dict[str, object] = dict(
        key="a\tb\t0", first="a", second="b", round=0, seed=1, winner=1, result="win",
        end_reason="HEALTH", error_seat=None, error_kind=None, detail=None, turns=12,
        first_turns=6, first_mean_ms=1.0, first_max_ms=1.0, second_turns=6, second_mean_ms=1.0,
        second_max_ms=1.0, duration_s=0.1, replay="locm play ...",
    )  # fmt: skip
    return GameRecord(**{**base, **fields})  # type: ignore[arg-type]


def test_an_older_database_gets_the_words_its_columns_tell() -> None:
    assert stored_cause(record()) == "lost on health at turn 12"
    crash = record(end_reason="TIMEOUT", error_seat=0, error_kind="crash", detail="$0 timeout!")
    assert stored_cause(crash) == "crashed at turn 12 (its process ended)"
    invalid = record(end_reason="INVALID_OUTPUT", error_seat=0, error_kind="invalid",
                     detail="$0: Invalid action name.")  # fmt: skip
    assert stored_cause(invalid) == "sent an invalid output at turn 12: Invalid action name."
    drawn = record(winner=None, result="draw", end_reason="HEALTH")
    assert stored_cause(drawn) == "draw at turn 12 (health)"
    failed = record(winner=None, result="error", end_reason="ERROR", error_kind="referee",
                    detail="BrokenProcessPool: a worker died")  # fmt: skip
    assert stored_cause(failed) == "the referee failed: BrokenProcessPool: a worker died"
