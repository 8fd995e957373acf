"""The ladder's ratings: the online update moves the right way, the board's fit over all
games finds known strengths, with intervals and statistically tied neighbours."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.ladder.ratings import (
    INITIAL,
    Rating,
    after_game,
    board_fit,
    conservative,
    fit_games,
    new_version,
    win_probability,
)

ratings = st.builds(
    Rating,
    mu=st.floats(min_value=-20, max_value=70, allow_nan=False),
    sigma=st.floats(min_value=0.1, max_value=12, allow_nan=False),
)
PROPERTIES = settings(max_examples=60, deadline=None)


@PROPERTIES
@given(ratings, ratings)
def test_a_win_raises_the_winner_and_lowers_the_loser(a: Rating, b: Rating) -> None:
    won_a, lost_b = after_game(a, b, 1, tau=0)
    assert won_a.mu > a.mu and lost_b.mu < b.mu
    assert won_a.sigma <= a.sigma and lost_b.sigma <= b.sigma  # a game never adds doubt
    lost_a, won_b = after_game(a, b, 0, tau=0)
    drew_a, drew_b = after_game(a, b, 0.5, tau=0)
    assert lost_a.mu < drew_a.mu < won_a.mu
    assert lost_b.mu < drew_b.mu < won_b.mu


@PROPERTIES
@given(ratings, ratings)
def test_a_draw_moves_both_towards_each_other(a: Rating, b: Rating) -> None:
    drew_a, drew_b = after_game(a, b, 0.5, tau=0)
    if a.mu > b.mu:
        assert drew_a.mu <= a.mu and drew_b.mu >= b.mu
    elif a.mu < b.mu:
        assert drew_a.mu >= a.mu and drew_b.mu <= b.mu


def test_equal_bots_move_by_equal_amounts() -> None:
    winner, loser = after_game(INITIAL, INITIAL, 1)
    assert winner.mu - INITIAL.mu == pytest.approx(INITIAL.mu - loser.mu)
    assert winner.sigma == pytest.approx(loser.sigma) and winner.sigma < INITIAL.sigma
    drew_a, drew_b = after_game(INITIAL, INITIAL, 0.5)
    assert drew_a.mu == pytest.approx(INITIAL.mu) == pytest.approx(drew_b.mu)


def test_an_upset_moves_ratings_more_than_an_expected_win() -> None:
    strong, weak = Rating(35, 3), Rating(20, 3)
    upset, _ = after_game(weak, strong, 1)
    expected, _ = after_game(strong, weak, 1)
    assert upset.mu - weak.mu > expected.mu - strong.mu > 0
    assert win_probability(strong, weak) > 0.5 > win_probability(weak, strong)


def test_the_drift_keeps_a_veteran_movable() -> None:
    """Without drift a bot's sigma shrinks game after game towards 0; with it, a veteran
    whose sigma is very small gets some doubt back, while a new bot's still shrinks."""
    veteran, opponent = Rating(25, 0.3), Rating(25, 1)
    assert after_game(veteran, opponent, 1, tau=0)[0].sigma < veteran.sigma
    assert after_game(veteran, opponent, 1)[0].sigma > veteran.sigma
    assert after_game(INITIAL, opponent, 1)[0].sigma < INITIAL.sigma


def test_conservative_ranks_a_sure_rating_above_an_unsure_equal_one() -> None:
    assert conservative(Rating(25, 1)) > conservative(Rating(25, 5))
    assert conservative(Rating(25, 2)) == pytest.approx(19)
    assert conservative(INITIAL) == pytest.approx(0)


@PROPERTIES
@given(ratings)
def test_a_new_version_keeps_its_skill_and_is_unsure_again(previous: Rating) -> None:
    fresh = new_version(previous)
    assert fresh.mu == previous.mu and fresh.sigma == INITIAL.sigma
    assert conservative(fresh) <= conservative(previous) or previous.sigma > INITIAL.sigma


def test_bad_scores_and_drifts_are_refused() -> None:
    with pytest.raises(ValueError, match=r"0, 0\.5 or 1"):
        after_game(INITIAL, INITIAL, 0.7)
    with pytest.raises(ValueError, match="negative"):
        after_game(INITIAL, INITIAL, 1, tau=-0.1)


def _games(strengths: dict[str, float], count: int, seed: int) -> list[tuple[str, str, float]]:
    """``count`` games between random pairs of bots of the given true Elo."""
    rng = random.Random(seed)
    names = list(strengths)
    games = []
    for _ in range(count):
        a, b = rng.sample(names, 2)
        p = 1 / (1 + 10 ** ((strengths[b] - strengths[a]) / 400))
        games.append((a, b, 1.0 if rng.random() < p else 0.0))
    return games


def test_two_bots_by_hand() -> None:
    """a won 3 of 4 against b; with the fit's one virtual draw, a scores 3.5 of 5: 70%,
    400 log10(0.7 / 0.3) = 147.2 Elo apart, centred on 0."""
    games = [("a", "b", 1.0), ("b", "a", 0.0), ("a", "b", 0.0), ("a", "b", 1.0)]
    top, bottom = board_fit(["a", "b"], games)
    assert (top.name, bottom.name) == ("a", "b")
    assert top.elo == pytest.approx(200 * math.log10(0.7 / 0.3))
    assert bottom.elo == pytest.approx(-top.elo)
    assert top.games == bottom.games == 4
    assert top.tied_with == ("b",) and bottom.tied_with == ("a",)  # 4 games prove nothing
    assert top.low < top.elo < top.high


def test_the_board_finds_known_strengths_and_who_is_tied() -> None:
    strengths = {"w": 0.0, "x": 200.0, "y": 400.0, "z": 405.0}
    rows = board_fit([*strengths, "new"], _games(strengths, 4000, seed=3))
    assert [row.name for row in rows[:2]] in (["z", "y"], ["y", "z"])
    assert [row.name for row in rows[2:]] == ["x", "w", "new"]
    by_name = {row.name: row for row in rows}
    mean = sum(strengths.values()) / len(strengths)
    for name, true in strengths.items():
        assert by_name[name].low < true - mean < by_name[name].high
    assert by_name["y"].tied_with == ("z",) and by_name["z"].tied_with == ("y",)
    assert by_name["x"].tied_with == () and by_name["w"].tied_with == ()
    assert sum(row.games for row in rows) == 2 * 4000
    new = by_name["new"]
    assert (new.games, new.low, new.high, new.tied_with) == (0, -math.inf, math.inf, ())


def _wins(a: str, b: str, wins: int, games: int) -> list[tuple[str, str, float]]:
    return [(a, b, 1.0)] * wins + [(a, b, 0.0)] * (games - wins)


def test_tied_neighbours_stop_at_the_first_separated_one() -> None:
    """Three bots in a row, 55% of 100 games between neighbours and 62% between the ends:
    about 39 Elo apart each (the difference's 95% half-width is about 56), 79 for the
    ends: the middle one is tied with both, the ends are not tied with each other."""
    games = _wins("q", "p", 55, 100) + _wins("r", "q", 55, 100) + _wins("r", "p", 62, 100)
    rows = {row.name: row for row in board_fit(["p", "q", "r"], games)}
    assert rows["q"].tied_with == ("r", "p")
    assert rows["r"].tied_with == ("q",) and rows["p"].tied_with == ("q",)


def test_the_fit_is_symmetric_and_independent_of_game_order() -> None:
    strengths = {"a": 0.0, "b": 100.0, "c": 150.0}
    games = _games(strengths, 300, seed=7)
    flipped = [(b, a, 1 - score) for a, b, score in reversed(games)]
    assert board_fit(list(strengths), games) == board_fit(list(strengths), flipped)
    fitted = fit_games(list(strengths), games)
    for a in strengths:  # the covariance's diagonal is the fit's own sigma squared
        assert math.sqrt(fitted.covariance[a, a]) == pytest.approx(fitted.sigma[a])


def test_games_outside_the_board_are_left_out() -> None:
    games = [("a", "b", 1.0), ("a", "gone", 1.0), ("b", "b", 0.5)]
    assert [row.games for row in board_fit(["a", "b"], games)] == [1, 1]
    with pytest.raises(ValueError, match="between 0 and 1"):
        board_fit(["a", "b"], [("a", "b", 2.0)])
    with pytest.raises(ValueError, match="distinct"):
        board_fit(["a", "a"], [])
