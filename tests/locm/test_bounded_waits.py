"""No wait without a bound: a bot or a tournament worker that dies at any moment ends its
game, and `locm play` / `locm tournament` go on or stop with one line. Real processes, real
signals, the real sandbox and cgroups where this machine has them.

The bounds below are upper bounds on a condition (the command ending, processes going),
never sleeps: each test is over as soon as the command is.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cardarena.locm.referee import cgroups, sandbox
from tests.locm.bots import BOTS, PYTHON, new_tag, simple_bot, tagged_processes, wait_until_gone
from tests.locm.test_cgroups import KINDS, every_bot_cgroup

LOCM = [sys.executable, "-m", "cardarena.locm"]
COMMAND_BOUND_S = 120
"""Generous: these commands end in seconds; they used to never end."""
SANDBOXES = [
    pytest.param(False, id="no-sandbox"),
    pytest.param(
        True, id="sandbox",
        marks=pytest.mark.skipif(not sandbox.support().ok, reason="no bubblewrap sandbox here"),
    ),
]  # fmt: skip
def leaked_since(before: set[str]) -> set[str]:
    """Bot cgroups made since ``before`` whose referee is gone (those of a live referee are
    another test's game in progress)."""
    leaked = set()
    for path in every_bot_cgroup() - before:
        owner = os.path.basename(path).removeprefix(cgroups.NAME_PREFIX).split("-")[0]
        if not (owner.isdigit() and os.path.exists(f"/proc/{owner}")):
            leaked.add(path)
    return leaked


def games(db: Path) -> list[tuple[str, str, str | None, int | None, str | None]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT key, result, error_kind, error_seat, detail FROM games"
        ).fetchall()


def killer(tag: str) -> str:
    return f"/bin/sh {BOTS / 'parent_killer.sh'} {tag}"


def sandbox_flag(sandboxed: bool) -> list[str]:
    return [] if sandboxed else ["--no-sandbox"]


@pytest.mark.parametrize("sandboxed", SANDBOXES)
def test_a_bot_that_kills_its_parent_ends_its_games_and_the_tournament_ends(
    tmp_path: Path, sandboxed: bool
) -> None:
    tag = new_tag()
    db = tmp_path / "t.db"
    before = every_bot_cgroup()
    done = subprocess.run(
        [*LOCM, "tournament", "--bot", f"killer={killer(tag)}",
         "--bot", f"honest={simple_bot(tag=tag)}", "--games", "2", "--workers", "2",
         "--version", "1.2", "--db", str(db), "--quiet", *sandbox_flag(sandboxed)],
        capture_output=True, text=True, timeout=COMMAND_BOUND_S, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    recorded = games(db)
    keys = [row[0] for row in recorded]
    assert len(keys) == 4 and len(set(keys)) == 4  # every game once, none twice
    if sandboxed:
        # The namespace's init cannot be signalled from inside: the bot just crashed.
        assert {(row[1], row[2]) for row in recorded} == {("win", "crash")}
    else:
        # It killed the worker playing it: a referee failure, played again on resume.
        assert {row[4] for row in recorded} == {"the worker playing this game killed by SIGKILL"}
    assert not wait_until_gone(tag)
    assert not leaked_since(before)


def children(pid: int) -> list[int]:
    found = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return []
    for task in tasks:
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def busy_workers(tournament: int, tag: str) -> list[int]:
    """The tournament's workers (its forked copies, not the pre-game check's bots) with two
    bots under them."""
    found = []
    for worker in children(tournament):
        if cmdline(worker) != cmdline(tournament):
            continue
        bots, todo = 0, children(worker)
        while todo:
            pid = todo.pop()
            todo += children(pid)
            bots += tag.encode() in cmdline(pid) and b"bwrap" not in cmdline(pid)
        if bots >= 2:
            found.append(worker)
    return found


@pytest.mark.parametrize("sandboxed", SANDBOXES)
def test_workers_killed_from_outside_mid_game_cost_their_games_only(
    tmp_path: Path, sandboxed: bool
) -> None:
    """Both workers SIGKILLed while their bots are in a game (one bot thinking, one frozen
    outside its turn): their games are lost, fresh workers play the rest, the dead workers'
    bots and cgroups are gone."""
    tag = new_tag()
    db = tmp_path / "t.db"
    before = every_bot_cgroup()
    slow = simple_bot("sleep", 0, tag)  # its first answer never comes: a timeout
    process = subprocess.Popen(
        [*LOCM, "tournament", "--bot", f"slow={slow}", "--bot", f"honest={simple_bot(tag=tag)}",
         "--games", "2", "--workers", "2", "--version", "1.2", "--time-scale", "5",
         "--db", str(db), "--quiet", *sandbox_flag(sandboxed)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + COMMAND_BOUND_S
        # Both workers in a game, with both its bots started (the sleeper is asked first or
        # second; the 5 s it is given is the window). The pre-game check's bot processes
        # are the tournament process's own children: not workers.
        while len(workers := busy_workers(process.pid, tag)) < 2:
            assert process.poll() is None and time.monotonic() < deadline, "no game started"
            time.sleep(0.02)
        for worker in workers:
            os.kill(worker, signal.SIGKILL)
        _out, err = process.communicate(timeout=COMMAND_BOUND_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    recorded = games(db)
    keys = [row[0] for row in recorded]
    assert len(keys) == 4 and len(set(keys)) == 4
    lost = [row for row in recorded if row[2] == "referee"]
    assert [row[4] for row in lost] == ["the worker playing this game killed by SIGKILL"] * 2
    assert [row[2] for row in recorded if row[2] != "referee"] == ["timeout", "timeout"]
    assert not wait_until_gone(tag)
    assert not leaked_since(before)


def pipe_holder(tag: str, mode: str = "hold") -> str:
    return f"{PYTHON} {BOTS / 'pipe_holder.py'} {mode} {tag}"


@pytest.mark.parametrize("sandboxed", SANDBOXES)
def test_a_bot_whose_child_keeps_its_pipes_open_does_not_hold_the_referee(
    tmp_path: Path, sandboxed: bool
) -> None:
    """It ignores SIGTERM and leaves a child in a session of its own holding its output:
    closing it used to wait for that output to close, for ever (`locm play`, and the
    pre-game check of `locm tournament`, with no worker yet)."""
    tag = new_tag()
    try:
        play = subprocess.run(
            [*LOCM, "play", "-p1", pipe_holder(tag), "-p2", "builtin:random",
             "--version", "1.2", *sandbox_flag(sandboxed)],
            capture_output=True, text=True, timeout=COMMAND_BOUND_S, check=False,
        )  # fmt: skip
        assert play.returncode == 0, play.stderr
        assert play.stdout.split()[0] == "-1"
        assert "timed out: lost" in play.stderr
        tournament = subprocess.run(
            [*LOCM, "tournament", "--bot", f"holder={pipe_holder(tag)}", "--bot",
             "builtin:random", "--games", "1", "--workers", "2", "--version", "1.2",
             "--db", str(tmp_path / "t.db"), "--quiet", *sandbox_flag(sandboxed)],
            capture_output=True, text=True, timeout=COMMAND_BOUND_S, check=False,
        )  # fmt: skip
        assert tournament.returncode == 0, tournament.stderr
        assert len(games(tmp_path / "t.db")) == 2
        if KINDS or sandboxed:  # the child is killed with the cgroup or namespace
            assert not wait_until_gone(tag)
    finally:
        for pid, _state in tagged_processes(tag):
            os.kill(pid, signal.SIGKILL)


def test_without_a_time_limit_a_bot_that_exited_is_not_waited_for() -> None:
    """``--no-time-limit`` waits for answers for ever, but not from a bot that has exited
    while a child of it keeps its output open: a crash, within a second."""
    tag = new_tag()
    try:
        play = subprocess.run(
            [*LOCM, "play", "-p1", pipe_holder(tag, "exit"), "-p2", "builtin:random",
             "--version", "1.2", "--no-time-limit", "--no-sandbox"],
            capture_output=True, text=True, timeout=COMMAND_BOUND_S, check=False,
        )  # fmt: skip
        assert play.returncode == 0, play.stderr
        assert play.stdout.split()[0] == "-1"
        assert "exited" in play.stderr
    finally:
        for pid, _state in tagged_processes(tag):
            os.kill(pid, signal.SIGKILL)
