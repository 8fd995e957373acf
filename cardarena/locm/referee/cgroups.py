"""A cgroup per bot: its whole process tree frozen while the other player thinks.

The per-turn clock measures a bot's answer, not its background processes: children
that left its process group (``setsid``, a double fork) could burn CPU through the
opponent's turns and make the opponent time out. Here each bot process tree gets a
control group of its own, entered by the spawned process before the bot's code runs
(so every descendant is inside from the start, whatever it does to its session or
parent). The referee thaws the group when the bot is sent its input and freezes it
as soon as its answer has arrived; it reads the group's CPU time; and at the end it
kills everything in the group and removes it.

Two kinds of cgroup are used, whichever the machine lets the referee write:

* **v2** (the unified hierarchy: ``/sys/fs/cgroup`` on systemd machines, or
  ``/sys/fs/cgroup/unified`` on hybrid ones), a child of the referee's own cgroup:
  ``cgroup.freeze``, ``cpu.stat`` (``usage_usec``) and ``cgroup.kill`` are core files
  that need no controller. Root can always write there; another user only where the
  cgroup is delegated to them (``systemd-run --user --scope -p Delegate=yes``).
* **v1**: a ``freezer`` group and a ``cpuacct`` group of the same name.

Where neither can be had, :func:`create` warns once and returns None, and bots run
as before. ``CARDARENA_CGROUPS`` = ``auto`` (default), ``v2``, ``v1`` or ``off``
chooses.

The same cgroup holds the bot to a **memory budget** (:class:`MemoryGroup`): the memory
controller counts every page of the whole tree (heap, ``memfd`` and tmpfs files, page
tables, forked children), swap off, and an OOM kill happens inside the bot's group, never
to its opponent, the referee or the tournament. The memory controller is found apart from
the freezer: a v2 one where the referee's cgroup hands it to its children
(``cgroup.subtree_control``), else a v1 ``memory`` hierarchy (hybrid machines). Where
none can be had, :func:`create` warns once and each bot process keeps only its address
space cap (:class:`~cardarena.locm.referee.sandbox.Limits`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

MODE_VARIABLE = "CARDARENA_CGROUPS"
MODES = ("auto", "v2", "v1", "off")
NAME_PREFIX = "cardarena-"
"""Every bot cgroup's name starts with this, then the referee's pid and a random token."""
REMOVE_TIMEOUT_S = 5.0
"""How long removing a cgroup waits for the kernel to finish killing what was in it."""
ENTER_FAILED = 125
"""Exit status of a spawned process that could not enter its cgroup (the bot never runs)."""
PROBE_TIMEOUT_S = 20.0
DEFAULT_MEMORY_MB = 768
"""A bot's memory budget by default, in MiB: what CodinGame gave LOCM bots."""
MIN_MEMORY_MB = 32
"""The smallest budget accepted: the sandbox and a shell must fit in it to start a bot."""
REACHED_MARGIN = 1 << 20
"""A v1 group whose peak came this close to its budget reached it (the kernel charges by
pages and batches)."""
OOM_SCORE_ADJ = 1000
"""Every bot process's ``oom_score_adj``: where memory runs out outside the bots' own
budgets (the machine's or an enclosing cgroup's), the kernel kills a bot first, not the
referee or the tournament."""


class CgroupModeError(ValueError):
    """``CARDARENA_CGROUPS`` holds something else than one of :data:`MODES`."""


def mode() -> str:
    """The chosen mode, from ``CARDARENA_CGROUPS`` (``auto`` when unset or empty)."""
    value = os.environ.get(MODE_VARIABLE, "").strip().lower() or "auto"
    if value not in MODES:
        raise CgroupModeError(
            f"{MODE_VARIABLE}={os.environ[MODE_VARIABLE]!r}: use one of {', '.join(MODES)}"
        )
    return value


# --- where the referee's own cgroups are ------------------------------------------------


def _own_cgroups(text: str) -> dict[str, str]:
    """``/proc/self/cgroup`` as {controller or "" (v2): path}; ``name=systemd`` kept as is."""
    paths: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            paths[controller] = parts[2]
    return paths


@dataclass(frozen=True)
class Mount:
    """One mounted cgroup hierarchy (from ``/proc/self/mountinfo``)."""

    point: str
    root: str
    """The cgroup mounted there (``/`` unless it is a bind mount or a namespace's view)."""
    version: int
    controllers: frozenset[str]


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def _mounts(text: str) -> list[Mount]:
    mounts = []
    for line in text.splitlines():
        before, sep, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if not sep or len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        options = frozenset(tail[2].split(","))
        version = 2 if tail[0] == "cgroup2" else 1
        mounts.append(Mount(_unescape(fields[4]), _unescape(fields[3]), version, options))
    return mounts


def own_directory(mount: Mount, own_path: str) -> str | None:
    """The directory of the referee's own cgroup in ``mount``, or None if it is not there."""
    root = mount.root.rstrip("/")
    if own_path != root and not own_path.startswith(root + "/"):
        return None
    return os.path.join(mount.point, own_path[len(root) :].lstrip("/")).rstrip("/")


def candidates(mounts_text: str, cgroup_text: str) -> dict[str, tuple[str, ...]]:
    """{"v2": (dir,), "v1": (freezer dir, cpuacct dir)}: where bot cgroups could be made,
    as children of the referee's own cgroups (only the kinds found)."""
    own = _own_cgroups(cgroup_text)
    found: dict[str, tuple[str, ...]] = {}
    v1: dict[str, str] = {}
    for mount in _mounts(mounts_text):
        if mount.version == 2 and "v2" not in found and "" in own:
            directory = own_directory(mount, own[""])
            if directory is not None:
                found["v2"] = (directory,)
        elif mount.version == 1:
            for controller in ("freezer", "cpuacct"):
                if controller in mount.controllers and controller in own and controller not in v1:
                    directory = own_directory(mount, own[controller])
                    if directory is not None:
                        v1[controller] = directory
    if len(v1) == 2:
        found["v1"] = (v1["freezer"], v1["cpuacct"])
    return found


def _read(path: str) -> str:
    with open(path, encoding="ascii", errors="replace") as file:
        return file.read()


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as file:
        file.write(text)


# --- one bot's cgroup --------------------------------------------------------------------


class BotCgroup:
    """The cgroup(s) of one bot process tree (made empty; the bot enters it itself)."""

    kind = ""
    required: tuple[tuple[str, ...], ...] = ()
    """Per directory, the files it must have for this kind to work."""

    def __init__(self, directories: Sequence[str]) -> None:
        self.directories = tuple(directories)
        """Every directory the bot enters: the kind's own, then its memory group's if apart."""
        self.removed = False
        self.memory: MemoryGroup | None = None
        """Its memory budget, where a memory controller could be had."""

    @classmethod
    def make(cls, parents: Sequence[str]) -> BotCgroup:
        """A new, uniquely named cgroup under each of ``parents`` (OSError if it cannot)."""
        for _ in range(10):
            name = f"{NAME_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
            made: list[str] = []
            try:
                for parent in parents:
                    os.mkdir(os.path.join(parent, name), 0o755)
                    made.append(os.path.join(parent, name))
            except FileExistsError:
                for directory in made:
                    os.rmdir(directory)
                continue
            except OSError:
                for directory in made:
                    os.rmdir(directory)
                raise
            group = cls(made)
            missing = [os.path.join(d, f) for d, files in zip(made, cls.required, strict=True)
                       for f in files if not os.path.exists(os.path.join(d, f))]  # fmt: skip
            if missing:
                group.remove_now()
                raise OSError(f"{missing[0]} does not exist (kernel too old?)")
            return group
        raise OSError("no unused cgroup name after 10 tries")

    @property
    def name(self) -> str:
        return os.path.basename(self.directories[0])

    def enter(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run by a shell that first moves itself into this cgroup, then ``exec``s
        it: everything the bot ever starts is inside from its first instruction."""
        return launcher(self, argv)

    def pids(self) -> list[int]:
        """The processes in the cgroup (empty once removed)."""
        pids: set[int] = set()
        for directory in self.directories:
            with contextlib.suppress(OSError):
                pids.update(int(p) for p in _read(os.path.join(directory, "cgroup.procs")).split())
        return sorted(pids)

    def freeze(self) -> None:
        """Ask the kernel to stop every process in the cgroup (done within milliseconds)."""
        raise NotImplementedError

    def thaw(self) -> None:
        raise NotImplementedError

    def frozen(self) -> bool:
        """True once every process in the cgroup is stopped."""
        raise NotImplementedError

    def cpu_ns(self) -> int | None:
        """CPU time (user and system) used by every process ever in the cgroup, or None."""
        raise NotImplementedError

    def _kill(self) -> None:
        """SIGKILL everything in the cgroup, once."""
        raise NotImplementedError

    def _try_remove(self) -> bool:
        """Kill what is inside and remove the directories; True once all are gone."""
        if self.removed:
            return True
        with contextlib.suppress(OSError):
            self._kill()
        left = False
        for directory in self.directories:
            try:
                os.rmdir(directory)
            except FileNotFoundError:
                pass
            except OSError:  # EBUSY: processes still dying
                left = True
        self.removed = not left
        return self.removed

    async def remove(self, timeout_s: float = REMOVE_TIMEOUT_S) -> bool:
        """Kill everything inside and remove the cgroup, waiting (bounded) for the kernel;
        False (and one warning line) if it is still there after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        delay = 0.001
        while not self._try_remove():
            if time.monotonic() >= deadline:
                return self._left()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.05)
        return True

    def remove_now(self, timeout_s: float = REMOVE_TIMEOUT_S) -> bool:
        """:meth:`remove` without an event loop (last resort, probes)."""
        deadline = time.monotonic() + timeout_s
        delay = 0.001
        while not self._try_remove():
            if time.monotonic() >= deadline:
                return self._left()
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        return True

    def _left(self) -> bool:
        print(
            f"locm: warning: cannot remove the bot cgroup {self.directories[0]} "
            f"({len(self.pids())} processes left in it)",
            file=sys.stderr,
        )
        return False


class V2Cgroup(BotCgroup):
    """A cgroup v2: ``cgroup.freeze``, ``cpu.stat`` and ``cgroup.kill`` (Linux 5.14)."""

    kind = "v2"
    required = (("cgroup.procs", "cgroup.freeze", "cgroup.events", "cpu.stat"),)

    def _file(self, name: str) -> str:
        return os.path.join(self.directories[0], name)

    def freeze(self) -> None:
        _write(self._file("cgroup.freeze"), "1")

    def thaw(self) -> None:
        _write(self._file("cgroup.freeze"), "0")

    def frozen(self) -> bool:
        return "frozen 1" in _read(self._file("cgroup.events")).splitlines()

    def cpu_ns(self) -> int | None:
        try:
            for line in _read(self._file("cpu.stat")).splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) * 1000
        except (OSError, ValueError):
            pass
        return None

    def _kill(self) -> None:
        if os.path.exists(self._file("cgroup.kill")):
            _write(self._file("cgroup.kill"), "1")
            return
        # Before Linux 5.14: frozen processes cannot fork, and SIGKILL ends them.
        self.freeze()
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


class V1Cgroup(BotCgroup):
    """A v1 ``freezer`` group (``freezer.state``) and ``cpuacct`` group (``cpuacct.usage``)."""

    kind = "v1"
    required = (("cgroup.procs", "freezer.state"), ("cgroup.procs", "cpuacct.usage"))

    @property
    def _state(self) -> str:
        return os.path.join(self.directories[0], "freezer.state")

    def freeze(self) -> None:
        _write(self._state, "FROZEN")

    def thaw(self) -> None:
        _write(self._state, "THAWED")

    def frozen(self) -> bool:
        return _read(self._state).strip() == "FROZEN"

    def cpu_ns(self) -> int | None:
        if len(self.directories) < 2:
            return None
        try:
            return int(_read(os.path.join(self.directories[1], "cpuacct.usage")))
        except (OSError, ValueError):
            return None

    def _kill(self) -> None:
        # A v1-frozen process dies of SIGKILL only once thawed, and a running one may
        # fork meanwhile: freeze, kill all that are listed, thaw; repeat until empty.
        freezer = os.path.exists(self._state)  # gone once it was empty and removed
        if freezer:
            self.freeze()
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if freezer:
            self.thaw()


KINDS: dict[str, type[BotCgroup]] = {"v2": V2Cgroup, "v1": V1Cgroup}


def launcher(group: BotCgroup | None, argv: Sequence[str]) -> list[str]:
    """``argv`` run by a shell that first makes itself the kernel's first choice when memory
    runs out (``oom_score_adj``, inherited by everything the bot starts) and moves itself
    into every directory of ``group`` (if any), then ``exec``s it."""
    files = [] if group is None else [os.path.join(d, "cgroup.procs") for d in group.directories]
    steps = f"echo {OOM_SCORE_ADJ} > /proc/self/oom_score_adj 2>/dev/null\n" + "".join(
        f'echo $$ > "${i}" || exit {ENTER_FAILED}\n' for i in range(1, len(files) + 1)
    )
    script = f'{steps}shift {len(files)}\nexec "$@"\n'
    return ["/bin/sh", "-c", script, "cardarena-cgroup", *files, *argv]


# --- the memory budget ---------------------------------------------------------------------


class MemoryGroup:
    """The memory side of one bot's cgroup: a v2 cgroup (``memory.max``, the bot's own or
    shared with its freezer group) or a v1 ``memory`` group.

    Everything the bot's processes are charged for counts: anonymous memory, ``memfd`` and
    tmpfs pages they write (the sandbox's /tmp, HOME and /dev/shm), page tables, kernel
    memory, over all its processes. Swap is off, so the budget cannot be stretched to disk.
    Over it, the kernel kills inside the group only (v2: the whole group, ``memory.oom.group``)
    and counts the kill, which :meth:`oom_kills` reads.
    """

    def __init__(self, kind: str, directory: str) -> None:
        self.kind = kind
        self.directory = directory
        self.budget_bytes = 0

    def _file(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def limit(self, budget_bytes: int) -> None:
        """Set the budget (OSError if the kernel refuses it), swap included."""
        self.budget_bytes = budget_bytes
        if self.kind == "v2":
            _write(self._file("memory.max"), str(budget_bytes))
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                if os.path.exists(self._file(name)):  # no swap accounting, older kernels
                    _write(self._file(name), value)
            return
        _write(self._file("memory.limit_in_bytes"), str(budget_bytes))
        if os.path.exists(self._file("memory.memsw.limit_in_bytes")):  # swap accounting on
            _write(self._file("memory.memsw.limit_in_bytes"), str(budget_bytes))
        with contextlib.suppress(OSError):  # the kernel may not let it be changed: no matter
            _write(self._file("memory.swappiness"), "0")

    def _counter(self, name: str, key: str) -> int:
        try:
            text = _read(self._file(name))
        except OSError:
            return 0
        for line in text.splitlines():
            word, _, value = line.partition(" ")
            if word == key and value.strip().isdigit():
                return int(value)
        return 0

    def oom_kills(self) -> int:
        """How many of the bot's processes the kernel killed for going over its own budget
        (0 if it never reached it: a kill for an enclosing cgroup's or the machine's lack
        of memory, which also counts in the group, is not the bot's)."""
        if self.kind == "v2":
            reached = self._counter("memory.events", "oom") > 0
            kills = self._counter("memory.events", "oom_kill")
        else:  # (v1's memory.failcnt stays 0 on recent kernels: the peak says it instead)
            peak = self.peak_bytes()
            reached = peak is not None and peak >= self.budget_bytes - REACHED_MARGIN
            kills = self._counter("memory.oom_control", "oom_kill")
        return kills if reached else 0

    def peak_bytes(self) -> int | None:
        """The most memory the bot held at once (None where the kernel does not say)."""
        name = "memory.peak" if self.kind == "v2" else "memory.max_usage_in_bytes"
        try:
            return int(_read(self._file(name)))
        except (OSError, ValueError):
            return None


def _v2_memory_parent(directory: str) -> str:
    """Why bot cgroups under the v2 ``directory`` cannot have the memory controller ("" if
    they can): it must be in the directory's ``cgroup.subtree_control``, or be put there
    (which the kernel refuses while the directory holds processes, except at the root)."""
    try:
        if "memory" in _read(os.path.join(directory, "cgroup.subtree_control")).split():
            return ""
        if "memory" not in _read(os.path.join(directory, "cgroup.controllers")).split():
            return f"no memory controller in {directory}"
        _write(os.path.join(directory, "cgroup.subtree_control"), "+memory")
    except OSError as error:
        return f"cannot give the memory controller to {directory}'s children: " + (
            error.strerror or str(error)
        )
    return ""


def memory_candidates(mounts_text: str, cgroup_text: str) -> dict[str, str]:
    """{"v2": dir, "v1": dir}: where bot memory groups could be made (the referee's own
    cgroup in the unified hierarchy, its own ``memory`` group in a v1 one)."""
    own = _own_cgroups(cgroup_text)
    found: dict[str, str] = {}
    for mount in _mounts(mounts_text):
        if mount.version == 2 and "v2" not in found and "" in own:
            directory = own_directory(mount, own[""])
            if directory is not None:
                found["v2"] = directory
        elif mount.version == 1 and "memory" in mount.controllers and "memory" in own:
            directory = own_directory(mount, own["memory"])
            if directory is not None and "v1" not in found:
                found["v1"] = directory
    return found


def _probe_memory(kind: str, parent: str) -> str:
    """Why a bot could not be given a memory budget of ``kind`` under ``parent`` ("" if it
    can): make a group, set a budget, run a shell inside it, read its counters, remove it."""
    if kind == "v2":
        why = _v2_memory_parent(parent)
        if why:
            return why
    directory = os.path.join(parent, f"{NAME_PREFIX}{os.getpid()}-memory-probe")
    try:
        os.mkdir(directory, 0o755)
    except OSError as error:
        return f"cannot make a cgroup in {parent}: {error.strerror or error}"
    try:
        memory = MemoryGroup(kind, directory)
        memory.limit(64 << 20)
        done = subprocess.run(
            ["/bin/sh", "-c", 'echo $$ > "$1" && exit 0', "probe",
             os.path.join(directory, "cgroup.procs")],
            capture_output=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            return f"cannot move a process into {directory}: " + (
                lines[-1] if lines else f"exit status {done.returncode}"
            )
    except (OSError, subprocess.SubprocessError) as error:
        return f"memory cgroup in {directory} does not work: {error}"
    finally:
        with contextlib.suppress(OSError):  # the shell has exited: the group is empty
            os.rmdir(directory)
    return "" if not os.path.exists(directory) else f"cannot remove {directory}"


Found = TypeVar("Found")


def _mounted(chosen: str, find: Callable[[str, str], Found]) -> Found | Support:
    """What ``find`` (:func:`candidates`, :func:`memory_candidates`) sees mounted here, or the
    Support that says why no cgroup can be used at all."""
    if chosen == "off":
        return Support("", reason=f"{MODE_VARIABLE}=off")
    if not sys.platform.startswith("linux"):
        return Support("", reason=f"no cgroups on {sys.platform}")
    try:
        return find(_read("/proc/self/mountinfo"), _read("/proc/self/cgroup"))
    except OSError as error:
        return Support("", reason=f"cannot read /proc: {error}")


@functools.cache
def memory_support(chosen: str = "auto") -> Support:
    """Probe once per process and mode: where bots get a memory group here (v2, then v1),
    whichever kind freezes them."""
    found = _mounted(chosen, memory_candidates)
    if isinstance(found, Support):
        return found
    reasons = []
    for kind in ("v2", "v1"):
        if kind not in found:
            reasons.append("no v1 memory hierarchy mounted" if kind == "v1"
                           else "no cgroup v2 mounted")  # fmt: skip
            continue
        why = _probe_memory(kind, found[kind])
        if not why:
            return Support(kind, (found[kind],))
        reasons.append(why)
    return Support("", reason="; ".join(reasons))


def memory_room() -> tuple[int, str] | None:
    """(bytes, where): the most memory the referee and its bots may use together, the
    smaller of the machine's and of the limits on the referee's own cgroups (and their
    ancestors'); None where it cannot be read."""
    rooms: list[tuple[int, str]] = []
    try:
        for line in _read("/proc/meminfo").splitlines():
            if line.startswith("MemTotal:"):
                rooms.append((int(line.split()[1]) * 1024, "this machine"))
        mounts = _mounts(_read("/proc/self/mountinfo"))
        own = _own_cgroups(_read("/proc/self/cgroup"))
    except (OSError, ValueError, IndexError):
        return min(rooms) if rooms else None
    for mount in mounts:
        key = "" if mount.version == 2 else "memory"
        if (mount.version == 1 and "memory" not in mount.controllers) or key not in own:
            continue
        directory = own_directory(mount, own[key])
        name = "memory.max" if mount.version == 2 else "memory.limit_in_bytes"
        while directory is not None and directory.startswith(mount.point):
            with contextlib.suppress(OSError, ValueError):
                rooms.append((int(_read(os.path.join(directory, name))), f"the cgroup {directory}"))
            if directory == mount.point:
                break
            directory = os.path.dirname(directory)
    return min(rooms) if rooms else None


def warn_if_crowded(program: str, bots_at_once: int, budget_bytes: int) -> None:
    """One warning line if ``bots_at_once`` budgets do not fit in :func:`memory_room`: a
    bot still under its budget could then make the kernel kill someone else (a bot, since
    bots are its first choice, but perhaps the opponent of the one that took the memory).
    Nothing where bots get no budget (:func:`create` says so) or cgroups are off."""
    chosen = mode()
    if not bots_at_once or chosen == "off" or not memory_support(chosen).ok:
        return
    room = memory_room()
    total = bots_at_once * budget_bytes
    if room is None or total <= room[0]:
        return
    print(
        f"{program}: warning: {bots_at_once} bots at once × {budget_bytes >> 20} MB budget is "
        f"more than the {room[0] >> 20} MB of {room[1]}: a bot within its budget can make the "
        "kernel kill another bot; lower --memory (or --workers)",
        file=sys.stderr,
    )


_memory_warned = False


def warn_no_memory(program: str = "locm", why: str = "") -> None:
    """The one-line warning (once per process) when bots get no memory budget."""
    global _memory_warned
    if _memory_warned:
        return
    _memory_warned = True
    print(
        f"{program}: warning: bots have no memory budget, only a cap per process (no memory "
        f"cgroup: {why or memory_support(mode()).reason}); run as root or in a cgroup whose "
        "children have the memory controller (docs/referee.md)",
        file=sys.stderr,
    )


def _add_memory(group: BotCgroup, parents: tuple[str, ...], budget_bytes: int,
                program: str) -> None:  # fmt: skip
    """Give ``group`` its memory budget: in its own directory (both v2, same parent) or in
    a memory group of the same name, entered with the others. Warns once where none."""
    found = memory_support(mode())
    if not found.ok:
        warn_no_memory(program)
        return
    parent = found.parents[0]
    if found.kind == "v2" and group.kind == "v2" and parents == (parent,):
        memory = MemoryGroup("v2", group.directories[0])
    elif found.kind == "v2" and group.kind == "v2":  # cannot happen: one v2 cgroup each
        warn_no_memory(program, f"the v2 memory controller is not in {parents[0]}")
        return
    else:
        directory = os.path.join(parent, group.name)
        try:
            os.mkdir(directory, 0o755)
        except OSError as error:
            warn_no_memory(program, f"cannot make {directory}: {error.strerror or error}")
            return
        group.directories = (*group.directories, directory)
        memory = MemoryGroup(found.kind, directory)
    try:
        memory.limit(budget_bytes)
    except OSError as error:
        warn_no_memory(program, f"cannot set the budget in {memory.directory}: "
                       f"{error.strerror or error}")  # fmt: skip
        return
    group.memory = memory


# --- can it be had here? -----------------------------------------------------------------


@dataclass(frozen=True)
class Support:
    """Which kind of cgroup bots get here (``""``: none), where, and if none, why."""

    kind: str
    parents: tuple[str, ...] = ()
    reason: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.kind)


def _probe_kind(kind: str, parents: tuple[str, ...]) -> str:
    """Why a bot could not be held in a cgroup of ``kind`` under ``parents`` ("" if it can):
    make one, run a shell inside it through :meth:`BotCgroup.enter`, freeze, thaw, read its
    CPU time and remove it, as a game would."""
    try:
        group = KINDS[kind].make(parents)
    except OSError as error:
        return f"cannot make a cgroup in {parents[0]}: {error.strerror or error}"
    try:
        why = _try_out(group)
    finally:
        removed = group.remove_now()
    return why or ("" if removed else f"cannot remove {group.directories[0]}")


def _try_out(group: BotCgroup) -> str:
    try:
        done = subprocess.run(
            group.enter(["/bin/sh", "-c", "exit 0"]), capture_output=True, timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            return f"cannot move a process into {group.directories[0]}: " + (
                lines[-1] if lines else f"exit status {done.returncode}"
            )
        group.freeze()
        group.thaw()
    except (OSError, subprocess.SubprocessError) as error:
        return f"{group.kind} cgroup in {group.directories[0]} does not work: {error}"
    if group.cpu_ns() is None:
        return f"no CPU time in {group.directories[-1]}"
    return ""


@functools.cache
def support(chosen: str = "auto") -> Support:
    """Probe once per process and mode: the first kind (v2, then v1) that works here."""
    found = _mounted(chosen, candidates)
    if isinstance(found, Support):
        return found
    kinds = ("v2", "v1") if chosen == "auto" else (chosen,)
    reasons = []
    for kind in kinds:
        if kind not in found:
            reasons.append(f"no {kind} hierarchy mounted" if kind == "v2"
                           else "no v1 freezer and cpuacct hierarchies mounted")  # fmt: skip
            continue
        why = _probe_kind(kind, found[kind])
        if not why:
            return Support(kind, found[kind])
        reasons.append(why)
    return Support("", reason="; ".join(reasons))


_warned = False


def warn_unsupported(program: str = "locm") -> None:
    """The one-line warning (once per process) when bots cannot be held to their turns."""
    global _warned
    if _warned:
        return
    _warned = True
    print(
        f"{program}: warning: a bot's background processes can take CPU from its opponent, "
        "and bots have no memory budget, only a cap per process "
        f"(no cgroup to freeze them in: {support(mode()).reason}); run as root or in a "
        f"delegated cgroup (docs/referee.md), or {MODE_VARIABLE}=off to silence this",
        file=sys.stderr,
    )


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(parents: Sequence[str]) -> list[str]:
    """Remove the empty bot cgroups of referees that are gone (killed with SIGKILL, say);
    a leftover that still holds processes is left alone. The removed directories."""
    removed = []
    for parent in parents:
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            pid = name.removeprefix(NAME_PREFIX).partition("-")[0]
            if not name.startswith(NAME_PREFIX) or not pid.isdigit() or _pid_alive(int(pid)):
                continue
            with contextlib.suppress(OSError):  # EBUSY: not empty
                os.rmdir(os.path.join(parent, name))
                removed.append(os.path.join(parent, name))
    return removed


def reap(owner: int) -> list[str]:
    """Kill what is left in the bot cgroups that the dead referee ``owner`` made, and remove
    them; the removed cgroups' names.

    A referee killed mid-game (a tournament worker killed by SIGKILL) never closed its bots:
    one of them is frozen outside its turn, which neither its parent's death nor (v1) a
    SIGKILL ends. The tournament process calls this for each worker that died."""
    found = support(mode())
    if not found.ok or _pid_alive(owner):
        return []
    prefix = f"{NAME_PREFIX}{owner}-"
    names: set[str] = set()
    for parent in found.parents:
        with contextlib.suppress(OSError):
            names.update(name for name in os.listdir(parent) if name.startswith(prefix))
    group_kind = KINDS[found.kind]
    return [name for name in sorted(names)
            if group_kind([os.path.join(p, name) for p in found.parents]).remove_now()]  # fmt: skip


_swept: set[tuple[str, ...]] = set()


def create(program: str = "locm", memory_bytes: int | None = None) -> BotCgroup | None:
    """A new cgroup for one bot, or None where cgroups cannot be had (warned once) or are
    off; with a memory budget of ``memory_bytes`` where a memory controller can be had
    (else warned once). CgroupModeError if ``CARDARENA_CGROUPS`` is not a mode."""
    chosen = mode()
    found = support(chosen)
    if not found.ok:
        if chosen != "off":
            warn_unsupported(program)
        return None
    if found.parents not in _swept:  # once per process
        _swept.add(found.parents)
        remove_stale(found.parents)
    try:
        group = KINDS[found.kind].make(found.parents)
    except OSError as error:  # e.g. the parent was removed: say so, play on without
        print(f"{program}: warning: cannot make a bot cgroup: {error}", file=sys.stderr)
        return None
    if memory_bytes is not None:
        memory = memory_support(chosen)
        if memory.ok and memory.parents not in _swept:
            _swept.add(memory.parents)
            remove_stale(memory.parents)
        _add_memory(group, found.parents, memory_bytes, program)
    return group
