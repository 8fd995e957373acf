"""Files written by earlier releases still read the same (the layering moved modules, not
formats): a state snapshot and a GameResult log written before the LOCM packages moved."""

from __future__ import annotations

import json
from pathlib import Path

from cardarena.locm import State
from cardarena.locm.referee.game_loop import play_game
from cardarena.locm.referee.replay import LogReplay, replay_lines

DATA = Path(__file__).parent.parent / "data" / "formats"


def test_an_earlier_state_snapshot_loads_and_is_written_back_unchanged() -> None:
    stored = json.loads((DATA / "state-1.2-seed5.json").read_text())
    state = State.from_dict(stored)
    assert state.to_dict() == stored
    assert state.legal_actions()  # a live game, not a shell


def test_an_earlier_game_log_replays_and_a_new_log_has_the_same_format() -> None:
    stored = json.loads((DATA / "game-1.0-seed3.json").read_text())
    replay = LogReplay(stored)
    for _ in replay.steps():
        pass
    assert replay.mismatch() is None
    assert list(replay_lines(stored))[-1].startswith("result: player 0 wins")
    fresh = play_game("builtin:greedy", "builtin:random", version="1.0", params={"seed": 3}).log
    assert fresh["cardarena"] == stored["cardarena"]
    assert fresh["outputs"] == stored["outputs"]
    assert fresh["gameParameters"] == stored["gameParameters"]
