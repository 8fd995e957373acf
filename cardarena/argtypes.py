"""Argument types shared by both command lines (``locm`` and ``shared-deck``).

A bad value is argparse's usage error: one line, exit 2, worded the same way in every
command. Game rules (which leagues exist, how short a turn may be) stay with the games;
these types only parse and bound numbers.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def integer(text: str, what: str = "an integer") -> int:
    """A whole number, or the usage error ``not an integer: 'x'``."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None


def int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in low..high (no upper bound if high is None)."""

    def parse(text: str) -> int:
        value = integer(text)
        if value < low or (high is not None and value > high):
            bounds = f"at least {low}" if high is None else f"in {low}..{high}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value

    return parse


def one_of(values: tuple[int, ...], message: str) -> Callable[[str], int]:
    """An argparse type: an integer among ``values``; ``message`` says which are allowed."""

    def parse(text: str) -> int:
        value = integer(text)
        if value not in values:
            raise argparse.ArgumentTypeError(f"{message}, got {text!r}")
        return value

    return parse


count = int_in(1)
"""A whole number of at least 1 (games, cards, a game's number)."""


def port(text: str) -> int:
    """A TCP port, 0 (any free port) to 65535."""
    value = integer(text, "a port number")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return value


def number(text: str) -> float:
    """A finite decimal number (``nan`` and ``inf`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def number_at_least(low: float) -> Callable[[str], float]:
    """An argparse type: a finite number of at least ``low``."""

    def parse(text: str) -> float:
        value = number(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {text}")
        return value

    return parse


def positive_number(text: str) -> float:
    """A finite number above 0 (seconds, rates)."""
    value = number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value
