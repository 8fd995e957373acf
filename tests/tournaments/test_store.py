"""The tournament store on real SQLite files: discarding games to replay, older databases,
owner-only files, read-only opening."""

from __future__ import annotations

import sqlite3
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from cardarena.tournaments.report import build_report
from cardarena.tournaments.report.model import with_causes
from cardarena.tournaments.report.text import report_text
from cardarena.tournaments.store import GameRecord, StoreError, TournamentLocked, TournamentStore


def game(
    key: str,
    kind: str | None,
    load: float | None,
    result: str = "win",
    overloaded: bool | None = None,
) -> GameRecord:
    return GameRecord(
        key=key, first="a", second="b", round=0, seed=1, winner=None if kind else 0,
        result=result, end_reason="HEALTH", error_seat=0 if kind else None, error_kind=kind,
        detail=None, turns=0, first_turns=0, first_mean_ms=0.0, first_max_ms=0.0,
        second_turns=0, second_mean_ms=0.0, second_max_ms=0.0, duration_s=0.1,
        replay="locm play ...", load=load, overloaded=overloaded,
    )  # fmt: skip


GAMES = [
    game("ok", None, 3.0),
    game("crash", "crash", 0.1),
    game("slow", "timeout", 0.5, overloaded=False),
    game("busy", "timeout", 2.5, overloaded=False),  # a high load alone decides nothing
    game("starved", "timeout", 0.5, overloaded=True),
    game("lost", "referee", None, result="error"),
    game("bad", "invalid", 3.0),
    game("sore", "empty line", 0.1, result="aborted"),
]


def test_discard_kinds_and_timeouts_under_overload(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with TournamentStore(str(db)) as store:
        for record in GAMES:
            assert store.add(record)
        assert store.error_counts()[("timeout", False)] == 2
        assert store.error_counts()[("timeout", True)] == 1
        assert store.discard(("referee",)) == 1
        # Only the timeout measured as the machine's fault goes: never a crash, an empty
        # line, an invalid answer, nor a timeout at a high load the bot was not starved in.
        assert store.discard(("referee",), overloaded_timeouts=True) == 1
        assert sorted(store.done_keys()) == ["bad", "busy", "crash", "ok", "slow", "sore"]
        for suffix in ("", ".lock"):  # owner-only files
            assert stat.S_IMODE(Path(f"{db}{suffix}").stat().st_mode) == 0o600
    # Done: the lock file goes, and the next run makes a new one.
    assert not Path(f"{db}.lock").exists()
    with TournamentStore(str(db)) as store:
        assert Path(f"{db}.lock").exists()
        with pytest.raises(TournamentLocked):
            TournamentStore(str(db))
    assert not Path(f"{db}.lock").exists()


def test_a_lock_file_replaced_meanwhile_is_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = TournamentStore(str(db))
    lock = Path(f"{db}.lock")
    lock.unlink()
    lock.write_text("another run's lock")  # not the file this store holds
    store.close()
    assert lock.read_text() == "another run's lock"


def test_report_counts_timeouts_under_overload_apart() -> None:
    report = build_report(["a", "b"], GAMES)
    a = next(bot for bot in report.bots if bot.name == "a")
    assert (a.timeouts, a.overloaded_timeouts, a.crashes) == (3, 1, 1)
    assert a.errors == {"crash": 1, "timeout": 3, "invalid": 1, "empty line": 1}
    assert "timeouts while the machine starved the bot of CPU: a 1" in report_text(report)
    assert report.to_json()["bots"]["a"]["overloaded_timeouts"] == 1


def test_an_older_database_without_the_load_and_cause_columns(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with TournamentStore(str(db)) as store:
        store.add(GAMES[0])
    with sqlite3.connect(db) as connection:
        connection.execute("ALTER TABLE games DROP COLUMN load")
        connection.execute("ALTER TABLE games DROP COLUMN overloaded")
        connection.execute("ALTER TABLE games DROP COLUMN cause")
    with TournamentStore(str(db), read_only=True) as store:  # read as it is
        assert [(r.load, r.cause) for r in store.records()] == [(None, None)]
        assert store.error_counts() == {}
        report = build_report(["a", "b"], with_causes(store.records(), None))
    assert report.game_lines[0].why == "b health after 0 turns"  # derived from the columns
    with TournamentStore(str(db)) as store:  # a writer adds the columns
        store.add(replace(GAMES[4], cause="timed out at turn 3"))
        assert [(r.load, r.overloaded, r.cause) for r in store.records()] == [
            (None, None, None),
            (0.5, True, "timed out at turn 3"),
        ]
        assert store.discard((), overloaded_timeouts=True) == 1


def test_read_only_store_refuses_to_write_and_to_create(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no tournament database"):
        TournamentStore(str(tmp_path / "none.db"), read_only=True)
    assert not (tmp_path / "none.db").exists()
    db = tmp_path / "r.db"
    with TournamentStore(str(db)) as store:
        store.add(GAMES[0])
    with TournamentStore(str(db), read_only=True) as store, pytest.raises(sqlite3.Error):
        store.add(GAMES[1])
