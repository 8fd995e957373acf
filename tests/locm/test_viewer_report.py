"""``locm report --html`` and ``locm serve`` in a real browser, on real tournaments.

The tournaments are small (built-in agents, no sandbox) so that each test takes
seconds; every wait is on a condition (a line printed, a number shown), never a
fixed sleep.
"""

from __future__ import annotations

import json
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cardarena.tournaments.store import TournamentStore

LOCM = [sys.executable, "-m", "cardarena.locm"]
WAIT_MS = 60_000


def locm(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LOCM, *args], capture_output=True, text=True, timeout=timeout,
                          check=False)  # fmt: skip


def tournament(db: Path, games: int) -> None:
    result = locm("tournament", "--bot", "builtin:random", "--bot", "builtin:greedy",
                  "--games", str(games), "--db", str(db), "--quiet", "--no-sandbox",
                  "--workers", "1", "--time-scale", "4")  # fmt: skip
    assert result.returncode == 0, result.stderr


def winners(db: Path) -> dict[int, str | None]:
    """Game number -> the winner's bot name (None: no winner), read from the database."""
    with TournamentStore(str(db), lock=False, create=False, read_only=True) as store:
        numbers = store.game_numbers()
        return {
            numbers[r.key]: None if r.winner is None else (r.first, r.second)[r.winner]
            for r in store.records()
        }


def open_viewer_from_link(page: Any, number: int, winner: str | None) -> None:
    """Follow the report's link to game ``number``; its viewer shows the stored winner."""
    page.locator(f'#games tr[data-game="{number}"] td:first-child a').click()
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
    page.keyboard.press("End")
    page.wait_for_selector("#end:not([hidden])", timeout=WAIT_MS)
    text = page.locator("#end").inner_text()
    assert (f"{winner} (player" in text) if winner else ("No winner" in text)
    assert page.locator("#back").is_visible()


def test_html_report_links_every_game_to_its_viewer(page: Any, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    tournament(db, 1)
    result = locm("report", "--db", str(db), "--html", str(tmp_path / "html"))
    assert result.returncode == 0, result.stderr
    index = tmp_path / "html" / "index.html"
    page.goto(index.as_uri())
    stored = winners(db)
    assert page.locator("#game-count").inner_text() == str(len(stored)) == "2"
    assert page.locator("#games tbody tr").count() == 2
    assert page.locator("#bots tbody tr").count() == 2
    assert page.locator("#matrix tbody tr").count() == 2
    for picture in ("matrix", "ratings"):  # the PNG pictures load
        assert page.evaluate(f"document.querySelector('img[alt={picture}]').naturalWidth") > 0
    for number, winner in stored.items():
        page.goto(index.as_uri())
        open_viewer_from_link(page, number, winner)
        page.locator("#back").click()
        page.wait_for_selector("#games", timeout=WAIT_MS)
    # Why a game ended is one click from the viewer at the frame it ended on.
    number = next(iter(stored))
    cause = page.locator(f'#games tr[data-game="{number}"] a.cause')
    assert cause.inner_text().startswith(("random ", "greedy ", "draw"))
    cause.click()
    page.wait_for_selector("body[data-ready='1'][data-kind='end']", timeout=WAIT_MS)
    assert page.locator("#end").is_visible()


class Server:
    """A running ``locm serve`` process and its address."""

    def __init__(self, db: Path) -> None:
        self.process = subprocess.Popen(
            [*LOCM, "serve", "--db", str(db), "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.url = self._wait_for_address()

    def _wait_for_address(self, timeout_s: float = 60) -> str:
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                if selector.select(deadline - time.monotonic()):
                    line = self.process.stdout.readline()
                    assert line, f"locm serve exited: {self.process.stderr.read()}"  # type: ignore[union-attr]
                    return line.split(" at ", 1)[1].split()[0]
        raise AssertionError("locm serve did not say where it listens")

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, Server]]:
    db = tmp_path / "live.db"
    tournament(db, 1)
    server = Server(db)
    try:
        yield db, server
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def test_serve_follows_a_running_tournament(page: Any, served: tuple[Path, Server]) -> None:
    db, server = served
    page.goto(server.url)
    assert page.locator("#game-count").inner_text() == "2"
    # Resume the tournament with more games while the page is open: it updates by itself.
    more = subprocess.Popen(
        [*LOCM, "tournament", "--bot", "builtin:random", "--bot", "builtin:greedy", "--games",
         "3", "--db", str(db), "--quiet", "--no-sandbox", "--workers", "1", "--time-scale", "4"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        page.wait_for_function(
            "document.getElementById('game-count') && "
            "document.getElementById('game-count').textContent === '6'", timeout=WAIT_MS
        )  # fmt: skip
    finally:
        assert more.wait(timeout=180) == 0, more.stderr.read()  # type: ignore[union-attr]
    assert page.locator("#games tbody tr").count() == 6
    assert page.locator("#live-status").inner_text().startswith("live")
    newest, winner = max(winners(db).items())
    open_viewer_from_link(page, newest, winner)
    assert server.stop() == 0


def test_serve_is_read_only_and_reports_missing_games(served: tuple[Path, Server]) -> None:
    import urllib.error
    import urllib.request

    db, server = served
    before = db.stat().st_mtime_ns, sorted(p.name for p in db.parent.iterdir())
    with urllib.request.urlopen(server.url + "status.json", timeout=60) as answer:
        assert json.loads(answer.read()) == {"stored": 2, "version": "2-2"}
    with urllib.request.urlopen(server.url + "games/1.html", timeout=60) as answer:
        assert b'id="game-data"' in answer.read()
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(server.url + "games/99.html", timeout=60)
    assert missing.value.code == 404
    assert server.stop() == 0
    assert (db.stat().st_mtime_ns, sorted(p.name for p in db.parent.iterdir())) == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["serve", "--db", "{d}/missing.db"], "no tournament database"),
        (["serve", "--db", "{d}/t.db", "--port", "70000"], "not a port"),
        (["report", "--db", "{d}/missing.db", "--html", "{d}/html"], "no tournament database"),
        (["view", "--db", "{d}/t.db", "--game", "99"], "has no game 99"),
        (["view", "--db", "{d}/t.db", "--game", "x"], "not an integer"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    db = tmp_path / "t.db"
    with TournamentStore(str(db)) as store:
        store.configure({"game": "locm"}, {})
    result = locm(*[arg.replace("{d}", str(tmp_path)) for arg in args])
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_serve_on_a_busy_port_is_one_line_and_exit_2(served: tuple[Path, Server]) -> None:
    db, server = served
    port = server.url.rsplit(":", 1)[1].strip("/")
    result = locm("serve", "--db", str(db), "--port", port)
    assert result.returncode == 2
    assert "cannot listen" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_html_report_lists_failed_games_without_a_link(tmp_path: Path) -> None:
    """A game the referee failed has no log: listed, not linked; `locm view` says why."""
    import dataclasses

    from cardarena.tournaments.store import GameRecord, compress_log
    from tests.locm.viewer_expect import played_log

    # (in a process of its own: Playwright's event loop may be running in this one)
    log = json.loads(played_log(tmp_path, "1.2", seed=3).read_text())
    played = GameRecord(
        key="a\tb\t0", first="a", second="b", round=0, seed=3, winner=0, result="win",
        end_reason="HEALTH", error_seat=None, error_kind=None, detail=None, turns=20,
        first_turns=10, first_mean_ms=1.0, first_max_ms=2.0, second_turns=10,
        second_mean_ms=1.0, second_max_ms=2.0, duration_s=0.1, replay="locm play ...",
        log=compress_log(log),
    )  # fmt: skip
    failed = dataclasses.replace(played, key="b\ta\t0", first="b", second="a", winner=None,
                                 result="error", end_reason="ERROR", error_kind="referee",
                                 log=None)  # fmt: skip
    db = tmp_path / "t.db"
    with TournamentStore(str(db)) as store:
        store.configure({"game": "locm", "version": "1.2"}, {"a": "builtin:greedy",
                                                             "b": "builtin:random"})  # fmt: skip
        store.add(played)
        store.add(failed)
    result = locm("report", "--db", str(db), "--html", str(tmp_path / "html"))
    assert result.returncode == 0, result.stderr
    index = (tmp_path / "html" / "index.html").read_text()
    assert '<a href="games/1.html">game 1</a>' in index
    assert "games/2.html" not in index and "<td>game 2</td>" in index
    assert sorted(p.name for p in (tmp_path / "html" / "games").iterdir()) == ["1.html"]
    refused = locm("view", "--db", str(db), "--game", "2")
    assert refused.returncode == 2 and "has no stored log" in refused.stderr
