"""What the environments accept from a learner: integer actions in range (no silent
int() of a float, a string or a bool), finite shaping weights, and PettingZoo's rules
for steps after the end."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

from pettingzoo.utils.env_logger import EnvLogger  # noqa: E402

from cardarena.locm import IllegalActionError  # noqa: E402
from cardarena.locm.envs import aec_env  # noqa: E402
from cardarena.locm.envs.gym_env import LOCMEnv  # noqa: E402

NOT_INTEGERS = [1.9, 0.0, "0", True, False, np.float64(1.0), np.bool_(True), None, [0], b"0"]
BAD_WEIGHTS = [math.nan, math.inf, -math.inf, "1", True, None, [1.0]]


def _legal(env: Any) -> int:
    return int(np.flatnonzero(env.action_masks())[0])


@pytest.mark.parametrize("action", NOT_INTEGERS, ids=repr)
def test_single_env_step_refuses_what_is_not_an_integer(action: Any) -> None:
    env = LOCMEnv("1.2", mode="battle")
    env.reset(seed=4)
    before = env.state.to_dict()
    with pytest.raises(TypeError, match=r"an action is an integer .* got .*\(\w+\)"):
        env.step(action)
    assert env.state.to_dict() == before  # nothing played


def test_single_env_step_takes_ints_numpy_integers_and_refuses_out_of_range() -> None:
    env = LOCMEnv("1.5", mode="battle")
    env.reset(seed=2)
    env.step(np.int64(_legal(env)))
    env.step(np.array(_legal(env), dtype=np.int32))  # a 0-d integer array
    env.step(np.uint8(_legal(env)))
    size = env.action_space.n
    for index in (-1, size, 10**12):
        with pytest.raises(
            IllegalActionError, match=rf"action {index} is outside .* 0\.\.{size - 1}"
        ):
            env.step(index)


@pytest.mark.parametrize("weight", BAD_WEIGHTS, ids=repr)
def test_shaping_weights_must_be_finite_numbers(weight: Any) -> None:
    with pytest.raises(ValueError, match=r"shaping\['health'\]: the weight is a finite number"):
        LOCMEnv("1.5", shaping={"health": weight})
    with pytest.raises(ValueError, match=r"shaping\['health'\]: the weight is a finite number"):
        gym.make("cardarena/LOCM-battle-v0", shaping={"health": weight})


def test_finite_shaping_gives_finite_rewards() -> None:
    env = LOCMEnv("1.2", mode="battle", shaping={"health": np.float32(0.5), "board": 1})
    env.reset(seed=6)
    for _ in range(40):
        _, reward, terminated, _, _ = env.step(_legal(env))
        assert math.isfinite(reward)
        if terminated:
            break


def test_vector_env_step_refuses_actions_that_are_not_integers() -> None:
    pytest.importorskip("numba")
    from cardarena.locm.envs.vector_env import LOCMVectorEnv

    env = LOCMVectorEnv(2, "1.2", "battle")
    env.reset(seed=3)
    masks = env.action_masks()
    legal = [int(np.flatnonzero(row)[0]) for row in masks]
    for actions in ([1.9, 0], np.array([True, False]), ["0", "0"], [legal[0], None]):
        with pytest.raises(TypeError, match="actions are integers"):
            env.step(actions)
    with pytest.raises(ValueError, match="step\\(\\) takes 2 actions"):
        env.step([0, 0, 0])
    for weight in BAD_WEIGHTS:
        with pytest.raises(ValueError, match="the weight is a finite number"):
            LOCMVectorEnv(2, "1.2", shaping={"board": weight})
    env.step(np.array(legal, dtype=np.int32))  # integer arrays of any width are fine


def _play_to_the_end(env: Any) -> None:
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
        else:
            env.step(int(np.flatnonzero(observation["action_mask"])[0]))
        assert agent in env.possible_agents


def test_pettingzoo_step_checks_actions_and_the_end_follows_the_api() -> None:
    env = aec_env("1.5")
    env.reset(seed=9)
    for action in NOT_INTEGERS:
        if action is None:
            continue  # PettingZoo's "no action": refused below for a live agent
        with pytest.raises(TypeError, match="an action is an integer"):
            env.step(action)
    with pytest.raises(IllegalActionError, match="is outside the action space"):
        env.step(10**9)
    with pytest.raises(IllegalActionError, match="must act"):
        env.step(None)
    _play_to_the_end(env)
    assert env.agents == [] and env.state.is_terminal
    # After the end, PettingZoo's order-enforcing wrapper warns and does nothing.
    EnvLogger.flush()
    env.step(None)
    env.step(0)
    assert any("step() called after all agents are terminated" in m for m in EnvLogger.mqueue)
    EnvLogger.flush()
    env.reset(seed=9)
    assert env.agents == ["player_0", "player_1"]


def test_pettingzoo_dead_agents_take_only_none() -> None:
    env = aec_env("1.2")
    env.reset(seed=5)
    while not env.state.is_terminal:
        observation, *_ = env.last()
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    with pytest.raises(ValueError, match="when an agent is dead, the only valid action is None"):
        env.step(0)
    env.step(None)
    env.step(None)
    assert env.agents == []


NOT_SEEDS = ["abc", "7", 7.0, True, np.float64(7.0), [7], b"7"]


@pytest.mark.parametrize("seed", NOT_SEEDS, ids=repr)
def test_a_reset_seed_that_is_not_an_integer_is_named(seed: Any) -> None:
    # `seed & 0xFFFF...` once raised "unsupported operand type(s) for &" instead
    message = r"a reset seed is an integer \(the official game seed\), got .*\(\w+\)"
    with pytest.raises(TypeError, match=message):
        LOCMEnv("1.2", mode="battle").reset(seed=seed)
    with pytest.raises(TypeError, match=message):
        aec_env("1.5").reset(seed=seed)


def test_a_reset_seed_outside_64_bits_is_refused_and_numpy_integers_are_taken() -> None:
    env = LOCMEnv("1.2", mode="battle")
    with pytest.raises(ValueError, match="64-bit signed integer, got 9223372036854775808"):
        env.reset(seed=2**63)
    env.reset(seed=np.int64(-5))
    assert env.state.params.seed == -5


def test_vector_env_reset_names_a_seed_that_is_not_an_integer() -> None:
    pytest.importorskip("numba")
    from cardarena.locm.envs.vector_env import LOCMVectorEnv

    env = LOCMVectorEnv(2, "1.2", "battle")
    for seed in ("abc", 7.0, [3, "x"]):
        with pytest.raises(TypeError, match="a reset seed is an integer"):
            env.reset(seed=seed)
    env.reset(seed=np.int32(3))
    env.reset(seed=[3, None])  # None in a list: that env draws its own seed
