"""benchmarks/search_value.py: positions of search games, a network fine-tuned on them,
and search-v3 playing with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
import pytest

from cardarena.locm.agents.greedy import GreedyAgent
from cardarena.locm.agents.learned_v2 import FEATURES, ValueNetwork, position_features
from cardarena.locm.engine.state import Action, ActionType, Phase, State
from tests.locm.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "search_value.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script(SCRIPT, "search_value")


class _Recording(GreedyAgent):
    """A greedy stand-in for the searches that records what the benchmark should: the
    waiting player's features whenever it passes in battle."""

    seen: ClassVar[list[tuple[int, np.ndarray]]] = []

    def __init__(self, seed: int | None = None, time_scale: float = 1.0, **options: Any) -> None:
        super().__init__(seed, **options)

    def act(self, state: State) -> Action:
        action = super().act(state)
        if action.type == ActionType.PASS and state.phase != Phase.DECK_BUILDING:
            waiting = 1 - state.active
            self.seen.append((waiting, position_features(state, waiting)))
        return action


def test_a_generated_game_records_the_waiting_players_view_before_each_pass(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench, "SearchAgentV3", _Recording)
    monkeypatch.setattr(bench, "SearchAgent", _Recording)
    for seed in (4, 5):
        _Recording.seen = []
        game = bench.play_game((seed, 1.0))
        expected = _Recording.seen
        assert len(expected) >= 4 and game["x"].shape == (len(expected), FEATURES)
        assert np.array_equal(game["seat"], [seat for seat, _x in expected])
        assert np.array_equal(game["x"], np.array([x for _seat, x in expected]))
        assert set(game["game"].tolist()) == {seed}
        # One player won: every position of one seat is labelled 1, of the other 0.
        won = {int(s): float(y) for s, y in zip(game["seat"], game["y"], strict=True)}
        assert sorted(won.values()) == [0.0, 1.0]
        assert np.array_equal(game["y"], [won[int(s)] for s in game["seat"]])


def test_a_real_search_game_is_recorded_too(bench: ModuleType) -> None:
    game = bench.play_game((7, 0.05))
    assert len(game["y"]) >= 4 and np.isfinite(game["x"]).all()
    assert set(np.unique(game["y"]).tolist()) == {0.0, 1.0}


def test_fine_tuning_fits_the_labels(bench: ModuleType) -> None:
    rng = np.random.default_rng(3)
    hidden = 8
    size = FEATURES * hidden + hidden * hidden + 3 * hidden + 1
    teacher = ValueNetwork(rng.normal(0, 0.8, size), hidden)
    start = ValueNetwork(rng.normal(0, 0.3, size), hidden)
    x = rng.normal(0, 1, (4000, FEATURES))
    y = (rng.random(4000) < teacher.values(x)).astype(np.float64)
    tuned = bench.fine_tune(x, y, start, epochs=8, learning_rate=3e-3)
    before, after = bench.log_loss(start, x, y), bench.log_loss(tuned, x, y)
    assert after < before - 0.05
    assert tuned.hidden == hidden and bench.log_loss(teacher, x, y) < before


def test_calibration_counts_the_positions_of_each_tenth_and_their_wins(
    bench: ModuleType,
) -> None:
    rng = np.random.default_rng(5)
    hidden = 4
    network = ValueNetwork(
        rng.normal(0, 1.0, FEATURES * hidden + hidden * hidden + 3 * hidden + 1), hidden
    )
    x = rng.normal(0, 1, (500, FEATURES))
    p = network.values(x)
    y = (p > 0.5).astype(np.float64)
    table = bench.calibration(network, x, y)
    assert len(table) == 10 and sum(count for count, _won in table) == 500
    for k, (count, won) in enumerate(table):
        inside = (p >= k / 10) & ((p < (k + 1) / 10) | (k == 9))
        assert count == int(inside.sum())
        if count:
            assert won == (1.0 if k >= 5 else 0.0)


def test_the_commands_generate_fit_and_play(bench: ModuleType, tmp_path: Path) -> None:
    positions, weights = tmp_path / "positions.npz", tmp_path / "value.npy"
    run = [sys.executable, str(SCRIPT)]
    done = subprocess.run(
        [*run, "generate", "--games", "3", "--time-scale", "0.05", "--out", str(positions)],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with np.load(positions) as data:
        assert len(set(data["game"].tolist())) == 3 and data["x"].shape[1] == FEATURES
        count = len(data["y"])
    assert f"3 games, {count} positions" in done.stdout
    assert not positions.with_name(positions.name + ".partial").exists()
    done = subprocess.run(
        [*run, "fit", str(positions), "--out", str(weights), "--epochs", "2"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "held-out log-loss: learned-v2 " in done.stdout
    agent = bench.FineTunedSearch(1, weights=weights)
    x = np.random.default_rng(0).normal(0, 1, (5, FEATURES))
    network = ValueNetwork(np.load(weights), 64)
    assert np.allclose(agent._networks["1.5"].values(x), network.values(x))
    assert not np.allclose(agent._networks["1.2"].values(x), network.values(x))
    env = {**os.environ, bench.ENV_VAR: str(weights)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "agents.py"), "--pair",
         "python:search_value:fine_tuned,search-v1", "--deck", "fitted", "--games", "2",
         "--workers", "1", "--json"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)
    assert result["wins"] + result["losses"] + result["draws"] == 2


def test_the_agent_needs_its_weights(bench: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(bench.ENV_VAR, raising=False)
    with pytest.raises(ValueError, match=bench.ENV_VAR):
        bench.fine_tuned(1)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["generate", "--games", "0", "--out", "x.npz"], "--games and --workers must be"),
        (["generate", "--time-scale", "0", "--out", "x.npz"], "--time-scale above 0"),
        (["fit", "README.md", "--out", "x.npy"], "README.md: not a positions file"),
        (["fit", "missing.npz", "--out", "x.npy"], "missing.npz: not a positions file"),
        (["fit", "README.md", "--out", "x.npy", "--epochs", "0"], "--epochs must be"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    bench: ModuleType, arguments: list[str], message: str
) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *arguments],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert message in done.stderr.strip().splitlines()[-1]


def test_a_positions_file_without_its_games_is_refused(tmp_path: Path) -> None:
    partial = tmp_path / "no-games.npz"
    np.savez(partial, x=np.zeros((3, FEATURES)), y=np.zeros(3))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "fit", str(partial), "--out", str(tmp_path / "w.npy")],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no-games.npz: not a positions file" in done.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "w.npy").exists()
