"""The compiled observation (observe_batch) equals the Encoder's, element for element.

States come from real games of every version (deck building and battle, recorded
official parameters and random play), seen by both players, converted to batch rows
with the fast engine's own translation (:mod:`cardarena.locm.fast.convert`).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("numba")

from cardarena.locm import State
from cardarena.locm.encoding.encoder import Encoder
from cardarena.locm.engine.state import Phase
from cardarena.locm.fast import layout as L
from cardarena.locm.fast.convert import row_from_state
from cardarena.locm.fast.observation import OBS_SIZES, observe_batch, observe_game
from tests.conftest import conformance_games

VERSIONS = ("1.0", "1.2", "1.5")


def _game_states(state: State, rng: random.Random, every: int) -> list[State]:
    """``state`` and every ``every``-th state after it while random actions play it out."""
    states = [state.clone()]
    step = 0
    while not state.is_terminal:
        state.apply(rng.choice(state.legal_actions()))
        step += 1
        if step % every == 0 or state.is_terminal:
            states.append(state.clone())
    return states


def _states(version: str) -> list[State]:
    """Deck-building, battle and final states of official and random games."""
    states: list[State] = []
    for number, game in enumerate(conformance_games(version)[:3]):
        start = State.new(version, game["params"], game.get("league", 4))
        states += _game_states(start, random.Random(number), every=2)
    for seed in range(3):
        states += _game_states(State.new(version, {"seed": 1000 + seed}), random.Random(seed), 3)
    return states


def _compare_batch(version: str, states: list[State]) -> None:
    """observe_batch over all states as both players == Encoder.observe, every element."""
    encoder = Encoder(version)
    rows = [row_from_state(state) for state in states for _player in (0, 1)]
    state_rows = np.stack([row for row, _cards in rows])
    card_rows = np.stack([cards for _row, cards in rows])
    players = np.array([player for _state in states for player in (0, 1)], np.int32)
    out = np.full((len(rows), OBS_SIZES[version]), np.nan, np.float32)
    observe_batch(state_rows, card_rows, players, out)
    for i, player in enumerate(players):
        state = states[i // 2]
        expected = encoder.observe(state, int(player))
        differing = np.flatnonzero(out[i] != expected)
        assert differing.size == 0, (
            f"{version} {state!r} player {player}: elements {differing[:10].tolist()} are "
            f"{out[i][differing[:10]].tolist()}, the encoder has "
            f"{expected[differing[:10]].tolist()}"
        )


@pytest.mark.parametrize("version", VERSIONS)
def test_observations_of_real_games_equal_the_encoder(version: str) -> None:
    states = _states(version)
    phases = {state.phase for state in states}
    assert phases == {Phase.DECK_BUILDING, Phase.BATTLE, Phase.ENDED}
    _compare_batch(version, states)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_battle_row_keeps_an_unwritten_offer_block_and_rewrites_it_on_request(
    version: str,
) -> None:
    """write_offers=False leaves the offered block as it was (the env's shortcut), True
    zeroes it: both give the encoder's array when the block held zeros / garbage."""
    state = State.new(version, {"seed": 5})
    rng = random.Random(5)
    while state.phase is not Phase.BATTLE:
        state.apply(rng.choice(state.legal_actions()))
    row, cards = row_from_state(state)
    expected = Encoder(version).observe(state, 1)
    offered = Encoder(version).obs_layout.blocks["offered"][0]
    zeros = np.zeros(OBS_SIZES[version], np.float32)
    observe_game(row, cards, 1, zeros, False)
    assert np.array_equal(zeros, expected)
    garbage = np.full(OBS_SIZES[version], 3.0, np.float32)
    observe_game(row, cards, 1, garbage, False)
    assert (garbage[offered:] == 3.0).all()
    observe_game(row, cards, 1, garbage, True)
    assert np.array_equal(garbage, expected)


def test_a_deck_with_its_top_drawn_is_read_from_deck_top() -> None:
    """The batch engine draws by moving P_DECK_TOP (convert.py stores decks from 0):
    the histogram and sizes count deck[top:end] only."""
    state = State.new("1.2", {"seed": 9})
    rng = random.Random(9)
    while state.phase is not Phase.BATTLE:
        state.apply(rng.choice(state.legal_actions()))
    row, cards = row_from_state(state)
    me = L.player_offset(0)
    size = row[me + L.P_DECK_END] - row[me + L.P_DECK_TOP]
    # The same deck shifted two places right, with its top at 2.
    deck = row[me + L.P_DECK : me + L.P_DECK + size].copy()
    shifted = row.copy()
    shifted[me + L.P_DECK + 2 : me + L.P_DECK + 2 + size] = deck
    shifted[me + L.P_DECK : me + L.P_DECK + 2] = deck[:2][::-1]  # cards already drawn
    shifted[me + L.P_DECK_TOP] = 2
    shifted[me + L.P_DECK_END] = 2 + size
    out = np.zeros((2, OBS_SIZES["1.2"]), np.float32)
    observe_batch(np.stack([row, shifted]), np.stack([cards, cards]), np.zeros(2, np.int32), out)
    assert np.array_equal(out[0], out[1])
    assert np.array_equal(out[0], Encoder("1.2").observe(state, 0))


def test_observe_batch_checks_its_arrays() -> None:
    state = State.new("1.5", {"seed": 1})
    row, cards = row_from_state(state)
    with pytest.raises(ValueError, match="columns"):
        observe_batch(row[None], cards[None], np.zeros(1, np.int32), np.zeros((1, 416), np.float32))
    with pytest.raises(ValueError, match="float32"):
        observe_batch(row[None], cards[None], np.zeros(1, np.int32), np.zeros((1, 2990)))
    with pytest.raises(ValueError, match="games"):
        observe_batch(
            row[None], cards[None], np.zeros(2, np.int32), np.zeros((1, 2990), np.float32)
        )
