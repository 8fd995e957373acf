"""A reference state to a batch row and back gives the same state, field by field."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cardarena.locm import State
from cardarena.locm.engine.state import Action, ActionType
from cardarena.locm.fast import layout as L
from cardarena.locm.fast.convert import (
    ConversionError,
    compare_states,
    row_from_state,
    state_from_row,
)
from tests.conftest import conformance_games

VERSIONS = ("1.0", "1.2", "1.5")


def random_game_states(version: str, seed: int, every: int = 1) -> list[State]:
    """The states of one random game (deck building and battle), every ``every`` actions."""
    rng = random.Random(seed)
    state = State.new(version, {"seed": seed})
    states = [state.clone()]
    step = 0
    while not state.is_terminal:
        state.apply(rng.choice(state.legal_actions()))
        step += 1
        if step % every == 0 or state.is_terminal:
            states.append(state.clone())
    return states


def round_trip(state: State) -> State:
    row, cards = row_from_state(state)
    return state_from_row(row, cards, state.params, state.version, state.league)


@pytest.mark.parametrize("version", VERSIONS)
def test_states_of_random_games_round_trip(version: str) -> None:
    for seed in range(4):
        for state in random_game_states(version, seed, every=3):
            back = round_trip(state)
            assert compare_states(state, back) == [], (seed, state)
            # The row of the rebuilt state is the same row.
            assert np.array_equal(row_from_state(back)[0], row_from_state(state)[0])
            # And the rebuilt state plays on like the original.
            if not state.is_terminal:
                assert back.legal_actions() == state.legal_actions()


@pytest.mark.parametrize("version", VERSIONS)
def test_recorded_official_game_parameters_round_trip(version: str) -> None:
    for game in conformance_games(version)[:5]:
        state = State.new(version, game["params"], game.get("league", 4))
        assert compare_states(state, round_trip(state)) == []


def test_compare_states_names_the_field() -> None:
    states = random_game_states("1.2", 7)
    state = next(s for s in states if s.players[1].board)
    other = state.clone()
    other.players[1].board[0].defense += 1
    other.players[0].health -= 2
    differences = compare_states(state, other)
    before = state.players[1].board[0].defense
    assert f"player 1 board[0].defense: {before} != {before + 1}" in differences
    assert any(line.startswith("player 0 health:") for line in differences)
    assert len(differences) == 2


def test_a_hand_made_battle_keeps_its_cards_and_ids() -> None:
    state = State.from_input("1.5", _TEXT_1_5, 0)
    ids: dict[int, int] = {}
    row, cards = row_from_state(state, ids)
    assert ids and all(original >= L.MAX_IDS for original in ids.values())
    assert row[L.CARD_COUNT] < L.MAX_CARDS  # only the cards present
    back = state_from_row(row, cards, state.params, "1.5", id_map=ids)
    assert compare_states(state, back) == []
    assert state_from_row(row, cards, state.params, "1.5").players[1].hand[0].id < L.MAX_IDS


def test_renumbered_ids_leave_room_for_a_15_area_copy() -> None:
    # A 1.5 area summon's copy takes the id after its original's: for a renumbered id,
    # that id must be in the table (below MAX_IDS) and nobody else's.
    state = State.from_input("1.5", _TEXT_1_5, 0)
    ids: dict[int, int] = {}
    row_from_state(state, ids)
    assert len(ids) > 10
    live = set(ids) | {inst.id for side in state.players for inst in side.hand + side.deck
                       if inst.id < L.MAX_IDS}  # fmt: skip
    live |= {c.id for side in state.players for c in side.board}
    for new_id in ids:
        assert new_id + 1 < L.MAX_IDS and new_id + 1 not in live


def test_a_state_the_arrays_cannot_hold_is_one_clear_error() -> None:
    state = State.new_battle("1.2")
    state.players[0].performed = [(1, Action(ActionType.ATTACK, 1, -1))] * (L.MAX_PERFORMED + 1)
    with pytest.raises(ConversionError, match="performed"):
        row_from_state(state)


_TEXT_1_5 = """30 1 26 1
30 2 25 1
6 0
4
1 0 -1 0 1 2 1 ------ 0 0 0 0 0
3 2 -1 0 1 1 2 ------ 0 0 0 0 1
5 4 -1 0 2 2 2 -----W 0 0 0 1 1
7 6 -1 0 1 1 1 ------ 0 0 0 1 1
"""
