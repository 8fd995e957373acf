"""`locm tournament` survives kill -9, lost workers and broken bot commands; every problem
with the database is one line and exit 2. Real processes, real SQLite, real signals."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cardarena.tournaments.schedule import schedule
from cardarena.tournaments.store import TournamentStore

BOTS = Path(__file__).parent / "bots"
LOCM = [sys.executable, "-m", "cardarena.locm.cli"]
PY = shlex.quote(sys.executable)


def simple_bot(mode: str = "play", at: int = 0, tag: str = "") -> str:
    return f"{PY} {shlex.quote(str(BOTS / 'simple_bot.py'))} {mode} {at} {tag}".strip()


def locm(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LOCM, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def processes_with(tag: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True)
    return [pid for pid in found.stdout.split() if int(pid) != os.getpid()]


def sandbox_off() -> list[str]:
    """--no-sandbox where the command has it: these tests need a bot that can hurt its worker."""
    help_text = locm("tournament", "--help").stdout
    return ["--no-sandbox"] if "--no-sandbox" in help_text else []


def test_kill_9_with_bot_processes_resumes_with_exact_counts(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    tag = f"kill9-{os.getpid()}-{time.monotonic_ns()}"
    args = [
        "tournament", "--bot", f"alpha={simple_bot(tag=tag)}",
        "--bot", f"beta={simple_bot(tag=tag)}", "--bot", "builtin:random",
        "--version", "1.5", "--games", "3", "--seed", "4",
        "--workers", "2", "--db", str(db), "--quiet",
    ]  # fmt: skip
    total = 6 * 3
    process = subprocess.Popen(
        [*LOCM, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for(lambda: count(db) >= 2 or process.poll() is not None, 120, "two stored games")
        assert process.poll() is None, "the tournament finished before it could be killed"
        # No worker holds the lock file: only the tournament process itself.
        lock = str(db) + ".lock"
        workers = subprocess.run(
            ["pgrep", "-P", str(process.pid)], capture_output=True, text=True
        ).stdout.split()
        assert workers
        for pid in workers:
            links = []
            for fd in Path(f"/proc/{pid}/fd").glob("*"):
                with contextlib.suppress(OSError):
                    links.append(os.readlink(fd))
            assert lock not in links, f"worker {pid} holds the lock"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # Workers get the parent-death signal, stop their referees, which stop the bots.
    wait_for(lambda: not processes_with(tag), 20, "workers and bots to exit after kill -9")
    before = count(db)
    assert 2 <= before < total
    resumed = locm(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert f"played {total - before} new games" in resumed.stderr
    with sqlite3.connect(db) as connection:
        keys = [row[0] for row in connection.execute("SELECT key FROM games")]
        errors = connection.execute("SELECT COUNT(*) FROM games WHERE result = 'error'").fetchone()
    assert sorted(keys) == sorted(s.key for s in schedule(["alpha", "beta", "random"], 3, 4))
    assert errors[0] == 0
    assert not processes_with(tag)


KILLER = """\
import os, signal, sys
mark = {mark!r}
# Once, at its first real input (the pre-game check sends none): kill the worker running it.
# Two games run at once: creating the mark exclusively lets exactly one of them do it.
if sys.stdin.buffer.peek(1):
    try:
        os.close(os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        pass
    else:
        os.kill(os.getppid(), signal.SIGKILL)
sys.argv = [sys.argv[0], "play", "0"]
exec(open({bot!r}).read())
"""


def test_a_lost_worker_costs_one_game_replayed_on_resume(tmp_path: Path) -> None:
    killer = tmp_path / "killer.py"
    mark = tmp_path / "killed"
    killer.write_text(KILLER.format(mark=str(mark), bot=str(BOTS / "simple_bot.py")))
    db = tmp_path / "w.db"
    args = [
        "tournament", "--bot", f"killer={PY} {shlex.quote(str(killer))}", "--bot", "builtin:greedy",
        "--version", "1.2", "--games", "2", "--workers", "2", "--db", str(db), "--quiet",
        *sandbox_off(),
    ]  # fmt: skip
    first = locm(*args)
    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr
    assert mark.exists()
    assert "played 4 new games" in first.stderr
    with sqlite3.connect(db) as connection:
        lost = connection.execute(
            "SELECT detail FROM games WHERE result = 'error' AND error_kind = 'referee'"
        ).fetchall()
    assert [row[0] for row in lost] == ["the worker playing this game killed by SIGKILL"]
    assert "(1 referee errors, not counted)" in first.stdout
    resumed = locm(*args)  # referee failures are always played again
    assert resumed.returncode == 0, resumed.stderr
    assert "played 1 new games" in resumed.stderr
    with sqlite3.connect(db) as connection:
        results = [r[0] for r in connection.execute("SELECT result FROM games")]
    assert len(results) == 4 and "error" not in results


def test_runner_survives_workers_killed_in_any_game(tmp_path: Path) -> None:
    from cardarena.tournaments.runner import run_tasks

    got: list[str] = []
    run_tasks(
        _die_on_odd, list(range(8)), got.append, workers=2, lost=lambda t, why: f"lost {t}: {why}"
    )
    assert sorted(got) == sorted(
        [f"ok {t}" for t in range(0, 8, 2)]
        + [f"lost {t}: the worker playing this game killed by SIGKILL" for t in range(1, 8, 2)]
    )


def _die_on_odd(task: int) -> str:
    if task % 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return f"ok {task}"


WRAPPER = "import sys\nsys.argv = [sys.argv[0], {mode!r}, '0']\nexec(open({bot!r}).read())\n"


def test_broken_bot_commands_are_usage_errors_and_retry_errors_keeps_crashes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "b.db"
    missing = tmp_path / "my_bot.py"
    tmp_path.chmod(0o755)  # as root the sandboxed bot is another user, who must read it
    # Ten times the limits: on a busy machine the sandboxed Python bot must start and reach
    # its crash without timing out first (a timeout is not a crash).
    args = [
        "tournament", "--bot", "builtin:pass", "--bot", f"mine={PY} {shlex.quote(str(missing))}",
        "--games", "2", "--db", str(db), "--quiet", "--time-scale", "10",
    ]  # fmt: skip
    refused = locm(*args)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "can't open file" in refused.stderr
    assert not db.exists()
    # A bot that starts but crashes at its first answer loses its games, recorded...
    # (What it runs lies in its own folder: the sandbox shows a bot nothing else.)
    shutil.copy(BOTS / "simple_bot.py", tmp_path / "simple_bot.py")
    missing.write_text(WRAPPER.format(mode="crash", bot=str(tmp_path / "simple_bot.py")))
    crashed = locm(*args)
    assert crashed.returncode == 0, crashed.stderr
    with sqlite3.connect(db) as connection:
        kinds = [r[0] for r in connection.execute("SELECT error_kind FROM games")]
    assert kinds == ["crash"] * 4
    # ...fixed, the same command plays nothing new, and --retry-errors replays no crash (a
    # bot that crashes when behind must not get its losses replayed): it says so. The
    # fixed bot plays its games into a new database.
    missing.write_text(WRAPPER.format(mode="play", bot=str(tmp_path / "simple_bot.py")))
    assert "played 0 new games" in locm(*args).stderr
    retried = locm(*args, "--retry-errors")
    assert retried.returncode == 0 and "played 0 new games" in retried.stderr, retried.stderr
    assert "keeping 4 game(s) lost by the bot's own doing (crash 4)" in retried.stderr
    fresh = [arg if arg != str(db) else str(tmp_path / "fixed.db") for arg in args]
    assert "played 4 new games" in locm(*fresh).stderr
    with sqlite3.connect(tmp_path / "fixed.db") as connection:
        kinds = [r[0] for r in connection.execute("SELECT error_kind FROM games")]
    assert len(kinds) == 4 and "crash" not in kinds


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.startswith("locm: error: ") and done.stderr.count("\n") == 1, done.stderr
    for needle in needles:
        assert needle in done.stderr, done.stderr


PAIR = ["--bot", "builtin:pass", "--bot", "builtin:random", "--games", "1", "--quiet"]


def test_database_problems_are_one_line_errors_and_change_nothing(tmp_path: Path) -> None:
    good = tmp_path / "good.db"
    assert locm("tournament", *PAIR, "--db", str(good)).returncode == 0
    assert not Path(f"{good}.lock").exists()  # removed when the run was done
    # Locked by a running tournament (this test holds the lock); owner-only files.
    with TournamentStore(str(good)):
        for path in (good, Path(f"{good}.lock")):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        _one_line_error(locm("tournament", *PAIR, "--db", str(good)), "in use")
        assert locm("report", "--db", str(good)).returncode == 0  # reading needs no lock
    # Garbage, truncated, a directory, a missing directory, a missing file.
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(os.urandom(3000))
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(good.read_bytes()[:50])
    for bad in (garbage, truncated):
        digest = _digest(bad)
        _one_line_error(locm("tournament", *PAIR, "--db", str(bad)), "not a tournament database")
        _one_line_error(locm("report", "--db", str(bad)), "not a tournament database")
        assert _digest(bad) == digest
    _one_line_error(locm("tournament", *PAIR, "--db", str(tmp_path)), "is a directory")
    _one_line_error(
        locm("tournament", *PAIR, "--db", str(tmp_path / "nowhere" / "t.db")), "no directory"
    )
    assert not (tmp_path / "nowhere").exists()
    _one_line_error(locm("report", "--db", str(tmp_path / "missing.db")), "no tournament database")
    assert not (tmp_path / "missing.db").exists()
    _one_line_error(locm("tournament", *PAIR, "--version", "1.0", "--league", "9"), "--league")


def test_a_shared_deck_database_is_refused_untouched(tmp_path: Path) -> None:
    from cardarena.shared_deck.store import Store

    db = tmp_path / "league.db"
    store = Store(str(db))
    with contextlib.suppress(AttributeError):
        store.close()
    digest = _digest(db)
    _one_line_error(locm("tournament", *PAIR, "--db", str(db)), "Shared Deck database")
    _one_line_error(locm("report", "--db", str(db)), "Shared Deck database")
    assert _digest(db) == digest
    with sqlite3.connect(db) as connection:
        tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}
    assert "games" not in tables and "meta" not in tables


def test_report_works_on_a_read_only_database(tmp_path: Path) -> None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap (bwrap) is not installed: cannot make a read-only mount")
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    db = shelf / "r.db"
    assert locm("tournament", *PAIR, "--db", str(db)).returncode == 0
    digest = _digest(db)
    # A read-only file system: even root cannot write there (permission bits would not stop us).
    ro = [bwrap, "--bind", "/", "/", "--ro-bind", str(shelf), str(shelf), "--dev", "/dev",
          "--proc", "/proc", *LOCM]  # fmt: skip
    probe = subprocess.run([bwrap, "--bind", "/", "/", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"bwrap cannot run here: {probe.stderr.decode().strip()}")
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    shown = subprocess.run([*ro, "report", "--db", str(db)], capture_output=True, text=True,
                           timeout=120, env=env, check=False)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("2 games")
    assert "warning: cannot write the report files" in shown.stderr  # default dir: a warning
    as_json = subprocess.run([*ro, "report", "--db", str(db), "--json"], capture_output=True,
                             text=True, timeout=120, env=env, check=False)  # fmt: skip
    assert as_json.returncode == 0 and '"games": 2' in as_json.stdout, as_json.stderr
    explicit = subprocess.run(
        [*ro, "report", "--db", str(db), "--out", str(shelf / "x")],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    _one_line_error(explicit, "cannot write the report files")
    assert _digest(db) == digest


def test_more_workers_than_cores_warns_once(tmp_path: Path) -> None:
    cores = os.cpu_count() or 1
    done = locm("tournament", *PAIR, "--db", str(tmp_path / "o.db"), "--workers", str(cores + 1))
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and f"{cores + 1} workers on {cores} cores" in warnings[0]
    with sqlite3.connect(tmp_path / "o.db") as connection:
        loads = [r[0] for r in connection.execute("SELECT load FROM games")]
    assert len(loads) == 2 and all(isinstance(x, float) and x >= 0 for x in loads)
