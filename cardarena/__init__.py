"""cardarena: strategy-card-game AI competitions.

Games live in subpackages: :mod:`cardarena.locm` (Legends of Code and Magic)
and :mod:`cardarena.shared_deck` (the Shared Deck tournament server).
"""

__version__ = "0.1.0"
