"""The dashboard runs no stored string: player names that are HTML and script payloads.

The server refuses such names at registration, but a database is a file that may come from
elsewhere: here a real league is played, its players are renamed with SQL to payloads, and
``shared-deck serve --http-port`` serves it. Every page is opened in Chromium, with the
shell's Content-Security-Policy in force and bypassed (escaping alone): no payload may call
alert(), no element may carry an ``on*`` attribute or be a foreign element — and the names
must be shown, as text.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from cardarena.shared_deck.rules import RuleSet
from cardarena.shared_deck.store import Store
from tests.browser import assert_nothing_injected, watched_page

from .conftest import RunningServer
from .test_dashboard import Bots

PAYLOAD = (
    "<img src=x onerror=alert(1)>\"'><svg onload=alert(2)></script><script>alert(3)</script>"
    "<!--javascript:alert(4)\" onmouseover=\"alert(5)' onfocus='alert(6)' autofocus x='"
)
NAMES = {"alice": f"A {PAYLOAD}", "bob": f"B {PAYLOAD}"}
WAIT_MS = 30_000


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """(address of the dashboard, a stored match) of a played league with payload names."""
    db = tmp_path_factory.mktemp("hostile") / "league.db"
    server = RunningServer(db, list(NAMES), turn_seconds=0.1, seed=5, max_tournaments=1,
                           rules=RuleSet(turns_per_match=6), start_after_logins=2)  # fmt: skip
    bots = Bots(server, {"alice": "greedy", "bob": "random"})
    try:
        server.wait_saved(1, timeout=60)
    finally:
        bots.stop()
        server.stop()
    with contextlib.closing(sqlite3.connect(db)) as connection, connection:
        for name, payload in NAMES.items():
            connection.execute("UPDATE players SET name = ? WHERE name = ?", (payload, name))
    with contextlib.closing(Store(db, read_only=True)) as store:
        match = store.tournament(1).matches[0].match_id
    process = subprocess.Popen(
        [sys.executable, "-m", "cardarena.shared_deck.cli", "serve", "--db", str(db), "--port",
         "0", "--http-port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        process.stdout.readline()  # the game server's address
        found = re.search(r"(http://\S+/)", process.stdout.readline())
        assert found, process.stderr.read() if process.stderr else ""
        yield found[1], match
    finally:
        process.terminate()
        process.communicate(timeout=30)


@pytest.fixture(params=["policy in force", "policy bypassed"])
def page(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    yield from watched_page(browser, bypass_csp=request.param == "policy bypassed")


def test_dashboard_pages_run_no_stored_name(dashboard: tuple[str, int], page: Any) -> None:
    address, match = dashboard
    quoted = urllib.parse.quote(NAMES["alice"], safe="")
    pages = {
        "": None, "leaderboard": "table", "tournaments": "table", "tournament/1": "table",
        f"match/{match}": "section.side",
        f"player/{quoted}": None,  # (names the server would refuse have no page: a 404)
    }  # fmt: skip
    for path, ready in pages.items():
        page.goto(address + path)
        if ready is not None:
            page.wait_for_selector(ready, timeout=WAIT_MS)
            text = page.locator("main").inner_text()
            assert any(name in text for name in NAMES.values()), path  # shown as text
        assert_nothing_injected(page)
    response = page.goto(address + "no/" + urllib.parse.quote(PAYLOAD, safe=""))
    assert response is not None and response.status == 404
    assert PAYLOAD in page.locator("#error-message").inner_text()
    assert_nothing_injected(page)
