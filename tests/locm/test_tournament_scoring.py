"""Misbehaving never pays: real bot processes that misbehave when they are behind (an
empty line, a crash, a hang) lose those games in the report, its files and ratings, with
the error charged, and ``--retry-errors`` replays none of them; it replays a timeout only
when the bot was measured starved of CPU by the machine (induced here with busy
processes pinned to the bot's CPU), never when it used its CPU, slept, or lowered its own
priority."""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardarena.locm.engine.params import resolve_parameters
from cardarena.locm.referee import cgroups
from cardarena.locm.tournament import LocmGameTask, play_scheduled_game, retry_summary
from cardarena.tournaments.schedule import GameSpec
from cardarena.tournaments.store import GameRecord, TournamentStore, decompress_log

BOTS = Path(__file__).parent / "bots"
LOCM = [sys.executable, "-m", "cardarena.locm.cli"]


def sore_bot(mode: str) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(BOTS / 'sore_bot.py'))} {mode}"


def locm(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LOCM, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_sore_losers_score_nothing_and_retry_errors_replays_none(tmp_path: Path) -> None:
    """The whole path in 1.2: tournament, report and its files, --retry-errors, and a
    database an earlier version wrote (1.0's games: the test below)."""
    version = "1.2"
    db = tmp_path / "sore.db"
    args = [
        "tournament", "--bot", "builtin:greedy", "--bot", f"sore={sore_bot('empty')}",
        "--bot", f"crashy={sore_bot('crash')}", "--version", version, "--games", "1",
        "--seed", "3", "--workers", "2", "--db", str(db), "--quiet",
        # Ten times the limits: the Python bots' answers must not time out on a busy
        # machine before they get behind (timing is not what this test is about).
        "--time-scale", "10",
    ]  # fmt: skip
    done = locm(*args)
    assert done.returncode == 0, done.stderr
    report = json.loads(locm("report", "--db", str(db), "--json").stdout)
    bots = report["bots"]
    # Against greedy they are always behind at some point: every such game is lost.
    for name in ("sore", "crashy"):
        assert report["matrix"][name]["greedy"]["wins"] == 0
        assert report["matrix"][name]["greedy"]["draws"] == 0
    assert bots["greedy"]["win_rate"] == 1.0
    # Every game they did not win (against greedy, or against each other whoever got
    # behind first) is charged to them, by kind; nothing counts half.
    sore, crashy = bots["sore"], bots["crashy"]
    assert sore["draws"] == crashy["draws"] == 0
    assert sore["errors"] == {"empty line": sore["losses"]} and sore["losses"] >= 2
    assert crashy["errors"] == {"crash": crashy["losses"]} and crashy["losses"] >= 2
    assert crashy["crashes"] == crashy["losses"]
    assert bots["greedy"]["rating"] > max(sore["rating"], crashy["rating"])
    with open(tmp_path / "sore-report" / "bots.csv", encoding="utf-8") as file:
        rows = {row["bot"]: row for row in csv.DictReader(file)}
    assert rows["sore"]["errors"] == f"empty line={sore['losses']}"
    assert rows["sore"]["win_rate"] == f"{sore['win_rate']:.6g}"
    assert "errors charged, each a lost game:" in locm("report", "--db", str(db)).stdout
    # The stored log stays the official runner's: no scores and its failCause; the row
    # says who aborted and counts it as that bot's loss.
    with TournamentStore(str(db), lock=False) as store:
        aborted = [r for r in store.records(with_logs=True) if r.error_kind == "empty line"]
        assert aborted
        for record in aborted:
            seats = (record.first, record.second)
            assert record.result == "aborted" and record.end_reason == "ABORTED_EMPTY_LINE"
            assert seats[record.error_seat] == "sore" and record.winner == 1 - record.error_seat
            assert record.log is not None
            log = decompress_log(record.log)
            assert log["scores"] == {} and "failCause" in log
    # --retry-errors replays none of it, and says so.
    again = locm(*args, "--retry-errors")
    assert again.returncode == 0, again.stderr
    assert "played 0 new games" in again.stderr
    charged = sore["losses"] + crashy["losses"]
    kept = f"crash {crashy['losses']}, empty line {sore['losses']}"
    expected = (
        "playing again 0 game(s) lost to a timeout while the machine starved the bot of CPU, "
        f"and 0 referee failure(s); keeping {charged} game(s) lost by the bot's own doing ({kept})"
    )
    assert expected in again.stderr
    # A database an earlier version wrote: its empty-line aborts name no one (half a win
    # each) and it has no 'overloaded' column. The report reads it as it is; the same
    # command run again charges them, from the stored logs, and plays nothing new.
    with sqlite3.connect(db) as connection:
        connection.execute(
            "UPDATE games SET error_seat = NULL, error_kind = NULL, winner = NULL "
            "WHERE end_reason = 'ABORTED_EMPTY_LINE'"
        )
        connection.execute("ALTER TABLE games DROP COLUMN overloaded")
    old = json.loads(locm("report", "--db", str(db), "--json").stdout)["bots"]["sore"]
    assert old["draws"] == sore["losses"] and old["errors"] == {}
    resumed = locm(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert f"charged {sore['losses']} stored empty-line abort(s)" in resumed.stderr
    assert "played 0 new games" in resumed.stderr
    now = json.loads(locm("report", "--db", str(db), "--json").stdout)["bots"]["sore"]
    assert now == sore


@pytest.mark.parametrize(("mode", "kind"), [("empty", "empty line"), ("crash", "crash")])
def test_a_sore_loser_in_1_0_is_charged_its_loss(mode: str, kind: str) -> None:
    """1.0's games as a tournament worker plays and stores them (the report, retry and
    resume of such games: the test above, in 1.2): behind against greedy, the sore bot
    answers an empty line (the official runner aborts the game) or crashes, and loses."""
    task = LocmGameTask(
        GameSpec("sore", "greedy", 0, 3),
        (sore_bot(mode), "builtin:greedy"), resolve_parameters("1.0", {"seed": 3}), 4, 10.0,
        sandbox=False,
    )  # fmt: skip
    record = play_scheduled_game(task)
    assert (record.error_seat, record.error_kind, record.winner) == (0, kind, 1), record.detail
    assert record.log is not None
    log = decompress_log(record.log)
    if mode == "empty":
        assert record.result == "aborted" and record.end_reason == "ABORTED_EMPTY_LINE"
        assert log["scores"] == {} and "failCause" in log
    else:
        assert record.result == "win"


def test_an_over_long_line_is_charged_as_too_long_and_not_a_crash(tmp_path: Path) -> None:
    simple = BOTS / "simple_bot.py"
    task = LocmGameTask(
        GameSpec("long", "pass", 0, 5),
        (f"{shlex.quote(sys.executable)} {shlex.quote(str(simple))} long 2", "builtin:pass"),
        resolve_parameters("1.2", {"seed": 5}), 4, 10.0, sandbox=False,
    )  # fmt: skip
    record = play_scheduled_game(task)
    assert (record.error_seat, record.error_kind, record.winner) == (0, "too long", 1)
    assert record.overloaded is None
    assert "too long" not in retry_summary({("too long", False): 1}).split("; keeping")[0]


# --- timeouts: the machine's fault or the bot's -------------------------------------


needs_cgroups = pytest.mark.skipif(
    not cgroups.support().ok, reason="the starvation measure needs a cgroup per bot"
)


@pytest.fixture
def hogs() -> Iterator[tuple[int, list[int]]]:
    """Eight busy loops pinned to one CPU, stopped: a bot wakes them (SIGCONT) in its turn,
    as the bots of other games would compete for that CPU. Each has a session of its own,
    as every bot has (with the kernel's autogroups, CPU is shared fairly between sessions):
    the bot gets about a ninth of that CPU. Killed after the test."""
    cpu = max(os.sched_getaffinity(0))
    processes = [
        subprocess.Popen(
            ["/bin/sh", "-c", "while :; do :; done"],
            start_new_session=True,
            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}),
        )
        for _ in range(8)
    ]
    for process in processes:
        os.kill(process.pid, signal.SIGSTOP)
    try:
        yield cpu, [process.pid for process in processes]
    finally:
        for process in processes:
            process.kill()
            process.wait()


def timed_out(mode: str, env: tuple[tuple[str, str], ...] = ()) -> GameRecord:
    """One 1.2 game of the sore bot in ``mode`` against greedy, at five times the limits
    (battle turns of 500 ms), unsandboxed so that it can wake the hogs."""
    task = LocmGameTask(
        GameSpec("bot", "greedy", 0, 3),
        (sore_bot(mode), "builtin:greedy"), resolve_parameters("1.2", {"seed": 3}), 4, 5.0,
        sandbox=False, bot_env=env,
    )  # fmt: skip
    return play_scheduled_game(task)


@needs_cgroups
def test_a_bot_starved_by_the_machine_is_replayed_one_that_starved_itself_is_not(
    tmp_path: Path, hogs: tuple[int, list[int]]
) -> None:
    cpu, pids = hogs
    # It needs 150 ms of CPU in a 500 ms turn: in time alone, not with eight busy loops.
    env = (("SORE_CPU", str(cpu)), ("SORE_HOGS", " ".join(map(str, pids))),
           ("SORE_SPIN_S", "0.15"))  # fmt: skip
    starved = timed_out("starve", env)
    assert (starved.error_seat, starved.error_kind) == (0, "timeout"), starved.detail
    assert starved.overloaded is True
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    # The same with its own priority, or its session's, lowered first: its own doing.
    records = [starved]
    for mode in ("starve-nice", "starve-group"):
        slowed = timed_out(mode, env)
        assert (slowed.error_kind, slowed.overloaded) == ("timeout", False), (mode, slowed.detail)
        records.append(slowed)
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
    _only_the_starved_game_is_replayed(tmp_path, records, starved.key)


def _only_the_starved_game_is_replayed(tmp_path: Path, records: list[GameRecord], key: str) -> None:
    db = tmp_path / "t.db"
    with TournamentStore(str(db)) as store:
        for number, record in enumerate(records):
            store.add(GameRecord(**{**record.__dict__, "key": f"{record.key}{number}"}))
        summary = retry_summary(store.error_counts())
        assert summary.startswith("playing again 1 game(s) lost to a timeout")
        assert "timeout (the bot had the CPU or was not measured) 2" in summary
        assert store.discard(("referee",), overloaded_timeouts=True) == 1
        assert store.done_keys() == {f"{r.key}{n}" for n, r in enumerate(records)} - {f"{key}0"}
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT COUNT(*) FROM games WHERE overloaded = 0").fetchone()


@needs_cgroups
@pytest.mark.parametrize("mode", ["spin", "sleep"])
def test_a_timeout_the_bot_spent_busy_or_asleep_is_not_the_machines_fault(mode: str) -> None:
    """Behind, it thinks for ever on every core it can (busy processes: their CPU time is
    the bot's, however loaded the machine), or sleeps: either way its timeout stands."""
    record = timed_out(mode if mode == "sleep" else "spin")
    assert (record.error_seat, record.error_kind) == (0, "timeout"), record.detail
    assert record.overloaded is False
    assert record.winner == 1
    assert re.search(r"keeping 1 game", retry_summary({("timeout", False): 1}))
