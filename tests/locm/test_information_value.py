"""benchmarks/information_value.py: search-v3 variants that peek at hidden cards, look a
turn further or believe the opponent builds as we do, played against search-v1."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from cardarena.locm.agents import make_agent
from cardarena.locm.agents.cardscore import FITTED_DECK
from cardarena.locm.agents.search_rollouts import mirror_deck
from cardarena.locm.engine.state import ActionType, Phase, State
from tests.locm.scripts import load_script
from tests.locm.test_search_v2 import TickingClock

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "information_value.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script(SCRIPT, "information_value")


def _bases(cards: object) -> Counter[int]:
    return Counter(getattr(card, "card", card).base_id for card in cards)  # type: ignore[attr-defined]


def _play(agent: object, seed: int, check: object = None) -> State:
    """A 1.5 game of ``agent`` (player 0) against greedy, both on the fitted deck;
    ``check(state)`` runs at each of the agent's turns once it has planned."""
    state = State.new("1.5", {"seed": seed})
    greedy = make_agent("greedy", seed)
    greedy.deck_policy = FITTED_DECK  # type: ignore[attr-defined]
    agents = [agent, greedy]
    turn = None
    while not state.is_terminal:
        player = state.current_player
        action = agents[player].act(state)  # type: ignore[attr-defined]
        if check and player == 0 and state.phase == Phase.BATTLE and state.turn != turn:
            turn = state.turn
            check(state)  # type: ignore[operator]
        state.apply(action)
    return state


def test_the_believed_cards_are_the_opponents_unplayed_cards_when_it_builds_as_we_do(
    bench: ModuleType,
) -> None:
    agent = bench.InformedSearch(1, **bench.VARIANTS["two-turn-believed"])
    checked = []

    def check(state: State) -> None:
        opponent = state.players[1]
        # The opponent builds the fitted deck too: what it has not played is its hand
        # and deck, and that is what the agent believes, from what it saw played.
        assert _bases(agent._believed()) == _bases(opponent.hand + opponent.deck)
        checked.append(state.turn)

    final = _play(agent, 11, check)
    assert final.winner is not None and len(checked) >= 3
    assert _bases(agent._mirror) == _bases(mirror_deck(final.rules, final.pool, (), FITTED_DECK))


def test_guessed_worlds_keep_the_believed_cards_and_hide_the_true_hand(bench: ModuleType) -> None:
    agent = bench.InformedSearch(2, **bench.VARIANTS["two-turn-inferred"])
    seen: list[tuple[Counter[int], list[int]]] = []

    def check(position: State) -> None:
        view = position.view(0)
        leftover = view.opponent.max_mana  # every card it could pay for: less weight
        guess = bench._Believed(position, 0, position.pool, agent._believed(), leftover)
        world = guess.sample(position, random.Random(position.turn))
        opponent = world.players[1]
        assert len(opponent.hand) == view.opponent.hand_size
        assert len(opponent.deck) == view.opponent.deck_size
        assert _bases(opponent.hand + opponent.deck) == _bases(agent._believed())
        true_ids = {inst.id for inst in position.players[1].hand}
        assert not true_ids & {inst.id for inst in opponent.hand}
        seen.append((_bases(opponent.hand), [inst.id for inst in opponent.hand]))

    _play(agent, 12, check)
    assert len(seen) >= 3


def test_a_peeking_world_has_the_true_hidden_cards(bench: ModuleType) -> None:
    state = State.new("1.5", {"seed": 13})
    while state.phase != Phase.BATTLE or state.turn < 6:
        state.apply(make_agent("greedy", 1).act(state))
    player = state.active
    guess = bench.Determiniser(state, player)
    opponent_only = bench._Peeking(guess, player, frozenset({"opponent"}))
    world = opponent_only.sample(state, random.Random(1))
    true_opp, true_me = state.players[1 - player], state.players[player]
    assert [i.id for i in world.players[1 - player].hand] == [i.id for i in true_opp.hand]
    assert [i.id for i in world.players[1 - player].deck] == [i.id for i in true_opp.deck]
    assert [i.id for i in world.players[player].deck] != [i.id for i in true_me.deck]
    own_only = bench._Peeking(guess, player, frozenset({"own"})).sample(state, random.Random(1))
    assert [i.id for i in own_only.players[player].deck] == [i.id for i in true_me.deck]
    assert {i.id for i in own_only.players[1 - player].hand}.isdisjoint(i.id for i in true_opp.hand)
    # Its hand alone: the true hand, the deck the believed cards less the hand's.
    believed = [inst.card for inst in true_opp.hand + true_opp.deck]
    hand_only = bench._Peeking(
        bench._Believed(state, player, state.pool, believed, None),
        player,
        frozenset({"opponent-hand"}),
    ).sample(state, random.Random(2))
    guessed = hand_only.players[1 - player]
    assert [i.id for i in guessed.hand] == [i.id for i in true_opp.hand]
    assert _bases(guessed.deck) == _bases(true_opp.deck)
    assert not {i.id for i in guessed.deck} & {i.id for i in true_opp.deck}


@pytest.mark.parametrize(
    "variant",
    [
        "two-turn",
        "two-turn-inferred",
        "peek-two-turn-max",
        "believed-beam-reply",
        "two-turn-believed-beam-reply",
    ],
)
def test_every_kind_of_variant_plays_legal_whole_games(bench: ModuleType, variant: str) -> None:
    # A clock that advances per reading: the same search whatever the machine's load (with
    # the real clock, a busy machine once left no turn the time for stage 3). 1 ms a
    # reading: stage 3 still runs, at half the readings (and under half the CPU) of 0.5 ms.
    agent = bench.InformedSearch(3, clock=TickingClock(0.001), **bench.VARIANTS[variant])
    scored = []

    def check(state: State) -> None:
        scored.append(agent.last_search.get("rounds", 0.0))

    final = _play(agent, 14, check)  # State.apply raises on an illegal action
    assert final.winner is not None
    assert any(rounds >= 1 for rounds in scored)  # stage 3 ran, two turns deep


def _battle_positions(seed: int, count: int) -> list[State]:
    """``count`` positions at the starts of battle turns (from the third on) of greedy
    1.5 games on the fitted deck, seeds from ``seed`` on (1.5 games are short)."""
    positions: list[State] = []
    while len(positions) < count:
        state = State.new("1.5", {"seed": seed})
        agents = [make_agent("greedy", 1), make_agent("greedy", 2)]
        for agent in agents:
            agent.deck_policy = FITTED_DECK  # type: ignore[attr-defined]
        turn = None
        while not state.is_terminal and len(positions) < count:
            if state.phase == Phase.BATTLE and state.turn >= 2 and state.turn != turn:
                turn = state.turn
                positions.append(state.clone())
            state.apply(agents[state.current_player].act(state))
        seed += 1
    return positions


def _greedy_turn(world: State, weights: object) -> State:
    """``world`` (in place) after the active player's greedy turn, PASS not played."""
    from cardarena.locm.agents.greedy import best_greedy_action

    for _ in range(12):
        action = best_greedy_action(world, weights=weights)  # type: ignore[arg-type]
        if action.type == ActionType.PASS or world.is_terminal:
            break
        world.execute(action)
    return world


def _snapshot(world: State) -> tuple[object, ...]:
    from cardarena.locm.agents.search_v2 import position_key

    return (world.active, world.winner, position_key(world))


def test_the_beam_reply_is_a_legal_turn_at_least_as_good_as_any_one_action(
    bench: ModuleType,
) -> None:
    from cardarena.locm.agents.evaluation import TUNED, evaluate

    positions = _battle_positions(15, 8)
    beats_greedy = 0
    for position in positions:
        player = position.active
        world = position.clone()
        for action in bench.beam_turn(position.clone(), TUNED, 3):
            assert world.is_legal(action)
            world.execute(action)
        mine = evaluate(world, player, TUNED)
        one_action = [evaluate(position, player, TUNED)]
        for action in position.legal_actions():
            if action.type == ActionType.PASS:
                continue
            child = position.clone()
            child.execute(action)
            if not child.is_terminal:
                one_action.append(evaluate(child, player, TUNED))
        assert mine >= max(one_action) or world.winner == player
        beats_greedy += mine > evaluate(_greedy_turn(position.clone(), TUNED), player, TUNED)
    assert len(positions) == 8 and beats_greedy >= 1  # it finds turns greedy misses


def test_the_beam_reply_is_played_in_stage_three_only(bench: ModuleType) -> None:
    agent = bench.InformedSearch(4, **bench.VARIANTS["believed-beam-reply"])
    greedy = bench.InformedSearch(4, **bench.VARIANTS["believed"])
    differ = 0
    for position in _battle_positions(16, 6):
        player = position.active
        plain = _snapshot(greedy._reply(position.clone(), player))
        assert _snapshot(agent._reply(position.clone(), player)) == plain  # stage 2: greedy's
        agent._sampling = True
        differ += _snapshot(agent._reply(position.clone(), player)) != plain
        agent._sampling = False
    assert differ >= 1


def test_a_blended_world_scores_the_mean_of_its_one_and_two_turn_scores(
    bench: ModuleType,
) -> None:
    blend = bench.InformedSearch(5, **bench.VARIANTS["two-turn-believed-blend"])
    one_turn = bench.InformedSearch(5, **bench.VARIANTS["believed"])
    two_turn = bench.InformedSearch(5, **bench.VARIANTS["two-turn-believed"])
    apart = 0
    for position in _battle_positions(17, 6):
        player = position.active
        world = blend._reply(position.clone(), player)  # the opponent has replied
        scores = [agent._sampled_score(world.clone(), player) for agent in (one_turn, two_turn)]
        assert blend._sampled_score(world.clone(), player) == pytest.approx(sum(scores) / 2)
        apart += abs(scores[0] - scores[1]) > 1
    assert apart >= 1  # the two scores are not the same number


def test_two_rounds_ahead_score_our_turn_after_the_next_reply(bench: ModuleType) -> None:
    from cardarena.locm.agents.search_v3 import play_learned_reply

    agent = bench.InformedSearch(6, **bench.VARIANTS["two-rounds-believed"])
    scored = 0
    for position in _battle_positions(18, 6):
        player = position.active
        world = agent._reply(position.clone(), player)
        by_hand = world.clone()  # the same look, played out here: our turn, its reply, ours
        play_learned_reply(by_hand, 1 - player, agent.network)
        if by_hand.is_terminal:
            continue
        agent._reply(by_hand, player)
        if by_hand.is_terminal:
            continue
        play_learned_reply(by_hand, 1 - player, agent.network)
        if by_hand.is_terminal:
            continue
        assert by_hand.turn == world.turn + 3 and by_hand.active == player
        expected = bench._after_pass(agent, by_hand, player)
        assert agent._sampled_score(world.clone(), player) == pytest.approx(expected)
        scored += 1
    assert scored >= 1


def test_bad_options_are_refused(bench: ModuleType) -> None:
    with pytest.raises(ValueError, match="peek"):
        bench.InformedSearch(1, peek=("everything",))
    with pytest.raises(ValueError, match="two_turn"):
        bench.InformedSearch(1, two_turn="three")
    with pytest.raises(ValueError, match="opponent"):
        bench.InformedSearch(1, opponent="psychic")
    with pytest.raises(ValueError, match="reply_beam"):
        bench.InformedSearch(1, reply_beam=-1)
    with pytest.raises(ValueError, match="blend"):
        bench.InformedSearch(1, blend=True)
    with pytest.raises(ValueError, match="rounds_ahead"):
        bench.InformedSearch(1, two_turn="policy", rounds_ahead=0)


def test_the_command_plays_a_variant_against_search_v1() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--variant", "two-turn-believed", "--games", "2", "--json"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)
    assert result["variant"] == "two-turn-believed" and result["games"] == 2
    assert result["wins"] + result["losses"] + result["draws"] == 2
    assert result["pair"] == "python:information_value:two_turn_believed vs search-v1"
    bad = subprocess.run(
        [sys.executable, str(SCRIPT), "--games", "0"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )  # fmt: skip
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines()[-1].endswith("--games and --workers must be at least 1")
