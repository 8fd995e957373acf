"""``shared-deck``: register players, run the server, show results, run a bot, run the demo."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from .. import __version__
from ..argtypes import count, int_in, number_at_least, port, positive_number
from ..httpguard import HttpLimits, add_http_options, limits_from
from ..terminal import ShownFormatter, shown
from .bots import STRATEGIES, run_bot
from .client import Reconnect, ServerError
from .results import (
    csv_text,
    format_match,
    format_results,
    format_tournament,
    json_text,
    leaderboard_json,
    leaderboard_rows,
    match_json,
    match_rows,
    player_rows,
    tournament_json,
)
from .rules import MAX_CARD_ID, RuleSet
from .server import DEFAULT_MAX_CONNECTIONS, MIN_TURN_SECONDS, GameServer, ServerConfig
from .store import (
    DatabaseLocked,
    DatabaseMissing,
    DatabaseRefused,
    Store,
    check_database,
    check_player_name,
)

if TYPE_CHECKING:
    from .dashboard import Dashboard

DEFAULT_DB = "shared-deck.db"
SECRET_ENV = "SHARED_DECK_SECRET"
DEFAULT_RULES = RuleSet()

_DEFAULT_RECONNECT = Reconnect()


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (``shared-deck serve: argument --port: ...``), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=DEFAULT_DB, help=f"SQLite database (default {DEFAULT_DB})")


_turn_seconds = number_at_least(MIN_TURN_SECONDS)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="shared-deck",
        description="Shared Deck, a card game for bots on a TCP server: register players, run "
        "the server, show results, run a bot, run the demo (docs/shared-deck.md).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    add = commands.add_parser("add-player", help="register a player; prints its new secret")
    add.add_argument("name")
    _add_db(add)
    rotate = commands.add_parser("rotate-secret", help="give a player a new secret; prints it")
    rotate.add_argument("name")
    _add_db(rotate)
    remove = commands.add_parser(
        "remove-player", help="stop a player from logging in and playing; keeps its history"
    )
    remove.add_argument("name")
    _add_db(remove)

    serve = commands.add_parser("serve", help="run the tournament server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=port, default=7000, help="0 picks a free port")
    _add_db(serve)
    serve.add_argument("--create", action="store_true", help="create the database if missing")
    serve.add_argument("--turn-seconds", type=_turn_seconds, default=1.0)
    serve.add_argument("--turns-per-match", type=count, default=DEFAULT_RULES.turns_per_match)
    serve.add_argument("--seed", type=int, help="base seed of the tournaments' decks")
    serve.add_argument("--init-hp", type=int, default=DEFAULT_RULES.init_hp, help="must be even")
    serve.add_argument("--deck-size", type=int_in(1, MAX_CARD_ID), default=DEFAULT_RULES.deck_size)
    serve.add_argument("--draws-per-turn", type=int_in(0), default=DEFAULT_RULES.draws_per_turn)
    serve.add_argument("--burns-per-turn", type=int_in(0), default=DEFAULT_RULES.burns_per_turn)
    serve.add_argument("--hand-limit", type=int_in(0), default=DEFAULT_RULES.hand_limit)
    serve.add_argument(
        "--command-budget",
        type=count,
        default=ServerConfig.command_budget,
        help="commands per player per turn before ERR 953",
    )
    serve.add_argument(
        "--login-timeout", type=positive_number, default=ServerConfig.login_timeout
    )
    serve.add_argument(
        "--start-after-logins",
        type=int_in(0),
        default=0,
        help="hold the first tournament until this many players are logged in",
    )
    serve.add_argument(
        "--min-players",
        type=int_in(0),
        default=ServerConfig.min_players,
        help="start a tournament only while this many of its players are logged in (0: always)",
    )
    serve.add_argument(
        "--tournaments", type=count, help="stop (exit 0) after this many stored tournaments"
    )
    serve.add_argument(
        "--http-port",
        type=port,
        help="also serve the read-only web dashboard on this port (0: any free port)",
    )
    serve.add_argument("--http-host", help="where the dashboard listens (default: --host)")
    add_http_options(
        serve, prefix="http-", server="dashboard", host_option="--http-host",
        cap_note="at most 1/8 of the descriptor limit; never taken from the players",
    )  # fmt: skip
    serve.add_argument(
        "--write-attempts",
        type=count,
        default=ServerConfig.write_attempts,
        help="tries of a failing database write before the server stops",
    )
    serve.add_argument(
        "--max-connections",
        type=count,
        help=f"open connections at most (default {DEFAULT_MAX_CONNECTIONS}, or fewer to fit"
        " below the descriptor limit)",
    )
    serve.add_argument(
        "--login-threads", type=count, default=ServerConfig.login_threads,
        help="threads checking secrets",
    )  # fmt: skip
    serve.add_argument(
        "--login-checks-per-address",
        type=count,
        default=ServerConfig.login_checks_per_address,
        help="secret checks waiting or running per client address; more are refused",
    )
    serve.add_argument(
        "--max-unread-bytes",
        type=count,
        default=ServerConfig.max_unread_bytes,
        help="answers a client may leave unread before it is disconnected",
    )
    serve.add_argument(
        "--unread-timeout",
        type=positive_number,
        default=ServerConfig.unread_seconds,
        help="seconds a client may leave 64 KiB or more unread before it is disconnected",
    )

    results = commands.add_parser("results", help="print the leaderboard and last tournament")
    _add_db(results)
    form = results.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="as JSON")
    form.add_argument("--csv", action="store_true", help="as CSV")
    which = results.add_mutually_exclusive_group()
    which.add_argument("--tournament", type=count, help="one tournament and its matches")
    which.add_argument("--match", type=count, help="one match, turn by turn")

    match = commands.add_parser("match", help="print one stored match, turn by turn")
    match.add_argument("id", type=count)
    _add_db(match)
    match.add_argument("--json", action="store_true", help="as JSON")

    bot = commands.add_parser("bot", help="run a built-in bot")
    bot.add_argument("--name", required=True)
    bot.add_argument(
        "--secret",
        default=os.environ.get(SECRET_ENV),
        help=f"the player's secret (default: ${SECRET_ENV})",
    )
    bot.add_argument("--strategy", choices=sorted(STRATEGIES), default="greedy")
    bot.add_argument("--host", default="127.0.0.1")
    bot.add_argument("--port", type=port, default=7000)
    bot.add_argument("--seed", type=int)
    bot.add_argument("--turns", type=count, help="stop after this many turns")
    bot.add_argument(
        "--reconnect-attempts",
        type=int_in(0),
        default=_DEFAULT_RECONNECT.max_attempts,
        help="failed reconnections in a row before giving up (default: no limit; 0: exit on a"
        " lost connection)",
    )
    bot.add_argument(
        "--reconnect-max-delay",
        type=positive_number,
        default=_DEFAULT_RECONNECT.max_delay,
        help="longest wait in seconds between reconnection attempts",
    )

    demo = commands.add_parser("demo", help="a local server, four bots, two short tournaments")
    demo.add_argument("--tournaments", type=count, default=2)
    demo.add_argument("--turn-seconds", type=_turn_seconds, default=0.1)
    demo.add_argument("--turns-per-match", type=count, default=30)
    demo.add_argument("--seed", type=int, default=1)
    return parser


EXIT_SIGINT = 130
INTERRUPTED = {"demo": "; its bots were stopped and its temporary database deleted"}
"""What an interrupted command says it did before exiting (after ``interrupted``)."""


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = logging.StreamHandler()  # stderr; player names and errors escaped
    handler.setFormatter(ShownFormatter("%(asctime)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    try:
        return _run(args)
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status for SIGINT
        print(f"shared-deck {args.command}: interrupted{INTERRUPTED.get(args.command, '')}",
              file=sys.stderr)  # fmt: skip
        return EXIT_SIGINT
    except BrokenPipeError:  # ``shared-deck results ... | head``: the reader has had enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except DatabaseMissing as error:
        creator = "serve --create" if args.command == "serve" else "add-player"
        print(f"shared-deck {args.command}: {shown(str(error))} (it is made by {creator})",
              file=sys.stderr)  # fmt: skip
        return 2
    except DatabaseRefused as error:  # a folder, not SQLite, another application's database
        print(f"shared-deck {args.command}: {shown(str(error))}", file=sys.stderr)
        return 2
    except sqlite3.Error as error:
        # A database path that cannot be opened or a file that is not a database.
        print(f"shared-deck: database {getattr(args, 'db', '?')}: {shown(str(error))}",
              file=sys.stderr)  # fmt: skip
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.command == "add-player":
        try:  # a name no player may have: said before any database is made
            check_player_name(args.name)
        except ValueError as error:
            print(f"shared-deck add-player: {shown(str(error))}", file=sys.stderr)
            return 2
    if getattr(args, "db", None) is not None:
        # Before any connection is opened: another application's file is refused untouched.
        check_database(args.db)
    if args.command == "add-player":
        return _change_player(args, lambda store: store.add_player(args.name), create=True)
    if args.command == "rotate-secret":
        return _change_player(args, lambda store: store.rotate_secret(args.name))
    if args.command == "remove-player":
        return _change_player(args, lambda store: store.remove_player(args.name))
    if args.command == "serve":
        return _serve(args)
    if args.command in ("results", "match"):
        return _results(args)
    if args.command == "bot":
        if not args.secret:
            print(f"shared-deck bot: give --secret or set ${SECRET_ENV}", file=sys.stderr)
            return 2
        try:
            reconnect = Reconnect(
                args.reconnect_attempts,
                args.reconnect_max_delay,
                min(_DEFAULT_RECONNECT.first_delay, args.reconnect_max_delay),
            )
        except ValueError as error:
            print(f"shared-deck bot: --reconnect-*: {error}", file=sys.stderr)
            return 2
        try:
            asyncio.run(
                run_bot(
                    args.host,
                    args.port,
                    args.name,
                    args.secret,
                    args.strategy,
                    args.seed,
                    args.turns,
                    reconnect,
                )
            )
        except (ServerError, OSError) as error:
            print(f"shared-deck bot: {shown(str(error))}", file=sys.stderr)  # may quote the server
            return 1
        except KeyboardInterrupt:  # Ctrl-C, also while waiting to reconnect
            print("shared-deck bot: interrupted", file=sys.stderr)
            return 130
        return 0
    return asyncio.run(_demo(args))


def _change_player(
    args: argparse.Namespace, change: Callable[[Store], str | None], create: bool = False
) -> int:
    """add-player, rotate-secret, remove-player: print the new secret, if there is one."""
    with contextlib.closing(Store(args.db, create=create)) as store:
        try:
            secret = change(store)
        except ValueError as error:
            print(f"shared-deck {args.command}: {shown(str(error))}", file=sys.stderr)
            return 1
    if secret is not None:
        print(secret)
    return 0


def _results(args: argparse.Namespace) -> int:
    """``results`` in every form, and ``match ID``; the database is opened read-only."""
    match_id = args.id if args.command == "match" else args.match
    as_csv = getattr(args, "csv", False)
    with contextlib.closing(Store(args.db, read_only=True)) as store:
        try:
            if match_id is not None:
                stored_match = store.match(match_id)
                output = (
                    json_text(match_json(stored_match))
                    if args.json
                    else csv_text(match_rows(stored_match))
                    if as_csv
                    else format_match(stored_match)
                )
            elif args.tournament is not None:
                tournament = store.tournament(args.tournament)
                output = (
                    json_text(tournament_json(tournament))
                    if args.json
                    else csv_text(player_rows(tournament))
                    if as_csv
                    else format_tournament(tournament, with_matches=True)
                )
            elif args.json:
                output = json_text(leaderboard_json(store))
            elif as_csv:
                output = csv_text(leaderboard_rows(store))
            else:
                output = format_results(store)
        except KeyError as error:
            print(f"shared-deck {args.command}: {shown(str(error.args[0]))}", file=sys.stderr)
            return 1
    print(shown(output.rstrip("\n"), lines=True))  # a database's names are anybody's text
    return 0


def _serve(args: argparse.Namespace) -> int:
    # Checked before anything is bound or opened: a mistyped path or another application's
    # database (see _run) changes nothing, no lock file either.
    if not args.create and not Path(args.db).exists():
        raise DatabaseMissing(f"database {args.db} does not exist")
    try:
        rules = RuleSet(
            init_hp=args.init_hp,
            deck_size=args.deck_size,
            turns_per_match=args.turns_per_match,
            draws_per_turn=args.draws_per_turn,
            burns_per_turn=args.burns_per_turn,
            hand_limit=args.hand_limit,
        )
        config = ServerConfig(
            db_path=Path(args.db),
            host=args.host,
            port=args.port,
            turn_seconds=args.turn_seconds,
            rules=rules,
            seed=args.seed,
            command_budget=args.command_budget,
            login_timeout=args.login_timeout,
            start_after_logins=args.start_after_logins,
            min_players=args.min_players,
            max_tournaments=args.tournaments,
            create=args.create,
            write_attempts=args.write_attempts,
            max_connections=args.max_connections,
            login_threads=args.login_threads,
            login_checks_per_address=args.login_checks_per_address,
            max_unread_bytes=args.max_unread_bytes,
            unread_seconds=args.unread_timeout,
        )
    except ValueError as error:
        print(f"shared-deck serve: {shown(str(error))}", file=sys.stderr)
        return 2
    try:
        limits, allowed_hosts = limits_from(args, "http-")
        failure = asyncio.run(
            _serve_until_done(config, args.http_host, args.http_port, limits, allowed_hosts)
        )
    except DatabaseLocked as error:
        print(f"shared-deck serve: {shown(str(error))}", file=sys.stderr)
        return 1
    except OSError as error:  # the port is taken, the lock file cannot be made, ...
        print(f"shared-deck serve: {shown(str(error))}", file=sys.stderr)
        return 1
    if failure is not None:
        print(f"shared-deck serve: stopped: {shown(str(failure))}", file=sys.stderr)
        return 1
    return 0


async def start_dashboard(
    server: GameServer, host: str | None, port: int, limits: HttpLimits | None = None,
    allowed_hosts: tuple[str, ...] = (),
) -> Dashboard:  # fmt: skip
    """The web dashboard of ``serve --http-port``, wired to ``server``: it reads the server's
    :class:`~.server.ServerView` and gets a snapshot out on each tick; the descriptors its
    connections may take are kept out of the players' connection cap. Call it before
    ``server.start()``, so that a taken port fails before any file is touched; stop it
    before the server."""
    from .dashboard import Dashboard  # aiohttp is imported only for it

    dashboard = Dashboard(server.view, host, port, limits, allowed_hosts)
    try:
        await dashboard.start()
    except BaseException:
        await dashboard.stop()  # ends its reading thread
        raise
    server.other_descriptors += dashboard.descriptors
    server.add_tick_listener(dashboard.tick)
    return dashboard


async def _serve_until_done(
    config: ServerConfig, http_host: str | None = None, http_port: int | None = None,
    limits: HttpLimits | None = None, allowed_hosts: tuple[str, ...] = (),
) -> str | None:  # fmt: skip
    """Serve until SIGINT/SIGTERM or until the server is done; returns why it failed, if so."""
    server = GameServer(config)
    dashboard = (
        None
        if http_port is None
        else await start_dashboard(server, http_host, http_port, limits, allowed_hosts)
    )
    try:
        host, port = await server.start()
    except BaseException:
        if dashboard is not None:
            await dashboard.stop()
        raise
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):  # before the line that says it is ready
        loop.add_signal_handler(signum, stop.set)
    print(f"shared-deck listening on {host}:{port}", flush=True)
    if dashboard is not None:
        web_host, web_port = dashboard.address
        web_host = f"[{web_host}]" if ":" in web_host else web_host
        print(f"shared-deck dashboard on http://{web_host}:{web_port}/", flush=True)
    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(server.done.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
        if dashboard is not None:
            await dashboard.stop()
        await server.stop()
    return server.failure


DEMO_PLAYERS = (
    ("greedy-1", "greedy"),
    ("greedy-2", "greedy"),
    ("random-1", "random"),
    ("random-2", "random"),
)


DEMO_STOP_SECONDS = 5.0
"""How long a demo bot may take to exit after SIGTERM before it is killed."""


async def _demo(args: argparse.Namespace) -> int:
    """Fresh database, four players, four bot processes, a few short tournaments; the
    database is temporary, and deleted at the end (a line says so).

    Ctrl-C and SIGTERM set an event instead of cancelling whatever is awaited at that
    moment: however early or late they come, the demo stops its bots (bounded waits, then
    SIGKILL) and its server, deletes its database and says so (KeyboardInterrupt)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        with tempfile.TemporaryDirectory(prefix="shared-deck-demo-") as directory:
            db = Path(directory) / "demo.db"
            finished = await _demo_in(args, db, stop)
            if finished:
                with contextlib.closing(Store(db, read_only=True)) as store:
                    print(shown(format_results(store), lines=True))
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    if not finished:
        raise KeyboardInterrupt
    print(
        f"demo database {db} deleted (it was temporary; `shared-deck add-player` and"
        " `shared-deck serve` keep theirs)",
        flush=True,
    )
    return 0


async def _demo_in(args: argparse.Namespace, db: Path, stop: asyncio.Event) -> bool:
    """Run the demo on database ``db`` until its tournaments are saved (True) or ``stop`` is
    set (False); the bots and the server are stopped either way."""
    with contextlib.closing(Store(db)) as store:
        secrets = {name: store.add_player(name) for name, _ in DEMO_PLAYERS}
    config = ServerConfig(
        db_path=db,
        port=0,
        turn_seconds=args.turn_seconds,
        rules=RuleSet(turns_per_match=args.turns_per_match),
        seed=args.seed,
        start_after_logins=len(DEMO_PLAYERS),
    )
    server = GameServer(config)
    host, port = await server.start()
    bots: list[subprocess.Popen[bytes]] = []
    try:
        print(f"demo server on {host}:{port}, database {db}", flush=True)
        for index, (name, strategy) in enumerate(DEMO_PLAYERS):
            if stop.is_set():
                return False
            bots.append(subprocess.Popen(
                [sys.executable, "-m", "cardarena.shared_deck.cli", "bot", "--name", name,
                 "--strategy", strategy, "--host", host, "--port", str(port), "--seed",
                 str(index)],
                env={**os.environ, SECRET_ENV: secrets[name]},
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # stopped by the demo, not by the terminal's Ctrl-C
            ))  # fmt: skip
        saved = asyncio.ensure_future(server.wait_for_saved_tournaments(args.tournaments))
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait((saved, stopped), return_when=asyncio.FIRST_COMPLETED)
        finally:
            saved.cancel()
            stopped.cancel()
        return saved.done() and not saved.cancelled() and not stop.is_set()
    finally:
        await _stop_bots(bots)
        await server.stop()


async def _stop_bots(bots: Sequence[subprocess.Popen[bytes]]) -> None:
    """SIGTERM every bot, then wait (bounded, without blocking the event loop) for each to
    exit, and SIGKILL those still running: every one is reaped."""
    for bot in bots:
        with contextlib.suppress(ProcessLookupError):
            bot.terminate()
    deadline = time.monotonic() + DEMO_STOP_SECONDS
    for bot in bots:
        while bot.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        if bot.poll() is None:
            bot.kill()
            bot.wait()


if __name__ == "__main__":
    sys.exit(main())
