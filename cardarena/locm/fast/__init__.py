"""The compiled batch engine of LOCM: N games at once over arrays, the reference rules.

Needs the ``fast`` extra (numba): ``pip install "cardarena[fast]"``. The array
layout (:mod:`.layout`) is plain constants and imports without it.
"""

from __future__ import annotations

INSTALL_HINT = 'the fast engine needs numba: pip install "cardarena[fast]"'


class FastEngineUnavailable(ImportError):
    """numba is not installed: the message says in one line how to get it."""


def require_numba() -> None:
    """Raise :class:`FastEngineUnavailable` (one line) when numba cannot be imported."""
    try:
        import numba  # noqa: F401
    except ImportError:
        raise FastEngineUnavailable(INSTALL_HINT) from None


_LAZY = {"Batch": "batch", "IllegalBatchAction": "batch", "Playouts": "playouts",
         "play_random": "playouts", "playout": "playouts"}  # fmt: skip
"""Public names imported on first use, so that ``import cardarena.locm.fast`` (and its
layout) works without numba and a missing numba is reported in one line."""


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    require_numba()
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)
