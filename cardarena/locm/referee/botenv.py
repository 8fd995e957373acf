"""The environment a bot process starts with: an allow-list, never the referee's whole.

The referee's environment is the organiser's: API tokens, cloud credentials, paths
into their home. A bot gets only what programs need to run (``PATH``, the locale, the
time zone, a few toolchain variables), its own ``HOME``, ``USER``, ``LOGNAME`` and
``TMPDIR``, and what the organiser passes on purpose (``--bot-env NAME[=VALUE]``).
This holds with and without the sandbox.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence

from . import sandbox

ALLOWED = (
    "PATH", "LANG", "LANGUAGE", "TZ",
    "JAVA_HOME", "LD_LIBRARY_PATH", "PYTHONPATH", "VIRTUAL_ENV", "MONO_PATH", "DOTNET_ROOT",
)  # fmt: skip
"""Variables a bot gets from the referee's environment, if set there (and every ``LC_*``)."""
ALLOWED_PREFIXES = ("LC_",)
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
"""A bot's ``PATH`` if the referee has none."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

BotEnv = tuple[tuple[str, str], ...]
"""Variables passed explicitly, in order: (name, value)."""


def allowed(name: str) -> bool:
    return name in ALLOWED or name.startswith(ALLOWED_PREFIXES)


def parse_bot_env(items: Iterable[str], environ: Mapping[str, str] | None = None) -> BotEnv:
    """``--bot-env`` values: ``NAME=VALUE``, or ``NAME`` alone for the referee's own value.

    Raises ValueError (one line) for a malformed name or a NAME the referee does not have.
    """
    environ = os.environ if environ is None else environ
    parsed: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not _NAME.fullmatch(name):
            raise ValueError(f"--bot-env {item!r}: expected NAME or NAME=VALUE")
        if not sep:
            if name not in environ:
                raise ValueError(f"--bot-env {name}: {name} is not set in this environment")
            value = environ[name]
        parsed[name] = value
    return tuple(parsed.items())


def bot_environment(
    extra: Sequence[tuple[str, str]] = (),
    *,
    sandboxed: bool,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The whole environment of a bot process.

    In the sandbox ``HOME`` is the bot's private one and ``USER`` its own user; without
    it (the bot shares the organiser's files anyway) they are the referee's.
    """
    environ = os.environ if environ is None else environ
    env = {name: value for name, value in environ.items() if allowed(name)}
    env.setdefault("PATH", DEFAULT_PATH)
    if sandboxed:
        env |= {"HOME": sandbox.BOT_HOME, "USER": sandbox.BOT_USER,
                "LOGNAME": sandbox.BOT_USER, "TMPDIR": "/tmp"}  # fmt: skip
    else:
        env |= {n: environ[n] for n in ("HOME", "USER", "LOGNAME", "TMPDIR") if n in environ}
    env |= dict(extra)
    return env


def names(extra: Sequence[tuple[str, str]]) -> list[str]:
    """The ``--bot-env`` words that replay ``extra`` without writing its values down."""
    return [f"--bot-env {name}" for name, _value in extra]
