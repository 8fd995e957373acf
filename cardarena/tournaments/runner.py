"""Run many independent games in parallel: a local process pool or a Ray cluster.

The runner knows nothing about games: it maps a picklable ``play(task)`` over
tasks and hands each result to ``on_result`` *in the calling process*, where the
results store lives (one writer, no database contention).

Tasks may be a list or come lazily from an iterator (the ladder's scheduler): the
runner asks for the next task only when a worker is free, so what is played next is
decided as late as possible; an iterator may answer None (nothing to play now: the
runner asks again after ``idle_s`` or as soon as a game ends) and runs until it is
exhausted or the run is stopped.

The local pool is our own, not :class:`concurrent.futures.ProcessPoolExecutor`:
each worker plays one task at a time over its own pipe, so the parent always
knows which game a worker is playing. A worker that dies for any reason (killed,
out of memory, a bot that signalled it) costs exactly that game: ``lost(task,
why)`` turns it into a result (for LOCM: a referee failure, replayed on resume)
and a fresh worker takes its place. A pool executor would instead break as a
whole and fail every game in flight.

Interruptions: Ctrl-C or SIGTERM stop the submission of new games, deliver the
results already waiting in the pipes and stop the workers (whose referees terminate
their bot processes; each worker reads end-of-file on its pipe and exits at once);
the caller then sees :class:`Interrupted`. If the tournament process is killed outright (SIGKILL),
its workers get SIGTERM from the kernel (Linux ``PR_SET_PDEATHSIG``) and a
watchdog thread checks the parent twice a second as a fallback elsewhere.

Workers are forked (Linux): they start at once and need no importable main
script. The tournament's lock descriptor is closed in every forked child (see
:mod:`.store`), so a worker never holds the lock.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

BACKENDS = ("process", "ray")
IN_FLIGHT_PER_WORKER = 2
"""Ray only: tasks in flight per worker."""
PARENT_WATCH_S = 0.5
WORKER_WATCH_S = 1.0
"""The tournament process looks at every busy worker at least this often, even if neither
its pipe nor its exit said anything: no wait for a worker is ever unbounded."""
STOP_GRACE_S = 5.0
"""How long stopped workers get to terminate their bots before they are killed."""
PR_SET_PDEATHSIG = 1
IDLE_S = 0.25
"""How soon a lazy source that had nothing to play is asked again (if no game ends first)."""


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


def die_with_parent(parent: int) -> None:
    """Worker side: get SIGTERM when the tournament process dies, even by SIGKILL.

    Linux: the kernel's parent-death signal (set after the fork, so the check
    below closes the race with a parent that died in between). Everywhere: a
    watchdog thread that notices a changed parent or a vanished main process.
    SIGTERM makes a worker's referee terminate its bots, then the worker exits.
    """
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent or not _alive(parent):
        os._exit(1)
    first_parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(PARENT_WATCH_S)
            if os.getppid() != first_parent or not _alive(parent):
                os.kill(os.getpid(), signal.SIGTERM)
                return

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


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


def _python_handlers() -> dict[int, Any]:
    """The SIGTERM and SIGINT handlers as Python knows them (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}


def _restore(handlers: dict[int, Any]) -> None:
    """Install ``handlers`` again over whatever a library set in C meanwhile (``ray.init``
    sets a SIGTERM handler of its own that logs a stack and exits: Ctrl-C and SIGTERM must
    stay one clean stop that keeps the finished games)."""
    for signum, handler in handlers.items():
        if handler is not None:
            signal.signal(signum, handler)


def _stoppable(call: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """``call(...)``, a blocking Ray call; Ctrl-C or SIGTERM during it stops it as
    anywhere else (Ray's compiled code hands the handler's exception on wrapped in a
    SystemError)."""
    try:
        return call(*args, **kwargs)
    except SystemError as error:
        if isinstance(error.__cause__, (Interrupted, KeyboardInterrupt)):
            raise error.__cause__ from None
        raise


class _Source(Generic[T]):
    """The tasks, taken one at a time when a worker is free."""

    def __init__(self, tasks: Iterable[T | None]) -> None:
        self._tasks = iter(tasks)
        self.exhausted = False
        self.waiting = False
        """True if the last ask got None: nothing to play now, ask again soon."""

    def take(self) -> T | None:
        """The next task; None if there is none now (``waiting``) or ever (``exhausted``)."""
        if self.exhausted:
            return None
        try:
            task = next(self._tasks)
        except StopIteration:
            self.exhausted, self.waiting = True, False
            return None
        self.waiting = task is None
        return task


def run_tasks(
    play: Callable[[T], R],
    tasks: Iterable[T | None],
    on_result: Callable[[R], None],
    *,
    workers: int,
    backend: str = "process",
    address: str | None = None,
    lost: Callable[[T, str], R] | None = None,
    worker_died: Callable[[int], object] | None = None,
    idle_s: float = IDLE_S,
) -> None:
    """Play every task; deliver each result as it comes. Raise Interrupted if stopped.

    ``tasks``: a sequence, or an iterator asked for the next task only when a worker is
    free; it may yield None (nothing now: asked again after ``idle_s``, or when a game ends).

    ``lost(task, why)`` makes a result for a task whose worker died or whose
    ``play`` raised; without it such a task raises RuntimeError. ``worker_died(pid)``
    (process backend) cleans up after a worker that died mid-task, before ``lost``.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    if isinstance(tasks, Sequence) and not tasks:
        return
    source: _Source[T] = _Source(tasks)

    def give_up(task: T, why: str) -> None:
        if lost is None:
            raise RuntimeError(why)
        on_result(lost(task, why))

    with _sigterm_as_interrupt():
        try:
            if backend == "ray":
                _run_ray(play, source, on_result, give_up, workers, address, idle_s)
            else:
                _run_processes(play, source, on_result, give_up, workers, worker_died, idle_s)
        except KeyboardInterrupt:
            raise Interrupted("interrupted by Ctrl-C", 128 + signal.SIGINT) from None


def _worker_main(
    conn: multiprocessing.connection.Connection, parent: int, play: Callable[[Any], Any]
) -> None:
    """Play the tasks that come down the pipe, one at a time, until told to stop."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C stops
        die_with_parent(parent)
        while True:
            try:
                item = conn.recv()
            except (EOFError, OSError):
                return
            if item is None:
                return
            try:
                reply = (True, play(item))
            except Exception as error:  # the caller records the game as failed
                reply = (False, f"{type(error).__name__}: {error}")
            try:
                conn.send(reply)
            except (OSError, ValueError):
                return
    except BaseException:  # stopped (SIGTERM, the parent gone): leave quietly
        return


@dataclass
class _Worker(Generic[T]):
    process: Any
    conn: multiprocessing.connection.Connection
    task: T | None = None


_PARENT_ENDS: weakref.WeakSet[multiprocessing.connection.Connection] = weakref.WeakSet()
"""The tournament process's ends of the worker pipes."""


def _close_parent_ends_in_child() -> None:
    """After a fork: close the child's copies of the tournament process's pipe ends.

    A worker must be the only holder of its pipe besides the tournament process, so that
    it reads end-of-file as soon as that process closes its end (a stop) or dies; a copy
    kept by the worker itself or by a sibling would leave it waiting for a task forever.
    """
    for conn in list(_PARENT_ENDS):
        with contextlib.suppress(OSError):
            conn.close()
    _PARENT_ENDS.clear()


os.register_at_fork(after_in_child=_close_parent_ends_in_child)


def _start_worker(play: Callable[[T], R]) -> _Worker[T]:
    context = _context()
    parent_end, child_end = context.Pipe()
    _PARENT_ENDS.add(parent_end)
    process = context.Process(  # type: ignore[attr-defined]
        target=_worker_main, args=(child_end, os.getpid(), play), daemon=True,
        name="cardarena-worker",
    )  # fmt: skip
    process.start()
    child_end.close()
    return _Worker(process, parent_end)


def _death(process: Any) -> str:
    process.join(1.0)
    code = process.exitcode
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exited with status {code}"


def _run_processes(
    play: Callable[[T], R],
    source: _Source[T],
    on_result: Callable[[R], None],
    give_up: Callable[[T, str], None],
    workers: int,
    worker_died: Callable[[int], object] | None = None,
    idle_s: float = IDLE_S,
) -> None:
    pool: list[_Worker[T]] = []
    clean = False
    try:
        while True:
            _hand_out(play, source, pool, workers)
            busy = [w for w in pool if w.task is not None]
            if not busy:
                if source.exhausted:
                    break
                time.sleep(idle_s)  # nothing to play now: ask again in a moment
                continue
            watch = idle_s if source.waiting and len(busy) < workers else WORKER_WATCH_S
            waitables: list[Any] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
            ready = set(multiprocessing.connection.wait(waitables, watch))
            for worker in pool:
                task = worker.task
                if task is None:
                    continue
                gone = not ready and not worker.process.is_alive()  # missed by wait()?
                if gone or worker.conn in ready or worker.process.sentinel in ready:
                    reply = None
                    with contextlib.suppress(EOFError, OSError):
                        if worker.conn.poll():
                            reply = worker.conn.recv()
                    if reply is not None:
                        worker.task = None
                        ok, value = reply
                        if ok:
                            on_result(value)
                        else:
                            give_up(task, f"the referee failed: {value}")
                    elif worker.process.sentinel in ready or not worker.process.is_alive():
                        worker.task = None
                        why = _death(worker.process)
                        worker.conn.close()
                        if worker_died is not None:
                            worker_died(worker.process.pid)
                        give_up(task, f"the worker playing this game {why}")
        clean = True
    finally:
        try:
            if not clean:
                _deliver_finished(pool, on_result)
        finally:
            _stop_workers(pool, gently=clean)


def _hand_out(
    play: Callable[[T], R], source: _Source[T], pool: list[_Worker[T]], workers: int
) -> None:
    """Give every free worker a task while the source has one (a dead idle worker is
    replaced, and the pool grows up to ``workers``, only when there is a task for it)."""
    while True:
        free = next((i for i, w in enumerate(pool) if w.task is None), None)
        if free is None and len(pool) >= workers:
            return
        task = source.take()
        if task is None:
            return
        if free is None:
            pool.append(_start_worker(play))
            free = len(pool) - 1
        elif not pool[free].process.is_alive():  # died between games
            with contextlib.suppress(OSError):
                pool[free].conn.close()
            pool[free] = _start_worker(play)
        worker = pool[free]
        worker.task = task
        with contextlib.suppress(OSError):  # if it died, its sentinel tells
            worker.conn.send(task)


def _deliver_finished(pool: Sequence[_Worker[Any]], on_result: Callable[[Any], None]) -> None:
    """Interrupted: hand over the results already waiting in the pipes (games that ended
    just before the stop), so that they are kept rather than played again."""
    for worker in pool:
        if worker.task is None:
            continue
        with contextlib.suppress(EOFError, OSError):
            if worker.conn.poll(0):
                ok, value = worker.conn.recv()
                worker.task = None
                if ok:
                    on_result(value)


def _context() -> multiprocessing.context.BaseContext:
    """fork on Linux: workers start at once and need no importable main script (a
    script without a ``__main__`` guard, or read from stdin, still works); the lock
    descriptor is closed in the child right after the fork. Elsewhere: the default."""
    if sys.platform == "linux":
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _stop_workers(pool: Sequence[_Worker[Any]], *, gently: bool) -> None:
    """Finished: ask the workers to exit. Interrupted: SIGTERM them (their referees
    terminate the bots they run) and close their pipes (an idle worker, or one whose game
    the SIGTERM just ended, reads end-of-file and exits at once), then kill what is left
    after a grace period."""
    for worker in pool:
        if gently:
            with contextlib.suppress(OSError, ValueError):
                worker.conn.send(None)
            continue
        if worker.process.is_alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker.process.pid, signal.SIGTERM)
        with contextlib.suppress(OSError):
            worker.conn.close()
    deadline = time.monotonic() + STOP_GRACE_S
    for worker in pool:
        worker.process.join(max(0.0, deadline - time.monotonic()))
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join(1.0)
        with contextlib.suppress(OSError):
            worker.conn.close()


def _run_ray(
    play: Callable[[T], R],
    source: _Source[T],
    on_result: Callable[[R], None],
    give_up: Callable[[T, str], None],
    workers: int,
    address: str | None,
    idle_s: float = IDLE_S,
) -> None:
    try:
        import ray
    except ImportError:
        raise RuntimeError(
            'the ray backend needs Ray: pip install ".[ray]" in the cardarena folder, or pip '
            "install ray"
        ) from None
    started_here = not ray.is_initialized()
    if started_here:
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            options["address"] = address
        else:
            options["num_cpus"] = workers
        handlers = _python_handlers()
        ray.init(**options)
        _restore(handlers)  # Ray's own SIGTERM handler would end the process at once
    remote_play = ray.remote(num_cpus=1, max_retries=0)(play)
    in_flight = max(1, workers) * IN_FLIGHT_PER_WORKER
    pending: list[Any] = []
    task_of: dict[Any, T] = {}
    try:
        while True:
            while len(pending) < in_flight:
                task = source.take()
                if task is None:
                    break
                ref = remote_play.remote(task)
                task_of[ref] = task
                pending.append(ref)
            if not pending:
                if source.exhausted:
                    break
                time.sleep(idle_s)  # nothing to play now: ask again in a moment
                continue
            timeout = idle_s if source.waiting else None
            done, pending = _stoppable(ray.wait, pending, num_returns=1, timeout=timeout)
            for ref in done:
                task = task_of.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayError as error:
                    give_up(task, f"the Ray worker failed: {type(error).__name__}")
                    continue
                on_result(result)
    finally:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        if started_here:
            ray.shutdown()
