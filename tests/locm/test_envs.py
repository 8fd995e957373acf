"""The Gymnasium and PettingZoo LOCM environments, against the real engine.

One reusable API test runs for every env id × version; the others check what an
RL user relies on: masks equal the engine's legal actions, seeds reproduce the
official games, observations hide nothing hidden, envs pickle and vectorise.
"""

from __future__ import annotations

import pickle
import random
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from cardarena.locm import IllegalActionError, Phase, ProtocolGame, State  # noqa: E402
from cardarena.locm.agents import GreedyAgent  # noqa: E402
from cardarena.locm.envs import ENV_IDS, Encoder, aec_env, observation_layout  # noqa: E402
from tests.conftest import conformance_games  # noqa: E402

VERSIONS = ("1.0", "1.2", "1.5")
CASES = [(env_id, version) for env_id in ENV_IDS for version in VERSIONS]


def _decoded_legal_set(env: Any) -> set:
    """The engine actions the env's mask allows, decoded one by one."""
    state = env.unwrapped.state
    encoder = env.unwrapped.encoder
    return {encoder.decode(state, int(i)) for i in np.flatnonzero(env.unwrapped.action_masks())}


def _play(env: Any, seed: int, rng: random.Random, check_masks: bool = True) -> list[Any]:
    """One seeded episode of uniformly random legal actions; the trajectory it produced."""
    obs, info = env.reset(seed=seed)
    trajectory: list[Any] = [obs.tobytes()]
    space = env.observation_space
    terminated = False
    while not terminated:
        mask = info["action_mask"]
        assert np.array_equal(mask, env.action_masks())
        if check_masks:
            state = env.unwrapped.state
            assert _decoded_legal_set(env) == set(state.legal_actions())
            assert mask.sum() == len(state.legal_actions())
        action = rng.choice(np.flatnonzero(mask).tolist())
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs.shape == space.shape and obs.dtype == space.dtype
        assert space.contains(obs), "observation outside the declared space"
        assert truncated is False
        if not terminated:
            assert reward == 0.0  # no shaping by default: the reward comes at the end
        trajectory.append((action, reward, obs.tobytes()))
    state = env.unwrapped.state
    assert reward == state.returns()[env.unwrapped.seat] and reward in (-1.0, 0.0, 1.0)
    assert not info["action_mask"].any()
    return trajectory


@pytest.mark.parametrize(("env_id", "version"), CASES)
def test_env_api(env_id: str, version: str) -> None:
    """The contract of every env: spaces, masks = engine legality, seeds, errors, pickling."""
    env = gym.make(env_id, version=version, render_mode="ansi")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    first = _play(env, 11, random.Random(1))
    again = _play(env, 11, random.Random(1), check_masks=False)
    assert first == again, "the same seed and actions must give the same trajectory"
    other = _play(env, 12, random.Random(1), check_masks=False)
    assert other[0] != first[0]

    _obs, info = env.reset(seed=5)
    frame = env.render()
    assert isinstance(frame, str) and f"LOCM {version}" in frame and "you are player 0" in frame
    # An illegal action names the action and the state, and changes nothing.
    illegal = int(np.flatnonzero(~info["action_mask"])[-1])
    before = env.unwrapped.state.to_dict()
    with pytest.raises(IllegalActionError, match=rf"action {illegal} \(.*\) is not legal.*State"):
        env.step(illegal)
    assert env.unwrapped.state.to_dict() == before
    with pytest.raises(IllegalActionError, match="outside"):
        env.step(env.action_space.n)

    # A pickled env continues exactly as the original.
    for _ in range(3):
        _obs, *_ = env.step(env.action_space.sample())
    copy = pickle.loads(pickle.dumps(env))
    for _ in range(20):
        mask = env.unwrapped.action_masks()
        assert np.array_equal(mask, copy.unwrapped.action_masks())
        if not mask.any():
            break
        action = int(np.flatnonzero(mask)[len(np.flatnonzero(mask)) // 2])
        a, b = env.step(action), copy.step(action)
        assert np.array_equal(a[0], b[0]) and a[1:4] == b[1:4]
        if a[2]:
            break
    env.close()


@pytest.mark.parametrize(("env_id", "version"), CASES)
def test_check_env_without_warnings(env_id: str, version: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(env_id, version=version, render_mode="ansi"))


def test_many_random_steps_masks_match_engine() -> None:
    """Thousands of steps over every version: mask == the engine's legal actions."""
    steps = 0
    for version in VERSIONS:
        env = gym.make("cardarena/LOCM-v0", version=version, seat="random")
        for seed in range(10):
            steps += len(_play(env, 100 + seed, random.Random(seed))) - 1
    assert steps > 1500


def _replay_deck_building(game: dict[str, Any]) -> tuple[ProtocolGame, Any] | None:
    """The engine after the recorded deck building, and the first battle request
    (None when the recorded game ended before its battle, e.g. on a bad answer)."""
    protocol = ProtocolGame(game["version"], game["given_params"])
    turns = iter(game["turns"])
    while requests := protocol.requests():
        if protocol.state.phase is Phase.BATTLE:
            return protocol, requests[0]
        protocol.answer([next(turns)["output"] for _ in requests])
    return None


def _recorded_game(version: str, number: int) -> dict[str, Any]:
    """The ``number``-th recorded game of ``version`` started from a seed alone that
    reached its battle."""
    found = 0
    for game in conformance_games(version):
        if (
            set(game["given_params"]) == {"seed"}
            and game.get("league", 4) == 4
            and _replay_deck_building(game) is not None
        ):
            if found == number:
                return game
            found += 1
    pytest.skip(f"fewer than {number + 1} recorded {version} games with only a seed given")


@pytest.mark.parametrize("number", range(3))
@pytest.mark.parametrize("version", VERSIONS)
def test_reset_seed_plays_the_official_game(version: str, number: int) -> None:
    """reset(seed=S) offers the recorded cards and deals the recorded decks in order."""
    game = _recorded_game(version, number)
    seed = int(game["given_params"]["seed"])
    # The deck-building choices both players made, as the engine replays them.
    replayed = _replay_deck_building(game)
    assert replayed is not None
    protocol, first_battle_input = replayed
    chosen = [[card.base_id for card in p.chosen] for p in protocol.state.players]

    encoder = Encoder(version)

    def index_of(state: State, player: int) -> int:
        """The action index that makes the recorded choice of ``player``."""
        number = len(state.players[player].chosen)
        wanted = chosen[player][number]
        if state.rules.draft:
            offered = [card.base_id for card in state.draft[number]]
            index = offered.index(wanted)
        else:
            index = [card.base_id for card in state.pool].index(wanted)
        return encoder.actions.deck + index

    def replay_opponent(observation: np.ndarray, mask: np.ndarray) -> int:
        state = env.state
        if state.phase is Phase.DECK_BUILDING:
            return index_of(state, 1)
        return 0  # PASS: the battle is not replayed here

    env = gym.make("cardarena/LOCM-v0", version=version, opponent=replay_opponent).unwrapped
    obs, _info = env.reset(seed=seed)
    # What the learner is offered first is what the official referee offered.
    recorded_first = game["turns"][0]["input"]
    assert env.state.input_text(0) == recorded_first
    layout = observation_layout(version)
    first_offer = env.state.draft[0][0] if env.state.rules.draft else env.state.pool[0]
    assert layout.field(obs, "offered", 0, "base_id") == first_offer.base_id
    while env.state.phase is Phase.DECK_BUILDING:
        obs, *_ = env.step(index_of(env.state, 0))
    assert env.state.input_text(first_battle_input.player) == first_battle_input.input
    for player in (0, 1):
        engine = protocol.state.players[player]
        mine = env.state.players[player]
        assert [i.id for i in mine.hand] == [i.id for i in engine.hand]
        assert [c.base_id for c in mine.chosen] == [c.base_id for c in engine.chosen], player
        assert [i.card for i in mine.deck] == [i.card for i in engine.deck], player


@pytest.mark.parametrize("version", VERSIONS)
def test_observation_hides_opponent_hand_and_deck_order(version: str) -> None:
    rng = random.Random(3)
    state = State.new(version, {"seed": 77})
    agent = GreedyAgent(1)
    while state.phase is not Phase.BATTLE or state.turn < 6:
        state.apply(agent.act(state))
    encoder = Encoder(version)
    viewer = state.current_player
    other = state.clone()
    me, opp = other.players[viewer], other.players[1 - viewer]
    rng.shuffle(me.deck)
    rng.shuffle(opp.deck)
    # The opponent's hand swapped for different cards from its deck.
    swapped = len(opp.hand)
    opp.hand, opp.deck = opp.deck[:swapped], opp.hand + opp.deck[swapped:]
    assert [i.card for i in opp.hand] != [i.card for i in state.players[1 - viewer].hand]
    assert other.to_dict() != state.to_dict()
    assert np.array_equal(encoder.observe(state, viewer), encoder.observe(other, viewer))
    # The deck-building phase: what the opponent chose is hidden too.
    start = State.new(version, {"seed": 5})
    offered = start.draft[0] if start.rules.draft else start.pool
    cheap = min(range(len(offered)), key=lambda i: offered[i].cost)
    dear = max(range(len(offered)), key=lambda i: offered[i].cost)
    assert offered[cheap].cost != offered[dear].cost
    a, b = start.clone(), start.clone()
    a.apply(a.legal_actions()[cheap])
    b.apply(b.legal_actions()[dear])
    assert np.array_equal(encoder.observe(a, 1), encoder.observe(b, 1))
    # ... while the chooser sees its own choices (the my_deck block).
    layout = observation_layout(version)
    assert layout.field(encoder.observe(a, 0), "my_deck", 0, f"cost_{offered[cheap].cost}") == 1
    assert not np.array_equal(encoder.observe(a, 0), encoder.observe(b, 0))


def test_opponents_given_as_name_object_or_callable() -> None:
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def first_legal(observation: np.ndarray, mask: np.ndarray) -> int:
        seen.append((observation, mask))
        return int(np.flatnonzero(mask)[0])

    for opponent in ("greedy", "builtin:random", GreedyAgent(0), first_legal):
        env = gym.make("cardarena/LOCM-battle-v0", version="1.2", opponent=opponent)
        _play(env, 21, random.Random(0), check_masks=False)
    assert seen and all(mask[obs_index] for obs_index, mask in
                        ((int(np.flatnonzero(m)[0]), m) for _o, m in seen))  # fmt: skip
    assert all(o.shape == gym.make("cardarena/LOCM-battle-v0", version="1.2")
               .observation_space.shape for o, _m in seen[:3])  # fmt: skip

    def cheater(observation: np.ndarray, mask: np.ndarray) -> int:
        return int(np.flatnonzero(~mask)[0])

    env = gym.make("cardarena/LOCM-v0", version="1.5", opponent=cheater, seat=0)
    env.reset(seed=1)
    with pytest.raises(IllegalActionError, match="opponent policy chose action"):
        env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    with pytest.raises(ValueError, match="unknown built-in agent 'nobody'"):
        gym.make("cardarena/LOCM-v0", opponent="nobody")


def test_seats_options_and_shaping() -> None:
    env = gym.make("cardarena/LOCM-battle-v0", version="1.5", seat="random")
    seats = {env.reset(seed=s)[1]["seat"] for s in range(12)}
    assert seats == {0, 1}
    _obs, info = env.reset(seed=3, options={"seat": 1})
    assert info["seat"] == 1 and env.unwrapped.state.current_player == 1
    params = {"seed": 9, "shufflePlayer0Seed": 123, "cardGenSeed": 4}
    env.reset(options={"params": params})
    expected = State.new("1.5", params).params
    assert env.unwrapped.state.params.as_dict() == expected.as_dict()
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"sead": 1})

    shaped = gym.make("cardarena/LOCM-battle-v0", version="1.2", shaping={"health": 1.0})
    _obs, info = shaped.reset(seed=4)
    rng = random.Random(2)
    rewards = []
    terminated = False
    while not terminated:
        _obs, reward, terminated, _t, info = shaped.step(
            rng.choice(np.flatnonzero(info["action_mask"]).tolist())
        )
        rewards.append(reward)
    state = shaped.unwrapped.state
    seat = shaped.unwrapped.seat
    final = (state.players[seat].health - state.players[1 - seat].health) / 30.0
    assert any(r != 0.0 for r in rewards[:-1])
    assert sum(rewards) == pytest.approx(final + state.returns()[seat])
    with pytest.raises(ValueError, match="unknown shaping term"):
        gym.make("cardarena/LOCM-v0", shaping={"mana": 1.0})


@pytest.mark.parametrize("vector", ["sync", "async"])
def test_vector_envs(vector: str) -> None:
    def make() -> Any:
        return gym.make("cardarena/LOCM-battle-v0", version="1.2")

    cls = gym.vector.SyncVectorEnv if vector == "sync" else gym.vector.AsyncVectorEnv
    envs = cls([make, make])
    try:
        obs, info = envs.reset(seed=[1, 2])
        assert obs.shape == (2, *make().observation_space.shape)
        assert not np.array_equal(obs[0], obs[1])
        finished = 0
        for _ in range(400):
            masks = info["action_mask"]
            actions = np.array([int(np.flatnonzero(m)[0]) if m.any() else 0 for m in masks])
            obs, _rewards, terminated, _truncated, info = envs.step(actions)
            finished += int(terminated.sum())
            if finished >= 2:
                break
        assert finished >= 1
    finally:
        envs.close()


@pytest.mark.parametrize("version", VERSIONS)
def test_pettingzoo_api_and_seed(version: str) -> None:
    from pettingzoo.test import api_test, seed_test

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(aec_env(version), num_cycles=300)
        seed_test(lambda: aec_env(version), num_cycles=300)
    # Only the advice api_test gives every Dict-with-action_mask env (it exempts its own
    # such games by name); anything else is a real complaint.
    advice = {
        "Observation space for each agent probably should be gymnasium.spaces.box or "
        "gymnasium.spaces.discrete",
        "Observation is not a NumPy array",
    }
    assert {str(w.message) for w in caught} <= advice


def test_pettingzoo_full_game_and_seed() -> None:
    env = aec_env("1.2", render_mode="ansi")
    env.reset(seed=8)
    first = env.observe("player_0")["observation"].copy()
    rng = random.Random(0)
    for agent in env.agent_iter():
        observation, _reward, terminated, truncated, _info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        assert env.observe(agent)["action_mask"].sum() == len(env.state.legal_actions())
        other = "player_1" if agent == "player_0" else "player_0"
        assert not env.observe(other)["action_mask"].any()
        env.step(rng.choice(np.flatnonzero(observation["action_mask"]).tolist()))
    assert env.state.is_terminal and isinstance(env.render(), str)
    env.reset(seed=8)
    assert np.array_equal(env.observe("player_0")["observation"], first)


def test_import_cardarena_does_not_import_gymnasium() -> None:
    code = (
        "import sys, cardarena, cardarena.locm, cardarena.locm.agents\n"
        "assert 'gymnasium' not in sys.modules and 'pettingzoo' not in sys.modules\n"
        "import cardarena.locm.envs, gymnasium\n"
        "assert 'cardarena/LOCM-battle-v0' in gymnasium.registry\n"
        "assert 'pettingzoo' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
