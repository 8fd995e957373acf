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
from collections.abc import Sequence
from pathlib import Path

from .bots import STRATEGIES, run_bot
from .client import Reconnect, ServerError
from .rules import RuleSet
from .server import MIN_TURN_SECONDS, GameServer, ServerConfig
from .store import Store

DEFAULT_DB = "shared-deck.db"
SECRET_ENV = "SHARED_DECK_SECRET"
DEFAULT_RULES = RuleSet()

_DEFAULT_RECONNECT = Reconnect()


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=DEFAULT_DB, help=f"SQLite database (default {DEFAULT_DB})")


def _positive_turn_seconds(text: str) -> float:
    value = float(text)
    if value < MIN_TURN_SECONDS:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_TURN_SECONDS}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shared-deck", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    add = commands.add_parser("add-player", help="register a player; prints its new secret")
    add.add_argument("name")
    _add_db(add)

    serve = commands.add_parser("serve", help="run the tournament server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=7000, help="0 picks a free port")
    _add_db(serve)
    serve.add_argument("--turn-seconds", type=_positive_turn_seconds, default=1.0)
    serve.add_argument("--turns-per-match", type=int, default=DEFAULT_RULES.turns_per_match)
    serve.add_argument("--seed", type=int, help="base seed of the tournaments' decks")
    serve.add_argument("--init-hp", type=int, default=DEFAULT_RULES.init_hp, help="must be even")
    serve.add_argument("--deck-size", type=int, default=DEFAULT_RULES.deck_size)
    serve.add_argument("--draws-per-turn", type=int, default=DEFAULT_RULES.draws_per_turn)
    serve.add_argument("--burns-per-turn", type=int, default=DEFAULT_RULES.burns_per_turn)
    serve.add_argument("--hand-limit", type=int, default=DEFAULT_RULES.hand_limit)
    serve.add_argument(
        "--command-budget",
        type=int,
        default=ServerConfig.command_budget,
        help="commands per player per turn before ERR 953",
    )
    serve.add_argument("--login-timeout", type=float, default=ServerConfig.login_timeout)
    serve.add_argument(
        "--start-after-logins",
        type=int,
        default=0,
        help="hold the first tournament until this many players are logged in",
    )

    results = commands.add_parser("results", help="print the leaderboard and last tournament")
    _add_db(results)

    bot = commands.add_parser("bot", help="run a built-in bot")
    bot.add_argument("--name", required=True)
    bot.add_argument(
        "--secret",
        default=os.environ.get(SECRET_ENV),
        help=f"the player's secret (default: ${SECRET_ENV})",
    )
    bot.add_argument("--strategy", choices=sorted(STRATEGIES), default="greedy")
    bot.add_argument("--host", default="127.0.0.1")
    bot.add_argument("--port", type=int, default=7000)
    bot.add_argument("--seed", type=int)
    bot.add_argument("--turns", type=int, help="stop after this many turns")
    bot.add_argument(
        "--reconnect-attempts",
        type=int,
        default=_DEFAULT_RECONNECT.max_attempts,
        help="failed reconnections in a row before giving up (0: exit on a lost connection)",
    )
    bot.add_argument(
        "--reconnect-max-delay",
        type=float,
        default=_DEFAULT_RECONNECT.max_delay,
        help="longest wait in seconds between reconnection attempts",
    )

    demo = commands.add_parser("demo", help="a local server, four bots, two short tournaments")
    demo.add_argument("--tournaments", type=int, default=2)
    demo.add_argument("--turn-seconds", type=_positive_turn_seconds, default=0.1)
    demo.add_argument("--turns-per-match", type=int, default=30)
    demo.add_argument("--seed", type=int, default=1)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    try:
        return _run(args)
    except sqlite3.Error as error:
        # A database path that cannot be opened or a file that is not a database.
        print(f"shared-deck: database {getattr(args, 'db', '?')}: {error}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.command == "add-player":
        return _add_player(args)
    if args.command == "serve":
        return _serve(args)
    if args.command == "results":
        with contextlib.closing(Store(args.db)) as store:
            print(format_results(store))
        return 0
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
            print(f"shared-deck bot: {error}", file=sys.stderr)
            return 1
        return 0
    return asyncio.run(_demo(args))


def _add_player(args: argparse.Namespace) -> int:
    with contextlib.closing(Store(args.db)) as store:
        try:
            secret = store.add_player(args.name)
        except ValueError as error:
            print(f"shared-deck add-player: {error}", file=sys.stderr)
            return 1
    print(secret)
    return 0


def _serve(args: argparse.Namespace) -> int:
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
        )
    except ValueError as error:
        print(f"shared-deck serve: {error}", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve_until_signal(config))
    except OSError as error:  # the port is taken, the database cannot be opened, ...
        print(f"shared-deck serve: {error}", file=sys.stderr)
        return 1
    return 0


async def _serve_until_signal(config: ServerConfig) -> None:
    server = GameServer(config)
    host, port = await server.start()
    print(f"shared-deck listening on {host}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await server.stop()


def format_results(store: Store) -> str:
    """The leaderboard, then the last finished tournament's table."""
    finished = store.finished_tournaments()
    lines = [f"Leaderboard after {len(finished)} tournament(s)"]
    lines.append(f"{'rank':>4}  {'player':<32} {'points':>12} {'tournaments':>11}")
    for rank, row in enumerate(store.leaderboard(), start=1):
        lines.append(f"{rank:>4}  {row.player:<32} {row.points:>12.2f} {row.tournaments:>11}")
    if not finished:
        return "\n".join(lines)
    last = store.tournament(finished[-1])
    lines.append("")
    lines.append(
        f"Tournament {last.number}: deck seed {last.seed}, {len(last.matches)} matches of "
        f"{last.rules.turns_per_match} turns"
    )
    lines.append(
        f"{'player':<32} {'points':>12} {'matches':>7} {'won':>4} {'lost':>4} {'total score':>11}"
    )
    table: dict[str, list[int]] = {name: [0, 0, 0, 0] for name in last.points}
    for match in last.matches:
        for me, my_hp, my_score, their_hp in (
            (match.first, match.first_hp, match.first_score, match.second_hp),
            (match.second, match.second_hp, match.second_score, match.first_hp),
        ):
            row = table[me]
            row[0] += 1
            row[1] += their_hp == 0
            row[2] += my_hp == 0
            row[3] += my_score
    for name, points in sorted(last.points.items(), key=lambda item: (-item[1], item[0])):
        played, won, lost, total = table[name]
        lines.append(f"{name:<32} {points:>12.2f} {played:>7} {won:>4} {lost:>4} {total:>11}")
    return "\n".join(lines)


DEMO_PLAYERS = (
    ("greedy-1", "greedy"),
    ("greedy-2", "greedy"),
    ("random-1", "random"),
    ("random-2", "random"),
)


async def _demo(args: argparse.Namespace) -> int:
    """Fresh database, four players, four bot processes, a few short tournaments."""
    with tempfile.TemporaryDirectory(prefix="shared-deck-demo-") as directory:
        db = Path(directory) / "demo.db"
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
        print(f"demo server on {host}:{port}, database {db}", flush=True)
        bots = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "cardarena.shared_deck.cli",
                    "bot",
                    "--name",
                    name,
                    "--strategy",
                    strategy,
                    "--host",
                    host,
                    "--port",
                    str(port),
                    "--seed",
                    str(index),
                ],
                env={**os.environ, SECRET_ENV: secrets[name]},
                stderr=subprocess.DEVNULL,
            )
            for index, (name, strategy) in enumerate(DEMO_PLAYERS)
        ]
        try:
            await server.wait_for_saved_tournaments(args.tournaments)
        finally:
            for bot in bots:
                bot.terminate()
            for bot in bots:
                bot.wait()
            await server.stop()
        with contextlib.closing(Store(db)) as store:
            print(format_results(store))
    return 0


if __name__ == "__main__":
    sys.exit(main())
