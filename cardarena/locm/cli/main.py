"""The ``locm`` command line: ``play`` (a drop-in for the official referee jar),
``replay``, ``generate`` and ``demo``; the other command groups have their own modules
(:mod:`.tournament`, :mod:`.bot`, :mod:`.viewer`, :mod:`.ladder`)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import stat
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from ... import __version__
from ...argtypes import count, positive_number
from ...terminal import shown
from ..agents import BUILTIN_AGENTS, RandomAgent
from ..engine.cards import ABILITIES_TEXT, generate_cards
from ..engine.javarandom import JavaRandom
from ..engine.params import (
    ParameterError,
    parse_parameter_string,
    random_seed,
    resolve_parameters,
    unread_names,
)
from ..engine.rules import DEFAULT_VERSION, VERSIONS, ruleset
from ..engine.state import EndReason, State
from ..play import HUMAN
from ..referee.botenv import parse_bot_env
from ..referee.cgroups import warn_if_crowded
from ..referee.game_loop import (
    GameOutcome,
    RefereeTerminated,
    TimeControl,
    check_player,
    in_process,
    play_game,
)
from ..referee.players import StartError
from ..referee.replay import ReplayError, load_log, replay_lines
from . import options, play_human

USAGE_ERROR = 2
EXIT_SIGINT = 130
EXIT_SIGTERM = 143
GENERATE_COLUMNS = ("Id", "Type", "Cost", "Att", "Def", "Keywords", "MyHP", "OppHP", "Draw", "Area")


class UsageError(Exception):
    """Bad command-line input: reported on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but its errors are one line (no usage dump) like all our usage errors."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def _seed(text: str) -> int:
    from ..engine.javarandom import parse_java_long

    try:
        return parse_java_long(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a 64-bit integer: {text!r}") from None


def _cmd_demo(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else random_seed()
    state = State.new(args.version, {"seed": seed})
    # The agents' own seeds come from the game seed, so --seed alone replays the demo.
    derive = JavaRandom(seed)
    agents = (RandomAgent(derive.next_long()), RandomAgent(derive.next_long()))
    actions = 0
    while not state.is_terminal:
        state.apply(agents[state.current_player].act(state))
        actions += 1
    p0, p1 = state.players
    print(f"LOCM {state.version}: random (player 0) vs random (player 1)")
    winner = "no winner" if state.winner is None else f"player {state.winner} wins"
    print(
        f"{winner} ({state.end_reason.name.lower().replace('_', ' ')}) after "
        f"{state.turn + 1} battle turns and {actions} actions; health {p0.health} vs {p1.health}"
    )
    print(f"reproduce with: locm demo --version {state.version} --seed {seed}")
    print("game parameters:")
    for key, value in state.params.as_dict().items():
        print(f"  {key}={value}")
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    try:
        league = ruleset(args.version).check_league(args.league)
    except ValueError as error:
        raise UsageError(f"--league: {error}") from None
    for option, command in (("-p1", args.p1), ("-p2", args.p2)):
        if command == HUMAN:  # a person, in the browser (docs/play.md)
            continue
        try:  # a broken player is the command line's fault: no game is played
            check_player(command, args.version)
        except (ValueError, StartError) as error:
            raise UsageError(f"{option}: {error}") from None
    given = parse_parameter_string(" ".join(args.d or []))
    for name in unread_names(given):
        print(f"locm: note: no LOCM version reads {name!r}; kept and printed back", file=sys.stderr)
    params = resolve_parameters(args.version, given)
    bot_env = parse_bot_env(args.bot_env)
    if args.logs:
        check_log_path(args.logs)  # fail now, not after the game; creates nothing
    bots = [spec for spec in (args.p1, args.p2) if spec != HUMAN and not in_process(spec)]
    warn_if_crowded("locm", len(bots), args.memory << 20)
    partial: list[dict[str, Any]] = []  # the log of what was played, if interrupted
    try:
        if HUMAN in (args.p1, args.p2):
            return play_human.play_human(args, params, league, write_log, bot_env, partial.append)
        outcome = play_game(
            args.p1,
            args.p2,
            params=params,
            league=league,
            time_control=TimeControl(args.time_scale, not args.no_time_limit),
            sandbox=not args.no_sandbox,
            bot_env=bot_env,
            memory_mb=args.memory,
            on_interrupted=partial.append,
        )
    except (KeyboardInterrupt, RefereeTerminated) as stop:
        return interrupted(args.logs, partial, stop, "the bots were stopped")
    log_error = None
    if args.logs:
        # The jar writes the log before the scores: `-l /dev/stdout` scripts rely on it.
        # To a terminal, \u escapes for all but ASCII: no C1 control or bidi override of a
        # bot's answer reaches it raw (JSON escapes C0 controls anyway). Same JSON value.
        on_terminal = _is_stdout(args.logs) and sys.stdout.isatty()
        text = json.dumps(outcome.log, ensure_ascii=on_terminal) + "\n"
        try:
            if _is_stdout(args.logs):  # through our own stdout: same offset, same order
                sys.stdout.write(text)
                sys.stdout.flush()
            else:
                sys.stdout.flush()
                write_log(args.logs, text)
        except OSError as error:
            log_error = f"cannot write the log {args.logs}: {error.strerror or error}"
    scores = outcome.scores
    # An aborted run has no scores: the official command line prints "null" then.
    print("null" if scores is None else scores[0])
    print("null" if scores is None else scores[1])
    for line in outcome.parameter_lines:
        print(line)
    if not args.quiet:  # what went wrong, after the result lines (scripts read those)
        sys.stdout.flush()
        for line in problem_lines(outcome, (args.p1, args.p2), args.logs):
            print(shown(line), file=sys.stderr)
    if log_error:
        sys.stdout.flush()
        raise UsageError(log_error)  # after the result lines: the result is not lost
    return 0


def interrupted(
    path: str | None, partial: Sequence[dict[str, Any]], stop: BaseException, done: str
) -> int:
    """After Ctrl-C or SIGTERM during a game: write the log of what was played to ``path``
    (``-l``) and say, in one line, where it went; the shell's status for the signal."""
    by_sigterm = isinstance(stop, RefereeTerminated)
    line = f"locm play: {'terminated' if by_sigterm else 'interrupted'}; {done}"
    if path and partial:
        try:
            on_terminal = _is_stdout(path) and sys.stdout.isatty()  # as for a finished game
            write_log(path, json.dumps(partial[-1], ensure_ascii=on_terminal) + "\n")
            line += f"; the log of the game so far is in {path} (locm view {path})"
        except OSError as error:
            line += f"; cannot write the log {path}: {error.strerror or error}"
    elif path:
        line += f"; no log written to {path} (no move was played)"
    print(shown(line), file=sys.stderr)
    return EXIT_SIGTERM if by_sigterm else EXIT_SIGINT


def problem_lines(
    outcome: GameOutcome, commands: Sequence[str], log: str | None
) -> list[str]:
    """One line per bot that did something wrong (illegal actions, with the first one
    quoted; a timeout, a crash, invalid output), saying where to see the details: the
    official output is only the scores, and the referee's warnings are in the log."""
    if log and not _writes_in_place(log):
        where = f"see each turn with: locm view {log}"
    else:
        where = "to see each turn, play again with -l game.json, then: locm view game.json"
    lines = []
    for seat, (option, command) in enumerate(zip(("-p1", "-p2"), commands, strict=True)):
        problems = []
        token = f"${seat}"
        illegal = [line.removeprefix(f"[Warning] {token} Action is not legal: ")
                   for line in outcome.summaries
                   if line.startswith(f"[Warning] {token} Action is not legal: ")]  # fmt: skip
        count = len(illegal) + sum(
            int(line.split()[3]) for line in outcome.summaries
            if line.startswith(f"[Warning] {token} Performed another ")
        )  # fmt: skip
        if count:
            plural = "s" if count > 1 else ""
            problems.append(f"{count} illegal action{plural} (the first: {illegal[0]!r})")
        if outcome.early_exits[seat]:
            problems.append(str(outcome.early_exits[seat]))
        elif outcome.error_player == seat:
            error = next((line for line in reversed(outcome.summaries)
                          if line.startswith(token)), "")  # fmt: skip
            if outcome.end_reason == EndReason.INVALID_OUTPUT:
                why = error.removeprefix(f"{token}:").removeprefix(token).strip()
                problems.append(f"invalid output ({why}): lost")
            elif outcome.out_of_memory[seat]:
                budget = outcome.log.get("cardarena", {}).get("memoryMB", [None, None])[seat]
                size = f"{budget:g} MB " if budget else ""
                problems.append(f"went over its {size}memory budget: lost, out of memory")
            elif outcome.exited[seat]:
                problems.append("exited during the game (a crash?): lost")
            else:
                problems.append("timed out: lost")
        if problems:
            lines.append(f"locm: warning: {option} {command!r}: {'; '.join(problems)}; {where}")
    return lines


def check_log_path(path: str) -> None:
    """Refuse a log path that cannot be written, without creating anything."""
    if os.path.isdir(path):
        raise UsageError(f"cannot write the log {path}: it is a directory")
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            raise UsageError(f"cannot write the log {path}: permission denied")
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UsageError(f"cannot write the log {path}: no such directory {directory}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write the log {path}: directory {directory} is not writable")


def _is_stdout(path: str) -> bool:
    try:
        return os.path.samestat(os.stat(path), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError):
        return False


def _writes_in_place(path: str) -> bool:
    """True for paths that must be written through, never replaced: devices and pipes
    (``-l /dev/stdout`` in the contest scripts), and anything reached through /dev or
    /proc (replacing ``/dev/stdout`` would replace the symlink, not write the output)."""
    absolute = os.path.abspath(path)
    if absolute.startswith(("/dev/", "/proc/")):
        return True
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    return not stat.S_ISREG(mode) or os.path.islink(path)


def write_log(path: str, text: str) -> None:
    """Write the log completely or not at all: a temporary file in the same directory,
    then an atomic rename. Ctrl-C and SIGTERM wait until it is done, so an interrupted
    run never leaves a partial or empty log."""
    blocked = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        if _writes_in_place(path):
            with open(path, "w", encoding="utf-8") as log:
                log.write(text)
            return
        directory, name = os.path.split(os.path.abspath(path))
        temporary = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
        try:
            with open(temporary, "w", encoding="utf-8") as log:
                log.write(text)
                log.flush()
                os.fsync(log.fileno())
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _cmd_replay(args: argparse.Namespace) -> int:
    differences: list[str] = []
    for line in replay_lines(load_log(args.log), args.version, args.league, differences):
        print(shown(line))  # a log's names and answers are anybody's text
    if differences:  # a log that does not replay is not a success (scripts check the status)
        print(f"locm: the replay differs from the log: {shown(differences[0])}", file=sys.stderr)
        return 1
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else random_seed()
    print(("%7s" * 5 + "%10s" + "%7s" * 4) % GENERATE_COLUMNS)
    print("=" * 76, flush=True)
    for card in generate_cards(seed, args.n):
        row = (card.base_id, card.type, card.cost, card.attack, card.defense)
        tail = (card.my_health, card.opp_health, card.draw, card.area)
        print(("%7s" * 5 + "%10s" + "%7s" * 4) % (*row, ABILITIES_TEXT[card.keywords], *tail))
    print(f"cardGenSeed={seed}", file=sys.stderr)
    return 0


def _add_play(commands: argparse._SubParsersAction[_Parser]) -> None:
    play = commands.add_parser(
        "play",
        help="play one game between two bots (commands, builtin:<agent> or "
        "python:MODULE:FACTORY), like the "
        "official referee jar's play",
        description="Play one game. Prints player 0's score, player 1's score (1 win, 0 loss, "
        "-1 error: invalid output, timeout or crash), then the game parameters used, one "
        "key=value per line (replay with -d). Keys a version does not read are printed back.",
    )
    builtins = "|".join(sorted(BUILTIN_AGENTS))
    play.add_argument(
        "-p1",
        required=True,
        metavar="CMD",
        help=f"player 0: a shell command, builtin:<{builtins}>, or python:MODULE:FACTORY "
        "(also python:path/to/file.py:FACTORY): your agent, in-process",
    )
    play.add_argument("-p2", required=True, metavar="CMD", help="player 1: same; "
                      "'human' in either seat: you play, in the browser (docs/play.md)")
    play.add_argument(
        "-d",
        metavar="PARAMS",
        action="append",
        help='game parameters, "key=value key=value ..." (may be repeated; a key given twice is '
        "refused)",
    )
    play.add_argument("-l", "--logs", metavar="FILE", help="write the GameResult JSON log here")
    play.add_argument(
        "-q", "--quiet", action="store_true",
        help="say nothing on stderr about illegal actions, timeouts, crashes or invalid output",
    )  # fmt: skip
    play.add_argument("--version", choices=VERSIONS, default=DEFAULT_VERSION)
    play.add_argument(
        "--league",
        type=options.league,
        help="1.0 only: league level of the draft pool "
        "(default 4: all cards; the official 1.0 runs at 1 locally)",
    )
    play.add_argument(
        "--time-scale",
        type=positive_number,
        default=1.0,
        metavar="X",
        help="multiply every time limit by X",
    )
    play.add_argument("--no-time-limit", action="store_true", help="wait for answers forever")
    play.add_argument(
        "--no-sandbox", action="store_true", help="run bot commands unsandboxed (docs/referee.md)"
    )
    options.add_bot_env(play)
    options.add_memory(play)
    play_human.add_options(play)
    play.set_defaults(run=_cmd_play)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="locm",
        description="Legends of Code and Magic 1.0/1.2/1.5, faithful to the official referees.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_play(commands)
    replay = commands.add_parser("replay", help="print a logged game turn by turn")
    replay.add_argument("log", help="a GameResult JSON log (locm play -l, or the official jar)")
    replay.add_argument("--version", choices=VERSIONS, help="override the log's version")
    replay.add_argument("--league", type=options.league, help="override the log's 1.0 league")
    replay.set_defaults(run=_cmd_replay)
    generate = commands.add_parser(
        "generate",
        help="print a 1.5 card set, like the official jar's generate",
        description="Print the cards of a 1.5 card set in the jar's table format, sorted by "
        "cost as a game numbers them (-n 120 --seed S shows the pool of cardGenSeed=S).",
    )
    generate.add_argument("-n", type=count, default=80, help="number of cards (default 80)")
    generate.add_argument("--seed", type=_seed, help="cardGenSeed (default: random)")
    generate.set_defaults(run=_cmd_generate)
    demo = commands.add_parser(
        "demo",
        help="play one full game between two built-in random agents; print the result and "
        "the parameters that replay it",
        description="Play one game of LOCM between two built-in random agents and print who "
        "won, how (the end reason, battle turns, actions, final health) and every game "
        "parameter used: the same --version and --seed play the same game again.",
    )
    demo.add_argument("--version", choices=VERSIONS, default=DEFAULT_VERSION)
    demo.add_argument("--seed", type=_seed, help="game seed (default: random)")
    demo.set_defaults(run=_cmd_demo)
    from . import bot, ladder, tournament, viewer, warmup

    # bot; tournament, report; view, serve; warm-up; ladder serve, ladder user add, ladder submit
    for group in (bot, tournament, viewer, warmup, ladder):
        group.add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args: argparse.Namespace | None = None
    try:
        args = parser.parse_args(argv)
        if getattr(args, "run", None) is None:
            parser.print_help()
            return USAGE_ERROR
        return int(args.run(args))
    except (UsageError, ParameterError, StartError, ReplayError, ValueError) as error:
        print(f"locm: error: {shown(str(error))}", file=sys.stderr)  # may quote a bot or a file
        return USAGE_ERROR
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status for SIGINT
        command = getattr(args, "command", None)
        done = "; the bots were stopped" if command == "play" else ""
        print(f"locm{f' {command}' if command else ''}: interrupted{done}", file=sys.stderr)
        return EXIT_SIGINT
    except RefereeTerminated:
        print("locm: terminated; the bots were stopped", file=sys.stderr)
        return EXIT_SIGTERM
    except BrokenPipeError:  # e.g. locm replay log.json | head
        sys.stderr.close()
        return 1
    except OSError as error:  # e.g. standard output on a full disk: one line, no traceback
        print(f"locm: error: {shown(str(error.strerror or error))}", file=sys.stderr)
        _silence_stdout()
        return 1


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that the interpreter's final flush of
    what could not be written does not fail again on exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
