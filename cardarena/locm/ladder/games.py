"""One ladder game played by the LOCM referee, in a worker.

A leased game (:class:`cardarena.ladder.store.LeasedGame`) becomes the tournament runner's
:class:`~cardarena.locm.tournament.LocmGameTask` and is played by the same
:func:`~cardarena.locm.tournament.play_scheduled_game` as a batch tournament: bots in the
bubblewrap sandbox (where the machine has it), the official time limits, each bot's memory
budget, and ``rivals`` = every built bot's command, so that no bot can read another's files.
Its result is the same :class:`~cardarena.tournaments.store.GameRecord` (with the log and the
``locm play`` command line that plays the game again), which the server stores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...ladder.store import LeasedGame
from ...tournaments.schedule import GameSpec
from ...tournaments.store import GameRecord
from ..engine.params import resolve_parameters
from ..engine.rules import FULL_POOL_LEAGUE
from ..referee.cgroups import DEFAULT_MEMORY_MB
from ..referee.game_loop import in_process
from ..tournament import LocmGameTask, lost_game, play_scheduled_game, replay_command

VALIDATION_OPPONENT = "builtin:greedy"
"""The built-in a new version plays its validation games against: quick, and it plays real
games (a bot that crashes on a board with creatures shows it)."""


@dataclass(frozen=True)
class LadderGameTask:
    """A leased game for a worker (picklable): the store's game id and the referee's task."""

    game: int
    task: LocmGameTask


def make_task(
    game: LeasedGame,
    version: str,
    *,
    rivals: Sequence[str] = (),
    hidden: Sequence[str] = (),
    sandbox: bool = True,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
) -> LadderGameTask:
    """The task that plays ``game`` of a LOCM ``version`` ladder at the official limits."""
    spec = GameSpec(first=game.first, second=game.second, round=game.id, seed=game.seed)
    task = LocmGameTask(
        spec=spec,
        commands=game.commands,
        params=resolve_parameters(version, {"seed": game.seed}),
        league=FULL_POOL_LEAGUE,
        time_scale=1.0,
        sandbox=sandbox,
        hidden=tuple(hidden),
        memory_mb=memory_mb,
        rivals=tuple(dict.fromkeys(c for c in rivals if not in_process(c))),
    )
    return LadderGameTask(game.id, task)


def play(task: LadderGameTask) -> tuple[int, GameRecord]:
    """Play the game (in a worker); a misbehaving bot's crash or timeout is its result."""
    return task.game, play_scheduled_game(task.task)


def lost(task: LadderGameTask, why: str) -> tuple[int, GameRecord]:
    """A game whose worker died: a referee failure, which the store queues again."""
    return task.game, lost_game(task.task, why)


def replay(task: LadderGameTask) -> str:
    """The ``locm play`` command line that plays this game again."""
    return replay_command(task.task)
