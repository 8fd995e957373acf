"""The ladder's two ratings: an online mu/sigma that moves after every game, and a fit
over all games for the board.

*Online* (:func:`after_game`): every bot has a :class:`Rating`, a belief about its skill
(``mu``) and how unsure it is (``sigma``), updated after each game by the ``openskill``
library. Matchmaking uses it to find near opponents, and the board ranks by the
:func:`conservative` estimate ``mu - 3 sigma``: a bot climbs by winning *and* by playing
enough for the ladder to be sure of it, so a lucky newcomer does not top the board after
three games.

The model is openskill's ``BradleyTerryFull`` (Weng and Lin's Bayesian approximation of
the Bradley–Terry model): the probability that one bot beats another is logistic in the
difference of their skills, the same model as the Elo scale and as :func:`board_fit`, so
the online ratings and the fit over all games disagree only through the approximation,
not through two different ideas of what a rating is. For two players, openskill's
``PlackettLuce`` makes exactly the same update; "Full" compares every pair of teams,
which for a two-player game is the one pair there is.

While the ladder is open, every bot's sigma grows by a small drift before each game
(``sigma² + tau²``, as openskill and TrueSkill do): bots are fixed programs, but the field
around them changes, and without the drift a veteran's sigma would shrink until its
rating could hardly move.

*Fit over all games* (:func:`board_fit`): the Bradley–Terry maximum likelihood on the Elo
scale (``cardarena.tournaments.report.ratings``, the same fit as the tournament reports),
which does not depend on the order the games finished in, with 95% intervals, and for
each bot the neighbours on the board it is not statistically distinguishable from.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from statistics import NormalDist
from typing import TYPE_CHECKING

from cardarena.tournaments.report.ratings import ELO, PRIOR_DRAWS, fit, rank

if TYPE_CHECKING:
    import numpy as np
    from openskill.models import BradleyTerryFull


@dataclass(frozen=True)
class Rating:
    """A bot's skill belief: ``mu`` (its best guess) and ``sigma`` (how unsure it is)."""

    mu: float
    sigma: float


INITIAL = Rating(mu=25.0, sigma=25.0 / 3)
"""A new bot's rating: openskill's (and TrueSkill's) defaults."""
DRIFT = INITIAL.sigma / 300
"""The default tau: how much sigma grows before each game while the ladder is open.
A third of openskill's default (sigma / 100): a bot is a fixed program, the drift only
keeps its sigma from collapsing. In ``python benchmarks/ladder.py --tau T`` (12 simulated
bots 54.5 Elo apart, 1000 games each, 20 seeds), the online board was in the true order
at the end of 40% of the runs with openskill's drift, and of 60-80% with a third of it,
a tenth, or none."""
CONFIDENCE = 0.95
"""The board's intervals and its test for statistically tied neighbours."""


def conservative(rating: Rating) -> float:
    """What the board ranks by: ``mu - 3 sigma``, a skill the bot very probably has."""
    return rating.mu - 3 * rating.sigma


@cache
def _model() -> BradleyTerryFull:
    """The openskill model, with its own drift off: :func:`after_game` adds the drift it is
    given (openskill treats a tau of 0 passed to ``rate`` as "use the default")."""
    from openskill.models import BradleyTerryFull  # here: only the ladder needs openskill

    return BradleyTerryFull(mu=INITIAL.mu, sigma=INITIAL.sigma, tau=0.0)


def after_game(a: Rating, b: Rating, score_a: float, tau: float = DRIFT) -> tuple[Rating, Rating]:
    """The two ratings after a game that ``a`` won (``score_a`` 1), lost (0) or drew (0.5).

    ``tau`` is the drift added to both sigmas first (0 when the ladder is closed)."""
    if score_a not in (0, 0.5, 1):
        raise ValueError(f"a game's score is 0, 0.5 or 1, not {score_a!r}")
    if tau < 0:
        raise ValueError(f"the drift tau is never negative, not {tau!r}")
    model = _model()
    teams = [[model.rating(mu=r.mu, sigma=math.sqrt(r.sigma**2 + tau**2))] for r in (a, b)]
    ranks = [0, 0] if score_a == 0.5 else [0, 1] if score_a == 1 else [1, 0]
    [[new_a], [new_b]] = model.rate(teams, ranks=ranks)
    return Rating(new_a.mu, new_a.sigma), Rating(new_b.mu, new_b.sigma)


def new_version(previous: Rating) -> Rating:
    """A bot's new version: it starts from its previous skill, but unsure again (a new
    version may be better or worse: its first games move it quickly)."""
    return Rating(mu=previous.mu, sigma=INITIAL.sigma)


def win_probability(a: Rating, b: Rating) -> float:
    """The probability that ``a`` beats ``b`` under the online model (draws split)."""
    [p_a, _] = _model().predict_win(
        [[_model().rating(mu=a.mu, sigma=a.sigma)], [_model().rating(mu=b.mu, sigma=b.sigma)]]
    )
    return float(p_a)


@dataclass(frozen=True)
class FitRow:
    """One bot on the board: its Bradley–Terry rating in Elo (the field's mean is 0), its
    95% interval, its games, and the neighbours it is statistically tied with.

    A bot without games has ``elo`` 0, ``low`` -inf, ``high`` inf and no ties."""

    name: str
    elo: float
    low: float
    high: float
    games: int
    tied_with: tuple[str, ...]


@dataclass(frozen=True)
class Fit:
    """The fit behind the board: ratings (Elo, centred), their covariance, the order."""

    order: list[str]
    """Best first; bots without games last, by name."""
    elo: dict[str, float]
    sigma: dict[str, float]
    games: dict[str, int]
    covariance: dict[tuple[str, str], float]
    """Between bots with games only."""

    def difference_sigma(self, a: str, b: str) -> float:
        """The standard error of ``elo[a] - elo[b]`` (inf when either has no games)."""
        if (a, b) not in self.covariance:
            return math.inf
        variance = self.covariance[a, a] + self.covariance[b, b] - 2 * self.covariance[a, b]
        return math.sqrt(max(variance, 0.0))

    def separated(self, a: str, b: str, confidence: float = CONFIDENCE) -> bool:
        """Whether ``a`` and ``b`` differ significantly (two-sided, at ``confidence``)."""
        spread = self.difference_sigma(a, b)
        if math.isinf(spread):
            return False
        return abs(self.elo[a] - self.elo[b]) > _quantile(confidence) * spread


def _quantile(confidence: float) -> float:
    """The two-sided normal quantile: 1.96 for 0.95."""
    if not 0 < confidence < 1:
        raise ValueError(f"a confidence is between 0 and 1, not {confidence!r}")
    return NormalDist().inv_cdf((1 + confidence) / 2)


def fit_games(names: Sequence[str], results: Iterable[tuple[str, str, float]]) -> Fit:
    """The Bradley–Terry fit of ``results``: (a, b, a's score) per game.

    Games of a bot not in ``names``, and of a bot against itself, are left out: the caller
    chooses who is on the board."""
    return fit_counts(names, ((a, b, score, 1) for a, b, score in results))


def fit_counts(names: Sequence[str], counted: Iterable[tuple[str, str, float, int]]) -> Fit:
    """:func:`fit_games` of games counted by pair: (a, b, a's points, games played); the
    same fit as one entry per game, at the cost of the pairs (a ladder's 100,000 games are a
    few hundred pairs)."""
    known = set(names)
    if len(known) != len(names):
        raise ValueError("the names on a board are distinct")
    place = {name: i for i, name in enumerate(names)}
    pairs: dict[tuple[str, str], tuple[float, int]] = {}  # (a, b), a before b in names
    games = dict.fromkeys(names, 0)
    for a, b, score, count in counted:
        if a not in known or b not in known or a == b or count <= 0:
            continue
        if not 0 <= score <= count:
            what = (
                "a game's score is between 0 and 1"
                if count == 1
                else (f"the points of {count} games are between 0 and {count}")
            )
            raise ValueError(f"{what}, not {score!r}")
        if place[a] > place[b]:
            a, b, score = b, a, count - score
        points, played = pairs.get((a, b), (0.0, 0))
        pairs[a, b] = (points + score, played + count)
        games[a] += count
        games[b] += count
    fitted = fit(list(names), pairs)
    elo = {name: rating for name, (rating, _) in fitted.items()}
    sigma = {name: spread for name, (_, spread) in fitted.items()}
    head_to_head = dict(pairs)
    head_to_head.update(
        {(b, a): (played - points, played) for (a, b), (points, played) in pairs.items()}
    )
    playing = [name for name in names if games[name] > 0]
    order = rank(playing, elo, head_to_head) + sorted(n for n in names if games[n] == 0)
    return Fit(order, elo, sigma, games, _covariance(playing, elo, pairs))


def _covariance(
    playing: list[str], elo: dict[str, float], pairs: dict[tuple[str, str], tuple[float, int]]
) -> dict[tuple[str, str], float]:
    """The covariance of the centred ratings at the maximum: the pseudo-inverse of the
    Fisher information, with the same virtual draws as the fit (whose sigmas are the
    square roots of its diagonal)."""
    import numpy as np

    if len(playing) < 2:
        return {}
    index = {name: i for i, name in enumerate(playing)}
    games = np.zeros((len(playing), len(playing)))
    for (a, b), (_, played) in pairs.items():
        games[index[a], index[b]] += played + PRIOR_DRAWS
        games[index[b], index[a]] += played + PRIOR_DRAWS
    ratings = np.array([elo[name] for name in playing])
    covariance = np.linalg.pinv(_information(games, ratings))
    return {(a, b): float(covariance[index[a], index[b]]) for a in playing for b in playing}


def _information(games: np.ndarray, ratings: np.ndarray) -> np.ndarray:
    """The Fisher information of the Bradley–Terry log-likelihood (Elo scale)."""
    import numpy as np

    p = 1 / (1 + np.exp(-ELO * (ratings[:, None] - ratings[None, :])))
    weights = games * p * p.T * ELO * ELO
    return np.diag(weights.sum(axis=1)) - weights


def board_fit(
    names: Sequence[str],
    results: Iterable[tuple[str, str, float]],
    confidence: float = CONFIDENCE,
) -> list[FitRow]:
    """The board, best first: each bot's Elo with its interval at ``confidence``, and
    ``tied_with``: the bots next to it on the board, above and below, up to the first one
    it differs from significantly (the difference's own interval, which counts that two
    ratings fitted from the same games are correlated)."""
    return board_fit_counts(names, ((a, b, score, 1) for a, b, score in results), confidence)


def board_fit_counts(
    names: Sequence[str],
    counted: Iterable[tuple[str, str, float, int]],
    confidence: float = CONFIDENCE,
) -> list[FitRow]:
    """:func:`board_fit` of games counted by pair: (a, b, a's points, games played)."""
    fitted = fit_counts(names, counted)
    z = _quantile(confidence)
    rows = []
    for place, name in enumerate(fitted.order):
        tied: list[str] = []
        if fitted.games[name] > 0:
            for step in (-1, 1):
                other = place + step
                while 0 <= other < len(fitted.order):
                    neighbour = fitted.order[other]
                    if fitted.games[neighbour] == 0 or fitted.separated(
                        name, neighbour, confidence
                    ):
                        break
                    tied.append(neighbour)
                    other += step
        tied.sort(key=fitted.order.index)
        elo, spread = fitted.elo[name], fitted.sigma[name]
        rows.append(
            FitRow(name, elo, elo - z * spread, elo + z * spread, fitted.games[name], tuple(tied))
        )
    return rows
