"""Background CPU burners against a well-behaved bot, with and without bot cgroups.

    sudo python benchmarks/cpu_isolation.py                      # seeds 1-6, --time-scale 4
    sudo python benchmarks/cpu_isolation.py --games 10 --children 32 --scale 2

Each game is ``locm play`` (1.5, sandbox on) between a hostile bot that, at its first
input, starts CHILDREN processes that leave its session (``setsid``) and its process
tree (a double fork) and spin, then answers PASS, and a well-behaved bot that spends 60
ms of CPU on every answer (the test bots of ``tests/locm/test_cgroups.py``). Each seed is
played with ``CARDARENA_CGROUPS=off`` and with the default; the script prints, per
setting, the games the well-behaved bot lost by timing out, its median and worst battle
turn (ms) and the load average. Bot cgroups need root or a delegated cgroup (see
docs/referee.md, "CPU isolation").

Then what holding a bot to its turns costs: the median round trip (ms) of 200 one-line
turns of a bot that answers at once, with and without cgroups (thawing on the input,
freezing on the answer), with and without the sandbox.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cardarena.locm.referee.players import ProcessPlayer  # noqa: E402
from cardarena.machine import describe, machine, run_script  # noqa: E402
from tests.locm.bots import BOTS  # noqa: E402
from tests.locm.test_cgroups import HOSTILE, WELL_BEHAVED  # noqa: E402

ECHO_BOT = "python3 -u -c 'import sys\nfor line in sys.stdin: print(\"PASS\")'"

TIMING = re.compile(r"\$(\d) (\d+)ns at turn (\d+)")


def play(hostile: str, honest: str, seed: int, scale: float, mode: str) -> dict:
    env = dict(os.environ, CARDARENA_CGROUPS=mode)
    done = subprocess.run(
        [sys.executable, "-m", "cardarena.locm", "play", "-p1", hostile, "-p2", honest,
         "--version", "1.5", "--time-scale", str(scale), "-d", f"seed={seed}",
         "-l", "/dev/stdout"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.splitlines()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--children", type=int, default=16)
    parser.add_argument("--scale", type=float, default=4.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        hostile_py = Path(folder) / "hostile.py"
        hostile_py.write_text(HOSTILE.replace("range(16)", f"range({args.children})"))
        honest_py = Path(folder) / "honest.py"
        honest_py.write_text(WELL_BEHAVED)
        # The honest bot imports the test bots' helpers: its command names their folder,
        # so that the sandbox shows it.
        hostile, honest = f"python3 {hostile_py}", f"python3 {honest_py} {BOTS}"
        print(f"CPU: {describe(machine())}; {args.children} children, "
              f"--time-scale {args.scale}")  # fmt: skip
        for mode in ("off", "auto"):
            timeouts, turns, loads = 0, [], []
            for seed in range(1, args.games + 1):
                log = play(hostile, honest, seed, args.scale, mode)
                timeouts += log["cardarena"]["errorPlayer"] == 1
                summary = "".join(log["summaries"])
                turns += [int(ns) / 1e6 for player, ns, turn in TIMING.findall(summary)
                          if player == "1" and int(turn) > 1]  # fmt: skip
                loads.append(os.getloadavg()[0])
            print(
                f"CARDARENA_CGROUPS={mode}: {timeouts}/{args.games} games lost by timeout; "
                f"battle turn median {statistics.median(turns):.0f} ms, worst "
                f"{max(turns):.0f} ms; load average {min(loads):.1f}-{max(loads):.1f}"
            )
        for sandboxed in (False, True):
            for mode in ("off", "auto"):
                runs = [asyncio.run(round_trips(mode, sandboxed, 200)) for _ in range(5)]
                median = statistics.median(ms for ms, _ in runs)
                print(
                    f"round trip, {'sandbox' if sandboxed else 'no sandbox'}, "
                    f"CARDARENA_CGROUPS={mode} (cgroup used: {runs[0][1]}): {median:.3f} ms "
                    f"(median of 5 x 200 turns; load average {os.getloadavg()[0]:.1f})"
                )


async def round_trips(mode: str, sandboxed: bool, turns: int) -> tuple[float, bool]:
    """Median ms from sending a line to reading the answer; whether a cgroup was used."""
    os.environ["CARDARENA_CGROUPS"] = mode
    player = ProcessPlayer(ECHO_BOT, sandbox=sandboxed)
    await player.start()
    times = []
    try:
        for _ in range(turns):
            started = time.perf_counter()
            await player.send("go\n", None, 0)  # type: ignore[arg-type]
            assert await player.receive(30.0) == "PASS"
            times.append((time.perf_counter() - started) * 1000)
    finally:
        await player.close()
    return statistics.median(times), player.cpu_ns is not None


if __name__ == "__main__":
    run_script(main, "benchmarks/cpu_isolation.py")
