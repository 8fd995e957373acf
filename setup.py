"""Optional compilation of the LOCM rules layer with mypyc.

The package is pure Python by default. ``CARDARENA_COMPILE=1 pip install .``
compiles the rules modules (the same sources, unchanged) into C extensions,
which roughly doubles the engine's speed; it needs a C compiler. Everything
else (metadata, dependencies) is in pyproject.toml.
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

    paths = [f"cardarena/locm/engine/{name}.py" for name in COMPILED_MODULES]
    return mypycify(paths, opt_level="3")


setup(ext_modules=extensions())
