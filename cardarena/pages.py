"""The one way text reaches an HTML page: Jinja2 templates with autoescape always on.

Every page cardarena writes or serves (the LOCM viewer, the tournament report, the Shared Deck
dashboard's error pages) is a template rendered here. Stored strings — bot names, what bots
print, database fields, keys from files made elsewhere — are data from strangers: a template
can only insert them escaped (``{{ value }}``), in text or in a quoted attribute, so none of
them can open a tag, close an attribute or start a script. Only our own package files (CSS,
JavaScript) are inlined as they are (:func:`asset`), and JSON for a ``<script>`` element goes
through :func:`script_json`, which no ``</script>`` or ``<!--`` in the data can end early.

Each page also carries a Content-Security-Policy that lets only its own inline script run
(by hash): inline event handlers and ``javascript:`` URLs stay inert, were a template ever to
insert something unescaped.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import tempfile
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # Jinja2 is imported where a page is made, not by every command
    from jinja2 import Environment
    from markupsafe import Markup


def _load(name: str) -> str:
    """``package/file`` -> the file's text from the installed package."""
    package, _, path = name.partition("/")
    return files(package).joinpath(path).read_text(encoding="utf-8")


@cache
def _environment() -> Environment:
    from jinja2 import Environment, FunctionLoader, StrictUndefined

    env = Environment(
        loader=FunctionLoader(_load),
        autoescape=True,  # every template, whatever its file name
        undefined=StrictUndefined,  # a misspelt field fails the render, never shows blank
        keep_trailing_newline=True,
    )
    env.filters["script_json"] = script_json
    return env


def render(package: str, template: str, /, **context: Any) -> str:
    """The page ``template`` (a file of ``package``) with ``context``; every value escaped."""
    return _environment().get_template(f"{package}/{template}").render(**context)


def trusted(text: str) -> Markup:
    """Our own code or markup (never data), to insert as it is."""
    from markupsafe import Markup

    return Markup(text)


@cache
def asset(package: str, name: str) -> Markup:
    """One of our own package files (CSS, JavaScript), to inline as it is: trusted text."""
    return trusted(files(package).joinpath(name).read_text(encoding="utf-8"))


def script_json(data: Any) -> Markup:
    """JSON safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` become ``\\u003c``...,
    so nothing in the data can close the element or open a comment. NaN and infinities are
    refused (ValueError): JSON has none, and the page could not read them."""
    from markupsafe import Markup

    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def script_hash(script: str) -> str:
    """The CSP source that lets exactly this inline script run: ``'sha256-...'``."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_policy(*scripts: str, connect: bool = False) -> str:
    """A Content-Security-Policy for a page whose only scripts are ``scripts`` (inline):
    nothing else runs — no injected element, handler attribute or ``javascript:`` URL —
    and no plugin, base URL or form target can be set. ``connect`` lets the page fetch from
    its own origin (the live report polls ``status.json``)."""
    sources = " ".join(script_hash(script) for script in scripts) or "'none'"
    policy = f"script-src {sources}; object-src 'none'; base-uri 'none'; form-action 'none'"
    if not connect:
        policy += "; connect-src 'none'"
    return policy


def write_page(path: str, text: str) -> None:
    """Write a page (or any file we make) without following a link at ``path``: the text goes
    to a new temporary file beside it, which then replaces ``path`` — a symbolic link planted
    there is replaced, never written through, and a reader never sees half a page.
    Only a path that leads to no regular file but to a device or pipe (``-o /dev/stdout``)
    is written through: that clobbers no file. OSError as the system gives it."""
    if os.path.exists(path) and not os.path.isfile(path):
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
        return
    directory = os.path.dirname(path) or "."
    handle, temporary = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), 0o666 & ~_umask())
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@cache
def _umask() -> int:
    """The process's umask (read once: reading it means setting it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
