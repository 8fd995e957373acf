"""cardarena's compiled engine against the Rust engine of the official competition
repository (``referee1.2-rust``), whole random-vs-random 1.2 games, on one core.

This script does not build the Rust engine: give it a bench binary built beforehand
(docs/fast.md, "Against the Rust engine", says how) that takes ``GAMES RUNS`` and prints
one line per run with ``cpu <seconds>s -> <rate> games/s (cpu)``. Both engines run pinned
to the same core, interleaved run by run (Rust, then cardarena, three times by default),
and each rate is whole games per CPU second of the playing thread (cardarena: game
creation, the Java-random draft and the battle, ``play_random``; Rust: its own draft and
game). The medians, their ratio, the CPU model and the load average are printed.

    python benchmarks/fast_vs_rust.py --rust-bin /path/to/bench_cpu
    python benchmarks/fast_vs_rust.py --rust-bin /path/to/bench_cpu --json --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from cardarena.machine import cpu_model

RUST_LINE = re.compile(r"cpu ([0-9.]+)s -> ([0-9.]+) games/s \(cpu\)")


def rust_rate(binary: str, games: int, core: int) -> float:
    """One run of the Rust bench binary pinned to ``core``: its games per CPU second."""

    def pin() -> None:
        os.sched_setaffinity(0, {core})

    done = subprocess.run([binary, str(games), "1"], capture_output=True, text=True,
                          check=True, preexec_fn=pin)  # fmt: skip
    found = RUST_LINE.search(done.stdout)
    if found is None:
        raise SystemExit(f"fast_vs_rust: no 'cpu ... games/s (cpu)' line from {binary}")
    return float(found.group(2))


def cardarena_rate(games: int, seed: int) -> float:
    """One run of ``play_random`` (1.2) in this process (pinned): games per CPU second."""
    from cardarena.locm.fast.playouts import play_random

    start = time.process_time()
    done = 0
    while done < games:
        chunk = min(4096, games - done)
        play_random(chunk, "1.2", seed + done)
        done += chunk
    return games / (time.process_time() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rust-bin", required=True, help="the Rust bench binary (built already)")
    parser.add_argument("--games", type=int, default=50_000, help="games per run, each engine")
    parser.add_argument("--runs", type=int, default=3, help="runs per engine (default 3)")
    parser.add_argument("--core", type=int, default=None, help="the core (default: the last)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    binary = Path(args.rust_bin)
    if not binary.is_file() or not os.access(binary, os.X_OK):
        print(f"fast_vs_rust: {binary} is not an executable file", file=sys.stderr)
        return 2
    if args.games < 1 or args.runs < 1:
        print("fast_vs_rust: --games and --runs must be positive", file=sys.stderr)
        return 2
    cores = sorted(os.sched_getaffinity(0))
    core = cores[-1] if args.core is None else args.core
    if core not in cores:
        print(f"fast_vs_rust: core {core} is not one of {cores}", file=sys.stderr)
        return 2
    os.sched_setaffinity(0, {core})
    cardarena_rate(512, 0)  # compiled (or loaded from numba's cache) before timing
    load_before = os.getloadavg()
    rust: list[float] = []
    ours: list[float] = []
    for run in range(args.runs):  # interleaved: a change of load hits both alike
        rust.append(rust_rate(str(binary), args.games, core))
        ours.append(cardarena_rate(args.games, 1 + run * args.games))
    results = {
        "cpu_model": cpu_model(), "core": core, "games_per_run": args.games,
        "rust_games_per_cpu_s": round(statistics.median(rust)),
        "cardarena_games_per_cpu_s": round(statistics.median(ours)),
        "ratio": round(statistics.median(ours) / statistics.median(rust), 2),
        "rust_runs": [round(r) for r in rust], "cardarena_runs": [round(r) for r in ours],
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }  # fmt: skip
    if args.json:
        print(json.dumps(results))
        return 0
    print(f"LOCM 1.2 random vs random, whole games, core {core} of {results['cpu_model']}; "
          f"medians of {args.runs} interleaved runs of {args.games} games, CPU time")  # fmt: skip
    print(f"  Rust referee1.2-rust:  {results['rust_games_per_cpu_s']:>7,} games/s "
          f"(runs {results['rust_runs']})")  # fmt: skip
    print(f"  cardarena play_random: {results['cardarena_games_per_cpu_s']:>7,} games/s "
          f"(runs {results['cardarena_runs']})")  # fmt: skip
    print(f"  ratio cardarena / Rust: {results['ratio']:.2f}; load average before "
          f"{results['load_average_before']}, after {results['load_average_after']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
