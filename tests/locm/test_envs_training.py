"""The training side (needs the rl extra: torch, sb3-contrib): skipped without it.

docs/envs.md's MaskablePPO quick start and self-play snippet run as written, and the envs
work under Stable-Baselines3's SubprocVecEnv.
"""

from __future__ import annotations

import json
import math
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


def smoke_command() -> list[str]:
    """docs/envs.md's quick check of examples/rl/train_battle.py, as written there."""
    text = DOC.read_text()
    block = text.split("<!-- train-battle-smoke -->\n```sh\n", 1)[1].split("```", 1)[0]
    words = block.split()
    assert words[:2] == ["python", "examples/rl/train_battle.py"], block
    return words[2:]


def test_train_battle_example_trains_on_the_vector_env(tmp_path: Path) -> None:
    """docs/envs.md's quick check: examples/rl/train_battle.py --vector, MaskablePPO on the
    batch engine's vector env (sb3's VecEnv adapter in the example), exported and
    evaluated like the plain run, its learning curve made of numbers."""
    pytest.importorskip("numba")
    root = Path(__file__).resolve().parents[2]
    example = root / "examples" / "rl" / "train_battle.py"
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "SB3_LOGDIR": str(tmp_path / "sb3"), "PYTHONPATH": path}
    args = smoke_command()
    args[args.index("--out") + 1] = str(tmp_path / "run")
    done = subprocess.run([sys.executable, str(example), *args], env=env, capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    trained = re.search(r"trained (\d+) steps", done.stdout)
    assert trained, done.stdout
    # each phase trains whole rollouts, and says so where that is more than was asked
    notes = re.findall(r"note: --(\w+)-steps (\d+) trains (\d+) steps", done.stdout)
    asked = {"random": args[args.index("--random-steps") + 1],
             "greedy": args[args.index("--greedy-steps") + 1]}  # fmt: skip
    said = {phase: int(trains) for phase, given, trains in notes if asked[phase] == given}
    expected = sum(said.get(phase, int(given)) for phase, given in asked.items())
    assert int(trained.group(1)) == expected, done.stdout
    assert (tmp_path / "run" / "learned_battle.npz").exists()
    rates = re.findall(r"rolling win rate \(last \d+ games\)\s+1\.2:\s+(\S+)%", done.stdout)
    assert rates and all(math.isfinite(float(rate)) for rate in rates), done.stdout
    curve = json.loads((tmp_path / "run" / "summary.json").read_text())["curve"]
    for phase in ("random", "greedy"):
        for version in ("1.2", "1.5"):
            points = [p[version] for p in curve if p["phase"] == phase]
            finite = [v for v in points if v is not None and math.isfinite(v)]
            assert len(finite) >= 5, (phase, version, points)
    assert (tmp_path / "run" / "learning_curve.png").stat().st_size > 0
