"""Ratings fitted to all games at once: the Bradley–Terry model on the Elo scale.

Every bot has a rating ``r``; bot ``i`` scores against bot ``j`` with probability
``1 / (1 + 10 ** ((r_j - r_i) / 400))``. The ratings are the maximum of the likelihood
of every game (a draw counts half a win for each side), as the chess engine testers'
Ordo and BayesElo fit them — not updates game after game, whose result depends on the
order the games finished in. Only each pair's totals enter the fit, so any order of the
same games gives the same ratings.

* A weak prior, as BayesElo's virtual draws: one drawn game is added to every pair of
  bots that met, so a bot that won (or lost) all its games still gets a finite rating.
* The ratings are centred: their mean is 0 (only differences mean anything).
* The 95% interval is ``r ± 1.96 sigma``, sigma from the curvature of the likelihood at
  its maximum (the inverse of the Fisher information, centred ratings).
* The likelihood depends on the scores only through each bot's total when every pair
  played the same number of games: bots with equal totals then get equal ratings, and
  :func:`rank` orders them by their games against each other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

MODEL = "Bradley-Terry (Elo scale), maximum likelihood over all games"
"""What the report says about its ratings."""
PRIOR_DRAWS = 1.0
"""Virtual draws added to every pair of bots that met."""
ELO = math.log(10) / 400
"""The logistic slope of the Elo scale: 400 points = odds of 10 to 1."""
TIE = 1e-6
"""Rating differences below this (in Elo points) are a tie, left to :func:`rank`."""


def fit(
    names: Sequence[str], pairs: Mapping[tuple[str, str], tuple[float, int]]
) -> dict[str, tuple[float, float]]:
    """(rating, sigma) per bot from ``pairs``: (a, b) -> (a's score, games), a before b.

    A bot without games gets rating 0 and an infinite sigma."""
    import numpy as np  # here: the command lines import the report without fitting

    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    games = np.zeros((n, n))
    score = np.zeros((n, n))
    for (a, b), (points, played) in pairs.items():
        if played <= 0:
            continue
        i, j = index[a], index[b]
        games[i, j] += played + PRIOR_DRAWS
        games[j, i] += played + PRIOR_DRAWS
        score[i, j] += points + PRIOR_DRAWS / 2
        score[j, i] += played - points + PRIOR_DRAWS / 2
    playing = games.sum(axis=1) > 0
    ratings = np.zeros(n)
    sigmas = np.full(n, math.inf)
    if playing.sum() >= 2:
        ratings[playing], sigmas[playing] = _newton(games[np.ix_(playing, playing)],
                                                    score[np.ix_(playing, playing)])  # fmt: skip
    return {name: (float(ratings[i]), float(sigmas[i])) for name, i in index.items()}


def _newton(games: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The maximum of the (concave) log-likelihood by Newton's method, with its sigmas."""
    import numpy as np

    n = len(games)
    wins = score.sum(axis=1)
    r = np.zeros(n)
    information = np.zeros((n, n))
    for _ in range(200):
        p = 1 / (1 + np.exp(-ELO * (r[:, None] - r[None, :])))
        gradient = ELO * (wins - (games * p).sum(axis=1))
        weights = games * p * p.T * ELO * ELO
        information = np.diag(weights.sum(axis=1)) - weights
        # The ratings are defined up to a common shift: the pseudo-inverse takes the
        # step (and later the covariance) orthogonal to it, i.e. for centred ratings.
        step = np.linalg.pinv(information) @ gradient
        r = r + step
        r -= r.mean()
        if np.max(np.abs(step)) < 1e-9:
            break
    covariance = np.linalg.pinv(information)
    return r, np.sqrt(np.clip(np.diag(covariance), 0, None))


def rank(
    names: Sequence[str],
    ratings: Mapping[str, float],
    head_to_head: Mapping[tuple[str, str], tuple[float, int]],
) -> list[str]:
    """Best first: by rating; bots whose ratings tie (within :data:`TIE`) by their score
    against each other, then by name."""

    def versus(a: str, b: str) -> float:
        points, played = head_to_head.get((a, b), (0.0, 0))
        return points - played / 2  # > 0: a did better than b in their games

    ordered = sorted(names, key=lambda name: (-ratings[name], name))
    # Within each run of tied ratings, a bot that beat another head to head goes first
    # (an insertion sort: the runs are short).
    start = 0
    while start < len(ordered):
        end = start + 1
        while end < len(ordered) and ratings[ordered[start]] - ratings[ordered[end]] < TIE:
            end += 1
        run = ordered[start:end]
        for k in range(1, len(run)):
            j = k
            while j > 0 and versus(run[j], run[j - 1]) > 0:
                run[j - 1], run[j] = run[j], run[j - 1]
                j -= 1
        ordered[start:end] = run
        start = end
    return ordered
