"""The recorded official games, played again through real processes.

Each player of a recorded game is an echo bot (tests/locm/bots/echo_bot.py) that
checks every input it receives against the recording and prints the recorded
answers, exiting where the recorded bot printed nothing (``null``). The referee
must send exactly the recorded inputs and reach the recorded result. The engine
itself is checked on the whole corpus in-process by test_conformance.py; here a
deterministic sample (every special ending, and spread ordinary games) goes
through the pipes. Set LOCM_REFEREE_FULL_CONFORMANCE=1 to run all 700 games.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from cardarena.locm.referee.game_loop import TimeControl, play_game
from tests.conftest import conformance_games
from tests.locm.bots import BOTS, PYTHON

VERSIONS = ("1.0", "1.2", "1.5")
ORDINARY_PER_VERSION = 6
SPECIAL_PER_VERSION = 8
"""Games that end otherwise than by health: errors, time-outs, aborts, deck-outs."""
FULL = os.environ.get("LOCM_REFEREE_FULL_CONFORMANCE") == "1"


def _sample(version: str) -> list[dict[str, Any]]:
    games = conformance_games(version)
    if FULL:
        return games
    special = [game for game in games if game["end"] != "hp"]
    ordinary = [game for game in games if game["end"] == "hp"]
    kinds: dict[str, list[dict[str, Any]]] = {}
    for game in special:
        kinds.setdefault(game["end"].split(" ")[0], []).append(game)
    chosen: list[dict[str, Any]] = []
    while len(chosen) < SPECIAL_PER_VERSION and any(kinds.values()):
        for group in kinds.values():  # round-robin over the kinds of ending
            if group and len(chosen) < SPECIAL_PER_VERSION:
                chosen.append(group.pop(0))
    step = max(1, len(ordinary) // ORDINARY_PER_VERSION)
    return chosen + ordinary[::step][:ORDINARY_PER_VERSION]


@pytest.mark.parametrize("version", VERSIONS)
def test_recorded_games_through_processes(version: str, tmp_path: Path) -> None:
    failures = []
    games = _sample(version)
    for game in games:
        failure = _play(game, tmp_path / game["game"])
        if failure:
            failures.append(f"{game['game']} ({game['end']}): {failure}")
    assert not failures, f"{len(failures)}/{len(games)} games differ:\n" + "\n".join(failures)


def _play(game: dict[str, Any], directory: Path) -> str | None:
    directory.mkdir()
    commands = []
    for player in (0, 1):
        script = directory / f"p{player}.json"
        turns = [turn for turn in game["turns"] if turn["player"] == player]
        script.write_text(json.dumps(turns), encoding="utf-8")
        report = directory / f"p{player}.report"
        commands.append(f"{PYTHON} {BOTS / 'echo_bot.py'} {script} {report}")
    outcome = play_game(
        commands[0],
        commands[1],
        version=game["version"],
        params=game["params"],
        league=game.get("league", 4),
        time_control=TimeControl(scale=20.0),  # a wrong input must not hang the echo bot
    )
    reports = sorted(directory.glob("*.report"))
    if reports:
        return reports[0].read_text(encoding="utf-8")
    if outcome.winner != game["winner"]:
        return f"winner {outcome.winner}, recorded {game['winner']}"
    if list(outcome.scores or (0, 0)) != game["scores"]:
        return f"scores {outcome.scores}, recorded {game['scores']}"
    if (outcome.scores is None) != (game["winner"] is None and game["end"].startswith("referee")):
        return f"aborted: {outcome.scores is None}, recorded end {game['end']!r}"
    logged = [line for p in ("0", "1") for line in outcome.log["outputs"][p] if line]
    recorded = [t["output"] for t in game["turns"] if t["output"] is not None]
    recorded = [line for line in recorded if len(line.encode()) < 10_000]
    if sorted(line[:-1] for line in logged) != sorted(recorded):
        return "the log's outputs differ from the recorded answers"
    return None
