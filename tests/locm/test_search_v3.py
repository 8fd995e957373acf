"""The third search agent (builtin:search): search-v2's planning scored by learned-v2's
value network. What it shares with search-v2 (multi-action wins, threats, hidden cards,
the clock, legal turns) is tested for both, and for its learned reply, in
test_search_v2; here: it scores positions with the version's network (wins and losses
beyond any network value), its learned reply is builtin:learned's turn, its budget and
stage 3 depend on the version, and it is builtin:search."""

from __future__ import annotations

import random

import pytest

from cardarena.locm import State
from cardarena.locm.agents import make_agent
from cardarena.locm.agents.cardscore import FITTED_DECK
from cardarena.locm.agents.evaluation import WIN_SCORE
from cardarena.locm.agents.learned_v2 import LearnedAgentV2, load_weights
from cardarena.locm.agents.search_v2 import SearchAgentV2, hide_opponent
from cardarena.locm.agents.search_v3 import (
    VALUE_SCALE,
    SearchAgentV3,
    play_learned_reply,
    world_value,
)
from cardarena.locm.engine.state import PASS, ActionType
from tests.locm.docs_examples import run_agents_doc_example
from tests.locm.scenario import battle, creature_card, on_board
from tests.locm.test_search_v2 import (
    TickingClock,
    _battle_position,
    frozen_clock,
    play_plan,
)

VERSIONS = ("1.0", "1.2", "1.5")
REPLIES = ("greedy", "learned")


@pytest.mark.parametrize("version", VERSIONS)
def test_scores_positions_with_the_versions_network(version: str) -> None:
    state = _battle_position(version, seed=3, turn=9)
    assert not state.is_terminal
    player = state.active
    network = load_weights().networks[version]
    value = world_value(state, player, network)
    # The network's chance for the player, in points; the opponent's chance is the rest
    # only roughly (the network was not trained to be symmetric), but both are chances.
    assert 0.0 < value < VALUE_SCALE
    other = load_weights().networks["1.0" if version != "1.0" else "1.5"]
    assert world_value(state, player, other) != value
    won = battle(version, boards=[[on_board(creature_card(3, 3), 1, 0)], []], health=(30, 2))
    won.execute(next(a for a in won.legal_actions() if a.type == ActionType.ATTACK))
    assert won.is_terminal and won.winner == 0
    assert world_value(won, 0, network) == WIN_SCORE
    assert world_value(won, 1, network) == -WIN_SCORE


def _summary(state: State) -> list[object]:
    """What a reply changes: turn, healths, mana, boards and hands."""
    players = [
        (p.health, p.mana, [repr(c) for c in p.board], [i.id for i in p.hand])
        for p in state.players
    ]
    return [state.turn, state.active, state.winner, *players]


@pytest.mark.parametrize("version", VERSIONS)
def test_the_learned_reply_plays_as_builtin_learned_would(version: str) -> None:
    # The opponent's reply is learned-v2's turn: lethal first, then the action whose
    # afterstate its network rates best, until PASS rates best.
    rng = random.Random(version)
    learned = LearnedAgentV2(0)
    network = load_weights().networks[version]
    checked = acted = 0
    for _ in range(40):
        state = _battle_position(version, rng.randrange(10**6), rng.randrange(4, 20))
        if state.is_terminal:
            continue
        player = state.active
        expected = hide_opponent(state, player)
        expected.apply(PASS)
        for _ in range(12):
            if expected.is_terminal:
                break
            action = learned.act(expected)
            if action.type == ActionType.PASS:
                break
            expected.execute(action)
            acted += 1
        replied = play_learned_reply(hide_opponent(state, player), player, network)
        assert _summary(replied) == _summary(expected)
        checked += 1
    assert checked >= 10 and acted >= 10


def test_search_v3_keeps_the_fitted_deck() -> None:
    plain = make_agent("search-v3", 1)
    assert type(plain) is SearchAgentV3 and plain.deck_policy is FITTED_DECK
    assert type(make_agent("search-v3", 1)) is SearchAgentV3
    assert type(make_agent("search-v2", 1)) is SearchAgentV2
    with pytest.raises(ValueError, match="reply must be"):
        SearchAgentV3(reply="best")


@pytest.mark.parametrize("version", VERSIONS)
def test_a_clock_already_past_the_deadline_still_gives_a_legal_turn(version: str) -> None:
    # Stage 2 replies to one position before time is up; the shortlist's others are
    # scored on the same scale without a reply, and a legal turn comes back.
    state = _battle_position(version, seed=41, turn=10)
    clock = TickingClock(10.0)
    agent = SearchAgentV3(seed=2, clock=clock)
    play_plan(state, agent.plan_turn(state))
    assert clock.readings <= 6
    stats = agent.last_search
    assert stats["positions"] > 4 and stats["replies"] == 1 and stats["rounds"] == 0


def test_the_budget_is_the_versions_share_of_the_limit_unless_given() -> None:
    for version, share in (("1.0", 0.45), ("1.2", 0.6), ("1.5", 0.6)):
        state = _battle_position(version, seed=12, turn=8)
        limit = state.rules.battle_turn_ms / 1000
        assert SearchAgentV3(seed=1).budget_s(state) == pytest.approx(share * limit)
        assert SearchAgentV3(seed=1, budget_fraction=0.3).budget_s(state) == pytest.approx(
            0.3 * limit
        )
        # the lateness rule of search-v2 still caps it
        late = SearchAgentV3(seed=1)
        late.lateness_s = 0.5 * limit
        assert late.budget_s(state) == pytest.approx((0.7 - 0.5) * limit)


def test_stage_three_compares_the_versions_number_of_positions_unless_given() -> None:
    for version, count in (("1.0", 4), ("1.2", 4), ("1.5", 8)):
        state = _battle_position(version, seed=12, turn=8)
        agent = SearchAgentV3(seed=1, clock=frozen_clock(), max_rounds=1)
        agent.plan_turn(state)
        assert agent.sampled_candidates == count
        given = SearchAgentV3(seed=1, sampled_candidates=2, clock=frozen_clock(), max_rounds=1)
        given.plan_turn(state)
        assert given.sampled_candidates == 2


def test_the_docs_example_of_a_game_against_search_v1_runs() -> None:
    marker = 'make_agent("search-v3", seed=1), make_agent("search-v1", seed=2)'
    winner_line, agent_line = run_agents_doc_example(marker)
    assert winner_line.startswith(("winner: 0 after", "winner: 1 after"))
    assert agent_line == "SearchAgentV3 8"
