"""The viewer page in a real headless Chromium: what a person sees equals the engine.

For a recorded official game of each version (tests/data/conformance) and a game
played here, the page is stepped to given frames through the URL
fragment and the keyboard; the health, mana, creatures and highlighted action it
shows are compared with the engine's state at that frame (tests/locm/viewer_expect.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cardarena.locm import ActionType
from cardarena.locm.viewer.page import viewer_html
from tests.locm.viewer_expect import Expected, expected_frames, pick_recorded_game, played_log

WAIT_MS = 30_000
"""Generous: the machine is busy; a correct page is much faster than this."""

READ_PAGE = """() => {
  const side = (p) => {
    const box = document.getElementById('player-' + p);
    const [mana, max] = box.querySelector('[data-field=mana]').textContent.split('/');
    return [Number(box.querySelector('[data-field=health]').textContent), Number(mana),
            Number(max)];
  };
  const board = (p) => [...document.querySelectorAll('#board-' + p + ' .card.creature')]
    .filter((c) => !c.classList.contains('dead'))
    .map((c) => [Number(c.dataset.id), Number(c.closest('.lane').dataset.lane),
                 Number(c.querySelector('.att').textContent),
                 Number(c.querySelector('.def').textContent)]);
  const action = document.getElementById('action').dataset;
  const battle = !document.getElementById('battle').hidden;
  return {
    frame: Number(document.body.dataset.frame), kind: document.body.dataset.kind,
    hash: location.hash, battle: battle,
    sides: battle ? [side(0), side(1)] : null, boards: battle ? [board(0), board(1)] : null,
    action: action.type ? [action.type, Number(action.id), Number(action.target),
                           Number(action.player)] : null,
    source: [...document.querySelectorAll('[data-highlight=source]')]
      .filter((e) => e.closest('#battle')).map((e) => Number(e.dataset.id)),
    target: [...document.querySelectorAll('[data-highlight=target]')]
      .map((e) => e.dataset.id !== undefined ? Number(e.dataset.id) : 'player ' + e.dataset.player),
    dead: [...document.querySelectorAll('.card.dead')].map((e) => Number(e.dataset.id)),
  };
}"""


def write_page(tmp_path: Path, log: dict[str, Any], name: str = "game.html") -> Path:
    path = tmp_path / name
    path.write_text(viewer_html(log), encoding="utf-8")
    return path


def goto_frame(page: Any, index: int) -> dict[str, Any]:
    page.evaluate(f"location.hash = '#frame={index}'")
    page.wait_for_function(f"document.body.dataset.frame === '{index}'", timeout=WAIT_MS)
    return page.evaluate(READ_PAGE)  # type: ignore[no-any-return]


def check_shown(shown: dict[str, Any], want: Expected, frames_before: list[Expected]) -> None:
    """The page shows exactly the engine's state ``want``."""
    assert shown["kind"] == want.kind
    if want.health is None:
        assert not shown["battle"]
        return
    assert want.mana is not None and want.boards is not None
    assert [s[0] for s in shown["sides"]] == list(want.health)
    assert [tuple(s[1:]) for s in shown["sides"]] == [tuple(m) for m in want.mana]
    for player in (0, 1):
        assert sorted(map(tuple, shown["boards"][player])) == sorted(want.boards[player])
    if want.action is None:
        assert shown["action"] is None
        return
    action = want.action
    assert shown["action"] == [ActionType(action.type).name, action.id, action.target, want.actor]
    if action.type == ActionType.ATTACK:
        assert shown["source"] == [action.id]
        assert shown["target"] == [f"player {1 - want.actor}" if action.target == -1
                                   else action.target]  # fmt: skip
        before = frames_before[-1].boards
        assert before is not None
        alive = {c[0] for side in want.boards for c in side}
        died = {c[0] for side in before for c in side} - alive
        assert set(shown["dead"]) == died
    elif action.type == ActionType.SUMMON:
        assert shown["source"] == [action.id]
    elif action.type == ActionType.USE:
        assert action.id in shown["source"]
        assert len(shown["target"]) == 1


def frames_to_check(expected: list[Expected]) -> list[int]:
    """A deck-building frame, a turn start, the first frame of each kind of action,
    the first attack that kills a creature, and the end."""
    chosen = [0, next(i for i, e in enumerate(expected) if e.kind == "turn"), len(expected) - 1]
    for kind in (ActionType.SUMMON, ActionType.ATTACK, ActionType.USE):
        found = [i for i, e in enumerate(expected) if e.action and e.action.type == kind]
        chosen += found[:1]
    for i in range(1, len(expected)):
        e, before = expected[i], expected[i - 1]
        if e.action is not None and e.action.type == ActionType.ATTACK and e.action.target != -1:
            assert e.boards is not None and before.boards is not None
            if sum(map(len, e.boards)) < sum(map(len, before.boards)):
                chosen.append(i)
                break
    return sorted(set(chosen))


def check_game(page: Any, path: Path, expected: list[Expected]) -> None:
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
    for index in frames_to_check(expected):
        check_shown(goto_frame(page, index), expected[index], expected[:index])
    # The input the bot read for the turn shown, byte for byte (kept through its actions).
    turn = next(i for i, e in enumerate(expected) if e.kind == "turn" and i + 1 < len(expected)
                and expected[i + 1].kind == "action")  # fmt: skip
    for index in (turn, turn + 1):
        goto_frame(page, index)
        page.locator("#input-box summary").click()
        assert page.locator("#input").is_visible()
        assert (
            page.evaluate("document.getElementById('input').textContent")
            == expected[turn].inputs[0]
        )
        page.locator("#input-box summary").click()
    # Then step with the keyboard from a turn start through its actions.
    start = next(i for i, e in enumerate(expected) if e.kind == "turn" and
                 i + 1 < len(expected) and expected[i + 1].kind == "action")  # fmt: skip
    goto_frame(page, start)
    for index in range(start + 1, min(start + 4, len(expected))):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"document.body.dataset.frame === '{index}'", timeout=WAIT_MS)
        shown = page.evaluate(READ_PAGE)
        assert shown["hash"] == f"#frame={index}"
        check_shown(shown, expected[index], expected[:index])


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_recorded_game_shows_the_engine_state(page: Any, tmp_path: Path, version: str) -> None:
    log = pick_recorded_game(version)
    check_game(page, write_page(tmp_path, log), expected_frames(log))


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_played_game_shows_the_engine_state(page: Any, tmp_path: Path, version: str) -> None:
    log = json.loads(played_log(tmp_path, version).read_text())
    check_game(page, write_page(tmp_path, log), expected_frames(log))


def test_keyboard_navigation(page: Any, tmp_path: Path) -> None:
    log = json.loads(played_log(tmp_path, "1.2").read_text())
    expected = expected_frames(log)
    starts = [i for i, e in enumerate(expected) if e.kind != "action"]
    page.goto(write_page(tmp_path, log).as_uri() + "#frame=40")
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
    frame = "Number(document.body.dataset.frame)"
    assert page.evaluate(frame) == 40  # the fragment chose the frame

    def press(key: str, want: int) -> None:
        page.keyboard.press(key)
        page.wait_for_function(f"{frame} === {want}", timeout=WAIT_MS)
        assert page.evaluate("location.hash") == f"#frame={want}"
        assert page.locator("#frame-index").inner_text() == str(want)
        assert page.locator("#slider").input_value() == str(want)

    press("ArrowLeft", 39)
    press("ArrowRight", 40)
    up = min(i for i in starts if i > 40)
    press("ArrowUp", up)
    press("ArrowDown", max(i for i in starts if i < up))
    press("ArrowDown", max(i for i in starts if i < max(i for i in starts if i < up)))
    press("End", len(expected) - 1)
    assert page.locator("#end").is_visible()
    assert "wins" in page.locator("#end").inner_text()
    press("Home", 0)
    assert page.locator("#deckbuilding").is_visible()
    page.keyboard.press(" ")  # play: frames advance by themselves
    page.wait_for_function(f"{frame} >= 2", timeout=WAIT_MS)
    page.keyboard.press(" ")  # pause: they stop
    stopped = page.evaluate(frame)
    page.wait_for_function("() => !document.getElementById('play').classList.contains('playing')")
    assert page.evaluate(frame) == stopped
    page.locator("#next-turn").click()
    page.wait_for_function(f"{frame} === {min(i for i in starts if i > stopped)}")
    # "?": the rules of 1.2 (lanes and runes, no area cards), every keyword explained.
    page.keyboard.press("?")
    assert page.locator("#rules").is_visible()
    assert page.locator("#rules-keywords dd").count() == 6
    assert page.locator("#rules h3:text-is('Lanes')").is_visible()
    assert page.locator("#rules h3:text-is('Runes')").is_visible()
    assert not page.locator("#rules h3:text-is('Area cards: LANE and BOTH LANES')").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#rules").is_visible()


def test_page_works_offline_with_the_network_cut(browser: Any, tmp_path: Path) -> None:
    log = json.loads(played_log(tmp_path, "1.5").read_text())
    path = write_page(tmp_path, log)
    context = browser.new_context(offline=True)
    requests: list[str] = []

    def refuse(route: Any) -> None:
        """Let the page's own file load; record and cut everything else."""
        if route.request.url.startswith("file:"):
            route.continue_()
            return
        requests.append(route.request.url)
        route.abort()

    try:
        context.route("**/*", refuse)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(path.as_uri() + "#frame=1")
        page.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
        expected = expected_frames(log)
        check_shown(page.evaluate(READ_PAGE), expected[1], expected[:1])
        assert requests == []
        assert errors == []
    finally:
        context.close()


def test_stderr_is_shown_collapsible(page: Any, tmp_path: Path) -> None:
    import sys

    chatty = f"{sys.executable} {Path(__file__).parent / 'bots' / 'simple_bot.py'} chatty"
    log = json.loads(played_log(tmp_path, "1.5", chatty, "builtin:random").read_text())
    page.goto(write_page(tmp_path, log).as_uri() + "#frame=1")
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
    # frame 1 is player 0's first battle turn: its second answer
    assert page.locator("#stderr-0").inner_text().strip() == "answer 1"
    page.locator("#stderr-box-0 summary").click()
    assert not page.locator("#stderr-0").is_visible()


def test_the_end_banner_says_a_crash_is_a_crash(page: Any, tmp_path: Path) -> None:
    # The official log calls it TIMEOUT (no line in time); the banner says what happened.
    import subprocess
    import sys

    crasher = f"{sys.executable} {Path(__file__).parent / 'bots' / 'simple_bot.py'} crash 3"
    path = tmp_path / "crash.json"
    done = subprocess.run(
        [sys.executable, "-m", "cardarena.locm", "play", "-p1", crasher, "-p2", "builtin:random",
         "--version", "1.2", "-d", "seed=5", "-l", str(path), "--no-sandbox",
         "--time-scale", "10"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    log = json.loads(path.read_text())
    assert log["cardarena"]["endReason"] == "TIMEOUT" and log["cardarena"]["exited"] == [
        True, False,
    ]  # fmt: skip
    page.set_viewport_size({"width": 1280, "height": 720})  # a laptop: the banner in view
    page.goto(write_page(tmp_path, log).as_uri() + "#frame=100000")
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
    banner = page.locator("#end")
    assert banner.is_visible()
    assert "player 0 crashed" in banner.inner_text() and "timed out" not in banner.inner_text()
    box = banner.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= 720 and box["x"] + box["width"] <= 1280
    # The referee's lines in words, the protocol text in their tooltips.
    events = page.locator("#events li")
    assert " gave no answer in time" in events.all_inner_texts()[0]
    assert events.first.get_attribute("title").endswith("player 0 timeout!")
