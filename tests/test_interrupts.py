"""Ctrl-C is one line on stderr and exit status 130, whatever is interrupted.

Each command runs as a real process in its own process group; once it has printed a
line saying it is under way, SIGINT goes to the whole group, as a terminal's Ctrl-C
does (so child processes get it too).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from cardarena.locm.referee.gameresult import answers_from_log
from cardarena.locm.referee.replay import replay_lines
from tests.locm.bots import new_tag, simple_bot, wait_until_gone

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
LOCM = [sys.executable, "-m", "cardarena.locm"]
SHARED_DECK = [sys.executable, "-m", "cardarena.shared_deck.cli"]
TIMEOUT = 120


def start(command: list[str], **options: object) -> subprocess.Popen[str]:
    return subprocess.Popen(command, cwd=ROOT, env={**ENV, **options.pop("env", {})},  # type: ignore[dict-item]
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **options)  # type: ignore[call-overload]  # fmt: skip


def wait_for_line(stream: IO[str], wanted: Callable[[str], bool]) -> tuple[str, str]:
    """Read ``stream`` until a line satisfies ``wanted``; (that line, all read so far)."""
    seen = []
    result: list[str] = []

    def read() -> None:
        for line in stream:
            seen.append(line)
            if wanted(line):
                result.append(line)
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(TIMEOUT)
    assert result, f"no readiness line; read: {''.join(seen)!r}"
    return result[0], "".join(seen)


def interrupt(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    """Ctrl-C: SIGINT to the process group; (exit status, rest of stdout, stderr)."""
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=TIMEOUT)
    return process.returncode, out, err


def one_line(err: str, expected: str) -> None:
    """stderr ends with exactly ``expected`` (logging lines before it are allowed), no
    traceback anywhere."""
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.endswith(expected + "\n"), err


@pytest.fixture
def tag() -> Iterator[str]:
    value = new_tag()
    yield value
    assert wait_until_gone(value, 10.0) == [], "bot processes left behind"


def test_shared_deck_demo(tmp_path: Path) -> None:
    demo = start([*SHARED_DECK, "demo"])
    assert demo.stdout is not None
    line, _ = wait_for_line(demo.stdout, lambda text: text.startswith("demo server on"))
    database = Path(line.split("database ", 1)[1].strip())
    status, _out, err = interrupt(demo)
    assert status == 130
    one_line(err, "shared-deck demo: interrupted; its bots were stopped and its temporary "
                   "database deleted")  # fmt: skip
    assert not database.parent.exists()


def test_shared_deck_bot(tmp_path: Path) -> None:
    db = tmp_path / "sd.db"
    added = subprocess.run([*SHARED_DECK, "add-player", "alice", "--db", str(db)], cwd=ROOT,
                           env=ENV, capture_output=True, text=True, timeout=TIMEOUT,
                           check=True)  # fmt: skip
    server = start([*SHARED_DECK, "serve", "--port", "0", "--db", str(db)])
    try:
        assert server.stdout is not None
        line, _ = wait_for_line(server.stdout, lambda text: "listening on" in text)
        port = line.rsplit(":", 1)[1].strip()
        bot = start([*SHARED_DECK, "bot", "--name", "alice", "--port", port],
                    env={"SHARED_DECK_SECRET": added.stdout.strip()})  # fmt: skip
        assert bot.stderr is not None
        _, before = wait_for_line(bot.stderr, lambda text: "logged in" in text)
        status, _out, err = interrupt(bot)
        assert status == 130
        one_line(before + err, "shared-deck bot: interrupted")
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=TIMEOUT)


def test_locm_play_stops_its_bots(tag: str) -> None:
    # The bot sleeps at its first answer; the referee runs it in a process group of its
    # own (a terminal's Ctrl-C does not reach it) and must stop it.
    play = start([*LOCM, "play", "-p1", simple_bot("sleep", 0, tag), "-p2", "builtin:random",
                  "--no-time-limit", "--no-sandbox"])  # fmt: skip
    seen = threading.Event()
    watcher = threading.Thread(target=lambda: _until(lambda: _bot_running(tag), seen))
    watcher.start()
    watcher.join(TIMEOUT)
    assert seen.is_set(), "the bot never started"
    status, out, err = interrupt(play)
    assert status == 130 and out == ""
    one_line(err, "locm play: interrupted; the bots were stopped")


def test_locm_play_keeps_the_log_of_what_was_played(tag: str, tmp_path: Path) -> None:
    # The bot hangs at its fourth answer (its third battle turn, the game's fifth): by then
    # four rounds were played, and -l writes them as a log marked interrupted.
    marker, log = tmp_path / "hanging", tmp_path / "game.json"
    play = start([*LOCM, "play", "-p1", f"{simple_bot('hang', 3, tag)} {marker}", "-p2",
                  "builtin:greedy", "--version", "1.5", "--no-time-limit", "--no-sandbox",
                  "-l", str(log)])  # fmt: skip
    seen = threading.Event()
    watcher = threading.Thread(target=lambda: _until(marker.exists, seen))
    watcher.start()
    watcher.join(TIMEOUT)
    assert seen.is_set(), "the bot never reached its fourth answer"
    status, out, err = interrupt(play)
    assert status == 130 and out == ""
    one_line(err, f"locm play: interrupted; the bots were stopped; the log of the game so far "
                  f"is in {log} (locm view {log})")  # fmt: skip
    played = json.loads(log.read_text(encoding="utf-8"))
    assert played["cardarena"]["interrupted"] is True and played["scores"] == {}
    first, second = answers_from_log(played)
    assert (len(first), len(second)) == (3, 3)  # deck building and two battle turns each
    lines = list(replay_lines(played))
    assert lines[-1] == "result: none: the game was interrupted at turn 5 (Ctrl-C or SIGTERM)"
    assert sum(line.startswith("turn ") for line in lines) == 4


def _bot_running(tag: str) -> bool:
    """A process whose arguments include ``tag`` as a word of its own: the bot itself,
    not the referee (or shell) whose command line only quotes the bot's command."""
    for entry in Path("/proc").iterdir():
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if tag.encode() in arguments and any(a.endswith(b"simple_bot.py") for a in arguments):
            return True
    return False


def _until(condition: Callable[[], bool], done: threading.Event) -> None:
    """Poll ``condition`` until it holds (a bot process appearing in /proc)."""
    while not condition():
        threading.Event().wait(0.02)
    done.set()


def test_locm_bot_between_turns() -> None:
    from cardarena.locm import State

    bot = subprocess.Popen([*LOCM, "bot", "greedy", "--seed", "1"], cwd=ROOT, env=ENV,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)  # fmt: skip
    assert bot.stdin is not None and bot.stdout is not None
    bot.stdin.write(State.new("1.5", {"seed": 3}).input_text(0))
    bot.stdin.flush()
    answer, _ = wait_for_line(bot.stdout, lambda text: True)  # its deck: it is playing
    assert answer.startswith("CHOOSE")
    status, _out, err = interrupt(bot)
    assert status == 130
    one_line(err, "locm bot: interrupted")


def test_locm_generate_speaks_of_no_bots() -> None:
    # 20,000 cards are more than a pipe holds: unread, it waits in the middle of them.
    generate = start([*LOCM, "generate", "-n", "20000"])
    assert generate.stdout is not None
    wait_for_line(generate.stdout, lambda text: text.startswith("====="))
    status, _out, err = interrupt(generate)
    assert status == 130
    one_line(err, "locm generate: interrupted")


def test_benchmark_engine() -> None:
    bench = start([sys.executable, "benchmarks/engine.py", "--games", "100000", "--runs", "1"])
    assert bench.stdout is not None
    wait_for_line(bench.stdout, lambda text: re.match(r"\s*version\s+games/s", text) is not None)
    status, _out, err = interrupt(bench)
    assert status == 130
    one_line(err, "benchmarks/engine.py: interrupted")


def test_benchmark_with_worker_processes() -> None:
    # agents.py plays each pair in a process pool: its workers must stay quiet. The
    # first pair's line comes quickly; the search then plays for tens of seconds.
    bench = start([sys.executable, "benchmarks/agents.py", "--agents", "random,pass,search",
                   "--version", "1.5", "--games", "40", "--workers", "2",
                   "--seed", "1"])  # fmt: skip
    assert bench.stdout is not None
    wait_for_line(bench.stdout, lambda text: "random vs pass" in text)
    status, _out, err = interrupt(bench)
    assert status == 130
    one_line(err, "benchmarks/agents.py: interrupted")
