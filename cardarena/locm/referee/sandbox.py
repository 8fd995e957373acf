"""The sandbox a bot process runs in: bubblewrap (``bwrap``) plus resource limits.

A bot is untrusted code. In its sandbox it has its own PID namespace (it sees and
can signal only its own processes; when the namespace's init dies the kernel
kills every process in it, ``setsid`` and double-forked ones included), no
network, no capabilities, limits on address space, file size and the number of
processes and threads, and a file system of its own, read-only except a private,
size-limited ``/tmp`` and an empty ``HOME``: the system's programs and libraries
(``/usr``, ``/opt``...), a ``/etc`` reduced to what programs need to start (with a
``passwd`` naming only the bot's user), the files and folders its command names with
their interpreter environments, and nothing else (no ``/root``, ``/home``, ``/var``,
host ``/tmp``, none of the working directory's other files, nothing another bot of the
run names). Databases and report folders beside the tournament's and in the working
directory are hidden. When the referee runs as root, the bot runs as an unprivileged user
of its own (a uid no other process on the machine has).

No bot can create a namespace (a user namespace would give it every capability there)
or reach the kernel's rarely needed interfaces (mounts, keyrings, BPF, other netlink
families...): a seccomp filter refuses them (:mod:`~cardarena.locm.referee.seccomp`).

This module only builds argument vectors and probes, once per process, whether
the sandbox works here; :class:`~cardarena.locm.referee.players.ProcessPlayer` runs them.

How the pieces fit (all standard Linux tools, from util-linux and bubblewrap)::

    prlimit --as=.. --fsize=.. --core=0 -- bwrap <namespaces, mounts> --seccomp FD \
        -- /bin/sh -c PRELUDE
        (bwrap installs the seccomp filter read from FD right before it runs PRELUDE: the
        filter lets through only the read-only bind mounts PRELUDE makes)
        PRELUDE (inside, still holding CAP_SYS_ADMIN in the sandbox):
        set the PID namespace's pid_max (the process limit), make /proc/sys read-only,
        write /etc/passwd, /etc/group and /etc/hosts and make /etc read-only, give HOME
        to the bot's user, print READY_MARKER, then drop every capability (setpriv,
        which as root also switches to the bot's uid) and run the bot command.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import glob
import os
import re
import secrets
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from . import seccomp

READY_MARKER = b"\x06"
"""Written on the bot's stdout by the sandbox right before the bot starts (then discarded):
the referee waits for it, so the sandbox's own start-up never counts against the bot's clock."""
RESERVED_PIDS = 300
"""The kernel never reuses PIDs below this once a namespace's PIDs have wrapped around."""
PROBE_TIMEOUT_S = 20.0
BOT_USER = "bot"
"""The bot's user name inside the sandbox (``USER``, ``LOGNAME``, ``/etc/passwd``)."""
BOT_HOME = "/home/bot"
"""The bot's ``HOME``: a private, empty, writable tmpfs, thrown away with the sandbox."""
BOT_UIDS = (1 << 30, 1 << 24)
"""As root, each sandbox runs its bot under a uid (and gid) drawn from this range (first,
count): no account uses them, and two sandboxes (the two bots of a game) share no
per-user kernel resource (process count, keyrings, message queues)."""
ETC_BYTES = 1 << 20
"""Size of the sandbox's /etc tmpfs (it holds three small files written at start-up)."""
CWD_BYTES = 1 << 16
"""Size of the tmpfs standing for the working directory (it holds mount points only)."""
SQLITE_HEADER = b"SQLite format 3\x00"
DB_COMPANIONS = ("", "-wal", "-shm", "-journal", ".lock")
"""A database's own file, its journal files and the tournament's lock file."""


@dataclass(frozen=True)
class Limits:
    """What a sandboxed bot may use; the defaults suit every bot of the official contests."""

    memory_bytes: int = 4 << 30
    """RLIMIT_AS of every process: address space, so a JVM sizes its heap below it."""
    file_size_bytes: int = 64 << 20
    """RLIMIT_FSIZE: the largest file a process may write (in /tmp or HOME)."""
    tmp_bytes: int = 64 << 20
    """Size of the private tmpfs mounted on /tmp (and on /dev/shm, and on HOME)."""
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


def switches_user() -> bool:
    """True if the bot runs under a uid of its own: when the referee is root. (Anyone
    else runs bots in a user namespace, under their own uid: the kernel allows no other.)"""
    return os.geteuid() == 0


def bot_ids() -> tuple[int, int]:
    """The (uid, gid) a new sandbox runs its bot under."""
    if switches_user():
        first, count = BOT_UIDS
        uid = first + secrets.randbelow(count)
        return uid, uid
    return os.getuid(), os.getgid()


def _etc_files(uid: int, gid: int) -> dict[str, str]:
    """The files of the sandbox's /etc that are written, not shown: only the bot's user,
    root and nobody exist (``getpwuid`` works, as Java's ``user.name`` needs)."""
    return {
        "passwd": f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"{BOT_USER}:x:{uid}:{gid}:{BOT_USER}:{BOT_HOME}:/bin/sh\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        "group": f"root:x:0:\n{BOT_USER}:x:{gid}:\nnogroup:x:65534:\n",
        "hosts": "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n",
    }


def _prelude(limits: Limits, uid: int, gid: int) -> str:
    """The shell code run first inside the sandbox; ``$2`` is the bot command, ``$1`` the
    code that restores its carried variables (:func:`carry_environment`)."""
    marker = f"\\{READY_MARKER[0]:03o}"
    if per_namespace_pid_max():
        tasks = f"echo {RESERVED_PIDS + limits.tasks} > /proc/sys/kernel/pid_max || exit 125\n"
    else:
        # Counted per user and user namespace; the bot's user is its own (a fresh uid as
        # root, a fresh user namespace otherwise), so this is per sandbox.
        tasks = f"prlimit --pid $$ --nproc={limits.tasks} || exit 125\n"
    # Written under umask 022 whatever the referee's (an organiser's umask 077 once made
    # /etc/passwd unreadable to the bot, and Java's user.name "?").
    etc = "umask 022\n" + "".join(
        f"printf '%s' {shlex.quote(text)} > /etc/{name} || exit 125\n"
        for name, text in _etc_files(uid, gid).items()
    )
    switch = f"--reuid={uid} --regid={gid} --clear-groups " if switches_user() else ""
    return (
        # The privileged steps run the system's tools only: no PATH entry or library
        # path of the bot's (see carry_environment) can slip its own program in.
        f"PATH={PRELUDE_PATH}\n"
        + tasks
        # As root, /proc/sys holds the host's sysctls: keep them read-only whatever uid.
        + "mount --bind -o ro /proc/sys /proc/sys 2>/dev/null "
        "|| ! [ -w /proc/sys/kernel/panic ] || exit 125\n"
        + etc
        # (mount(8) serves no one else: their /etc stays writable, to the bot alone, and small)
        + ("mount -o remount,bind,ro /etc || exit 125\n" if switches_user() else "")
        + f"chown {uid}:{gid} {BOT_HOME} || exit 125\n"
        f"printf '{marker}' || exit 125\n"
        "setpriv=$(command -v setpriv) || exit 125\n"
        f'exec "$setpriv" {switch}--bounding-set=-all --inh-caps=-all --no-new-privs '
        '/bin/sh -c "$1$2"\n'
    )


PRELUDE_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
CARRIED = "CARDARENA_BOT_"
_RESTORE = (
    f'for v in ${CARRIED}VARS; do eval "export $v=\\"\\${CARRIED}$v\\""; '
    f"unset {CARRIED}$v; done; unset v {CARRIED}VARS; "
)
"""Shell code run by the bot's own shell, as the bot's user: the carried variables back."""


def carry_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The environment to start a sandbox with, for a bot's environment ``env``.

    ``PATH`` and the dynamic linker's variables (``LD_*``) are carried under other names
    through the sandbox's privileged steps, which run with the system's ``PATH`` and no
    ``LD_PRELOAD`` or ``LD_LIBRARY_PATH``, and restored by the bot's own shell once it runs
    as the bot's user. (A library or program in a bot's folder, named by one of them, never
    runs with the sandbox's privileges.)
    """
    carried = [name for name in env if name == "PATH" or name.startswith("LD_")]
    out = {name: value for name, value in env.items() if name not in carried}
    out |= {CARRIED + name: env[name] for name in carried}
    out[CARRIED + "VARS"] = " ".join(carried)
    out["PATH"] = PRELUDE_PATH
    return out


SYSTEM_ROOTS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix")
"""Shown read-only as they are: the machine's programs, libraries and toolchains."""
UNSHOWABLE_ROOTS = ("/dev", "/proc", "/run", "/sys")
"""Nothing under these can be shown in the sandbox (they are its own)."""
NEVER_WHOLE = ("/", "/etc", "/home", "/root", "/tmp", "/var", "/srv", "/mnt", "/media", "/boot")
"""Folders never shown whole, even as the working directory: a file named right in one
of them is shown alone. Home folders (:func:`_never_whole`) are never shown whole either."""


def _never_whole(path: str) -> bool:
    """True for the folders of :data:`NEVER_WHOLE` and for home folders (the referee's
    ``HOME``, its user's, every ``/home/NAME``): their dotfiles (keys, tokens) stay out
    of reach even when the referee runs from one; only what the command names in them
    is shown."""
    if path in NEVER_WHOLE or os.path.dirname(path) == "/home":
        return True
    homes = {os.path.expanduser("~"), os.environ.get("HOME", "")}
    with contextlib.suppress(KeyError, ImportError):
        import pwd

        homes.add(pwd.getpwuid(os.geteuid()).pw_dir)
    homes |= {os.path.realpath(home) for home in homes if home}
    return path in homes - {"", "/"}


ETC_SHOWN = (
    "alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone",
    "locale.alias", "locale.conf", "default/locale", "nsswitch.conf", "host.conf", "gai.conf",
    "ssl/certs", "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf", "pki/tls/certs",
    "java-*", "jvm", "mono", "dotnet", "python3", "python3.*", "perl", "mime.types",
    "os-release", "debian_version", "lsb-release", "fonts", "terminfo",
)  # fmt: skip
"""The entries of the host's /etc the sandbox shows (globs): what the dynamic linker,
locales, time zones, TLS and the usual language runtimes read as they start. Nothing
else: no ``shadow``, no ``ssh`` keys, no ``sudoers``, no host name or user list."""


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _under_any(path: str, roots: Iterable[str]) -> bool:
    return any(_under(path, root) for root in roots)


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
                    roots += [_prefix(home), _prefix(os.path.realpath(home))]
                break
    if real != named:
        roots.append(_prefix(os.path.dirname(real)))
    return roots


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return []


SITE_DIRS = (
    "lib/python3*/site-packages", "lib/python3*/dist-packages", "lib/python3/dist-packages",
    "local/lib/python3*/dist-packages", "lib64/python3*/site-packages",
)  # fmt: skip
"""Where an installation (a prefix) keeps its Python packages and their ``.pth`` files."""


def _shebang(path: str) -> str | None:
    """The interpreter a script names on its ``#!`` line (``/usr/bin/env NAME``: found on
    the ``PATH``), so that its environment is shown as if the command had named it."""
    try:
        with open(path, "rb") as file:
            line = file.readline(512)
    except OSError:
        return None
    if not line.startswith(b"#!"):
        return None
    words = line[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        name = next((w for w in words[1:] if not w.startswith("-") and "=" not in w), None)
        return shutil.which(name) if name else None
    return words[0]


def _editable_paths(module: str) -> list[str]:
    """The sources an editable-install finder module maps its packages to: every absolute
    path among its string constants (setuptools' ``MAPPING``, ``editables``' ``map_module``)."""
    try:
        with open(module, encoding="utf-8") as file:
            tree = ast.parse(file.read(), module)
    except (OSError, SyntaxError, ValueError):
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value
            if value.startswith("/") and "\n" not in value and os.path.exists(value):
                # A package's __init__.py stands for its folder; a single module for itself.
                if os.path.basename(value) == "__init__.py":
                    value = os.path.dirname(value)
                found.append(os.path.normpath(value))
    return found


@functools.lru_cache(maxsize=256)
def _pth_in(site: str, _changed: int) -> tuple[str, ...]:
    found: list[str] = []
    for pth in sorted(glob.glob(os.path.join(site, "*.pth"))):
        try:
            with open(pth, encoding="utf-8", errors="replace") as file:
                lines = file.read(1 << 20).splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith(("import ", "import\t")):
                # Only editable-install finders: other start-up code is not followed.
                for name in re.findall(r"\bimport\s+([\w.]+)", line):
                    if "editable" in name:
                        found += _editable_paths(os.path.join(site, name + ".py"))
                continue
            path = os.path.normpath(os.path.join(site, line))
            if os.path.isdir(path):
                found.append(path)
    return tuple(dict.fromkeys(found))


def pth_targets(prefix: str) -> list[str]:
    """What the ``.pth`` files of an installation's site-packages add to Python's path:
    their path entries and the sources of editable installs (``pip install -e``), which an
    interpreter of that installation imports from although they lie elsewhere."""
    found: list[str] = []
    for pattern in SITE_DIRS:
        for site in sorted(glob.glob(os.path.join(prefix, pattern))):
            try:
                changed = os.stat(site).st_mtime_ns
            except OSError:
                continue
            found += _pth_in(os.path.realpath(site), changed)
    return found


def _named_paths(command: str, cwd: str) -> tuple[list[str], list[str]]:
    """(existing paths the command names, absolute; interpreter environments it needs)."""
    words = _words(command)
    named: list[str] = []
    for candidate in dict.fromkeys(w for word in words for w in (word, word.partition("=")[2])):
        if candidate:
            path = os.path.abspath(os.path.join(cwd, candidate))
            if os.path.exists(path):
                named.append(path)
    programs = [p for p in named if os.path.isfile(p) and os.access(p, os.X_OK)]
    program = next((w for w in words if w != "exec" and "=" not in w), "")
    if program and "/" not in program:
        found_program = shutil.which(program)
        if found_program is not None:  # on the PATH, e.g. an activated virtual environment
            programs.append(found_program)
    programs += [i for i in map(_shebang, programs) if i is not None and os.path.isfile(i)]
    environments: list[str] = []
    for path in named:
        if not os.path.isdir(path):
            environments += environment_roots(path)
    for path in programs:
        environments += environment_roots(path)
    prefixes = [*environments, *(_prefix(os.path.dirname(os.path.realpath(p))) for p in programs)]
    for prefix in dict.fromkeys(prefixes):
        environments += pth_targets(prefix)
    return named, list(dict.fromkeys(environments))


def _aliases_of(paths: Iterable[str]) -> list[str]:
    """Each path as given and where it really is."""
    return list(dict.fromkeys(a for p in paths for a in (p, os.path.realpath(p))))


def _own_folder(file: str, cwd: str, others: Sequence[str], relative: bool) -> str | None:
    """The folder a file the command names is shown with: the bot's own folder.

    For a file named relative to the working directory (not a home folder or another
    folder never shown whole), that is the highest folder above it, below the working
    directory itself, that holds nothing another bot of the run names (``Chad/`` for
    ``./Chad/agent/target/release/agent``, as in the official contests' layout; ``bots/a``
    for ``bots/a/bot.py`` against ``bots/b/bot.py``); otherwise the file's folder (the
    installation for a ``bin`` folder). None where even that holds another bot's file, or
    is the working directory or a folder never shown whole: the file is then shown alone.
    """
    folder = _prefix(os.path.dirname(file))
    candidates = [folder]
    if relative and not _never_whole(cwd) and _under(folder, cwd) and folder != cwd:
        while os.path.dirname(candidates[-1]) != cwd:
            candidates.append(os.path.dirname(candidates[-1]))
    for candidate in reversed(candidates):  # the highest first
        if candidate == cwd or _never_whole(candidate):
            continue
        if not any(_under(other, candidate) for other in others):
            return candidate
    return None


def _relative_names(command: str, cwd: str) -> set[str]:
    """The paths the command names relative to the working directory, made absolute."""
    words = (w for word in _words(command) for w in (word, word.partition("=")[2]))
    return {os.path.abspath(os.path.join(cwd, w)) for w in words if w and not w.startswith("/")}


def _layout(
    command: str, cwd: str, rivals: Sequence[str] = ()
) -> tuple[list[str], list[str], list[str]]:
    """(places shown for what the command names, its interpreter environments, paths of
    the other bots of the run to cover).

    The places are each folder the command names and, for each file it names, its own
    folder (:func:`_own_folder`) or the file alone. The working directory is not one of
    them unless the command names it (``.``). Every path another bot of the run (``rivals``:
    their commands) names, and its own folders, are covered wherever this bot would see
    them, except what this bot needs itself: what it names, the folders above, its
    interpreter environments and the system folders.
    """
    named, environments = _named_paths(command, cwd)
    mine = _aliases_of(named)
    rival_named: dict[str, list[str]] = {}
    for rival in dict.fromkeys(rivals):
        if rival != command:
            rival_named[rival] = _aliases_of(_named_paths(rival, cwd)[0])

    # A contest folder inside a system folder (/opt/contest) is shown with it: the other
    # bots' paths there are covered too, not the system's programs elsewhere.
    in_system = _under_any(cwd, SYSTEM_ROOTS) and cwd not in SYSTEM_ROOTS

    def foreign(path: str) -> bool:
        system = _under_any(path, SYSTEM_ROOTS) and not (in_system and _under(path, cwd))
        return not (
            system
            or any(_under(own, path) for own in mine)
            or _under_any(path, (*UNSHOWABLE_ROOTS, *environments))
        )

    others = [p for paths in rival_named.values() for p in paths if foreign(p)]
    places = _places(mine, cwd, others, _relative_names(command, cwd))
    covered: list[str] = list(others)
    for rival, paths in rival_named.items():
        theirs = [p for other, ps in rival_named.items() if other != rival for p in ps]
        blocking = [p for p in (*mine, *theirs) if not any(_under(q, p) for q in paths)]
        relative = _relative_names(rival, cwd)
        covered += [p for p in _places(paths, cwd, blocking, relative) if foreign(p)]
    return places, environments, list(dict.fromkeys(covered))


def _places(named: Sequence[str], cwd: str, others: Sequence[str], relative: set[str]) -> list[str]:
    """Each named folder, and each named file's own folder (or the file alone)."""
    places: list[str] = []
    for path in named:
        if os.path.isdir(path):
            places.append(path)
        else:
            own = _own_folder(path, cwd, others, path in relative)
            places.append(own or path)
    return places


def _needed_paths(
    command: str, cwd: str, rivals: Sequence[str] = ()
) -> tuple[list[str], list[str], list[str]]:
    """(paths outside the system folders to show read-only, needed paths it cannot show,
    the other bots' paths to cover: :func:`_layout`).

    The sandbox shows the system folders, its own /etc, /tmp, HOME and nothing else of
    the host but: each folder the command names, each file it names with its own folder
    (:func:`_own_folder`: ``python3 Bot1/bot.py`` finds ``Bot1``; a file right in the
    working directory, in /tmp, /etc, /root..., or beside another bot's file is shown
    alone), and the whole environment of an interpreter it names, finds on the ``PATH`` or
    on a named script's ``#!`` line (``/tmp/venvs/bot/bin/python``: the virtual
    environment's root, with its ``pyvenv.cfg`` and site-packages, the base installation it
    was made from, and what their ``.pth`` files point to, an editable install's sources).
    Each is shown where it is named and where it really is, so symlinks into it resolve.
    An interpreter environment in a place the sandbox cannot show (/run, /dev/shm) is
    reported instead: the bot would silently run without it.
    """
    places, environments, covered = _layout(command, cwd, rivals)
    shown: set[str] = set()
    for path in places:
        shown.update((path, os.path.realpath(path)))
    unseen: list[str] = []
    for root in environments:
        if _under_any(root, UNSHOWABLE_ROOTS):
            if root not in unseen:
                unseen.append(root)
        else:
            shown.add(root)
    shown = {
        p for p in shown
        if not _never_whole(p) and not _under_any(p, (*SYSTEM_ROOTS, *UNSHOWABLE_ROOTS))
    }  # fmt: skip
    # A path inside another shown one needs no mount of its own.
    ordered = sorted(shown, key=lambda p: (p.count("/"), p))
    kept = [p for p in ordered if not any(_under(p, q) for q in ordered if q != p)]
    return kept, unseen, covered


def unseen_paths(command: str, cwd: str | None = None) -> list[str]:
    """Interpreter environments the command needs that the sandbox cannot show."""
    return _needed_paths(command, os.path.abspath(cwd or os.getcwd()))[1]


def unreadable_paths(command: str, cwd: str | None = None, rivals: Sequence[str] = ()) -> list[str]:
    """Paths the bot needs that its own user could not read (only as root, where the
    bot's user is not the owner of anything): the files the command names, the folders
    shown for them and those between. The working directory and the folders above are
    not shown as they are (the sandbox makes its own, open to all), so need nothing."""
    if not switches_user():
        return []
    cwd = os.path.abspath(cwd or os.getcwd())
    places, _environments, _covered = _layout(command, cwd, rivals)
    named = _aliases_of(_named_paths(command, cwd)[0])
    checked = list(places)
    for path in named:
        place = next((p for p in places if _under(path, p)), path)
        folder = os.path.dirname(path)
        between: list[str] = []
        while _under(folder, place) and folder != place:
            between.append(folder)
            folder = os.path.dirname(folder)
        checked += [*reversed(between), path]
    unreadable: list[str] = []
    for path in dict.fromkeys(checked):
        if _never_whole(path) or _under_any(path, (*SYSTEM_ROOTS, *UNSHOWABLE_ROOTS)):
            continue
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        needed = stat.S_IXOTH if stat.S_ISDIR(mode) else stat.S_IROTH
        if not mode & needed:
            unreadable.append(path)
    return unreadable


def _is_database(path: str) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def _is_report(path: str) -> bool:
    """A tournament report folder: ``DB-report`` (CSV, JSON, PNG) or an HTML report."""

    def has(name: str) -> bool:
        return os.path.exists(os.path.join(path, name))

    return path.endswith("-report") or has("report.json") or (has("index.html") and has("games"))


@functools.lru_cache(maxsize=64)
def _private_in(folder: str, _changed: int) -> tuple[str, ...]:
    found: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return ()
    for entry in entries:
        real = os.path.realpath(entry.path)
        try:
            if entry.is_dir():
                if _is_report(real):
                    found.append(real)
            elif entry.is_file() and _is_database(real):
                found += [real + end for end in DB_COMPANIONS]
        except OSError:
            continue
    return tuple(found)


def private_paths(folders: Iterable[str], db: str | None = None) -> tuple[str, ...]:
    """What a bot must not even read, as real paths: the database ``db`` with its journal
    and lock files, and every SQLite database (by its header, whatever its name) and
    tournament report folder right in ``folders`` (the working directory, the database's)."""
    found: list[str] = []
    if db is not None:
        # Where it really is (journal files), and beside the name given (the lock file).
        for end in DB_COMPANIONS:
            found += [os.path.realpath(db) + end, os.path.realpath(os.path.abspath(db) + end)]
    for folder in folders:
        real = os.path.realpath(folder)
        try:
            changed = os.stat(real).st_mtime_ns
        except OSError:
            continue
        found += _private_in(real, changed)
    return tuple(dict.fromkeys(found))


def _symlink_or_bind(path: str) -> list[str]:
    if os.path.islink(path):
        return ["--symlink", os.readlink(path), path]
    return ["--ro-bind", path, path]


def _etc_mounts() -> list[str]:
    argv = ["--perms", "0755", "--size", str(ETC_BYTES), "--tmpfs", "/etc"]
    made = {"/etc"}
    for pattern in ETC_SHOWN:
        for path in sorted(glob.glob(os.path.join("/etc", pattern))):
            if os.path.basename(path) in _etc_files(0, 0):
                continue
            parent = os.path.dirname(path)
            if parent not in made:
                made.add(parent)
                argv += ["--perms", "0755", "--dir", parent]
            argv += _symlink_or_bind(path)
    return argv


def _dirs_for(path: str, made: set[str]) -> list[str]:
    """``--dir`` for the missing folders above ``path`` (readable by all: bwrap's own
    folders would be root's alone)."""
    argv: list[str] = []
    parts = path.strip("/").split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        folder = "/" + "/".join(parts[:depth])
        if folder not in made and not _under_any(folder, SYSTEM_ROOTS):
            made.add(folder)
            argv += ["--perms", "0755", "--dir", folder]
    return argv


def _aliases(real: str, shown: Sequence[str]) -> list[str]:
    """Where the host's ``real`` path appears in the sandbox."""
    found = [real] if _under_any(real, SYSTEM_ROOTS) else []
    for path in shown:
        root = os.path.realpath(path)
        if _under(real, root):
            found.append(path + real[len(root) :])
    return list(dict.fromkeys(found))


def wrap(
    command: str,
    cwd: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    bwrap: str = "bwrap",
    hide: Sequence[str] = (),
    ids: tuple[int, int] | None = None,
    seccomp_fd: int | None = None,
    rivals: Sequence[str] = (),
) -> list[str]:
    """The argv that runs the shell command ``command`` in a sandbox, in ``cwd`` (an empty
    read-only folder there, with only what the command needs in it: :func:`_needed_paths`).

    The existing files and folders in ``hide`` (a tournament's database and lock, see
    :func:`private_paths`) cannot be opened, nor can the databases and report folders in
    ``cwd``, nor what the other bots of the run (``rivals``: their commands) name and their
    own folders: ``/dev/null`` is mounted over a file (device files do not open in the
    sandbox), an empty read-only folder over a folder. ``ids`` is the bot's (uid, gid)
    (:func:`bot_ids` if None). ``seccomp_fd`` is a descriptor the seccomp filter is read
    from (:func:`seccomp_fd`: the spawn must pass it), or None.
    """
    cwd = os.path.abspath(cwd or os.getcwd())
    uid, gid = bot_ids() if ids is None else ids
    namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                  "--unshare-cgroup-try"]  # fmt: skip
    caps = ["CAP_SYS_ADMIN", "CAP_SETPCAP"]
    if switches_user():  # no user namespace: setpriv switches to the bot's own uid
        caps += ["CAP_SETUID", "CAP_SETGID", "CAP_CHOWN"]
    else:  # the only way in for anyone else; the bot keeps the caller's uid
        # (and none inside it: the seccomp filter also sees to that)
        namespaces += ["--unshare-user", "--disable-userns"]
    argv = [
        "prlimit", f"--as={limits.memory_bytes}", f"--fsize={limits.file_size_bytes}",
        "--core=0", "--",
        bwrap, *namespaces, "--hostname", "sandbox", "--die-with-parent", "--new-session",
        "--cap-drop", "ALL", *(word for cap in caps for word in ("--cap-add", cap)),
    ]  # fmt: skip
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    for root in SYSTEM_ROOTS:
        if os.path.lexists(root):
            argv += _symlink_or_bind(root)
    argv += [
        "--dev", "/dev", "--proc", "/proc",
        "--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/dev/shm",
        "--remount-ro", "/dev",
        "--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
        # host daemons' sockets (connect() ignores a read-only mount) stay out of reach
        "--perms", "0755", "--tmpfs", "/run", "--remount-ro", "/run",
        "--perms", "0755", "--dir", "/var", "--symlink", "../tmp", "/var/tmp",
    ]  # fmt: skip
    argv += _etc_mounts()
    made = {"/", "/dev", "/proc", "/tmp", "/run", "/var", "/etc", "/home"}
    argv += ["--perms", "0755", "--dir", "/home"]
    argv += ["--perms", "0700", "--size", str(limits.tmp_bytes), "--tmpfs", BOT_HOME]
    shown, _unseen, covered = _needed_paths(command, cwd, rivals)
    # The working directory, unless shown: an empty folder of its own to start in, holding
    # what is shown below it, read-only once that is in (also where it lies in /tmp).
    bare_cwd = cwd not in made and not _under_any(cwd, (*shown, *SYSTEM_ROOTS, *UNSHOWABLE_ROOTS))
    if bare_cwd:
        argv += _dirs_for(cwd, made)
        argv += ["--perms", "0755", "--size", str(CWD_BYTES), "--tmpfs", cwd]
        made.add(cwd)
    for path in shown:
        argv += _dirs_for(path, made)
        argv += ["--ro-bind", path, path]
    needed = {os.path.realpath(p) for p in _named_paths(command, cwd)[0]}
    scanned = [cwd] if not _never_whole(cwd) and not _under_any(cwd, SYSTEM_ROOTS) else []
    private = [*hide, *private_paths(scanned), *covered]
    for real in dict.fromkeys(map(os.path.realpath, private)):
        if real in needed or any(_under(path, real) for path in needed):
            continue  # named by the organiser's own command line
        for alias in _aliases(real, shown):
            if os.path.isfile(alias) and not os.path.islink(alias):
                argv += ["--ro-bind", "/dev/null", alias]
            elif os.path.isdir(alias) and not os.path.islink(alias):
                argv += ["--perms", "0000", "--size", "4096", "--tmpfs", alias,
                         "--remount-ro", alias]  # fmt: skip
    if bare_cwd:
        argv += ["--remount-ro", cwd]
    argv += ["--remount-ro", "/"]
    argv += ["--setenv", "TMPDIR", "/tmp", "--setenv", "HOME", BOT_HOME, "--chdir", cwd]
    argv += ["--", "/bin/sh", "-c", _prelude(limits, uid, gid), "cardarena-sandbox", _RESTORE]
    argv.append(command)
    return argv


@dataclass(frozen=True)
class Support:
    """Whether the sandbox works on this machine, and if not, why; whether its seccomp
    filter does too, and if not, why."""

    ok: bool
    reason: str = ""
    seccomp: bool = False
    seccomp_reason: str = ""


def _probe(seccomp_fd: int | None) -> tuple[bool, str]:
    """Run ``echo ok`` in a real sandbox: (it worked, else why not)."""
    try:
        done = subprocess.run(
            wrap("echo ok", "/", seccomp_fd=seccomp_fd), capture_output=True,
            timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False,
            env=carry_environment({"PATH": os.environ.get("PATH", PRELUDE_PATH)}),
            pass_fds=() if seccomp_fd is None else (seccomp_fd,),
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        return False, f"bwrap failed to start: {error}"
    if done.returncode != 0 or done.stdout != READY_MARKER + b"ok\n":
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = lines[-1] if lines else f"exit status {done.returncode}"
        return False, f"bwrap does not work here: {why}"
    return True, ""


@functools.cache
def support() -> Support:
    """Probe once per process: run ``echo ok`` in a real sandbox (bwrap present, user
    namespaces allowed, the limits settable), with the seccomp filter where there is one,
    else (or if bwrap cannot install it) without."""
    if not sys.platform.startswith("linux"):
        return Support(False, f"not supported on {sys.platform}")
    for tool in ("bwrap", "prlimit", "setpriv"):
        if shutil.which(tool) is None:
            return Support(False, f"{tool} not found (install bubblewrap and util-linux)")
    refused = ""
    fd = seccomp.open_program()
    if fd is not None:
        try:
            ok, refused = _probe(fd)
        finally:
            os.close(fd)
        if ok:
            return Support(True, seccomp=True)
    ok, why = _probe(None)
    if not ok:
        return Support(False, why)
    return Support(True, seccomp_reason=seccomp.unavailable_reason() or refused)


def seccomp_fd() -> int | None:
    """A new descriptor to give :func:`wrap` (and the spawn's ``pass_fds``) for one sandbox,
    which the caller closes once bwrap has started: the seccomp filter, or None where it
    cannot be had (:func:`available` warned)."""
    return seccomp.open_program() if support().seccomp else None


_warned = False
_warned_seccomp = False


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
    """True if bots can be sandboxed; otherwise warn (once) and return False. A sandbox
    without its seccomp filter is one warning too (once)."""
    global _warned_seccomp
    found = support()
    if found.ok:
        if not found.seccomp and not _warned_seccomp:
            _warned_seccomp = True
            print(f"{program}: warning: the bot sandbox runs without its seccomp filter "
                  f"({found.seccomp_reason})", file=sys.stderr)  # fmt: skip
        return True
    warn_unsupported(program)
    return False
