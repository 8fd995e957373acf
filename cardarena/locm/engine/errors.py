"""The one exception the engine raises for input it refuses at its boundary."""

from __future__ import annotations


class InvalidStateError(ValueError):
    """A state, a game parameter or an input text that no LOCM game can have, or of the
    wrong type. The message starts with the field it names, e.g.
    ``players[1].board[0].defense: expected an int, got 'x'``."""
