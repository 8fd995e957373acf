"""LOCM games on the batch tournament runner (:mod:`cardarena.tournaments`).

This module knows how to play one scheduled LOCM game through the referee
(:func:`play_scheduled_game`, run inside the workers) and turns its outcome into
a :class:`~cardarena.tournaments.store.GameRecord`; scheduling, storage, parallel
running and the report are in :mod:`cardarena.tournaments`.

A game is the referee's game with the same parameters (``seed=S``) and the same
built-in agent seeds, so the replay command stored with every game
(``locm play -p1 … -p2 … --version V -d seed=S``) plays it again. The command lines
(``locm tournament``, ``locm report``) are in :mod:`cardarena.locm.cli.tournament`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..tournaments.runner import run_tasks
from ..tournaments.schedule import GameSpec, schedule
from ..tournaments.store import (
    REFEREE,
    GameRecord,
    StoreError,
    TournamentStore,
    compress_log,
)
from .engine.params import GameParameters, resolve_parameters
from .engine.rules import DEFAULT_VERSION, FULL_POOL_LEAGUE, ruleset
from .engine.state import EndReason, Phase
from .referee import starvation
from .referee.causes import TIMEOUT, game_cause, illegal_actions, last_stderr_line
from .referee.cgroups import DEFAULT_MEMORY_MB, reap, warn_if_crowded
from .referee.game_loop import (
    BUILTIN_PREFIX,
    PYTHON_PREFIX,
    RefereeTerminated,
    TimeControl,
    agent_seed,
    check_player,
    in_process,
    make_player,
    play_game,
)
from .referee.players import InProcessPlayer, Player, ProcessPlayer, StartError
from .referee.sandbox import available as sandbox_available
from .referee.sandbox import private_paths

DEFAULT_DB = "tournament.db"
CRASH_MARGIN = 0.9
"""A missing answer that came before this share of the time limit is a crash, not a timeout."""
PROBE_S = 1.0
"""How long each bot command is run, without input, before the first game: a command
that exits with an error status within this time (``python3 missing.py``, a Java
class that does not exist) is a usage error, not a tournament of crashes."""
FREEZE_POLL_S = 0.005
FREEZE_WAIT_S = 2.0
"""At most this long after a timeout for the bot to be frozen before its waits are read."""
KIND_OF_REASON = {EndReason.INVALID_OUTPUT: "invalid", EndReason.ABORTED_EMPTY_LINE: "empty line"}
"""The error kind of a game a bot ended, by the referee's end reason; a missing answer
(TIMEOUT) is ``memory`` (the bot went over its budget: the outcome says so), a ``timeout``,
a ``crash`` or ``too long``, and any other reason that names a player (one added later) is
that reason's name in words: charged to the bot, a loss, whatever its kind."""


@dataclass(frozen=True)
class LocmGameTask:
    """Everything a worker needs to play one scheduled game (picklable)."""

    spec: GameSpec
    commands: tuple[str, str]
    params: GameParameters
    """The game's parameters (``seed=spec.seed``), which carry its version."""
    league: int
    time_scale: float
    sandbox: bool = True
    hidden: tuple[str, ...] = ()
    """Files a sandboxed bot must not read: the database and its lock."""
    bot_env: tuple[tuple[str, str], ...] = ()
    """Variables the organiser passes to every bot (``--bot-env``)."""
    memory_mb: int | None = DEFAULT_MEMORY_MB
    """Each bot's memory budget (``--memory``), its whole process tree."""
    rivals: tuple[str, ...] = ()
    """Every bot command of the tournament: a bot cannot read what the others name."""


class TimedPlayer:
    """Wraps a player to time its battle answers and tell a crash from a timeout."""

    def __init__(self, inner: Player) -> None:
        self.inner = inner
        self.name = inner.name
        self.battle_ms: list[float] = []
        self.quiet_exit = False
        """True if its last missing answer came early: it exited or closed its output."""
        self.too_long = False
        """True if its last missing answer was a line longer than the runner reads."""
        self.starved: bool | None = None
        """For its last missing answer: starved of CPU by the machine (:mod:`.starvation`)."""
        self._sent = 0.0
        self._battle = False
        self._before: starvation.Sample | None = None

    async def start(self) -> None:
        await self.inner.start()

    async def send(self, text: str, state: object, player: int) -> None:
        self._battle = getattr(state, "phase", None) == Phase.BATTLE
        self._before = self._sample()  # (a bot process is frozen here: off its clock)
        self._sent = time.perf_counter()
        await self.inner.send(text, state, player)  # type: ignore[arg-type]

    async def receive(self, timeout_s: float | None) -> str | None:
        line = await self.inner.receive(timeout_s)
        elapsed = time.perf_counter() - self._sent
        if self._battle:
            self.battle_ms.append(elapsed * 1000)
        if line is None:
            self.quiet_exit = timeout_s is None or elapsed < timeout_s * CRASH_MARGIN
            self.too_long = bool(getattr(self.inner, "overflowed", False))
            if not (self.quiet_exit or self.too_long):  # a timeout: was it starved?
                await self._frozen(timeout_s)
                after = self._sample(check_priority=True)
                self.starved = starvation.starved(self._before, after, timeout_s)
        return line

    async def _frozen(self, bound_s: float | None) -> None:
        """Wait (at most the turn's limit, and FREEZE_WAIT_S) until the bot's cgroup is
        frozen (or empty: it exited late): a task still queued for a CPU has its wait
        counted only once it runs, which freezing makes it do. Not frozen by then, the wait
        is under-counted: never a replay by mistake."""
        cgroup = getattr(self.inner, "cgroup", None)
        if cgroup is None:
            return
        deadline = time.monotonic() + min(bound_s or FREEZE_WAIT_S, FREEZE_WAIT_S)
        with contextlib.suppress(OSError):
            while not cgroup.frozen() and cgroup.pids() and time.monotonic() < deadline:
                await asyncio.sleep(FREEZE_POLL_S)

    def _sample(self, check_priority: bool = False) -> starvation.Sample | None:
        """The bot's CPU time and waits for a CPU now: its cgroup's, or for an in-process
        agent the referee's thread (it thinks there); None where not measurable."""
        cgroup = getattr(self.inner, "cgroup", None)
        if cgroup is not None:
            return starvation.sample_group(cgroup, check_priority)
        if isinstance(self.inner, InProcessPlayer):
            return starvation.sample_thread(check_priority)
        return None

    def take_stderr(self) -> str | None:
        return self.inner.take_stderr()

    async def close(self) -> None:
        await self.inner.close()

    @property
    def isolated(self) -> bool:
        """True if the wrapped bot is frozen outside its turns (see the referee's cgroups)."""
        return bool(getattr(self.inner, "isolated", False))

    @property
    def cpu_ns(self) -> int | None:
        """The wrapped bot's CPU time over the game, where its cgroup measured it."""
        return getattr(self.inner, "cpu_ns", None)

    def out_of_memory(self) -> bool:
        """True if the wrapped bot went over its memory budget (the kernel killed in it)."""
        check = getattr(self.inner, "out_of_memory", None)
        return bool(check()) if callable(check) else False

    @property
    def memory_budget(self) -> int | None:
        return getattr(self.inner, "memory_budget", None)

    @property
    def memory_peak(self) -> int | None:
        return getattr(self.inner, "memory_peak", None)


def replay_command(task: LocmGameTask) -> str:
    """The ``locm play`` command line that plays this game again."""
    first, second = task.commands
    parts = [
        "locm", "play", "-p1", shlex.quote(first), "-p2", shlex.quote(second),
        "--version", task.params.version, "-d", shlex.quote(f"seed={task.spec.seed}"),
    ]  # fmt: skip
    if task.league != FULL_POOL_LEAGUE:
        parts += ["--league", str(task.league)]
    if task.time_scale != 1.0:
        parts += ["--time-scale", repr(task.time_scale)]
    if task.memory_mb != DEFAULT_MEMORY_MB:
        parts += ["--memory", str(task.memory_mb)]
    # Names only: a value passed to the bots (a token) must not end up in the database.
    parts += [f"--bot-env {name}" for name, _value in task.bot_env]
    return " ".join(parts)


def play_scheduled_game(task: LocmGameTask) -> GameRecord:
    """Play one game (in a worker) and describe it as a record; never raises for a
    misbehaving bot: its crash, timeout or garbage is the game's result."""
    params = task.params
    started = time.perf_counter()
    players: list[TimedPlayer] = []
    try:
        players = [
            TimedPlayer(
                make_player(
                    command,
                    agent_seed(params, seat),
                    task.time_scale,
                    task.sandbox,
                    task.hidden,
                    task.bot_env,
                    task.memory_mb,
                    rivals=task.rivals,
                )
            )
            for seat, command in enumerate(task.commands)
        ]
        outcome = play_game(
            players[0],
            players[1],
            params=params,
            league=task.league,
            time_control=TimeControl(task.time_scale),
            sandbox=task.sandbox,
        )
    except RefereeTerminated:
        raise  # the worker is being stopped: this game was not played
    except (StartError, Exception) as error:
        # A referee failure (not a bot's fault) costs this game only, recorded.
        detail = f"{type(error).__name__}: {error}"
        return _record(task, players, started, None, "error", "ERROR", None, REFEREE, detail,
                       cause=game_cause("ERROR", REFEREE, 0, detail=detail))  # fmt: skip
    reason = outcome.end_reason
    error_seat = outcome.error_player
    winner = outcome.winner
    kind = overloaded = detail = None
    if outcome.aborted_by is not None:
        # The official runner gives no result (the log says so, as it would); the bot
        # that sent the empty line is charged: a loss, never a way out of one.
        error_seat, winner = outcome.aborted_by, 1 - outcome.aborted_by
        detail = f"${error_seat} answered an empty line: the official runner aborts the game"
    elif error_seat is not None and outcome.summaries:
        detail = outcome.summaries[-1]
    if error_seat is not None:
        if outcome.out_of_memory[error_seat]:
            kind, overloaded = "memory", None
        else:
            kind, overloaded = _error_kind(reason, players[error_seat])
    if outcome.scores is None:
        result = "aborted"
    elif winner is None:
        result = "draw"
    else:
        result = "win"
    budget_mb = None
    if error_seat is not None and kind == "memory":
        budget_mb = (players[error_seat].memory_budget or 0) >> 20
        detail = f"out of memory (over its {budget_mb} MB budget)"
    loser = error_seat if error_seat is not None else None if winner is None else 1 - winner
    turns = sum(len(player.battle_ms) for player in players)
    cause = game_cause(
        reason.name, kind, turns, detail=detail, overloaded=overloaded, budget_mb=budget_mb,
        stderr=None if loser is None else last_stderr_line(outcome.log, loser),
        illegal=0 if loser is None else illegal_actions(outcome.summaries, loser),
        draw=loser is None,
    )  # fmt: skip
    return _record(
        task, players, started, winner, result, reason.name, error_seat, kind, detail,
        log=compress_log(outcome.log), load=load_per_core(), overloaded=overloaded, cause=cause,
    )  # fmt: skip


def _error_kind(reason: EndReason, player: TimedPlayer) -> tuple[str, bool | None]:
    """The error kind charged to ``player`` and, for a timeout, whether it was starved
    of CPU by the machine (None: not measured)."""
    if reason in KIND_OF_REASON:
        return KIND_OF_REASON[reason], None
    if reason != EndReason.TIMEOUT:
        return reason.name.lower().replace("_", " "), None
    if player.too_long:
        return "too long", None
    if player.quiet_exit:
        return "crash", None
    return TIMEOUT, player.starved


def retry_summary(counts: dict[tuple[str, bool], int]) -> str:
    """What ``--retry-errors`` plays again and what it keeps, from the stored error counts
    ((kind, measured overloaded) -> games)."""
    again = sum(n for (kind, over), n in counts.items() if kind == TIMEOUT and over)
    referee = sum(n for (kind, _), n in counts.items() if kind == REFEREE)
    kept: dict[str, int] = {}
    for (kind, over), n in sorted(counts.items()):
        if kind == REFEREE or (kind == TIMEOUT and over):
            continue
        label = "timeout (the bot had the CPU or was not measured)" if kind == TIMEOUT else kind
        kept[label] = kept.get(label, 0) + n
    text = (f"playing again {again} game(s) lost to a timeout while the machine starved "
            f"the bot of CPU, and {referee} referee failure(s)")  # fmt: skip
    if kept:
        listed = ", ".join(f"{kind} {n}" for kind, n in kept.items())
        text += (f"; keeping {sum(kept.values())} game(s) lost by the bot's own doing "
                 f"({listed}): a crash or an answer it chose is never played again")  # fmt: skip
    return text


def charge_stored_empty_lines(store: TournamentStore) -> int:
    """Charge the 1.0/1.2 empty-line aborts an earlier version stored with no culprit (so
    counted half a win each) to the bot that sent the line, found in the stored log (the
    first round whose answer is an empty line: the official runner aborts at once, on
    player 0's deck-building answer before player 1's). Returns how many were charged."""
    charged = 0
    for key in store.uncharged(EndReason.ABORTED_EMPTY_LINE.name):
        try:
            log = store.log(key)
        except StoreError:
            continue  # an unreadable log: the game stays as it was stored
        outputs = log.get("outputs", {}) if log else {}
        seats = [outputs.get(str(seat)) for seat in (0, 1)]
        if not all(isinstance(answers, list) for answers in seats):
            continue
        for first, second in zip(*seats, strict=False):
            seat = 0 if first == "\n" else 1 if second == "\n" else None
            if seat is not None:
                charged += store.charge(key, seat, KIND_OF_REASON[EndReason.ABORTED_EMPTY_LINE])
                break
    return charged


def load_per_core() -> float | None:
    """The 1-minute load average per core: above 1, processes were waiting for a CPU."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return None


def lost_game(task: LocmGameTask, why: str) -> GameRecord:
    """A game whose worker died or whose referee failed: a referee failure, replayed
    on the next run of the same command."""
    return _record(task, [], time.perf_counter(), None, "error", "ERROR", None, REFEREE, why,
                   cause=game_cause("ERROR", REFEREE, 0, detail=why))  # fmt: skip


def _record(
    task: LocmGameTask,
    players: Sequence[TimedPlayer],
    started: float,
    winner: int | None,
    result: str,
    end_reason: str,
    error_seat: int | None,
    error_kind: str | None,
    detail: str | None,
    log: bytes | None = None,
    load: float | None = None,
    overloaded: bool | None = None,
    cause: str | None = None,
) -> GameRecord:
    times = [p.battle_ms for p in players] if players else [[], []]
    spec = task.spec
    return GameRecord(
        key=spec.key,
        first=spec.first,
        second=spec.second,
        round=spec.round,
        seed=spec.seed,
        winner=winner,
        result=result,
        end_reason=end_reason,
        error_seat=error_seat,
        error_kind=error_kind,
        detail=detail,
        turns=len(times[0]) + len(times[1]),
        first_turns=len(times[0]),
        first_mean_ms=sum(times[0]) / len(times[0]) if times[0] else 0.0,
        first_max_ms=max(times[0], default=0.0),
        second_turns=len(times[1]),
        second_mean_ms=sum(times[1]) / len(times[1]) if times[1] else 0.0,
        second_max_ms=max(times[1], default=0.0),
        duration_s=time.perf_counter() - started,
        replay=replay_command(task),
        log=log,
        load=load,
        overloaded=overloaded,
        cause=cause,
    )


# --- the command line ----------------------------------------------------------------


def parse_bot(text: str) -> tuple[str, str]:
    """``NAME=COMMAND``, or a bare ``builtin:NAME`` (named NAME) or ``python:...`` reference
    (named after its module or file)."""
    name, sep, command = text.partition("=")
    if text.startswith(BUILTIN_PREFIX) and (not sep or " " in name):
        return text[len(BUILTIN_PREFIX) :], text
    if text.startswith(PYTHON_PREFIX) and (not sep or ":" in name):
        from .agents.reference import reference_name

        return reference_name(text), text
    if not sep or not name.strip() or not command.strip():
        raise ValueError(
            f"--bot wants NAME=COMMAND, builtin:NAME or python:MODULE:FACTORY, got {text!r}"
        )
    if not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise ValueError(f"bot name {name!r}: use letters, digits, '-', '_' and '.'")
    return name, command.strip()


def _probe_bots(
    commands: Sequence[str],
    sandbox: bool,
    hidden: Sequence[str],
    bot_env: Sequence[tuple[str, str]] = (),
    memory_mb: int | None = DEFAULT_MEMORY_MB,
) -> None:
    """Run every bot command for up to PROBE_S without input; refuse one that fails.

    ``check_command`` already refuses a program that does not exist; this catches a
    program that exists but cannot run its bot (``python3 missing.py`` exits with
    status 2, ``java -cp . Missing`` with 1) before a single game is recorded. A
    bot that waits for its input, as a bot should, is left alone for PROBE_S and
    then stopped. It runs exactly as in a game (same shell, same sandbox).
    """
    external = [c for c in dict.fromkeys(commands) if not in_process(c)]
    if not external:
        return

    async def probe(command: str) -> str | None:
        player = ProcessPlayer(
            command,
            sandbox=sandbox,
            hidden=hidden,
            env=bot_env,
            memory_bytes=None if memory_mb is None else memory_mb << 20,
            rivals=external,
        )
        try:
            await player.start()
            await player.send("", None, 0)  # type: ignore[arg-type]  # starts its clock
            if await player.receive(PROBE_S) is None:
                return await player.startup_failure()
            return None
        finally:
            await player.close()

    async def probe_all() -> list[str | None]:
        return await asyncio.gather(*(probe(command) for command in external))

    for command, why in zip(external, asyncio.run(probe_all()), strict=True):
        if why:
            raise StartError(f"bot command {command!r} {why}")


class _Progress:
    """A progress bar (games done, games/s, ETA) on stderr; tqdm if it is installed."""

    def __init__(self, total: int, done: int, enabled: bool) -> None:
        self._bar = None
        self._done = done
        self._total = total
        self._start = time.perf_counter()
        self._enabled = enabled
        if not enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            return
        self._bar = tqdm(
            total=total, initial=done, unit="game", dynamic_ncols=True, file=sys.stderr,
            smoothing=0.1, bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} "
            "[{elapsed}<{remaining}, {rate_fmt}]",
        )  # fmt: skip

    def update(self) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.update(1)
        elif self._enabled:
            rate = (self._done) / max(time.perf_counter() - self._start, 1e-9)
            print(
                f"\r{self._done}/{self._total} games, {rate:.1f} games/s", end="", file=sys.stderr
            )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self._enabled:
            print(file=sys.stderr)


def run_tournament(
    bots: Sequence[tuple[str, str]],
    *,
    version: str = DEFAULT_VERSION,
    games: int = 2,
    workers: int | None = None,
    seed: int = 1,
    db: str = DEFAULT_DB,
    time_scale: float = 1.0,
    league: int | None = None,
    backend: str = "process",
    address: str | None = None,
    progress: bool = True,
    retry_errors: bool = False,
    sandbox: bool = True,
    bot_env: Sequence[tuple[str, str]] = (),
    memory_mb: int | None = DEFAULT_MEMORY_MB,
) -> int:
    """Play the missing games of a tournament into ``db``; return how many were played.

    Games stored as referee failures (a worker lost, the referee failed) are
    always played again; with ``retry_errors`` so are the games a bot lost to a
    timeout while it was measured starved of CPU by the machine (:mod:`.referee.starvation`),
    and only those: never a crash, an empty line, an invalid or over-long answer, nor a
    timeout the bot spent thinking, sleeping or at a priority it lowered itself (what it
    does and does not play again is printed on stderr).

    Bot commands run sandboxed if ``sandbox`` and the machine supports it (else one
    warning here, in the parent, and the workers run them unsandboxed). A sandboxed bot
    cannot read the database (nor its journal files and lock), nor the other databases
    and report folders beside it and in the working directory. Every bot gets the
    allow-listed environment plus ``bot_env`` (:mod:`.referee.botenv`), and a memory
    budget of ``memory_mb`` MiB for its whole process tree (a bot over it loses the game,
    error kind ``memory``).
    """
    names = [name for name, _command in bots]
    commands = dict(bots)
    if len(commands) != len(bots):
        raise ValueError("two bots have the same name")
    try:
        league = ruleset(version).check_league(league)
    except ValueError as error:
        raise ValueError(f"--league: {error}") from None
    for command in commands.values():
        check_player(command, version)
    workers = workers or os.cpu_count() or 1
    cores = os.cpu_count() or 1
    if workers > cores and backend == "process":
        print(
            f"locm: warning: {workers} workers on {cores} cores: bots will compete for CPU "
            "and may time out (the report counts timeouts under overload apart)",
            file=sys.stderr,
        )
    if sandbox and any(not in_process(c) for c in commands.values()):
        sandbox = sandbox_available()
    if memory_mb is not None and backend == "process":  # (a cluster's machines: unknown)
        per_game = min(2, sum(not in_process(c) for c in commands.values()))
        warn_if_crowded("locm", per_game * min(workers, len(names) * (len(names) - 1) * games),
                        memory_mb << 20)  # fmt: skip
    hidden = private_paths([os.getcwd(), os.path.dirname(os.path.abspath(db))], db)
    bot_env = tuple(bot_env)
    rivals = tuple(dict.fromkeys(c for c in commands.values() if not in_process(c)))
    specs = schedule(names, games, seed)
    settings = {
        "game": "locm",
        "version": version,
        "seed": str(seed),
        "time_scale": repr(time_scale),
        "league": str(league),
    }
    played = 0
    _probe_bots(list(commands.values()), sandbox, hidden, bot_env, memory_mb)
    with TournamentStore(db) as store:
        store.configure(settings, commands)
        if charged := charge_stored_empty_lines(store):
            why = "an earlier version counted them half each"
            print(f"locm: charged {charged} stored empty-line abort(s) to the bots that sent "
                  f"the line ({why})", file=sys.stderr)  # fmt: skip
        if retry_errors:
            print(f"locm: --retry-errors: {retry_summary(store.error_counts())}", file=sys.stderr)
            store.discard((REFEREE,), overloaded_timeouts=True)
        else:
            store.discard((REFEREE,))
        done = store.done_keys()
        missing = [spec for spec in specs if spec.key not in done]
        tasks = [
            LocmGameTask(spec, (commands[spec.first], commands[spec.second]),
                         resolve_parameters(version, {"seed": spec.seed}), league,
                         time_scale, sandbox, hidden, bot_env, memory_mb, rivals=rivals)
            for spec in missing
        ]  # fmt: skip
        bar = _Progress(len(specs), len(specs) - len(missing), progress)

        def store_result(record: GameRecord) -> None:
            nonlocal played
            if store.add(record):
                played += 1
            bar.update()

        try:
            run_tasks(
                play_scheduled_game, tasks, store_result,
                workers=workers, backend=backend, address=address, lost=lost_game,
                worker_died=reap,  # its bots, one of them frozen, were never closed
            )  # fmt: skip
        finally:
            bar.close()
    return played
