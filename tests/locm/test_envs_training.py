"""The training side (needs the rl extra: torch, sb3-contrib): skipped without it.

docs/envs.md's MaskablePPO quick start and self-play snippet run as written, and the envs
work under Stable-Baselines3's SubprocVecEnv.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("sb3_contrib")

DOC = Path(__file__).resolve().parents[2] / "docs" / "envs.md"
MARKER = "<!-- rl-quickstart -->\n```python\n"


def quickstart_code() -> str:
    text = DOC.read_text()
    blocks = [part.split("```", 1)[0] for part in text.split(MARKER)[1:]]
    assert len(blocks) == 2, "the quick start and the self-play snippet"
    return "\n".join(blocks)


def test_docs_quickstart_trains_and_self_plays(tmp_path: Path) -> None:
    # SB3's default logger makes a folder under /tmp unless SB3_LOGDIR says where.
    env = {**os.environ, "SB3_LOGDIR": str(tmp_path / "sb3")}
    done = subprocess.run([sys.executable, "-c", quickstart_code()], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    match = re.search(r"won (\d+) of 20 games against random", done.stdout)
    assert match is not None, done.stdout
    assert int(match.group(1)) >= 10  # greedy's decks against random ones, a trained battle


def make_battle_env():  # type: ignore[no-untyped-def]
    import gymnasium as gym

    import cardarena.locm.envs  # noqa: F401  (in the subprocess too: the factory pickles)

    return gym.make("cardarena/LOCM-battle-v0", version="1.2", opponent="greedy")


def test_sb3_subproc_vec_env() -> None:
    from stable_baselines3.common.vec_env import SubprocVecEnv

    envs = SubprocVecEnv([make_battle_env, make_battle_env], start_method="spawn")
    try:
        envs.seed(5)
        envs.reset()
        for _ in range(50):
            masks = np.stack(envs.env_method("action_masks"))
            actions = np.array([np.flatnonzero(mask)[0] for mask in masks])
            _obs, _rewards, _dones, infos = envs.step(actions)
            assert all(info["action_mask"].shape == (166,) for info in infos)
    finally:
        envs.close()


def test_train_battle_example_trains_on_the_vector_env(tmp_path: Path) -> None:
    """examples/rl/train_battle.py --vector: MaskablePPO on the batch engine's vector env
    (sb3's VecEnv adapter in the example), exported and evaluated like the plain run."""
    pytest.importorskip("numba")
    example = Path(__file__).resolve().parents[2] / "examples" / "rl" / "train_battle.py"
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "SB3_LOGDIR": str(tmp_path / "sb3"),
           "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    command = [sys.executable, str(example), "--vector", "--envs-per-version", "4",
               "--random-steps", "2048", "--greedy-steps", "2048", "--eval-games", "2",
               "--out", str(tmp_path / "run")]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(r"trained (\d+) steps", done.stdout), done.stdout
    assert (tmp_path / "run" / "learned_battle.npz").exists()
    assert (tmp_path / "run" / "summary.json").exists()
