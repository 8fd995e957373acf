"""``locm play`` with a person in a seat (``-p1 human`` or ``-p2 human``): the browser game.

The options are added to ``locm play`` (they do nothing in games between bots); the game
itself is :mod:`cardarena.locm.play` (docs/play.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ...argtypes import port, positive_number
from ...httpguard import add_http_options, limits_from
from ...terminal import shown
from ..engine.params import GameParameters
from ..referee.game_loop import GameOutcome, TimeControl


def add_options(play: argparse.ArgumentParser) -> None:
    """The options of a game with a human seat (docs/play.md)."""
    group = play.add_argument_group("a person playing (-p1 human or -p2 human; docs/play.md)")
    group.add_argument(
        "--human-time",
        type=positive_number,
        metavar="SECONDS",
        help="the person's time per turn and per deck-building answer, shown as "
        "a countdown from when the page is first open; running out is a timeout, as for a "
        "bot (default: no limit)",
    )
    group.add_argument(
        "--open",
        action="store_true",
        help="open the game's page in the browser (through a one-time address: no token on "
        "its command line)",
    )
    group.add_argument(
        "--host",
        default="127.0.0.1",
        help="address the page is served on (default 127.0.0.1: this machine only)",
    )
    group.add_argument("--port", type=port, default=0, help="default 0: any free port")
    add_http_options(group, cap_note="fewer to fit the descriptor limit, the referee's and "
                     "the bots' kept apart")  # fmt: skip


def play_human(
    args: argparse.Namespace,
    params: GameParameters,
    league: int,
    write_log: Callable[[str, str], None],
    bot_env: Sequence[tuple[str, str]] = (),
    on_interrupted: Callable[[dict[str, Any]], None] | None = None,
) -> int:
    """Serve the game's page and play it; the address is the first line of stdout, the
    scores and parameters follow at the end as for any ``locm play`` (the log is written
    with ``write_log(path, text)``, ``locm play``'s). Ctrl-C or SIGTERM before the end
    hands ``on_interrupted`` the log of what was played, then raises as ``play_game``."""
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        raise ValueError("a human seat needs aiohttp: pip install 'aiohttp>=3.9,<4'") from None
    from ..play.server import play_session
    from ..play.session import GameSession

    session_args = dict(params=params, league=league, human_time=args.human_time,
                        time_control=TimeControl(args.time_scale, not args.no_time_limit),
                        sandbox=not args.no_sandbox, bot_env=bot_env,
                        memory_mb=args.memory, on_interrupted=on_interrupted)  # fmt: skip

    def on_end(outcome: GameOutcome) -> None:
        seats = zip(("-p1", "-p2"), (args.p1, args.p2), outcome.early_exits, strict=True)
        for option, command, why in seats:
            if why:  # as locm play says it: scored as a loss, but the command was broken
                print(f"locm: warning: {option} {command!r} {shown(why)}", file=sys.stderr)
        if args.logs:
            try:
                write_log(args.logs, json.dumps(outcome.log, ensure_ascii=False) + "\n")
            except OSError as error:
                print(f"locm: error: cannot write the log {args.logs}: "
                      f"{error.strerror or error}", file=sys.stderr)  # fmt: skip
        for value in outcome.scores or (None, None):
            print("null" if value is None else value)
        for line in outcome.parameter_lines:
            print(line)
        sys.stdout.flush()

    limits, allowed_hosts = limits_from(args)

    async def main() -> GameOutcome:
        session = GameSession((args.p1, args.p2), **session_args)  # type: ignore[arg-type]
        return await play_session(session, args.host, args.port, sys.stdout, sys.stderr,
                                  on_end, open_browser=args.open, limits=limits,
                                  allowed_hosts=allowed_hosts)  # fmt: skip

    asyncio.run(main())  # a port that cannot be used: ServeError, a ValueError (exit 2)
    return 0
