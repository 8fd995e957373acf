"""Matchmaking: never two bots of one owner, never past the in-flight cap, newcomers
first, a near opponent, None when no pair is possible, the same choice for the same
random state."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.ladder.matchmaking import Entrant, choose_pairing, closeness, final_pairs
from cardarena.ladder.ratings import INITIAL, Rating


def entrant(
    id: int,
    owner: int | None = None,
    mu: float = 25.0,
    sigma: float = 2.0,
    games: int = 50,
    last_played: float = 0.0,
    in_flight: int = 0,
) -> Entrant:
    return Entrant(id, id if owner is None else owner, Rating(mu, sigma), games, last_played,
                   in_flight)  # fmt: skip


entrants = st.lists(
    st.builds(
        Entrant,
        id=st.integers(0, 10**6),
        owner=st.integers(0, 4),
        rating=st.builds(Rating, st.floats(0, 50), st.floats(0.5, 9)),
        games=st.integers(0, 40),
        last_played=st.floats(0, 100),
        in_flight=st.integers(0, 3),
    ),
    max_size=12,
    unique_by=lambda e: e.id,
)


@settings(max_examples=80, deadline=None)
@given(entrants, st.integers(0, 2**32), st.integers(1, 3), st.integers(0, 30))
def test_a_pairing_respects_every_rule(
    field: list[Entrant], seed: int, max_in_flight: int, min_games: int
) -> None:
    pair = choose_pairing(field, random.Random(seed), max_in_flight=max_in_flight,
                          min_games=min_games)  # fmt: skip
    free = [e for e in field if e.in_flight < max_in_flight]
    possible = any(a.owner != b.owner for a in free for b in free)
    assert (pair is not None) == possible
    if pair is None:
        return
    by_id = {e.id: e for e in field}
    seed_bot, opponent = by_id[pair[0]], by_id[pair[1]]
    assert seed_bot.owner != opponent.owner
    assert seed_bot.in_flight < max_in_flight and opponent.in_flight < max_in_flight
    # The seed is a newcomer whenever a newcomer could have played.
    could_play = [e for e in free if any(o.owner != e.owner for o in free)]
    if any(e.games < min_games for e in could_play):
        assert seed_bot.games < min_games
    # The same random state, the same pairing.
    again = choose_pairing(field, random.Random(seed), max_in_flight=max_in_flight,
                           min_games=min_games)  # fmt: skip
    assert again == pair


def test_no_pair_when_none_is_possible() -> None:
    rng = random.Random(1)
    assert choose_pairing([], rng) is None
    assert choose_pairing([entrant(1)], rng) is None
    assert choose_pairing([entrant(1, owner=7), entrant(2, owner=7)], rng) is None
    assert choose_pairing([entrant(1, in_flight=2), entrant(2)], rng) is None
    assert choose_pairing([entrant(1, in_flight=1), entrant(2)], rng, max_in_flight=1) is None
    assert choose_pairing([entrant(1, in_flight=1), entrant(2)], rng) in ((1, 2), (2, 1))


def test_the_seed_is_the_newcomer_then_the_bot_with_fewest_games() -> None:
    rng = random.Random(2)
    field = [entrant(1, games=100), entrant(2, games=30), entrant(3, games=5, last_played=9)]
    assert choose_pairing(field, rng)[0] == 3  # type: ignore[index]
    field[2] = entrant(3, games=60)
    assert choose_pairing(field, rng)[0] == 2  # type: ignore[index]
    # Games in flight count as games to come; then the least recently played goes first.
    field = [entrant(1, games=40, in_flight=1), entrant(2, games=40), entrant(3, games=40,
             last_played=5)]  # fmt: skip
    assert choose_pairing(field, rng)[0] == 2  # type: ignore[index]
    # A newcomer whose only possible opponents belong to its own owner waits its turn.
    field = [entrant(1, owner=1, games=0), entrant(2, owner=1), entrant(3, owner=2)]
    assert choose_pairing(field, rng) in ((1, 3), (3, 1), (3, 2))
    field = [entrant(1, owner=1, games=0), entrant(2, owner=2, in_flight=2), entrant(3, owner=1)]
    assert choose_pairing(field, rng) is None


def test_the_opponent_is_usually_near_in_rating() -> None:
    seed = entrant(1, games=0, mu=25, sigma=1)
    near, middle, far = entrant(2, mu=27, sigma=1), entrant(3, mu=34, sigma=1), entrant(4, mu=60)
    rng = random.Random(3)
    picks = Counter(choose_pairing([seed, near, middle, far], rng)[1] for _ in range(400))  # type: ignore[index]
    assert picks[2] > picks[3] > picks[4] > 0  # every pair stays possible
    assert picks[2] > 200


def test_an_unsure_rating_widens_the_window() -> None:
    sure, unsure = Rating(25, 1), Rating(25, INITIAL.sigma)
    far = Rating(40, 1)
    assert closeness(unsure, far) > closeness(sure, far)
    assert closeness(sure, sure) == 1


def test_final_pairs_are_a_round_robin() -> None:
    assert final_pairs([4, 7, 9]) == [(4, 7), (4, 9), (7, 9)]
    pairs = final_pairs(range(8))  # type: ignore[arg-type]
    assert len(pairs) == 28 and len(set(map(frozenset, pairs))) == 28
    assert final_pairs([5]) == []
    with pytest.raises(ValueError, match="distinct"):
        final_pairs([1, 1])
