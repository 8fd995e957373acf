"""Was a bot that ran out of time starved of CPU by the machine, or was it its own doing?

A tournament replays a game lost to a timeout only when the machine was at fault
(``locm tournament --retry-errors``). The machine's load average cannot say so: a bot
raises it itself by starting busy threads. What a bot cannot fake is having *wanted* to
run and not been let: over the turn that timed out, measured on the bot's own tasks,

* its CPU time (its cgroup's, every process and thread of it) stayed below
  :data:`SHARE` of the turn's limit — it was not busy thinking: a bot that used its
  time lost fairly, whatever else ran;
* its tasks together waited at least :data:`SHARE` of the limit *runnable, for a CPU*
  (the kernel's ``run_delay`` in ``/proc/PID/task/TID/schedstat``) — it was not asleep
  or blocked by choice: a sleeping bot waits for nothing (its own busy threads competing
  for the cores would have run on them, and shown as CPU time);
* none of its tasks lowered its own priority (a nice value above the referee's, the
  ``SCHED_BATCH``/``SCHED_IDLE`` policies, or its session's autogroup nice value above
  the referee's — none of which an unprivileged process can undo): a bot that made
  itself the machine's last choice starved itself.

Threads that exited during the turn take their waits with them: the measure can only
under-count, so its errors never replay a game. Where a bot has no cgroup (no CPU time
for its whole tree) or the kernel no schedstat, there is no measure, and no replay.
Built-in and ``python:`` agents, which think in the referee's own thread, are measured
on that thread.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

SHARE = 0.5
"""Starved: CPU time below, and time waiting for a CPU at least, this share of the limit."""
_LOW_PRIORITY_POLICIES = (3, 5)
"""SCHED_BATCH and SCHED_IDLE (``/proc/PID/stat`` field 41)."""


class Group(Protocol):
    """What is read of a bot's cgroup (:class:`.cgroups.BotCgroup`)."""

    def pids(self) -> list[int]: ...

    def cpu_ns(self) -> int | None: ...


@dataclass(frozen=True)
class Sample:
    """A bot's CPU time and its tasks' waits for a CPU at one moment."""

    cpu_ns: int
    waits_ns: dict[str, int]
    """Per task (``/proc`` path of its thread): nanoseconds spent runnable, not running."""
    self_slowed: bool = False
    """One of its tasks runs at a lower priority than the referee gave it."""


def _tasks(pids: Iterable[int]) -> list[str]:
    tasks = []
    for pid in pids:
        try:
            tasks += [f"/proc/{pid}/task/{tid}" for tid in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            continue  # exited meanwhile
    return tasks


def _wait_ns(task: str) -> int | None:
    """The task's ``run_delay``: time on a run queue waiting for a CPU."""
    try:
        with open(f"{task}/schedstat", "rb") as file:
            return int(file.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _slowed(task: str, nice: int) -> bool:
    """True if the task's nice value is above ``nice`` or its policy is batch or idle."""
    try:
        with open(f"{task}/stat", "rb") as file:
            fields = file.read().rpartition(b")")[2].split()
        return int(fields[16]) > nice or int(fields[38]) in _LOW_PRIORITY_POLICIES
    except (OSError, ValueError, IndexError):
        return False


def _autogroup_nice(process: str) -> int:
    """The nice value of the process's autogroup (its session's share of the CPU, where
    the kernel groups by session), 0 where there is none."""
    try:
        with open(f"{process}/autogroup", "rb") as file:
            return int(file.read().split()[-1])
    except (OSError, ValueError, IndexError):
        return 0


def _sample(cpu_ns: int | None, tasks: list[str], check_priority: bool) -> Sample | None:
    if cpu_ns is None:
        return None
    waits = {}
    for task in tasks:
        wait = _wait_ns(task)
        if wait is not None:
            waits[task] = wait
    if tasks and not waits:
        return None  # no schedstat on this kernel
    slowed = False
    if check_priority:
        nice = os.getpriority(os.PRIO_PROCESS, 0)
        group_nice = _autogroup_nice("/proc/self")
        processes = {task.partition("/task/")[0] for task in waits if "/task/" in task}
        slowed = any(_slowed(task, nice) for task in waits) or any(
            _autogroup_nice(process) > group_nice for process in processes
        )
    return Sample(cpu_ns, waits, slowed)


def sample_group(group: Group, check_priority: bool = False) -> Sample | None:
    """A bot process tree, by its cgroup (None if not measurable). ``check_priority`` at
    the end of a turn (reading each task's priority costs a file more)."""
    return _sample(group.cpu_ns(), _tasks(group.pids()), check_priority)


def sample_thread(check_priority: bool = False) -> Sample | None:
    """The calling thread (an in-process agent thinks in it)."""
    return _sample(time.thread_time_ns(), ["/proc/thread-self"], check_priority)


def starved(before: Sample | None, after: Sample | None, limit_s: float | None) -> bool | None:
    """True if the bot was starved of CPU between the samples (see the module), False if
    not, None where it could not be measured."""
    if before is None or after is None or limit_s is None:
        return None
    limit_ns = limit_s * 1e9
    cpu_ns = after.cpu_ns - before.cpu_ns
    wait_ns = sum(wait - before.waits_ns.get(task, 0) for task, wait in after.waits_ns.items())
    if after.self_slowed:
        return False
    return cpu_ns < SHARE * limit_ns and wait_ns >= SHARE * limit_ns
