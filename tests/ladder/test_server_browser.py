"""The live leaderboard of a real ladder (``locm ladder serve``) in a real Chromium, with the
pages' Content-Security-Policy in force: an organiser's change reaches the board as text, never
as markup. (A participant's whole way through the pages is test_walkthrough_browser.py.)"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiohttp")

from cardarena.ladder.store import LadderStore
from tests.browser import browser  # noqa: F401 (the module-scoped Chromium)

ROOT = Path(__file__).resolve().parents[2]
WAIT_MS = 90_000
"""Generous: a build and games run on a busy machine; a correct ladder is much faster."""
VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) =>
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """``locm ladder serve`` over a ladder of two built-in bots of two owners (they play
    rated games at once; olga is an organiser): its address, the token of a third person,
    who has no bot yet, and olga's."""
    db = tmp_path_factory.mktemp("ladder") / "ladder.db"
    with LadderStore(str(db)) as store:
        token = store.add_user("alice")
        store.configure(game="locm", version="1.5")
        tokens = {name: store.add_user(name, name == "olga") for name in ("olga", "oscar")}
        for owner, command in (("olga", "builtin:greedy"), ("oscar", "builtin:random")):
            user = store.user_for_token(tokens[owner])
            assert user is not None
            name = command.split(":")[1]
            version = store.submit(user, name, "python", "bot.py", b"#", new_bot=True)
            store.record_build(version, True, "built", command, None)
            store.set_status(version, "active")
    server = subprocess.Popen(
        [sys.executable, "-m", "cardarena.locm", "ladder", "serve", "--db", str(db),
         "--version", "1.5", "--port", "0", "--workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    assert server.stdout is not None
    address = server.stdout.readline().strip()
    try:
        if not address.startswith("http://127.0.0.1:"):
            server.kill()
            raise AssertionError(f"no address: {address!r} {server.communicate()[1]}")
        yield address, token, tokens["olga"]
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.communicate()


@pytest.fixture()
def person(browser: Any) -> Iterator[Any]:  # noqa: F811
    """A page with the policy in force, recording what the policy blocks."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    context.add_init_script(VIOLATIONS)
    try:
        yield context.new_page()
    finally:
        context.close()


def test_the_board_shows_an_organisers_change_as_text(
    ladder: tuple[str, str, str], person: Any
) -> None:
    address, _token, organiser = ladder
    page = person
    page.goto(address)
    page.wait_for_selector('tr[data-bot="random"][data-status="active"]', timeout=WAIT_MS)
    reason = '<img src=x onerror="document.title=1">crashes'
    request = urllib.request.Request(
        f"{address}api/bots/random/disable", method="POST",
        data=json.dumps({"reason": reason}).encode(),
        headers={"Authorization": f"Bearer {organiser}", "Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=WAIT_MS / 1000) as answer:
        assert json.loads(answer.read())["status"] == "disabled"
    # the page's script redraws the row: the reason is text, no element
    page.wait_for_selector('tr[data-bot="random"][data-status="disabled"]', timeout=WAIT_MS)
    assert page.text_content('tr[data-bot="random"] .reason') == reason
    assert page.query_selector("#board img") is None and page.title() != "1"
    page.reload()
    assert page.text_content('tr[data-bot="random"] .reason') == reason  # and server-side
    assert page.query_selector("#board img") is None
    assert page.evaluate("window.__violations") == []
