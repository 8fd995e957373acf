"""Text from strangers made harmless for a terminal: control characters shown as escapes.

A bot's answer and stderr, the player names in a log file, a tournament database or a
Shared Deck server's messages can hold escape sequences that a terminal obeys: ``ESC ] 0 ;``
retitles the window, ``ESC ] 52 ;`` writes the clipboard, ``ESC [ 2 J`` clears the
screen, the C1 byte U+009B starts the same sequences without ESC, and bidi overrides
(U+202E) reorder what is shown after them. Every such string is passed through
:func:`shown` before it is printed: those characters come out as visible Python-style
escapes (``\\x1b``, ``\\x9b``, ``\\u202e``), everything else unchanged.
"""

from __future__ import annotations

import logging
import unicodedata
from typing import Any

_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Controls (C0, DEL, C1), format characters (bidi embeddings, overrides and isolates,
zero-width characters), lone surrogates (from a log's ``\\ud800``; unprintable as UTF-8),
and the line and paragraph separators."""


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def shown(text: str, *, lines: bool = False) -> str:
    """``text`` with every control and format character escaped (tab kept; newlines kept
    too if ``lines``, for a multi-line report), so that printing it cannot drive a terminal."""
    if text.isprintable():  # the usual case: nothing to look at
        return text
    keep = "\t\n" if lines else "\t"
    return "".join(
        _escape(char)
        if char not in keep and unicodedata.category(char) in _UNSAFE_CATEGORIES
        else char
        for char in text
    )


class ShownFormatter(logging.Formatter):
    """A logging formatter for a terminal: each record's line escaped with :func:`shown`
    (a newline in a message cannot fake another record), tracebacks kept on their lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return shown(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:
        return shown(super().formatException(ei), lines=True)

    def formatStack(self, stack_info: str) -> str:
        return shown(super().formatStack(stack_info), lines=True)
