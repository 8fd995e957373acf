"""Whole batches on several threads: disjoint slices of games, each stepped by compiled
code that releases the GIL, so one process uses every core it is given.

The games of a batch are independent (each has its own random stream), so a batch cut
into slices gives the very games of one thread, in any number of slices.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def thread_count(threads: int | None) -> int:
    """``threads`` checked (a positive integer); None: the cores this process may use."""
    if threads is None:
        try:
            return len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            return os.cpu_count() or 1
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    return threads


def slices(n: int, threads: int, minimum: int = 1) -> list[tuple[int, int]]:
    """``(first, stop)`` of at most ``threads`` disjoint, near-equal slices covering
    ``range(n)``, none smaller than ``minimum`` games (at least one slice)."""
    count = max(1, min(threads, n // max(1, minimum)))
    edges = np.linspace(0, n, count + 1).astype(int).tolist()
    return list(itertools.pairwise(edges))


def run_all(calls: list[Callable[[], object]], pool: ThreadPoolExecutor | None = None) -> None:
    """Run the calls at once, the first on this thread and the others on ``pool`` (a
    fresh pool when None and there are several); wait for all, re-raising the first error."""
    if len(calls) == 1:
        calls[0]()
        return
    own = pool is None
    executor = ThreadPoolExecutor(len(calls) - 1) if pool is None else pool
    try:
        others = [executor.submit(call) for call in calls[1:]]
        calls[0]()
        for other in others:
            other.result()
    finally:
        if own:
            executor.shutdown()
