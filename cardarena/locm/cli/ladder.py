"""``locm ladder``: run a self-hosted ladder (``serve``), let people in (``user add``) and
send a bot to one (``submit``, an HTTP client of the ladder's JSON API; docs/ladder.md)."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ...argtypes import count, int_in, port
from ...httpguard import add_http_options, limits_from
from ...terminal import shown
from ...tournaments.runner import BACKENDS
from ..engine.rules import DEFAULT_VERSION, VERSIONS
from .ladder_client import TOKEN_VARIABLE, LadderUsageError, ladder_address, server_reason

"""Where ``submit`` reads the token when ``--token`` is not given (out of the shell's
history and of ``ps``)."""
DEFAULT_DB = "ladder.db"
MAX_UPLOAD_BYTES = 64 << 20
"""``submit`` refuses to read a larger file (the server's own cap is lower)."""
SUBMIT_TIMEOUT_S = 120.0
REFUSED = 1
"""Exit status of ``submit`` when the server refuses the upload (or cannot be reached)."""


def _cmd_serve(args: argparse.Namespace) -> int:
    from ..ladder.service import serve

    limits, allowed_hosts = limits_from(args)
    extra: dict[str, Any] = {}
    if args.languages is not None:
        from ...ladder.languages import load_languages

        extra["languages"] = load_languages(args.languages)  # LanguageError: one line, exit 2
    if args.human_games is not None:
        extra["human_games"] = args.human_games
    from .ladder_ab import serve_options

    extra.update(serve_options(args))
    status = serve(
        db=args.db, version=args.version, host=args.host, port=args.port,
        workers=args.workers, backend=args.backend, address=args.address,
        limits=limits, allowed_hosts=allowed_hosts, **extra,
    )  # fmt: skip
    return int(status or 0)


def _cmd_user_add(args: argparse.Namespace) -> int:
    from ...ladder.store import LadderStore

    with LadderStore(args.db) as store:
        token = store.add_user(args.name, args.organiser)
    print(token)
    role = "organiser" if args.organiser else "participant"
    print(f"locm: {role} {shown(args.name)!r} added to {args.db}; the line above is their "
          "token: it is shown once (only its hash is stored)", file=sys.stderr)  # fmt: skip
    return 0


def _cmd_user_token(args: argparse.Namespace) -> int:
    from ...ladder.store import LadderStore

    with LadderStore(args.db, create=False) as store:
        token = store.new_token(args.name)
    print(token)
    print(f"locm: {shown(args.name)!r} has a new token (the line above); the old one no longer "
          "works", file=sys.stderr)  # fmt: skip
    return 0


def multipart(fields: dict[str, str], file_field: str, filename: str,
              data: bytes) -> tuple[bytes, str]:  # fmt: skip
    """A ``multipart/form-data`` body of ``fields`` and one file, and its content type."""
    boundary = f"cardarena-{secrets.token_hex(16)}"
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
            f"{value}\r\n".encode()
        )
    quoted = filename.replace("\\", "_").replace('"', "_").replace("\r", "_").replace("\n", "_")
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
        f'filename="{quoted}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
        + data
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _cmd_submit(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get(TOKEN_VARIABLE, "")
    if not token:
        raise LadderUsageError(f"no token: give --token TOKEN or set {TOKEN_VARIABLE} (the "
                               "line that locm ladder user add printed)")  # fmt: skip
    address = ladder_address(args.server, "api/submissions")
    try:
        size = os.path.getsize(args.path)
        if not os.path.isfile(args.path):
            raise LadderUsageError(f"{args.path}: not a file (a source file, .zip or .tar.gz)")
        if size > MAX_UPLOAD_BYTES:
            raise LadderUsageError(f"{args.path}: {size} bytes, too large to upload")
        with open(args.path, "rb") as source:
            data = source.read()
    except OSError as error:
        raise LadderUsageError(f"cannot read {args.path}: {error.strerror or error}") from None
    fields = {"name": args.name, "language": args.language, "new_bot": "1" if args.new_bot else ""}
    body, content_type = multipart(fields, "file", os.path.basename(args.path), data)
    request = urllib.request.Request(
        address, data=body, method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": content_type,
                 "Accept": "application/json"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=args.timeout) as answer:
            reply: Any = json.loads(answer.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        reason = server_reason(error.read(), error.code)
        print(f"locm: refused ({error.code}): {shown(reason)}", file=sys.stderr)
        return REFUSED
    except (urllib.error.URLError, OSError) as error:
        why = getattr(error, "reason", None) or error
        print(f"locm: cannot reach {shown(address)}: {shown(str(why))}", file=sys.stderr)
        return REFUSED
    except ValueError:
        print(f"locm: {shown(address)} did not answer JSON: is it a ladder?", file=sys.stderr)
        return REFUSED
    submission = reply.get("submission") if isinstance(reply, dict) else None
    if submission is None:
        print(f"locm: {shown(address)} answered without a submission id", file=sys.stderr)
        return REFUSED
    print(submission)
    page = reply.get("page") if isinstance(reply, dict) else None
    if isinstance(page, str):
        where = urllib.parse.urljoin(args.server.rstrip("/") + "/", page.lstrip("/"))
        print(f"locm: submitted; follow its build at {shown(where)}", file=sys.stderr)
    return 0


def _helper(parser: argparse.ArgumentParser) -> Any:
    """A group's command without its subcommand: its help on stderr, exit status 2."""

    def show(_args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return show


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``ladder`` (``serve``, ``user add``, ``submit``) to the ``locm`` command line."""
    ladder = commands.add_parser(
        "ladder",
        help="a self-hosted ladder: people submit bots, which play rated games continuously "
        "(docs/ladder.md)",
        description="A self-hosted LOCM ladder: one server process (web pages, a JSON API, "
        "the game scheduler) over one SQLite file.",
    )
    actions = ladder.add_subparsers(dest="ladder_command", metavar="COMMAND",
                                    parser_class=type(ladder))  # fmt: skip
    ladder.set_defaults(run=_helper(ladder))

    serve = actions.add_parser(
        "serve",
        help="run the ladder: pages, JSON API, builds and games (Ctrl-C stops; it resumes)",
        description="Run the ladder server over --db (created if missing). Its first line on "
        "standard output is the base address, http://HOST:PORT/.",
    )
    serve.add_argument("--db", default=DEFAULT_DB, help=f"SQLite file (default {DEFAULT_DB})")
    serve.add_argument(
        "--version", choices=VERSIONS, default=DEFAULT_VERSION,
        help=f"LOCM version the ladder plays (default {DEFAULT_VERSION})",
    )  # fmt: skip
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                       "127.0.0.1; 0.0.0.0 for every interface)")  # fmt: skip
    serve.add_argument("--port", type=port, default=8000, help="default 8000 (0: any free port)")
    serve.add_argument("--workers", type=count, help="games played at once (default: cores - 1)")
    serve.add_argument("--backend", choices=BACKENDS, default="process",
                       help="where games run (default process; ray: a Ray cluster)")  # fmt: skip
    serve.add_argument("--address", help="Ray cluster address (--backend ray), e.g. auto")
    serve.add_argument(
        "--languages", metavar="FILE",
        help="a TOML (or .json) file that adds, replaces or removes languages "
        "(docs/ladder.md#languages)",
    )  # fmt: skip
    serve.add_argument("--human-games", type=int_in(0, 64), metavar="N",
                       help="games of participants against the bots in their browser at once "
                       "(default 2; 0: none)")  # fmt: skip
    add_http_options(serve)
    from .ladder_ab import add_ab_command, add_serve_options

    add_serve_options(serve)
    serve.set_defaults(run=_cmd_serve)

    user = actions.add_parser(
        "user", help="participants: user add NAME prints a token; user token NAME a new one"
    )
    user_actions = user.add_subparsers(dest="user_command", metavar="COMMAND",
                                       parser_class=type(ladder))  # fmt: skip
    user.set_defaults(run=_helper(user))
    add = user_actions.add_parser(
        "add",
        help="add a participant (or an organiser) and print their token",
        description="Add a participant to the ladder's database and print their new token "
        "on standard output (only its hash is stored: it cannot be shown again). Give it to "
        "them privately.",
    )
    add.add_argument("name", help="the participant's name, shown as the owner of their bots")
    add.add_argument("--db", default=DEFAULT_DB, help=f"SQLite file (default {DEFAULT_DB})")
    add.add_argument(
        "--organiser", action="store_true",
        help="may pause the ladder, freeze submissions, disable or retire bots",
    )  # fmt: skip
    add.set_defaults(run=_cmd_user_add)
    renew = user_actions.add_parser(
        "token",
        help="give a participant a new token (a lost or leaked one stops working)",
        description="Replace a participant's token and print the new one on standard output.",
    )
    renew.add_argument("name", help="the participant's name")
    renew.add_argument("--db", default=DEFAULT_DB, help=f"SQLite file (default {DEFAULT_DB})")
    renew.set_defaults(run=_cmd_user_token)

    submit = actions.add_parser(
        "submit",
        help="send a bot (a source file, .zip or .tar.gz) to a running ladder; prints the "
        "submission id",
        description=f"Upload a bot to the ladder at --server. The token comes from --token or, "
        f"kept out of the shell's history, from the environment variable {TOKEN_VARIABLE}. "
        "Exit status 1 when the server refuses the upload (its reason on one line).",
    )
    submit.add_argument("path", help="the source file, or a .zip / .tar.gz of the sources")
    submit.add_argument("--server", required=True, metavar="URL",
                        help="the ladder's address, e.g. http://127.0.0.1:8000/")  # fmt: skip
    submit.add_argument("--token", help=f"your token (default: ${TOKEN_VARIABLE})")
    submit.add_argument("--name", required=True, help="the bot's name")
    submit.add_argument("--language", required=True,
                        help="the language of the sources, e.g. python (the ladder's pages "
                        "list the others)")  # fmt: skip
    submit.add_argument("--new-bot", action="store_true",
                        help="a new bot of yours (else: a new version of bot --name)")  # fmt: skip
    submit.add_argument("--timeout", type=count, default=int(SUBMIT_TIMEOUT_S), metavar="S",
                        help="seconds to wait for the server (default %(default)s)")  # fmt: skip
    submit.set_defaults(run=_cmd_submit)
    from .ladder_organise import add_commands as add_organiser_commands

    add_organiser_commands(actions, type(ladder))  # admin, final, export
    add_ab_command(actions)
