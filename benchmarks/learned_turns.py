"""How long builtin:learned thinks per battle turn: median, 99th percentile and max.

    python benchmarks/learned_turns.py --games 100        # LOCM 1.0, 1.2 and 1.5

learned-v2 is meant to stay within 5 ms a turn. Each game is builtin:learned against
builtin:greedy in one process; a turn is every ``act`` call of one battle turn (the
actions applied in between are not counted), timed with ``time.perf_counter``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from cardarena.locm.agents import GreedyAgent, make_agent
from cardarena.locm.engine.state import ActionType, Phase, State
from cardarena.machine import describe, machine, run_script


def turn_times(version: str, games: int, agent_name: str) -> list[float]:
    """Milliseconds of each battle turn the agent played, over ``games`` games."""
    times: list[float] = []
    for seed in range(1, games + 1):
        state = State.new(version, {"seed": seed})
        seat = seed % 2
        agents = [GreedyAgent(seed), GreedyAgent(seed)]
        agents[seat] = make_agent(agent_name, seed)  # type: ignore[call-overload]
        while not state.is_terminal:
            player = state.current_player
            if state.phase == Phase.DECK_BUILDING or player != seat:
                state.apply(agents[player].act(state))
                continue
            thinking = 0.0
            turn = state.turn
            while not state.is_terminal and state.turn == turn:
                started = time.perf_counter()
                action = agents[player].act(state)
                thinking += time.perf_counter() - started
                state.apply(action)
                if action.type == ActionType.PASS:
                    break
            times.append(thinking * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="append", choices=("1.0", "1.2", "1.5"))
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--agent", default="learned")
    args = parser.parse_args()
    if args.games < 1:
        parser.error("--games must be at least 1")
    for version in args.version or ["1.0", "1.2", "1.5"]:
        times = sorted(turn_times(version, args.games, args.agent))
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        print(f"{args.agent} LOCM {version}: {len(times)} turns, median "
              f"{statistics.median(times):.2f} ms, 99th percentile {p99:.2f} ms, max "
              f"{times[-1]:.2f} ms ({describe(machine())})")  # fmt: skip


if __name__ == "__main__":
    run_script(main, "benchmarks/learned_turns.py")
