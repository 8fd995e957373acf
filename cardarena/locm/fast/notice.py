"""One line on stderr while numba compiles the fast engine, so that a first use is never silent.

The first call of a compiled entry point on an empty cache (a vector env's ``reset``, a
:class:`~.batch.Batch`, a playout, the rollout search) compiles it: seconds to tens of
seconds of CPU with nothing printed, which looks like a hang. numba announces each
compilation it does (its ``numba:compile`` event, not sent when the machine code comes
from the on-disk cache); :func:`install` listens to it and prints what is compiled, about
how long it takes and how to compile ahead (``python -m cardarena.locm warm-up``): at
once for the known entry points (:data:`ENTRY_POINTS`), after :data:`DELAY_S` for any
other function of the package (the small helpers a call may compile print nothing). A
warm cache prints nothing.

Silenced by ``CARDARENA_QUIET_COMPILE=1`` in the environment (read at each compile, so
that a notebook can set it any time; inherited by worker processes) or by
:func:`set_quiet`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any

QUIET_ENV = "CARDARENA_QUIET_COMPILE"
"""Set to 1 (or any value but 0 and empty) to print no compile notice."""
DELAY_S = 2.0
"""A compile of a function not in :data:`ENTRY_POINTS` shorter than this prints nothing."""
WARM_UP_COMMAND = "python -m cardarena.locm warm-up"

ENTRY_POINTS: dict[str, tuple[str, int]] = {
    "vector.play_games": ("the vector env's step (gymnasium.make_vec)", 25),
    "generators._start_draft_rows": ("the game set-up of 1.0/1.2", 4),
    "generators._start_pool_rows": ("the game set-up of 1.5 (its card generator)", 8),
    "kernels.step_games": ("Batch.step", 12),
    "kernels.legal_masks": ("Batch.masks", 3),
    "observation._observe_all": ("Batch.observe", 5),
    "playouts._play": ("playout()", 15),
    "playouts._random_games": ("play_random()", 12),
    "rollouts._rollouts": ("the rollout search's playouts (builtin:search-rollouts)", 20),
}
"""Per compiled entry point (module.function): what it is for a reader, and about how many
CPU seconds its first compile takes on an empty cache (less when another entry point
compiled the rules in the same process), rounded up from a run of ``locm warm-up`` on an
AMD EPYC; other functions print after :data:`DELAY_S`, without an estimate."""

_quiet = False
_installed = False


def set_quiet(quiet: bool = True) -> None:
    """Print no compile notice in this process (``False``: print them again)."""
    global _quiet
    _quiet = quiet


def is_quiet() -> bool:
    """Are notices off (:func:`set_quiet` or ``CARDARENA_QUIET_COMPILE``)?"""
    return _quiet or os.environ.get(QUIET_ENV, "") not in ("", "0")


def message(module: str, name: str) -> tuple[str, bool]:
    """The notice's line for a compiled function of this package, and whether it is a
    known entry point (printed at once)."""
    short = f"{module.rsplit('.', 1)[-1]}.{name}"
    known = ENTRY_POINTS.get(short)
    what, how_long = (
        (f"{known[0]} ({short})", f"about {known[1]} s of CPU")
        if known
        else (f"the fast engine's {short}", "up to a minute of CPU")
    )
    line = (
        f"cardarena: numba is compiling {what}, {how_long}, on first use only (then cached "
        f"on disk); `{WARM_UP_COMMAND}` compiles everything ahead, {QUIET_ENV}=1 hides this"
    )
    return line, known is not None


class _Listener:
    """numba's compile events: a timer per outermost compile of this package's code."""

    def __init__(self) -> None:
        self.depth = 0
        self.timer: threading.Timer | None = None

    def on_start(self, event: Any) -> None:
        self.depth += 1
        if self.depth != 1 or is_quiet():
            return
        function = getattr(event.data.get("dispatcher"), "py_func", None)
        module = getattr(function, "__module__", "") or ""
        if not module.startswith("cardarena."):
            return
        line, known = message(module, function.__name__)  # type: ignore[union-attr]
        if known:
            _print(line)
            return
        self.timer = threading.Timer(DELAY_S, _print, (line,))
        self.timer.daemon = True
        self.timer.start()

    def on_end(self, event: Any) -> None:
        self.depth = max(0, self.depth - 1)
        if self.depth == 0 and self.timer is not None:
            self.timer.cancel()
            self.timer = None


def _print(line: str) -> None:
    if is_quiet():
        return
    with contextlib.suppress(OSError, ValueError):  # stderr closed: nobody to tell
        print(line, file=sys.stderr, flush=True)


def install() -> None:
    """Listen to numba's compile events (once per process; numba must be importable)."""
    global _installed
    if _installed:
        return
    _installed = True
    from numba.core import event

    listener = _Listener()

    class _NumbaListener(event.Listener):
        def on_start(self, event: event.Event) -> None:
            listener.on_start(event)

        def on_end(self, event: event.Event) -> None:
            listener.on_end(event)

    event.register("numba:compile", _NumbaListener())
