"""Engine speed: full games between two uniformly random agents, per version, on one core.

Prints games/s, actions/s (every applied action: deck building and battle, PASS
included) and the time to clone a mid-game state, as medians of several runs. Times
are CPU seconds of this process (``time.process_time``), so that other jobs on a shared
machine do not skew them much; the load average is printed beside them.

    python benchmarks/engine.py            # a table
    python benchmarks/engine.py --json     # {"1.0": {"games_per_s": ..., ...}, ...}

What we aim for on one core of a 2-core machine: 1.2 >= 900 games/s, 1.5 >= 300
games/s, clone <= 25 us. The table says whether the installed engine is pure Python or
compiled with mypyc (``CARDARENA_COMPILE=1 pip install .``), and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from cardarena.locm import Phase, State
from cardarena.locm.agents import RandomAgent
from cardarena.locm.engine import state as state_module
from cardarena.locm.engine.rules import VERSIONS
from cardarena.machine import describe, load_average, machine, run_script


def play_games(version: str, games: int, first_seed: int) -> tuple[float, int]:
    """Play ``games`` full games; return (seconds, actions applied)."""
    actions = 0
    start = time.process_time()
    for seed in range(first_seed, first_seed + games):
        state = State.new(version, {"seed": seed})
        agents = (RandomAgent(seed), RandomAgent(~seed))
        while not state.is_terminal:
            state.apply(agents[state.current_player].act(state))
            actions += 1
    return time.process_time() - start, actions


def mid_game_states(version: str, count: int) -> list[State]:
    """States at battle turn 10 or later (both boards usually populated)."""
    states = []
    seed = 10_000
    while len(states) < count:
        seed += 1
        state = State.new(version, {"seed": seed})
        agent = RandomAgent(seed)
        while not state.is_terminal and (state.phase != Phase.BATTLE or state.turn < 10):
            state.apply(agent.act(state))
        if not state.is_terminal:
            states.append(state)
    return states


def clone_microseconds(states: list[State], rounds: int) -> float:
    start = time.process_time()
    for _ in range(rounds):
        for state in states:
            state.clone()
    return (time.process_time() - start) / (rounds * len(states)) * 1e6


def measure(version: str, games: int, runs: int) -> dict[str, float]:
    play_games(version, 5, 0)  # warm-up
    game_rates, action_rates, clones = [], [], []
    states = mid_game_states(version, 50)
    for run in range(runs):
        seconds, actions = play_games(version, games, first_seed=1 + run * games)
        game_rates.append(games / seconds)
        action_rates.append(actions / seconds)
        clones.append(clone_microseconds(states, 200))
    return {
        "games_per_s": round(statistics.median(game_rates), 1),
        "actions_per_s": round(statistics.median(action_rates)),
        "clone_us": round(statistics.median(clones), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300, help="games per run (default 300)")
    parser.add_argument("--runs", type=int, default=5, help="runs per version (default 5)")
    parser.add_argument("--versions", nargs="+", choices=VERSIONS, default=list(VERSIONS))
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    if args.json:
        load_before = load_average()
        results = {version: measure(version, args.games, args.runs) for version in args.versions}
        print(json.dumps({**results, "machine": machine(load_before)}))
        return 0
    # The table row by row, as each version is measured (the heading first: it also
    # tells a waiting user that the runs have started).
    print(f"LOCM engine, random vs random, medians of {args.runs} runs x {args.games} games")
    engine = "compiled with mypyc" if state_module.__file__.endswith(".so") else "pure Python"
    print(f"({engine}; one core; CPU time; {describe(machine())} at the start)", flush=True)
    print(f"{'version':>8} {'games/s':>10} {'actions/s':>11} {'clone us':>9}", flush=True)
    for version in args.versions:
        figures = measure(version, args.games, args.runs)
        print(
            f"{version:>8} {figures['games_per_s']:>10.1f} {figures['actions_per_s']:>11,} "
            f"{figures['clone_us']:>9.2f}",
            flush=True,
        )
    print(f"(load average at the end: {machine()['load_average']})")
    return 0


if __name__ == "__main__":
    run_script(main, "benchmarks/engine.py")
