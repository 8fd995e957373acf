"""Text from bots and files never drives the terminal: the real commands, run as a user runs
them, print escapes (``\\x1b``, ``\\x9b``, ``\\u202e``) where a bot, a log, a tournament
database or a Shared Deck database held window-title, clipboard (OSC 52), screen-clearing,
C1 and bidi-override characters."""

from __future__ import annotations

import json
import logging
import os
import pty
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cardarena.terminal import ShownFormatter, shown
from cardarena.tournaments.store import GameRecord, TournamentStore
from tests.locm.bots import BOTS, PYTHON, new_tag
from tests.locm.bots.escape_bot import PAYLOAD

LOCM = [sys.executable, "-m", "cardarena.locm"]
SHARED_DECK = [sys.executable, "-m", "cardarena.shared_deck.cli"]
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
"""What must never reach the terminal (tab and newline are fine)."""
ESCAPED = ("\\x1b]0;owned\\x07", "\\x1b]52;c;b3duZWQ=\\x07", "\\x1b[2J", "\\x9b31m", "\\u202eevil")


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def assert_escaped(text: str) -> None:
    assert not RAW.search(text), RAW.search(text)
    for escape in ESCAPED:
        assert escape in text


def escape_bot(mode: str) -> str:
    return f"{PYTHON} {BOTS / 'escape_bot.py'} {mode} {new_tag()}"


def test_shown_escapes_controls_formats_and_bidi_only() -> None:
    assert shown("PASS; SUMMON 3 -1 é ♥ 漢字\t") == "PASS; SUMMON 3 -1 é ♥ 漢字\t"
    assert shown(PAYLOAD) == "".join(ESCAPED)
    escaped = "a\\x0ab\\x0d\\x00\\x7f\\u2028\\ud800\\U000e0001"
    assert shown("a\nb\r\x00\x7f\u2028\ud800\U000e0001") == escaped
    assert shown("line 1\nline 2\x1b[2J", lines=True) == "line 1\nline 2\\x1b[2J"


def test_locm_replay_escapes_a_crafted_logs_names_and_a_bots_answers(tmp_path: Path) -> None:
    log = tmp_path / "game.json"
    played = run(*LOCM, "play", "-p1", escape_bot("answer"), "-p2", "builtin:random",
                 "--version", "1.2", "-l", str(log), "--no-sandbox")  # fmt: skip
    assert played.returncode == 0, played.stderr
    data = json.loads(log.read_text())
    assert any(PAYLOAD in answer for answer in data["outputs"]["0"] if answer)
    data["cardarena"]["players"] = [f"name {PAYLOAD}", "player 1"]
    log.write_text(json.dumps(data))
    replayed = run(*LOCM, "replay", str(log))
    assert replayed.returncode == 0, replayed.stderr
    assert_escaped(replayed.stdout)
    assert "player 0 = name \\x1b]0;owned" in replayed.stdout
    # A log that cannot be replayed is one escaped error line.
    data["cardarena"]["league"] = PAYLOAD
    log.write_text(json.dumps(data))
    refused = run(*LOCM, "replay", str(log))
    assert refused.returncode == 2
    assert not RAW.search(refused.stderr) and "\\x1b]0;owned" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1


@pytest.mark.parametrize("sandbox", [[], ["--no-sandbox"]], ids=["sandbox", "no-sandbox"])
def test_warnings_and_errors_escape_a_bots_stderr(tmp_path: Path, sandbox: list[str]) -> None:
    played = run(*LOCM, "play", "-p1", escape_bot("exit"), "-p2", "builtin:random", *sandbox)
    assert played.returncode == 0, played.stderr
    assert "exited with status 3 before its first answer: stderr " in played.stderr
    assert_escaped(played.stderr)
    db = str(tmp_path / "t.db")
    tournament = run(*LOCM, "tournament", "--bot", f"bad={escape_bot('exit')}",
                     "--bot", "builtin:random", "--db", db, "--quiet", *sandbox)  # fmt: skip
    assert tournament.returncode == 2
    assert len(tournament.stderr.splitlines()) == 1
    assert_escaped(tournament.stderr)


def test_locm_report_escapes_a_crafted_databases_names(tmp_path: Path) -> None:
    db = tmp_path / "crafted.db"
    name = f"x{PAYLOAD}"
    with TournamentStore(str(db)) as store:
        store.configure({"game": "locm", "version": "1.5", "seed": "1"},
                        {name: f"run {PAYLOAD}", "plain": "run plain"})  # fmt: skip
        store.add(GameRecord(
            key=f"{name}\tplain\t0", first=name, second="plain", round=0, seed=1, winner=0,
            result="win", end_reason="HEALTH", error_seat=None, error_kind=None,
            detail=PAYLOAD, turns=2, first_turns=1, first_mean_ms=1.0, first_max_ms=1.0,
            second_turns=1, second_mean_ms=1.0, second_max_ms=1.0, duration_s=0.1,
            replay=f"locm play {PAYLOAD}",
        ))  # fmt: skip
    report = run(*LOCM, "report", "--db", str(db), "--out", str(tmp_path / "out"))
    assert report.returncode == 0, report.stderr
    assert not RAW.search(report.stdout + report.stderr)
    assert "x\\x1b]0;owned\\x07" in report.stdout


def test_shared_deck_results_escape_a_crafted_databases_player_names(tmp_path: Path) -> None:
    db = tmp_path / "deck.db"
    added = run(*SHARED_DECK, "add-player", "alice", "--db", str(db))
    assert added.returncode == 0, added.stderr
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE players SET name = ?", (f"alice{PAYLOAD}",))
    results = run(*SHARED_DECK, "results", "--db", str(db))
    assert results.returncode == 0, results.stderr
    assert_escaped(results.stdout)
    missing = run(*SHARED_DECK, "results", "--db", str(db), "--tournament", "7")
    assert missing.returncode == 1 and not RAW.search(missing.stderr)


def test_a_log_written_to_a_terminal_holds_no_raw_escape(tmp_path: Path) -> None:
    """``-l /dev/stdout`` on a terminal: the same JSON, with \\u escapes for the bot's C1
    and bidi characters (a pipe gets the log as before, byte for byte)."""
    main, secondary = pty.openpty()
    with subprocess.Popen(
        [*LOCM, "play", "-p1", escape_bot("answer"), "-p2", "builtin:random", "--version",
         "1.2", "-l", "/dev/stdout", "--no-sandbox", "--quiet"],
        stdin=subprocess.DEVNULL, stdout=secondary, stderr=subprocess.DEVNULL,
    ) as process:  # fmt: skip
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the command has exited and closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=120) == 0
    os.close(main)
    text = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")  # the tty adds \r
    assert not RAW.search(text)
    log = json.loads(text.splitlines()[0])
    assert any(PAYLOAD in answer for answer in log["outputs"]["0"] if answer)


def test_shared_deck_log_lines_are_escaped_and_stay_one_record_a_line() -> None:
    """The Shared Deck command line logs through ShownFormatter: a name with a newline and
    escapes cannot forge a record or drive the terminal; tracebacks keep their lines."""
    formatter = ShownFormatter("%(name)s: %(message)s")
    record = logging.LogRecord("server", logging.INFO, __file__, 1, "player %s: %s", None, None)
    record.args = (f"bob\nserver: fake record {PAYLOAD}", "joined")
    try:
        raise ValueError(PAYLOAD)
    except ValueError:
        record.exc_info = sys.exc_info()
    text = formatter.format(record)
    first, *traceback = text.splitlines()
    assert first.startswith("server: player bob\\x0aserver: fake record ")
    assert traceback[0] == "Traceback (most recent call last):"
    assert_escaped(text)
