"""Where a measurement was made, and how a measuring script ends on Ctrl-C.

Speed figures depend on the CPU and on what else runs on it: the benchmarks
(``benchmarks/*.py``) put :func:`machine` — the CPU model, its cores, the load
average before and after — beside every figure they print, and end through
:func:`run_script`, so that Ctrl-C is one line and exit status 130 (the shell's
for SIGINT), not a traceback from each process. Standard library only.
"""

from __future__ import annotations

import os
import platform
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, NoReturn

EXIT_SIGINT = 130


def cpu_model() -> str:
    """The CPU's model name, as /proc/cpuinfo gives it (elsewhere, what Python knows)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def load_average() -> list[float] | None:
    """The 1-, 5- and 15-minute load averages (None where the system has none)."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def machine(load_before: list[float] | None = None) -> dict[str, Any]:
    """The facts a figure needs beside it: ``{"cpu", "cores", "load_average"}``, and
    ``load_average_before`` when the caller took one at its start."""
    facts: dict[str, Any] = {"cpu": cpu_model(), "cores": os.cpu_count(),
                             "load_average": load_average()}  # fmt: skip
    if load_before is not None:
        facts["load_average_before"] = load_before
    return facts


def describe(facts: dict[str, Any]) -> str:
    """One line for a table's heading: ``CPU, N cores, load average 1.23``."""
    load = facts.get("load_average")
    shown = "unknown" if not load else f"{load[0]:.2f}"
    return f"{facts['cpu']}, {facts['cores']} cores, load average {shown}"


def ignore_sigint() -> None:
    """A worker process's initializer: Ctrl-C reaches every process of the terminal's
    group, and only the parent should answer it (with one line). Also lifts the block
    :func:`worker_pool` forks under (a Ctrl-C pending then is dropped: ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool whose workers ignore Ctrl-C (the parent answers it alone).

    The workers are started here, with SIGINT blocked for the moment of their fork: a
    worker still starting would print a traceback, and a Ctrl-C in that moment is not
    lost, it reaches the parent (only) as soon as the workers exist."""
    pool = ProcessPoolExecutor(workers, initializer=ignore_sigint)
    if threading.current_thread() is not threading.main_thread():
        return pool
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pool.submit(int)  # starts the workers now (forked: they inherit the block)
    finally:
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # a pending Ctrl-C: now
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise
    return pool


def run_script(main: Callable[[], int | None], name: str) -> NoReturn:
    """Exit with ``main()``'s status; on Ctrl-C print ``NAME: interrupted`` and exit 130.

    Every process the script forks (multiprocessing workers, helpers) starts with Ctrl-C
    ignored: the script alone answers it, and stops them in its own clean-up."""
    os.register_at_fork(after_in_child=ignore_sigint)
    try:
        status = main()
    except KeyboardInterrupt:
        sys.stdout.flush()
        print(f"{name}: interrupted", file=sys.stderr)
        sys.exit(EXIT_SIGINT)
    sys.exit(status or 0)
