"""Argument types shared by the ``locm`` commands: a bad value is argparse's usage error
(one line, exit 2), worded the same way in every command."""

from __future__ import annotations

import argparse

LEAGUES = (1, 2, 3, 4)
"""The 1.0 leagues: 1 very easy, 2 easy, 3 less easy, 4 the full card pool."""


def _integer(text: str, what: str = "an integer") -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None


def league(text: str) -> int:
    """A 1.0 league level, 1-4."""
    value = _integer(text)
    if value not in LEAGUES:
        raise argparse.ArgumentTypeError(f"the 1.0 leagues are 1-4 (4: all cards), got {text!r}")
    return value


def count(text: str) -> int:
    """A whole number of at least 1 (games, cards, a game's number)."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def port(text: str) -> int:
    """A TCP port, 0 (any free port) to 65535."""
    value = _integer(text, "a port number")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return value
