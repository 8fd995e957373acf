"""The referee: runs one LOCM game between two players and writes its GameResult log.

It is a thin loop around :class:`~cardarena.locm.referee.protocol_game.ProtocolGame` (which
knows the protocol, the errors and the SDK quirks): send each request's input,
read one line per request within its time limit, answer, record the frames.
Players are bot processes or built-in agents behind one interface
(:mod:`cardarena.locm.referee.players`); whatever happens — end of game, timeout, crash,
exception, Ctrl-C, SIGTERM — every bot process group is terminated before the
referee returns.

>>> outcome = play_game("builtin:random", "builtin:random", version="1.2", params={"seed": 1})
>>> outcome.scores in ((1, 0), (0, 1))
True
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..agents import check_agent_version, make_agent
from ..agents.reference import PYTHON_PREFIX, make_reference_agent
from ..engine.javarandom import JavaRandom
from ..engine.params import GameParameters, game_parameters
from ..engine.state import EndReason
from .cgroups import DEFAULT_MEMORY_MB
from .gameresult import (
    FAIL_CAUSES,
    Execution,
    GameResultRecorder,
    error_message,
    parameter_lines,
    success_message,
)
from .players import InProcessPlayer, Player, ProcessPlayer, StartError, check_command
from .protocol_game import ProtocolGame, Request

BUILTIN_PREFIX = "builtin:"
INTERRUPTED = "interrupted before its end (Ctrl-C or SIGTERM): the log holds what was played"
"""The ``failCause`` of the log of a game stopped before its end (``cardarena.interrupted``)."""
EXIT_GRACE_S = 0.2
"""After a missing answer, how long a bot process has to exit for it to count as a crash
(said by ``locm play``) rather than a timeout; the game is lost either way."""


def in_process(spec: str) -> bool:
    """True for the players that run in the referee's process: built-ins and references."""
    return spec.startswith((BUILTIN_PREFIX, PYTHON_PREFIX))


def check_player(spec: str, version: str) -> None:
    """Refuse, before any game, a player that cannot play ``version``: an unknown built-in
    agent, one that does not play that version, or a ``python:`` reference that gives no
    agent (ValueError); a command whose program is missing or cannot run (StartError)."""
    if spec.startswith(BUILTIN_PREFIX):
        check_agent_version(spec, version)
    elif spec.startswith(PYTHON_PREFIX):
        make_reference_agent(spec, None)  # imports it and makes one agent, or says why
    else:
        check_command(spec)


class RefereeTerminated(Exception):
    """The referee received SIGTERM; the bots have been terminated."""


class BotStartError(StartError):
    """A built-in agent name is unknown, or a bot command cannot be started: a usage error."""


@dataclass(frozen=True)
class TimeControl:
    """The official per-answer limits, scaled (slow machines, debugging) or switched off."""

    scale: float = 1.0
    enabled: bool = True

    def seconds(self, limit_ms: int) -> float | None:
        return limit_ms * self.scale / 1000 if self.enabled else None


@dataclass(frozen=True)
class GameOutcome:
    """What a game produced: the result, the parameters to replay it, the log."""

    version: str
    scores: tuple[int, int] | None
    """None when the official runner would have aborted with no result."""
    winner: int | None
    end_reason: EndReason
    error_player: int | None
    parameters: dict[str, str]
    parameter_lines: list[str]
    """``key=value`` lines in the order the official command line prints them."""
    summaries: list[str]
    """The game's summary lines (deterministic: without the per-turn timing lines)."""
    log: dict[str, Any]
    """The GameResult JSON object."""
    early_exits: tuple[str | None, str | None] = (None, None)
    """Per player: why it never answered, if it exited with an error status before its
    first answer (a broken command line, a missing script); the game still counts."""
    exited: tuple[bool, bool] = (False, False)
    """Per player: a missing answer came from a bot process whose output had ended (it
    exited or crashed), not from one that was still running (a timeout)."""
    out_of_memory: tuple[bool, bool] = (False, False)
    """Per player: its answer was missing because it went over its memory budget (the
    kernel killed a process of its cgroup): it lost, out of memory."""
    aborted_by: int | None = None
    """1.0/1.2: the player whose empty line aborted the game (``scores`` is then None)."""


def make_player(
    spec: str,
    seed: int | None = None,
    time_scale: float = 1.0,
    sandbox: bool = True,
    hidden: Sequence[str] = (),
    bot_env: Sequence[tuple[str, str]] = (),
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    rivals: Sequence[str] = (),
) -> Player:
    """``builtin:<agent>`` and ``python:MODULE:FACTORY`` play in-process, with the same
    time accounting; anything else is a shell command, run in
    a sandbox if ``sandbox`` (and the machine supports one) where ``hidden`` files and
    what the other bots' commands (``rivals``) name cannot be opened, with the
    allow-listed environment plus ``bot_env`` (:mod:`.botenv`), its whole process tree
    held to ``memory_mb`` MiB (:mod:`.cgroups`; None: no budget).

    A built-in agent that budgets its own thinking time (``search``) is told the
    time scale, so that it keeps within the scaled official limits.
    """
    if in_process(spec):
        name = spec.removeprefix(BUILTIN_PREFIX)
        try:
            agent = make_agent(name, seed)
        except ValueError as error:
            raise BotStartError(str(error)) from None
        if hasattr(agent, "time_scale"):
            agent.time_scale = time_scale
        return InProcessPlayer(agent, spec)
    memory_bytes = None if memory_mb is None else memory_mb << 20
    return ProcessPlayer(spec, sandbox=sandbox, hidden=hidden, env=bot_env,
                         memory_bytes=memory_bytes, rivals=rivals)  # fmt: skip


def agent_seed(params: GameParameters, player: int) -> int:
    """A built-in agent's seed, derived from the game seed: the printed parameters replay it."""
    return JavaRandom(params.seed + player + 1).next_long()


async def run_game(
    players: Sequence[Player],
    version: str | None = None,
    params: GameParameters | Mapping[str, object] | None = None,
    league: int = 4,
    time_control: TimeControl = TimeControl(),
    watch: Callable[[ProtocolGame], None] | None = None,
    on_interrupted: Callable[[dict[str, Any]], None] | None = None,
) -> GameOutcome:
    """Play one game on the running event loop; the players are closed at the end.
    Resolved ``params`` carry their version; ``version`` is for unresolved ones.
    ``watch`` is handed the game before it starts (a live page follows it);
    ``on_interrupted`` the log of what was played if the game is cancelled or interrupted
    (Ctrl-C, SIGTERM) after a round was played and before its end (:func:`interrupted_log`),
    before the exception goes on."""
    params = game_parameters(version, params)
    game = ProtocolGame(params=params, league=league)
    if watch is not None:
        watch(game)
    recorder = GameResultRecorder()
    early_exits: list[str | None] = [None, None]
    exited = [False, False]
    out_of_memory = [False, False]
    try:
        # Every start is awaited, even after one fails (a bot command refused before it
        # runs): a bot still being started would otherwise escape the closing below.
        starts = (player.start() for player in players)
        for failure in await asyncio.gather(*starts, return_exceptions=True):
            if isinstance(failure, BaseException):
                raise failure
        recorder.bootstrap_stderr = [player.take_stderr() for player in players]
        for _ in range(game.frames):  # 1.0/1.2: the frames showing the draft pool
            recorder.add_frame([Execution(0, "", players[0].take_stderr())])
        answered = [False, False]
        battle_turn = -1  # the jars number battle turns from 0, both players together
        while requests := game.requests():
            if len(requests) == 1:
                battle_turn += 1
            timed = await _ask(players, requests, game, time_control)
            answers = [line for line, _ns in timed]
            for request, line in zip(requests, answers, strict=True):
                if line is None:
                    player = players[request.player]
                    exited[request.player] = isinstance(player, ProcessPlayer) and (
                        await player.exits_within(EXIT_GRACE_S)
                    )
                    out_of_memory[request.player] = _out_of_memory(player)
                if line is None and not answered[request.player]:
                    early_exits[request.player] = await _early_exit(players[request.player])
                answered[request.player] = True
            frames, seen = game.frames, len(game.summaries)
            game.answer(answers)
            elapsed = [ns for _, ns in timed]
            _record(recorder, game, players, requests, answers, elapsed, battle_turn, frames, seen)
    except (asyncio.CancelledError, KeyboardInterrupt):
        played = any(run.output for frame in recorder.frames for run in frame.executions)
        if on_interrupted is not None and played and not game.over:  # (no move: no log)
            on_interrupted(interrupted_log(game, recorder, players, time_control))
        raise
    finally:
        await asyncio.gather(*(player.close() for player in players), return_exceptions=True)
    oom = (out_of_memory[0], out_of_memory[1])
    outcome = _outcome(game, recorder, players, time_control, (early_exits[0], early_exits[1]),
                       oom, (exited[0], exited[1]))  # fmt: skip
    return dataclasses.replace(outcome, exited=(exited[0], exited[1]), out_of_memory=oom)


def interrupted_log(
    game: ProtocolGame,
    recorder: GameResultRecorder,
    players: Sequence[Player],
    time_control: TimeControl,
) -> dict[str, Any]:
    """The GameResult log of a game stopped before its end: every round played, no scores
    (as the logs of the games the official runner aborts), ``failCause`` :data:`INTERRUPTED`
    and ``cardarena.interrupted`` true: the replay and the viewer stop where it stopped."""
    log = _outcome(game, recorder, players, time_control).log
    log["failCause"] = INTERRUPTED
    log["cardarena"]["interrupted"] = True
    return log


def _out_of_memory(player: Player) -> bool:
    """True if the player is a bot that the kernel killed (a process of it) for going over
    its memory budget; asked after its missing answer (wrapped players say it too)."""
    check = getattr(player, "out_of_memory", None)
    return bool(check()) if callable(check) else False


async def _ask(
    players: Sequence[Player],
    requests: Sequence[Request],
    game: ProtocolGame,
    time_control: TimeControl,
) -> list[tuple[str | None, int]]:
    """Send the requests' inputs and read one line each, timed.

    Both deck-building answers are awaited together, so that each player's time is its
    own. Where a player is held to its own turns (frozen outside them, see
    :mod:`.cgroups`), they are asked one after the other instead, as the official runner
    does: a player that thinks concurrently would also be thinking in the other's turn.
    """
    if len(requests) > 1 and any(getattr(p, "isolated", False) for p in players):
        timed = []
        for request in requests:
            started = time.monotonic_ns()
            await players[request.player].send(request.input, game.state, request.player)
            limit = time_control.seconds(request.timeout_ms)
            timed.append(await _timed_receive(players[request.player], limit, started))
        return timed
    begun = []
    for request in requests:
        begun.append(time.monotonic_ns())
        await players[request.player].send(request.input, game.state, request.player)
    return list(await asyncio.gather(
        *(
            _timed_receive(players[r.player], time_control.seconds(r.timeout_ms), t0)
            for r, t0 in zip(requests, begun, strict=True)
        )
    ))  # fmt: skip


async def _timed_receive(
    player: Player, timeout_s: float | None, started_ns: int
) -> tuple[str | None, int]:
    """The answer line and the nanoseconds from sending its input to reading it."""
    line = await player.receive(timeout_s)
    return line, time.monotonic_ns() - started_ns


async def _early_exit(player: Player) -> str | None:
    if isinstance(player, ProcessPlayer):
        return await player.startup_failure()
    return None


def _record(
    recorder: GameResultRecorder,
    game: ProtocolGame,
    players: Sequence[Player],
    requests: Sequence[Request],
    answers: Sequence[str | None],
    elapsed_ns: Sequence[int],
    battle_turn: int,
    frames_before: int,
    seen: int,
) -> None:
    """Turn one answered request frame (and the frames it caused) into log frames.

    The per-turn timing lines (``$0 123ns at turn 4``) are added here, where the
    contest jars put them: after each player's 1.5 deck line, and first in each
    battle turn's summary (after the error line if the answer ended the game).
    They go to the log only: the game's own summary lines stay deterministic.
    """
    lines = game.summaries[seen:]
    extra = game.frames - frames_before
    executions = [
        Execution(r.player, None if a is None else a + "\n", players[r.player].take_stderr())
        for r, a in zip(requests, answers, strict=True)
    ]
    crashed = game.end_reason == EndReason.ABORTED_EMPTY_LINE  # the jar's referee died here
    if len(requests) == 2:
        # Deck building; then the visual frames (1.5) and the battle-init frame.
        if not game.rules.draft and not crashed:
            lines = _with_deck_timings(lines, elapsed_ns)
        recorder.add_frame(executions, lines)
        for index in range(extra):
            players_run = (0,) if index == extra - 1 else (0, 1)
            recorder.add_frame([Execution(p, "", None) for p in players_run])
        return
    # A battle turn frame, then one frame per executed action ("performed action").
    player = requests[0].player
    chunks: list[list[str]] = [[]]
    for line in lines:
        if line.startswith(f"Player ${player} performed action: ") and len(chunks) <= extra:
            chunks.append([])
        chunks[-1].append(line)
    chunks += [[] for _ in range(extra + 1 - len(chunks))]
    if not crashed:
        at = 1 if game.error_player == player and chunks[0] else 0
        chunks[0].insert(at, timing_line(player, elapsed_ns[0], battle_turn))
    recorder.add_frame(executions, chunks[0])
    for chunk in chunks[1:]:
        recorder.add_frame([Execution(player, "", None)], chunk)


def timing_line(player: int, elapsed_ns: int, turn: int) -> str:
    """The jars' per-turn timing summary line; ``turn`` counts battle turns from 0
    (both players' deck-building lines say turn 0)."""
    return f"${player} {elapsed_ns}ns at turn {turn}"


def _with_deck_timings(lines: Sequence[str], elapsed_ns: Sequence[int]) -> list[str]:
    out: list[str] = []
    for line in lines:
        out.append(line)
        for player in (0, 1):
            if line.startswith(f"Player ${player} chose cards "):
                out.append(timing_line(player, elapsed_ns[player], 0))
    return out


def _outcome(
    game: ProtocolGame,
    recorder: GameResultRecorder,
    players: Sequence[Player],
    time_control: TimeControl,
    early_exits: tuple[str | None, str | None] = (None, None),
    out_of_memory: tuple[bool, bool] = (False, False),
    exited: tuple[bool, bool] = (False, False),
) -> GameOutcome:
    state = game.state
    params = state.params
    if recorder.frames and recorder.frames[-1].summary and game.summaries:
        last = recorder.frames[-1].summary
        if game.winner is not None and last[-1] == f"${game.winner} won!":
            last[-1] = success_message(last[-1])
        if game.error_player is not None:
            token = f"${game.error_player}"
            error = next(line for line in reversed(game.summaries) if line.startswith(token))
            if error in last:
                at = len(last) - 1 - last[::-1].index(error)
                last[at] = error_message(error)
    aborted = game.end_reason in FAIL_CAUSES
    scores = None if aborted else game.scores
    lines = parameter_lines(params.as_dict(), list(params.given))
    log = recorder.to_json(
        scores,
        lines,
        fail_cause=FAIL_CAUSES.get(game.end_reason),
        extra={
            "version": state.version,
            "league": state.league,
            "players": [player.name for player in players],
            "winner": game.winner,
            "endReason": game.end_reason.name,
            "errorPlayer": game.error_player,
            "timeScale": time_control.scale if time_control.enabled else None,
        }
        | _cpu_times(players)
        | _memory(players, out_of_memory)
        # A crash reads "TIMEOUT" in the official log: this says the bot's process ended.
        | ({"exited": list(exited)} if any(exited) else {}),
    )
    return GameOutcome(
        version=state.version,
        scores=scores,
        winner=game.winner,
        end_reason=game.end_reason,
        error_player=game.error_player,
        parameters=params.as_dict(),
        parameter_lines=lines,
        summaries=list(game.summaries),
        log=log,
        early_exits=early_exits,
        aborted_by=game.aborted_by,
    )


def _cpu_times(players: Sequence[Player]) -> dict[str, list[float | None]]:
    """``cpuMs``: each bot's CPU time over the game in ms, from its cgroup (None where none
    was measured); left out when none was, so logs of built-in agents stay as they were."""
    cpu_ns = [getattr(player, "cpu_ns", None) for player in players]
    if all(ns is None for ns in cpu_ns):
        return {}
    return {"cpuMs": [None if ns is None else round(ns / 1e6, 3) for ns in cpu_ns]}


def _memory(players: Sequence[Player], out_of_memory: tuple[bool, bool]) -> dict[str, Any]:
    """``memoryMB`` (each bot's budget, None where it had none), ``memoryPeakMB`` (the most
    its whole tree held) and ``outOfMemory`` (per player: it lost by going over its budget);
    left out when no bot had a budget, so logs of built-in agents stay as they were."""
    budgets = [getattr(player, "memory_budget", None) for player in players]
    if all(budget is None for budget in budgets):
        return {}
    peaks = [getattr(player, "memory_peak", None) for player in players]
    return {
        "memoryMB": [None if b is None else round(b / (1 << 20), 1) for b in budgets],
        "memoryPeakMB": [None if p is None else round(p / (1 << 20), 1) for p in peaks],
        "outOfMemory": list(out_of_memory),
    }


def play_game(
    player1: str | Player,
    player2: str | Player,
    *,
    version: str | None = None,
    params: GameParameters | Mapping[str, object] | None = None,
    league: int = 4,
    time_control: TimeControl = TimeControl(),
    sandbox: bool = True,
    bot_env: Sequence[tuple[str, str]] = (),
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    on_interrupted: Callable[[dict[str, Any]], None] | None = None,
) -> GameOutcome:
    """Play one game synchronously: commands (or ``builtin:<agent>``, ``python:...``) or
    Player objects (``on_interrupted``: see :func:`run_game`).

    Bot commands run sandboxed unless ``sandbox`` is false (see :mod:`.sandbox`), with
    the allow-listed environment plus ``bot_env`` (see :mod:`.botenv`), each held to a
    memory budget of ``memory_mb`` MiB for its whole process tree (see :mod:`.cgroups`).

    Ctrl-C raises KeyboardInterrupt and SIGTERM raises :class:`RefereeTerminated`,
    in both cases after every bot process group has been terminated.
    """
    params = game_parameters(version, params)
    commands = [spec for spec in (player1, player2) if isinstance(spec, str)]
    players = [
        make_player(spec, agent_seed(params, index), time_control.scale, sandbox, (), bot_env,
                    memory_mb, rivals=commands) if isinstance(spec, str) else spec
        for index, spec in enumerate((player1, player2))
    ]  # fmt: skip
    try:
        return asyncio.run(_main(players, params, league, time_control, on_interrupted))
    finally:
        for player in players:
            if isinstance(player, ProcessPlayer):
                player.kill_now()


async def _main(
    players: Sequence[Player],
    params: GameParameters,
    league: int,
    time_control: TimeControl,
    on_interrupted: Callable[[dict[str, Any]], None] | None = None,
) -> GameOutcome:
    """Run the game; turn SIGTERM into a cancellation so that cleanup always runs."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    terminated = threading.Event()

    def on_sigterm() -> None:
        terminated.set()
        task.cancel()

    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread:
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    try:
        return await run_game(players, params=params, league=league, time_control=time_control,
                              on_interrupted=on_interrupted)  # fmt: skip
    except asyncio.CancelledError:
        if terminated.is_set():
            raise RefereeTerminated("terminated by SIGTERM") from None
        raise
    finally:
        if in_main_thread:
            loop.remove_signal_handler(signal.SIGTERM)
