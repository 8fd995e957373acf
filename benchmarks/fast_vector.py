"""Vector-env speed: ``LOCMVectorEnv`` on the batch engine, N games, random legal actions.

One step is one learner action in each of the N games (``num_envs`` env steps), the
compiled random opponent's and deck builder's moves, resets (``NEXT_STEP`` autoreset)
and the observations included; the learner's actions are drawn uniformly from the
masks (``env.action_space.sample()``, compiled). The batch is stepped on ``threads``
threads (default: every core), so the figure is wall-clock steps per second; the CPU
seconds of the process are printed beside it (on a shared machine, other jobs slow the
wall clock). Medians of several runs; the load average is printed with them.

    python benchmarks/fast_vector.py              # a table: 1.2 and 1.5, battle mode
    python benchmarks/fast_vector.py --json       # one JSON object
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

from cardarena.machine import describe, machine, run_script

DEFAULT_SECONDS = 3.0


def _run(
    num_envs: int, seconds: float, version: str, mode: str, threads: int | None
) -> tuple[float, float]:
    """One timed run: (steps per wall second, steps per CPU second of this process)."""
    from cardarena.locm.envs.vector_env import LOCMVectorEnv

    env = LOCMVectorEnv(num_envs, version, mode, copy=False, threads=threads)
    env.action_space.seed(0)
    env.reset(seed=0)
    for _ in range(5):  # compiled on first use (the cache makes that a load)
        env.step(env.action_space.sample())
    steps = 0
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        env.step(env.action_space.sample())
        steps += num_envs
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    env.close()
    return steps / wall, steps / cpu


def vector_env_steps_per_s(
    num_envs: int = 1024,
    seconds: float = DEFAULT_SECONDS,
    version: str = "1.5",
    mode: str = "battle",
    threads: int | None = None,
) -> float:
    """Env steps per wall-clock second of ``LOCMVectorEnv`` (one run of ``seconds``)."""
    return _run(num_envs, seconds, version, mode, threads)[0]


def measure(
    num_envs: int, seconds: float, runs: int, versions: list[str], mode: str, threads: int | None
) -> dict[str, Any]:
    """Medians of ``runs`` runs per version, with the load average before and after."""
    load_before = os.getloadavg()
    results: dict[str, Any] = {"num_envs": num_envs, "mode": mode,
                               "threads": threads or os.cpu_count(), "runs": runs}  # fmt: skip
    for version in versions:
        samples = [_run(num_envs, seconds, version, mode, threads) for _ in range(runs)]
        results[version] = {
            "steps_per_s": round(statistics.median(s[0] for s in samples)),
            "steps_per_cpu_s": round(statistics.median(s[1] for s in samples)),
            "all_steps_per_s": [round(s[0]) for s in samples],
        }
    results["load_average_before"] = [round(x, 2) for x in load_before]
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    results["machine"] = machine([round(x, 2) for x in load_before])
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=1024, help="games (default 1024)")
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS,
                        help=f"seconds per run (default {DEFAULT_SECONDS})")  # fmt: skip
    parser.add_argument("--runs", type=int, default=5, help="runs per version (default 5)")
    parser.add_argument("--versions", nargs="+", default=["1.2", "1.5"])
    parser.add_argument("--mode", default="battle", choices=["battle", "game", "deckbuilding"])
    parser.add_argument("--threads", type=int, default=None, help="default: every core")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    results = measure(args.num_envs, args.seconds, args.runs, args.versions, args.mode,
                      args.threads)  # fmt: skip
    if args.json:
        print(json.dumps(results))
        return
    print(f"LOCMVectorEnv, {args.mode} mode, N={args.num_envs}, {results['threads']} threads,"
          f" median of {args.runs} runs of {args.seconds:g} s")  # fmt: skip
    for version in args.versions:
        row = results[version]
        print(
            f"  {version}: {row['steps_per_s']:>10,} steps/s   "
            f"({row['steps_per_cpu_s']:,} per CPU second; runs {row['all_steps_per_s']})"
        )
    print(
        f"  load average before {results['load_average_before']}, "
        f"after {results['load_average_after']}"
    )
    print(f"  {describe(results['machine'])}")


if __name__ == "__main__":
    run_script(main, "benchmarks/fast_vector.py")
