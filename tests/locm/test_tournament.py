"""`locm tournament` / `locm report` end to end: real bot processes, a real SQLite file,
a real kill -9 of a real tournament process, and a real local Ray."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cardarena.locm.cli.tournament import print_report
from cardarena.locm.referee.causes import stored_cause
from cardarena.tournaments.report.html import read_snapshot, report_page
from cardarena.tournaments.schedule import schedule
from cardarena.tournaments.store import TournamentStore

BOTS = Path(__file__).parent / "bots"
LOCM = [sys.executable, "-m", "cardarena.locm.cli"]


def simple_bot(mode: str = "play", at: int = 0) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(BOTS / 'simple_bot.py'))} {mode} {at}"


def locm(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LOCM, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def rows(db: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT key, winner, result, end_reason, error_seat, error_kind, turns, seed "
            "FROM games ORDER BY key"
        ).fetchall()


def stored_games(db: Path) -> int:
    """Games stored so far; 0 while the tournament has not yet created its database or table."""
    if not db.exists():
        return 0
    try:
        return len(rows(db))
    except sqlite3.OperationalError:  # the file exists a moment before its schema does
        return 0


def test_tiny_tournament_with_crashing_hanging_and_garbling_bots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    bots = [
        "--bot", "builtin:greedy",
        # Each misbehaves at its third answer (its second battle turn): exits, answers
        # garbage, hangs.
        "--bot", f"crasher={simple_bot('crash', 2)}",
        "--bot", f"garbler={simple_bot('garbage', 2)}",
        "--bot", f"sleeper={simple_bot('sleep', 2)}",
    ]  # fmt: skip
    done = locm(
        "tournament", *bots, "--version", "1.5", "--games", "1", "--seed", "7", "--workers", "2",
        "--db", str(db), "--time-scale", "3", "--quiet",
    )  # fmt: skip
    # The time scale leaves a loaded machine's Python bots room to start and answer (at 0.5,
    # a busy machine turned the crasher's crashes into timeouts); only the sleeper waits it out.
    assert done.returncode == 0, done.stderr
    assert "played 12 new games" in done.stderr
    assert "win rate of the row against the column" in done.stdout
    print_report(str(db), as_json=True)
    report = json.loads(capsys.readouterr().out)
    assert report["games"] == 12
    stats = report["bots"]
    assert {name: stats[name]["games"] for name in stats} == dict.fromkeys(
        ("greedy", "crasher", "garbler", "sleeper"), 6
    )
    # The misbehaving bot whose third answer comes first (it moves first) loses that game:
    # each misbehaves in its 2 games against greedy and its 2 as player 0 against the others.
    assert (stats["crasher"]["crashes"], stats["crasher"]["timeouts"]) == (4, 0)
    assert (stats["sleeper"]["timeouts"], stats["sleeper"]["crashes"]) == (4, 0)
    assert stats["garbler"]["invalid_outputs"] == 4
    assert [stats[name]["wins"] for name in ("crasher", "garbler", "sleeper")] == [2, 2, 2]
    assert stats["greedy"]["wins"] == 6 and stats["greedy"]["max_turn_ms"] > 0
    for name in ("matrix.png", "ratings.png", "bots.csv", "matrix.csv", "games.csv",
                 "report.json"):  # fmt: skip
        assert (tmp_path / "t-report" / name).stat().st_size > 0
    # Why each bot lost, and why each game ended, with the turn (the viewer's turn number:
    # both seats' battle turns counted together) and what the bot said or did.
    text = done.stdout
    for name, kind in (("crasher", "crash"), ("garbler", "invalid"), ("sleeper", "timeout")):
        assert re.search(rf"^  {name} +lost 4: {kind} 4$", text, re.MULTILINE), text
    assert not re.search(r"^  greedy +lost", text, re.MULTILINE)
    assert f"(open one: locm view --db {db} --game N --open)" in text
    crashed = "crasher crashed at turn 3: crashing on purpose"  # its last stderr line
    assert re.search(rf"#\d+  crasher vs greedy: {crashed}$", text, re.MULTILINE)
    assert re.search(r"#\d+  greedy vs crasher: crasher crashed at turn 4: crashing on purpose$",
                     text, re.MULTILINE)  # fmt: skip
    assert re.search(r"#\d+  garbler vs greedy: garbler sent an invalid output at turn 3: "
                     r"Invalid action name", text)  # fmt: skip
    assert re.search(r"#\d+  sleeper vs crasher: sleeper timed out at turn 3$", text, re.MULTILINE)
    listed = {(g["first"], g["second"]): g for g in report["game_list"]}
    assert listed["crasher", "sleeper"]["why"] == crashed
    # The HTML report says the same (its links to the viewer: tests/locm/test_viewer_report.py).
    index = report_page(read_snapshot(str(db), stored_cause), game="LOCM", pictures=False)
    assert '<td class="lost-by">invalid 4</td>' in index
    number = listed["crasher", "greedy"]["number"]
    assert f'<a class="cause" href="games/{number}.html">{crashed}</a>' in index
    # A database from before the cause column reports the causes its columns tell.
    old = tmp_path / "old.db"
    old.write_bytes(db.read_bytes())
    with sqlite3.connect(old) as connection:
        connection.execute("ALTER TABLE games DROP COLUMN cause")
    print_report(str(old))
    before = capsys.readouterr().out
    assert re.search(r"^  sleeper +lost 4: timeout 4$", before, re.MULTILINE)
    assert re.search(r"#\d+  crasher vs greedy: crasher crashed at turn 3 \(its process ended\)$",
                     before, re.MULTILINE)  # fmt: skip
    # The reasons are stored with the games, and every log is kept, compressed.
    with TournamentStore(str(db), lock=False) as store:
        records = store.records(with_logs=True)
        crashes = [r for r in records if r.error_kind == "crash"]
        assert crashes and all(r.end_reason == "TIMEOUT" and r.log for r in crashes)
        garbled = next(r for r in records if (r.first, r.second) == ("greedy", "garbler"))
        log = store.log(garbled.key)
    assert log is not None and log["cardarena"]["version"] == "1.5"
    # Any single game replays with locm play from the stored command line.
    replay = shlex.split(garbled.replay)
    assert replay[:2] == ["locm", "play"]
    again = subprocess.run(
        [*LOCM, *replay[1:]], capture_output=True, text=True, timeout=60, check=True
    )
    assert again.stdout.split()[:2] == [str(log["scores"][seat]) for seat in ("0", "1")]


def test_resume_after_kill_9_plays_only_missing_games(tmp_path: Path) -> None:
    db = tmp_path / "resume.db"
    args = [
        "tournament", "--bot", "builtin:random", "--bot", "builtin:greedy", "--bot",
        "builtin:pass", "--version", "1.5", "--games", "10", "--seed", "11", "--workers", "2",
        "--db", str(db), "--quiet",
    ]  # fmt: skip
    total = 6 * 10
    process = subprocess.Popen(
        [*LOCM, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    count = 0
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if db.exists():
            try:
                with sqlite3.connect(db, timeout=5) as connection:
                    count = connection.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            except sqlite3.OperationalError:
                continue
            if count >= 6:
                break
    assert process.poll() is None, "the tournament finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    # The workers stop at once (parent-death signal) and never hold the lock: no wait.
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    before = rows(db)
    assert 6 <= len(before) < total
    resumed = locm(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert f"played {total - len(before)} new games" in resumed.stderr
    after = rows(db)
    assert len(after) == total == len({row[0] for row in after})
    assert set(before) <= set(after)  # games stored before the kill are untouched
    keys = {spec.key for spec in schedule(["random", "greedy", "pass"], 10, 11)}
    assert {row[0] for row in after} == keys
    again = locm(*args)
    assert "played 0 new games" in again.stderr


def _results_for(tmp_path: Path, name: str, *extra: str) -> list[tuple[object, ...]]:
    db = tmp_path / f"{name}.db"
    bots = [
        "--bot", "builtin:random", "--bot", "builtin:greedy",
        "--bot", f"greedy-process={shlex.join([*LOCM, 'bot', 'greedy', '--seed', '3'])}",
    ]  # fmt: skip
    # Generous limits: a busy machine must not turn the process bot's start-up into a timeout
    # in one run and not the other (the results compared here are about seeds and workers).
    done = locm(
        "tournament", *bots, "--version", "1.2", "--games", "2", "--seed", "5", "--db", str(db),
        "--time-scale", "20", "--quiet", *extra, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return rows(db)


def test_same_seed_same_results_with_1_and_2_workers_and_ray(tmp_path: Path) -> None:
    one = _results_for(tmp_path, "one", "--workers", "1")
    two = _results_for(tmp_path, "two", "--workers", "2")
    assert len(one) == 12
    assert one == two
    pytest.importorskip("ray", reason='Ray is not installed: pip install ".[ray]"')
    on_ray = _results_for(tmp_path, "ray", "--workers", "2", "--backend", "ray")
    assert on_ray == one


def test_database_refuses_other_settings(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    first = locm(
        "tournament", "--bot", "builtin:pass", "--bot", "builtin:random", "--games", "1",
        "--db", str(db), "--quiet",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    other = locm(
        "tournament", "--bot", "builtin:pass", "--bot", "builtin:random", "--games", "1",
        "--db", str(db), "--seed", "2", "--quiet",
    )  # fmt: skip
    assert other.returncode == 2 and "seed=1, not seed=2" in other.stderr
    assert len(rows(db)) == 2


def test_a_refused_run_leaves_no_lock_file(tmp_path: Path) -> None:
    pair = ["--bot", "builtin:pass", "--bot", "builtin:random", "--games", "1", "--quiet"]
    made = tmp_path / "made"
    made.mkdir()
    db = made / "c.db"
    assert locm("tournament", *pair, "--db", str(db)).returncode == 0
    # A finished run removes its lock file.
    assert not (made / "c.db.lock").exists() and not (made / "c.db-lock").exists()
    # The database alone (copied elsewhere, or its lock file removed): a refused run
    # creates nothing beside it.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "c.db").write_bytes(db.read_bytes())
    refused = locm("tournament", *pair, "--db", str(elsewhere / "c.db"), "--seed", "2")
    assert refused.returncode == 2 and "seed=1, not seed=2" in refused.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == ["c.db"]
    garbage = elsewhere / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    refused = locm("tournament", *pair, "--db", str(garbage))
    assert refused.returncode == 2 and "not a tournament database" in refused.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == ["c.db", "garbage.db"]


def test_ctrl_c_exits_at_once_and_keeps_every_finished_game(tmp_path: Path) -> None:
    db = tmp_path / "interrupted.db"
    tag = f"int-{os.getpid()}-{time.monotonic_ns()}"
    args = [
        "tournament", "--bot", "builtin:random", "--bot", f"honest={simple_bot('play', 0)} {tag}",
        "--bot", "builtin:greedy", "--version", "1.5", "--games", "2", "--workers", "2",
        "--db", str(db), "--quiet",
    ]  # fmt: skip
    total = 6 * 2
    # Its own process group, as a terminal's foreground job: Ctrl-C signals the whole group.
    process = subprocess.Popen(
        [*LOCM, *args], stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and stored_games(db) < 2 and process.poll() is None:
        time.sleep(0.05)
    assert process.poll() is None, "the tournament ended before it could be interrupted"
    before = set(rows(db))
    started = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    took = time.monotonic() - started
    assert process.returncode == 128 + signal.SIGINT, stderr
    assert "interrupted by Ctrl-C" in stderr and "resume" in stderr
    assert took < 3.0, f"Ctrl-C took {took:.2f} s to end the tournament"
    kept = set(rows(db))
    assert before <= kept  # every game stored before Ctrl-C is kept
    assert [row for row in kept if row[5] == "referee"] == []  # no interrupted game stored
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    gone = time.monotonic() + 30  # a killed bot may take a moment to be reaped
    while subprocess.run(["pgrep", "-f", tag], capture_output=True).returncode == 0:
        assert time.monotonic() < gone, "bot processes survived the tournament"
        time.sleep(0.05)
    # The same command plays only the missing games and leaves the kept ones as they were.
    resumed = locm(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert kept <= set(rows(db)) and len(rows(db)) == total


def test_sigterm_stops_the_bots_and_keeps_finished_games(tmp_path: Path) -> None:
    db = tmp_path / "term.db"
    tag = f"term-{os.getpid()}-{time.monotonic_ns()}"
    args = [
        "tournament", "--bot", "builtin:random", "--bot", f"honest={simple_bot('play', 0)} {tag}",
        "--version", "1.5", "--games", "100", "--workers", "2", "--db", str(db), "--quiet",
    ]  # fmt: skip
    process = subprocess.Popen([*LOCM, *args], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and stored_games(db) < 3:
        time.sleep(0.1)
    assert process.poll() is None
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "terminated by SIGTERM" in stderr and "resume" in stderr
    deadline = time.monotonic() + 30  # a killed bot may take a moment to be reaped
    while True:
        leftovers = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True)
        if not leftovers.stdout.strip() or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert leftovers.stdout.strip() == "", "bot processes survived the tournament"
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert 3 <= len(rows(db)) < 200


def test_the_ray_backend_without_ray_is_one_line_before_any_game(tmp_path: Path) -> None:
    # Ray is hidden from the import system as if it were not installed (it is, for the tests).
    without_ray = (
        "import sys; sys.modules['ray'] = None; from cardarena.locm.cli.main import main; "
        "sys.exit(main(sys.argv[1:]))"
    )
    db = tmp_path / "t.db"
    result = subprocess.run(
        [sys.executable, "-c", without_ray, "tournament", "--bot", "builtin:pass", "--bot",
         "builtin:random", "--games", "1", "--backend", "ray", "--db", str(db)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        'locm: error: --backend ray needs Ray: pip install ".[ray]" in the cardarena folder, '
        "or pip install ray"
    ]
    assert not db.exists()  # nothing started, nothing stored
