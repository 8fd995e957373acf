"""A person on the ladder's pages in a real Chromium, with the pages' Content-Security-Policy
in force: they log in with their token, submit a small Python bot through the form, see it
on the leaderboard change status as its build ends (the board follows the ladder by itself),
then open a game in the replay viewer. No script may be blocked by the policy on the way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiohttp")

from tests.browser import browser  # noqa: F401 (the module-scoped Chromium)
from tests.ladder.server_fixture import Ladder, serve

SMALL_BOT = """import sys
for line in sys.stdin:
    print("PASS", flush=True)
"""
WAIT_MS = 60_000
"""Generous: the board refreshes every few seconds, the machine may be busy."""
VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) =>
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    yield from serve(tmp_path_factory.mktemp("ladder"))


@pytest.fixture()
def person(ladder: Ladder, browser: Any) -> Iterator[Any]:  # noqa: F811
    """A page with the policy in force, recording what the policy blocks."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    context.add_init_script(VIOLATIONS)
    try:
        yield context.new_page()
    finally:
        context.close()


def test_log_in_submit_follow_the_board_and_open_a_game(
    ladder: Ladder, person: Any, tmp_path: Path
) -> None:
    page = person
    page.goto(ladder.base + "me")
    page.fill("#token", ladder.tokens["alice"])
    page.click("#login button[type=submit]")
    page.wait_for_selector("#submit", timeout=WAIT_MS)
    assert page.text_content("#me-link") == "alice"

    bot = tmp_path / "bot.py"
    bot.write_text(SMALL_BOT)
    page.fill("#bot-name-field", "lambda")
    page.check("#new-bot")
    page.select_option("#language", "python")
    page.set_input_files("#file", str(bot))
    page.click("#send")
    page.wait_for_selector('#bot-name[data-bot="lambda"]', timeout=WAIT_MS)
    assert page.text_content("#bot-status .status") == "building"

    page.goto(ladder.base)
    page.wait_for_selector('tr[data-bot="lambda"][data-status="building"]', timeout=WAIT_MS)
    found = ladder.store.bot("lambda")
    assert found is not None
    (version,) = found.versions
    assert version.filename == "bot.py" and version.owner == "alice"
    ladder.store.record_build(version.id, True, "compiled", "python3 bot.py", None)
    # no reload: the page's script fetches the board again by itself
    page.wait_for_selector('tr[data-bot="lambda"][data-status="validating"]', timeout=WAIT_MS)
    assert page.text_content('tr[data-bot="alpha"] td.rank') == "1"

    page.click('tr[data-bot="alpha"] td.name a')
    page.wait_for_selector("#rating-chart", timeout=WAIT_MS)
    page.click("#games a.viewer-link >> nth=0")
    page.wait_for_selector("#battle, #deckbuilding", state="visible", timeout=WAIT_MS)
    assert int(page.text_content("#frame-count") or 0) > 10  # its script ran: frames drawn
    assert "alpha thinks" in (page.text_content("#game-data") or "")  # alice owns alpha
    page.keyboard.press("End")
    page.wait_for_selector("#end", state="visible", timeout=WAIT_MS)
    assert page.evaluate("window.__violations") == []
