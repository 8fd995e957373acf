"""The players a referee talks to: bot processes and built-in agents, behind one interface.

A :class:`Player` is sent one request at a time and gives back one line (or
``None``: no complete line in time, the bot exited, or the line was too long).
:class:`ProcessPlayer` runs any program over stdin/stdout and reproduces the
official runner's line reading byte for byte; :class:`InProcessPlayer` plays a
built-in :class:`~cardarena.locm.agents.Agent` on the referee's own state, so
that a user can test a bot against ours without writing a second bot.

Everything here runs on one asyncio event loop (the referee's): reads wait with
deadlines instead of threads, and stderr is drained by a background task so a
chatty bot can never block on a full pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import time
from collections.abc import Sequence
from typing import Protocol

from ..agents import Agent
from ..engine.rules import DECK_SIZE, MAX_ANSWER_BYTES
from ..engine.state import PASS, ActionType, Phase, State
from . import botenv, cgroups
from . import sandbox as sandboxing

STDERR_BYTES_PER_ROUND = 4096
"""The SDK runner logs at most this many bytes of a bot's stderr per execution."""
TERMINATE_GRACE_S = 1.0
"""How long a bot may take to exit after SIGTERM before its process group is killed."""
SANDBOX_READY_TIMEOUT_S = 30.0
"""How long a sandbox may take to set up (a loaded machine) before the bot's clock starts anyway."""
SANDBOX_EXIT_TIMEOUT_S = 5.0
"""How long closing waits for the kernel to empty a sandbox's PID namespace."""
EXITED_POLL_S = 1.0
"""Without a time limit, how often a wait for an answer checks that the bot still runs."""
KILLED_EXIT_TIMEOUT_S = 5.0
"""How long closing waits for a SIGKILLed bot to be reaped before it goes on regardless
(its cgroup, removed next, kills what is left)."""
_READ_CHUNK = MAX_ANSWER_BYTES


class Player(Protocol):
    """One side of a game, whatever runs it.

    ``send`` starts the player's clock on one input; ``receive`` returns its
    answer line without the terminator, or ``None`` if no complete line came
    before ``timeout_s`` (``None`` = no limit) after that send. The two are
    separate because in deck building both players get their input before
    either answer is read.
    """

    name: str

    async def start(self) -> None: ...

    async def send(self, text: str, state: State, player: int) -> None: ...

    async def receive(self, timeout_s: float | None) -> str | None: ...

    def take_stderr(self) -> str | None:
        """The player's stderr since the last call (bounded), or None if it wrote nothing."""
        ...

    async def close(self) -> None: ...


class StartError(RuntimeError):
    """A bot command could not be started."""


_SHELL_WORDS = frozenset(
    ("exec", "cd", ".", "source", "eval", "export", "set", "ulimit", "umask", "command",
     "builtin", "time", "nice", "if", "for", "while", "until", "case", "{", "(", "!", "[[")
)  # fmt: skip
_SHELL_SYNTAX = set("$`*?;&|<>(){}~")


def check_command(command: str) -> bool:
    """Refuse a command whose program does not exist or cannot run, before starting it.

    Commands go through the shell, so a command with shell syntax is left for the
    shell to judge (a failure then shows at the first request). True if the command
    is simple (a program and its arguments), so that the shell can ``exec`` it.
    """
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise StartError(f"cannot parse bot command {command!r}: {error}") from None
    if not words:
        raise StartError("empty bot command")
    program = words[0]
    if "=" in program or program in _SHELL_WORDS or _SHELL_SYNTAX & set(program):
        return False
    if shutil.which(program) is not None:
        return not _SHELL_SYNTAX & set(command)
    if "/" in program and os.path.exists(program):
        problem = "is a directory" if os.path.isdir(program) else "is not executable"
        raise StartError(f"bot program {program!r} {problem} (in command {command!r})")
    raise StartError(f"bot program {program!r} not found (in command {command!r})")


class LineSplitter:
    """The official runner's line reading, over a byte stream.

    ``\\n``, ``\\r`` and ``\\r\\n`` end a line; the ``\\n`` of a ``\\r\\n`` is
    swallowed even when it arrives in a later read or a later turn; extra lines
    wait for the next turn; a line that has no terminator within its first
    ``MAX_ANSWER_BYTES`` bytes can never complete (the runner's buffer is full).
    """

    def __init__(self) -> None:
        self._data = bytearray()
        self._after_cr = False

    def feed(self, chunk: bytes) -> None:
        self._data += chunk

    def pop_line(self) -> bytes | None:
        """The next complete line, or None if there is none yet."""
        data = self._data
        if self._after_cr and data:
            self._after_cr = False
            if data[0] == 0x0A:
                del data[0]
        window = data[:MAX_ANSWER_BYTES]
        ends = [i for i in (window.find(b"\n"), window.find(b"\r")) if i >= 0]
        if not ends:
            return None
        end = min(ends)
        line = bytes(data[:end])
        self._after_cr = data[end] == 0x0D
        del data[: end + 1]
        return line

    @property
    def overflowed(self) -> bool:
        """True if the pending line can never complete within the runner's buffer."""
        return len(self._data) >= MAX_ANSWER_BYTES


class ProcessPlayer:
    """A bot program, started through the shell in its own process group.

    With ``sandbox`` (where :func:`~cardarena.locm.referee.sandbox.available`), the shell and
    the bot run in a bubblewrap sandbox: our child is then ``bwrap``, and killing
    it kills the sandbox's PID namespace, every descendant of the bot included.
    """

    def __init__(
        self,
        command: str,
        name: str | None = None,
        sandbox: bool = False,
        hidden: Sequence[str] = (),
        env: Sequence[tuple[str, str]] = (),
        memory_bytes: int | None = cgroups.DEFAULT_MEMORY_MB << 20,
        rivals: Sequence[str] = (),
    ) -> None:
        self.command = command
        self.name = name or command
        self.sandbox = sandbox
        self.hidden = tuple(hidden)
        """Files the sandboxed bot must not even read (a tournament's database)."""
        self.rivals = tuple(c for c in rivals if c != command)
        """The other bots' commands in this run: the sandbox covers what they name."""
        self.env = tuple(env)
        """Variables the organiser passes to the bot (``--bot-env``), over the allow-list."""
        self.sandboxed = False
        """True once started inside a sandbox."""
        self._sandbox_init: int | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._stderr = bytearray()
        self._stderr_seen = False
        self._lines = LineSplitter()
        self._eof = False
        self._answered = False
        self._sent_at = 0.0
        self._pgid: int | None = None
        self._cgroup: cgroups.BotCgroup | None = None
        self.cpu_ns: int | None = None
        """CPU time of the bot's whole process tree, from its cgroup, once it is closed."""
        self.memory_bytes = memory_bytes
        """The bot's memory budget (its whole process tree), None for none."""
        self.memory_budget: int | None = None
        """The budget its cgroup enforces, None where no memory controller could be had."""
        self.memory_peak: int | None = None
        """The most memory its whole tree held at once, from its cgroup, once it is closed."""
        self.oom_kills = 0
        """Processes of the bot the kernel killed for going over its budget, once closed."""

    @property
    def isolated(self) -> bool:
        """True if the bot's process tree is frozen outside its turns (its own cgroup)."""
        return self._cgroup is not None

    @property
    def cgroup(self) -> cgroups.BotCgroup | None:
        """The bot's own cgroup while it runs (None where none could be had): a tournament
        reads its CPU time per turn (:mod:`.starvation`)."""
        return self._cgroup

    @property
    def overflowed(self) -> bool:
        """True once the bot wrote a line longer than the runner reads (lost as a timeout)."""
        return self._lines.overflowed

    async def start(self) -> None:
        command = self.command
        if check_command(command):
            command = "exec " + command  # no shell process left in between
        self.sandboxed = self.sandbox and sandboxing.available()
        if self.sandboxed:
            unseen = sandboxing.unseen_paths(self.command)
            if unseen:  # the bot would run, but on the bare base interpreter: say so now
                raise StartError(
                    f"bot command {self.command!r} needs {unseen[0]}, which the sandbox cannot "
                    "show (it replaces /tmp, /run and /dev with empty ones): move that "
                    "environment elsewhere (e.g. under /tmp/NAME or your home) or use --no-sandbox"
                )
            unreadable = sandboxing.unreadable_paths(self.command, rivals=self.rivals)
            if unreadable:  # the bot's own user (not root) could not even start it
                raise StartError(
                    f"bot command {self.command!r} needs {unreadable[0]}, which the sandbox's "
                    "unprivileged user cannot read (as root, bots run as a user of their own): "
                    "make the bot's own files readable by others (chmod -R o+rX on its folder; "
                    "the folders above and the working directory need nothing) or use "
                    "--no-sandbox"
                )
        env = botenv.bot_environment(self.env, sandboxed=self.sandboxed)
        pipe = asyncio.subprocess.PIPE
        self._cgroup = _new_cgroup(self.memory_bytes)
        if self._cgroup is not None and self._cgroup.memory is not None:
            self.memory_budget = self._cgroup.memory.budget_bytes
        seccomp_fd = sandboxing.seccomp_fd() if self.sandboxed else None  # closed below
        if self.sandboxed:
            wrapped = sandboxing.wrap(command, hide=self.hidden, seccomp_fd=seccomp_fd,
                                      rivals=self.rivals)  # fmt: skip
            argv = cgroups.launcher(self._cgroup, wrapped)
            env = sandboxing.carry_environment(env)
        else:
            argv = cgroups.launcher(self._cgroup, ["/bin/sh", "-c", command])
        try:
            spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
                *argv, stdin=pipe, stdout=pipe, stderr=pipe, env=env,
                start_new_session=True,  # its own process group: killed as a whole
                pass_fds=() if seccomp_fd is None else (seccomp_fd,),
            ))  # fmt: skip
            try:
                self._process = await asyncio.shield(spawn)
            except asyncio.CancelledError:
                # Stopped (SIGTERM, Ctrl-C) while starting: keep the process so that close()
                # kills it. Cancelling the spawn would leave a process nobody knows of (a
                # sandbox still being set up would wait for bwrap forever).
                self._process = await spawn
                self._pgid = self._process.pid
                raise
        except OSError as error:
            raise StartError(f"cannot start {self.command!r}: {error.strerror}") from None
        finally:
            if seccomp_fd is not None:  # bwrap has its own copy
                os.close(seccomp_fd)
        self._pgid = self._process.pid
        self._stderr_task = asyncio.create_task(self._drain_stderr())
        if self.sandboxed:
            await self._await_sandbox()
        if self._cgroup is not None:  # its start-up runs on its first turn's clock
            self._cgroup.freeze()

    async def _await_sandbox(self) -> None:
        """Wait until the sandbox is set up, so that its start-up is not on the bot's clock.

        The sandbox writes one marker byte on stdout right before it runs the bot;
        if it fails instead, the bot is simply never heard from (a crash at its
        first turn, with bwrap's message in its stderr).
        """
        process = self._process
        assert process is not None and process.stdout is not None
        with contextlib.suppress(TimeoutError, asyncio.IncompleteReadError):
            marker = await asyncio.wait_for(
                process.stdout.readexactly(len(sandboxing.READY_MARKER)), SANDBOX_READY_TIMEOUT_S
            )
            if marker != sandboxing.READY_MARKER:  # cannot happen: the bot had not started
                self._lines.feed(marker)
        self._sandbox_init = _only_child(process.pid)

    async def _drain_stderr(self) -> None:
        """Read stderr continuously; keep only what one round of the log may hold."""
        assert self._process is not None and self._process.stderr is not None
        stream = self._process.stderr
        while chunk := await stream.read(65536):
            self._stderr_seen = True
            room = STDERR_BYTES_PER_ROUND - len(self._stderr)
            if room > 0:
                self._stderr += chunk[:room]

    def take_stderr(self) -> str | None:
        if not self._stderr_seen:
            return None
        text = self._stderr.decode("utf-8", "replace")
        self._stderr.clear()
        self._stderr_seen = False
        return text

    async def send(self, text: str, state: State, player: int) -> None:
        process = self._process
        assert process is not None and process.stdin is not None
        self._sent_at = asyncio.get_running_loop().time()
        if self._cgroup is not None:  # its turn: its processes may run
            self._cgroup.thaw()
        if process.stdin.is_closing():
            return
        # No drain(): a bot that never reads must not block the referee; the
        # transport buffers what the pipe does not take (a game is a few hundred KB).
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, RuntimeError):
            process.stdin.write(text.encode("utf-8"))

    async def receive(self, timeout_s: float | None) -> str | None:
        line = await self._read_line(timeout_s)
        if self._cgroup is not None and (line is not None or not self._eof):
            # Answered or out of time: nothing of it runs until its next turn. (A bot that
            # closed its output is left to exit, so that its exit status can be read.)
            self._cgroup.freeze()
        return line

    async def _read_line(self, timeout_s: float | None) -> str | None:
        process = self._process
        assert process is not None and process.stdout is not None
        loop = asyncio.get_running_loop()
        deadline = None if timeout_s is None else self._sent_at + timeout_s
        while True:
            line = self._lines.pop_line()
            if line is not None:
                return line.decode("utf-8", "replace")
            if self._lines.overflowed or self._eof:
                if self._eof:
                    await self._settle_stderr()
                return None
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return None
            try:
                chunk = await asyncio.wait_for(
                    process.stdout.read(_READ_CHUNK),
                    EXITED_POLL_S if remaining is None else remaining,
                )
            except TimeoutError:
                if remaining is None and process.returncode is None:
                    continue  # no time limit, and the bot is alive: wait on
                return None  # out of time, or exited (a child of it keeps its output open)
            self._eof = not chunk
            self._answered = self._answered or bool(chunk)
            self._lines.feed(chunk)

    def out_of_memory(self) -> bool:
        """True if the kernel has killed one of the bot's processes for going over its
        memory budget (asked after a missing answer: the bot lost for that)."""
        if self._cgroup is not None and self._cgroup.memory is not None:
            self.oom_kills = max(self.oom_kills, self._cgroup.memory.oom_kills())
        return self.oom_kills > 0

    async def exits_within(self, seconds: float) -> bool:
        """After a missing answer (the game is over): whether the bot's output ended or its
        process exits within ``seconds`` — a crash that the clock overtook on a loaded
        machine — rather than it still running (a timeout)."""
        process = self._process
        if self._eof or process is None:
            return self._eof
        return await _exit_status(process, seconds) is not None

    async def _settle_stderr(self) -> None:
        """After a crash, give its last words a moment to reach the log."""
        if self._stderr_task is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 0.5)

    async def startup_failure(self) -> str | None:
        """Why the bot never played, if it exited with an error before writing anything.

        Asked after its first request got no line: a command that cannot run (exit
        status 126/127 from the shell) or that fails at once is a usage error, not a
        game result.
        """
        process = self._process
        if process is None or not self._eof or self._answered:
            return None
        status = await _exit_status(process, TERMINATE_GRACE_S)
        if status is None or status == 0:
            return None
        if self.out_of_memory():
            return (
                f"ran out of memory (over its {_mb(self.memory_budget)} MB budget) before "
                "its first answer"
            )
        lines = bytes(self._stderr).decode("utf-8", "replace").strip().splitlines()
        tail = f": {lines[-1].strip()}" if lines else ""
        return f"exited with status {status} before its first answer{tail}"

    async def close(self) -> None:
        """Terminate the whole process group (SIGTERM, then SIGKILL) and reap it; then kill
        whatever is left in the bot's cgroup and remove the cgroup."""
        try:
            await self._close_process()
        finally:
            if self._cgroup is not None:
                await self._cgroup.remove()
                self._cgroup = None

    async def _close_process(self) -> None:
        process = self._process
        if self._cgroup is not None:
            self.cpu_ns = self._cgroup.cpu_ns()
            if self._cgroup.memory is not None:
                self.out_of_memory()
                self.memory_peak = self._cgroup.memory.peak_bytes()
            with contextlib.suppress(OSError):  # frozen, it could not even die of SIGTERM
                self._cgroup.thaw()
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        if self.sandboxed:  # kill its PID namespace first: bwrap then exits at once
            _kill_sandbox_init(process.pid)
        _signal_group(process.pid, signal.SIGTERM)
        await _exit_status(process, TERMINATE_GRACE_S)
        # Whatever is left in the group: children that ignore SIGTERM, a stuck leader.
        _signal_group(process.pid, signal.SIGKILL)
        await _exit_status(process, KILLED_EXIT_TIMEOUT_S)  # bounded: see _exit_status
        self._process = None
        self._pgid = None
        if self._sandbox_init is not None:
            await _namespace_gone(self._sandbox_init)
            self._sandbox_init = None
        if self._stderr_task is not None:
            try:
                await asyncio.wait_for(self._stderr_task, TERMINATE_GRACE_S)
            except (TimeoutError, asyncio.CancelledError):
                self._stderr_task.cancel()
        # Unread stdout keeps the pipes open until the transport is closed: close it now
        # (asyncio.subprocess.Process has no public close), or every game leaks descriptors.
        transport = getattr(process, "_transport", None)
        if transport is not None:
            transport.close()

    def kill_now(self) -> None:
        """Last resort when the event loop is gone (a second Ctrl-C): SIGKILL the group."""
        if self._pgid is not None:
            if self.sandboxed:
                _kill_sandbox_init(self._pgid)
            _signal_group(self._pgid, signal.SIGKILL)
            self._pgid = None
        if self._cgroup is not None:
            self._cgroup.remove_now()
            self._cgroup = None


def _new_cgroup(memory_bytes: int | None) -> cgroups.BotCgroup | None:
    """The bot's own cgroup, or None where cgroups cannot be had (warned once) or are off."""
    try:
        return cgroups.create(memory_bytes=memory_bytes)
    except cgroups.CgroupModeError as error:
        raise StartError(str(error)) from None


def _mb(size: int | None) -> int:
    return (size or 0) >> 20


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


async def _exit_status(process: asyncio.subprocess.Process, timeout_s: float) -> int | None:
    """The process's exit status once it has exited, or None if it is still running after
    ``timeout_s``. Never ``process.wait()``, which (Python 3.11) also waits until every
    pipe is closed: a child that left the bot's process group (``setsid``) and keeps its
    output open would hold the referee for ever."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    delay = 0.001
    while process.returncode is None and loop.time() < deadline:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return process.returncode


def _only_child(pid: int) -> int | None:
    """The one child of ``pid`` (bwrap's: the sandbox's init), or None if unknown."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as file:
            children = file.read().split()
    except OSError:
        return None
    return int(children[0]) if len(children) == 1 else None


def _kill_sandbox_init(bwrap_pid: int) -> None:
    """SIGKILL the sandbox's init, which the kernel answers by killing its whole PID
    namespace; also a sandbox still being set up, which ignores its parent's death."""
    init = _only_child(bwrap_pid)
    if init is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(init, signal.SIGKILL)


def _dead(pid: int) -> bool:
    """True if ``pid`` is gone or a zombie (a namespace's init is a zombie only once
    the kernel has killed and reaped everything else in its namespace)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            state = file.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


async def _namespace_gone(init_pid: int) -> None:
    """Wait (bounded) until a sandbox's init has died, so nothing of the bot outlives close()."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SANDBOX_EXIT_TIMEOUT_S
    delay = 0.001
    while not _dead(init_pid) and loop.time() < deadline:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)


class InProcessPlayer:
    """A built-in agent playing through the player interface, on the referee's state.

    It plays whole turns: in battle it applies its actions to a clone until it
    picks PASS and answers them as one ``;``-separated line; in deck building it
    answers ``PICK i`` (1.0/1.2) or 30 ``CHOOSE id`` (1.5). It keeps the official clock
    like a bot process: the wall time of its whole turn's thinking, from being handed the
    state to having the answer, is compared with the turn's scaled limit, and an answer
    over it is no answer, a timeout (reported like a bot process's, overloaded machine
    included). An agent that raises (a researcher's agent given by reference) gives no
    answer, like a crashed bot, and its error is its stderr.
    """

    def __init__(self, agent: Agent, name: str | None = None) -> None:
        self.agent = agent
        self.name = name or f"builtin:{agent.name}"
        self._answer: str | None = None
        self._stderr: str | None = None
        self._thinking_s = 0.0

    async def start(self) -> None:
        return None

    async def send(self, text: str, state: State, player: int) -> None:
        started = time.perf_counter()
        try:
            self._answer = self._play(state, player)
        except Exception as error:  # the agent's bug loses its game, never the referee's
            self._answer = None
            self._stderr = f"{self.name} raised {type(error).__name__}: {error}\n"
        self._thinking_s = time.perf_counter() - started

    async def receive(self, timeout_s: float | None) -> str | None:
        if timeout_s is not None and self._thinking_s > timeout_s and self._answer is not None:
            self._stderr = (
                f"{self.name} answered after {self._thinking_s * 1000:.0f} ms, over the "
                f"{timeout_s * 1000:.0f} ms limit of this turn: a timeout\n"
            )
            return None
        return self._answer

    def take_stderr(self) -> str | None:
        text, self._stderr = self._stderr, None
        return text

    async def close(self) -> None:
        return None

    def _play(self, state: State, player: int) -> str:
        game = state.clone()
        picks: list[str] = []
        if game.phase == Phase.DECK_BUILDING:
            # Deck building is simultaneous, but a State takes choices in turn: the
            # other player's turns are filled with placeholder choices on the clone
            # (the real choices of the opponent are never shown, so this hides nothing).
            wanted = 1 if game.rules.draft else DECK_SIZE
            while len(picks) < wanted and game.phase == Phase.DECK_BUILDING:
                if game.current_player != player:
                    game.apply(game.legal_actions()[0])
                    continue
                action = self.agent.act(game)
                picks.append(str(action))
                game.apply(action)
            return ";".join(picks)
        while game.phase == Phase.BATTLE and game.active == player:
            action = self.agent.act(game)
            if action.type == ActionType.PASS:
                break
            picks.append(str(action))
            game.apply(action)
        return ";".join(picks) if picks else str(PASS)
