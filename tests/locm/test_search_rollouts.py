"""search-v3 with rollouts (search_rollouts): its finalists judged by compiled rollouts.

The planner tests it shares with search-v2 and search-v3 (wins behind a Guard, threats,
hidden cards, the clock, legal turns) run on it in test_search_v2. Here: a rollout is a
real game, the one the reference engine plays from the dealt position with greedy on
both sides; the dealt cards are a fair guess (our deck's cards in another order, the
opponent's from public cards); nothing hidden reaches the rows; and without the
compiled engine the agent is search-v3.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from cardarena.locm import ProtocolGame, State
from cardarena.locm.agents import BUILTIN_AGENTS, make_agent
from cardarena.locm.agents.cardscore import FITTED_DECK
from cardarena.locm.agents.greedy import GreedyAgent
from cardarena.locm.agents.search_rollouts import (
    VERSION_ROLLOUTS,
    RolloutSearchAgent,
    mirror_deck,
    rollout_setup,
)
from cardarena.locm.agents.search_v3 import SearchAgentV3
from cardarena.locm.cli.bot import BotSession
from cardarena.locm.encoding.encoder import Encoder
from cardarena.locm.engine.state import PASS, ActionType
from cardarena.locm.fast import kernels
from cardarena.locm.fast import layout as L
from cardarena.locm.fast.convert import compare_states, state_from_row
from cardarena.locm.fast.playouts import greedy_action, weights_array
from cardarena.locm.fast.rollouts import dealt_row, rollout_wins
from tests.locm.docs_examples import run_agents_doc_example
from tests.locm.test_search_v2 import _battle_position, frozen_clock, hidden_twin

VERSIONS = ("1.0", "1.2", "1.5")
REFERENCE = "python:cardarena.locm.agents.search_rollouts:RolloutSearchAgent"
"""How the command line reaches it (it is no built-in)."""


def _candidates(state: State, count: int = 3) -> list[State]:
    """A few ends of the turn: nothing played, and greedy's first actions one by one."""
    ends = [state.clone()]
    world = state.clone()
    greedy = GreedyAgent(1)
    while len(ends) < count:
        action = greedy.act(world)
        if action.type == ActionType.PASS:
            break
        world.execute(action)
        if world.is_terminal:
            break
        ends.append(world.clone())
    return ends


def _positions(version: str) -> list[State]:
    positions = []
    for seed in range(6):
        state = _battle_position(version, seed=70 + seed, turn=3 + seed)
        if not state.is_terminal:
            positions.append(state)
    assert len(positions) >= 4
    return positions


@pytest.mark.parametrize("version", VERSIONS)
def test_a_rollout_is_the_game_the_reference_engine_plays_from_the_dealt_position(
    version: str,
) -> None:
    # The reference engine, from the position rollout k deals, replays the compiled
    # greedy's choices: the same position after every action, and the rollout's result.
    weights = weights_array()
    encoder = Encoder(version)
    legal = np.empty(kernels.MAX_LEGAL, np.int32)
    played = 0
    for state in _positions(version):
        player = state.active
        setup = rollout_setup(state, player, _candidates(state))
        assert setup is not None
        for c in range(len(setup.rows)):
            for k in range(2):
                wins = np.zeros(1)
                rollout_wins(setup.rows[c : c + 1], setup.table, player, setup.my_cards,
                             setup.opp_cards, setup.triples, k, 1, 99, weights,
                             wins)  # fmt: skip
                row = dealt_row(setup.rows[c], player, setup.my_cards, setup.opp_cards,
                                setup.triples, 99, k)  # fmt: skip
                world = state_from_row(row, setup.table, state.params, version)
                world.apply(PASS)
                kernels.apply_legal(row, setup.table, 0)
                scratch = np.empty_like(row)
                while not world.is_terminal:
                    n = kernels.legal_actions(row, setup.table, legal)
                    index = greedy_action(row, setup.table, legal, n, weights, scratch)
                    world.apply(encoder.decode(world, index))
                    kernels.apply_legal(row, setup.table, index)
                    back = state_from_row(row, setup.table, state.params, version)
                    assert compare_states(back, world) == []
                if world.winner is None:
                    assert wins[0] == 0.5
                else:
                    assert wins[0] == (1.0 if world.winner == player else 0.0)
                played += 1
    assert played >= 20


@pytest.mark.parametrize("version", VERSIONS)
def test_the_dealt_cards_are_a_fair_guess_and_the_visible_position_stays(version: str) -> None:
    for state in _positions(version):
        player = state.active
        view = state.view(player)
        setup = rollout_setup(state, player, [state])
        assert setup is not None
        me, opp = L.player_offset(player), L.player_offset(1 - player)
        orders = set()
        for k in range(8):
            row = dealt_row(setup.rows[0], player, setup.my_cards, setup.opp_cards,
                            setup.triples, 5, k)  # fmt: skip
            world = state_from_row(row, setup.table, state.params, version)
            mine, theirs = world.players[player], world.players[1 - player]
            # Our deck: its cards, in some order; the visible position as it was.
            assert Counter(i.card for i in mine.deck) == Counter(view.my_deck)
            orders.add(tuple(i.card for i in mine.deck))
            assert [i.card for i in mine.hand] == [i.card for i in state.players[player].hand]
            assert [(c.card, c.attack, c.defense) for c in theirs.board] == [
                (c.card, c.attack, c.defense) for c in state.players[1 - player].board
            ]
            assert (len(theirs.hand), len(theirs.deck)) == (
                view.opponent.hand_size,
                view.opponent.deck_size,
            )
            # The opponent's cards: at most two copies of a pool card (1.5), at most
            # one card of each draft triple (1.0/1.2).
            guessed = Counter(
                row[L.INSTANCE_CARD + row[opp + L.P_HAND + i]]
                for i in range(row[opp + L.P_HAND_COUNT])
            )
            guessed.update(
                row[L.INSTANCE_CARD + row[opp + L.P_DECK + i]]
                for i in range(row[opp + L.P_DECK_TOP], row[opp + L.P_DECK_END])
            )
            if setup.triples:
                assert all(n == 1 for n in Counter(i // 3 for i in guessed.elements()).values())
            else:
                assert max(guessed.values()) <= 2
            # Every live instance has its own id; a hidden one leaves id + 1 free.
            ids = [
                row[base + L.P_HAND + i]
                for base in (me, opp)
                for i in range(row[base + L.P_HAND_COUNT])
            ]
            ids += [
                row[base + L.P_DECK + i]
                for base in (me, opp)
                for i in range(row[base + L.P_DECK_TOP], row[base + L.P_DECK_END])
            ]
            ids += [
                row[base + L.P_BOARD + i * L.CREATURE_SIZE + L.K_ID]
                for base in (me, opp)
                for i in range(row[base + L.P_BOARD_COUNT])
            ]
            assert len(ids) == len(set(ids))
        if len(view.my_deck) > 3:
            assert len(orders) > 1


def test_nothing_hidden_reaches_the_rollout_rows() -> None:
    state = _battle_position("1.5", seed=8, turn=7)
    player = state.active
    twin = hidden_twin(state, player)
    one = rollout_setup(state, player, _candidates(state))
    two = rollout_setup(twin, player, _candidates(twin))
    assert one is not None and two is not None
    assert np.array_equal(one.rows, two.rows) and np.array_equal(one.table, two.table)


@pytest.mark.parametrize("version", VERSIONS)
def test_stage_3_rolls_out_the_finalists(version: str) -> None:
    state = next(s for s in _positions(version) if len(s.legal_actions()) > 3)
    agent = RolloutSearchAgent(seed=3, clock=frozen_clock(), max_rounds=2, rollouts=True)
    plan = agent.plan_turn(state)
    assert plan[-1] == PASS
    assert agent.last_search["rollouts"] == 16  # two chunks of 8 rollouts per finalist


def test_without_the_compiled_engine_it_plays_as_search_v3() -> None:
    for state in _positions("1.5")[:3]:
        rolls = RolloutSearchAgent(seed=4, clock=frozen_clock(), max_rounds=2)
        rolls.fast = False
        v3 = SearchAgentV3(seed=4, clock=frozen_clock(), max_rounds=2)
        assert [str(a) for a in rolls.plan_turn(state)] == [str(a) for a in v3.plan_turn(state)]


@pytest.mark.parametrize("version", VERSIONS)
def test_as_a_bot_process_it_rolls_out_from_what_the_protocol_shows(version: str) -> None:
    # locm bot: the state is rebuilt from the input text; the public cards seen in deck
    # building and the undrawn cards of the deck it built are enough for rollouts.
    # A generous clock (x5) and one round of rollouts: the same turns on a busy machine.
    game = ProtocolGame(version, {"seed": 6})
    sessions = [BotSession(REFERENCE, 1, None, 5.0), BotSession("greedy", 2, None, 1.0)]
    sessions[0].agent.max_rounds = 1  # type: ignore[attr-defined]
    rolled = []
    while not game.over:
        answers = []
        for request in game.requests():
            lines = request.input.rstrip("\n").split("\n")
            answers.append(sessions[request.player].answer(lines))
            if request.player == 0 and sessions[0].battle_turns:
                rolled.append(sessions[0].agent.last_search.get("rollouts", 0.0))
        game.answer(answers)
    assert game.winner in (0, 1)
    if VERSION_ROLLOUTS[version]:
        assert sum(1 for r in rolled if r > 0) >= 2, rolled
    else:
        assert not any(rolled)
    # The rollout code was loaded in deck building, and only where rollouts are played.
    warm = sessions[0].agent._weights is not None  # type: ignore[attr-defined]
    assert warm == VERSION_ROLLOUTS[version]


def test_creating_it_imports_no_numba() -> None:
    # A bot process creates its agent before its first draft turn (1 s in 1.0/1.2):
    # numba waits for a game that rolls out.
    code = (
        "import sys\n"
        "from cardarena.locm.agents.search_rollouts import RolloutSearchAgent\n"
        "agent = RolloutSearchAgent(1)\n"
        "print(agent.fast, 'numba' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]


def test_it_is_reachable_by_reference_and_no_built_in_name_is_it() -> None:
    agent = make_agent(REFERENCE, 1)
    assert type(agent) is RolloutSearchAgent and agent.deck_policy is FITTED_DECK
    assert type(make_agent("search-v3", 1)) is SearchAgentV3
    assert not any(type(make_agent(name, 1)) is RolloutSearchAgent for name in BUILTIN_AGENTS)
    assert VERSION_ROLLOUTS == {"1.0": False, "1.2": False, "1.5": True}
    for bad in ({"blend": "best"}, {"opponent": "all"}):
        with pytest.raises(ValueError, match="must be"):
            RolloutSearchAgent(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", VERSIONS)
def test_it_rolls_out_only_in_the_versions_it_was_measured_better(version: str) -> None:
    state = next(s for s in _positions(version) if len(s.legal_actions()) > 3)
    agent = RolloutSearchAgent(seed=3, clock=frozen_clock(), max_rounds=1)
    agent.plan_turn(state)
    assert (agent.last_search["rollouts"] > 0) == VERSION_ROLLOUTS[version]
    if not VERSION_ROLLOUTS[version]:  # search-v3's turn, its stage-3 count included
        v3 = SearchAgentV3(seed=3, clock=frozen_clock(), max_rounds=1)
        assert [str(a) for a in RolloutSearchAgent(seed=3, clock=frozen_clock(), max_rounds=1)
                .plan_turn(state)] == [str(a) for a in v3.plan_turn(state)]  # fmt: skip


def test_the_docs_example_of_a_game_against_search_v1_runs() -> None:
    marker = 'RolloutSearchAgent(seed=1), make_agent("search-v1", seed=2)'
    winner_line, agent_line = run_agents_doc_example(marker)
    assert winner_line.startswith(("winner: 0 after", "winner: 1 after"))
    assert agent_line == "RolloutSearchAgent 24"


@pytest.mark.parametrize("version", ["1.2", "1.5"])
def test_the_mirror_model_deals_the_opponent_cards_of_the_deck_our_policy_builds(
    version: str,
) -> None:
    state = _positions(version)[0]
    player = state.active
    believed = mirror_deck(state.rules, state.pool, state.draft, FITTED_DECK)
    assert len(believed) == 30
    setup = rollout_setup(state, player, [state], opponent_deck=believed)
    assert setup is not None and not setup.triples
    opp = L.player_offset(1 - player)
    allowed = Counter(setup.opp_cards.tolist())
    for k in range(8):
        row = dealt_row(setup.rows[0], player, setup.my_cards, setup.opp_cards,
                        setup.triples, 11, k)  # fmt: skip
        ids = [row[opp + L.P_HAND + i] for i in range(row[opp + L.P_HAND_COUNT])]
        ids += [row[opp + L.P_DECK + i]
                for i in range(row[opp + L.P_DECK_TOP], row[opp + L.P_DECK_END])]  # fmt: skip
        dealt = Counter(int(row[L.INSTANCE_CARD + i]) for i in ids)
        assert not dealt - allowed  # never more copies than the believed deck holds
    agent = RolloutSearchAgent(
        seed=2, opponent="mirror", rollouts=True, clock=frozen_clock(), max_rounds=1
    )
    agent.plan_turn(state)
    assert agent._mirror is not None and agent._mirror[1] == believed
