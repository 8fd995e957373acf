"""Tournament throughput, and the referee's overhead over bare pipes.

    python benchmarks/tournament.py            # human-readable
    python benchmarks/tournament.py --json     # {"games_per_s_1": …, "games_per_s_2": …, …}

1. games/s of an in-process tournament of ``random`` vs ``greedy`` (LOCM 1.5, the
   real ``locm tournament`` code path: process pool, SQLite store, compressed logs)
   with 1 and with 2 workers; bar: 2 workers ≥ 1.7× one.
2. One game between two external bots that answer ``PASS`` at once (1.5: 105
   battle turns), through the referee and through bare pipes (the same input
   texts written and one line read per request, nothing else); bar: ≤ 2×.

Each figure is the median of ``--runs`` runs; the load average is printed with it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time

from cardarena.locm.referee.game_loop import play_game
from cardarena.locm.referee.protocol_game import ProtocolGame
from cardarena.locm.tournament import run_tournament
from cardarena.machine import describe, machine, run_script
from cardarena.tournaments.runner import Interrupted

PASS_BOT = """\
import sys
readline, write, flush = sys.stdin.readline, sys.stdout.write, sys.stdout.flush
while readline():
    readline()
    actions = int(readline().split()[1])
    for _ in range(actions):
        readline()
    for _ in range(int(readline())):
        readline()
    write("PASS\\n")
    flush()
"""


def tournament_rate(workers: int, games_per_pair: int, seed: int) -> float:
    with tempfile.TemporaryDirectory() as directory:
        db = os.path.join(directory, "bench.db")
        started = time.perf_counter()
        try:
            played = run_tournament(
                [("random", "builtin:random"), ("greedy", "builtin:greedy")],
                version="1.5", games=games_per_pair, workers=workers, seed=seed, db=db,
                progress=False,
            )  # fmt: skip
        except Interrupted as why:  # Ctrl-C (the runner stopped its workers): one line
            if why.exit_status == 128 + signal.SIGINT:
                raise KeyboardInterrupt from None
            raise
        return played / (time.perf_counter() - started)


def _requests(version: str, seed: int) -> list[tuple[int, str]]:
    """The (player, input) of every request of a PASS-vs-PASS game, in order."""
    game = ProtocolGame(version, {"seed": seed})
    out = []
    while requests := game.requests():
        out.extend((r.player, r.input) for r in requests)
        game.answer(["PASS"] * len(requests))
    return out


async def _bare_pipes(command: str, requests: list[tuple[int, str]]) -> None:
    bots = [
        await asyncio.create_subprocess_shell(
            command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        for _ in range(2)
    ]
    for player, text in requests:
        bot = bots[player]
        assert bot.stdin is not None and bot.stdout is not None
        bot.stdin.write(text.encode())
        await bot.stdout.readline()
    for bot in bots:
        assert bot.stdin is not None
        bot.stdin.close()
        await bot.wait()


def referee_overhead(runs: int, seed: int) -> tuple[float, float]:
    """Median seconds per game: through the referee, through bare pipes."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as bot:
        bot.write(PASS_BOT)
    # Readable by all, as a bot's files must be: run as root, the sandbox runs the bot as
    # an unprivileged user of its own (a temporary file is its owner's alone).
    os.chmod(bot.name, 0o644)
    command = f"{sys.executable} {bot.name}"
    requests = _requests("1.5", seed)
    referee, bare = [], []
    try:
        for _ in range(runs):
            started = time.perf_counter()
            outcome = play_game(command, command, version="1.5", params={"seed": seed})
            referee.append(time.perf_counter() - started)
            assert outcome.error_player is None
            started = time.perf_counter()
            asyncio.run(_bare_pipes(command, requests))
            bare.append(time.perf_counter() - started)
    finally:
        os.unlink(bot.name)
    return statistics.median(referee), statistics.median(bare)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400, help="games per ordered pair")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    one = statistics.median(tournament_rate(1, args.games, args.seed + r) for r in range(args.runs))
    two = statistics.median(tournament_rate(2, args.games, args.seed + r) for r in range(args.runs))
    referee, bare = referee_overhead(args.runs, args.seed)
    result = {
        "games_per_s_1": round(one, 1),
        "games_per_s_2": round(two, 1),
        "speedup_2_workers": round(two / one, 2),
        "referee_game_s": round(referee, 4),
        "bare_pipes_game_s": round(bare, 4),
        "referee_over_bare": round(referee / bare, 2),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "machine": machine(),
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"in-process random vs greedy, LOCM 1.5, {2 * args.games} games per run:")
    print(f"  1 worker : {one:7.1f} games/s")
    print(f"  2 workers: {two:7.1f} games/s  ({two / one:.2f}x; bar 1.7x)")
    print("PASS vs PASS bot processes, one 1.5 game (105 battle turns):")
    print(f"  referee   : {referee * 1000:7.1f} ms")
    print(f"  bare pipes: {bare * 1000:7.1f} ms  (referee {referee / bare:.2f}x; bar 2x)")
    print(describe(result["machine"]))  # type: ignore[arg-type]


if __name__ == "__main__":
    run_script(main, "benchmarks/tournament.py")
