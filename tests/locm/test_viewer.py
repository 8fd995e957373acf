"""``locm view``: the frames equal the engine's states, and bad input is one line, exit 2.

The browser checks of the same pages are in test_viewer_browser.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cardarena.locm import ActionType
from cardarena.locm.referee.replay import ReplayError
from cardarena.locm.viewer.frames import build_frames
from cardarena.locm.viewer.page import viewer_html
from tests.locm.viewer_expect import (
    LOCM,
    Expected,
    expected_frames,
    locm,
    pick_recorded_game,
    played_log,
)

BOTS = Path(__file__).parent / "bots"


def check_frames(data: dict[str, Any], expected: list[Expected]) -> None:
    frames = data["frames"]
    assert [f["kind"] for f in frames] == [e.kind for e in expected]
    for index, (frame, want) in enumerate(zip(frames, expected, strict=True)):
        assert tuple(frame.get("inputs", ())) == want.inputs, index
        if want.health is None:
            assert "sides" not in frame, index
            continue
        sides = frame["sides"]
        assert tuple(s["health"] for s in sides) == want.health, index
        assert tuple((s["mana"], s["maxMana"]) for s in sides) == want.mana, index
        boards = tuple(
            frozenset((c["id"], c["lane"], c["attack"], c["defense"]) for c in s["board"])
            for s in sides
        )
        assert boards == want.boards, index
        if want.action is not None:
            action = frame["action"]
            assert (ActionType[action["type"]], action["id"], action["target"]) == tuple(
                want.action
            ), index
            assert action["player"] == want.actor


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_frames_of_a_played_game_follow_the_engine(tmp_path: Path, version: str) -> None:
    log = json.loads(played_log(tmp_path, version).read_text())
    data = build_frames(log)
    check_frames(data, expected_frames(log))
    kinds = [f["kind"] for f in data["frames"]]
    assert kinds.count("draft" if version != "1.5" else "construct") == (30 if version != "1.5"
                                                                         else 1)  # fmt: skip
    assert kinds[-1] == "end" and data["frames"][-1]["winner"] == 0  # greedy beats random here
    assert all(len(deck) == 30 for deck in data["chosen"])
    if version == "1.5":
        assert len(data["pool"]) == 120
    else:  # each draft frame knows both picks, among the three cards offered
        for frame in data["frames"][:30]:
            assert all(pick in frame["offered"] for pick in frame["picks"])


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_frames_of_a_recorded_official_game_follow_the_engine(version: str) -> None:
    log = pick_recorded_game(version)
    check_frames(build_frames(log), expected_frames(log))


def test_the_stderr_of_each_answer_is_kept(tmp_path: Path) -> None:
    chatty = f"{sys.executable} {BOTS / 'simple_bot.py'} chatty"
    log = json.loads(played_log(tmp_path, "1.5", chatty, "builtin:random").read_text())
    data = build_frames(log)
    assert data["stderr"][0][:3] == ["answer 0\n", "answer 1\n", "answer 2\n"]
    # a battle frame points at the latest answer of each player
    turn = next(f for f in data["frames"] if f["kind"] == "turn" and f["active"] == 0)
    assert data["stderr"][0][turn["answers"][0]] == f"answer {turn['answers'][0]}\n"


def test_a_log_that_does_not_replay_is_refused(tmp_path: Path) -> None:
    log = json.loads(played_log(tmp_path, "1.2").read_text())
    battle = log["outputs"]["0"]
    answered = [i for i, line in enumerate(battle) if line]
    battle[answered[32]] = "PASS\n"  # a battle answer the game never saw
    with pytest.raises(ReplayError, match="does not replay"):
        build_frames(log)
    with pytest.raises(ReplayError):
        build_frames({"outputs": {}, "gameParameters": ["seed=1"], "cardarena": {"version": "9"}})


def test_page_is_self_contained(tmp_path: Path) -> None:
    log = json.loads(played_log(tmp_path, "1.5").read_text())
    log["cardarena"]["players"] = ["</script><b>x", "b"]  # names must not break the page
    page = viewer_html(log)
    assert "</script><b>" not in page
    for remote in ("http://", "https://", "src=", "@import", "url("):
        assert remote not in page.replace("http://www.w3.org", ""), remote


def test_view_command_writes_the_page_next_to_the_log(tmp_path: Path) -> None:
    log = played_log(tmp_path, "1.2")
    result = locm("view", str(log))
    assert result.returncode == 0, result.stderr
    page = log.with_suffix(".html")
    assert result.stdout.strip() == str(page)
    assert '<script id="game-data"' in page.read_text()
    other = tmp_path / "other.html"
    assert locm("view", str(log), "-o", str(other)).returncode == 0
    assert other.read_text() == page.read_text()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: ["view", str(d / "missing.json")], "cannot read"),
        (lambda d: ["view", str(d / "garbage.json")], "is not a game log"),
        (lambda d: ["view", str(d / "tampered.json")], "does not replay"),
        (lambda d: ["view"], "give either"),
        (lambda d: ["view", "--db", str(d / "nothing.db"), "--game", "1"], "no tournament"),
        (lambda d: ["view", str(d / "tampered.json"), "-o", str(d / "no" / "x.html")], "replay"),
        (lambda d: ["view", str(d / "good.json"), "-o", str(d / "no" / "x.html")], "cannot write"),
        (lambda d: ["view", "--db", str(d / "garbage.json"), "--game", "1"], "not a tournament"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, make: Any, message: str) -> None:
    log = json.loads(played_log(tmp_path, "1.0").read_text())
    (tmp_path / "good.json").write_text(json.dumps(log))
    (tmp_path / "garbage.json").write_text("{not json")
    log["scores"] = {"0": log["scores"]["1"], "1": log["scores"]["0"]}  # not this game's
    (tmp_path / "tampered.json").write_text(json.dumps(log))
    result = locm(*make(tmp_path))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "no").exists()


def test_open_hands_the_page_to_the_web_browser(tmp_path: Path) -> None:
    """--open goes through Python's webbrowser, which honours $BROWSER: a fake browser
    that writes down the address it was given stands in for the real one."""
    import os

    log = played_log(tmp_path, "1.5")
    opened = tmp_path / "opened.txt"
    fake = tmp_path / "fake_browser.py"
    fake.write_text(f"import sys; open({str(opened)!r}, 'w').write(sys.argv[1])\n")
    env = {**os.environ, "BROWSER": f"{sys.executable} {fake} %s"}
    result = subprocess.run([*LOCM, "view", str(log), "--open"], capture_output=True, text=True,
                            timeout=120, env=env, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert opened.read_text() == log.with_suffix(".html").resolve().as_uri()
