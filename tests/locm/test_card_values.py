"""The fitted card values: the data they come from, the fit, and their use in deck building."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cardarena.locm.agents.cardscore import DECK_POLICIES, FITTED_DECK, card_surplus, draft_pick
from cardarena.locm.agents.cardvalues import (
    FEATURE_NAMES,
    STAT_POINTS_PER_LOG_ODDS,
    card_features,
    fitted_value,
)
from cardarena.locm.agents.cardvalues_data import CARD_VALUES, FEATURE_WEIGHTS
from cardarena.locm.engine.cards import CARD_LIST, Card
from cardarena.locm.engine.rules import VERSIONS, ruleset
from cardarena.locm.engine.state import State
from tests.locm.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "fit_card_values.py"


def _fitting_module():  # type: ignore[no-untyped-def]
    return load_script(SCRIPT, "fit_card_values")


def test_every_version_has_weights_for_every_feature() -> None:
    for version in VERSIONS:
        assert len(FEATURE_WEIGHTS[version]) == len(FEATURE_NAMES)
    for version, values in CARD_VALUES.items():
        assert ruleset(version).draft
        assert len(values) == len(CARD_LIST)


def test_listed_cards_have_their_own_value_and_generated_cards_their_features() -> None:
    rules = ruleset("1.2")
    card = CARD_LIST[41]
    assert fitted_value(card, rules) == STAT_POINTS_PER_LOG_ODDS * CARD_VALUES["1.2"][41]
    pool = State.new("1.5", {"seed": 3}).pool
    rules15 = ruleset("1.5")
    for card in pool[:10]:
        features = card_features(card, rules15)
        expected = sum(w * f for w, f in zip(FEATURE_WEIGHTS["1.5"], features, strict=True))
        assert fitted_value(card, rules15) == pytest.approx(STAT_POINTS_PER_LOG_ODDS * expected)
    assert card_surplus(pool[0], rules15, FITTED_DECK) == fitted_value(pool[0], rules15)


def test_features_fill_only_the_cards_type_block() -> None:
    rules = ruleset("1.5")
    red = Card(7, 2, 3, -1, -2, 0b101000)  # red item: -1/-2, removes Guard and Ward
    features = dict(zip(FEATURE_NAMES, card_features(red, rules), strict=True))
    assert features["red_count"] == 1 and features["red_cost"] == 3
    assert features["red_defense"] == -2
    assert features["red_guard"] == 1 and features["red_ward"] == 1
    assert all(value == 0 for name, value in features.items() if not name.startswith("red_"))


def test_a_free_fitted_draft_takes_the_best_valued_card() -> None:
    rules = ruleset("1.2")
    free = DECK_POLICIES["fitted"]
    triple = (CARD_LIST[10], CARD_LIST[50], CARD_LIST[120])
    best = max(range(3), key=lambda i: fitted_value(triple[i], rules))
    assert draft_pick(triple, [], rules, free) == best


def test_the_fit_recovers_planted_card_values(tmp_path: Path) -> None:
    """Games whose winner follows planted per-card values: the fit finds them again."""
    rng = np.random.default_rng(5)
    planted = rng.normal(0, 0.15, len(CARD_LIST))
    games = 6000
    ids = rng.integers(1, len(CARD_LIST) + 1, size=(games, 2, 30))
    decks = np.zeros((games, 2, 30, 10), np.int16)
    for base_id in range(1, len(CARD_LIST) + 1):
        decks[ids == base_id] = tuple(CARD_LIST[base_id - 1])
    logit = 0.3 + planted[ids[:, 0] - 1].sum(axis=1) - planted[ids[:, 1] - 1].sum(axis=1)
    winners = np.where(rng.random(games) < 1 / (1 + np.exp(-logit)), 0, 1).astype(np.int8)
    path = tmp_path / "planted.npz"
    np.savez_compressed(path, version="1.2", decks=decks, winners=winners)
    version, weights, values = _fitting_module().fit_version([str(path)], l2=3.0, holdout=0.2)
    assert version == "1.2" and len(weights) == len(FEATURE_NAMES)
    assert np.corrcoef(values, planted)[0, 1] > 0.85


def test_the_games_command_stores_decks_and_winners(tmp_path: Path) -> None:
    out = tmp_path / "games.npz"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "games", "--version", "1.2", "--games", "3",
         "--decks", "aggro", "--epsilon", "0", "--out", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = np.load(out)
    assert str(data["version"]) == "1.2"
    assert data["decks"].shape == (3, 2, 30, 10) and data["winners"].shape == (3,)
    assert set(data["winners"].tolist()) <= {-1, 0, 1}
    # epsilon 0: every deck is the aggro policy's own draft of that game's triples
    state = State.new("1.2", {"seed": 1})
    picks = []
    for triple in state.draft:
        picks.append(triple[draft_pick(triple, picks, state.rules, DECK_POLICIES["aggro"])])
    assert [int(row[0]) for row in data["decks"][0, 0]] == [card.base_id for card in picks]
