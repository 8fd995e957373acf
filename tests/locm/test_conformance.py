"""Replay every game recorded from the official referees and compare byte for byte.

The games are test data of the repository (tests/data/conformance, described in its
README), so every clone replays all 700.

Each game is started with its recorded parameters (and again with only the
parameters that were given, which checks the sub-seed derivation); the recorded
answers are fed in; every input the engine produces must equal the recorded
input exactly, and the game must end at the same request with the same winner
and scores.
"""

from __future__ import annotations

from typing import Any

import pytest

from cardarena.locm import ProtocolGame
from tests.conftest import (
    CONFORMANCE_COUNTS,
    CONFORMANCE_GAMES,
    conformance_file,
    conformance_games,
)

VERSIONS = ("1.0", "1.2", "1.5")
GAMES = [(version, game) for version in VERSIONS for game in conformance_games(version)]


def replay(game: dict[str, Any], params_key: str) -> str | None:
    """Replay one recorded game; None if it matches, else what differed first."""
    protocol = ProtocolGame(game["version"], game[params_key], game.get("league", 4))
    turns = game["turns"]
    index = 0
    while requests := protocol.requests():
        answers = []
        for request in requests:
            if index >= len(turns):
                return f"the engine asks for more than the {len(turns)} recorded requests"
            turn = turns[index]
            if request.player != turn["player"]:
                return f"request {index}: asks player {request.player}, recorded {turn['player']}"
            if request.input != turn["input"]:
                return f"request {index}: input differs\n{request.input!r}\n{turn['input']!r}"
            answers.append(turn["output"])
            index += 1
        protocol.answer(answers)
    if index != len(turns):
        return f"the engine ended after {index} of {len(turns)} recorded requests"
    if protocol.winner != game["winner"] or list(protocol.scores or ()) != game["scores"]:
        return (
            f"winner {protocol.winner} scores {protocol.scores}, "
            f"recorded {game['winner']} {game['scores']} ({game['end']})"
        )
    return None


@pytest.mark.parametrize(
    ("version", "game"), GAMES, ids=[f"{game['game']}" for _version, game in GAMES]
)
def test_recorded_game(version: str, game: dict[str, Any]) -> None:
    counts = CONFORMANCE_COUNTS.setdefault(version, [0, 0])
    counts[1] += 1
    for params_key in ("params", "given_params"):
        difference = replay(game, params_key)
        assert difference is None, f"{game['game']} with {params_key}: {difference}"
    # The parameters the engine reports are exactly the recorded final parameters.
    final = ProtocolGame(version, game["given_params"], game.get("league", 4)).state.params
    assert final.as_dict() == game["params"]
    counts[0] += 1


def test_every_recorded_game_is_in_the_repository() -> None:
    """All 700 games are test data of the repository: every clone replays them all."""
    for version, expected in CONFORMANCE_GAMES.items():
        assert conformance_file(version).is_file(), conformance_file(version)
        assert len(conformance_games(version)) == expected, version
    assert len(GAMES) == sum(CONFORMANCE_GAMES.values()) == 700
    names = [game["game"] for _version, game in GAMES]
    assert len(set(names)) == len(names)
