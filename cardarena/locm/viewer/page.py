"""The viewer page: one self-contained HTML file (CSS, JavaScript and the game inlined).

Nothing is fetched when the page opens: it works from disk, offline, and can be
mailed or attached to a bug report as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...pages import asset, content_policy, render
from .frames import build_frames


def render_viewer(frames: Mapping[str, Any], *, backlink: tuple[str, str] | None = None) -> str:
    """The HTML page of one game's frames; ``backlink`` is (href, text) of a link back.

    Rendered by :func:`cardarena.pages.render`: names, bot output and stderr in the frames
    are escaped by the template (in the title) or read as JSON and drawn with ``textContent``
    by viewer.js; only viewer.js itself may run."""
    js = asset(__package__, "viewer.js")
    return render(
        __package__,
        "viewer.html",
        version=frames["version"],
        players=frames["players"],
        backlink=backlink,
        css=asset(__package__, "viewer.css"),
        js=js,
        frames=frames,
        policy=content_policy(js),
    )


def viewer_html(
    log: Mapping[str, Any],
    *,
    version: str | None = None,
    league: int | None = None,
    backlink: tuple[str, str] | None = None,
) -> str:
    """Re-simulate a GameResult log and return its viewer page (ReplayError if it cannot)."""
    return render_viewer(build_frames(log, version, league), backlink=backlink)
