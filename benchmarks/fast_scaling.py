"""Thread scaling of the compiled engine: steps/s of one ``LOCMVectorEnv`` and games/s of
``play_random`` on 1, 2, 4, ... threads, up to the cores this process may use.

Per version and thread count: the vector env (N games, the compiled random opponent,
autoresets, observations and masks; the learner's actions drawn from the masks) in env
steps per second, and ``play_random(threads=...)`` in whole games per second. Each figure
is given three ways, medians of several runs, the thread counts interleaved run by run:

* ``wall``: per wall-clock second: what you get, on a machine to yourself;
* ``cpu``: per CPU second of the whole process (all threads): the work itself;
* ``critical``: per second of the *critical path in CPU time*: the calling thread's CPU
  outside the threaded sections plus, for each threaded section, the CPU seconds of its
  slowest thread. It is what the wall clock shows when every thread has a core to itself,
  and, unlike the wall clock, it hardly moves when other jobs share the cores.

With other jobs running (a load average above the core count), trust ``critical`` and
``cpu``; the wall figures then measure the other jobs too. The CPU model, the core count
and the load average before and after are printed with the figures.

    python benchmarks/fast_scaling.py                     # a table
    python benchmarks/fast_scaling.py --json              # one JSON object
    python benchmarks/fast_scaling.py --versions 1.2 --threads 1 2 --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cardarena.machine import cpu_model


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def thread_counts(cores: int) -> list[int]:
    """1, 2, 4, ... and the core count itself."""
    counts = [1]
    while counts[-1] * 2 <= cores:
        counts.append(counts[-1] * 2)
    if counts[-1] != cores:
        counts.append(cores)
    return counts


class CriticalPath:
    """Wraps :func:`cardarena.locm.fast.threads.run_all` (which both the env and the
    playouts use for their threaded sections) to add up, per section, the CPU seconds of
    the calling thread's own share and of the slowest thread."""

    def __init__(self) -> None:
        from cardarena.locm.fast import threads

        self.original = threads.run_all
        self.own = 0.0
        self.slowest = 0.0

    def run_all(self, calls: list[Callable[[], object]],
                pool: ThreadPoolExecutor | None = None) -> None:  # fmt: skip
        seconds = [0.0] * len(calls)

        def timed(k: int, call: Callable[[], object]) -> Callable[[], None]:
            def run() -> None:
                start = time.thread_time()
                call()
                seconds[k] = time.thread_time() - start

            return run

        self.original([timed(k, call) for k, call in enumerate(calls)], pool)
        self.own += seconds[0]
        self.slowest += max(seconds)

    def install(self) -> None:
        from cardarena.locm.envs import vector_env
        from cardarena.locm.fast import batch, playouts

        for module in (vector_env, batch, playouts):
            module.run_all = self.run_all  # type: ignore[attr-defined]

    def measure(self, work: Callable[[], int]) -> tuple[float, float, float]:
        """(units per wall second, per process CPU second, per critical-path second) of
        ``work()``, which returns the units it did."""
        self.own = self.slowest = 0.0
        wall, cpu, mine = time.perf_counter(), time.process_time(), time.thread_time()
        units = work()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        critical = time.thread_time() - mine - self.own + self.slowest
        return units / wall, units / cpu, units / critical


def env_work(version: str, threads: int, num_envs: int, seconds: float,
             mode: str) -> Callable[[], int]:  # fmt: skip
    """A run of the vector env: random legal learner actions for ``seconds``."""
    from cardarena.locm.envs.vector_env import LOCMVectorEnv

    env = LOCMVectorEnv(num_envs, version, mode, copy=False, threads=threads)
    env.action_space.seed(0)
    env.reset(seed=0)
    for _ in range(5):  # compiled (or loaded from the cache), caches warm
        env.step(env.action_space.sample())

    def work() -> int:
        steps = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            env.step(env.action_space.sample())
            steps += num_envs
        env.close()
        return steps

    return work


def playout_work(version: str, threads: int, games: int, seed: int) -> Callable[[], int]:
    """A run of ``play_random``: ``games`` whole games in chunks of 4096."""
    from cardarena.locm.fast.playouts import play_random

    play_random(64, version, 0, threads=threads)

    def work() -> int:
        done = 0
        while done < games:
            chunk = min(4096, games - done)
            play_random(chunk, version, seed + done, threads=threads)
            done += chunk
        return done

    return work


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", nargs="+", default=["1.0", "1.2", "1.5"])
    parser.add_argument("--threads", nargs="+", type=int, default=None,
                        help="thread counts (default: 1, 2, 4, ... up to the cores)")  # fmt: skip
    parser.add_argument("--num-envs", type=int, default=4096, help="vector env games (4096)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per env run (2)")
    parser.add_argument("--games", type=int, default=16384, help="games per playout run")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (default 3)")
    parser.add_argument("--mode", default="battle", choices=["battle", "game", "deckbuilding"])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    cores = usable_cores()
    counts = args.threads or thread_counts(cores)
    meter = CriticalPath()
    meter.install()
    load_before = os.getloadavg()
    kinds = {"vector_env_steps_per_s": {}, "play_random_games_per_s": {}}
    samples: dict[tuple[str, str, int], list[tuple[float, float, float]]] = {}
    for run in range(args.runs):
        for version in args.versions:
            for threads in counts:  # interleaved: a change of load hits every count alike
                env = env_work(version, threads, args.num_envs, args.seconds, args.mode)
                samples.setdefault(("vector_env_steps_per_s", version, threads), []).append(
                    meter.measure(env)
                )
                games = playout_work(version, threads, args.games, 1 + run * args.games)
                samples.setdefault(("play_random_games_per_s", version, threads), []).append(
                    meter.measure(games)
                )
    for (kind, version, threads), runs in samples.items():
        figures = {name: round(statistics.median(run[k] for run in runs))
                   for k, name in enumerate(("wall", "cpu", "critical"))}  # fmt: skip
        kinds[kind].setdefault(version, {})[str(threads)] = figures
    for by_version in kinds.values():  # the speed-up over one thread, per measure
        for figures in by_version.values():
            one = figures.get("1")
            for threads, row in figures.items():
                if one and threads != "1":
                    row["speedup_wall"] = round(row["wall"] / one["wall"], 2)
                    row["speedup_critical"] = round(row["critical"] / one["critical"], 2)
    results: dict[str, Any] = {
        "cpu_model": cpu_model(), "cores": cores, "threads": counts,
        "num_envs": args.num_envs, "mode": args.mode, "runs": args.runs,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        **kinds,
    }  # fmt: skip
    if args.json:
        print(json.dumps(results))
        return 0
    print(f"{results['cpu_model']}, {cores} cores; load average before "
          f"{results['load_average_before']}, after {results['load_average_after']}")  # fmt: skip
    print(f"medians of {args.runs} runs; wall / CPU / critical-path rates (see --help)")
    for kind, by_version in kinds.items():
        print(kind)
        for version, figures in by_version.items():
            for threads, row in figures.items():
                speedup = ""
                if threads != "1":
                    speedup = (f"  x{row['speedup_critical']:.2f} critical, "
                               f"x{row['speedup_wall']:.2f} wall")  # fmt: skip
                print(
                    f"  {version} {threads:>3} threads: {row['wall']:>10,} wall "
                    f"{row['cpu']:>10,} cpu {row['critical']:>10,} critical{speedup}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
