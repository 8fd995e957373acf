"""Train a LOCM battle policy with sb3-contrib's MaskablePPO, export it for numpy, evaluate it.

One policy learns the battle of LOCM 1.2 and 1.5 at once (both versions share the
battle layout; a flag in the input tells them apart), first against ``random``, then
against ``greedy``. Its own decks are built by the greedy agent's card scores. It
prints progress, writes a learning curve, exports the network to an ``.npz`` that
:class:`cardarena.locm.agents.learned.LearnedAgent` plays with numpy alone, and
evaluates that exported agent against ``random`` and ``greedy`` (95% Wilson intervals).

    pip install torch==2.13.0            # a CPU build first (see docs/envs.md)
    pip install -e ".[rl]"
    python examples/rl/train_battle.py --random-steps 20000 --greedy-steps 20000 --out /tmp/rl

``--vector`` trains on the batch engine's vector env instead (``pip install -e ".[fast]"``
too): one ``LOCMVectorEnv`` of ``--envs-per-version`` games per version behind
:class:`VectorBattleView`, sb3's VecEnv interface; its decks are built by random picks
(the compiled policies), the evaluation is the same.

The built-in ``learned`` agent was made with the command in docs/envs.md.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv

import cardarena.locm.envs  # noqa: F401  (registers the environment ids)
from cardarena.locm.agents.learned import (
    VERSIONS,
    LearnedAgent,
    Network,
    battle_features,
    battle_spec,
    feature_size,
)

SHAPING = {"health": 0.5, "board": 0.25}
"""Potential-based shaping while training (the evaluation counts wins only)."""
POINTS = 20
"""Learning-curve points per training phase (against random, then greedy)."""


class BattleView(gym.Wrapper):
    """A battle env seen through the learned agent's input and its battle actions only."""

    def __init__(self, env: gym.Env, version: str) -> None:
        super().__init__(env)
        self.version = version
        self.actions = battle_spec(version)[1]
        size = feature_size(version)
        self.observation_space = spaces.Box(-1.0, 1.0, (size,), np.float32)
        self.action_space = spaces.Discrete(self.actions)

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        return battle_features(observation, self.version), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return battle_features(observation, self.version), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()[: self.actions]


class VectorBattleView(VecEnv):
    """sb3's VecEnv over one batch-engine vector env per version, seen as BattleView sees a
    single env: the learned agent's features, the battle actions, ``action_masks`` through
    ``env_method`` (what MaskablePPO calls). sb3 resets finished envs in the same step and
    keeps their last observation in ``info["terminal_observation"]``: SAME_STEP autoreset."""

    def __init__(self, per_version: int, opponent: str, shaping: dict[str, float] | None,
                 seed: int) -> None:  # fmt: skip
        from gymnasium.vector import AutoresetMode

        from cardarena.locm.envs.vector_env import LOCMVectorBattleEnv

        self.vector_envs = [
            LOCMVectorBattleEnv(
                per_version,
                version,
                opponent=opponent,
                deck_policy="random",
                seat="random",
                shaping=shaping,
                copy=False,
                autoreset_mode=AutoresetMode.SAME_STEP,
            )
            for version in VERSIONS
        ]
        self.versions = [version for version in VERSIONS for _ in range(per_version)]
        self.specs = [battle_spec(version) for version in VERSIONS]
        self.actions = self.specs[0][1]
        assert all(spec[1] == self.actions for spec in self.specs)
        size = feature_size(VERSIONS[0])
        super().__init__(len(self.versions), spaces.Box(-1.0, 1.0, (size,), np.float32),
                         spaces.Discrete(self.actions))  # fmt: skip
        self._seed: int | None = seed
        self._actions = np.zeros(len(self.versions), np.int64)

    def _features(self, observations: np.ndarray, k: int) -> np.ndarray:
        prefix, _actions, scale = self.specs[k]
        flag = 1.0 if VERSIONS[k] == "1.5" else 0.0
        return np.hstack([observations[:, :prefix] / scale,
                          np.full((len(observations), 1), flag, np.float32)])  # fmt: skip

    def reset(self) -> np.ndarray:
        parts = []
        for k, env in enumerate(self.vector_envs):
            seed = None if self._seed is None else self._seed + 10_000 * k
            parts.append(self._features(env.reset(seed=seed)[0], k))
        self._seed = None
        return np.vstack(parts).astype(np.float32)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, np.int64)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        parts, rewards, dones, infos = [], [], [], []
        start = 0
        for k, env in enumerate(self.vector_envs):
            actions = self._actions[start : start + env.num_envs]
            start += env.num_envs
            obs, reward, terminated, truncated, info = env.step(actions)
            parts.append(self._features(obs, k))
            rewards.append(reward)
            done = terminated | truncated
            dones.append(done)
            final = info.get("final_obs")
            for i in range(env.num_envs):
                one = {"seat": int(info["seat"][i]), "winner": int(info["winner"][i])}
                if done[i]:
                    last = info["final_info"]
                    one = {"seat": int(last["seat"][i]), "winner": int(last["winner"][i]),
                           "terminal_observation": self._features(final[i][None], k)[0],
                           "TimeLimit.truncated": bool(truncated[i])}  # fmt: skip
                infos.append(one)
        return (np.vstack(parts).astype(np.float32), np.concatenate(rewards).astype(np.float32),
                np.concatenate(dones), infos)  # fmt: skip

    def close(self) -> None:
        for env in self.vector_envs:
            env.close()

    def seed(self, seed: int | None = None) -> list[int | None]:
        self._seed = seed
        return [seed] * self.num_envs

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        if attr_name == "version":
            return [self.versions[i] for i in self._get_indices(indices)]
        if attr_name == "render_mode":
            return [None for _ in self._get_indices(indices)]
        raise AttributeError(attr_name)

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(attr_name)

    def env_method(self, method_name: str, *args: Any, indices: Any = None,
                   **kwargs: Any) -> list[Any]:  # fmt: skip
        if method_name != "action_masks":
            raise AttributeError(method_name)
        masks = np.vstack([env.action_masks()[:, : self.actions] for env in self.vector_envs])
        return [masks[i] for i in self._get_indices(indices)]

    def has_attr(self, attr_name: str) -> bool:
        return attr_name in ("version", "action_masks")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]


def make_env(version: str, opponent: str, shaping: dict[str, float] | None = None):  # type: ignore[no-untyped-def]
    def thunk() -> gym.Env:
        env = gym.make("cardarena/LOCM-battle-v0", version=version, opponent=opponent,
                       deck_policy="greedy", seat="random", shaping=shaping)  # fmt: skip
        return BattleView(env, version)

    return thunk


class Progress(BaseCallback):
    """Prints the rolling win rate per version and records the learning curve.

    A point every ``every`` steps (the run's steps over :data:`POINTS`), the first one
    once every version has finished a game (before that the rate is not a number), and
    a last one at the end of the phase: each line of the picture has several points."""

    def __init__(
        self, phase: str, every: int, curve: list[dict[str, Any]], start: float, deadline: float
    ) -> None:
        super().__init__()
        self.phase, self.every, self.curve, self.start = phase, every, curve, start
        self.deadline = deadline
        self.results: dict[str, deque[int]] = {v: deque(maxlen=200) for v in VERSIONS}
        self._next = 0
        self._last = -1

    def _on_step(self) -> bool:
        versions = self.training_env.get_attr("version")  # type: ignore[union-attr]
        for version, done, info in zip(versions, self.locals["dones"], self.locals["infos"],
                                       strict=True):  # fmt: skip
            if done:
                self.results[version].append(int(info["winner"] == info["seat"]))
        if self.num_timesteps >= self._next and all(self.results.values()):
            self._next = self.num_timesteps + self.every
            self._point()
        if time.time() > self.deadline:
            print(f"--max-minutes reached at {self.num_timesteps} steps: stopping", flush=True)
            return False
        return True

    def _on_training_end(self) -> None:
        if self._last != self.num_timesteps and all(self.results.values()):
            self._point()

    def _point(self) -> None:
        self._last = self.num_timesteps
        rates = {v: sum(r) / len(r) for v, r in self.results.items()}
        games = min(len(r) for r in self.results.values())
        point = {"phase": self.phase, "steps": self.num_timesteps,
                 "seconds": round(time.time() - self.start, 1), **rates}  # fmt: skip
        self.curve.append(point)
        shown = "  ".join(f"{v}: {rate:6.1%}" for v, rate in rates.items())
        print(f"[{point['seconds']:7.0f} s] {self.phase:>6} steps {self.num_timesteps:>8}"
              f"  rolling win rate (last {games} games)  {shown}", flush=True)  # fmt: skip


def export(model: MaskablePPO, path: Path, meta: dict[str, Any]) -> Network:
    """The policy network as numpy arrays (tanh MLP, then the action logits)."""
    arrays: dict[str, np.ndarray] = {}
    linears = [m for m in model.policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    for i, layer in enumerate(linears):
        arrays[f"w{i}"] = layer.weight.detach().numpy().T.astype(np.float32)
        arrays[f"b{i}"] = layer.bias.detach().numpy().astype(np.float32)
    arrays["w_out"] = model.policy.action_net.weight.detach().numpy().T.astype(np.float32)
    arrays["b_out"] = model.policy.action_net.bias.detach().numpy().astype(np.float32)
    arrays["scale"] = battle_spec("1.5")[2]
    arrays["meta"] = np.array(json.dumps(meta))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)
    with np.load(path, allow_pickle=False) as data:
        return Network({key: data[key] for key in data.files})


def wilson(wins: int, games: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate."""
    if games == 0:
        return (0.0, 1.0)
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return (centre - half, centre + half)


def evaluate(network: Network, version: str, opponent: str, games: int) -> dict[str, Any]:
    """The exported agent's wins over ``games`` seeded games, seats alternating."""
    agent = LearnedAgent(network=network)
    env = gym.make("cardarena/LOCM-battle-v0", version=version, opponent=opponent,
                   deck_policy="greedy")  # fmt: skip
    inner = env.unwrapped
    wins = draws = 0
    for game in range(games):
        env.reset(seed=1000 + game, options={"seat": game % 2})
        terminated = False
        info: dict[str, Any] = {}
        while not terminated:
            action = inner.encoder.encode_action(inner.state, agent.act(inner.state))
            _obs, _reward, terminated, _truncated, info = env.step(action)
        wins += info["winner"] == info["seat"]
        draws += info["winner"] == -1
    low, high = wilson(wins, games)
    return {"version": version, "opponent": opponent, "games": games, "wins": wins,
            "draws": draws, "win_rate": wins / games, "wilson95": [low, high]}  # fmt: skip


def plot(curve: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for version in VERSIONS:
        for phase, style in (("random", "-"), ("greedy", "--")):
            points = [p for p in curve if p["phase"] == phase and not math.isnan(p[version])]
            ax.plot([p["steps"] for p in points], [p[version] for p in points], style,
                    marker=".", label=f"{version} vs {phase}")  # fmt: skip
    ax.set_xlabel("environment steps (learner actions)")
    ax.set_ylabel("win rate, last 200 games (or fewer)")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--random-steps", type=int, default=300_000)
    parser.add_argument("--greedy-steps", type=int, default=900_000)
    parser.add_argument("--envs-per-version", type=int, default=4)
    parser.add_argument("--eval-games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("rl-run"))
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=math.inf,
        help="stop training after this long (wall clock) and export",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--vector", action="store_true",
                        help="train on the batch engine's vector env (needs numba)")  # fmt: skip
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    curve: list[dict[str, Any]] = []

    def vec_env(opponent: str) -> VecEnv:
        if args.vector:
            return VectorBattleView(args.envs_per_version, opponent, SHAPING, args.seed)
        thunks = [make_env(v, opponent, SHAPING) for v in VERSIONS
                  for _ in range(args.envs_per_version)]  # fmt: skip
        env = DummyVecEnv(thunks)
        env.seed(args.seed)
        return env

    model = MaskablePPO(
        "MlpPolicy", vec_env("random"), seed=args.seed, verbose=0,
        n_steps=512, batch_size=512, n_epochs=4, learning_rate=3e-4, gamma=0.995,
        gae_lambda=0.95, ent_coef=0.01,
        policy_kwargs={"net_arch": {"pi": [256, 256], "vf": [256, 256]}},
    )  # fmt: skip
    deadline = start + args.max_minutes * 60
    rollout = model.n_steps * model.n_envs  # a phase plays at least one rollout
    for phase, asked in (("random", args.random_steps), ("greedy", args.greedy_steps)):
        trains = max(1, math.ceil(asked / rollout)) * rollout
        if trains != asked:  # PPO learns from whole rollouts: say so rather than surprise
            print(f"note: --{phase}-steps {asked} trains {trains} steps (whole rollouts of "
                  f"{model.n_steps} steps x {model.n_envs} envs = {rollout})",
                  flush=True)  # fmt: skip
    every = max(1, max(args.random_steps, rollout) // POINTS)
    model.learn(args.random_steps, callback=Progress("random", every, curve, start, deadline))
    model.set_env(vec_env("greedy"))
    every = max(1, max(args.greedy_steps, rollout) // POINTS)
    model.learn(args.greedy_steps, callback=Progress("greedy", every, curve, start, deadline),
                reset_num_timesteps=False)  # fmt: skip
    trained = time.time() - start
    model.save(args.out / "maskable_ppo_battle")
    meta = {"algorithm": "sb3-contrib MaskablePPO", "versions": list(VERSIONS),
            "random_steps": args.random_steps, "greedy_steps": args.greedy_steps,
            "steps": int(model.num_timesteps), "train_seconds": round(trained),
            "seed": args.seed, "shaping": SHAPING}  # fmt: skip
    network = export(model, args.out / "learned_battle.npz", meta)
    plot(curve, args.out / "learning_curve.png")
    print(f"trained {model.num_timesteps} steps in {trained:.0f} s; exported "
          f"{args.out / 'learned_battle.npz'}", flush=True)  # fmt: skip
    results = []
    for version in VERSIONS:
        for opponent in ("random", "greedy"):
            result = evaluate(network, version, opponent, args.eval_games)
            results.append(result)
            low, high = result["wilson95"]
            print(f"{version} vs {opponent:>6}: {result['wins']}/{result['games']} wins "
                  f"({result['win_rate']:.1%}, 95% CI {low:.1%}-{high:.1%})",
                  flush=True)  # fmt: skip
    summary = {"meta": meta, "evaluation": results, "curve": curve,
               "total_seconds": round(time.time() - start)}  # fmt: skip
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
