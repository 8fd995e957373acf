"""The runner with tasks that come lazily: asked for only when a worker is free, "nothing
now" answered by asking again, a dead worker still costing one task (real processes)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

from cardarena.tournaments.runner import run_tasks


def _square_or_die(task: int) -> int:
    if task == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return task * task


def test_a_lazy_source_is_asked_only_when_a_worker_is_free() -> None:
    results: list[int] = []
    taken: list[int] = []
    most_ahead = 0
    workers = 2

    def source() -> Iterator[int | None]:
        nonlocal most_ahead
        for task in range(8):
            if task % 3 == 0:
                for _ in range(2):  # nothing to play now, twice: asked again later
                    yield None
            taken.append(task)
            most_ahead = max(most_ahead, len(taken) - len(results))
            yield task

    run_tasks(
        _square_or_die,
        source(),
        results.append,
        workers=workers,
        lost=lambda task, why: -task,
        idle_s=0.01,
    )
    assert taken == list(range(8))
    assert sorted(results) == sorted([t * t for t in range(8) if t != 3] + [-3])
    assert most_ahead <= workers  # never asked for a task no worker could take


def test_an_empty_source_ends_at_once() -> None:
    results: list[int] = []
    run_tasks(_square_or_die, iter(()), results.append, workers=2)
    run_tasks(_square_or_die, [], results.append, workers=2)
    assert results == []
