"""The second and third search agents (search-v2, and search-v3 = builtin:search, which
plans as search-v2 does), and search-v3 with rollouts (search_rollouts, no built-in): they
find wins that need several actions, answer threats they see on the board, never read
hidden cards, keep to their clock, and play only legal actions in every version.
Clocks are injected: a clock that
never advances gives the search all the time it wants (so the plan depends on the
position only), a clock that ticks on every reading checks the budget without
measuring real time."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from cardarena.locm import State
from cardarena.locm.agents import SearchAgent, make_agent
from cardarena.locm.agents.cardscore import AGGRO_DECK, FITTED_DECK
from cardarena.locm.agents.greedy import GreedyAgent
from cardarena.locm.agents.random_agent import RandomAgent
from cardarena.locm.agents.search_rollouts import RolloutSearchAgent
from cardarena.locm.agents.search_v2 import SearchAgentV2, hide_opponent, position_key
from cardarena.locm.agents.search_v3 import SearchAgentV3
from cardarena.locm.engine.cards import GUARD, CardType
from cardarena.locm.engine.state import PASS, CardInstance, Phase
from tests.locm.docs_examples import run_agents_doc_example
from tests.locm.scenario import battle, creature_card, on_board

VERSIONS = ("1.0", "1.2", "1.5")

SEARCHES: dict[str, Callable[..., SearchAgentV2]] = {
    "search-v2": SearchAgentV2,
    "search-v3": SearchAgentV3,
    "search-v3-learned-reply": lambda **options: SearchAgentV3(reply="learned", **options),
    "rollouts": lambda **options: RolloutSearchAgent(rollouts=True, **options),
}
"""The planners the shared tests run on (search-v3 scores with learned-v2's network;
search_rollouts judges its finalists by compiled rollouts, here in every version)."""


def frozen_clock() -> Callable[[], float]:
    """A clock that never advances: every deadline is far away."""
    return lambda: 0.0


class TickingClock:
    """Advances ``tick`` seconds at every reading, whatever the real time."""

    def __init__(self, tick: float) -> None:
        self.tick = tick
        self.now = 0.0
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        self.now += self.tick
        return self.now


def play_plan(state: State, plan: list) -> State:  # type: ignore[type-arg]
    """Apply a planned turn to a clone, checking every action is legal when played."""
    game = state.clone()
    assert plan and plan[-1] == PASS
    for action in plan[:-1]:
        assert game.is_legal(action), (action, game)
        game.apply(action)
        if game.is_terminal:
            break
    return game


def lane_of(version: str) -> int:
    return -1 if version == "1.0" else 0


@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize("version", VERSIONS)
def test_finds_a_lethal_turn_that_first_removes_a_guard(version: str, search: str) -> None:
    # 6 health behind a 1/1 Guard: the 2/2 must kill the Guard before the 6/6 goes face.
    # The one-step lethal check sees a Guard and no lethal; a greedy first attack would
    # send the 6/6 into the Guard.
    lane = 0
    state = battle(
        version,
        boards=[
            [on_board(creature_card(2, 2), 1, lane), on_board(creature_card(6, 6), 2, lane)],
            [on_board(creature_card(1, 1, GUARD), 20, lane)],
        ],
        hands=[[(5, creature_card(3, 3, cost=3))], []],
        health=(30, 6),
    )
    agent = SEARCHES[search](seed=1, clock=frozen_clock(), max_rounds=2)
    after = play_plan(state, agent.plan_turn(state))
    assert after.is_terminal and after.winner == 0


@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize("version", ["1.2", "1.5"])
def test_answers_the_threat_on_the_board_rather_than_hitting_face(
    version: str, search: str
) -> None:
    # We have 8 health, the opponent a ready 9/2: going face with our 3/3 leaves it able
    # to kill us; trading it away is the only way to survive its reply.
    state = battle(
        version,
        boards=[[on_board(creature_card(3, 3), 1, 0)], [on_board(creature_card(9, 2), 20, 0)]],
        health=(8, 12),
    )
    agent = SEARCHES[search](seed=1, clock=frozen_clock(), max_rounds=2)
    plan = agent.plan_turn(state)
    after = play_plan(state, plan)
    assert all(c.id != 20 for c in after.players[1].board)


def test_positions_reached_in_another_order_are_one_position() -> None:
    state = battle(
        "1.5",
        hands=[[(1, creature_card(1, 1, cost=1)), (3, creature_card(2, 2, cost=1))], []],
    )
    one, two = state.clone(), state.clone()
    for game, order in ((one, (1, 3)), (two, (3, 1))):
        for card_id in order:
            game.execute(next(a for a in game.legal_actions() if a.id == card_id))
    assert [c.id for c in one.players[0].board] != [c.id for c in two.players[0].board]
    assert position_key(one) == position_key(two)
    other_lane = state.clone()
    other_lane.execute(next(a for a in other_lane.legal_actions() if a.id == 1 and a.target == 1))
    other_lane.execute(next(a for a in other_lane.legal_actions() if a.id == 3))
    assert position_key(other_lane) != position_key(one)


def _battle_position(version: str, seed: int, turn: int, greedy: bool = True) -> State:
    state = State.new(version, {"seed": seed})
    agents = [GreedyAgent(seed) if greedy else RandomAgent(seed), RandomAgent(seed + 1)]
    while not state.is_terminal and (state.phase != Phase.BATTLE or state.turn < turn):
        state.apply(agents[state.current_player].act(state))
    return state


def hidden_twin(state: State, player: int) -> State:
    """``state`` with what ``player`` cannot see changed: another opponent hand (cheap
    creatures of the pool) and another order of ``player``'s own deck."""
    twin = state.clone()
    rng = random.Random(4)
    unseen = [card for card in twin.pool if card.type == CardType.CREATURE and card.cost <= 3]
    twin.players[1 - player].hand = [
        CardInstance(500 + 2 * i, rng.choice(unseen))
        for i in range(len(state.players[1 - player].hand))
    ]
    rng.shuffle(twin.players[player].deck)
    return twin


@pytest.mark.parametrize("search", SEARCHES)
def test_hides_the_opponents_cards_and_plans_the_same_without_them(search: str) -> None:
    state = _battle_position("1.5", seed=8, turn=7)
    assert not state.is_terminal
    player = state.active
    hidden = hide_opponent(state, player)
    opponent = hidden.players[1 - player]
    real = state.players[1 - player]
    assert len(opponent.hand) == len(real.hand) and len(opponent.deck) == len(real.deck)
    assert not {i.card for i in opponent.hand + opponent.deck} & {i.card for i in real.hand}
    # Another opponent hand and other deck orders: the same plan (a frozen clock and a
    # fixed number of sampled rounds leave the position as the only input).
    twin = hidden_twin(state, player)
    plans = [
        [str(a) for a in SEARCHES[search](seed=9, clock=frozen_clock(), max_rounds=3).plan_turn(s)]
        for s in (state, twin)
    ]
    assert plans[0] == plans[1]


@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize("version", VERSIONS)
def test_keeps_to_its_budget_on_a_ticking_clock(version: str, search: str) -> None:
    # 1 ms per clock reading: the search must stop reading soon after its deadline, and
    # still hand back a legal turn.
    for seed in range(3):
        state = _battle_position(version, seed=30 + seed, turn=12)
        if state.is_terminal:
            continue
        clock = TickingClock(0.001)
        agent = SEARCHES[search](seed=seed, clock=clock)
        plan = agent.plan_turn(state)
        play_plan(state, plan)
        assert clock.now <= agent.budget_s(state) + 0.005


@pytest.mark.parametrize("version", VERSIONS)
def test_a_clock_already_past_the_deadline_still_gives_a_legal_turn(version: str) -> None:
    state = _battle_position(version, seed=41, turn=10)
    clock = TickingClock(10.0)  # every reading is past any budget
    plan = SearchAgentV2(seed=2, clock=clock).plan_turn(state)
    play_plan(state, plan)
    assert clock.readings <= 6


@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize("version", VERSIONS)
def test_plans_only_legal_turns_in_many_random_positions(version: str, search: str) -> None:
    rng = random.Random(version)
    planned = 0
    # Each clock reading of the rollouts stage is a compiled call sized to about 3 ms of real
    # time: at 2 ms a reading they still roll out tens to hundreds of games per finalist,
    # past the first halving in most of these positions (thousands at 0.5 ms, 4x the CPU).
    tick = 0.002 if search == "rollouts" else 0.0005
    for game in range(40):
        seed, turn = rng.randrange(10**6), rng.randrange(2, 30)
        state = _battle_position(version, seed, turn, greedy=game % 2 == 0)
        if state.is_terminal:
            continue
        agent = SEARCHES[search](seed=game, clock=TickingClock(tick))
        plan = agent.plan_turn(state)
        play_plan(state, plan)
        planned += 1
        if planned == 15:
            break
    assert planned == 15


@pytest.mark.parametrize("players", [("search-v2", "search-v1"), ("search", "search-v2")])
@pytest.mark.parametrize("version", VERSIONS)
def test_plays_legal_whole_games_against_the_previous_search(
    version: str, players: tuple[str, str]
) -> None:
    # search-v2 against search-v1, and the plain name (search-v3) against search-v2.
    state = State.new(version, {"seed": 5})
    agents = [make_agent(players[0], 1), make_agent(players[1], 2)]
    for agent in agents:
        agent.time_scale = 0.05  # type: ignore[attr-defined]
    while not state.is_terminal:
        action = agents[state.current_player].act(state)
        assert state.is_legal(action), action
        state.apply(action)
    assert state.winner in (0, 1)


def test_search_v2_is_listed_and_v1_stays_as_published() -> None:
    # search-v2 as published: the fitted deck (the plain name is newer: test_search_v3).
    v2 = make_agent("search-v2", 1)
    assert type(v2) is SearchAgentV2 and v2.deck_policy is FITTED_DECK
    v1 = make_agent("search-v1", 1)
    assert type(v1) is SearchAgent and v1.deck_policy is AGGRO_DECK
    # The published agent's knobs, as published.
    from cardarena.locm.agents import search

    assert (search.BUDGET_FRACTION, search.BEAM_WIDTH, search.CANDIDATES) == (0.6, 6, 6)


def test_a_late_turn_shrinks_the_next_budget_within_the_limit() -> None:
    # The machine is loaded: between the agent's actions the clock runs on by 30 ms
    # each time, so the whole turn ends well after the planning budget. The next
    # turn's budget shrinks by that lateness (never below a tenth of the limit).
    state = _battle_position("1.2", seed=12, turn=8)
    clock = TickingClock(0.0002)
    agent = SearchAgentV2(seed=3, clock=clock)
    fresh = agent.budget_s(state)
    limit = state.rules.battle_turn_ms / 1000
    assert fresh == pytest.approx(0.45 * limit)
    turn = state.turn
    while state.turn == turn and not state.is_terminal:
        action = agent.act(state)
        clock.now += 0.03
        state.apply(action)
    assert agent.lateness_s > 0.03
    shrunk = agent.budget_s(state)
    assert shrunk < fresh
    assert shrunk + agent.lateness_s == pytest.approx(0.7 * limit) or shrunk == pytest.approx(
        0.1 * limit
    )
    agent.lateness_s = 10.0
    assert agent.budget_s(state) == pytest.approx(0.1 * limit)


def test_the_docs_example_of_a_game_between_the_searches_runs() -> None:
    winner_line, stats_line = run_agents_doc_example('make_agent("search-v2", seed=1)')
    assert winner_line.startswith(("winner: 0 after", "winner: 1 after"))
    assert "positions" in stats_line
