"""``locm warm-up``: compile the fast engine ahead, with a progress bar, into numba's disk cache.

Each piece runs one compiled entry point on a few tiny games, which compiles it (or loads
it from the cache, in a fraction of a second): a later process, a notebook, a tournament's
workers or a training run then starts without the first-use compile
(:mod:`..fast.notice` says when one happens). The pieces follow the entry points, so that
``--version`` compiles only what those versions use (1.0 and 1.2 share their code).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..engine.rules import VERSIONS, ruleset


@dataclass(frozen=True)
class Piece:
    """One compiled entry point to warm: ``label`` for the progress bar, ``run`` to call."""

    label: str
    run: Callable[[], None]
    needs: str = ""
    """A module it needs besides numba (its extra is not installed: the piece is skipped)."""


def _vector_env(version: str, opponent: str) -> None:
    from ..envs.vector_env import LOCMVectorEnv

    env = LOCMVectorEnv(2, version, opponent=opponent, threads=1)
    env.reset(seed=0)
    for _ in range(3):
        env.step(env.action_space.sample())
    env.close()


def _batch(version: str) -> None:
    from ..fast.batch import Batch

    batch = Batch.new(version, seeds=[1, 2])
    batch.observe()
    batch.step(batch.masks().argmax(axis=1))


def _playouts(version: str) -> None:
    from ..fast.batch import Batch
    from ..fast.playouts import play_random, playout

    play_random(2, version, 0, record=True)
    playout(Batch.new(version, seeds=[1, 2]), ("random", "greedy"), 0, record=True)


def _rollouts() -> None:
    """The rollout search's compiled rollouts (``builtin:search-rollouts``), on a position
    a few battle turns into a greedy game."""
    from ..agents.greedy import GreedyAgent
    from ..agents.search_rollouts import RolloutSearchAgent
    from ..engine.state import Phase, State

    state, agents = State.new("1.2", {"seed": 3}), [GreedyAgent(1), GreedyAgent(2)]
    while not state.is_terminal and (state.phase != Phase.BATTLE or state.turn < 6):
        state.apply(agents[state.current_player].act(state))
    if not state.is_terminal:
        RolloutSearchAgent(seed=3, rollouts=True, max_rounds=2).plan_turn(state)


def pieces(versions: Iterable[str] = VERSIONS) -> list[Piece]:
    """What ``locm warm-up`` compiles for ``versions``, most used first."""
    chosen = list(dict.fromkeys(versions))
    kinds = []  # one version per compiled variant: draft (1.0/1.2) and constructed (1.5)
    for draft in (True, False):
        kinds += [v for v in chosen if ruleset(v).draft == draft][:1]
    found: list[Piece] = []
    for version in kinds:
        name = "/".join(v for v in VERSIONS if ruleset(v).draft == ruleset(version).draft)
        found += [
            Piece(f"vector env {name}", lambda v=version: _vector_env(v, "random"), "gymnasium"),
            Piece(
                f"vector env {name}, greedy opponent",
                lambda v=version: _vector_env(v, "greedy"),
                "gymnasium",
            ),
            Piece(f"Batch {name}", lambda v=version: _batch(v)),
        ]
    found.append(Piece("playouts", lambda: _playouts(chosen[0])))
    if any(ruleset(v).has_lanes for v in chosen):  # the rollout search plays lanes
        found.append(Piece("rollout search", _rollouts))
    return found


def available(piece: Piece) -> bool:
    """Can this piece run here (its extra installed)?"""
    return not piece.needs or importlib.util.find_spec(piece.needs) is not None


def warm_up(versions: Iterable[str] = VERSIONS, progress: bool = True) -> list[str]:
    """Compile every available piece for ``versions`` (a tqdm bar on stderr unless not
    ``progress``); returns the labels of the pieces skipped for a missing extra. The
    compile notices are off meanwhile: the bar says what is compiled."""
    from tqdm import tqdm

    from ..fast import notice, require_numba

    require_numba()
    todo = pieces(versions)
    skipped = [p.label for p in todo if not available(p)]
    was_quiet = notice.is_quiet()
    notice.set_quiet(True)
    try:
        bar = tqdm(total=len(todo), desc="compiling", unit="piece", disable=not progress)
        with bar:
            for piece in todo:
                bar.set_postfix_str(piece.label)
                if piece.label not in skipped:
                    piece.run()
                bar.update()
    finally:
        notice.set_quiet(was_quiet)
    return skipped


def _cmd_warm_up(args: argparse.Namespace) -> int:
    from ..fast import FastEngineUnavailable, require_numba

    try:
        require_numba()
    except FastEngineUnavailable as error:
        print(f"locm warm-up: {error}", file=sys.stderr)
        return 1
    started, cpu = time.monotonic(), time.process_time()
    skipped = warm_up(args.version or VERSIONS, progress=not args.quiet)
    for label in skipped:
        print(f"locm warm-up: skipped {label}: its extra is not installed "
              '(pip install ".[envs]")', file=sys.stderr)  # fmt: skip
    print(f"compiled in {time.monotonic() - started:.1f} s ({time.process_time() - cpu:.1f} s"
          f" of CPU); cached in {os.environ.get('NUMBA_CACHE_DIR', '')}")  # fmt: skip
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``warm-up`` to the ``locm`` command line."""
    warm = commands.add_parser(
        "warm-up",
        help="compile the fast engine (numba) ahead into its disk cache, with a progress bar",
        description="Compiles the compiled engine's entry points (the vector env of "
        "gymnasium.make_vec, the Batch API, the playouts, the rollout search) into numba's "
        "cache on disk, so that their first use starts at once. Run it once after an install "
        "or an upgrade; with a warm cache it takes a second.",
    )
    warm.add_argument(
        "--version",
        choices=VERSIONS,
        action="append",
        help="only what this version uses (repeatable; default: every version)",
    )
    warm.add_argument("--quiet", action="store_true", help="no progress bar")
    warm.set_defaults(run=_cmd_warm_up)
