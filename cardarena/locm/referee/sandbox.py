"""The sandbox a bot process runs in: bubblewrap (``bwrap``) plus resource limits.

A bot is untrusted code. In its sandbox it has its own PID namespace (it sees and
can signal only its own processes; when the namespace's init dies the kernel
kills every process in it, ``setsid`` and double-forked ones included), no
network, a read-only view of the whole file system with a private, size-limited
writable ``/tmp``, no capabilities, and limits on address space, file size and
the number of processes and threads.

This module only builds argument vectors and probes, once per process, whether
the sandbox works here; :class:`~cardarena.locm.referee.players.ProcessPlayer` runs them.

How the pieces fit (all standard Linux tools, from util-linux and bubblewrap)::

    prlimit --as=.. --fsize=.. --core=0 -- bwrap <namespaces, mounts> -- /bin/sh -c PRELUDE
        PRELUDE (inside, still holding CAP_SYS_ADMIN in the sandbox's user namespace):
        set the PID namespace's pid_max (the process limit), make /proc/sys read-only,
        print READY_MARKER, then drop every capability (setpriv) and run the bot command.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

READY_MARKER = b"\x06"
"""Written on the bot's stdout by the sandbox right before the bot starts (then discarded):
the referee waits for it, so the sandbox's own start-up never counts against the bot's clock."""
RESERVED_PIDS = 300
"""The kernel never reuses PIDs below this once a namespace's PIDs have wrapped around."""
PROBE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Limits:
    """What a sandboxed bot may use; the defaults suit every bot of the official contests."""

    memory_bytes: int = 4 << 30
    """RLIMIT_AS of every process: address space, so a JVM sizes its heap below it."""
    file_size_bytes: int = 64 << 20
    """RLIMIT_FSIZE: the largest file a process may write (in /tmp, the only writable place)."""
    tmp_bytes: int = 64 << 20
    """Size of the private tmpfs mounted on /tmp (and on /dev/shm)."""
    tasks: int = 256
    """Processes and threads the bot can always have at once (PID namespace pid_max)."""


DEFAULT_LIMITS = Limits()


def per_namespace_pid_max(release: str | None = None) -> bool:
    """True if ``kernel.pid_max`` is per PID namespace here (Linux 6.14 and later).

    Before 6.14 it is one global value: writing it from a sandbox run by root would
    change it for the whole machine, so it must never be written there.
    """
    release = os.uname().release if release is None else release
    try:
        major, minor = (int(part) for part in release.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (6, 14)


def _prelude(limits: Limits) -> str:
    """The shell code run first inside the sandbox; ``$1`` is the bot command."""
    marker = f"\\{READY_MARKER[0]:03o}"
    if per_namespace_pid_max():
        tasks = f"echo {RESERVED_PIDS + limits.tasks} > /proc/sys/kernel/pid_max || exit 125\n"
    else:
        # Counted per user namespace since Linux 5.14, so per sandbox; root is exempt.
        tasks = f"prlimit --pid $$ --nproc={limits.tasks} || exit 125\n"
    return tasks + (
        # As root, the sandbox's uid 0 is the host's: without this, /proc/sys (the
        # host's sysctls, owned by uid 0) would stay writable after the capabilities go.
        # (Any other user cannot mount here, and cannot write them anyway.)
        "mount --bind -o ro /proc/sys /proc/sys 2>/dev/null "
        "|| ! [ -w /proc/sys/kernel/panic ] || exit 125\n"
        f"printf '{marker}' || exit 125\n"
        'exec setpriv --bounding-set=-all --inh-caps=-all --no-new-privs /bin/sh -c "$1"\n'
    )


HIDDEN_ROOTS = ("/tmp", "/run", "/dev")
"""Where the sandbox mounts fresh, empty file systems over the host's (``/dev`` gets only
the standard devices, and an empty ``/dev/shm``)."""


def _hidden(path: str) -> bool:
    return any(path == root or path.startswith(root + "/") for root in HIDDEN_ROOTS)


def _prefix(bin_dir: str) -> str:
    """The installation a ``bin`` folder belongs to (its parent), else the folder itself."""
    return os.path.dirname(bin_dir) if os.path.basename(bin_dir) == "bin" else bin_dir


def _venv_home(config: str) -> str | None:
    """The ``home`` (the base interpreter's folder) of a ``pyvenv.cfg``."""
    try:
        with open(config, encoding="utf-8", errors="replace") as file:
            for line in file:
                key, sep, value = line.partition("=")
                if sep and key.strip() == "home" and value.strip():
                    return os.path.abspath(value.strip())
    except OSError:
        pass
    return None


def environment_roots(program: str) -> list[str]:
    """What an interpreter needs besides its own folder: the root of its virtual environment
    (the folder of the ``pyvenv.cfg`` next to or above it, whose site-packages Python only
    uses if it finds that file), the base installation that environment was made from
    (``home``), and the installation a symlinked program really lives in."""
    roots: list[str] = []
    named = os.path.abspath(program)
    real = os.path.realpath(program)
    for executable in dict.fromkeys((named, real)):
        folder = os.path.dirname(executable)
        for candidate in (folder, os.path.dirname(folder)):
            config = os.path.join(candidate, "pyvenv.cfg")
            if os.path.isfile(config):
                roots.append(candidate)
                home = _venv_home(config)
                if home is not None:
                    roots.append(_prefix(home))
                break
    if real != named:
        roots.append(_prefix(os.path.dirname(real)))
    return roots


def _needed_paths(command: str, cwd: str) -> tuple[list[str], list[str]]:
    """(directories under the host's /tmp to show read-only, needed paths it cannot show).

    The private /tmp hides the host's; a bot installed under /tmp (``python3
    /tmp/x/bot.py``) must still be found, and so must the whole environment of an
    interpreter it names (``/tmp/venvs/bot/bin/python``: the virtual environment's root,
    with its ``pyvenv.cfg`` and site-packages), so these come back read-only. An
    interpreter environment in a place the sandbox cannot show (all of /tmp, /run,
    /dev/shm) is reported instead: the bot would silently run without it.
    """
    try:
        words = shlex.split(command)
    except ValueError:
        words = []
    candidates = [cwd]
    for word in words:
        candidates += [word, word.partition("=")[2]]
    program = next((w for w in words if w != "exec" and "=" not in w), "")
    if program and "/" not in program:
        found_program = shutil.which(program)
        if found_program is not None:  # on the PATH, e.g. an activated virtual environment
            candidates.append(found_program)
    shown: set[str] = set()
    environments: list[str] = []
    for candidate in candidates:
        if not candidate:
            continue
        path = os.path.abspath(os.path.join(cwd, candidate))
        if not os.path.exists(path):
            continue
        if not os.path.isdir(path):
            environments += environment_roots(path)
            if os.path.dirname(path) != "/tmp":
                path = os.path.dirname(path)  # its directory: a script's own modules, data
        if path == "/tmp" or path.startswith("/tmp/"):
            shown.add(path)
    unseen: list[str] = []
    for root in environments:
        if root.startswith("/tmp/"):
            shown.add(root)
        elif _hidden(root) and root not in unseen:
            unseen.append(root)
    shown.discard("/tmp")  # all of the host's /tmp would defeat the private one
    # A folder inside another shown one needs no mount of its own.
    ordered = sorted(shown, key=lambda p: (p.count("/"), p))
    kept = [p for p in ordered if not any(p.startswith(q + "/") for q in ordered if q != p)]
    return kept, unseen


def _host_tmp_dirs(command: str, cwd: str) -> list[str]:
    """Directories under the host's /tmp that the command needs (see :func:`_needed_paths`)."""
    return _needed_paths(command, cwd)[0]


def unseen_paths(command: str, cwd: str | None = None) -> list[str]:
    """Interpreter environments the command needs that the sandbox cannot show."""
    return _needed_paths(command, os.path.abspath(cwd or os.getcwd()))[1]


def wrap(
    command: str,
    cwd: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    bwrap: str = "bwrap",
    hide: Sequence[str] = (),
) -> list[str]:
    """The argv that runs the shell command ``command`` in a sandbox, in ``cwd`` (read-only).

    The existing files in ``hide`` (a tournament's database and lock) cannot be opened:
    ``/dev/null`` is mounted over them, and device files do not open in the sandbox.
    """
    cwd = os.path.abspath(cwd or os.getcwd())
    argv = [
        "prlimit", f"--as={limits.memory_bytes}", f"--fsize={limits.file_size_bytes}",
        "--core=0", "--",
        bwrap, "--unshare-all", "--die-with-parent", "--new-session",
        "--cap-drop", "ALL", "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--size", str(limits.tmp_bytes), "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
        "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
    ]  # fmt: skip
    if os.path.isdir("/run"):  # host daemons' sockets (connect() ignores a read-only mount)
        argv += ["--tmpfs", "/run", "--remount-ro", "/run"]
    visible = _host_tmp_dirs(command, cwd)
    for path in visible:
        argv += ["--ro-bind", path, path]
    for path in map(os.path.abspath, hide):
        in_tmp = path.startswith("/tmp/")
        shown = not in_tmp or any(path.startswith(v + "/") or path == v for v in visible)
        if shown and os.path.isfile(path):
            argv += ["--ro-bind", "/dev/null", path]
    argv += ["--setenv", "TMPDIR", "/tmp", "--chdir", cwd]
    argv += ["--", "/bin/sh", "-c", _prelude(limits), "cardarena-sandbox", command]
    return argv


@dataclass(frozen=True)
class Support:
    """Whether the sandbox works on this machine, and if not, why."""

    ok: bool
    reason: str = ""


@functools.cache
def support() -> Support:
    """Probe once per process: run ``echo ok`` in a real sandbox (bwrap present, user
    namespaces allowed, the limits settable)."""
    if not sys.platform.startswith("linux"):
        return Support(False, f"not supported on {sys.platform}")
    for tool in ("bwrap", "prlimit", "setpriv"):
        if shutil.which(tool) is None:
            return Support(False, f"{tool} not found (install bubblewrap and util-linux)")
    try:
        done = subprocess.run(
            wrap("echo ok", "/"), capture_output=True, timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        return Support(False, f"bwrap failed to start: {error}")
    if done.returncode != 0 or done.stdout != READY_MARKER + b"ok\n":
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = lines[-1] if lines else f"exit status {done.returncode}"
        return Support(False, f"bwrap does not work here: {why}")
    return Support(True)


_warned = False


def warn_unsupported(program: str = "locm") -> None:
    """The one-line warning (once per process) when bots must run unsandboxed."""
    global _warned
    if _warned:
        return
    _warned = True
    print(
        f"{program}: warning: bots run without a sandbox ({support().reason}); "
        "--no-sandbox silences this",
        file=sys.stderr,
    )


def available(program: str = "locm") -> bool:
    """True if bots can be sandboxed; otherwise warn (once) and return False."""
    if support().ok:
        return True
    warn_unsupported(program)
    return False
