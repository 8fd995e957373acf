"""A real ladder server (``locm ladder serve``) plays rated pairs; ``kill -9`` mid-run and a
restart lose no finished game, count none twice and play the unfinished ones again; a
submission sent to the restarted server is built, validated and plays (real processes, real
SQLite, real HTTP)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cardarena.ladder.languages import LANGUAGES
from cardarena.ladder.store import LadderStore
from cardarena.locm.cli.ladder import multipart
from cardarena.locm.ladder.service import Builder, builds_folder
from cardarena.locm.referee import sandbox

BOT_SOURCE = Path(__file__).resolve().parents[1] / "locm" / "bots" / "simple_bot.py"

BOTS = ("builtin:greedy", "builtin:random", "builtin:pass")
"""In-process agents: the games are the real referee's, and cheap."""


def wait_for(
    condition: Callable[[], Any],
    what: str,
    timeout: float = 60.0,
    explain: Callable[[], str] = lambda: "",
) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what} {explain()}")
        time.sleep(0.05)
    return value


def rows(db: Path, query: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as connection:
        return connection.execute(query).fetchall()


def done_rated(db: Path) -> int:
    return int(rows(db, "SELECT COUNT(*) FROM games WHERE state = 'done' AND rated = 1")[0][0])


@pytest.fixture
def ladder(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A ladder of three active in-process bots of three owners, and a fourth owner's token."""
    db = tmp_path / "ladder.db"
    with LadderStore(str(db)) as store:
        token = store.add_user("newcomer")
        store.configure(game="locm", version="1.5")
        for index, command in enumerate(BOTS):
            user = store.user_for_token(store.add_user(f"owner{index}"))
            assert user is not None
            name = command.split(":")[1]
            version = store.submit(user, name, "python", "bot.py", b"#", new_bot=True)
            store.record_build(version, True, "built", command, None)
            store.set_status(version, "active")
    yield db, token


def start(db: Path) -> tuple[subprocess.Popen[str], str]:
    """The server and its address (its first line on stdout)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "cardarena.locm", "ladder", "serve", "--db", str(db),
         "--version", "1.5", "--port", "0", "--workers", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stdout is not None
    address = server.stdout.readline().strip()
    if not address.startswith("http://127.0.0.1:"):
        server.kill()
        raise AssertionError(f"no address: {address!r} {server.communicate()[1]}")
    return server, address


def submit(address: str, token: str) -> int:
    """Send a new bot (a Python source file) through the JSON API; its version id."""
    fields = {"name": "simple", "language": "python", "new_bot": "1"}
    body, kind = multipart(fields, "file", "bot.py", BOT_SOURCE.read_bytes())
    request = urllib.request.Request(
        f"{address}api/submissions", data=body, method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": kind},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as answer:
        return int(json.loads(answer.read())["submission"])


def done_games(db: Path) -> dict[int, str]:
    """Every finished game: its winner and when it finished (what must never change)."""
    query = "SELECT id, winner || '/' || finished_at FROM games WHERE state = 'done'"
    return dict(rows(db, query))


def test_kill_9_and_restart_lose_nothing_and_count_nothing_twice(
    ladder: tuple[Path, str],
) -> None:
    db, token = ladder
    server, address = start(db)
    try:
        wait_for(lambda: done_rated(db) >= 6 or server.poll() is not None, "6 rated games")
        assert server.poll() is None, server.communicate()
        with urllib.request.urlopen(f"{address}api/leaderboard", timeout=30) as answer:
            board = json.loads(answer.read())["bots"]
        assert sorted(bot["name"] for bot in board) == ["greedy", "pass", "random"]
        wait_for(lambda: rows(db, "SELECT 1 FROM games WHERE state = 'leased'"), "a lease")
    finally:
        server.kill()  # kill -9: no goodbye
        server.wait(30)
    done = done_games(db)
    leased = {r[0] for r in rows(db, "SELECT id FROM games WHERE state = 'leased'")}
    assert len(done) >= 6 and leased  # the games in play when it died
    check_counts(db)

    again, address = start(db)
    try:
        building = sandbox.support().ok  # a ladder builds nothing outside the sandbox
        version = submit(address, token) if building else None
        wanted = len(done) + 4

        def caught_up() -> bool:
            now = done_games(db)
            if len(now) < wanted or not leased <= now.keys():
                return False
            if version is None:
                return True
            return bool(rows(db, f"SELECT 1 FROM versions WHERE id = {version} AND "
                                 "rated_games > 0 AND status = 'active'"))  # fmt: skip

        # Generous: alone it takes seconds; twice in loaded full runs 60 s were not enough
        # (the explanation says where it stood: a build, validation, rated games).
        def where() -> str:
            versions = rows(db, "SELECT id, status, reason, rated_games FROM versions")
            games = rows(db, "SELECT kind, state, result, end_reason, error_kind, detail "
                             f"FROM games WHERE id > {max(done)}")  # fmt: skip
            return f"{len(done_games(db))} of {wanted} games done; versions {versions}; {games}"

        wait_for(lambda: caught_up() or again.poll() is not None, "the games played again",
                 timeout=120, explain=where)  # fmt: skip
        assert again.poll() is None, again.communicate()
        again.send_signal(signal.SIGTERM)
        _out, err = again.communicate(timeout=60)
    finally:
        if again.poll() is None:
            again.kill()
            again.wait(30)
    assert again.returncode == 0, err
    assert "Traceback" not in err
    assert f"{len(leased)} game(s) the last run left unfinished are queued again" in err
    now = done_games(db)
    assert {game: now[game] for game in done} == done  # no finished game lost or changed
    assert leased <= now.keys()
    check_counts(db)
    if version is not None:  # built into DB.builds, validated by 4 games, then rated
        validation = rows(db, "SELECT COUNT(*) FROM games WHERE kind = 'validation'")
        assert validation == [(4,)]
        assert os.listdir(f"{db}.builds") == [str(version)]
        # A backup restored without the builds: they are made again, the version plays on.
        shutil.rmtree(f"{db}.builds")
        with LadderStore(str(db)) as store:
            assert Builder(store, builds_folder(str(db)), LANGUAGES).rebuild_missing() == 1
            rebuilt = store.version(version)
            assert rebuilt is not None and rebuilt.status == "active"
            assert rebuilt.command and os.path.isdir(f"{db}.builds/{version}/bot")
            assert store.missing_builds() == []


def check_counts(db: Path) -> None:
    """Every rated game moved the ratings of both its versions once, and only once."""
    rated = {
        version: count
        for version, count in rows(
            db,
            "SELECT v, COUNT(*) FROM (SELECT first AS v FROM games WHERE rated = 1 "
            "UNION ALL SELECT second FROM games WHERE rated = 1) GROUP BY v",
        )
    }
    counters = dict(rows(db, "SELECT id, rated_games FROM versions"))
    assert {v: n for v, n in counters.items() if n} == rated
    history = dict(rows(db, "SELECT version, COUNT(*) FROM ratings GROUP BY version"))
    assert history == rated
    wins = rows(db, "SELECT SUM(wins), SUM(losses), SUM(draws) FROM versions")[0]
    assert wins[0] == wins[1] and sum(wins) == sum(rated.values())
    assert rows(db, "SELECT SUM(wins), SUM(losses), SUM(draws) FROM results") == [wins]
