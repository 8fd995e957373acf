"""Reading game logs from elsewhere in bounded memory: size caps before anything is parsed.

A game log is data from strangers (a log file mailed in, a tournament database from another
machine). Compressed, 1 MB can hold 1 GB of text; and a few megabytes of JSON such as
``[[],[],...]`` become millions of Python objects. So a log is decompressed only up to
:data:`MAX_LOG_BYTES`, and parsed only if it holds at most :data:`MAX_LOG_ITEMS` arrays,
objects and elements (counted outside its strings); past either, one clear
:class:`InputTooLargeError` instead of gigabytes. Real logs are far below both: a whole game with
both bots at their answer and stderr limits every turn is a few megabytes and a few
thousand items.
"""

from __future__ import annotations

import json
import re
import zlib
from typing import Any

MAX_LOG_BYTES = 32 * 2**20
"""The largest game log read, as JSON text (decompressed)."""
MAX_LOG_ITEMS = 200_000
"""The most arrays, objects and elements (``[``, ``{`` and ``,`` outside strings) read."""
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.DOTALL)
"""A JSON string; possessive, and closed or not, so that the scan stays linear on any input."""


class UntrustedInputError(ValueError):
    """Input that cannot be read safely: too large, not compressed, not JSON (one line)."""


class InputTooLargeError(UntrustedInputError):
    """Past :data:`MAX_LOG_BYTES` or :data:`MAX_LOG_ITEMS`."""


def decompress(blob: bytes, limit: int = MAX_LOG_BYTES) -> bytes:
    """zlib data decompressed, never past ``limit`` bytes (InputTooLargeError beyond)."""
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise UntrustedInputError(f"not compressed data but {type(blob).__name__}")
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(blob, limit)
    except zlib.error as error:
        raise UntrustedInputError(f"not zlib-compressed data ({error})") from None
    if inflater.unconsumed_tail:
        raise InputTooLargeError(f"more than {limit // 2**20} MiB once decompressed")
    if not inflater.eof:
        raise UntrustedInputError("truncated zlib data")
    return data


def load_json(data: bytes, limit: int = MAX_LOG_BYTES, items: int = MAX_LOG_ITEMS) -> Any:
    """JSON text parsed only if it is at most ``limit`` bytes and ``items`` items."""
    if len(data) > limit:
        raise InputTooLargeError(f"more than {limit // 2**20} MiB of JSON")
    skeleton = _STRING.sub(b"", data)
    count = skeleton.count(b"[") + skeleton.count(b"{") + skeleton.count(b",")
    del skeleton
    if count > items:
        raise InputTooLargeError(f"more than {items} JSON items (arrays, objects, elements)")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UntrustedInputError("it is binary, not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise UntrustedInputError(f"invalid JSON ({error})") from None
    except RecursionError:
        raise UntrustedInputError("JSON nested too deeply") from None
