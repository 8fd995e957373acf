"""The A/B test of a new version: fishtest's GSPRT over pentanomial pairs, checked against
a case computed by hand and by simulation at its nominal error rates; and whether a
final's ranks are separated."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.ladder.sprt import (
    DEFAULT_ELO0,
    DEFAULT_ELO1,
    Sprt,
    llr,
    llr_brownian,
    ranks_separated,
    score_of_elo,
    unseparated,
)


def test_the_llr_of_a_case_computed_by_hand() -> None:
    """100 pairs scoring 0, 0.5, 1, 1.5, 2 ten, twenty, forty, twenty, ten times: a mean
    score of 0.5 per game and a variance of 0.075 per pair (per game's score). H0 (0 Elo)
    is exactly the data's own mean, so the second-order LLR for H1 = 10 Elo is
    ``-N (s1 - 0.5)² / (2 var)``, s1 = 1 / (1 + 10^(-10/400)) = 0.5143872:
    -100 × 0.0143872² / 0.15 = -0.13800; the exact GSPRT is within a tenth of a percent."""
    counts = [10, 20, 40, 20, 10]
    assert score_of_elo(10) == pytest.approx(0.5143872, abs=1e-7)
    assert llr_brownian(counts, 0, 10) == pytest.approx(-0.13800, abs=1e-5)
    assert llr(counts, 0, 10) == pytest.approx(-0.13790, abs=1e-5)


def test_the_llr_of_a_long_test() -> None:
    """A long test's pentanomial (about 94,000 pairs) against bounds of -3 and 1 Elo: the
    multinomial GSPRT (fishtest's formula, computed apart with a general root finder)
    gives 2.13107; the second-order approximation agrees to 2e-4."""
    counts = [10789, 19328, 33806, 19402, 10543]
    assert llr(counts, -3, 1) == pytest.approx(2.1310678, abs=1e-6)
    assert llr_brownian(counts, -3, 1) == pytest.approx(llr(counts, -3, 1), abs=2e-4)


pentanomials = st.lists(st.integers(0, 50), min_size=5, max_size=5).filter(lambda c: sum(c) > 0)
elo_bounds = st.tuples(st.floats(-300, 300), st.floats(0.5, 300)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=60, deadline=None)
@given(pentanomials, elo_bounds)
def test_the_other_side_of_a_test_sees_the_opposite_llr(
    counts: list[int], bounds: tuple[float, float]
) -> None:
    """B's view of the same pairs (its counts reversed, its Elo the opposite of A's) weighs
    the same two hypotheses the other way round."""
    elo0, elo1 = bounds
    mirrored = llr(counts[::-1], -elo1, -elo0)
    assert mirrored == pytest.approx(-llr(counts, elo0, elo1), rel=1e-6, abs=1e-9)


def test_the_bounds_are_fishtests() -> None:
    test = Sprt()
    assert (test.elo0, test.elo1) == (DEFAULT_ELO0, DEFAULT_ELO1) == (0.0, 2.0)
    assert test.bounds == pytest.approx((-math.log(19), math.log(19)))  # ±2.944
    assert test.state == "running" and test.pairs == 0 and test.llr == 0
    assert test.elo_estimate() == (0.0, -1200.0, 1200.0)


def test_pairs_count_by_their_total_and_the_decision_stays() -> None:
    test = Sprt(0, 200)
    test.add_pair(1, 0.5)
    assert test.counts == [0, 0, 0, 1, 0]
    while test.add_pair(1, 1) == "running":
        pass
    assert test.state == "accepted" and test.llr > test.corrected_bounds()[1]
    decided_after = test.pairs
    for _ in range(5):
        assert test.add_pair(0, 0) == "accepted"  # late pairs count, the decision stays
    assert test.counts == [5, 0, 0, 1, decided_after - 1]
    with pytest.raises(ValueError, match=r"0, 0\.5 or 1"):
        test.add_pair(2, 0)
    with pytest.raises(ValueError, match="below"):
        Sprt(5, 5)


def _pair(rng: random.Random, elo: float) -> tuple[float, float]:
    """A's two scores in a pair: 10% draws, a seat worth 50 Elo to the first player, the
    expected score that of ``elo`` (draws taken half from wins, half from losses)."""
    scores = []
    for seat in (50.0, -50.0):
        p, u = score_of_elo(elo + seat), rng.random()
        scores.append(1.0 if u < p - 0.05 else 0.5 if u < p + 0.05 else 0.0)
    return scores[0], scores[1]


def _acceptance(elo: float, tests: int, rng: random.Random) -> float:
    accepted = 0
    for _ in range(tests):
        test = Sprt(0, 100)
        while test.state == "running":
            test.add_pair(*_pair(rng, elo))
        accepted += test.state == "accepted"
    return accepted / tests


def test_the_error_rates_are_nominal_in_simulation() -> None:
    """250 simulated tests each, bounds 0 and 100 Elo (about 30 pairs a test): an equal bot
    is accepted about 5% of the time, one exactly 100 Elo better about 95%, a clearly
    better one always and a worse one never."""
    rng = random.Random(20261129)
    assert 0.02 <= _acceptance(0, 250, rng) <= 0.09
    assert 0.91 <= _acceptance(100, 250, rng) <= 0.98
    assert _acceptance(250, 30, rng) == 1.0
    assert _acceptance(-100, 30, rng) == 0.0


def test_the_elo_estimate_covers_the_truth() -> None:
    rng = random.Random(4)
    test = Sprt(0, 2)  # fishtest's bounds: a 50 Elo gain decides long after 1500 pairs
    for _ in range(1500):
        test.add_pair(*_pair(rng, 50))
    elo, low, high = test.elo_estimate()
    assert low < 50 < high and high - low < 30
    assert low < elo < high


def _wins(a: str, b: str, wins: int, games: int) -> list[tuple[str, str, float]]:
    return [(a, b, 1.0)] * wins + [(a, b, 0.0)] * (games - wins)


def test_a_final_stops_when_every_rank_is_separated() -> None:
    apart = _wins("q", "p", 75, 100) + _wins("r", "q", 75, 100) + _wins("r", "p", 90, 100)
    assert ranks_separated(["p", "q", "r"], apart)
    assert unseparated(["p", "q", "r"], apart) == []
    close = _wins("q", "p", 55, 100) + _wins("r", "q", 55, 100) + _wins("r", "p", 62, 100)
    assert not ranks_separated(["p", "q", "r"], close)
    assert unseparated(["p", "q", "r"], close) == [("r", "q"), ("q", "p")]
    # At a lower confidence the same games separate them.
    assert ranks_separated(["p", "q", "r"], close, confidence=0.6)
