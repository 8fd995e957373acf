"""A participant's whole walk through a real ladder (``locm ladder serve``: builds in the
sandbox, games on the referee) in a real Chromium, the pages' Content-Security-Policy in
force: log in with a token, submit a small Python bot through the form, watch the leaderboard
follow it (built, validated, active: the board updates by itself), open one of its games in
the replay viewer, then play that bot from its page for a few moves. One server for it all;
stopped with Ctrl-C while the game against the person is still being played."""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiohttp")

from cardarena.ladder.store import LadderStore
from cardarena.locm.referee import sandbox
from tests.browser import browser  # noqa: F401 (the module-scoped Chromium)

ROOT = Path(__file__).resolve().parents[2]
BOT_SOURCE = ROOT / "tests" / "locm" / "bots" / "simple_bot.py"
WAIT_MS = 90_000
"""Generous: a build and games run on a busy machine; a correct ladder is much faster."""
VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) =>
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""
NEXT_DECISION = 'body[data-decision]:not([data-decision="{old}"]), #end[data-winner]:not([hidden])'


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Any, Path]]:
    """``locm ladder serve`` over a ladder of a built-in bot (owned by olga); its address,
    the token of alice, who has no bot yet, the server's process and its database."""
    db = tmp_path_factory.mktemp("walk") / "ladder.db"
    with LadderStore(str(db)) as store:
        store.configure(game="locm", version="1.5")
        token = store.add_user("alice")
        olga = store.user_for_token(store.add_user("olga"))
        assert olga is not None
        version = store.submit(olga, "greedy", "python", "bot.py", b"#", new_bot=True)
        store.record_build(version, True, "built", "builtin:greedy", None)
        store.set_status(version, "active")
    server = subprocess.Popen(
        [sys.executable, "-m", "cardarena.locm", "ladder", "serve", "--db", str(db),
         "--version", "1.5", "--port", "0", "--workers", "1", "--human-games", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    assert server.stdout is not None
    address = server.stdout.readline().strip()
    try:
        if not address.startswith("http://127.0.0.1:"):
            server.kill()
            raise AssertionError(f"no address: {address!r} {server.communicate()[1]}")
        yield address, token, server, db
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()


def status_of(address: str, path: str) -> int:
    try:
        with urllib.request.urlopen(address + path, timeout=WAIT_MS / 1000) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_a_participant_submits_follows_replays_and_plays_their_bot(
    ladder: tuple[str, str, Any, Path],
    browser: Any,  # noqa: F811
) -> None:
    address, token, server, db = ladder
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    context.add_init_script(VIOLATIONS)
    page = context.new_page()

    # log in with the token, submit through the form
    page.goto(address + "me")
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    page.wait_for_selector("#submit", timeout=WAIT_MS)
    page.fill("#bot-name-field", "simple")
    page.check("#new-bot")
    page.select_option("#language", "python")
    page.set_input_files("#file", str(BOT_SOURCE))
    page.click("#send")
    page.wait_for_selector('#bot-name[data-bot="simple"]', timeout=WAIT_MS)

    # the board follows it by itself: built, validated, active (failed without a sandbox)
    page.goto(address)
    page.wait_for_selector('tr[data-bot="simple"]', timeout=WAIT_MS)
    expected = "active" if sandbox.support().ok else "failed"
    page.wait_for_selector(f'tr[data-bot="simple"][data-status="{expected}"]', timeout=WAIT_MS)
    opponent = "simple" if expected == "active" else "greedy"

    # one of its games in the replay viewer
    page.click(f'tr[data-bot="{opponent}"] td.name a')
    page.wait_for_selector(f'#bot-name[data-bot="{opponent}"]', timeout=WAIT_MS)
    if opponent == "simple":
        assert page.is_visible("#build-log-1")  # alice's own build log
    page.wait_for_selector("#games a.viewer-link", timeout=WAIT_MS)
    bot_page = page.url
    page.click("#games a.viewer-link >> nth=0")
    page.wait_for_selector("#battle, #deckbuilding", state="visible", timeout=WAIT_MS)
    assert int(page.text_content("#frame-count") or 0) > 10  # its script drew the frames
    page.keyboard.press("End")
    page.wait_for_selector("#end", state="visible", timeout=WAIT_MS)

    # play it from its page: the human seat of locm play, under the ladder's address
    page.goto(bot_page)
    page.select_option("#play-seat", "first")
    page.click("#play")
    page.wait_for_url(f"{address}play/**", timeout=WAIT_MS)
    game_path = page.url.removeprefix(address)
    assert status_of(address, game_path) == 403  # not without alice's session
    page.wait_for_selector("[data-auto]:not([hidden])", timeout=WAIT_MS)  # 1.5: the pool
    old = page.get_attribute("body", "data-decision")
    page.click("[data-auto]")  # let an agent build the deck
    page.wait_for_selector(NEXT_DECISION.format(old=old), timeout=WAIT_MS)
    page.wait_for_selector('[data-action="PASS"]', timeout=WAIT_MS)  # our first turn
    assert page.get_attribute("body", "data-kind") == "battle"
    events = page.locator("#events li").count()
    for _turn in range(2):
        old = page.get_attribute("body", "data-decision")
        moves = page.locator("#moves [data-action]")
        move = moves.first if moves.count() else page.locator('[data-action="PASS"]')
        move.click()
        page.wait_for_selector(NEXT_DECISION.format(old=old), timeout=WAIT_MS)
        old = page.get_attribute("body", "data-decision")
        page.locator('[data-action="PASS"]').click()  # the bot plays its turn, then ours
        page.wait_for_selector(NEXT_DECISION.format(old=old), timeout=WAIT_MS)
        page.wait_for_selector('[data-action="PASS"], #end[data-winner]:not([hidden])',
                               timeout=WAIT_MS)  # fmt: skip
    assert page.locator("#events li").count() > events  # the referee's lines: both turns
    assert page.text_content("#matchup") == f"alice vs {opponent}"
    assert page.get_attribute("#back", "href") == f"/bots/{opponent}"  # back to the ladder
    assert page.evaluate("window.__violations") == []
    context.close()

    # Ctrl-C with the game still on: the bot is stopped, the server ends cleanly
    if opponent == "simple":
        assert bots_running(f"{db}.builds"), "the bot of the game is not seen running"
    server.send_signal(signal.SIGINT)
    _out, err = server.communicate(timeout=WAIT_MS / 1000)
    assert server.returncode == 0, err
    assert "Traceback" not in err
    assert not bots_running(f"{db}.builds"), "a bot of the ladder outlived its server"


def bots_running(folder: str) -> list[str]:
    """The command lines of the processes that run a program of ``folder``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended meanwhile, or not a process
            continue
        if folder in line:
            found.append(line)
    return found
