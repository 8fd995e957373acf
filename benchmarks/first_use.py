"""First use of the compiled engine: docs/envs.md's ``gymnasium.make_vec`` example on an
empty numba cache, then again on the cache it filled.

Each run is a fresh Python process with its own ``NUMBA_CACHE_DIR`` (a new empty folder,
then the same folder again); it makes the vector env (``cardarena/LOCM-battle-v0``, 4 games,
1.2), resets it and takes 300 steps of ``envs.action_space.sample()``. Printed per run: the
CPU seconds (user + system, the process and its threads) and wall seconds until the env
is ready to step (``make_vec`` + ``reset``), of the 300 steps, of the whole process, and
when its first line reached stderr (the compile notice) after the start. CPU seconds are
the fair figure on a shared machine: other processes slow the wall clock, hardly the CPU
time.

    python benchmarks/first_use.py            # a table
    python benchmarks/first_use.py --json     # {"empty_cache": {...}, "warm_cache": {...}}
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cardarena.machine import describe, machine, run_script

EXAMPLE = """
import json, time
cpu = time.process_time
start_cpu, start = cpu(), time.monotonic()
import gymnasium as gym
import cardarena.locm.envs
envs = gym.make_vec("cardarena/LOCM-battle-v0", num_envs=4, version="1.2",
                    vectorization_mode="vector_entry_point")
obs, info = envs.reset(seed=1)
ready_cpu, ready = cpu(), time.monotonic()
for _ in range(300):
    obs, rewards, terminated, truncated, info = envs.step(envs.action_space.sample())
envs.close()
print(json.dumps({"ready_cpu_s": ready_cpu - start_cpu, "ready_wall_s": ready - start,
                  "steps_cpu_s": cpu() - ready_cpu, "steps_wall_s": time.monotonic() - ready}))
"""


def run_example(cache: str) -> dict[str, Any]:
    """The example in a new process with numba's cache in ``cache``: its figures."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    env.pop("CARDARENA_QUIET_COMPILE", None)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, "-c", EXAMPLE], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    lines: list[tuple[float, str]] = []

    def read_stderr() -> None:
        assert child.stderr is not None
        for line in child.stderr:
            lines.append((time.monotonic() - started, line.rstrip("\n")))

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    assert child.stdout is not None
    output = child.stdout.read()
    _pid, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    wall = time.monotonic() - started
    if child.returncode != 0:
        raise SystemExit("the example failed:\n" + "\n".join(line for _t, line in lines))
    figures = json.loads(output)
    figures = {key: round(value, 2) for key, value in figures.items()}
    figures["process_cpu_s"] = round(usage.ru_utime + usage.ru_stime, 2)
    figures["process_wall_s"] = round(wall, 2)
    figures["first_stderr_line_s"] = round(lines[0][0], 2) if lines else None
    figures["stderr_lines"] = [line for _t, line in lines]
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    load_before = machine()["load_average"]
    with tempfile.TemporaryDirectory(prefix="first-use-cache-") as cache:
        results: dict[str, Any] = {"empty_cache": run_example(cache),
                                   "warm_cache": run_example(cache)}  # fmt: skip
    results["machine"] = machine(load_before)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"docs/envs.md's make_vec example, {describe(results['machine'])} "
          f"(before: {load_before[0] if load_before else 'unknown'})")  # fmt: skip
    print(f"{'cache':<7} {'ready CPU s':>11} {'ready wall s':>12} {'300 steps CPU s':>15} "
          f"{'process CPU s':>13} {'first stderr line s':>19}")  # fmt: skip
    for name in ("empty_cache", "warm_cache"):
        run = results[name]
        first = run["first_stderr_line_s"]
        print(f"{name.split('_')[0]:<7} {run['ready_cpu_s']:>11.1f} {run['ready_wall_s']:>12.1f} "
              f"{run['steps_cpu_s']:>15.1f} {run['process_cpu_s']:>13.1f} "
              f"{'-' if first is None else f'{first:.1f}':>19}")  # fmt: skip
    for line in results["empty_cache"]["stderr_lines"]:
        print(f"  stderr: {line}")
    return 0


if __name__ == "__main__":
    run_script(main, "first_use")
