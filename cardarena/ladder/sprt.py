"""Is a new version stronger? The sequential probability ratio test of fishtest
(Stockfish's testing framework), for paired games; and whether a final's ranks are sure.

An A/B test plays the new version (A) against the old one (B) in *pairs*: two games on
the same seed, seats swapped. A pair scores 0, 0.5, 1, 1.5 or 2 for A: five outcomes, a
*pentanomial*. Pairing cancels most of the luck of the deal and of the seat, so a pair
says more than two unrelated games (its variance is smaller than two games' would be).

The test weighs two hypotheses about A's Elo over B (logistic Elo: a score ``s`` is
``-400 log10(1/s - 1)`` Elo): H0, "A is ``elo0`` stronger" (usually 0: no better), and
H1, "A is ``elo1`` stronger" (the smallest gain worth keeping). After every pair it
computes the log-likelihood ratio (LLR) of H1 over H0 and stops as soon as it leaves
``[log(beta / (1 - alpha)), log((1 - beta) / alpha)]`` (±2.94 for 5% and 5%): above,
H1 is *accepted*; below, it is *rejected*. The chance to accept a version that is only
``elo0`` better is at most ``alpha``, to reject one that is ``elo1`` better at most
``beta``. An SPRT needs on average far fewer games than a fixed-length test with the
same error rates, and it decides quickly when the difference is large.

Facts taken from fishtest (the code here is our own):

* The LLR is the *generalized* SPRT's (GSPRT): the five outcome probabilities are not
  known, only the Elo (the expected score) is fixed by each hypothesis, so each
  hypothesis gets the most likely pentanomial distribution with its expected score
  (Van den Bergh, "support_MLE_multinomial"): ``p_i / (1 + x (a_i - s))``, ``x`` the root
  of ``sum p_i (a_i - s) / (1 + x (a_i - s)) = 0``, ``a_i`` a pair's score per game.
  For small Elo differences it is close to ``N (s1 - s0)(2 s - s0 - s1) / (2 var)``
  (:func:`llr_brownian`).
* An outcome never seen counts 0.001 times (so the distribution has every outcome).
* The stopping bounds are moved inwards by the expected overshoot, estimated from the
  LLR's own jumps while it runs (Siegmund, Sequential Analysis, corollary 8.33): the LLR
  jumps past a bound rather than touching it, and without the correction the test errs
  less often than it was asked to, at the cost of more games.
* Fishtest's default bounds for a gain are ``elo0 = 0``, ``elo1 = 2`` (its "standard
  STC" bounds, and its form's defaults). Fishtest states them in *normalized* Elo; with
  no draws and a pair's two games independent, small differences measure the same in
  both scales (pairs whose games agree make normalized Elo the larger).
  Chess engines differ by a few Elo; card-game bots differ by far more, and a ladder
  organiser will usually choose wider bounds (``elo1 = 20`` needs about 1% of the games
  of ``elo1 = 2``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from statistics import NormalDist
from typing import Literal

from cardarena.ladder.ratings import CONFIDENCE, fit_games

DEFAULT_ELO0 = 0.0
DEFAULT_ELO1 = 2.0
"""fishtest's default bounds for "the new version gains" (see the module's notes)."""
ALPHA = BETA = 0.05
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""A pair's score per game, for a pair total of 0, 0.5, 1, 1.5, 2."""
UNSEEN = 1e-3
"""How many times an outcome never seen counts (fishtest's regularization)."""
MOST_ELO = 1200.0
"""Scores are kept within 0.001 of 0 and 1: about ±1200 Elo."""

State = Literal["running", "accepted", "rejected"]


def score_of_elo(elo: float) -> float:
    """The expected score per game of a bot ``elo`` points stronger (logistic Elo)."""
    return 1 / (1 + 10 ** (-elo / 400))


def elo_of_score(score: float) -> float:
    """The logistic Elo difference a score per game means (clamped to ±1200)."""
    score = min(max(score, UNSEEN), 1 - UNSEEN)
    return -400 * math.log10(1 / score - 1)


def _distribution(counts: Sequence[float]) -> tuple[float, list[float]]:
    """(pairs, outcome probabilities), outcomes never seen counting :data:`UNSEEN`."""
    if len(counts) != len(PAIR_SCORES):
        raise ValueError(f"a pentanomial has {len(PAIR_SCORES)} counts, not {len(counts)}")
    if any(count < 0 for count in counts):
        raise ValueError("counts are never negative")
    regular = [count if count > 0 else UNSEEN for count in counts]
    total = sum(regular)
    return total, [count / total for count in regular]


def _mean_variance(probabilities: Sequence[float]) -> tuple[float, float]:
    mean = sum(p * a for p, a in zip(probabilities, PAIR_SCORES, strict=True))
    variance = sum(p * (a - mean) ** 2 for p, a in zip(probabilities, PAIR_SCORES, strict=True))
    return mean, variance


def _tilt(probabilities: Sequence[float], score: float) -> float:
    """The ``x`` that makes ``p_i / (1 + x (a_i - score))`` the most likely distribution
    with expected ``score``: the root of a decreasing function between two poles, by
    Newton's method kept inside its bracket."""
    offsets = [a - score for a in PAIR_SCORES]
    terms = [(p * d, d) for p, d in zip(probabilities, offsets, strict=True)]
    low, high = -1 / max(offsets), -1 / min(offsets)  # where some 1 + x d_i reaches 0
    x = 0.0
    for _ in range(200):
        value = slope = 0.0
        for weighted, d in terms:
            share = 1 / (1 + x * d)
            value += weighted * share
            slope -= weighted * d * share * share
        if value == 0:
            return x
        if value > 0:
            low = x
        else:
            high = x
        step = x - value / slope
        if not low < step < high:
            step = (low + high) / 2
        if abs(step - x) <= 1e-14 * max(1.0, abs(x)):
            return step
        x = step
    return x


def llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The GSPRT log-likelihood ratio of "``elo1`` stronger" over "``elo0`` stronger" for
    the pentanomial ``counts`` (pairs that scored 0, 0.5, 1, 1.5, 2)."""
    if sum(counts) == 0:
        return 0.0
    pairs, probabilities = _distribution(counts)
    total = 0.0
    for elo, sign in ((elo1, 1), (elo0, -1)):
        score = score_of_elo(elo)
        x = _tilt(probabilities, score)
        # log of the hypothesis' probabilities over the empirical ones, weighted by these
        total -= sign * sum(
            p * math.log(1 + x * (a - score))
            for p, a in zip(probabilities, PAIR_SCORES, strict=True)
        )
    return pairs * total


def llr_brownian(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The GSPRT's LLR approximated to second order (fishtest's "alt2"): close to
    :func:`llr` while ``elo0`` and ``elo1`` are near the measured Elo."""
    if sum(counts) == 0:
        return 0.0
    pairs, probabilities = _distribution(counts)
    mean, variance = _mean_variance(probabilities)
    s0, s1 = score_of_elo(elo0), score_of_elo(elo1)
    return pairs * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)


class Sprt:
    """One A/B test: add each pair's two scores for A as they come; read :attr:`state`."""

    def __init__(
        self,
        elo0: float = DEFAULT_ELO0,
        elo1: float = DEFAULT_ELO1,
        alpha: float = ALPHA,
        beta: float = BETA,
    ) -> None:
        if not elo0 < elo1:
            raise ValueError(f"elo0 ({elo0}) is below elo1 ({elo1})")
        if not (0 < alpha < 0.5 and 0 < beta < 0.5):
            raise ValueError("alpha and beta are error rates between 0 and 0.5")
        self.elo0, self.elo1, self.alpha, self.beta = elo0, elo1, alpha, beta
        self.bounds = (math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha))
        """(lower, upper): the LLR below which H1 is rejected, above which it is accepted
        (before the overshoot correction)."""
        self.counts = [0, 0, 0, 0, 0]
        """Pairs that scored 0, 0.5, 1, 1.5, 2 for A."""
        self.llr = 0.0
        self.state: State = "running"
        """``running`` until the first decision; it stays once made, while late pairs
        still count in :attr:`counts`, :attr:`llr` and :meth:`elo_estimate`."""
        # The overshoot estimate: the LLR's new lows and highs, and the jumps that made them.
        self._lowest = self._highest = 0.0
        self._drops = self._drops_squared = self._rises = self._rises_squared = 0.0

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def add_pair(self, score_first: float, score_second: float) -> State:
        """Count one pair: A's score in its first and in its second game (0, 0.5 or 1
        each, seats swapped between them). Returns the state after it."""
        for score in (score_first, score_second):
            if score not in (0, 0.5, 1):
                raise ValueError(f"a game's score is 0, 0.5 or 1, not {score!r}")
        self.counts[round(2 * (score_first + score_second))] += 1
        self.llr = llr(self.counts, self.elo0, self.elo1)
        if self.llr < self._lowest:
            drop = self.llr - self._lowest
            self._drops += drop
            self._drops_squared += drop * drop
            self._lowest = self.llr
        if self.llr > self._highest:
            rise = self.llr - self._highest
            self._rises += rise
            self._rises_squared += rise * rise
            self._highest = self.llr
        if self.state == "running":
            lower, upper = self.corrected_bounds()
            if self.llr < lower:
                self.state = "rejected"
            elif self.llr > upper:
                self.state = "accepted"
        return self.state

    def corrected_bounds(self) -> tuple[float, float]:
        """:attr:`bounds` moved inwards by the expected overshoot so far: the mean square
        of the LLR's ladder jumps over twice their mean."""
        lower, upper = self.bounds
        if self._drops:
            lower -= self._drops_squared / self._drops / 2
        if self._rises:
            upper -= self._rises_squared / self._rises / 2
        return lower, upper

    def elo_estimate(self, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
        """(Elo, low, high): A's Elo over B from the mean pair score, with the interval at
        ``confidence`` from the pairs' own spread (not corrected for the early stop,
        which exaggerates the difference a little when the test ends quickly)."""
        if self.pairs == 0:
            return 0.0, -MOST_ELO, MOST_ELO
        pairs, probabilities = _distribution(self.counts)
        mean, variance = _mean_variance(probabilities)
        spread = NormalDist().inv_cdf((1 + confidence) / 2) * math.sqrt(variance / pairs)
        return elo_of_score(mean), elo_of_score(mean - spread), elo_of_score(mean + spread)


def unseparated(
    names: Sequence[str],
    results: Iterable[tuple[str, str, float]],
    confidence: float = CONFIDENCE,
) -> list[tuple[str, str]]:
    """The neighbours in the fitted order of ``names`` (a final's top K) whose Elo
    difference is not significant at ``confidence``, from the games ``results``
    (a, b, a's score) among them."""
    fitted = fit_games(names, results)
    return [
        (a, b)
        for a, b in itertools.pairwise(fitted.order)
        if not fitted.separated(a, b, confidence)
    ]


def ranks_separated(
    names: Sequence[str],
    results: Iterable[tuple[str, str, float]],
    confidence: float = CONFIDENCE,
) -> bool:
    """Whether the games among a final's finalists ``names`` put every one of them
    significantly above the next (at ``confidence``): the final may stop."""
    return not unseparated(names, results, confidence)
