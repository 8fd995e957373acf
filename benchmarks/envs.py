"""Environment speed: one env, one core, uniformly random legal actions, 1.2 and 1.5.

``battle_steps_per_s`` counts steps of ``cardarena/LOCM-battle-v0`` (random deck
building and a random opponent, resets included), as gym-locm's ``LOCM-battle-v0``
is usually measured; ``game_steps_per_s`` counts steps of ``cardarena/LOCM-v0``
(the whole game). The learner's action is drawn uniformly from the mask. Medians
of several runs; each run is timed in CPU seconds of its process (see CLOCK).

    python benchmarks/envs.py            # a table
    python benchmarks/envs.py --json     # {"1.2": {"battle_steps_per_s": ..., ...}, ...}

Side by side with gym-locm (its ``LOCM-battle-v0``, random deck building, random
opponent, uniformly random legal actions), runs interleaved on the same core:
``--gym-locm`` if ``gym_locm`` imports here, or ``--gym-locm-python PATH`` to run it
with another interpreter (gym-locm 2.0.0b1 needs Python >= 3.12); each version then
also gets ``gym_locm_battle_steps_per_s`` and ``battle_ratio`` (see docs/envs.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from cardarena.machine import describe, machine, run_script

CLOCK = time.process_time
"""CPU seconds of this process: on a shared machine, other processes slow the wall clock of
a run but hardly its CPU time, so runs (ours and gym-locm's alike) stay comparable."""


def steps_per_second(env_id: str, version: str, steps: int, seed: int) -> float:
    """Run ``steps`` env steps (resetting at each game end); steps per second."""
    import gymnasium as gym

    import cardarena.locm.envs  # noqa: F401  (registers the ids)

    env = gym.make(env_id, version=version).unwrapped  # no wrappers: the env itself
    rng = np.random.default_rng(seed)
    random = rng.random
    flatnonzero = np.flatnonzero
    _obs, info = env.reset(seed=seed)
    start = CLOCK()
    for _ in range(steps):
        legal = flatnonzero(info["action_mask"])
        action = legal[int(random() * len(legal))]
        _obs, _reward, terminated, _truncated, info = env.step(action)
        if terminated:
            _obs, info = env.reset()
    return steps / (CLOCK() - start)


def gym_locm_steps_per_second(version: str, steps: int, seed: int) -> float:
    """The same loop on gym-locm's ``LOCM-battle-v0`` (imported here: never a dependency)."""
    import warnings

    import gym_locm  # noqa: F401  (registers its ids)
    import gymnasium as gym

    warnings.simplefilter("ignore")  # its observations leave its space: a warning per step
    env = gym.make("LOCM-battle-v0", version=version, seed=seed,
                   disable_env_checker=True).unwrapped  # fmt: skip
    rng = np.random.default_rng(seed)
    random = rng.random
    flatnonzero = np.flatnonzero
    env.reset()
    start = CLOCK()
    for _ in range(steps):
        legal = flatnonzero(env.action_masks())
        _obs, _reward, terminated, _truncated, _info = env.step(
            int(legal[int(random() * len(legal))])
        )
        if terminated:
            env.reset()
    return steps / (CLOCK() - start)


def gym_locm_run(python: str | None, version: str, steps: int, seed: int) -> float:
    """One gym-locm run, here or in ``python`` (same core: the child inherits the affinity)."""
    if python is None:
        return gym_locm_steps_per_second(version, steps, seed)
    command = [python, __file__, "--gym-locm-only", version, "--steps", str(steps),
               "--seed", str(seed)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"gym-locm run failed with {python}: {last}")
    return float(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON only")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (median)")
    parser.add_argument("--steps", type=int, default=20_000, help="steps per run")
    parser.add_argument(
        "--gym-locm",
        action="store_true",
        help="also run gym-locm's battle env (gym_locm importable here)",
    )
    parser.add_argument(
        "--gym-locm-python",
        metavar="PATH",
        help="also run gym-locm's battle env with this Python interpreter",
    )
    parser.add_argument("--gym-locm-only", metavar="VERSION", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.steps < 1:
        print("envs.py: --runs and --steps must be positive", file=sys.stderr)
        return 2
    if args.gym_locm_only:  # the child of --gym-locm-python: one run, one number
        print(gym_locm_steps_per_second(args.gym_locm_only, args.steps, args.seed))
        return 0
    if args.gym_locm_python and not os.access(args.gym_locm_python, os.X_OK):
        print(f"envs.py: --gym-locm-python {args.gym_locm_python}: not an executable",
              file=sys.stderr)  # fmt: skip
        return 2
    compare = args.gym_locm or args.gym_locm_python is not None
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    results: dict[str, dict[str, float]] = {}
    for version in ("1.2", "1.5"):
        runs: dict[str, list[float]] = {"battle_steps_per_s": [], "game_steps_per_s": []}
        if compare:
            runs["gym_locm_battle_steps_per_s"] = []
        for seed in range(args.runs):  # interleaved: a load change hits both alike
            runs["battle_steps_per_s"].append(
                steps_per_second("cardarena/LOCM-battle-v0", version, args.steps, seed)
            )
            if compare:
                try:
                    runs["gym_locm_battle_steps_per_s"].append(
                        gym_locm_run(args.gym_locm_python, version, args.steps, seed)
                    )
                except (ImportError, RuntimeError) as error:
                    print(f"envs.py: gym-locm: {error}", file=sys.stderr)
                    return 2
            runs["game_steps_per_s"].append(
                steps_per_second("cardarena/LOCM-v0", version, args.steps, seed))  # fmt: skip
        figures = {key: round(statistics.median(values), 1) for key, values in runs.items()}
        if compare:
            ratios = [ours / theirs for ours, theirs in
                      zip(runs["battle_steps_per_s"], runs["gym_locm_battle_steps_per_s"],
                          strict=True)]  # fmt: skip
            figures["battle_ratio"] = round(statistics.median(ratios), 2)
        results[version] = figures
    facts = machine()
    if args.json:
        print(json.dumps({**results, "machine": facts}))
    else:
        head = f"{'version':8} {'battle steps/s':>15} {'game steps/s':>13}"
        print(head + (f" {'gym-locm battle':>16} {'ratio':>6}" if compare else ""))
        for version, figures in results.items():
            line = (f"{version:8} {figures['battle_steps_per_s']:>15,.0f} "
                    f"{figures['game_steps_per_s']:>13,.0f}")  # fmt: skip
            if compare:
                line += (f" {figures['gym_locm_battle_steps_per_s']:>16,.0f}"
                         f" {figures['battle_ratio']:>5.1f}x")  # fmt: skip
            print(line)
        print(
            f"(median of {args.runs} runs of {args.steps} steps, one core, CPU time"
            + (", runs interleaved; ratio = median of per-run ratios)" if compare else ")")
        )
        print(f"({describe(facts)})")
    return 0


if __name__ == "__main__":
    run_script(main, "benchmarks/envs.py")
