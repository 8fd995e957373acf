"""Build a ladder submission inside the bot sandbox: a stranger's code, compiled as nobody.

The compiler runs in the same bubblewrap sandbox as a bot in a game
(:mod:`~cardarena.locm.referee.sandbox`): its own PID, network and IPC namespaces (no
network at all), no capabilities, the seccomp filter where there is one, a user of its own
when the server runs as root, and a file system that shows only the system's programs and
libraries (``/usr``, ``/lib``, the toolchains a language names), a reduced ``/etc``, the
submission's folder read-only and a private ``HOME`` and ``/tmp``. It runs in a cgroup of
its own with a memory budget, under a CPU-time cap (per process and for the whole tree)
and a wall-clock limit; past either, everything in it is killed.

The build writes into a size-capped tmpfs inside the sandbox, never onto the server's
disk; when it has succeeded, the sandbox streams that folder out as a tar archive on its
stdout, and the server unpacks it into ``out_dir`` with the upload checks
(:func:`~cardarena.ladder.uploads.unpack_tar`: no links or devices, names checked, sizes
capped while streaming, modes 0644/0755). So ``out_dir`` is the server's, read-only to the
bots, and holds only regular files.

The result's ``command`` is the bot's command line for the referee; it names a file or
the folder ``out_dir``, so that the referee's sandbox shows the bot only that folder.
"""

from __future__ import annotations

import contextlib
import math
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ...ladder.languages import Language, LanguageError, entry_folder, expand, source_files
from ...ladder.uploads import UploadError, UploadLimits, unpack_tar
from ..referee import botenv, cgroups, sandbox

INNER_OUT = f"{sandbox.BOT_HOME}/out"
"""Where the build writes, inside the sandbox (on the private, size-capped HOME)."""
READ_CHUNK = 1 << 16
POLL_S = 0.1
"""How often a running build's CPU time is read from its cgroup."""
KILL_WAIT_S = 10.0
"""How long a killed build may take to be reaped."""
ENTER_STATUSES = (125, 126, 127)
"""Exit statuses of a build whose sandbox or compiler could not start."""


class BuildUnavailable(RuntimeError):
    """Builds cannot run here (no working sandbox); the message is one line."""


@dataclass(frozen=True)
class BuildLimits:
    """What one build may use."""

    cpu_s: float = 60.0
    """CPU time of every process of the build together (and of each one)."""
    wall_s: float = 120.0
    memory_mb: int = 1024
    """Memory of the whole build (its cgroup), where a memory controller can be had."""
    output_bytes: int = 50 << 20
    """The built bot: every file it writes to its output folder together (also the size
    of its private /tmp and HOME, and the largest file it may write)."""
    output_files: int = 2000
    log_bytes: int = 64 << 10
    """The compiler's messages kept for the owner (stdout and stderr together)."""


@dataclass(frozen=True)
class BuildResult:
    ok: bool
    log: str
    """What the owner sees: the compiler's output (capped), then why the build failed."""
    command: str | None
    """The bot's command line for the referee (``locm play -p1 COMMAND``), None if not ok."""
    seconds: float


def sandbox_problem() -> str | None:
    """Why builds cannot run sandboxed here, or None if they can."""
    found = sandbox.support()
    return None if found.ok else found.reason


def build(
    source_dir: Path,
    language: Language,
    out_dir: Path,
    limits: BuildLimits = BuildLimits(),
    *,
    allow_unsandboxed: bool = False,
) -> BuildResult:
    """Build the submission in ``source_dir`` (unpacked by
    :func:`~cardarena.ladder.uploads.unpack`) into ``out_dir`` (made; it must not exist or
    be empty), in the sandbox.

    BuildUnavailable where the sandbox does not work, unless ``allow_unsandboxed`` (for
    organisers' own tests: the compiler then runs as the server's user, with the same
    limits but seeing everything). Everything the submission gets wrong is a result with
    ``ok`` False and the reason at the end of its log.
    """
    started = time.monotonic()
    problem = sandbox_problem()
    sandboxed = problem is None
    if not sandboxed and not allow_unsandboxed:
        raise BuildUnavailable(
            f"cannot build submissions: the sandbox does not work here ({problem}); "
            "a ladder never builds strangers' code outside it"
        )
    if out_dir.name == "bin":  # the referee's sandbox would show its parent (an installation)
        raise ValueError(f"{out_dir}: an output folder must not be named bin")
    if out_dir.exists() and any(out_dir.iterdir()):
        raise ValueError(f"{out_dir} is not empty")

    def failed(log: str) -> BuildResult:
        return BuildResult(False, log, None, time.monotonic() - started)

    try:
        entry = entry_folder(source_dir, language)
    except LanguageError as error:
        return failed(f"{error}\n")
    # "./" before a name a compiler would read as an option or an argument file
    # ("-specs=x.c", "@args.java").
    files = [f"./{f}" if f.startswith(("-", "@")) else f for f in source_files(entry, language)]
    if language.build is not None and "{files}" in language.build and not files:
        return failed(f"no {' / '.join(language.suffixes)} file to build\n")
    if language.build is not None:
        program = _program(language.build[0])
        if program is None:
            return failed(f"{language.build[0]} is not installed on this server\n")
        template = (program, *language.build[1:])
    with tempfile.TemporaryDirectory(prefix="cardarena-build-") as scratch:
        inner_out = INNER_OUT if sandboxed else os.path.join(scratch, "out")
        values = {"src": str(entry), "out": inner_out, "main": language.source_name}
        steps = [f"mkdir -m 0755 {shlex.quote(inner_out)} || exit 125"]
        if language.copy_sources:
            steps.append(f"cp -R {shlex.quote(str(entry))}/. {shlex.quote(inner_out)}/ || exit 1")
        if language.build is not None:
            steps.append(f"cd {shlex.quote(str(entry))} || exit 125")
            steps.append(shlex.join(expand(template, values, files)) + " || exit $?")
        steps.append(f"cd {shlex.quote(inner_out)} && exec tar -cf - . >&3")
        # Everything but the archive goes to stderr: the log.
        script = "exec 3>&1 1>&2\n" + "\n".join(steps) + "\n"
        env = botenv.bot_environment(language.env, sandboxed=sandboxed)
        run = _run(script, entry, env, limits, sandboxed)
    log = _log_text(run.log, run.log_cut)
    if run.stopped:
        return failed(log + f"[build stopped: {run.stopped}]\n")
    if run.status != 0:
        return failed(log + f"[build failed: exit status {run.status}]\n")
    caps = UploadLimits(
        upload_bytes=limits.output_bytes * 2, unpacked_bytes=limits.output_bytes,
        files=limits.output_files, file_bytes=limits.output_bytes, depth=32,
    )  # fmt: skip
    try:
        unpack_tar(run.archive, out_dir, caps, "the build's output")
    except UploadError as error:
        return failed(log + f"[build refused: {error}]\n")
    values = {"src": str(out_dir), "out": str(out_dir), "main": language.source_name}
    command = shlex.join(expand(language.run, values))
    return BuildResult(True, log, command, time.monotonic() - started)


def _program(word: str) -> str | None:
    """The program a build template names, as the sandbox can run it: the word itself if
    it is on the PATH, but a rustup proxy (``~/.cargo/bin/rustc``) becomes the
    toolchain's own program (the sandbox shows its toolchain, not rustup's settings)."""
    found = shutil.which(word)
    if found is None:
        return None
    real = os.path.realpath(found)
    if os.path.basename(real).startswith("rustup"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            done = subprocess.run(
                [real, "which", os.path.basename(found)], capture_output=True, text=True,
                timeout=60, check=False, stdin=subprocess.DEVNULL,
            )  # fmt: skip
            target = done.stdout.strip()
            if done.returncode == 0 and os.path.isfile(target):
                return target
        return None
    return found if "/" in word else word


@dataclass
class _Run:
    status: int | None
    archive: bytes
    log: bytes
    log_cut: bool
    stopped: str | None


def _log_text(log: bytes, cut: bool) -> str:
    text = log.decode("utf-8", "replace")
    if text and not text.endswith("\n"):
        text += "\n"
    return text + ("[log cut: over its size limit]\n" if cut else "")


def _run(script: str, cwd: Path, env: dict[str, str], limits: BuildLimits, sandboxed: bool) -> _Run:
    """Run the build script (in the sandbox if ``sandboxed``) in its own cgroup, read its
    archive (stdout) and log (stderr), and stop it at the limits."""
    # SIGXCPU (the build is told) at the limit, SIGKILL a second later.
    cpu = f"--cpu={math.ceil(limits.cpu_s)}:{math.ceil(limits.cpu_s) + 1}"
    fd: int | None = None
    if sandboxed:
        box = sandbox.Limits(file_size_bytes=limits.output_bytes, tmp_bytes=limits.output_bytes)
        fd = sandbox.seccomp_fd()
        argv = sandbox.wrap(script, str(cwd), box, seccomp_fd=fd)
        assert argv[0] == "prlimit"
        argv.insert(1, cpu)
        env = sandbox.carry_environment(env)
    else:
        argv = ["prlimit", cpu, f"--fsize={limits.output_bytes}", "--core=0", "--",
                "/bin/sh", "-c", script]  # fmt: skip
    group = cgroups.create("locm ladder", memory_bytes=limits.memory_mb << 20)
    try:
        process = subprocess.Popen(
            cgroups.launcher(group, argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            pass_fds=() if fd is None else (fd,),
            umask=0o022,  # the sandbox's /etc/passwd readable whatever the server's umask
        )  # fmt: skip
    except OSError as error:
        if group is not None:
            group.remove_now()
        return _Run(None, b"", b"", False, f"cannot start the build: {error.strerror}")
    finally:
        if fd is not None:
            os.close(fd)
    try:
        return _watch(process, group, limits, sandboxed)
    finally:
        _kill(process)
        if group is not None:
            group.remove_now()


def _watch(
    process: subprocess.Popen[bytes], group: cgroups.BotCgroup | None, limits: BuildLimits,
    sandboxed: bool,
) -> _Run:  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    deadline = time.monotonic() + limits.wall_s
    archive = bytearray()
    log = bytearray()
    log_cut = False
    stopped: str | None = None
    waiting_marker = sandboxed
    archive_cap = limits.output_bytes * 2 + (4 << 20)  # files, tar headers and padding
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, "out")
        selector.register(process.stderr, selectors.EVENT_READ, "log")
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                stopped = f"over the {limits.wall_s:g} s wall-clock limit"
                break
            if _cpu_s(group) > limits.cpu_s:
                stopped = f"over the {limits.cpu_s:g} s CPU-time limit"
                break
            for key, _events in selector.select(min(left, POLL_S)):
                chunk = os.read(key.fd, READ_CHUNK)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.data == "log":
                    room = limits.log_bytes - len(log)
                    log += chunk[: max(room, 0)]
                    log_cut = log_cut or len(chunk) > room
                else:
                    if waiting_marker:
                        waiting_marker = False
                        if chunk.startswith(sandbox.READY_MARKER):
                            chunk = chunk[len(sandbox.READY_MARKER) :]
                    archive += chunk
                    if len(archive) > archive_cap:
                        stopped = f"its output is over the {limits.output_bytes >> 20} MB limit"
                        break
            if stopped:
                break
    if stopped is None:
        try:
            status = process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            status = None
            stopped = f"over the {limits.wall_s:g} s wall-clock limit"
    else:
        status = None
    memory = group.memory if group is not None else None
    if status:
        # Killed by a signal: the sandbox reports it as 128 + its number.
        signalled = -status if status < 0 else status - 128 if status > 128 else 0
        if memory is not None and memory.oom_kills() > 0:
            stopped = f"out of memory (over its {limits.memory_mb} MB budget)"
        elif signalled == signal.SIGXCPU or _cpu_s(group) >= limits.cpu_s:
            stopped = f"over the {limits.cpu_s:g} s CPU-time limit"
        elif signalled == signal.SIGXFSZ:
            stopped = f"a file over the {limits.output_bytes >> 20} MB limit"
    return _Run(status, bytes(archive), bytes(log), log_cut, stopped)


def _cpu_s(group: cgroups.BotCgroup | None) -> float:
    """CPU seconds of the whole build so far (0 where there is no cgroup to tell)."""
    cpu_ns = group.cpu_ns() if group is not None else None
    return (cpu_ns or 0) / 1e9


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill the build's sandbox (its PID namespace) and process group, and reap it."""
    if process.poll() is None:
        _kill_children(process.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=KILL_WAIT_S)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def _kill_children(pid: int) -> None:
    """SIGKILL the children of ``pid`` (bwrap's: the sandbox's init, whose death takes its
    whole PID namespace with it)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as file:
            children = [int(word) for word in file.read().split()]
    except (OSError, ValueError):
        return
    for child in children:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGKILL)
