"""``locm play`` ends with one line per misbehaving bot on stderr (the official output,
the scores and parameters on stdout, is unchanged), and ``-q`` silences it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.locm.bots import new_tag, simple_bot, wait_until_gone

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def tag() -> Iterator[str]:
    value = new_tag()
    yield value
    assert wait_until_gone(value) == [], "bot processes left behind"


def play(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cardarena.locm", "play", "--version", "1.2", "-d", "seed=5",
         *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=ENV, check=False,
    )  # fmt: skip


def test_illegal_actions_are_counted_with_the_first_quoted(tag: str) -> None:
    bot = simple_bot("illegal", 30, tag)  # from its first battle turn (30 draft picks)
    # Ten times the limits: a loaded machine must not turn the illegal actions into a timeout.
    result = play("-p1", bot, "-p2", "builtin:greedy", "--time-scale", "10")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] in (["0", "1"], ["1", "0"])
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"locm: warning: -p1 {bot!r}: ")
    assert "illegal action" in lines[0] and "(the first: 'ATTACK 999 -1')" in lines[0]
    assert "-l game.json" in lines[0] and "locm view game.json" in lines[0]

    quiet = play("-q", "-p1", bot, "-p2", "builtin:greedy", "--time-scale", "10")
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert quiet.stdout == result.stdout


def test_a_crash_points_at_the_log(tmp_path: Path, tag: str) -> None:
    log = tmp_path / "game.json"
    # Its second battle answer comes before the other bot's garbage: only it misbehaved.
    crash, garbage = simple_bot("crash", 31, tag), simple_bot("garbage", 33, tag)
    # Ten times the limits: a loaded machine must not turn the crash into a timeout.
    result = play("-p1", crash, "-p2", garbage, "-l", str(log), "--time-scale", "10")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == ["-1", "0"]
    assert result.stderr.splitlines() == [
        f"locm: warning: -p1 {crash!r}: exited during the game (a crash?): lost; "
        f"see each turn with: locm view {log}"
    ]


def test_a_timeout_is_named(tag: str) -> None:
    slow = simple_bot("sleep", 31, tag)
    result = play("-p1", "builtin:greedy", "-p2", slow, "--time-scale", "0.5")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == ["0", "-1"]
    assert result.stderr.splitlines() == [
        f"locm: warning: -p2 {slow!r}: timed out: lost; to see each turn, play again with "
        "-l game.json, then: locm view game.json"
    ]


def test_invalid_output_quotes_the_referees_message(tag: str) -> None:
    garbage = simple_bot("garbage", 31, tag)
    # Ten times the limits: a loaded machine must not turn the bad answer into a timeout.
    result = play("-p1", "builtin:greedy", "-p2", garbage, "--time-scale", "10")
    assert result.stdout.splitlines()[:2] == ["0", "-1"]
    assert result.stderr.startswith(f"locm: warning: -p2 {garbage!r}: invalid output (")
    assert "Invalid action name" in result.stderr and result.stderr.count("\n") == 1


def test_at_the_end_a_bot_receives_nothing_more(tmp_path: Path, tag: str) -> None:
    """docs/protocol.md, end of the game: no final input, result or score; stdin closed."""
    from cardarena.locm.cli.bot import _read_block

    received = tmp_path / "received.txt"
    log = tmp_path / "game.json"
    bot = f"tee {received} | {simple_bot('play', 0, tag)}"
    # Ten times the limits: a bot that timed out would leave an input unanswered.
    result = play("-p1", bot, "-p2", "builtin:greedy", "--no-sandbox", "-l", str(log),
                  "--time-scale", "10")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "-1" not in result.stdout.splitlines()[:2], result.stderr  # no timeout, no crash
    lines = iter(received.read_text().splitlines(keepends=True))
    blocks = 0
    while True:
        try:
            _read_block(lambda: next(lines, ""))  # a whole turn's input, or nothing at all
        except EOFError:
            break
        blocks += 1
    answers = [entry for entry in json.loads(log.read_text())["outputs"]["0"] if entry]
    assert blocks == len(answers)  # every input it received, it answered: nothing after
