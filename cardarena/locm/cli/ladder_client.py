"""What every ``locm ladder`` command that talks to a running ladder shares (``submit``,
``ab``, ``admin``, ``final``): its address, the token's variable, one JSON request and the
ladder's refusals as one line."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

TOKEN_VARIABLE = "CARDARENA_LADDER_TOKEN"
"""Where a command reads the token when ``--token`` is not given (out of shell history)."""


class LadderUsageError(ValueError):
    """Bad input to a ``locm ladder`` command: one line, exit status 2."""


class Unanswered(Exception):
    """The ladder refused the request or could not be reached: one line, exit status 1."""


def ladder_address(server: str, path: str) -> str:
    """``path`` on the ladder whose base address is ``server`` (what ``serve`` printed)."""
    parsed = urllib.parse.urlsplit(server)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise LadderUsageError(f"--server: not an http(s) address: {server!r} (the address "
                               "that locm ladder serve printed)")  # fmt: skip
    return urllib.parse.urljoin(server.rstrip("/") + "/", path)


def server_reason(body: bytes, status: int) -> str:
    """The one-line reason in the ladder's answer (its JSON ``error``, else its text)."""
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        text = data["error"]
    return " ".join(text.split())[:500] or f"HTTP {status}"


def call(
    address: str, token: str | None, body: dict[str, Any] | None, timeout: float
) -> dict[str, Any]:
    """The JSON object the ladder answers to a GET (``body`` None) or a JSON POST of
    ``body`` at ``address``; :class:`Unanswered` when refused, unreachable or not JSON."""
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(address, data=data, headers=headers,
                                     method="GET" if data is None else "POST")  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            reply = json.loads(answer.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        reason = server_reason(error.read(), error.code)
        wait = error.headers.get("Retry-After")
        later = f" (Retry-After: {wait} s)" if wait and error.code == 429 else ""
        raise Unanswered(f"refused ({error.code}): {reason}{later}") from None
    except (urllib.error.URLError, OSError) as error:
        why = getattr(error, "reason", None) or error
        raise Unanswered(f"cannot reach {address}: {why}") from None
    except ValueError:
        raise Unanswered(f"{address} did not answer JSON: is it a ladder?") from None
    if not isinstance(reply, dict):
        raise Unanswered(f"{address} answered something else than a JSON object")
    return reply
