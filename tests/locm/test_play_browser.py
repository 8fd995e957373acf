"""``locm play -p1 human`` in a real headless Chromium: a person's games, played by clicking
and by keyboard alone, as the page offers them (the ``data-action`` contract).

Each test starts the real command line (a subprocess serving the page), plays through the
page, and checks the end: ``data-winner``, the GameResult log written with ``-l`` (the same
as the page's download) and its replay by ``locm view`` to the same winner.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cardarena.locm.cli.main import main as locm_main
from cardarena.locm.engine.cards import CARD_LIST, generate_cards
from cardarena.locm.viewer.frames import build_frames, card_row

WAIT_MS = 30_000
"""Generous: the machine is busy; a correct page is much faster than this."""
REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = os.environ.get("CARDARENA_SCREENSHOTS")
"""A folder: the tests also save the pictures of docs/play.md there (docs/img)."""
NEXT_DECISION = 'body[data-decision]:not([data-decision="{old}"]), #end[data-winner]:not([hidden])'


class Game:
    """``locm play`` with a human seat, running: its address and its output lines."""

    def __init__(self, args: list[str], **popen: Any) -> None:
        """``popen``: more of Popen's arguments (``env``, ``preexec_fn``)."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cardarena.locm", "play", *args],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen,
        )  # fmt: skip
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self.url = self.line()
        assert self.url.startswith("http://127.0.0.1:"), self.url

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        self.stderr.extend(self.process.stderr)

    def line(self) -> str:
        line = self.lines.get(timeout=WAIT_MS / 1000)
        assert line is not None, "".join(self.stderr)
        return line

    @property
    def watch_url(self) -> str:
        for line in self.stderr:
            if "spectators: " in line:
                return line.split("spectators: ")[1].split()[0]
        raise AssertionError("no spectator address")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=WAIT_MS / 1000)

    def stop_or_kill(self) -> None:
        """A fixture's teardown: Ctrl-C (the referee stops its bot, then exits), else kill."""
        try:
            self.stop()
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture()
def start() -> Iterator[Any]:
    games: list[Game] = []

    def run(*args: str) -> Game:
        games.append(Game(list(args)))
        return games[-1]

    yield run
    for game in games:
        game.stop_or_kill()


def shoot(page: Any, name: str, size: tuple[int, int] = (1280, 720)) -> None:
    if SCREENSHOTS:
        page.set_viewport_size({"width": size[0], "height": size[1]})
        page.screenshot(path=str(Path(SCREENSHOTS) / name))
        page.set_viewport_size({"width": 1400, "height": 900})


def decision(page: Any) -> str | None:
    return page.get_attribute("body", "data-decision")  # type: ignore[no-any-return]


def wait_next(page: Any, old: str | None) -> None:
    page.wait_for_selector(NEXT_DECISION.format(old=old), timeout=WAIT_MS)


def finished(page: Any) -> bool:
    return page.locator("#end[data-winner]:not([hidden])").count() > 0  # type: ignore[no-any-return]


def click_move(page: Any) -> None:
    """One click, as a quick player would: a draft card, a pool card, an attack on the
    opponent, any other move, or the end of the turn."""
    for selector in ('#offered [data-action]', '#pool [data-action]',
                     '#moves [data-action^="ATTACK"][data-action$=" -1"]',
                     '#moves [data-action]', '[data-action="PASS"]'):  # fmt: skip
        target = page.locator(selector)
        if target.count():
            target.first.click()
            return
    raise AssertionError("a decision with nothing to click")


def play_out(page: Any, move: Any = click_move, reload_at: int | None = None) -> int:
    """Play until the game is over; returns the number of moves made."""
    page.wait_for_selector("[data-action], #end[data-winner]:not([hidden])", timeout=WAIT_MS)
    moves = 0
    while not finished(page):
        old = decision(page)
        move(page)
        wait_next(page, old)
        moves += 1
        if moves == reload_at:  # the server holds the game: a reload resumes it
            page.reload()
            page.wait_for_selector("[data-action], #end[data-winner]:not([hidden])",
                                   timeout=WAIT_MS)  # fmt: skip
    return moves


IN_VIEW = """(selector) => { const r = document.querySelector(selector).getBoundingClientRect();
  return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }"""
CAUSES = re.compile(r"health reached 0|deck out|timed out|crashed|invalid output|time quota")


def check_end(page: Any, game: Game, log_path: Path, tmp_path: Path) -> int:
    """The page's winner, the -l log, the page's download and locm view agree; the end
    banner, with why the game ended, is in view on a 1280x720 screen."""
    winner = int(page.get_attribute("#end", "data-winner"))
    page.set_viewport_size({"width": 1280, "height": 720})
    assert page.evaluate(IN_VIEW, "#end") and CAUSES.search(page.text_content("#end"))
    assert not page.locator("#moves-box").is_visible()  # no empty list of moves
    page.set_viewport_size({"width": 1400, "height": 900})
    scores = [game.line(), game.line()]  # printed once the log is written
    assert scores in (["1", "0"], ["0", "1"]) and scores.index("1") == winner
    log = json.loads(log_path.read_text(encoding="utf-8"))
    downloaded = page.evaluate("fetch('log.json').then((r) => r.json())")
    assert downloaded == log
    out = tmp_path / "replay.html"
    assert locm_main(["view", str(log_path), "-o", str(out)]) == 0
    assert out.stat().st_size > 0
    assert build_frames(log)["frames"][-1]["winner"] == winner
    assert game.stop() == 0
    return winner


def check_rules(
    page: Any, shown: tuple[str, ...], hidden: tuple[str, ...], picture: str | None = None
) -> None:
    """The rules panel opens with "?" and with its button, explains every keyword, shows the
    sections of the game's version only, and closes with Esc."""
    page.keyboard.press("?")
    rules = page.locator("#rules")
    assert rules.is_visible()
    terms = rules.locator("#rules-keywords dt").all()
    assert [t.get_attribute("data-keyword") for t in terms] == list("BCDGLW")
    for term in terms:
        explained = term.locator("xpath=following-sibling::dd[1]").inner_text()
        assert term.is_visible() and len(explained) > 20, explained
    headings = {h.inner_text(): h.is_visible() for h in rules.locator("section h3").all()}
    assert all(headings[name] for name in shown) and not any(headings[name] for name in hidden)
    if picture:
        shoot(page, picture)
    page.keyboard.press("Escape")
    assert not rules.is_visible()
    page.click("#rules-button")
    assert rules.is_visible()
    page.click("#rules-close")
    assert not rules.is_visible()


def test_a_1_0_game_by_clicking_with_a_reload_and_a_refused_click(
    page: Any, start: Any, tmp_path: Path
) -> None:
    log_path = tmp_path / "game.json"
    game = start("-p1", "human", "-p2", "builtin:random", "--version", "1.0",
                 "-d", "seed=21", "-l", str(log_path))  # fmt: skip
    page.goto(game.url + "#delay=0")
    page.wait_for_selector("#offered [data-action]", timeout=WAIT_MS)
    check_rules(
        page,
        shown=("Runes", "The board", "Your deck: the draft"),
        hidden=("Lanes", "Area cards: LANE and BOTH LANES", "Your deck: constructed"),
    )
    # A click on a card that is no longer offered (a double click): refused, nothing changes.
    stale = page.locator("#offered [data-action]").first.element_handle()
    old = decision(page)
    page.locator("#offered [data-action]").nth(1).click()
    wait_next(page, old)
    after = decision(page)
    deck = page.locator("#my-deck .card").count()
    stale.evaluate("(button) => button.click()")
    page.wait_for_selector("#message.refused:not([hidden])", timeout=WAIT_MS)
    assert "old view" in page.text_content("#message")
    assert decision(page) == after and page.locator("#my-deck .card").count() == deck == 1
    play_out(page, reload_at=40)
    check_end(page, game, log_path, tmp_path)


def test_a_1_5_game_by_clicking_builds_a_constructed_deck(
    page: Any, start: Any, tmp_path: Path
) -> None:
    log_path = tmp_path / "game.json"
    game = start("-p1", "builtin:random", "-p2", "human", "--version", "1.5",
                 "-d", "seed=5", "-l", str(log_path))  # fmt: skip
    page.goto(game.url + "#delay=0")
    page.wait_for_selector("#pool [data-action]", timeout=WAIT_MS)
    assert page.locator("#pool [data-action]").count() == 120
    page.select_option("#filter-type", "0")  # creatures only
    creatures = page.locator("#pool [data-action]").count()
    assert 0 < creatures < 120
    page.select_option("#filter-type", "")
    for _ in range(30):  # the deck, card by card, with its curve
        old = decision(page)
        offered = page.locator("#pool [data-action]")
        offered.nth(7 * page.locator("#my-deck .card").count() % offered.count()).click()
        wait_next(page, old)
        if page.locator("#my-deck .card").count() == 14:
            bars = page.locator("#curve .bar").all()
            assert sum(int(bar.get_attribute("data-count")) for bar in bars) == 14
            shoot(page, "play-constructed.png")
    turns = {"n": 0, "why": 0}

    def on_the_board(page: Any) -> None:
        """Select a card of the hand or a creature, then click a place that lit up; once,
        click a card too dear first: the page says why nothing happens."""
        dear = page.locator("#hand .card.idle[data-why^='not enough mana']")
        if not turns["why"] and dear.count():
            old = decision(page)
            dear.first.click()
            assert "not enough mana: it costs" in page.text_content("#message")
            assert page.locator(".can-target").count() == 0 and decision(page) == old
            turns["why"] += 1
        status = page.text_content("#status")
        assert not re.search(r"\b0 moves", status), status
        sources = page.locator("#battle .card.playable")
        if not page.locator("#moves [data-action]").count():
            assert "end the turn" in status
        if not sources.count():
            turns["n"] += 1
            page.click("#end-turn")
            return
        sources.first.click()
        targets = page.locator(".can-target")
        assert targets.count() > 0
        moves = page.locator("#moves [data-action]").all()
        offered = {move.get_attribute("data-action") for move in moves}
        assert {t.get_attribute("data-target-action") for t in targets.all()} <= offered
        if turns["n"] == 4:
            shoot(page, "play-battle.png")
            shoot(page, "play-phone.png", (740, 360))
            turns["n"] += 1
        targets.last.click()

    play_out(page, on_the_board)
    assert turns["why"] == 1
    events = page.locator("#events li").all_inner_texts()  # in words, the latest last
    assert events[-1].endswith(" won") and any(" summoned card #" in e for e in events)
    shoot(page, "play-end.png")
    check_end(page, game, log_path, tmp_path)
    log = json.loads(log_path.read_text(encoding="utf-8"))
    assert log["cardarena"]["players"] == ["builtin:random", "human"]
    chosen = [line for line in log["outputs"]["1"] if line and line.startswith("CHOOSE")]
    assert len(chosen) == 1 and chosen[0].count("CHOOSE") == 30  # one click per card


def test_a_1_5_game_by_keyboard_alone(page: Any, start: Any, tmp_path: Path) -> None:
    log_path = tmp_path / "game.json"
    game = start("-p1", "human", "-p2", "builtin:random", "--version", "1.5",
                 "-d", "seed=8", "-l", str(log_path), "--human-time", "600")  # fmt: skip
    page.goto(game.url + "#delay=0")
    assert "Tab" in page.text_content("#help")
    page.wait_for_selector("body[data-ready]", timeout=WAIT_MS)
    check_rules(
        page,
        shown=("Lanes", "Area cards: LANE and BOTH LANES", "Your deck: constructed"),
        hidden=("Runes", "The board", "Your deck: the draft"),
        picture="play-rules.png",
    )
    page.wait_for_selector("#clock[data-seconds-left]:not([hidden])", timeout=WAIT_MS)
    assert 0 < float(page.get_attribute("#clock", "data-seconds-left")) <= 600

    def by_keys(page: Any) -> None:
        kind = page.get_attribute("body", "data-kind")
        if kind == "construct":
            page.keyboard.press("1")  # the first card shown in the pool
        elif page.locator("#moves [data-action]").count():
            page.keyboard.press("m")  # focus the first move, then Enter plays it
            assert page.evaluate("document.activeElement.dataset.action") is not None
            page.keyboard.press("Enter")
        else:
            page.keyboard.press("e")

    assert play_out(page, by_keys) > 30
    check_end(page, game, log_path, tmp_path)


def test_a_1_2_game_by_clicking_against_a_bot_process(
    page: Any, start: Any, tmp_path: Path
) -> None:
    log_path = tmp_path / "game.json"
    bot = "python3 examples/bots/minimal_bot.py"  # sandboxed, as any bot of locm play
    # Ten times the official limits: on a loaded machine the sandboxed Python bot once
    # timed out in 100 ms, and the game is about the page, not the bot's clock.
    game = start("-p1", bot, "-p2", "human", "--version", "1.2", "-d", "seed=3",
                 "--time-scale", "10", "-l", str(log_path))  # fmt: skip
    page.goto(game.url + "#delay=0")

    def click_and_show_the_draft(page: Any) -> None:
        if page.locator("#my-deck .card").count() == 7 and page.locator("#offered .card").count():
            shoot(page, "play-draft.png")
        click_move(page)

    play_out(page, click_and_show_the_draft)
    check_end(page, game, log_path, tmp_path)
    log = json.loads(log_path.read_text(encoding="utf-8"))
    assert log["cardarena"]["players"] == [bot, "human"]


def test_only_the_printed_address_plays(page: Any, start: Any) -> None:
    game = start("-p1", "human", "-p2", "builtin:random", "--version", "1.2")
    base = game.url.rsplit("/", 2)[0]
    for path in ("/", "/nottheToken/", "/nottheToken/state", game.url[len(base):] + "x"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + path, timeout=WAIT_MS / 1000)
        assert refused.value.code in (403, 404)
    with urllib.request.urlopen(game.url + "state", timeout=WAIT_MS / 1000) as answer:
        assert json.load(answer)["decision"]["kind"] == "draft"
    # The spectator's address shows the game but cannot play it.
    page.goto(game.watch_url + "#delay=0")
    page.wait_for_selector("body[data-ready]", timeout=WAIT_MS)
    assert page.locator("[data-action]").count() == 0
    assert not page.locator("#moves-box").is_visible() and page.locator("#waiting").is_visible()
    for panel in page.locator("#side div.box:visible").all():  # each says something
        assert len(panel.inner_text().split("\n", 1)[-1].strip()) > 10
    status = page.evaluate("fetch('move', {method: 'POST', headers: {'Content-Type': "
                           "'application/json'}, body: '{\"id\": 1, \"action\": \"PICK 0\"}'})"
                           ".then((r) => r.status)")  # fmt: skip
    assert status == 403
    assert game.stop() == 130  # stopped during the game: as Ctrl-C stops any locm play


def test_hot_seat_and_a_spectator_following_live(page: Any, start: Any, tmp_path: Path) -> None:
    log_path = tmp_path / "game.json"
    game = start("-p1", "human", "-p2", "human", "--version", "1.2", "-d", "seed=4",
                 "-l", str(log_path))  # fmt: skip
    watcher = page.context.new_page()
    watcher.goto(game.watch_url + "#delay=0")
    page.bring_to_front()  # a page in the background is polled slowly by Playwright
    page.goto(game.url + "#delay=0")
    page.wait_for_selector("#offered [data-action]", timeout=WAIT_MS)
    seats = []
    while page.get_attribute("body", "data-kind") != "battle":  # each seat asks for a deck
        seats.append(page.get_attribute("body", "data-seat"))
        old = decision(page)
        page.click("#auto")
        wait_next(page, old)
    assert seats == ["0", "1"]
    play_out(page)
    winner = check_end(page, game, log_path, tmp_path)
    log = json.loads(log_path.read_text(encoding="utf-8"))
    assert log["cardarena"]["players"] == ["human 1", "human 2"]
    # The spectator saw the same game to its end, and never a hand.
    watcher.wait_for_selector("#end[data-winner]:not([hidden])", timeout=WAIT_MS)
    assert int(watcher.get_attribute("#end", "data-winner")) == winner
    assert watcher.locator("#hand .card").count() == 0
    assert watcher.locator("[data-action]").count() == 0


HOSTILE_BOT = """
import sys
PAYLOAD = "<img src=x onerror=window.pwned=1>"
while True:
    players = [input() for _ in range(2)]
    opponent = input().split()
    for _ in range(int(opponent[-1])):
        input()
    cards = [input() for _ in range(int(input()))]
    if players[0].split()[1] == "0":  # the draft: no mana yet
        print("PICK 0 " + PAYLOAD, flush=True)
    else:  # an illegal action, which the referee reports with its text
        print("ATTACK 99 -1 " + PAYLOAD + ";PASS", flush=True)
    sys.stderr.write("<script>window.pwned = 2</script>\\n")
"""


def test_what_a_bot_writes_is_shown_as_text(page: Any, start: Any, tmp_path: Path) -> None:
    bot = tmp_path / "hostile.py"
    bot.write_text(HOSTILE_BOT, encoding="utf-8")
    name = f"python3 {bot} '<b id=bold>name</b>' --a-very-long-option={'x' * 300}"
    # Ten times the limits: a bot process that timed out in the draft would end the game
    # before its battle answer, the one checked here.
    game = start("-p1", name, "-p2", "human", "--version", "1.2", "-d", "seed=6", "--no-sandbox",
                 "--time-scale", "10")  # fmt: skip
    page.goto(game.url + "#delay=0")
    old = decision(page)
    page.click("#auto")
    wait_next(page, old)
    page.wait_for_selector("#end-turn:not([hidden])", timeout=WAIT_MS)
    events = page.text_content("#events")
    payload = "<img src=x onerror=window.pwned=1>"
    assert f"a move that is not legal, skipped: ATTACK 99 -1 {payload}" in events
    # A long command is cut short: the hand stays on a 1280x720 screen.
    page.set_viewport_size({"width": 1280, "height": 720})
    assert page.evaluate(IN_VIEW, "#hand-title") and page.evaluate(IN_VIEW, "#status")
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    assert "<b id=bold>name</b>" in page.text_content("#matchup")
    assert page.locator("#events img, #bold, main script").count() == 0
    assert page.evaluate("window.pwned === undefined")


FACE_PARTS = ".cost, .ids > span, .badge, .fx, .kind, .area, .att, .def"
"""The texts of a card face: none may overlap another or leave its card."""
DRAW_FACES = """([rows, parts]) => {
  const DATA = {cards: rows, rules: {lanes: 2, runes: false, area: true, draft: false},
                players: ["a", "b"]};
  const board = LocmBoard(DATA);
  const rowOf = (cls) => document.body.appendChild(board.el("div", cls));
  const hand = rowOf("cardrow"), small = rowOf("cardrow small"), lane = rowOf("lane");
  Object.keys(rows).forEach((baseId, i) => {
    hand.appendChild(board.drawCard(baseId, {id: 100 + i % 20}));
    small.appendChild(board.drawCard(baseId));
    if (rows[baseId][0] === 0) lane.appendChild(board.drawCreature({id: 118, card: baseId,
      attack: rows[baseId][2] + 10, defense: rows[baseId][3] - 20, keywords: 63, lane: 0,
      canAttack: true}));
  });
  window.__faceProblems = () => {  // reads first, then compares: no layout in between
    const inside = (a, b) => a.left >= b.left - .5 && a.right <= b.right + .5 &&
                             a.top >= b.top - .5 && a.bottom <= b.bottom + .5;
    const apart = (a, b) => a.right <= b.left + .5 || b.right <= a.left + .5 ||
                            a.bottom <= b.top + .5 || b.bottom <= a.top + .5;
    const cards = [...document.querySelectorAll(".card")].map((card) => ({
      card, box: card.getBoundingClientRect(),
      texts: [...card.querySelectorAll(parts)].map((e) => ({e, r: e.getBoundingClientRect(),
        full: e.scrollWidth <= e.clientWidth + 1 && e.scrollHeight <= e.clientHeight + 1}))
        .filter((t) => t.r.width > 0)}));
    const problems = [];
    for (const {card, box, texts} of cards) {
      const where = card.parentNode.className + " #" + card.dataset.card + ": ";
      texts.forEach(({e, r, full}, i) => {
        if (!inside(r, box)) problems.push(where + e.className + " leaves the card");
        if (!full) problems.push(where + e.className + " overflows its box");
        texts.slice(i + 1).forEach(({e: f, r: q}) => {
          if (!apart(r, q)) problems.push(where + e.className + " overlaps " + f.className);
        });
      });
    }
    return problems;
  };
}"""


QUIET = " .card, .card * { box-shadow: none !important; background: none !important; }"
"""Shadows and gradients change no box, and painting thousands of them is slow."""


def face_rows(generated: int = 1500) -> dict[str, list[int]]:
    """Every 1.0/1.2 card and ``generated`` cards of the 1.5 generator (base ids from 1000)."""
    rows = {str(card.base_id): card_row(card) for card in CARD_LIST}
    for card in generate_cards(20261129, generated):
        rows[str(1000 + card.base_id)] = card_row(card)
    return rows


def draw_faces(page: Any, rows: dict[str, list[int]]) -> None:
    """Every card of ``rows`` in one page, as the play page draws it: a hand card (with its
    instance id), a deck card (small) and, for creatures, one on the board with every keyword
    and big changed values; ``window.__faceProblems()`` measures them all."""
    assets = REPO / "cardarena" / "locm"
    style = "".join((assets / name).read_text(encoding="utf-8")
                    for name in ("viewer/viewer.css", "play/play.css"))  # fmt: skip
    page.set_content(f"<!DOCTYPE html><html><head><style>{style}{QUIET}</style></head></html>")
    page.add_script_tag(content=(assets / "viewer" / "board.js").read_text(encoding="utf-8"))
    page.evaluate(DRAW_FACES, [rows, FACE_PARTS])


def test_no_card_face_has_overlapping_or_escaping_texts(page: Any) -> None:
    """All 160 cards of 1.0/1.2 and 1,500 generated 1.5 cards, at the desktop size, at
    1280x720 (the play page's smaller cards) and on a phone in landscape; their tooltips say
    what the card does."""
    draw_faces(page, face_rows())
    for width, height in ((1400, 900), (1280, 720), (740, 360)):
        page.set_viewport_size({"width": width, "height": height})
        problems = page.evaluate("window.__faceProblems()")
        assert problems == [], f"{len(problems)} at {width}x{height}: {problems[:10]}"
    card = page.locator('.cardrow:not(.small) .card[data-card="126"]')
    assert card.get_attribute("title").startswith(
        "Green item #126 (cost 3): give one of your creatures +2 attack and +3 defense."
    )
    blue = page.locator('.cardrow:not(.small) .card[data-card="155"]').get_attribute("title")
    assert "on the opponent: 3 damage" in blue and "the opponent loses 1 health" in blue
    badges = page.locator('.cardrow:not(.small) .card[data-card="116"] .badge').all()
    helps = [badge.get_attribute("title") for badge in badges]
    assert [h.split(":")[0] for h in helps] == ["Breakthrough", "Charge", "Drain", "Guard",
                                                "Lethal", "Ward"]  # fmt: skip
    assert all(len(h) > 40 for h in helps), helps


REFEREE_LINES = [
    ("player 1 performed action: SUMMON 5 1", "bot summoned card #126 (id 5) into the right lane"),
    (
        "player 1 performed action: SUMMON 11 0",
        "bot summoned card #7 (id 11) into the left lane and a copy (id 12) in the other lane",
    ),
    ("player 0 performed action: ATTACK 3 -1", "Your creature 3 (#1) attacked the opponent"),
    ("player 1 performed action: USE 7 3", "bot used card 7 on creature 3 (#1)"),
    (
        "[Warning] player 1 Action is not legal: ATTACK 9 -1 <b>",
        "bot sent a move that is not legal, skipped: ATTACK 9 -1 <b>",
    ),
    ("player 1 timeout!", "bot gave no answer in time"),
    ("player 0 won!", "You won"),
    ("player 1 chose card 12", "bot picked card #12"),
    ("player 1: invalid input", "bot sent an invalid answer: invalid input"),
    ("something new", "something new"),
]
"""A line of the referee's summary (as the pages get it) and what the page says."""


def test_the_referees_lines_in_words(page: Any) -> None:
    """board.js's eventWords, on each kind of line, with a frame that names the cards (and
    one of a 1.5 area creature summoned with its copy)."""
    draw_faces(page, {})
    cards = {"126": card_row(CARD_LIST[125]), "1": card_row(CARD_LIST[0]),
             "7": [0, 2, 1, 1, 0, 0, 0, 0, 2]}  # fmt: skip
    frame = {"action": {"type": "SUMMON", "id": 5, "card": 126}, "dead": [],
             "sides": [{"board": [{"id": 3, "card": 1}]}, {"board": []}]}  # fmt: skip
    area = {"action": {"type": "SUMMON", "id": 11, "card": 7}, "dead": [],
            "sides": [{"board": []}, {"board": [{"id": 11, "card": 7, "lane": 0},
                                                {"id": 12, "card": 7, "lane": 1}]}]}  # fmt: skip
    said = page.evaluate(
        """([lines, frame, area, cards]) => { const board = LocmBoard({cards: cards,
             players: ["me", "bot"], rules: {lanes: 2, area: true}});
           return lines.map((line) => board.eventWords(line, / 11 /.test(line) ? area : frame,
             (p) => (p === 0 ? "You" : "bot"))); }""",
        [[line for line, _ in REFEREE_LINES], frame, area, cards],
    )
    assert said == [words for _, words in REFEREE_LINES]
