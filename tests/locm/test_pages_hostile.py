"""No stored string runs as script: every page, from a database and a log full of payloads,
opened in a real Chromium.

A bot whose stderr and answers are HTML/script payloads (tests/locm/bots/hostile_bot.py)
plays a real game; its log then gets payload player names and a payload game parameter, and
a tournament database holds it with payloads in every text field (settings keys and values,
bot names and commands, result, end reason, error kind, replay command). The pages of
``locm report --html``, ``locm view`` and ``locm serve`` are opened twice: as shipped (their
Content-Security-Policy in force) and with the policy bypassed, so that escaping alone is
tested too. In both, no payload may call alert(), no element may carry an ``on*`` attribute
or be a ``<script>``, ``<img>``, ``<svg>`` or ``<iframe>`` that is not the page's own, no
link may lead to ``javascript:`` — and the payload text must be shown, as text.
"""

from __future__ import annotations

import dataclasses
import json
import runpy
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cardarena.tournaments.store import GameRecord, TournamentStore, compress_log
from tests.browser import assert_nothing_injected, watched_page
from tests.locm.test_viewer_report import Server, locm

BOTS = Path(__file__).parent / "bots"
PAYLOAD: str = runpy.run_path(str(BOTS / "hostile_bot.py"))["PAYLOAD"]
WAIT_MS = 60_000

SCRIPTS = "[...document.scripts].map((s) => s.id || (s.src ? 'src' : 'inline'))"

STEP_THROUGH_EVERY_FRAME = """async ([frames, payload, waitMs]) => {
  // Inside the page: a round trip from the test per frame cost 35 ms of three processes' CPU.
  const seen = {stderr: false, line: false};
  for (let index = 0; index <= frames; index++) {
    location.hash = '#frame=' + index;
    const deadline = performance.now() + waitMs;
    while (document.body.dataset.frame !== String(index)) {
      if (performance.now() > deadline) throw new Error('frame ' + index + ' never shown');
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    seen.stderr ||= document.getElementById('stderr-0').textContent.includes(payload);
    seen.line ||= document.getElementById('line').textContent.includes(payload);
  }
  return seen;
}"""
"""Show every frame through the URL fragment, as a reader stepping through the game would,
and say whether the payload was shown (as text) in the bot's stderr and in its output line."""


def hostile_log(tmp_path: Path) -> dict[str, Any]:
    """A real game of the hostile bot, with payload names and a payload parameter added.

    At ten times the official limits: on a busy machine the bot, a Python process, once
    timed out in the draft, and its payload answers of the battle were never written."""
    path = tmp_path / "played.json"
    result = locm("play", "-p1", f"{sys.executable} {BOTS / 'hostile_bot.py'}", "-p2",
                  "builtin:greedy", "--version", "1.2", "-d", "seed=7", "-l", str(path),
                  "--no-sandbox", "--time-scale", "10")  # fmt: skip
    assert result.returncode == 0, result.stderr
    log = json.loads(path.read_text())
    assert log["cardarena"]["errorPlayer"] is None, "a bot timed out or crashed: no battle"
    log["cardarena"]["players"] = [f"P0 {PAYLOAD}", f"P1 {PAYLOAD}"]
    log["gameParameters"].append(f"x{PAYLOAD}=1")
    return log  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The log file and the tournament database, both full of payloads."""
    tmp_path = tmp_path_factory.mktemp("hostile")
    log = hostile_log(tmp_path)
    log_path = tmp_path / "hostile.json"
    log_path.write_text(json.dumps(log))
    first, second = f"bot0 {PAYLOAD}", f"bot1 {PAYLOAD}"
    drawn = GameRecord(
        key=f"k0 {PAYLOAD}", first=first, second=second, round=0, seed=7, winner=None,
        result=f"r {PAYLOAD}", end_reason=f"e {PAYLOAD}", error_seat=None, error_kind=None,
        detail=f"d {PAYLOAD}", turns=20, first_turns=10, first_mean_ms=1.0, first_max_ms=2.0,
        second_turns=10, second_mean_ms=1.0, second_max_ms=2.0, duration_s=0.1,
        replay=f"locm play {PAYLOAD}", log=compress_log(log), finished_at=f"f {PAYLOAD}",
        cause=f"c {PAYLOAD}",
    )  # fmt: skip
    won = dataclasses.replace(drawn, key=f"k1 {PAYLOAD}", first=second, second=first, winner=0,
                              result="win", error_seat=1, error_kind=f"k {PAYLOAD}",
                              cause=None)  # its cause: derived from the columns  # fmt: skip
    db = tmp_path / "hostile.db"
    with TournamentStore(str(db)) as store:
        store.configure({f"key {PAYLOAD}": f"value {PAYLOAD}", "version": f"1.2 {PAYLOAD}"},
                        {first: f"cmd {PAYLOAD}", second: f"cmd {PAYLOAD}"})  # fmt: skip
        store.add(drawn)
        store.add(won)
    return {"log": log_path, "db": db, "dir": tmp_path}


@pytest.fixture(params=["policy in force", "policy bypassed"])
def hostile_page(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    """A watched page, with and without the pages' Content-Security-Policy."""
    yield from watched_page(browser, bypass_csp=request.param == "policy bypassed")


def assert_inert(page: Any, scripts: list[str]) -> None:
    """Nothing ran, nothing was injected; the page's only scripts are ``scripts``."""
    assert_nothing_injected(page)
    assert page.evaluate(SCRIPTS) == scripts


def check_viewer(page: Any, url: str) -> None:
    """The viewer page, stepped through every frame: inert, and the payloads shown as text."""
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
    assert_inert(page, ["game-data", "inline"])
    assert PAYLOAD in page.title()
    assert PAYLOAD in page.locator("#matchup").inner_text()
    frames = int(page.locator("#frame-count").inner_text())
    seen = page.evaluate(STEP_THROUGH_EVERY_FRAME, [frames, PAYLOAD, WAIT_MS])
    assert seen == {"stderr": True, "line": True}
    assert_inert(page, ["game-data", "inline"])


def check_report(page: Any, url: str, live: bool) -> None:
    page.goto(url)
    page.wait_for_selector("#games", timeout=WAIT_MS)
    if live:  # the page's own script runs under its policy: it polls the server
        page.wait_for_selector("#live-status:text-matches('games stored')", timeout=WAIT_MS)
    assert_inert(page, ["inline"] if live else [])
    text = page.locator("body").inner_text()
    for shown in (
        f"bot0 {PAYLOAD}",
        f"r {PAYLOAD}",
        f"key {PAYLOAD}=value {PAYLOAD}",
        f"bot0 {PAYLOAD} k {PAYLOAD}",
        f"locm play {PAYLOAD}",
        f"1.2 {PAYLOAD}",
        f"c {PAYLOAD}",
        f"bot0 {PAYLOAD} k {PAYLOAD} at turn 20",
    ):
        assert shown in text
    assert PAYLOAD in page.title()


def test_report_html_pages_run_no_stored_string(
    hostile: dict[str, Path], hostile_page: Any
) -> None:
    out = hostile["dir"] / "html"
    if not (out / "index.html").exists():
        result = locm("report", "--db", str(hostile["db"]), "--html", str(out))
        assert result.returncode == 0, result.stderr
        assert sorted(p.name for p in (out / "games").iterdir()) == ["1.html", "2.html"]
    check_report(hostile_page, (out / "index.html").as_uri(), live=False)
    check_viewer(hostile_page, (out / "games" / "1.html").as_uri())


def test_view_page_runs_no_stored_string(hostile: dict[str, Path], hostile_page: Any) -> None:
    out = hostile["dir"] / "view.html"
    result = locm("view", str(hostile["log"]), "-o", str(out))
    assert result.returncode == 0, result.stderr
    check_viewer(hostile_page, out.as_uri())


def test_served_pages_run_no_stored_string(hostile: dict[str, Path], hostile_page: Any) -> None:
    server = Server(hostile["db"])
    try:
        check_report(hostile_page, server.url, live=True)
        check_viewer(hostile_page, server.url + "games/2.html")
    finally:
        assert server.stop() == 0
