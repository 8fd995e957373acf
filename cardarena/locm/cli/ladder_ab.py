"""``locm ladder ab``: ask a running ladder whether your new version is better (an A/B test
over the JSON API), and with ``--wait`` follow the test to its verdict; and the ``serve``
options of the A/B tests and of the participants' rate limits."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from ...argtypes import count, int_in, number
from ...terminal import shown
from .ladder_client import TOKEN_VARIABLE, LadderUsageError, Unanswered, call, ladder_address

SUGGESTED = "--elo0 0 --elo1 20"
REFUSED = 1
"""Exit status when the ladder refuses (or cannot be reached), as ``submit``'s."""
TIMEOUT_S = 120
POLL_S = 1.0
"""How often ``--wait`` asks for the test's state."""


def progress_line(test: dict[str, Any]) -> str:
    """One line of a test's state: pairs, LLR within its bounds, Elo and interval."""
    elo = test.get("elo") or {}
    low, high = test.get("bounds") or (0.0, 0.0)
    line = (
        f"A/B test {test.get('id')} {test.get('a')} vs {test.get('b')}: {test.get('state')}, "
        f"{test.get('pairs')} pairs {test.get('pentanomial')}, LLR {test.get('llr', 0):.2f} in "
        f"[{low:.2f}, {high:.2f}], Elo {elo.get('value', 0):+.1f} "
        f"[{elo.get('low', 0):+.1f}, {elo.get('high', 0):+.1f}]"
    )
    if test.get("reason"):
        line += f" ({test['reason']})"
    return line


def _cmd_ab(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get(TOKEN_VARIABLE, "")
    if not token:
        raise LadderUsageError(f"no token: give --token TOKEN or set {TOKEN_VARIABLE} (the "
                               "line that locm ladder user add printed)")  # fmt: skip
    if args.elo0 is not None and args.elo1 is not None and not args.elo0 < args.elo1:
        raise LadderUsageError(f"--elo0 ({args.elo0:g}) must be below --elo1 ({args.elo1:g})")
    body: dict[str, Any] = {"a": args.a, "b": args.b}
    for name in ("elo0", "elo1", "max_pairs"):
        if getattr(args, name) is not None:
            body[name] = getattr(args, name)
    try:
        answer = call(ladder_address(args.server, "api/ab"), token, body, args.timeout)
        test = int(answer["id"])
    except Unanswered as refused:
        print(f"locm: {shown(str(refused))}", file=sys.stderr)
        return REFUSED
    except (KeyError, TypeError, ValueError):
        print("locm: the ladder answered without a test id", file=sys.stderr)
        return REFUSED
    print(test, flush=True)
    if args.elo1 is None:
        print(f"locm: fishtest's bounds (0, 2) need tens of thousands of pairs for most bots; "
              f"{SUGGESTED} decides in about a thousand", file=sys.stderr)  # fmt: skip
    page = ladder_address(args.server, f"ab/{test}")
    print(f"locm: A/B test {test} started; follow it at {shown(page)}", file=sys.stderr)
    if not args.wait:
        return 0
    address = ladder_address(args.server, f"api/ab/{test}")
    last = ""
    while True:
        try:
            state = call(address, token, None, args.timeout)
        except Unanswered as refused:
            print(f"locm: {shown(str(refused))}", file=sys.stderr)
            return REFUSED
        line = shown(progress_line(state))
        if line != last:
            print(line, file=sys.stderr, flush=True)
            last = line
        if state.get("state") != "running" and not state.get("pairs_in_flight"):
            print(line, flush=True)
            return 0
        time.sleep(POLL_S)


def add_ab_command(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``locm ladder ab``."""
    ab = actions.add_parser(
        "ab",
        help="A/B test: is your version A stronger than B? (paired, unrated games until an "
        "SPRT verdict); prints the test id",
        description="Ask the ladder at --server for an A/B test of your version A against B "
        "(another of your versions, or any other participant's active bot): paired games with "
        "the seats swapped, unrated, until the sequential probability ratio test (5% errors "
        "each way) accepts 'A is --elo1 stronger' or rejects it for '--elo0', or the budget "
        "of pairs runs out. Prints the test id; --wait follows it to the verdict (a progress "
        "line on stderr, the last line on stdout). Exit status 1 when the ladder refuses.",
    )
    ab.add_argument("a", metavar="A", help="your version: NAME (its playing version) or NAME.vN")
    ab.add_argument("b", metavar="B", help="the version to compare with: NAME or NAME.vN")
    ab.add_argument("--server", required=True, metavar="URL",
                    help="the ladder's address, e.g. http://127.0.0.1:8000/")  # fmt: skip
    ab.add_argument("--token", help=f"your token (default: ${TOKEN_VARIABLE})")
    ab.add_argument("--elo0", type=number, metavar="ELO",
                    help="H0: A is this much stronger (default 0, fishtest's)")  # fmt: skip
    ab.add_argument("--elo1", type=number, metavar="ELO",
                    help="H1: A is this much stronger, the smallest gain worth keeping "
                    "(default 2, fishtest's; 20 suits most bots)")  # fmt: skip
    ab.add_argument(
        "--max-pairs",
        type=count,
        metavar="N",
        help="stop without a verdict after N pairs (default: the ladder's budget)",
    )
    ab.add_argument("--wait", action="store_true", help="follow the test to its verdict")
    ab.add_argument(
        "--timeout",
        type=count,
        default=TIMEOUT_S,
        metavar="S",
        help="seconds to wait for each answer of the server (default %(default)s)",
    )
    ab.set_defaults(run=_cmd_ab)


def add_serve_options(serve: argparse.ArgumentParser) -> None:
    """The rate limits and the A/B options of ``locm ladder serve``."""
    group = serve.add_argument_group("participants' limits (organisers are exempt)")
    group.add_argument(
        "--submissions-per-hour",
        type=count,
        default=10,
        metavar="N",
        help="submissions per participant in any hour (default %(default)s)",
    )
    group.add_argument("--ab-per-day", type=count, default=20, metavar="N",
                       help="A/B tests a participant may start in any 24 hours (default "
                       "%(default)s)")  # fmt: skip
    group.add_argument(
        "--ab-at-once",
        type=count,
        default=2,
        metavar="N",
        help="A/B tests of one participant running at once (default %(default)s)",
    )
    group.add_argument(
        "--ab-max-pairs",
        type=count,
        default=2000,
        metavar="N",
        help="an A/B test's budget of pairs at most (default %(default)s)",
    )
    group.add_argument("--ab-share", type=int_in(1, 100), default=50, metavar="PERCENT",
                       help="the share of the workers A/B games may take (default %(default)s; "
                       "at least one pair)")  # fmt: skip


def serve_options(args: argparse.Namespace) -> dict[str, Any]:
    """``serve``'s keyword arguments from those options."""
    from ...ladder.abtests import AbSettings
    from ...ladder.limits import RateLimits

    return {
        "rate_limits": RateLimits(args.submissions_per_hour, args.ab_per_day),
        "ab_settings": AbSettings(
            max_pairs=args.ab_max_pairs,
            running_per_participant=args.ab_at_once,
            share=args.ab_share / 100,
        ),
    }
