"""The organiser's ``locm ladder`` commands: ``admin`` (pause, resume, freeze, unfreeze,
disable, enable, retire: HTTP calls to a running ladder with an organiser's token), ``final``
(start, status, stop) and ``export`` (the standings and every game as files, read-only on the
database). docs/ladder.md walks through them."""

from __future__ import annotations

import argparse
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ...argtypes import count
from ...terminal import shown
from .ladder_client import TOKEN_VARIABLE, LadderUsageError, Unanswered, call, ladder_address

DEFAULT_DB = "ladder.db"
ADMIN_ACTIONS = ("pause", "resume", "freeze", "unfreeze", "disable", "enable", "retire")
BOT_ACTIONS = ("disable", "enable", "retire")
TIMEOUT_S = 60.0


def _token(args: argparse.Namespace) -> str:
    token = args.token or os.environ.get(TOKEN_VARIABLE, "")
    if not token:
        raise LadderUsageError(
            f"no token: give --token TOKEN or set {TOKEN_VARIABLE} (an "
            "organiser's token: locm ladder user add NAME --organiser)"
        )
    return token


def _call(
    server: str,
    path: str,
    token: str | None = None,
    body: dict[str, Any] | None = None,
    timeout: float = TIMEOUT_S,
) -> dict[str, Any]:
    """One JSON request to the ladder at ``server``: a POST of ``body`` when given, else a
    GET. Unanswered (one line) when refused or unreachable."""
    return call(ladder_address(server, path), token, body, timeout)


def _answered(run: Any) -> Any:
    """A command whose refusals print one line (through ``shown``) and exit 1."""

    def command(args: argparse.Namespace) -> int:
        try:
            return int(run(args))
        except Unanswered as error:
            print(f"locm: {shown(str(error))}", file=sys.stderr)
            return 1

    return command


def _cmd_admin(args: argparse.Namespace) -> int:
    token = _token(args)
    if args.action in BOT_ACTIONS:
        if not args.bot:
            raise LadderUsageError(f"ladder admin {args.action} needs the bot's name")
        path = f"api/bots/{urllib.parse.quote(args.bot, safe='')}/{args.action}"
    else:
        if args.bot:
            raise LadderUsageError(f"ladder admin {args.action} takes no bot name")
        path = f"api/ladder/{args.action}"
    reply = _call(args.server, path, token, {"reason": args.reason or ""})
    if args.action in BOT_ACTIONS:
        reason = reply.get("reason")
        print(
            f"{shown(str(reply.get('name')))}: {shown(str(reply.get('status')))}"
            + (f" ({shown(str(reason))})" if reason else "")
        )
    else:
        print(
            f"paused: {'yes' if reply.get('paused') else 'no'}, submissions frozen: "
            f"{'yes' if reply.get('frozen') else 'no'}"
        )
    return 0


def final_text(final: dict[str, Any] | None) -> str:
    """The final's state in a few lines for a terminal (every name through ``shown``)."""
    if final is None:
        return "no final yet"
    state = str(final.get("state"))
    if state == "running" and final.get("end_reason"):
        state += f", no more games ({final['end_reason']})"
    elif final.get("end_reason"):
        state += f" ({final['end_reason']})"
    lines = [
        f"final {final.get('id')}: {shown(state)}; top {final.get('top')}, confidence "
        f"{final.get('confidence')}; {final.get('games_played')} games played, "
        f"{final.get('games_in_play')} in play, {final.get('games_left')} left in the budget "
        f"of {final.get('budget')}; separated: {'yes' if final.get('separated') else 'no'}"
    ]
    for row in final.get("standings") or []:
        elo = row.get("elo")
        rating = "–" if not elo else f"{elo['value']:.0f} [{elo['low']:.0f}, {elo['high']:.0f}]"
        tied = row.get("tied_with") or []
        lines.append(
            f"{row.get('rank'):>3}. {shown(str(row.get('name')))}  {rating}  "
            f"{row.get('games')} games, score {row.get('score')}"
            + (f"  (tied with {shown(', '.join(map(str, tied)))})" if tied else "")
        )
    return "\n".join(lines)


def _cmd_final(args: argparse.Namespace) -> int:
    if args.final_command == "status":
        reply = _call(args.server, "api/final")
    elif args.final_command == "stop":
        reply = _call(args.server, "api/final/stop", _token(args), {})
    else:
        body = {"top": args.top, "confidence": args.confidence, "budget": args.budget}
        reply = _call(args.server, "api/final", _token(args), body)
    print(final_text(reply.get("final")))
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from ..ladder.export import export

    written = export(
        args.db, args.out, board=args.board, max_games=args.max_games, with_stderr=args.with_stderr
    )
    pages = sum(1 for path in written if os.sep + "games" + os.sep in path)
    print(os.path.join(args.out, "index.html"))
    print(
        f"locm: wrote standings.csv, standings.json, index.html and {pages} game page(s) "
        f"in {shown(args.out)}",
        file=sys.stderr,
    )
    return 0


def _helper(parser: argparse.ArgumentParser) -> Any:
    """A group's command without its subcommand: its help on stderr, exit status 2."""

    def show(_args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return show


def _server_options(parser: argparse.ArgumentParser, token: bool = True) -> None:
    parser.add_argument(
        "--server",
        required=True,
        metavar="URL",
        help="the ladder's address, e.g. http://127.0.0.1:8000/",
    )
    if token:
        parser.add_argument("--token", help=f"an organiser's token (default: ${TOKEN_VARIABLE})")


def add_commands(actions: argparse._SubParsersAction, parser_class: type) -> None:  # type: ignore[type-arg]
    """Add ``admin``, ``final`` and ``export`` to ``locm ladder``."""
    from ...ladder.export import DEFAULT_MAX_GAMES
    from ...ladder.final import DEFAULT_BUDGET, DEFAULT_TOP

    admin = actions.add_parser(
        "admin",
        help="organisers: pause/resume games, freeze/unfreeze submissions, disable/enable/"
        "retire a bot on a running ladder",
        description="Ask a running ladder (--server) to pause or resume its games, freeze or "
        "unfreeze submissions, or disable, enable or retire a bot, with an organiser's token. "
        "Exit status 1 when the server refuses (its reason on one line).",
    )
    admin.add_argument("action", choices=ADMIN_ACTIONS)
    admin.add_argument("bot", nargs="?", help="the bot (disable, enable, retire)")
    admin.add_argument("--reason", help="shown on the bot's page (disable, retire)")
    _server_options(admin)
    admin.set_defaults(run=_answered(_cmd_admin))

    final = actions.add_parser(
        "final",
        help="organisers: start the final among the top K bots, follow it, stop it",
        description="The final: every pair among the board's top K plays pairs of games (one "
        "seed, seats swapped) until each is significantly above the next at --confidence or "
        "the --budget of games is spent. Starting it freezes submissions and holds rated play.",
    )
    steps = final.add_subparsers(dest="final_command", metavar="COMMAND", parser_class=parser_class)
    final.set_defaults(run=_helper(final))
    start = steps.add_parser("start", help="start the final (an organiser's token)")
    start.add_argument(
        "--top",
        type=count,
        default=DEFAULT_TOP,
        help="finalists: the K best active bots (default %(default)s)",
    )
    start.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="stop when every rank is separated at this confidence (default %(default)s)",
    )
    start.add_argument(
        "--budget", type=count, default=DEFAULT_BUDGET, help="games at most (default %(default)s)"
    )
    _server_options(start)
    start.set_defaults(run=_answered(_cmd_final))
    status = steps.add_parser("status", help="the final's state and standings (anyone)")
    _server_options(status, token=False)
    status.set_defaults(run=_answered(_cmd_final))
    stop = steps.add_parser("stop", help="stop the final now (games in play finish and count)")
    _server_options(stop)
    stop.set_defaults(run=_answered(_cmd_final))

    export = actions.add_parser(
        "export",
        help="write the final standings (or the board) as CSV and JSON, and the report page "
        "with every game's viewer page",
        description="Write DIR/standings.csv, DIR/standings.json, DIR/index.html (the "
        "tournament report) and DIR/games/N.html (each game in the viewer) from the newest "
        "final, or from the board when there was no final (or with --board). Reads the "
        "database only: safe while the server runs.",
    )
    export.add_argument("--db", default=DEFAULT_DB, help=f"SQLite file (default {DEFAULT_DB})")
    export.add_argument("--out", required=True, metavar="DIR", help="the folder to write")
    export.add_argument(
        "--board",
        action="store_true",
        help="the board's standings and rated games, even after a final",
    )
    export.add_argument(
        "--max-games",
        type=count,
        default=DEFAULT_MAX_GAMES,
        metavar="N",
        help="the board's newest N rated games at most (default %(default)s)",
    )
    export.add_argument(
        "--with-stderr",
        action="store_true",
        help="keep what bots printed on stderr in the viewer pages (by "
        "default left out: it is each owner's to read)",
    )
    export.set_defaults(run=_cmd_export)
