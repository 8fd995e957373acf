"""Tournaments shared by every game: scheduling, a crash-safe results store,
parallel runners (a local process pool or a Ray cluster) and the report
(win-rate matrix, ratings, timing and error counts, CSV/JSON/PNG exports).

The game-specific part — how one game is played — lives with the game
(:mod:`cardarena.locm.tournament`); everything here works on plain records.
"""

from .report import Report, build_report
from .schedule import GameSpec, game_seed, schedule
from .store import ConfigMismatch, TournamentStore

__all__ = [
    "ConfigMismatch",
    "GameSpec",
    "Report",
    "TournamentStore",
    "build_report",
    "game_seed",
    "schedule",
]
