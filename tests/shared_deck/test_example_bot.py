"""The C example bot, compiled with gcc, plays real matches against a real server."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from cardarena.shared_deck.rules import RuleSet
from cardarena.shared_deck.store import Store

from .conftest import RunningServer

SOURCE = Path(__file__).resolve().parents[2] / "examples" / "shared_deck" / "bot.c"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed: no C bot to test")
def test_c_bot_plays_its_matches(
    start_server: Callable[..., RunningServer], tmp_path: Path
) -> None:
    binary = tmp_path / "bot"
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(binary), str(SOURCE)], check=True)
    turns = 12
    server = start_server(
        ["c-bot", "idle"], start_after_logins=1, turn_seconds=0.1,
        rules=RuleSet(turns_per_match=turns), seed=2,
    )
    bot = subprocess.run(
        [str(binary), server.host, str(server.port), "c-bot", str(turns + 3)],
        env={**os.environ, "SHARED_DECK_SECRET": server.secrets["c-bot"]},
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert bot.returncode == 0, bot.stderr
    server.wait_saved(1)
    with contextlib.closing(Store(server.server.config.db_path)) as store:
        tournament = store.tournament(1)
    actions = [(match, action) for match in tournament.matches for action in match.actions()]
    assert all((action.side == 0) == (match.first == "c-bot") for match, action in actions)
    played = {action.command for _, action in actions if action.code == 0}
    assert {"DRAW_CARD", "PLAY_CARD", "ATTACK"} <= played
    assert tournament.points["c-bot"] > tournament.points["idle"]
