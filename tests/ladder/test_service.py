"""A real ladder server plays rated pairs; ``kill -9`` mid-run and a restart lose no finished
game, count none twice and play the unfinished ones again (real processes, real SQLite)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cardarena.ladder.store import LadderStore

BOTS = ("builtin:greedy", "builtin:random", "builtin:pass")
"""In-process agents: the games are the real referee's, and cheap."""


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return value


def rows(db: Path, query: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as connection:
        return connection.execute(query).fetchall()


def done_rated(db: Path) -> int:
    return int(rows(db, "SELECT COUNT(*) FROM games WHERE state = 'done' AND rated = 1")[0][0])


@pytest.fixture
def ladder(tmp_path: Path) -> Iterator[Path]:
    """A ladder of three active in-process bots of three owners."""
    db = tmp_path / "ladder.db"
    with LadderStore(str(db)) as store:
        store.configure(game="locm", version="1.5")
        for index, command in enumerate(BOTS):
            user = store.user_for_token(store.add_user(f"owner{index}"))
            assert user is not None
            name = command.split(":")[1]
            version = store.submit(user, name, "python", "bot.py", b"#", new_bot=True)
            store.record_build(version, True, "built", command, None)
            store.set_status(version, "active")
    yield db


def start(db: Path) -> subprocess.Popen[str]:
    code = (
        "import sys; from cardarena.locm.ladder.service import serve; "
        f"sys.exit(serve({str(db)!r}, '1.5', workers=2, web=False))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_kill_9_and_restart_lose_nothing_and_count_nothing_twice(ladder: Path) -> None:
    server = start(ladder)
    try:
        wait_for(lambda: done_rated(ladder) >= 6 or server.poll() is not None, "6 rated games")
        assert server.poll() is None, server.communicate()
        wait_for(lambda: rows(ladder, "SELECT 1 FROM games WHERE state = 'leased'"), "a lease")
    finally:
        server.kill()  # kill -9: no goodbye
        server.wait(30)
    done = dict(
        rows(ladder, "SELECT id, winner || '/' || finished_at FROM games WHERE state = 'done'")
    )
    leased = {r[0] for r in rows(ladder, "SELECT id FROM games WHERE state = 'leased'")}
    assert len(done) >= 6 and leased  # the games in play when it died
    check_counts(ladder)

    again = start(ladder)
    try:
        wanted = len(done) + 4
        wait_for(
            lambda: (
                (
                    len(rows(ladder, "SELECT id FROM games WHERE state = 'done'")) >= wanted
                    and not leased
                    - {r[0] for r in rows(ladder, "SELECT id FROM games WHERE state = 'done'")}
                )
                or again.poll() is not None
            ),
            "the unfinished games played again, and more",
        )
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
    now = dict(
        rows(ladder, "SELECT id, winner || '/' || finished_at FROM games WHERE state = 'done'")
    )
    assert {game: now[game] for game in done} == done  # no finished game lost or changed
    assert leased <= now.keys()
    check_counts(ladder)
    assert not os.path.exists(f"{ladder}.builds") or not os.listdir(f"{ladder}.builds")


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
