"""What the viewer must show at each frame, computed straight from the engine.

The viewer's frames come from :mod:`cardarena.locm.viewer.frames`; the tests compare
them (and the page in a browser) with these snapshots, which read the engine's
:class:`~cardarena.locm.referee.protocol_game.ProtocolGame` and
:class:`~cardarena.locm.engine.state.State`
directly while the logged answers are fed in. The frame order is the viewer's
contract: one frame per deck-building round, one at the start of each battle turn,
one after each executed action, one for the end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, replace
from itertools import pairwise
from pathlib import Path
from typing import Any

from cardarena.locm import Action, ActionType, Phase, ProtocolGame
from cardarena.locm.referee.gameresult import answers_from_log
from cardarena.locm.referee.replay import log_setup

LOCM = [sys.executable, "-m", "cardarena.locm"]


def locm(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LOCM, *args], capture_output=True, text=True, timeout=timeout,
                          check=False)  # fmt: skip


def played_log(tmp_path: Path, version: str, p1: str = "builtin:greedy",
               p2: str = "builtin:random", seed: int = 7) -> Path:  # fmt: skip
    """A log made by `locm play` between two bots, at ten times the official limits: a bot
    process (the chatty Python bot) must not time out on a busy machine and cut the game
    short; the game must end without a timeout or crash."""
    log = tmp_path / f"game-{version}.json"
    result = locm("play", "-p1", p1, "-p2", p2, "--version", version, "-d", f"seed={seed}",
                  "-l", str(log), "--no-sandbox", "--time-scale", "10")  # fmt: skip
    assert result.returncode == 0, result.stderr
    error_player = json.loads(log.read_text())["cardarena"]["errorPlayer"]
    assert error_player is None, f"player {error_player} timed out or crashed: {result.stderr}"
    return log


@dataclass(frozen=True)
class Expected:
    kind: str
    health: tuple[int, int] | None = None
    mana: tuple[tuple[int, int], tuple[int, int]] | None = None
    """(mana left, max mana) per player."""
    boards: tuple[frozenset[tuple[int, int, int, int]], ...] | None = None
    """Per player: (instance id, lane, attack, defense) of each creature alive."""
    action: Action | None = None
    actor: int | None = None
    inputs: tuple[str, ...] = ()
    """The exact text each asked bot read (frames that ask the bots)."""


def _snapshot(game: ProtocolGame, kind: str, action: Action | None = None) -> Expected:
    state = game.state
    if state.turn < 0:
        return Expected(kind)
    return Expected(
        kind,
        health=(state.players[0].health, state.players[1].health),
        mana=tuple((p.mana, p.max_mana) for p in state.players),  # type: ignore[arg-type]
        boards=tuple(
            frozenset((c.id, max(c.lane, 0), c.attack, c.defense) for c in p.board)
            for p in state.players
        ),
        action=action,
        actor=state.active,
    )


def expected_frames(log: dict[str, Any]) -> list[Expected]:
    """The engine's state at every frame of the viewer, for a GameResult log."""
    version, params, league = log_setup(log)
    game = ProtocolGame(version, params, league)
    answers = [list(lines) for lines in answers_from_log(log)]
    frames: list[Expected] = []
    game.on_action = lambda _player, action: frames.append(_snapshot(game, "action", action))
    while requests := game.requests():
        inputs = tuple(request.input for request in requests)
        if game.state.phase == Phase.DECK_BUILDING:
            frames.append(Expected("draft" if game.rules.draft else "construct", inputs=inputs))
        else:
            frames.append(replace(_snapshot(game, "turn"), inputs=inputs))
        game.answer([answers[r.player].pop(0) if answers[r.player] else None for r in requests])
    frames.append(_snapshot(game, "end"))
    return frames


def conformance_log(game: dict[str, Any]) -> dict[str, Any]:
    """A recorded official game (tests/data/conformance) as a GameResult log."""
    outputs: dict[str, list[str | None]] = {"0": [None], "1": [None]}
    for turn in game["turns"]:
        player = turn["player"]
        line = turn["output"]
        outputs[str(player)].append(None if line is None else line + "\n")
        outputs[str(1 - player)].append(None)
    scores = game.get("scores")
    return {
        "outputs": outputs,
        "errors": {},
        "gameParameters": [f"{key}={value}" for key, value in game["params"].items()],
        "scores": {"0": scores[0], "1": scores[1]} if scores else {},
        "cardarena": {
            "version": game["version"],
            "league": game.get("league", 4),
            "players": game.get("agents") or ["player 0", "player 1"],
        },
    }


def pick_recorded_game(version: str) -> dict[str, Any]:
    """The first recorded game of ``version`` with a creature killed in an attack and an
    item used: a game that exercises every kind of highlight."""
    from tests.conftest import conformance_games

    for game in conformance_games(version):
        log = conformance_log(game)
        frames = expected_frames(log)
        kinds = {f.action.type for f in frames if f.action is not None}
        kills = any(
            f.action is not None and f.action.type == ActionType.ATTACK
            and f.action.target != -1 and before.boards is not None and f.boards is not None
            and len(f.boards[1 - (f.actor or 0)]) < len(before.boards[1 - (f.actor or 0)])
            for before, f in pairwise(frames)
        )  # fmt: skip
        if kills and ActionType.USE in kinds and game.get("winner") is not None:
            return log
    raise AssertionError(f"no suitable recorded {version} game")
