"""The compiled playouts: builtin:greedy's evaluation and choice, and whole playouts."""

from __future__ import annotations

import numpy as np
import pytest

from cardarena.locm.agents import evaluation, greedy
from cardarena.locm.encoding.encoder import Encoder
from cardarena.locm.fast import kernels
from cardarena.locm.fast import playouts as P
from cardarena.locm.fast.batch import Batch
from cardarena.locm.fast.convert import row_from_state
from tests.locm.fast_differential import battle_positions

VERSIONS = ("1.0", "1.2", "1.5")




def test_the_greedy_numbers_are_builtin_greedys() -> None:
    assert P.WIN_SCORE == evaluation.WIN_SCORE
    assert P.IMPROVEMENT == greedy.IMPROVEMENT
    assert P.GREEDY_WEIGHTS.tolist() == P.weights_array(evaluation.BASELINE).tolist()
    assert P.weights_array(evaluation.TUNED)[P.WEIGHT_NAMES.index("my_creature")] == 2.0


@pytest.mark.parametrize("version", VERSIONS)
def test_the_compiled_evaluation_is_the_agents(version: str) -> None:
    for state in battle_positions(version, 6, 10):
        row, _cards = row_from_state(state)
        for player in (0, 1):
            expected = evaluation.evaluate(state, player)
            assert P.evaluate(row, player, P.GREEDY_WEIGHTS) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_compiled_greedy_chooses_as_builtin_greedy(version: str) -> None:
    encoder = Encoder(version)
    legal = np.empty(kernels.MAX_LEGAL, np.int32)
    compared = 0
    for state in battle_positions(version, 12, 50):
        actions = state.legal_actions()
        scores = []
        for action in actions[1:]:
            child = state.clone()
            child.execute(action)
            scores.append(evaluation.evaluate(child, state.active))
        top = sorted(scores, reverse=True)[:2]
        pass_score = evaluation.evaluate(state, state.active) + greedy.IMPROVEMENT
        if (len(top) == 2 and top[0] - top[1] < 1e-6) or any(
            abs(s - pass_score) < 1e-6 for s in top
        ):
            continue  # a tie: the two may break it differently
        expected = encoder.encode_action(state, greedy.best_greedy_action(state, actions))
        row, cards = row_from_state(state)
        n = kernels.legal_actions(row, cards, legal)
        scratch = np.empty_like(row)
        chosen = P.greedy_action(row, cards, legal, n, P.GREEDY_WEIGHTS, scratch)
        assert chosen == expected, (state, encoder.actions.describe(chosen))
        compared += 1
    assert compared >= 30


@pytest.mark.parametrize("version", VERSIONS)
def test_greedy_beats_random_in_playouts(version: str) -> None:
    batch = Batch.new(version, 200, seed=3)
    result = P.playout(batch, ("random", "greedy"), seed=3)
    assert batch.terminal.all()
    assert (result.winners == 1).mean() > 0.8
    assert result.winners.tolist() == batch.winners.tolist()


def test_playouts_are_reproducible_game_by_game() -> None:
    first = P.play_random(30, "1.5", seed=11)
    again = P.play_random(30, "1.5", seed=11)
    assert first.winners.tolist() == again.winners.tolist()
    assert first.turns.tolist() == again.turns.tolist()
    # A game's moves depend on its own seed only, not on the other games of the batch.
    seeds = Batch.new("1.5", 30, seed=11).seeds
    alone = Batch.new("1.5", seeds=seeds[7:8].tolist())
    P.playout(alone, ("random", "random"), seed=11)
    assert alone.turns[0] == first.turns[7] and alone.winners[0] == first.winners[7]


def test_a_playout_finishes_games_from_where_they_are() -> None:
    batch = Batch.new("1.2", seeds=range(10))
    rng = np.random.default_rng(0)
    for _ in range(70):  # into the battle
        batch.step([rng.choice(np.flatnonzero(m)) for m in batch.masks()])
    middle = batch.clone()
    P.playout(batch, ("greedy", "greedy"))
    assert batch.terminal.all() and not middle.terminal.all()
    assert (batch.turns >= middle.turns).all()


def test_an_unknown_policy_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown playout policy 'smart'"):
        P.playout(Batch.new("1.2", seeds=[1]), ("random", "smart"))
