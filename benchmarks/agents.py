"""Win rates of the built-in agents against each other, games run in parallel.

    python benchmarks/agents.py --json                   # every pair of built-ins, LOCM 1.5
    python benchmarks/agents.py --agents search,search-v1,greedy --version 1.2 --version 1.5
    python benchmarks/agents.py --pair search,greedy --games 40 --version 1.5
    python benchmarks/agents.py --pair search,search-v1 --deck aggro --version 1.2

``--deck`` gives every agent the same deck policy, so that only battle play differs.
``--pair`` also takes an agent by reference, ``python:MODULE:FACTORY`` (as ``locm play``
does), e.g. ``python:cardarena.locm.agents.search_rollouts:RolloutSearchAgent``.

Without ``--pair``, every pair of the built-in agents (``--agents``, default all of
them, new and versioned) plays, in each ``--version``; an agent that does not play a
version (``learned`` in 1.0) sits that version out.

Each pairing plays ``--games`` games, half with each agent as player 0; game ``i``
uses seed ``base + i // 2`` so both seats see the same cards. Agents play
in-process through the engine; every battle turn of every agent is timed and
checked against the official limit of that turn (1000 ms first turns, 200 ms after
in 1.2/1.5, 100 ms in 1.0). Prints win rates with Wilson 95% intervals.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from itertools import combinations

from cardarena.locm.agents import AGENT_VERSIONS, BUILTIN_AGENTS, Agent, make_agent
from cardarena.locm.agents.cardscore import DECK_POLICIES
from cardarena.locm.agents.reference import PYTHON_PREFIX
from cardarena.locm.engine.state import ActionType, Phase, State
from cardarena.machine import machine, run_script, worker_pool
from cardarena.tournaments.report.model import wilson_interval


def make_players(
    first: str, second: str, seed: int, time_scale: float, deck: str | None
) -> list[Agent]:
    """The two agents of a game, with the time scale and the deck policy asked for."""
    agents = [make_agent(first, seed * 2 + 1), make_agent(second, seed * 2 + 2)]
    for agent in agents:
        if hasattr(agent, "time_scale"):
            agent.time_scale = time_scale  # type: ignore[attr-defined]
        if deck is not None and hasattr(agent, "deck_policy"):
            agent.deck_policy = DECK_POLICIES[deck]  # type: ignore[attr-defined]
            if hasattr(agent, "deck_builder"):  # a learned deck gives way to the one asked for
                agent.deck_builder = None  # type: ignore[attr-defined]
    return agents


def play(task: tuple[str, str, str, int, float, str | None]) -> dict[str, object]:
    """One game: (first agent, second agent, version, seed, time scale, deck) -> result."""
    first, second, version, seed, time_scale, deck = task
    state = State.new(version, {"seed": seed})
    agents = make_players(first, second, seed, time_scale, deck)
    turn_ms: list[list[float]] = [[], []]
    over_limit = [0, 0]
    rules = state.rules
    while not state.is_terminal:
        player = state.current_player
        if state.phase == Phase.DECK_BUILDING:
            state.apply(agents[player].act(state))
            continue
        limit = rules.battle_first_turn_ms if state.turn < 2 else rules.battle_turn_ms
        started = time.perf_counter()
        turn = state.turn
        while not state.is_terminal and state.turn == turn:
            action = agents[player].act(state)
            state.apply(action)
            if action.type == ActionType.PASS:
                break
        elapsed = (time.perf_counter() - started) * 1000
        turn_ms[player].append(elapsed)
        over_limit[player] += elapsed > limit * time_scale
    return {
        "agents": [first, second],
        "winner": state.winner,
        "turns": state.turn + 1,
        "max_ms": [max(t, default=0.0) for t in turn_ms],
        "mean_ms": [sum(t) / len(t) if t else 0.0 for t in turn_ms],
        "sum_ms": [sum(t) for t in turn_ms],
        "turn_count": [len(t) for t in turn_ms],
        "over_limit": over_limit,
    }


def measure(
    a: str,
    b: str,
    version: str,
    games: int,
    seed: int,
    workers: int,
    time_scale: float,
    deck: str | None = None,
) -> dict[str, object]:
    tasks = []
    for i in range(games):
        pair = (a, b) if i % 2 == 0 else (b, a)
        tasks.append((pair[0], pair[1], version, seed + i // 2, time_scale, deck))
    started = time.perf_counter()
    with worker_pool(workers) as pool:
        results = list(pool.map(play, tasks, chunksize=1))
    wins = draws = 0
    max_ms = {a: 0.0, b: 0.0}
    sum_ms = {a: 0.0, b: 0.0}
    turn_count = {a: 0, b: 0}
    over = {a: 0, b: 0}
    for result in results:
        names = result["agents"]
        winner = result["winner"]
        if winner is None:
            draws += 1
        elif names[winner] == a:  # type: ignore[index]
            wins += 1
        for seat in (0, 1):
            name = names[seat]  # type: ignore[index]
            max_ms[name] = max(max_ms[name], result["max_ms"][seat])  # type: ignore[index]
            sum_ms[name] += result["sum_ms"][seat]  # type: ignore[index]
            turn_count[name] += result["turn_count"][seat]  # type: ignore[index]
            over[name] += result["over_limit"][seat]  # type: ignore[index]
    score = wins + draws / 2
    low, high = wilson_interval(score, games)
    return {
        "pair": f"{a} vs {b}",
        "version": version,
        "deck": deck,
        "games": games,
        "wins": wins,
        "losses": games - wins - draws,
        "draws": draws,
        "win_rate": score / games,
        "ci95": [low, high],
        "max_turn_ms": max_ms,
        "mean_turn_ms": {name: sum_ms[name] / max(1, turn_count[name]) for name in sum_ms},
        "turns_over_limit": over,
        "seconds": time.perf_counter() - started,
        "load_average": os.getloadavg(),
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pair", action="append", metavar="A,B",
        help="agent A against agent B (built-in names, or python:MODULE:FACTORY); repeat "
        "for more pairings (default: every pair of --agents)",
    )  # fmt: skip
    parser.add_argument(
        "--agents", metavar="A,B,...", default=",".join(BUILTIN_AGENTS),
        help="the built-in agents whose every pair plays (default: all of them)",
    )  # fmt: skip
    parser.add_argument(
        "--version", action="append", choices=("1.0", "1.2", "1.5"),
        help="LOCM version; repeat for several (default 1.5)",
    )  # fmt: skip
    parser.add_argument(
        "--games", type=int, default=200, help="games per pairing, half in each seat (default 200)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game (default 1)")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1,
        help="games played in parallel (default: all cores)",
    )  # fmt: skip
    parser.add_argument(
        "--time-scale", type=float, default=1.0,
        help="multiply the official time limits by this (default 1)",
    )  # fmt: skip
    parser.add_argument(
        "--deck", choices=tuple(DECK_POLICIES),
        help="build every agent's deck with this deck policy, so that only battle play "
        "differs (default: each agent's own)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    versions = args.version or ["1.5"]
    if args.pair:
        pairs = [tuple(p.split(",", 1)) for p in args.pair]
        if any(len(pair) != 2 for pair in pairs):
            parser.error("--pair takes two agents separated by a comma, e.g. search,greedy")
    else:
        pairs = list(combinations(args.agents.split(","), 2))
    for name in {name for pair in pairs for name in pair}:
        if name not in BUILTIN_AGENTS and not name.startswith(PYTHON_PREFIX):
            parser.error(f"unknown built-in agent {name!r}; known: {', '.join(BUILTIN_AGENTS)}"
                         f" (or {PYTHON_PREFIX}MODULE:FACTORY)")  # fmt: skip
    out = []
    for version, (a, b) in ((v, pair) for v in versions for pair in pairs):
        if any(version not in AGENT_VERSIONS.get(name, (version,)) for name in (a, b)):
            continue  # an agent that does not play this version
        result = measure(
            a, b, version, args.games, args.seed, args.workers, args.time_scale, args.deck
        )
        out.append(result)
        if not args.json:
            low, high = result["ci95"]  # type: ignore[misc]
            rounded = {
                key: {name: round(ms, 2) for name, ms in result[key].items()}  # type: ignore[attr-defined]
                for key in ("max_turn_ms", "mean_turn_ms")
            }
            print(
                f"{result['pair']:>24} LOCM {version}: {result['wins']}-{result['losses']}"
                f"-{result['draws']} (wins-losses-draws), {result['win_rate']:.1%} "
                f"[{low:.1%}, {high:.1%}]; max turn ms {rounded['max_turn_ms']}; "
                f"mean turn ms {rounded['mean_turn_ms']}; "
                f"turns over the limit {result['turns_over_limit']}; "
                f"{result['seconds']:.0f} s, load {result['load_average'][0]:.2f}",  # type: ignore[index]
                flush=True,
            )
    if args.json:
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    run_script(main, "benchmarks/agents.py")
