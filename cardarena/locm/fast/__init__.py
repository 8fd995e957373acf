"""The compiled batch engine of LOCM: N games at once over arrays, the reference rules.

Needs the ``fast`` extra (numba): ``pip install ".[fast]"``. The array
layout (:mod:`.layout`) is plain constants and imports without it.
"""

from __future__ import annotations

import os
import sys

INSTALL_HINT = (
    'the fast engine needs numba: pip install ".[fast]" in the cardarena folder, or pip install '
    "numba"
)


class FastEngineUnavailable(ImportError):
    """numba is not installed: the message says in one line how to get it."""


def require_numba() -> None:
    """Raise :class:`FastEngineUnavailable` (one line) when numba cannot be imported;
    otherwise make sure the machine code cached on disk was compiled from these sources,
    and have a compile print what it compiles (:mod:`.notice`)."""
    try:
        import numba
    except ImportError:
        raise FastEngineUnavailable(INSTALL_HINT) from None
    global _cache_checked
    if not _cache_checked:
        _cache_checked = True
        drop_stale_compiled_code(numba.__version__)
        from .notice import install

        install()  # a line on stderr while a first use compiles


_cache_checked = False


def user_cache_dir() -> str:
    """Where numba caches machine code unless ``NUMBA_CACHE_DIR`` says otherwise: the
    user's cache folder (``$XDG_CACHE_HOME/cardarena/numba``, else
    ``~/.cache/cardarena/numba``), never the installed package. Files numba wrote into
    ``site-packages/cardarena`` were left behind by ``pip uninstall``, and that leftover
    folder then shadowed a later editable install."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cardarena", "numba")


def _use_user_cache() -> None:
    """Point numba's cache at :func:`user_cache_dir` unless the user chose a folder.

    Run when this package is imported, before any of its modules is compiled: numba
    picks a function's cache folder when the decorator runs. The environment variable
    also reaches the worker processes a tournament starts."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    os.environ["NUMBA_CACHE_DIR"] = user_cache_dir()
    config = sys.modules.get("numba.core.config")
    if config is not None and not getattr(config, "CACHE_DIR", ""):
        config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]  # numba was imported before us


_use_user_cache()
_SOURCES = ("fast", "engine", "encoding")
"""The packages (under cardarena/locm) whose constants compiled code bakes in."""
_NOT_COMPILED = {"notice.py"}
"""Sources of the fast package that no compiled code depends on (a new text of the compile
notice keeps the cache)."""
FINGERPRINT_FILE = "cardarena-fast.fingerprint"


def _cache_folders() -> list[str]:
    """The folder where numba caches this package's machine code: the first of its
    locators that works (NUMBA_CACHE_DIR, set by :func:`_use_user_cache`, comes first).
    Only that one: a fingerprint written into the package's own ``__pycache__`` would
    be a file ``pip uninstall`` leaves behind."""
    try:
        from numba.core.caching import CacheImpl

        for cls in CacheImpl._locator_classes:
            locator = cls.from_function(_cache_folders, __file__)
            if locator is not None:
                return [locator.get_cache_path()]
        return []
    except Exception:  # a numba without these internals: the folder it would pick
        import hashlib

        here = os.path.dirname(os.path.abspath(__file__))
        subpath = f"fast_{hashlib.sha1(here.encode()).hexdigest()}"
        return [os.path.join(os.environ.get("NUMBA_CACHE_DIR") or user_cache_dir(), subpath)]


def sources_fingerprint(numba_version: str, root: str | None = None) -> str:
    """A hash of every source the compiled code depends on, and of numba's version
    (``root``: the ``cardarena/locm`` folder to read, by default this one)."""
    import hashlib
    from pathlib import Path

    locm = Path(root) if root is not None else Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(numba_version.encode())
    paths = [p for name in _SOURCES for p in sorted((locm / name).glob("*.py"))
             if p.name not in _NOT_COMPILED]  # fmt: skip
    for path in [*paths, locm / "agents" / "evaluation.py"]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def drop_stale_compiled_code(numba_version: str) -> None:
    """Delete the fast package's cached machine code when its sources changed.

    numba checks a cached function against its own file's time stamp only, so code
    compiled with the constants of an older :mod:`.layout` (or rules) would be loaded
    and run silently wrong. A fingerprint of all those sources, kept beside the cache,
    decides instead. Only ``cardarena.locm.fast``'s cache files are removed.
    """
    from pathlib import Path

    fingerprint = sources_fingerprint(numba_version)
    for name in _cache_folders():
        folder = Path(name)
        if not folder.is_dir():  # nothing cached there (yet)
            continue
        stamp = folder / FINGERPRINT_FILE
        try:
            if stamp.read_text(encoding="ascii") == fingerprint:
                continue
        except OSError:
            pass
        try:
            for cached in [*folder.glob("*.nbi"), *folder.glob("*.nbc")]:
                cached.unlink(missing_ok=True)
            stamp.write_text(fingerprint, encoding="ascii")
        except OSError:  # a read-only install: numba caches elsewhere or not at all
            continue


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
