"""Optional compilation of the LOCM rules layer with mypyc.

The package is pure Python by default. ``CARDARENA_COMPILE=1 pip install .``
compiles the rules modules (the same sources, unchanged) into C extensions,
which roughly doubles the engine's speed; it needs a C compiler.
``CARDARENA_COMPILE_OPT`` (0-3, default 3) is the C compiler's optimisation level: 0
builds in about a third of the time, for checks that need the compiled code, not its speed.
Everything else (metadata, dependencies) is in pyproject.toml.
"""

import os

from setuptools import setup

# The rules layer only: no I/O, fully typed (mypy --strict), no dynamic tricks.
COMPILED_MODULES = (
    "rules",
    "javarandom",
    "cardlist_data",
    "cards",
    "errors",
    "params",
    "deckbuilding",
    "state",
)


def extensions() -> list:
    if os.environ.get("CARDARENA_COMPILE", "") not in ("1", "true", "yes"):
        return []
    from mypyc.build import mypycify

    level = os.environ.get("CARDARENA_COMPILE_OPT", "3")
    if level not in ("0", "1", "2", "3"):
        raise SystemExit(f"CARDARENA_COMPILE_OPT must be 0, 1, 2 or 3, not {level!r}")
    paths = [f"cardarena/locm/engine/{name}.py" for name in COMPILED_MODULES]
    return mypycify(paths, opt_level=level)


setup(ext_modules=extensions())
