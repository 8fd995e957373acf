"""Who plays whom next on the ladder: one pair at a time, from the bots' ratings and games.

The recipe is Halite's (Two Sigma's AI competition): pick a *seed* bot that needs games
most, then an opponent near it in rating, at random. Here:

* Only bots with fewer than ``max_in_flight`` games queued or playing take part, so one
  bot never holds many workers, and a slow bot does not pile up games.
* The seed is a newcomer first (under ``min_games`` games: a new bot or a new version
  gets its first games quickly, and its sigma shrinks), then the bot with the fewest
  games (counting those in flight), then the one that played least recently; ties are
  broken by the random generator.
* The opponent is drawn at random, weighted by how close its skill is to the seed's:
  ``exp(-(mu_a - mu_b)² / (2 c²))`` with ``c² = 2 beta² + sigma_a² + sigma_b²`` — the
  part of TrueSkill's match quality that says how even the game is. An unsure rating
  (a large sigma) widens the window, so a newcomer meets the whole field while it is
  placed; a small floor keeps every pair possible, so the fit over all games stays
  connected. Two bots of one owner never meet.

Everything is decided by the arguments and the ``random.Random`` given: the same
generator state gives the same pairing (the scheduler's tests rely on it).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from cardarena.ladder.ratings import INITIAL, Rating

BETA = INITIAL.sigma / 2
"""openskill's beta: the spread of one game's performance around a bot's skill."""
FLOOR = 0.02
"""The weight an opponent far away in rating keeps (a near one weighs up to 1)."""


@dataclass(frozen=True)
class Entrant:
    """A bot (one version) that may play: its owner, rating, games played, when it last
    played (any clock, larger is later) and its games queued or playing now."""

    id: int
    owner: int
    rating: Rating
    games: int
    last_played: float
    in_flight: int


def closeness(a: Rating, b: Rating) -> float:
    """How even a game between ``a`` and ``b`` would be: 1 for equal skills, towards 0
    as the difference outgrows the uncertainty of the two ratings and of one game."""
    spread = 2 * BETA**2 + a.sigma**2 + b.sigma**2
    return math.exp(-((a.mu - b.mu) ** 2) / (2 * spread))


def choose_pairing(
    entrants: Sequence[Entrant],
    rng: random.Random,
    *,
    max_in_flight: int = 2,
    min_games: int = 20,
) -> tuple[int, int] | None:
    """The next pair to play, ``(seed id, opponent id)``, or None when no two entrants of
    different owners both have room for another game."""
    free = [e for e in entrants if e.in_flight < max_in_flight]
    seeds = sorted(free, key=lambda e: _need(e, min_games))
    for _, group in itertools.groupby(seeds, key=lambda e: _need(e, min_games)):
        tied = list(group)
        rng.shuffle(tied)
        for seed in tied:
            opponents = [e for e in free if e.owner != seed.owner and e.id != seed.id]
            if opponents:
                weights = [FLOOR + closeness(seed.rating, e.rating) for e in opponents]
                [opponent] = rng.choices(opponents, weights=weights)
                return seed.id, opponent.id
    return None


def _need(entrant: Entrant, min_games: int) -> tuple[bool, int, float]:
    """The seed order: newcomers first, then fewest games (in flight too), least recent."""
    return (entrant.games >= min_games, entrant.games + entrant.in_flight, entrant.last_played)


def final_pairs(top: Sequence[int]) -> list[tuple[int, int]]:
    """Every pair among the finalists ``top`` (a round robin), in a fixed order."""
    if len(set(top)) != len(top):
        raise ValueError("the finalists are distinct")
    return list(itertools.combinations(top, 2))
