"""Viewer page cost: time to re-simulate a logged game and write its HTML page, and its size.

``locm report --html`` writes one page per stored game and ``locm serve`` builds them on
request, so this is what a tournament of N games costs: N times the figure below.
Logs are made first (greedy vs random, in-process, seeds 1..N); only the page is timed.

    python benchmarks/viewer_pages.py              # a table, medians of --runs runs
    python benchmarks/viewer_pages.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

from cardarena.locm.engine.rules import VERSIONS
from cardarena.locm.referee.game_loop import play_game
from cardarena.locm.viewer.page import viewer_html
from cardarena.machine import describe, machine, run_script


def logs(version: str, games: int) -> list[dict[str, Any]]:
    return [
        play_game("builtin:greedy", "builtin:random", version=version, params={"seed": seed},
                  sandbox=False).log
        for seed in range(1, games + 1)
    ]  # fmt: skip


def time_pages(game_logs: list[dict[str, Any]]) -> tuple[float, int]:
    """(seconds per page, bytes per page) over the logs, one pass."""
    start = time.perf_counter()
    size = sum(len(viewer_html(log).encode("utf-8")) for log in game_logs)
    return (time.perf_counter() - start) / len(game_logs), size // len(game_logs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {}
    for version in VERSIONS:
        game_logs = logs(version, args.games)
        runs = [time_pages(game_logs) for _ in range(args.runs)]
        results[version] = {
            "ms_per_page": statistics.median(seconds for seconds, _ in runs) * 1000,
            "kb_per_page": runs[0][1] / 1024,
        }
    load = os.getloadavg()[0]
    facts = machine()
    if args.json:
        print(json.dumps({"load_1min": load, **results, "machine": facts}))
        return
    print(f"viewer pages, greedy vs random, {args.games} games x {args.runs} runs "
          f"({describe(facts)})")  # fmt: skip
    print(f"{'version':>8} {'ms/page':>9} {'KiB/page':>9}")
    for version, figures in results.items():
        print(f"{version:>8} {figures['ms_per_page']:9.1f} {figures['kb_per_page']:9.0f}")


if __name__ == "__main__":
    run_script(main, "benchmarks/viewer_pages.py")
