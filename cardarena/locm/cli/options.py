"""Argument types of the ``locm`` commands that know LOCM's rules (the generic ones are
in :mod:`cardarena.argtypes`)."""

from __future__ import annotations

import argparse

from ...argtypes import int_in, one_of
from ..engine.rules import ALL_LEAGUES
from ..referee.cgroups import DEFAULT_MEMORY_MB, MIN_MEMORY_MB

league = one_of(ALL_LEAGUES, "the 1.0 leagues are 1-4 (4: all cards)")
"""A league level (1.0 draft pools); which version has leagues is a RuleSet field."""


BOT_ENV_HELP = (
    "pass the environment variable NAME to every bot, with VALUE or (NAME alone) the value "
    "it has here; repeatable. Bots get only PATH, LANG, LC_*, TZ and a few toolchain "
    "variables otherwise (docs/referee.md#environment)"
)


def add_memory(parser: argparse.ArgumentParser) -> None:
    """The ``--memory MB`` option of the commands that start bots: each bot's budget."""
    parser.add_argument(
        "--memory", type=int_in(MIN_MEMORY_MB), default=DEFAULT_MEMORY_MB, metavar="MB",
        help=f"memory budget of each bot in MiB, all its processes together (default "
        f"{DEFAULT_MEMORY_MB}); a bot over it loses, out of memory (docs/referee.md#memory)",
    )  # fmt: skip


def add_bot_env(parser: argparse.ArgumentParser) -> None:
    """The ``--bot-env NAME[=VALUE]`` option of the commands that start bots."""
    parser.add_argument(
        "--bot-env", action="append", default=[], metavar="NAME[=VALUE]", help=BOT_ENV_HELP
    )
