"""cardarena: strategy-card-game AI competitions.

Games live in subpackages: :mod:`cardarena.locm` (Legends of Code and Magic)
and :mod:`cardarena.shared_deck` (the Shared Deck tournament server); the batch
tournament runner they can share is :mod:`cardarena.tournaments`. The floor plan:
docs/architecture.md.
"""

__version__ = "0.1.0"
