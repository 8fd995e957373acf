"""Game creation speed: the fast engine's compiled generators against the reference engine.

Per version, games created per second on one core (medians of several runs, CPU time):

* ``compiled``: :func:`cardarena.locm.fast.generators.create_tables` for a batch of
  games (sub-seeds, then the draft triples or the 1.5 card pool);
* ``+decks``: the same plus both players' shuffled decks and starting hands
  (:func:`~cardarena.locm.fast.generators.deal_all_decks`, fixed choices);
* ``reference``: ``State.new(version, {"seed": seed})`` (the same work: sub-seeds and
  the cards on offer), one game at a time;
* ``start_row`` and ``deal_decks``: CPU nanoseconds a game of the two compiled set-up steps
  of a whole-game loop such as ``play_random``'s, called from compiled code: a new game
  from its seed into one reused row and card table (``start_row``: sub-seeds, the draft
  triples or the 1.5 pool, the template row), and both decks shuffled and the hands dealt
  at the battle start (``deal_decks``, the same chosen cards each game).

Also the compile time of the generators: cold (an empty numba cache) and warm (the
cache on disk), each in a fresh interpreter.

    python benchmarks/fast_generators.py            # a table
    python benchmarks/fast_generators.py --json     # {"1.0": {...}, ..., "compile": {...}}

Aims on one core of a 2-core machine: 1.5 creation well above 10,000 games/s (the
whole fast 1.5 game must be 6x the reference engine), warm start within seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # measure the cardarena of this checkout, not another install

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

from cardarena.locm.engine.rules import VERSIONS  # noqa: E402
from cardarena.locm.engine.state import State  # noqa: E402
from cardarena.locm.fast import generators  # noqa: E402
from cardarena.locm.fast.batch import new_game_arrays  # noqa: E402
from cardarena.locm.fast.layout import (  # noqa: E402
    CARD_FIELDS,
    MAX_CARDS,
    P_CHOSEN,
    PLAYER_0,
    PLAYER_SIZE,
    STATE_SIZE,
    VERSION,
    VERSION_CODES,
)
from cardarena.machine import describe, machine, run_script  # noqa: E402

FIRST_CALLS = """
import time
start = time.perf_counter()
import numpy as np
from cardarena.locm.fast import generators
from cardarena.locm.fast.layout import STATE_SIZE
for version in ("1.0", "1.2", "1.5"):
    cards, subseeds = generators.create_tables(version, np.arange(2, dtype=np.int64))
    states = np.zeros((2, STATE_SIZE), dtype=np.int32)
    generators.deal_all_decks(version, states, subseeds)
print(time.perf_counter() - start)
"""


def compile_seconds(cache_dir: str) -> float:
    """Seconds from a fresh interpreter's import to every generator having run once."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALLS], env=env, capture_output=True, text=True, check=True
    )
    return float(done.stdout.split()[-1])


def fixed_choice_states(version: str, games: int) -> np.ndarray:
    """State rows with deck choices made (cards 0..29, then 30..59): ready to deal."""
    states = np.zeros((games, STATE_SIZE), dtype=np.int32)
    states[:, VERSION] = VERSION_CODES[version]
    for player in range(2):
        base = PLAYER_0 + player * PLAYER_SIZE + P_CHOSEN
        states[:, base : base + 30] = np.arange(30) + 30 * player  # valid in every version
    return states


def compiled_rate(version: str, games: int, with_decks: bool, first_seed: int) -> float:
    seeds = np.arange(first_seed, first_seed + games, dtype=np.int64)
    states = fixed_choice_states(version, games)
    start = time.process_time()
    _cards, subseeds = generators.create_tables(version, seeds)
    if with_decks:
        generators.deal_all_decks(version, states, subseeds)
    return games / (time.process_time() - start)


@njit(nogil=True)
def _start_rows(seeds: np.ndarray, template: np.ndarray, allowed_rows: np.ndarray) -> int:
    row = np.empty(template.shape[0], np.int32)
    table = np.empty((MAX_CARDS, CARD_FIELDS), np.int32)
    kept = 0  # something of every game read back, so that no game is optimised away
    for game in range(seeds.shape[0]):
        generators.start_row(row, table, seeds[game], template, allowed_rows)
        kept += table[game % 90, 3] + row[game % 16]
    return kept


@njit(nogil=True)
def _deal_rows(row: np.ndarray, seeds_0: np.ndarray, seeds_1: np.ndarray) -> int:
    kept = 0
    for game in range(seeds_0.shape[0]):
        generators.deal_decks(row, seeds_0[game], seeds_1[game])
        kept += row[PLAYER_0 + game % 64]
    return kept


def set_up_nanoseconds(version: str, games: int, first_seed: int) -> tuple[float, float]:
    """CPU ns a game of ``start_row`` and of ``deal_decks``, each in one compiled loop."""
    template, allowed_rows = new_game_arrays(version)
    seeds = generators.game_seeds(first_seed, games)
    start = time.process_time()
    _start_rows(seeds, template, allowed_rows)
    start_row_ns = (time.process_time() - start) / games * 1e9
    row = fixed_choice_states(version, 1)[0]
    other_seeds = seeds[::-1].copy()
    start = time.process_time()
    _deal_rows(row, seeds, other_seeds)
    return start_row_ns, (time.process_time() - start) / games * 1e9


def reference_rate(version: str, games: int, first_seed: int) -> float:
    start = time.process_time()
    for seed in range(first_seed, first_seed + games):
        State.new(version, {"seed": seed})
    return games / (time.process_time() - start)


def measure(version: str, games: int, reference_games: int, runs: int) -> dict[str, float]:
    compiled_rate(version, 10, True, 0)  # compile or load from the cache
    set_up_nanoseconds(version, 10, 0)
    compiled, with_decks, reference, start_rows, deals = [], [], [], [], []
    for run in range(runs):
        compiled.append(compiled_rate(version, games, False, 1 + run * games))
        with_decks.append(compiled_rate(version, games, True, 1 + run * games))
        reference.append(reference_rate(version, reference_games, 1 + run * reference_games))
        start_row_ns, deal_ns = set_up_nanoseconds(version, 5 * games, 1 + run * games)
        start_rows.append(start_row_ns)
        deals.append(deal_ns)
    compiled_median = statistics.median(compiled)
    reference_median = statistics.median(reference)
    return {
        "compiled_games_per_s": round(compiled_median),
        "with_decks_games_per_s": round(statistics.median(with_decks)),
        "reference_games_per_s": round(reference_median),
        "speedup": round(compiled_median / reference_median, 1),
        "start_row_ns": round(statistics.median(start_rows)),
        "deal_decks_ns": round(statistics.median(deals)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000, help="compiled games per run")
    parser.add_argument("--reference-games", type=int, default=300, help="reference games per run")
    parser.add_argument("--runs", type=int, default=5, help="runs per version (default 5)")
    parser.add_argument("--versions", nargs="+", choices=VERSIONS, default=list(VERSIONS))
    parser.add_argument("--no-compile-time", action="store_true", help="skip cold/warm timing")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core (children too)
    results: dict[str, dict[str, float]] = {
        version: measure(version, args.games, args.reference_games, args.runs)
        for version in args.versions
    }
    if not args.no_compile_time:
        with tempfile.TemporaryDirectory() as cache_dir:
            cold = compile_seconds(cache_dir)
            warm = compile_seconds(cache_dir)
        results["compile"] = {"cold_s": round(cold, 2), "warm_s": round(warm, 2)}
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    results["load"] = {"1min": load[0], "5min": load[1], "15min": load[2]}
    results["machine"] = machine()
    if args.json:
        print(json.dumps(results))
        return 0
    print(
        f"LOCM game creation, medians of {args.runs} runs ({args.games} compiled, "
        f"{args.reference_games} reference games each); one core; CPU time"
    )
    print(f"{describe(results['machine'])}; load averages {results['machine']['load_average']}")
    print(
        f"{'version':>8} {'compiled/s':>11} {'+decks/s':>10} {'reference/s':>12} {'speedup':>8}"
        f" {'start_row':>10} {'deal_decks':>10}"
    )
    for version in args.versions:
        figures = results[version]
        print(
            f"{version:>8} {figures['compiled_games_per_s']:>11,} "
            f"{figures['with_decks_games_per_s']:>10,} "
            f"{figures['reference_games_per_s']:>12,} {figures['speedup']:>7}x "
            f"{figures['start_row_ns']:>7,} ns {figures['deal_decks_ns']:>7,} ns"
        )
    if "compile" in results:
        print(
            f"compile: cold {results['compile']['cold_s']:.1f} s, "
            f"warm {results['compile']['warm_s']:.1f} s (a fresh interpreter, every generator once)"
        )
    return 0


if __name__ == "__main__":
    run_script(main, "benchmarks/fast_generators.py")
