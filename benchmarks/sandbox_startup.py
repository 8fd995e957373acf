"""What the bot sandbox costs at start-up, and how much of it a bot's clock sees.

    python benchmarks/sandbox_startup.py              # 21 runs of each
    python benchmarks/sandbox_startup.py --runs 51 --bot "python3 my_bot.py"

For each run, a bot is started through :class:`ProcessPlayer` with and without the
sandbox, sent one line, and timed: ``start`` is what the referee spends before the
bot's clock starts (with the sandbox: until the sandbox is set up and about to run
the bot), ``first answer`` is from writing the input to reading the answer line —
the part that counts against the bot's first-turn limit. Prints medians.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from cardarena.locm.referee import sandbox
from cardarena.locm.referee.players import ProcessPlayer
from cardarena.machine import describe, machine, run_script

DEFAULT_BOT = "sh -c 'read line; echo PASS'"


async def one_run(command: str, sandboxed: bool) -> tuple[float, float]:
    player = ProcessPlayer(command, sandbox=sandboxed)
    started = time.perf_counter()
    await player.start()
    ready = time.perf_counter()
    await player.send("go\n", None, 0)  # type: ignore[arg-type]
    line = await player.receive(30.0)
    answered = time.perf_counter()
    await player.close()
    assert line is not None, "the bot did not answer"
    assert player.sandboxed == sandboxed
    return ready - started, answered - ready


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--bot", default=DEFAULT_BOT, help="a bot that answers one line")
    args = parser.parse_args()
    if not sandbox.support().ok:
        raise SystemExit(f"no sandbox here: {sandbox.support().reason}")
    results: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for _ in range(args.runs):
        for sandboxed in (False, True):  # interleaved: both see the same machine load
            results[sandboxed].append(asyncio.run(one_run(args.bot, sandboxed)))
    print(f"bot: {args.bot!r}, {args.runs} runs each; {describe(machine())}")
    for sandboxed, runs in results.items():
        start = statistics.median(r[0] for r in runs) * 1000
        answer = statistics.median(r[1] for r in runs) * 1000
        label = "sandboxed  " if sandboxed else "unsandboxed"
        print(f"{label}: start {start:6.1f} ms (not on the clock), first answer {answer:6.1f} ms")


if __name__ == "__main__":
    run_script(main, "benchmarks/sandbox_startup.py")
