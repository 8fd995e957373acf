"""builtin:learned (learned-v2): the numpy agent equals its compiled training twin, plays
legally, ships numpy-only weights, and its training command runs end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cardarena.locm import State
from cardarena.locm.agents import AGENT_VERSIONS, GreedyAgent, RandomAgent, make_agent
from cardarena.locm.agents.cardscore import FITTED_DECK
from cardarena.locm.agents.learned_v2 import (
    FEATURES,
    WEIGHTS_FILE,
    LearnedAgentV2,
    ValueNetwork,
    load_weights,
    position_features,
)
from cardarena.locm.engine.state import Phase
from tests.locm.fast_differential import battle_positions
from tests.locm.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


def _numba() -> None:
    pytest.importorskip("numba", reason="the compiled engine needs numba (the fast extra)")


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_the_features_equal_the_compiled_ones(version: str) -> None:
    _numba()
    from cardarena.locm.fast import playouts, selfplay
    from cardarena.locm.fast.convert import row_from_state

    assert selfplay.FEATURES == FEATURES
    x = np.empty(FEATURES)
    lanes = np.empty(4)
    positions = battle_positions(version, 10, 40)
    assert len(positions) > 120
    seen = np.zeros(FEATURES, bool)
    for state in positions:
        row, cards = row_from_state(state)
        for player in (0, 1):
            selfplay.position(row, cards, player, playouts.GREEDY_WEIGHTS, x, lanes)
            expected = position_features(state, player)
            assert np.allclose(x, expected, rtol=0, atol=1e-12), (version, state.turn, player)
            seen |= expected != 0
    assert seen.sum() >= FEATURES - (8 if version == "1.0" else 4)  # 1.0: lane 1 stays empty


def test_the_network_equals_the_compiled_one() -> None:
    _numba()
    from cardarena.locm.fast import selfplay

    rng = np.random.default_rng(3)
    hidden = 16
    flat = rng.normal(0, 0.4, FEATURES * hidden + hidden * hidden + 3 * hidden + 1)
    network = ValueNetwork(flat, hidden)
    x = rng.normal(0, 1, (50, FEATURES))
    compiled = [selfplay.value(flat, hidden, row, np.empty(hidden), np.empty(hidden)) for row in x]
    assert np.allclose(network.values(x), compiled, rtol=0, atol=1e-12)
    assert np.std(compiled) > 0.05  # the inputs matter
    with pytest.raises(ValueError, match="16 hidden units"):
        ValueNetwork(flat[:-1], hidden)


def test_the_shipped_weights_load_without_pickle() -> None:
    with np.load(WEIGHTS_FILE, allow_pickle=False) as data:
        files = set(data.files)
        meta = json.loads(str(data["meta"]))
    assert {"meta", "net/1.0", "net/1.2", "net/1.5", "hidden/1.2"} <= files
    assert meta["command"].startswith("python scripts/train_learned.py")
    for version in ("1.0", "1.2", "1.5"):
        assert meta["versions"][version]["iterations"] > 0
        assert meta["versions"][version]["games"] > 0
    assert set(load_weights().networks) == {"1.0", "1.2", "1.5"}
    assert "learned" not in AGENT_VERSIONS and "learned-v2" not in AGENT_VERSIONS  # all three


def play(version: str, seed: int, seat: int, opponent: object) -> tuple[State, int]:
    """A whole game of learned-v2 against ``opponent``; State.apply raises on an illegal
    action. Returns the final state and how many actions learned-v2 took."""
    state = State.new(version, {"seed": seed})
    agents = [opponent, opponent]
    agents[seat] = make_agent("learned", seed)
    taken = 0
    while not state.is_terminal:
        player = state.current_player
        action = agents[player].act(state)  # type: ignore[attr-defined]
        taken += player == seat
        state.apply(action)
    return state, taken


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_plays_whole_games_legally(version: str) -> None:
    assert isinstance(make_agent("learned"), LearnedAgentV2)
    assert isinstance(make_agent("learned-v2"), LearnedAgentV2)
    wins = 0
    for seed in range(4):
        opponent = RandomAgent(seed) if seed < 2 else GreedyAgent(seed)
        state, taken = play(version, seed, seed % 2, opponent)
        assert taken > 30  # deck building and a battle
        wins += state.winner == seed % 2
    assert wins >= 2


def test_builds_the_fitted_deck() -> None:
    assert LearnedAgentV2().deck_policy is FITTED_DECK  # locm bot builds with it too


def _training_script():  # type: ignore[no-untyped-def]
    return load_script(ROOT / "scripts" / "train_learned.py", "train_learned")


def test_the_training_command_runs_end_to_end(tmp_path: Path) -> None:
    _numba()
    script = _training_script()
    out, curve = tmp_path / "w.npz", tmp_path / "curve.csv"
    args = ["--version", "1.2", "--iterations", "1", "--games", "6", "--warmup-games", "6",
            "--eval-games", "4", "--hidden", "8"]  # fmt: skip
    args += ["--out", str(out), "--curve", str(curve)]
    assert script.main(args) == 0
    weights = load_weights(out)
    assert set(weights.networks) == {"1.2"} and weights.networks["1.2"].hidden == 8
    assert weights.meta["versions"]["1.2"]["games"] == 12
    rows = curve.read_text().splitlines()
    assert rows[0].startswith("version,iteration,games") and len(rows) == 3
    agent = LearnedAgentV2(weights=weights)
    state = State.new("1.2", {"seed": 5})
    opponent = GreedyAgent(5)
    while not state.is_terminal:
        player = state.current_player
        state.apply((agent if player == 0 else opponent).act(state))
    with pytest.raises(ValueError, match=r"weights play LOCM 1\.2, not 1\.5"):
        agent.network("1.5")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--games", "0"], "--games must be at least 1"),
        (["--version", "2.0"], "invalid choice"),
        (["--epsilon", "2"], "between 0 and 1"),
        (["--out", "/no/such/folder/w.npz"], "no folder"),
        (["--out", "."], "is a folder"),
        (["--curve", "/no/such/folder/c.csv"], "--curve: no folder"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _training_script()
    if "--out" not in args:
        args = [*args, "--out", "w.npz"]
    with pytest.raises(SystemExit) as raised:
        script.main(args)
    assert raised.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert message in error and "Traceback" not in error


def test_skipping_repeated_actions_changes_no_value() -> None:
    """Actions that do what an earlier one did (pairs of cards, twin creatures) are not
    simulated again; their values are those of the full simulation."""
    agent = LearnedAgentV2()
    skipped = 0
    for version in ("1.2", "1.5"):
        network = agent.network(version)
        for seed in range(4):
            state = State.new(version, {"seed": seed})
            players = [GreedyAgent(seed), GreedyAgent(seed + 1)]
            while not state.is_terminal:
                if state.phase is Phase.BATTLE:
                    actions = state.legal_actions()
                    fast = agent.action_values(state, actions, network)
                    full = agent.action_values(state, actions, network, dedupe=False)
                    assert np.allclose(fast, full, rtol=0, atol=1e-12)
                    skipped += len(set(fast.tolist())) < len(actions)
                state.apply(players[state.current_player].act(state))
    assert skipped > 10


def test_training_is_deterministic_version_by_version(tmp_path: Path) -> None:
    """A version's network does not depend on the other versions trained with it, and the
    same command gives the same weights."""
    _numba()
    script = _training_script()
    tiny = ["--iterations", "1", "--games", "4", "--warmup-games", "4", "--eval-games", "0",
            "--hidden", "4"]  # fmt: skip
    assert script.main([*tiny, "--version", "1.5", "--out", str(tmp_path / "a.npz")]) == 0
    both = ["--version", "1.2", "--version", "1.5", "--out", str(tmp_path / "b.npz")]
    assert script.main([*tiny, *both]) == 0
    with np.load(tmp_path / "a.npz") as a, np.load(tmp_path / "b.npz") as b:
        assert np.array_equal(a["net/1.5"], b["net/1.5"])


def test_fitting_updates_a_float64_vector_in_place_or_refuses() -> None:
    from cardarena.locm.agents.learned_v2 import fit_network

    rng = np.random.default_rng(2)
    hidden = 4
    size = FEATURES * hidden + hidden * hidden + 3 * hidden + 1
    flat = rng.normal(0, 0.3, size)
    x = rng.normal(0, 1, (300, FEATURES))
    y = (x[:, 0] > 0).astype(np.float64)
    adam: list[object] = [np.zeros(size), np.zeros(size), 0]
    before = flat.copy()
    fit_network(flat, hidden, x, y, adam, 1e-2, 2, rng)
    assert not np.array_equal(flat, before) and adam[2] == 4  # 2 epochs of 2 batches
    with pytest.raises(TypeError, match="float64"):
        fit_network(flat.astype(np.float32), hidden, x, y, adam, 1e-2, 1, rng)
