"""``locm view`` (one game's viewer page) and ``locm serve`` (a tournament, live)."""

from __future__ import annotations

import argparse
import os
import sys
import webbrowser
from pathlib import Path

from ... import pages
from ...argtypes import count, port
from ...httpguard import add_http_options, limits_from
from ..engine.rules import VERSIONS
from ..referee.replay import ReplayError, load_log
from ..viewer.tournament_pages import ViewError, stored_log
from .options import league


def write_page(path: str, text: str, source: str | None = None) -> None:
    """Write the page to ``path`` (replacing, never following, a link there); refuse to
    overwrite ``source``, the file the page was made from."""
    if source is not None and os.path.exists(path) and os.path.samefile(path, source):
        raise ViewError(f"the page would overwrite {source}, which it is made from; "
                        "give another name with -o OUT.html")  # fmt: skip
    try:
        pages.write_page(path, text)
    except OSError as error:
        raise ViewError(f"cannot write {path}: {error.strerror or error}") from None


def _cmd_view(args: argparse.Namespace) -> int:
    from ..viewer.page import viewer_html

    if (args.log is None) == (args.db is None):
        raise ViewError("give either a LOG.json or --db DB --game N (see locm view --help)")
    if args.db is not None:
        if args.game is None:
            raise ViewError("--db needs --game N (the game numbers are in `locm report --html`)")
        _key, log = stored_log(args.db, args.game)
        out = args.out or f"{os.path.splitext(args.db)[0]}-game-{args.game}.html"
    else:
        if args.game is not None:
            raise ViewError("--game goes with --db")
        log = load_log(args.log)
        out = args.out or f"{os.path.splitext(args.log)[0]}.html"
    try:
        page = viewer_html(log, version=args.version, league=args.league)
    except ReplayError as error:
        source = args.log or f"game {args.game} of {args.db}"
        raise ViewError(f"{source}: {error}") from None
    write_page(out, page, source=args.log or args.db)
    print(out)
    if args.open and not webbrowser.open(Path(out).resolve().as_uri()):
        print(f"locm: warning: no web browser found; open {out} yourself", file=sys.stderr)
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from ..viewer.serve import serve

    limits, allowed_hosts = limits_from(args)
    return serve(args.db, args.host, args.port, limits, allowed_hosts)


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``view`` and ``serve`` to the ``locm`` command line."""
    view = commands.add_parser(
        "view",
        help="write a game's replay viewer: one self-contained HTML page (docs/viewer.md)",
        description="Re-simulate a logged game with the engine and write it as one HTML page "
        "that works offline: deck building, every action, both bots' stderr.",
    )
    view.add_argument("log", nargs="?", help="a GameResult JSON log (locm play -l, or the jar)")
    view.add_argument("--db", help="a tournament database (with --game N)")
    view.add_argument("--game", type=count, metavar="N", help="the game's number in --db")
    view.add_argument("-o", "--out", metavar="OUT.html",
                      help="default: the log's name with .html (or DB-game-N.html)")  # fmt: skip
    view.add_argument("--open", action="store_true", help="open the page in the web browser")
    view.add_argument("--version", choices=VERSIONS, help="override the log's version")
    view.add_argument("--league", type=league, help="override the log's 1.0 league")
    view.set_defaults(run=_cmd_view)
    serve = commands.add_parser(
        "serve",
        help="serve a tournament's report and game viewers over HTTP, live (read-only)",
        description="Serve the HTML report of a tournament database and a viewer page per "
        "game; the pages follow a running tournament. The database is only read.",
    )
    serve.add_argument("--db", default="tournament.db", help="SQLite file (default tournament.db)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                       "127.0.0.1; 0.0.0.0 for every interface)")  # fmt: skip
    serve.add_argument("--port", type=port, default=8000, help="default 8000 (0: any free port)")
    add_http_options(serve)
    serve.set_defaults(run=_cmd_serve)
