"""The fast engine's speed: whole random games per second, against the reference engine.

Per version, on one core: full games random against random, deck building and game
creation included, with the compiled engine (``play_random``) and with the reference
engine (``benchmarks/engine.py``'s own measuring function, the same games), as medians
of several runs in CPU seconds of this process; then the start-up times of a fresh
process (``warm_start_s``: numba's on-disk cache warm; ``cold_start_s``: an empty cache,
everything compiled) and, when ``benchmarks/fast_vector.py`` exists, the vector
environment's steps per second with 1024 games.

    python benchmarks/fast.py                 # a table
    python benchmarks/fast.py --json          # {"1.0": {"games_per_s": ...}, ...}

Bars: 1.0/1.2 at least 12 times the reference and 25,000 games/s; 1.5 at least 6 times
the reference; warm start at most 5 s.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import engine as reference_benchmark  # noqa: E402 - benchmarks/engine.py, beside this file

from cardarena.locm.engine.rules import VERSIONS  # noqa: E402
from cardarena.machine import describe, machine, run_script  # noqa: E402

START_SCRIPT = """
import numpy as np
from cardarena.locm.fast.batch import Batch
from cardarena.locm.fast.playouts import play_random
for version in ("1.0", "1.2", "1.5"):
    play_random(1, version, 1)
    batch = Batch.new(version, seeds=[1])
    batch.step(np.flatnonzero(batch.masks()[0])[:1])
"""
"""What a fresh process does to be ready: every version's games, masks and steps."""


def fast_games_per_s(version: str, games: int, runs: int) -> list[float]:
    """Games/s of ``play_random`` (CPU time), one figure per run."""
    from cardarena.locm.fast.playouts import play_random  # numba: imported when measuring

    play_random(10, version, 0)  # compiled (or loaded from the cache) before timing
    rates = []
    for run in range(runs):
        start = time.process_time()
        done = 0
        while done < games:
            chunk = min(1024, games - done)
            play_random(chunk, version, seed=run * 1_000_003 + done)
            done += chunk
        rates.append(games / (time.process_time() - start))
    return rates


def reference_games_per_s(version: str, games: int, runs: int) -> list[float]:
    """Games/s of the reference engine with benchmarks/engine.py's measuring function."""
    reference_benchmark.play_games(version, 5, 0)  # warm-up
    rates = []
    for run in range(runs):
        seconds, _actions = reference_benchmark.play_games(version, games, 1 + run * games)
        rates.append(games / seconds)
    return rates


def start_seconds(cache_dir: str | None) -> tuple[float, float]:
    """(wall, CPU) seconds of a fresh process importing the fast engine and playing every
    version (``cache_dir``: an empty numba cache, so everything is compiled). The CPU
    seconds hardly depend on the machine's load; the wall seconds do."""
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # Its own session: Ctrl-C reaches this script alone, which then kills the child.
    subprocess.run([sys.executable, "-c", START_SCRIPT], check=True, env=env,
                   cwd=HERE.parent, start_new_session=True)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def vector_env_steps_per_s(versions: list[str], runs: int) -> dict[str, int] | None:
    """benchmarks/fast_vector.py's medians with 1024 games per version (both cores),
    if that benchmark exists."""
    path = HERE / "fast_vector.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("fast_vector", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    measured = module.measure(1024, module.DEFAULT_SECONDS, runs, versions, "battle", None)
    return {version: int(measured[version]["steps_per_s"]) for version in versions}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--games", type=int, default=20_000, help="fast games per run")
    parser.add_argument("--reference-games", type=int, default=200,
                        help="reference games per run")  # fmt: skip
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (default 5)")
    parser.add_argument("--versions", nargs="+", choices=VERSIONS, default=list(VERSIONS))
    parser.add_argument("--no-start", action="store_true", help="skip the start-up times")
    args = parser.parse_args()
    warm = cold = None
    if not args.no_start:
        start_seconds(None)  # fills the on-disk cache if it is empty
        runs = [start_seconds(None) for _ in range(3)]
        warm = (statistics.median(w for w, _c in runs), statistics.median(c for _w, c in runs))
        with tempfile.TemporaryDirectory() as empty_cache:
            cold = start_seconds(empty_cache)
    vector = vector_env_steps_per_s(args.versions, args.runs)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core from here on
    results: dict[str, object] = {}
    for version in args.versions:
        fast = statistics.median(fast_games_per_s(version, args.games, args.runs))
        reference = statistics.median(
            reference_games_per_s(version, args.reference_games, args.runs)
        )
        results[version] = {
            "games_per_s": round(fast),
            "reference_games_per_s": round(reference, 1),
            "speedup": round(fast / reference, 1),
        }
    # The slowest version's figure (the 1.5 pool makes resets dearest), and each one's.
    results["vector_env_steps_per_s"] = None if vector is None else min(vector.values())
    results["vector_env_steps_per_s_by_version"] = vector
    results["warm_start_s"] = None if warm is None else round(warm[0], 2)
    results["cold_start_s"] = None if cold is None else round(cold[0], 1)
    start_cpu = {"warm": None if warm is None else round(warm[1], 2),
                 "cold": None if cold is None else round(cold[1], 1)}  # fmt: skip
    facts = machine()
    results["machine"] = facts
    if args.json:
        print(json.dumps(results))
        return 0
    print(f"LOCM fast engine, random vs random, medians of {args.runs} runs "
          f"({args.games} fast games, {args.reference_games} reference games a run)")  # fmt: skip
    print(f"(one core; CPU time; {describe(facts)}; load averages {facts['load_average']})")
    print(f"{'version':>8} {'fast games/s':>13} {'reference':>10} {'speed-up':>9}")
    for version in args.versions:
        figures = results[version]
        assert isinstance(figures, dict)
        fast, reference, speedup = (figures[key] for key in
                                    ("games_per_s", "reference_games_per_s", "speedup"))
        print(f"{version:>8} {fast:>13,} {reference:>10,.1f} {speedup:>8.1f}x")
    print(f"vector env steps/s (1024 games, both cores): {vector}")
    if warm is None or cold is None:
        print("start-up: not measured (--no-start)")
    else:
        print(f"start-up (wall / CPU seconds): warm {results['warm_start_s']} / "
              f"{start_cpu['warm']} s, cold {results['cold_start_s']} / {start_cpu['cold']} s")
    return 0


if __name__ == "__main__":
    run_script(main, "benchmarks/fast.py")
