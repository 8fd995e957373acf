"""The vector env on the batch engine against N single envs, and its Gymnasium contract.

Equal by design (checked here step by step, through autoresets): observations, masks,
rewards, terminations, truncations and infos of ``LOCMVectorEnv`` and of a
``SyncVectorEnv`` of single ``LOCMEnv`` s given the same seeds, options and actions,
whenever the policies are callables (deterministic in the arrays they get). With the
compiled ``random`` policy the games differ from the single env's (another random
stream), so there every step is checked against the reference engine instead: the
masks and observations of ``env.state(i)``.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
pytest.importorskip("numba")

from gymnasium.utils.env_checker import data_equivalence  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

from cardarena.locm import IllegalActionError  # noqa: E402
from cardarena.locm.encoding.encoder import Encoder  # noqa: E402
from cardarena.locm.envs import ENV_IDS  # noqa: E402
from cardarena.locm.envs.vector_env import (  # noqa: E402
    LOCMVectorBattleEnv,
    LOCMVectorDeckBuildingEnv,
    LOCMVectorEnv,
)
from cardarena.locm.fast import INSTALL_HINT  # noqa: E402

VERSIONS = ("1.0", "1.2", "1.5")


def _pick(observation: np.ndarray, mask: np.ndarray) -> int:
    """A deterministic legal action that depends on the whole observation."""
    legal = np.flatnonzero(mask)
    if not legal.size:
        return 0
    weights = np.arange(observation.shape[-1]) % 7 + 1
    return int(legal[int(observation.astype(np.int64) @ weights) % legal.size])


def policy(observation: np.ndarray, mask: np.ndarray) -> Any:
    """The same callable for both: one row for a single env, k rows for the vector env."""
    if observation.ndim == 1:
        return _pick(observation, mask)
    return np.array([_pick(o, m) for o, m in zip(observation, mask, strict=True)])


def _equal_infos(vector: dict[str, Any], sync: dict[str, Any]) -> None:
    assert sorted(vector) == sorted(sync)
    for key, value in sync.items():
        if key == "final_obs":
            for a, b in zip(vector[key], value, strict=True):
                assert data_equivalence(a, b, exact=True), key
            continue
        if key == "final_info":
            _equal_infos(vector[key], value)
            continue
        assert vector[key].dtype == value.dtype, key
        assert np.array_equal(vector[key], value), (key, vector[key], value)


@pytest.mark.parametrize(
    ("version", "mode", "autoreset", "seat"),
    [("1.0", "game", "next", "random"), ("1.2", "battle", "next", "random"),
     ("1.5", "deckbuilding", "next", "random"), ("1.5", "battle", "same", "random"),
     ("1.2", "game", "same", "random"),
     # A fixed seat: autoresets take the one-draw path of the env's generator.
     ("1.5", "battle", "next", 1), ("1.2", "game", "next", 0)],
)  # fmt: skip
def test_equal_to_single_envs_step_by_step(
    version: str, mode: str, autoreset: str, seat: int | str
) -> None:
    n = 3
    autoreset_mode = AutoresetMode.NEXT_STEP if autoreset == "next" else AutoresetMode.SAME_STEP
    options = dict(opponent=policy, deck_policy=policy, battle_policy=policy, seat=seat,
                   shaping={"board": 0.25, "health": 0.5})  # fmt: skip
    vector = LOCMVectorEnv(n, version, mode, autoreset_mode=autoreset_mode, **options)
    sync = gym.vector.SyncVectorEnv(
        [lambda: gym.make("cardarena/LOCM-v0", version=version, mode=mode, **options)] * n,
        autoreset_mode=autoreset_mode,
    )
    assert vector.single_observation_space == sync.single_observation_space
    assert vector.observation_space == sync.observation_space
    a = vector.reset(seed=21)
    b = sync.reset(seed=21)
    assert np.array_equal(a[0], b[0])
    _equal_infos(a[1], b[1])
    episodes = 0
    observations, masks = a[0], a[1]["action_mask"]
    for _ in range(400 if mode != "deckbuilding" else 150):
        actions = policy(observations, masks)
        a = vector.step(actions)
        b = sync.step(actions)
        assert np.array_equal(a[0], b[0])
        for x, y in zip(a[1:4], b[1:4], strict=True):
            assert x.dtype == y.dtype and np.array_equal(x, y), (x, y)
        _equal_infos(a[4], b[4])
        assert np.array_equal(vector.action_masks(), a[4]["action_mask"])
        episodes += int(a[2].sum())
        observations, masks = a[0], a[4]["action_mask"]
    assert episodes >= n, "the run must go through autoresets"
    # A reset with options, then on.
    a = vector.reset(seed=[5, 6, 7], options={"seat": 1, "params": {"shufflePlayer0Seed": 3}})
    b = sync.reset(seed=[5, 6, 7], options={"seat": 1, "params": {"shufflePlayer0Seed": 3}})
    assert np.array_equal(a[0], b[0])
    _equal_infos(a[1], b[1])
    sync.close()
    vector.close()


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("mode", ["game", "battle", "deckbuilding"])
def test_compiled_random_policies_play_by_the_reference_rules(version: str, mode: str) -> None:
    """Every step: masks and observations are the reference engine's for the game the
    batch holds, rewards are its returns, and episodes end and restart."""
    env = LOCMVectorEnv(4, version, mode, seat="random", copy=False)
    encoder = Encoder(version)
    obs, info = env.reset(seed=3)
    ended = 0
    for step in range(120):
        if step % 3 == 0:
            for i in range(env.num_envs):
                state = env.state(i)
                seat = int(info["seat"][i])
                assert np.array_equal(obs[i], encoder.observe(state, seat))
                assert np.array_equal(info["action_mask"][i], encoder.mask(state))
                if not state.is_terminal:
                    assert state.current_player == seat
        actions = env.action_space.sample()
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert env.observation_space.contains(obs)
        assert not truncated.any()
        for i in np.flatnonzero(terminated):
            state = env.state(i)
            assert state.is_terminal and rewards[i] == state.returns()[int(info["seat"][i])]
            assert not info["action_mask"][i].any()
        ended += int(terminated.sum())
    if mode == "deckbuilding":
        assert ended >= 4


def test_reset_seeds_repeat_and_illegal_actions_change_nothing() -> None:
    env = LOCMVectorEnv(3, "1.2", "battle", seat="random")
    first = [env.reset(seed=9)[0]]
    for _ in range(30):
        first.append(env.step(policy(first[-1], env.action_masks()))[0])
    again = [env.reset(seed=9)[0]]
    for _ in range(30):
        again.append(env.step(policy(again[-1], env.action_masks()))[0])
    assert all(np.array_equal(x, y) for x, y in zip(first, again, strict=True))
    before = env.state(1).to_dict()
    actions = policy(again[-1], env.action_masks())
    actions[1] = int(np.flatnonzero(~env.action_masks()[1])[-1])
    with pytest.raises(IllegalActionError, match=r"env 1: action \d+ \(.*\) is not legal"):
        env.step(actions)
    assert env.state(1).to_dict() == before
    with pytest.raises(ValueError, match="3 actions"):
        env.step(np.zeros(2, np.int64))
    with pytest.raises(RuntimeError, match="reset"):
        LOCMVectorEnv(2, "1.2").step(np.zeros(2, np.int64))


def test_a_callable_choosing_an_illegal_action_is_named() -> None:
    env = LOCMVectorEnv(2, "1.5", "battle", opponent=lambda obs, masks: np.full(len(obs), 2))
    with pytest.raises(IllegalActionError, match="the opponent policy chose action 2"):
        env.reset(seed=1)
        for _ in range(50):
            env.step(env.action_space.sample())


def test_options_and_policies_are_checked() -> None:
    with pytest.raises(ValueError, match="batched callable"):
        LOCMVectorEnv(2, opponent="search")
    with pytest.raises(ValueError, match="unknown shaping term"):
        LOCMVectorEnv(2, shaping={"mana": 1.0})
    with pytest.raises(ValueError, match="seat"):
        LOCMVectorEnv(2, seat=2)
    env = LOCMVectorEnv(2, "1.2")
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"sat": 1})
    with pytest.raises(ValueError, match="3 seeds for 2 envs"):
        env.reset(seed=[1, 2, 3])


def test_reset_mask_resets_only_the_masked_envs() -> None:
    env = LOCMVectorEnv(3, "1.5", "battle")
    env.reset(seed=1)
    for _ in range(5):
        obs, *_rest = env.step(env.action_space.sample())
    kept = env.state(0).to_dict()
    fresh = LOCMVectorEnv(3, "1.5", "battle").reset(seed=[40, 41, 42])[0]
    obs, _info = env.reset(seed=[None, 41, None], options={"reset_mask": np.array([0, 1, 0], bool)})
    assert env.state(0).to_dict() == kept
    assert np.array_equal(obs[1], fresh[1])


@pytest.mark.parametrize(
    ("env_id", "cls"),
    list(
        zip(ENV_IDS, (LOCMVectorEnv, LOCMVectorDeckBuildingEnv, LOCMVectorBattleEnv), strict=True)
    ),
)
def test_make_vec_returns_the_vector_env(env_id: str, cls: type) -> None:
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", version="1.2")
    assert type(envs) is cls and envs.num_envs == 3
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    obs, info = envs.reset(seed=0)
    assert obs.shape == (3, 416) and info["action_mask"].shape == (3, 166)
    assert envs.spec is not None and envs.spec.id == env_id
    # Without a mode, make_vec uses the vector entry point too.
    assert type(gym.make_vec(env_id, num_envs=2)) is cls
    envs.close()


def test_without_numba_make_vec_says_how_to_install_it() -> None:
    script = (
        "import sys; sys.modules['numba'] = None\n"
        "import gymnasium as gym, cardarena.locm.envs\n"
        "env = gym.make('cardarena/LOCM-battle-v0'); env.reset(seed=1)\n"
        "try:\n"
        "    gym.make_vec('cardarena/LOCM-battle-v0', 2, vectorization_mode='vector_entry_point')\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)  # fmt: skip
    assert result.stdout.strip() == f"FastEngineUnavailable {INSTALL_HINT}"


@pytest.mark.parametrize("version", VERSIONS)
def test_compiled_greedy_opponent_plays_legal_games_to_the_end(version: str) -> None:
    env = LOCMVectorEnv(3, version, "battle", opponent="greedy", deck_policy="greedy")
    encoder = Encoder(version)
    obs, info = env.reset(seed=4)
    ended = 0
    for _ in range(150):
        obs, _rewards, terminated, _truncated, info = env.step(env.action_space.sample())
        for i in range(env.num_envs):
            state = env.state(i)
            assert np.array_equal(info["action_mask"][i], encoder.mask(state))
            assert np.array_equal(obs[i], encoder.observe(state, 0))
        ended += int(terminated.sum())
    assert ended >= 1


@pytest.mark.parametrize("version", ["1.2", "1.5"])
def test_threads_change_nothing(version: str) -> None:
    """The batch stepped in slices on two threads (resets beside the stepping) gives the
    very trajectories of one thread, callables and compiled policies mixed."""
    runs = []
    for threads in (1, 2):
        env = LOCMVectorEnv(256, version, "game", opponent=policy, battle_policy="greedy",
                            seat="random", threads=threads, copy=True)  # fmt: skip
        assert len(env._slices) == threads
        obs, info = env.reset(seed=11)
        trajectory = [obs]
        for _ in range(70):
            obs, rewards, terminated, _truncated, info = env.step(policy(obs, info["action_mask"]))
            trajectory += [obs, rewards, terminated, info["action_mask"], info["seat"]]
        assert sum(int(t.sum()) for t in trajectory[3::5]) > 0, "some games must restart"
        runs.append(trajectory)
        env.close()
    assert all(np.array_equal(a, b) for a, b in zip(*runs, strict=True))


def test_one_raw_draw_is_the_single_envs_four_integer_draws() -> None:
    """The autoreset path draws four raw words where the single env calls integers()
    four times (a full-range long, three below 2**63): numpy's results are the words
    offset and halved. If numpy ever draws otherwise, this fails before any game does."""
    from gymnasium.utils import seeding

    from cardarena.locm.engine.javarandom import JAVA_LONG_MAX, JAVA_LONG_MIN

    for seed in range(50):
        single, vector = seeding.np_random(seed)[0], seeding.np_random(seed)[0]
        for _ in range(3):
            expected = [int(single.integers(JAVA_LONG_MIN, JAVA_LONG_MAX, endpoint=True))]
            expected += [int(single.integers(2**63)) for _ in range(3)]
            raw = vector.bit_generator.random_raw(4)
            assert [int(raw[0]) - 2**63, *(int(w) >> 1 for w in raw[1:])] == expected
