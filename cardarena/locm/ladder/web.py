"""What the ladder's web server (:mod:`cardarena.ladder.server`, game-independent) needs to
know of LOCM: a game's viewer page, and a log without the stderr of the bots the reader does
not own (what a bot prints on stderr is its owner's to read: it may tell its strategy)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from ...ladder.server import HumanPlay, LadderHooks
from ...ladder.uploads import UploadLimits
from ..viewer.page import viewer_html

HIDDEN_NOTE = "(hidden: only the owner of this bot sees its stderr)\n"


def redact_stderr(log: Mapping[str, Any], hidden: frozenset[int]) -> dict[str, Any]:
    """A copy of the GameResult ``log`` whose ``errors`` of the ``hidden`` seats are empty,
    but for one note (the entries stay, so turns stay aligned with the answers)."""
    shown = copy.deepcopy(dict(log))
    errors = shown.get("errors")
    if not isinstance(errors, dict):
        return shown
    for seat in hidden:
        entries = errors.get(str(seat))
        if not isinstance(entries, list):
            continue
        cleared: list[str | None] = [None if entry is None else "" for entry in entries]
        if cleared:
            cleared[0] = HIDDEN_NOTE
        errors[str(seat)] = cleared
    return shown


def viewer_page(log: Mapping[str, Any], hidden: frozenset[int], back: str) -> str:
    """The replay viewer page of a ladder game (ReplayError if the log does not replay)."""
    return viewer_html(redact_stderr(log, hidden), backlink=(back, "← ladder"))


def locm_hooks(
    version: str,
    languages: tuple[str, ...] = (),
    max_upload_bytes: int = UploadLimits.upload_bytes,
    submitted: Callable[[dict[str, Any]], None] | None = None,
    changed: Callable[[], None] | None = None,
    play: HumanPlay | None = None,
    entries: Mapping[str, str] | None = None,
) -> LadderHooks:
    """The hooks of a LOCM ``version`` ladder for :func:`cardarena.ladder.server.make_app`."""
    return LadderHooks(
        title=f"LOCM {version} ladder",
        languages=languages,
        entries=dict(entries or {}),
        max_upload_bytes=max_upload_bytes,
        viewer_page=viewer_page,
        redact_log=redact_stderr,
        submitted=submitted,
        changed=changed,
        play=play,
    )
