"""Run many independent games in parallel: a local process pool or a Ray cluster.

The runner knows nothing about games: it maps a picklable ``play(task)`` over
tasks and hands each result to ``on_result`` *in the calling process*, where the
results store lives (one writer, no database contention). At most two tasks per
worker are in flight, so an interruption loses at most the games being played.

Interruptions: Ctrl-C or SIGTERM stop the submission of new games, cancel the
queued ones and stop the workers (whose referees terminate their bot
processes); the caller then sees :class:`Interrupted`. Workers also watch their
parent: if the tournament process is killed with SIGKILL, they stop themselves
instead of playing on as orphans.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

BACKENDS = ("process", "ray")
IN_FLIGHT_PER_WORKER = 2
PARENT_WATCH_S = 0.5


class Interrupted(Exception):
    """The run was stopped by Ctrl-C or SIGTERM; finished results were delivered."""

    def __init__(self, message: str, exit_status: int) -> None:
        super().__init__(message)
        self.exit_status = exit_status
        """What a command line should exit with: 128 + the signal number."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _watch_parent(main: int) -> None:
    """Worker side: when the tournament process dies (even by SIGKILL), stop this worker.

    The worker's parent may be a fork server rather than the tournament process
    itself, so both are watched: the parent changing, or the main process vanishing.
    """
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(PARENT_WATCH_S)
            if os.getppid() != parent or not _alive(main):
                os.kill(os.getpid(), signal.SIGTERM)
                return

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _worker_init(parent: int) -> None:
    _watch_parent(parent)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM into an exception in the main thread, so cleanup code runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Interrupted("terminated by SIGTERM", 128 + signal.SIGTERM)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_tasks(
    play: Callable[[T], R],
    tasks: Sequence[T],
    on_result: Callable[[R], None],
    *,
    workers: int,
    backend: str = "process",
    address: str | None = None,
) -> None:
    """Play every task; deliver each result as it comes. Raise Interrupted if stopped."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    if not tasks:
        return
    with _sigterm_as_interrupt():
        try:
            if backend == "ray":
                _run_ray(play, tasks, on_result, workers, address)
            else:
                _run_processes(play, tasks, on_result, workers)
        except KeyboardInterrupt:
            raise Interrupted("interrupted by Ctrl-C", 128 + signal.SIGINT) from None


def _run_processes(
    play: Callable[[T], R], tasks: Sequence[T], on_result: Callable[[R], None], workers: int
) -> None:
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=_context(),
        initializer=_worker_init,
        initargs=(os.getpid(),),
    )
    pending: set[Future[R]] = set()
    queue = iter(tasks)
    clean = False
    try:
        exhausted = False
        while True:
            while not exhausted and len(pending) < workers * IN_FLIGHT_PER_WORKER:
                task = next(queue, None)
                if task is None:
                    exhausted = True
                    break
                pending.add(pool.submit(play, task))
            if not pending:
                break
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                on_result(future.result())
        clean = True
    finally:
        if clean:
            pool.shutdown(wait=True)
        else:
            for future in pending:
                future.cancel()
            _stop_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)


def _context() -> multiprocessing.context.BaseContext:
    """fork on Linux: workers start at once and need no importable main script (a
    script without a ``__main__`` guard, or read from stdin, still works). The pool
    forks all its workers before its own thread starts. Elsewhere: the default."""
    if sys.platform == "linux":
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """SIGTERM the workers: their referees then terminate the bots they run."""
    processes: dict[int, Any] = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        with contextlib.suppress(ProcessLookupError, AttributeError):
            if process.is_alive():
                os.kill(process.pid, signal.SIGTERM)


def _run_ray(
    play: Callable[[T], R],
    tasks: Sequence[T],
    on_result: Callable[[R], None],
    workers: int,
    address: str | None,
) -> None:
    try:
        import ray
    except ImportError:
        raise RuntimeError(
            "the ray backend needs Ray: pip install 'cardarena[ray]' (or pip install ray)"
        ) from None
    started_here = not ray.is_initialized()
    if started_here:
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            options["address"] = address
        else:
            options["num_cpus"] = workers
        ray.init(**options)
    remote_play = ray.remote(num_cpus=1, max_retries=0)(play)
    in_flight = max(1, workers) * IN_FLIGHT_PER_WORKER
    pending: list[Any] = []
    queue = iter(tasks)
    try:
        exhausted = False
        while True:
            while not exhausted and len(pending) < in_flight:
                task = next(queue, None)
                if task is None:
                    exhausted = True
                    break
                pending.append(remote_play.remote(task))
            if not pending:
                break
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                on_result(ray.get(ref))
    finally:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        if started_here:
            ray.shutdown()
