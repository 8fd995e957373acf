"""Deck policies against each other with the same battle agent on both sides.

    python benchmarks/decks.py --decks fitted,aggro --battle greedy --version 1.2 --games 400
    python benchmarks/decks.py --decks fitted,aggro --battle search-v1 --version 1.5 --json

Each game seats the two deck policies' players in turn (game ``i`` uses seed
``base + i // 2``, so both seats see the same cards); both players fight with the
same built-in battle agent, so the result measures the decks alone. Prints wins,
the win rate with its Wilson 95% interval, and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from cardarena.locm.agents import make_agent
from cardarena.locm.agents.cardscore import DECK_POLICIES
from cardarena.locm.engine.state import State
from cardarena.machine import machine, run_script, worker_pool
from cardarena.tournaments.report.model import wilson_interval


def play(task: tuple[str, str, str, str, int]) -> int | None:
    """One game: (deck of player 0, deck of player 1, battle agent, version, seed) -> winner."""
    deck0, deck1, battle, version, seed = task
    state = State.new(version, {"seed": seed})
    agents = [make_agent(battle, 2 * seed + 1), make_agent(battle, 2 * seed + 2)]
    agents[0].deck_policy = DECK_POLICIES[deck0]  # type: ignore[attr-defined]
    agents[1].deck_policy = DECK_POLICIES[deck1]  # type: ignore[attr-defined]
    while not state.is_terminal:
        state.apply(agents[state.current_player].act(state))
    return state.winner


def measure(
    a: str, b: str, battle: str, version: str, games: int, seed: int, workers: int
) -> dict[str, object]:
    tasks = [
        ((a, b) if i % 2 == 0 else (b, a)) + (battle, version, seed + i // 2) for i in range(games)
    ]
    started = time.perf_counter()
    with worker_pool(workers) as pool:
        winners = list(pool.map(play, tasks, chunksize=4))
    wins = sum(1 for task, w in zip(tasks, winners, strict=True) if w is not None and task[w] == a)
    draws = winners.count(None)
    low, high = wilson_interval(wins + draws / 2, games)
    return {
        "decks": [a, b],
        "battle": battle,
        "version": version,
        "games": games,
        "wins": wins,
        "losses": games - wins - draws,
        "draws": draws,
        "win_rate": (wins + draws / 2) / games,
        "ci95": [low, high],
        "seconds": time.perf_counter() - started,
        "load_average": os.getloadavg(),
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--decks",
        default="fitted,aggro",
        metavar="A,B",
        help=f"two deck policies, of: {', '.join(DECK_POLICIES)} (default fitted,aggro)",
    )
    parser.add_argument(
        "--battle",
        default="greedy",
        help="the built-in agent both players battle with (default greedy)",
    )
    parser.add_argument(
        "--version",
        action="append",
        choices=("1.0", "1.2", "1.5"),
        help="LOCM version; repeat for several (default 1.2 and 1.5)",
    )
    parser.add_argument("--games", type=int, default=400, help="games per version (default 400)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game (default 1)")
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="games played in parallel (default: all cores)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    decks = args.decks.split(",")
    if len(decks) != 2 or any(name not in DECK_POLICIES for name in decks):
        parser.error(f"--decks takes two of {', '.join(DECK_POLICIES)}, got {args.decks!r}")
    results = []
    for version in args.version or ["1.2", "1.5"]:
        result = measure(
            decks[0], decks[1], args.battle, version, args.games, args.seed, args.workers
        )
        results.append(result)
        if not args.json:
            low, high = result["ci95"]  # type: ignore[misc]
            print(
                f"{decks[0]} vs {decks[1]} decks, {args.battle} battles, LOCM {version}: "
                f"{result['wins']}-{result['losses']}-{result['draws']}, "
                f"{result['win_rate']:.1%} [{low:.1%}, {high:.1%}]; "
                f"{result['seconds']:.0f} s, load {result['load_average'][0]:.2f}"
            )  # type: ignore[index]
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    run_script(main, "benchmarks/decks.py")
