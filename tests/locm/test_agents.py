"""The built-in agents: legal, reproducible, fair (no peeking), within their time budget,
sensible deck building, and playable as bot processes."""

from __future__ import annotations

import random
import sys
import time
from collections import Counter

import pytest

from cardarena.locm import State
from cardarena.locm.agents import AGENT_VERSIONS, BUILTIN_AGENTS, SearchAgent, make_agent
from cardarena.locm.agents.cardscore import (
    AGGRO_DECK,
    DEFAULT_DECK,
    card_surplus,
    constructed_deck,
    draft_pick,
)
from cardarena.locm.agents.greedy import GreedyAgent
from cardarena.locm.engine.cards import CARD_LIST, Card, CardType
from cardarena.locm.engine.rules import ruleset
from cardarena.locm.engine.state import ActionType, CardInstance, Phase
from cardarena.locm.referee.game_loop import TimeControl, play_game

FAST_SEARCH = 0.05
"""Time scale for search agents in these tests: 5% of the official limits."""


def play(version: str, names: tuple[str, str], seed: int) -> tuple[State, list[str]]:
    state = State.new(version, {"seed": seed})
    agents = [make_agent(name, seed * 10 + i) for i, name in enumerate(names)]
    for agent in agents:
        if hasattr(agent, "time_scale"):  # the search agents, every version
            agent.time_scale = FAST_SEARCH  # type: ignore[attr-defined]
    actions = []
    while not state.is_terminal:
        action = agents[state.current_player].act(state)
        assert state.is_legal(action), action
        actions.append(str(action))
        state.apply(action)
    return state, actions


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
@pytest.mark.parametrize("name", sorted(BUILTIN_AGENTS))
def test_every_agent_finishes_legal_games(version: str, name: str) -> None:
    if version not in AGENT_VERSIONS.get(name, (version,)):
        pytest.skip(f"{name} does not play {version} (test_learned_agent checks it says so)")
    state, _ = play(version, (name, "greedy"), seed=3)
    assert state.is_terminal


@pytest.mark.parametrize("name", ["random", "pass", "greedy"])
def test_seeded_agents_are_reproducible(name: str) -> None:
    assert play("1.2", (name, "random"), 5)[1] == play("1.2", (name, "random"), 5)[1]


def test_greedy_beats_random_and_pass() -> None:
    wins = 0
    for seed in range(10):
        for seats in (("greedy", "random"), ("random", "greedy"), ("greedy", "pass")):
            state, _ = play("1.5", seats, seed)
            wins += state.winner == seats.index("greedy")
    assert wins >= 28  # of 30


def test_search_plans_a_whole_turn_within_its_budget() -> None:
    state = State.new("1.5", {"seed": 21})
    agents = [GreedyAgent(1), GreedyAgent(2)]
    while state.phase != Phase.BATTLE or state.turn < 6:
        state.apply(agents[state.current_player].act(state))
    search = SearchAgent(seed=1, time_scale=0.5)  # 200 ms * 0.6 * 0.5 = 60 ms
    started = time.perf_counter()
    plan = search.plan_turn(state)
    elapsed = time.perf_counter() - started
    assert search.budget_s(state) == pytest.approx(0.06)
    assert elapsed < 0.06 + 0.2  # slack for a busy machine; a planner past its budget: 0.6 s+
    assert plan[-1].type == ActionType.PASS
    game = state.clone()
    for action in plan[:-1]:
        assert game.is_legal(action)
        game.apply(action)


def _hide_differently(state: State, player: int, rng: random.Random) -> State:
    """The same visible position with another opponent hand and other deck orders."""
    other = state.clone()
    me, opp = other.players[player], other.players[1 - player]
    unseen = [card for card in other.pool if card.type == CardType.CREATURE and card.cost <= 3]
    opp.hand = [CardInstance(500 + 2 * i, rng.choice(unseen)) for i in range(len(opp.hand))]
    opp.deck = [CardInstance(700 + 2 * i, rng.choice(unseen)) for i in range(len(opp.deck))]
    rng.shuffle(me.deck)
    return other


def test_search_does_not_peek_at_hidden_cards() -> None:
    state = State.new("1.5", {"seed": 8})
    agents = [GreedyAgent(1), GreedyAgent(2)]
    while state.phase != Phase.BATTLE or state.turn < 5:
        state.apply(agents[state.current_player].act(state))
    player = state.active
    twin = _hide_differently(state, player, random.Random(4))
    assert [i.card for i in twin.players[1 - player].hand] != [
        i.card for i in state.players[1 - player].hand
    ]
    plans = []
    for position in (state, twin):
        # A fixed number of Monte Carlo rounds and a budget far above what they need:
        # the plan then depends on the seed and on what the player sees, nothing else.
        agent = SearchAgent(seed=9, time_scale=50, max_rounds=3)
        plans.append([str(action) for action in agent.plan_turn(position)])
        assert agent.last_search.get("rounds", 3) == 3
    assert plans[0] == plans[1]


def test_constructed_decks_follow_the_rules_and_the_curve() -> None:
    rules = ruleset("1.5")
    pool = State.new("1.5", {"seed": 2}).pool
    for policy in (DEFAULT_DECK, AGGRO_DECK):
        deck = constructed_deck(pool, rules, policy)
        assert len(deck) == 30
        assert max(Counter(card.base_id for card in deck).values()) <= 2
        assert sum(card.type == CardType.CREATURE for card in deck) >= 12
    mean_cost = [
        sum(card.cost for card in constructed_deck(pool, rules, p)) / 30
        for p in (DEFAULT_DECK, AGGRO_DECK)
    ]
    assert mean_cost[1] < mean_cost[0]


def test_card_scores_prefer_efficient_cards() -> None:
    rules = ruleset("1.2")
    small = Card(1, CardType.CREATURE, 2, 2, 3)
    big_for_cost = Card(2, CardType.CREATURE, 2, 4, 4)
    assert card_surplus(big_for_cost, rules) > card_surplus(small, rules)
    ward = Card(3, CardType.CREATURE, 2, 2, 3, keywords=32)
    assert card_surplus(ward, rules) > card_surplus(small, rules)
    assert draft_pick([small, big_for_cost, ward], [], rules) in (1, 2)
    # Deep in a creature-poor draft, a creature beats a slightly better item.
    items = [c for c in CARD_LIST if c.type != CardType.CREATURE][:20]
    assert draft_pick([Card(9, CardType.GREEN_ITEM, 2, 3, 3), small, small], items, rules) == 1


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_bot_processes_play_through_the_referee(version: str) -> None:
    outcome = play_game(
        f"{sys.executable} -m cardarena.locm.cli bot greedy --seed 1",
        f"{sys.executable} -m cardarena.locm.cli bot search --seed 2",
        version=version,
        params={"seed": 12},
        # Legality through the referee is the point here, not speed: a busy machine must not
        # turn the search bot's start-up or a slow turn into a timeout (it budgets itself).
        time_control=TimeControl(enabled=False),
    )
    assert outcome.error_player is None, outcome.summaries[-3:]
    assert outcome.winner in (0, 1)


def test_search_never_plans_through_its_own_death() -> None:
    """Regression: a 1.2 card that costs its player health (#25: -2 to both
    players) could end the game in a beam candidate; the reply stage then applied PASS
    to a finished game and the bot crashed ("the game has ended; cannot apply PASS").
    How deep the beam got depended on the clock, hence 3 crashes in 4 runs."""
    from cardarena.locm.agents.evaluation import TUNED
    from cardarena.locm.agents.search import _after_greedy_reply
    from cardarena.locm.engine.cards import CARDS_BY_ID
    from cardarena.locm.engine.state import PASS
    from tests.locm.scenario import battle

    state = battle("1.2", hands=[[(1, CARDS_BY_ID[25]), (3, CARDS_BY_ID[5])], []],
                   health=(2, 30), turn=10)  # fmt: skip
    agent = SearchAgent(seed=2, time_scale=50.0, max_rounds=3)  # all the time it needs
    plan = agent.plan_turn(state)
    assert plan[-1] == PASS
    assert all(action.id != 1 for action in plan)  # summoning #25 would kill us
    # The reply stage on an already finished game just evaluates it.
    dead = state.clone()
    dead.execute(dead.legal_actions()[[a.id for a in dead.legal_actions()].index(1)])
    assert dead.is_terminal
    assert _after_greedy_reply(dead, 0, TUNED, TUNED) < 0
