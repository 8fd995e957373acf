"""The ``locm`` command line: a module per command group.

:mod:`.main` (the parser, ``demo``, ``play``, ``replay``, ``generate``),
:mod:`.tournament` (``tournament``, ``report``), :mod:`.bot` (``agents``, and ``bot``: an agent as a
bot process) and :mod:`.viewer` (``view``, ``serve``).
"""

from .main import main

__all__ = ["main"]
