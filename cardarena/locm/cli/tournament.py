"""``locm tournament`` and ``locm report``: command lines over :mod:`..tournament`."""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import sqlite3
import sys

from ...argtypes import count, positive_number
from ...terminal import shown
from ...tournaments.report import build_report
from ...tournaments.report.files import write_csv, write_json
from ...tournaments.report.model import with_causes
from ...tournaments.report.png import write_pictures
from ...tournaments.report.text import report_text
from ...tournaments.runner import BACKENDS, Interrupted
from ...tournaments.store import StoreError, reading
from ..engine.rules import DEFAULT_VERSION, VERSIONS
from ..referee.botenv import parse_bot_env
from ..referee.causes import stored_cause
from ..tournament import DEFAULT_DB, parse_bot, run_tournament
from .options import add_bot_env, add_memory, league


def print_report(
    db: str, *, as_json: bool = False, out_dir: str | None = None, must_write: bool = True
) -> None:
    """Print the report of ``db`` and write its CSV, JSON and PNG files to ``out_dir``.

    The database is opened read-only (it may be a read-only file, or in use by a
    running tournament). If the files cannot be written, that is an error when
    the directory was asked for (``must_write``), otherwise a one-line warning.
    """
    import json

    with reading(db) as store:
        records = with_causes(store.records(), stored_cause)  # an older database: derived
        report = build_report(list(store.bots()), records, store.meta(), store.game_numbers())
    if as_json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        open_game = f"locm view --db {shlex.quote(db)} --game N --open"
        # names, commands and bots' stderr lines from the database
        print(shown(report_text(report, open_game), lines=True))
    if out_dir:
        try:
            written = [*write_csv(report, out_dir), write_json(report, out_dir)]
            try:
                written += write_pictures(report, out_dir)
            except ImportError:
                print("locm: matplotlib is not installed: no PNG pictures", file=sys.stderr)
        except OSError as error:
            why = f"cannot write the report files in {out_dir}: {error.strerror}"
            if must_write:
                raise StoreError(why) from None
            print(f"locm: warning: {why}", file=sys.stderr)
            return
        if not as_json:
            print(f"\nwritten: {', '.join(written)}")


def default_report_dir(db: str) -> str:
    root, _ext = os.path.splitext(db)
    return f"{root}-report"


def _cmd_tournament(args: argparse.Namespace) -> int:
    bots = [parse_bot(text) for text in args.bot]
    if len(bots) < 2:
        raise ValueError("a tournament needs at least two --bot")
    bot_env = parse_bot_env(args.bot_env)
    if args.backend == "ray" and importlib.util.find_spec("ray") is None:
        # said before the progress bar starts, not as a traceback from a worker thread
        raise ValueError(
            '--backend ray needs Ray: pip install ".[ray]" in the cardarena folder, '
            "or pip install ray"
        )
    try:
        played = run_tournament(
            bots, version=args.version, games=args.games, workers=args.workers, seed=args.seed,
            db=args.db, time_scale=args.time_scale, league=args.league,
            backend=args.backend, address=args.address, progress=not args.quiet,
            retry_errors=args.retry_errors, sandbox=not args.no_sandbox, bot_env=bot_env,
            memory_mb=args.memory,
        )  # fmt: skip
        print(f"locm: played {played} new games into {args.db}", file=sys.stderr)
    except Interrupted as why:
        print(f"locm: {why}; finished games are saved: run the same command to resume",
              file=sys.stderr)  # fmt: skip
        return why.exit_status
    except sqlite3.Error as error:  # e.g. a database damaged beyond its first pages
        raise StoreError(f"{args.db}: database error: {error}") from None
    print_report(
        args.db, as_json=args.json, out_dir=args.out or default_report_dir(args.db),
        must_write=args.out is not None,
    )  # fmt: skip
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    out = args.out
    if out is None and not args.json:
        out = default_report_dir(args.db)
    print_report(args.db, as_json=args.json, out_dir=out, must_write=args.out is not None)
    if args.html:
        from ..viewer.tournament_pages import write_html_report

        written = write_html_report(args.db, args.html)
        print(f"HTML report: {written[0]} ({len(written) - 1} game pages)", file=sys.stderr)
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``tournament`` and ``report`` to the ``locm`` command line."""
    tournament = commands.add_parser(
        "tournament",
        help="play every pair of bots in both seats, in parallel, into a resumable database",
        description="Every ordered pair of bots plays --games games (so both seats). Run the "
        "same command again after an interruption to play only the missing games.",
    )
    tournament.add_argument(
        "--bot", action="append", required=True, metavar="NAME=COMMAND",
        help="a bot: NAME=COMMAND (any command line, builtin:<agent> or python:MODULE:FACTORY), "
        "or a bare builtin:<agent> or python:MODULE:FACTORY; repeat for each bot",
    )  # fmt: skip
    tournament.add_argument("--version", choices=VERSIONS, default=DEFAULT_VERSION)
    tournament.add_argument("--games", type=count, default=10, help="games per ordered pair")
    tournament.add_argument("--workers", type=count, help="parallel games (default: all cores)")
    tournament.add_argument("--seed", type=int, default=1, help="tournament seed (default 1)")
    tournament.add_argument("--db", default=DEFAULT_DB, help=f"SQLite file (default {DEFAULT_DB})")
    tournament.add_argument(
        "--time-scale", type=positive_number, default=1.0, metavar="X",
        help="multiply every time limit by X (built-in search agents budget accordingly)",
    )  # fmt: skip
    tournament.add_argument(
        "--league", type=league,
        help="1.0 only: the draft pool's league (default 4)",
    )  # fmt: skip
    tournament.add_argument(
        "--retry-errors", action="store_true",
        help="also play again the games a bot lost to a timeout while the machine starved it of "
        "CPU (never a crash or an answer the bot chose; it says what it keeps); referee "
        "failures are always played again",
    )  # fmt: skip
    tournament.add_argument("--backend", choices=BACKENDS, default="process")
    tournament.add_argument("--address", help="Ray cluster address (--backend ray), e.g. auto")
    tournament.add_argument("--out", help="report directory (default: <db>-report)")
    tournament.add_argument("--json", action="store_true", help="print the report as JSON")
    tournament.add_argument("--quiet", action="store_true", help="no progress bar")
    tournament.add_argument(
        "--no-sandbox", action="store_true", help="run bot commands unsandboxed (docs/referee.md)"
    )
    add_bot_env(tournament)
    add_memory(tournament)
    tournament.set_defaults(run=_cmd_tournament)

    report = commands.add_parser(
        "report", help="print a tournament's report and write its CSV, JSON and PNG files"
    )
    report.add_argument("--db", default=DEFAULT_DB, help=f"SQLite file (default {DEFAULT_DB})")
    report.add_argument("--json", action="store_true", help="print one JSON object")
    report.add_argument("--out", help="write CSV/JSON/PNG here (default: <db>-report)")
    report.add_argument(
        "--html", metavar="DIR",
        help="also write the report as DIR/index.html, each game linked to its replay viewer "
        "page (DIR/games/N.html); see docs/viewer.md",
    )  # fmt: skip
    report.set_defaults(run=_cmd_report)
