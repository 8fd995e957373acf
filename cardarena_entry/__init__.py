"""The ``locm`` and ``shared-deck`` entry points, outside the ``cardarena`` package.

They live here so that they still run when ``cardarena`` itself cannot be imported
whole: a folder left in site-packages by an earlier install (files ``pip uninstall``
did not know about) is a namespace package that shadows an editable install, and
then ``cardarena.locm.cli`` is "not found". Instead of that traceback the user gets
one line saying which folder to delete. This module imports only the standard library
before it hands over.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Callable
from typing import cast

EXIT_BROKEN_INSTALL = 1


class BrokenInstall(Exception):
    """The ``cardarena`` being imported is not the installed one, or is incomplete."""


def _installed_root() -> str | None:
    """The project folder of an editable install of cardarena, if that is what pip
    installed (its ``direct_url.json``); None for a regular install or none."""
    from importlib import metadata

    # The first with pip's record: a clone's own cardarena.egg-info may come first.
    texts = (d.read_text("direct_url.json") for d in metadata.distributions(name="cardarena"))
    text = next((t for t in texts if t), None)
    try:
        info = json.loads(text or "{}")
    except ValueError:
        return None
    if not info.get("dir_info", {}).get("editable"):
        return None
    url = str(info.get("url", ""))
    return url.removeprefix("file://") if url.startswith("file://") else None


def check_install() -> None:
    """Raise :class:`BrokenInstall` with a one-line reason and the folder to delete
    when the ``cardarena`` that Python finds is a leftover or a stale copy."""
    try:
        package = importlib.import_module("cardarena")
    except ImportError as error:  # pragma: no cover - an install without the package
        raise BrokenInstall(f"cannot import cardarena ({error}): reinstall it") from None
    if getattr(package, "__file__", None) is None:  # a namespace: no __init__.py there
        folders = [str(p) for p in getattr(package, "__path__", [])]
        leftover = next((f for f in folders if not os.path.exists(os.path.join(f, "locm"))
                         or not os.path.isfile(os.path.join(f, "__init__.py"))), None)  # fmt: skip
        where = leftover or ", ".join(folders)
        raise BrokenInstall(
            f"{where} is a leftover of an earlier install of cardarena (it has no __init__.py) "
            f"and shadows the installed one: delete that folder and run again"
        )
    here = os.path.dirname(os.path.abspath(package.__file__))
    root = _installed_root()
    if root is not None and os.path.realpath(os.path.dirname(here)) != os.path.realpath(root):
        raise BrokenInstall(
            f"{here} is a stale copy of cardarena that shadows the editable install from "
            f"{root}: delete {here} and run again"
        )


def _load(program: str, module: str) -> Callable[[], int]:
    """The ``main`` of ``module``; any sign of a shadowed or incomplete package ends
    the program with one line and exit status 1."""
    try:
        check_install()
        main = importlib.import_module(module).main
    except BrokenInstall as error:
        print(f"{program}: error: {error}", file=sys.stderr)
        raise SystemExit(EXIT_BROKEN_INSTALL) from None
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith("cardarena"):
            raise
        package = sys.modules.get("cardarena")
        where = os.path.dirname(getattr(package, "__file__", None) or "cardarena")
        print(f"{program}: error: the cardarena package at {where} is incomplete (no module "
              f"{error.name}): delete that folder and reinstall cardarena",
              file=sys.stderr)  # fmt: skip
        raise SystemExit(EXIT_BROKEN_INSTALL) from None
    return cast("Callable[[], int]", main)


EXIT_SIGINT = 130


def _run(program: str, module: str) -> int:
    """Run the command; Ctrl-C before it could handle it (while it was being imported,
    say) is one line too, with the shell's status for SIGINT."""
    try:
        return _load(program, module)()
    except KeyboardInterrupt:
        print(f"{program}: interrupted", file=sys.stderr)
        return EXIT_SIGINT


def locm() -> int:
    """The ``locm`` command."""
    return _run("locm", "cardarena.locm.cli")


def shared_deck() -> int:
    """The ``shared-deck`` command."""
    return _run("shared-deck", "cardarena.shared_deck.cli")
