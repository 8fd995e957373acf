"""The viewer page: one self-contained HTML file (CSS, JavaScript and the game inlined).

Nothing is fetched when the page opens: it works from disk, offline, and can be
mailed or attached to a bug report as it is.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import Any

from .frames import build_frames


@cache
def _asset(name: str) -> str:
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


def _script_json(data: Any) -> str:
    """JSON safe inside a <script> element: no ``</script>`` or ``<!--`` can end it early."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_viewer(frames: Mapping[str, Any], *, backlink: tuple[str, str] | None = None) -> str:
    """The HTML page of one game's frames; ``backlink`` is (href, text) of a link back."""
    players = frames["players"]
    title = f"LOCM {frames['version']}: {players[0]} vs {players[1]}"
    link = ""
    if backlink is not None:
        link = f'<a id="back" href="{html.escape(backlink[0])}">{html.escape(backlink[1])}</a>'
    page = _asset("viewer.html")
    for key, value in (
        ("{{TITLE}}", html.escape(title)),
        ("{{BACKLINK}}", link),
        ("{{CSS}}", _asset("viewer.css")),
        ("{{JS}}", _asset("viewer.js")),
        ("{{DATA}}", _script_json(frames)),
    ):
        page = page.replace(key, value, 1)
    return page


def viewer_html(
    log: Mapping[str, Any],
    *,
    version: str | None = None,
    league: int | None = None,
    backlink: tuple[str, str] | None = None,
) -> str:
    """Re-simulate a GameResult log and return its viewer page (ReplayError if it cannot)."""
    return render_viewer(build_frames(log, version, league), backlink=backlink)
