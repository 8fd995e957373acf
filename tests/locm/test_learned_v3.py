"""learned-v3 (the self-play deck network with learned-v2's battle) and search-v4.

The inputs the agent computes from cards must be those the training read from the
compiled engine's observations; the hand-written gradient must be the network's; the
decks must be legal and the same through ``locm bot`` as in process; the training
command must resume where it stopped, after Ctrl-C or a kill, to the same weights.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from cardarena.locm import State
from cardarena.locm.agents import AGENT_VERSIONS, make_agent
from cardarena.locm.agents import learned_v3 as L
from cardarena.locm.agents.cardvalues import fitted_value
from cardarena.locm.agents.greedy import GreedyAgent
from cardarena.locm.agents.learned_v3 import (
    WEIGHTS_FILE,
    DeckNetwork,
    LearnedAgentV3,
    LearnedDeckBuilder,
    Weights,
    card_inputs,
    context_inputs,
    deck_inputs,
    load_weights,
)
from cardarena.locm.agents.search_v4 import SearchAgentV4
from cardarena.locm.cli.bot import BotSession
from cardarena.locm.encoding.encoder import Encoder
from cardarena.locm.engine.state import Phase
from cardarena.locm.engine.text import player_input
from tests.locm.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "train_learned_v3.py"
VERSIONS = ("1.0", "1.2", "1.5")


def _random_weights(hidden: int = 6, seed: int = 0) -> Weights:
    """Networks whose scores depend on the card and the deck so far (``v`` non-zero)."""
    rng = np.random.default_rng(seed)
    weights = Weights({"meta": np.array("{}")})
    for version in VERSIONS:
        net = DeckNetwork.initial(hidden, rng, 1.0)
        net.params["v"] = rng.normal(0, 1, hidden)
        weights.networks[version] = net
    return weights


def _offers(state: State) -> tuple[list, list[int]]:
    player = state.players[state.current_player]
    if state.rules.draft:
        return list(state.draft[len(player.chosen)]), [0, 0, 0]
    return list(state.pool), [player.chosen_counts.get(c.base_id, 0) for c in state.pool]


@pytest.mark.parametrize("version", VERSIONS)
def test_inputs_from_cards_equal_those_read_from_observations(version: str) -> None:
    rng = np.random.default_rng(1)
    checked = 0
    for seed in range(3):
        state = State.new(version, {"seed": seed})
        encoder = Encoder(state.rules)
        while state.phase is Phase.DECK_BUILDING:
            me = state.players[state.current_player]
            cards, context = deck_inputs(
                encoder.observe(state, state.current_player)[None], version
            )
            offered, copies = _offers(state)
            assert np.allclose(cards[0], card_inputs(offered, copies, state.rules), atol=1e-6)
            assert np.allclose(context[0], context_inputs(me.chosen), atol=1e-6)
            fitted = [fitted_value(card, state.rules) for card in offered]
            assert np.allclose(cards[0, :, -1] * L.FITTED_SCALE, fitted, atol=1e-3)
            actions = state.legal_actions()
            state.apply(actions[int(rng.integers(len(actions)))])
            checked += 1
    assert checked == 3 * 60
    assert np.ptp(cards[0, :, -1]) > 0  # the fitted values differ from card to card


def test_the_hand_written_gradient_is_the_networks() -> None:
    rng = np.random.default_rng(2)
    net = DeckNetwork.initial(5, rng, 0.7)
    net.params["v"] = rng.normal(0, 1, 5)
    net.dtype = np.float64
    cards = rng.normal(0, 1, (3, 4, L.CARD_INPUTS))
    context = rng.normal(0, 1, (3, L.CONTEXT_INPUTS))
    upstream = rng.normal(0, 1, (3, 4))
    _, cache = net.forward(cards, context)
    grads = net.backward(cache, upstream)
    for name, value in net.params.items():
        for index in np.ndindex(value.shape):
            old = value[index]
            value[index] = old + 1e-6
            up = float((net.forward(cards, context)[0] * upstream).sum())
            value[index] = old - 1e-6
            down = float((net.forward(cards, context)[0] * upstream).sum())
            value[index] = old
            assert grads[name][index] == pytest.approx((up - down) / 2e-6, rel=1e-5, abs=1e-7)


def test_an_untrained_network_picks_as_the_fitted_deck_does() -> None:
    """``v`` zero: the scores are the fitted values times ``a``, so the picks are the
    fitted deck's (the starting point of training)."""
    net = DeckNetwork.initial(4, np.random.default_rng(0), 5.0)
    weights = Weights({"meta": np.array("{}")})
    weights.networks = {version: net for version in VERSIONS}
    builder = LearnedDeckBuilder(weights)
    state = State.new("1.5", {"seed": 9})
    deck = builder.deck(state.pool, state.rules)
    values = sorted((fitted_value(c, state.rules) for c in state.pool), reverse=True)
    assert sorted(fitted_value(c, state.rules) for c in deck)[::-1][:2] == values[:1] * 2


@pytest.mark.parametrize("version", VERSIONS)
def test_decks_are_legal_and_the_same_through_the_bot_protocol(version: str) -> None:
    weights = _random_weights()
    agent = LearnedAgentV3(weights=weights)
    state = State.new(version, {"seed": 4})
    session = BotSession("greedy", 0, version, 1.0)
    session.builder = LearnedDeckBuilder(weights)
    answers: list[str] = []
    while state.phase is Phase.DECK_BUILDING:
        player = state.current_player
        action = agent.act(state)
        if player == 0:
            answers.append(
                session.answer(player_input(state, 0).splitlines())
                if not answers or state.rules.draft
                else answers[-1]
            )
        state.apply(action)
    chosen = state.players[0].chosen
    assert len(chosen) == 30
    if state.rules.draft:
        picks = [int(a.split()[1]) for a in answers]
        assert [state.draft[t][p] for t, p in enumerate(picks)] == list(chosen)
    else:
        counts = Counter(c.base_id for c in chosen)
        assert max(counts.values()) <= 2
        bot_ids = [int(part.split()[1]) for part in answers[0].split(";")]
        assert bot_ids == [c.base_id for c in chosen]  # the same picks in the same order
    # Another network builds another deck: the network decides, not a fixed rule.
    other = LearnedAgentV3(weights=_random_weights(seed=5))
    state2 = State.new(version, {"seed": 4})
    while state2.phase is Phase.DECK_BUILDING:
        state2.apply(other.act(state2))
    assert Counter(map(id, state2.players[0].chosen)) != Counter(map(id, chosen))


def test_the_shipped_weights_load_without_pickle_and_name_their_command() -> None:
    with np.load(WEIGHTS_FILE, allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
    assert meta["command"].startswith("python scripts/train_learned_v3.py")
    weights = load_weights()
    assert set(weights.networks) == set(VERSIONS)
    for version in VERSIONS:
        assert meta[version]["games"] > 0
        assert weights.networks[version].params["v"].any()  # trained, not the start
    assert "learned-v3" not in AGENT_VERSIONS and "search-v4" not in AGENT_VERSIONS
    assert os.path.getsize(WEIGHTS_FILE) < 10 * 1024 * 1024


@pytest.mark.parametrize("version", VERSIONS)
def test_learned_v3_and_search_v4_play_whole_games(version: str) -> None:
    for seat, name in enumerate(("learned-v3", "search-v4")):
        agent = make_agent(name, 1)
        if isinstance(agent, SearchAgentV4):
            agent.time_scale = 0.05  # 5% of the official limits: a quick game
        state = State.new(version, {"seed": 11 + seat})
        players = [GreedyAgent(3), GreedyAgent(3)]
        players[seat] = agent  # type: ignore[call-overload]
        while not state.is_terminal:
            state.apply(players[state.current_player].act(state))
        assert state.winner in (0, 1)


# --- the training command --------------------------------------------------------------

TINY = [
    "--version",
    "1.2",
    "--games",
    "16",
    "--eval-every",
    "2",
    "--eval-games",
    "8",
    "--hidden",
    "4",
    "--snapshot-every",
    "1",
]


def _train(folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--dir", str(folder), *TINY, *extra],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )


def _iteration(folder: Path) -> int:
    checkpoint = folder / "1.2" / "checkpoint.npz"
    if not checkpoint.exists():
        return -1
    try:
        with np.load(checkpoint, allow_pickle=False) as data:
            return int(json.loads(str(data["meta"]))["iteration"])
    except (OSError, ValueError, KeyError):
        return -1


def test_training_resumes_to_the_same_weights_after_a_stop(tmp_path: Path) -> None:
    whole = _train(tmp_path / "whole", "--iterations", "4")
    assert whole.returncode == 0, whole.stderr
    assert "weights:" in whole.stdout
    halves = tmp_path / "halves"
    assert _train(halves, "--iterations", "2").returncode == 0
    second = _train(halves, "--iterations", "4")
    assert second.returncode == 0 and "resuming after iteration 2" in second.stderr
    with (
        np.load(tmp_path / "whole" / "learned_v3.npz") as a,
        np.load(halves / "learned_v3.npz") as b,
    ):
        for key in a.files:
            if key.startswith("deck/"):
                assert np.array_equal(a[key], b[key]), key
    rows = (halves / "curve.csv").read_text().splitlines()
    assert rows[0].startswith("version,iteration,games,cpu_seconds")
    assert [row.split(",")[1] for row in rows[1:]] == ["0", "2", "4"]
    assert (halves / "curve.png").stat().st_size > 1000
    weights = load_weights(halves / "learned_v3.npz")
    kept = weights.meta["1.2"]
    assert kept["iterations"] == 4 and kept["games"] == 4 * 16
    assert kept["kept_iteration"] in (0, 2, 4)  # the best of the three evaluations
    rates = {int(r.split(",")[1]): float(r.split(",")[6]) for r in rows[1:]}
    assert kept["kept_win_rate_vs_fitted"] == pytest.approx(max(rates.values()), abs=1e-4)
    agent = LearnedAgentV3(weights=weights)
    state = State.new("1.2", {"seed": 2})
    while state.phase is Phase.DECK_BUILDING:
        state.apply(agent.act(state))
    with pytest.raises(ValueError, match=r"no deck network for LOCM 1\.5"):
        agent.deck_builder.network("1.5")


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_training_survives_ctrl_c_and_kill(tmp_path: Path, how: signal.Signals) -> None:
    folder = tmp_path / "run"
    command = [sys.executable, str(SCRIPT), "--dir", str(folder), *TINY, "--iterations", "500"]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 300
    while _iteration(folder) < 2 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # polling the checkpoint file: the event is the script's write
    assert _iteration(folder) >= 2, process.communicate()[1]
    process.send_signal(how)
    _, err = process.communicate(timeout=120)
    if how == signal.SIGINT:
        assert process.returncode == 130
        assert "run the same command to resume" in err.splitlines()[-1]
        assert "Traceback" not in err
    stopped_at = _iteration(folder)
    assert stopped_at >= 2
    resumed = _train(folder, "--iterations", str(stopped_at + 1))
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming after iteration {stopped_at}" in resumed.stderr
    assert _iteration(folder) == stopped_at + 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--games", "1"], "--games must be at least 2"),
        (["--eval-games", "3"], "--eval-games even"),
        (["--version", "2.0"], "invalid choice"),
        (["--league", "2"], "between 0 and 1"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_script(SCRIPT, "train_learned_v3")
    with pytest.raises(SystemExit) as raised:
        script.main(["--dir", "unused", *args])
    assert raised.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert message in error and "Traceback" not in error


def test_a_dir_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = _train(blocker / "sub", "--iterations", "1")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().startswith("train_learned_v3: cannot use --dir")


def test_a_benchmark_deck_policy_replaces_the_learned_deck() -> None:
    """``benchmarks/agents.py --deck fitted`` compares battle play alone: the learned deck
    must give way to the deck policy asked for."""
    from cardarena.locm.agents.cardscore import FITTED_DECK

    benchmark = load_script(ROOT / "benchmarks" / "agents.py", "agents_benchmark_v3")
    players = benchmark.make_players("learned-v3", "search-v4", 1, 1.0, "fitted")
    for agent in players:
        assert agent.deck_builder is None and agent.deck_policy is FITTED_DECK
    state = State.new("1.5", {"seed": 3})
    while state.phase is Phase.DECK_BUILDING:
        state.apply(players[state.current_player].act(state))
    assert Counter(c.base_id for c in state.players[0].chosen) == Counter(
        c.base_id for c in state.players[1].chosen
    )


def test_the_deck_benchmark_measures_the_shipped_networks_on_fresh_seeds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    benchmark = load_script(ROOT / "benchmarks" / "learned_decks.py", "learned_decks")
    assert benchmark.main(["--version", "1.2", "--games", "20", "--seed", "123", "--json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)
    assert result["version"] == "1.2" and result["games"] == 20
    for key in ("learned_v2_battles", "greedy_battles"):
        rate, low, high = result[key]
        assert 0.0 <= low <= rate <= high <= 1.0
    with pytest.raises(SystemExit) as raised:
        benchmark.main(["--games", "3"])
    assert raised.value.code == 2
    assert "--games must be even" in capsys.readouterr().err
