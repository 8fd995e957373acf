"""Environment speed: one env, one core, uniformly random legal actions, 1.2 and 1.5.

``battle_steps_per_s`` counts steps of ``cardarena/LOCM-battle-v0`` (random deck
building and a random opponent, resets included), as gym-locm's ``LOCM-battle-v0``
is usually measured; ``game_steps_per_s`` counts steps of ``cardarena/LOCM-v0``
(the whole game). The learner's action is drawn uniformly from the mask. Medians
of several runs.

    python benchmarks/envs.py            # a table
    python benchmarks/envs.py --json     # {"1.2": {"battle_steps_per_s": ..., ...}, ...}
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def steps_per_second(env_id: str, version: str, steps: int, seed: int) -> float:
    """Run ``steps`` env steps (resetting at each game end); steps per second."""
    import gymnasium as gym

    import cardarena.locm.envs  # noqa: F401  (registers the ids)

    env = gym.make(env_id, version=version).unwrapped  # no wrappers: the env itself
    rng = np.random.default_rng(seed)
    random = rng.random
    flatnonzero = np.flatnonzero
    _obs, info = env.reset(seed=seed)
    start = time.perf_counter()
    for _ in range(steps):
        legal = flatnonzero(info["action_mask"])
        action = legal[int(random() * len(legal))]
        _obs, _reward, terminated, _truncated, info = env.step(action)
        if terminated:
            _obs, info = env.reset()
    return steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON only")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--steps", type=int, default=20_000, help="steps per run")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.steps < 1:
        print("envs.py: --runs and --steps must be positive", file=sys.stderr)
        return 2
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    results: dict[str, dict[str, float]] = {}
    for version in ("1.2", "1.5"):
        figures = {}
        for key, env_id in (("battle_steps_per_s", "cardarena/LOCM-battle-v0"),
                            ("game_steps_per_s", "cardarena/LOCM-v0")):  # fmt: skip
            runs = [steps_per_second(env_id, version, args.steps, seed)
                    for seed in range(args.runs)]  # fmt: skip
            figures[key] = round(statistics.median(runs), 1)
        results[version] = figures
    if args.json:
        print(json.dumps(results))
    else:
        print(f"{'version':8} {'battle steps/s':>15} {'game steps/s':>13}")
        for version, figures in results.items():
            print(f"{version:8} {figures['battle_steps_per_s']:>15,.0f} "
                  f"{figures['game_steps_per_s']:>13,.0f}")  # fmt: skip
        print(f"(median of {args.runs} runs of {args.steps} steps, one core)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
