"""Compile the fast engine into numba's cache once, before the tests that use it.

Run as a script by tests/conftest.py when the suite starts, in the background and holding
a lock that the tests using compiled code wait for (:func:`wait_for_warm_up`). Without it,
on a machine whose cache is empty, every pytest-xdist worker (and every CLI subprocess a
test starts) reaching the compiled code compiles the same functions at the same time: a
minute of CPU each, on a 2-core machine. With it, one process compiles and the others load
the machine code from the cache. Nothing here is asserted: the tests themselves check the
engine, and if this script fails they compile as they would have without it.
"""

from __future__ import annotations

import fcntl
import os
import re
import time
from pathlib import Path

LOCK_ENV = "CARDARENA_TEST_WARM_LOCK"
"""The lock file the warm-up holds while it compiles (set by the controller for its workers)."""
USES_COMPILED_CODE = re.compile(r"locm\.fast|locm import fast|VectorEnv|vector_env|rollout|learned|"
                                r"selfplay|fast\.md|envs\.md")  # fmt: skip
"""A test module whose source matches may run compiled code (or start a process that does)."""


def warm() -> None:
    """Run every compiled entry point the tests use, in every version, on a few games."""
    import numpy as np

    from cardarena.locm.envs.vector_env import LOCMVectorEnv
    from cardarena.locm.fast import Batch, play_random, playout

    rng = np.random.default_rng(0)
    for version in ("1.0", "1.2", "1.5"):
        play_random(4, version, 0, record=True)
        play_random(4, version, 0, threads=2)
        batch = Batch.new(version, seeds=[1, 2, 3, 4])
        batch.observe()
        batch.step((rng.random(batch.masks().shape) * batch.masks()).argmax(axis=1))
        playout(batch.clone(), ("greedy", "random"), 0, record=True)
        playout(batch, ("random", "greedy"), 0, threads=2)
        for mode in ("game", "battle", "deckbuilding"):
            env = LOCMVectorEnv(4, version, mode=mode, opponent="greedy", threads=2)
            env.reset(seed=0)
            for _ in range(3):
                masks = env.action_masks()
                env.step((rng.random(masks.shape) * masks).argmax(axis=1))
            env.close()
        _warm_policies_and_tables(version)
    _warm_rollouts_and_selfplay()


def _warm_policies_and_tables(version: str) -> None:
    """What the tests reach besides the calls above (each a compiled signature of its own):
    the vector env's rounds of callable policies and its ``action_space.sample()``, games
    filled from sub-seeds and card tables, a seat given as a Python int to the observation,
    the evaluation and the self-play features, and the differential tests' reader."""
    import numpy as np

    from cardarena.locm.envs.vector_env import LOCMVectorEnv
    from cardarena.locm.fast import Batch, generators, playouts, selfplay
    from cardarena.locm.fast.observation import OBS_SIZES, observe_game
    from tests.locm.fast_differential import fast_signatures

    def first_legal(_observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return masks.argmax(axis=1)

    env = LOCMVectorEnv(3, version, "game", opponent=first_legal, deck_policy=first_legal,
                        battle_policy=first_legal, seat="random")  # fmt: skip
    env.reset(seed=0)
    for _ in range(3):
        env.step(env.action_space.sample())
    env.close()
    seeds = generators.game_seeds(99, 3)
    subseeds = generators.derive_subseeds(version, seeds)
    filled = Batch._empty(version, len(seeds), 4)
    filled._fill(np.arange(len(seeds)), seeds, subseeds,
                 generators.tables_from_subseeds(version, subseeds))  # fmt: skip
    fast_signatures(filled.state, filled.cards)
    row, cards = filled.state[0], filled.cards[0]
    observe_game(row, cards, 1, np.zeros(OBS_SIZES[version], np.float32), False)
    playouts.evaluate(row, 1, playouts.GREEDY_WEIGHTS)
    selfplay.position(row, cards, 1, playouts.GREEDY_WEIGHTS, np.empty(selfplay.FEATURES),
                      np.empty(4))  # fmt: skip


def _warm_rollouts_and_selfplay() -> None:
    """The rollout search's compiled rollouts, and the self-play training loop."""
    import importlib.util
    import tempfile

    from cardarena.locm import State
    from cardarena.locm.agents.greedy import GreedyAgent
    from cardarena.locm.agents.search_rollouts import RolloutSearchAgent
    from cardarena.locm.engine.state import Phase

    for version in ("1.2", "1.5"):
        state, agents = State.new(version, {"seed": 3}), [GreedyAgent(1), GreedyAgent(2)]
        while not state.is_terminal and (state.phase != Phase.BATTLE or state.turn < 6):
            state.apply(agents[state.current_player].act(state))
        if not state.is_terminal:
            RolloutSearchAgent(seed=3, rollouts=True, max_rounds=2).plan_turn(state)
    script = Path(__file__).resolve().parents[1] / "scripts" / "train_learned.py"
    spec = importlib.util.spec_from_file_location("train_learned_warm_up", script)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with tempfile.TemporaryDirectory() as folder:
        module.main(["--iterations", "1", "--games", "4", "--warmup-games", "4",
                     "--eval-games", "0", "--hidden", "4", "--version", "1.2",
                     "--out", str(Path(folder) / "w.npz")])  # fmt: skip


def wait_for_warm_up(timeout_s: float = 600.0) -> None:
    """Block until the warm-up holding the lock has finished (at most ``timeout_s``)."""
    path = os.environ.get(LOCK_ENV)
    if not path or not Path(path).exists():
        return
    with open(path, "rb") as lock:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                time.sleep(0.2)
                continue
            fcntl.flock(lock, fcntl.LOCK_UN)
            return


if __name__ == "__main__":
    try:
        warm()
    except Exception as error:  # the tests compile for themselves; say why in the log
        print(f"fast engine warm-up failed: {error!r}")
