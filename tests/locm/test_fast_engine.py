"""The fast engine against the reference engine, action by action.

(a) Every recorded official game (a sample of them by default) replayed through both
engines from its parameters; (b) random games driven through both with the same random
legal actions; (c) play_random's whole compiled games replayed by the reference engine;
(d) games handed between the engines. After every action the fast game, converted to a
reference State, must equal the reference state field by field, and the legal-action
masks must be the same. CARDARENA_FAST_FULL=1 runs every official game and 100,000
random games per version (printing a summary).
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from cardarena.locm import State
from cardarena.locm.encoding.encoder import Encoder
from cardarena.locm.engine.state import EndReason
from cardarena.locm.fast import INSTALL_HINT
from cardarena.locm.fast import layout as L
from cardarena.locm.fast.batch import Batch, IllegalBatchAction
from cardarena.locm.fast.convert import compare_states
from cardarena.locm.fast.generators import game_seeds
from cardarena.locm.fast.playouts import play_random
from tests.conftest import conformance_games
from tests.locm.fast_differential import (
    fast_signatures,
    random_differential,
    random_differential_fast,
    replay_official,
    signature,
)

VERSIONS = ("1.0", "1.2", "1.5")
FULL = os.environ.get("CARDARENA_FAST_FULL") == "1"
RANDOM_GAMES = 100_000 if FULL else 60
"""Random games per version compared action by action."""
CHUNK = 500
OFFICIAL_STEP = 1 if FULL else 10
"""Every official game when FULL, else every 10th and every game not ended by health."""


def _official_sample(version: str) -> list[dict]:
    games = conformance_games(version)
    return [g for i, g in enumerate(games) if i % OFFICIAL_STEP == 0 or g["end"] != "hp"]


@pytest.mark.parametrize("version", VERSIONS)
def test_recorded_official_games_through_both_engines(version: str) -> None:
    games = _official_sample(version)
    failures = [failure for game in games if (failure := replay_official(game))]
    assert not failures, f"{len(failures)}/{len(games)} games differ:\n" + "\n".join(failures)


@pytest.mark.parametrize("version", VERSIONS)
def test_random_games_through_both_engines(version: str) -> None:
    start = time.perf_counter()
    failures: list[str] = []
    for first in range(0, RANDOM_GAMES, CHUNK):
        seeds = list(range(first, min(first + CHUNK, RANDOM_GAMES)))
        compare = random_differential_fast if FULL else random_differential
        failures += compare(version, seeds, rng_seed=first)
        assert len(failures) < 10, "\n".join(failures)
        if FULL:  # progress, for a run of an hour or more
            print(f"LOCM {version}: {seeds[-1] + 1} games compared, {len(failures)} differ "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)  # fmt: skip
    if FULL:
        print(f"\nLOCM {version}: {RANDOM_GAMES} random games compared after every action "
              f"with the reference engine, {len(failures)} differ "
              f"({time.perf_counter() - start:.0f} s)")  # fmt: skip
    assert not failures, "\n".join(failures)


PREDEFINED_DRAFT = ",".join(f"{i} {i + 40} {i + 80}" for i in range(1, 31))


@pytest.mark.parametrize(
    ("version", "extra", "league"),
    [
        ("1.0", {}, 1),
        ("1.0", {}, 3),
        ("1.2", {"predefinedDraftIds": PREDEFINED_DRAFT}, 4),
        ("1.5", {"predefinedCardListFile": "cardlist.txt"}, 4),
        ("1.5", {"cardGenSeed": -5, "shufflePlayer1Seed": 77}, 4),
    ],
)
def test_games_of_any_parameters_and_league_play_as_the_reference(
    version: str, extra: dict, league: int
) -> None:
    params = [{"seed": seed, **extra} for seed in range(20)]
    failures = random_differential(version, [], rng_seed=9, params=params, league=league)
    assert not failures, "\n".join(failures)


def test_the_full_runs_signatures_see_every_kind_of_field() -> None:
    """The full run compares flat signatures: equal for equal games, and a change of any
    one field of a fast game (health, a hand card, a creature, performed) shows."""
    batch = Batch.new("1.5", seeds=range(4))
    rng = np.random.default_rng(3)
    for _ in range(75):
        batch.step([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in batch.masks()])
    values, lengths = fast_signatures(batch.state, batch.cards)
    g = int(np.flatnonzero(batch.state[:, L.PLAYER_0 + L.P_BOARD_COUNT] > 0)[0])
    assert values[g, : lengths[g]].tolist() == signature(batch.to_state(g))
    for column in (L.PLAYER_1 + L.P_HEALTH, L.PLAYER_0 + L.P_HAND,
                   L.PLAYER_0 + L.P_BOARD + L.K_DEFENSE, L.PLAYER_0 + L.P_BOARD + L.K_LANE,
                   L.PLAYER_1 + L.P_PERFORMED_COUNT, L.TURN):  # fmt: skip
        changed = batch.clone()
        changed.state[g, column] += 1
        values, lengths = fast_signatures(changed.state, changed.cards)
        assert values[g, : lengths[g]].tolist() != signature(batch.to_state(g)), column


@pytest.mark.parametrize("version", VERSIONS)
def test_play_random_games_end_as_the_reference_engine_replays_them(version: str) -> None:
    games = 40
    played = play_random(games, version, seed=2024, record=True)
    assert played.actions is not None and played.action_counts is not None
    seeds = game_seeds(2024, games)
    encoder = Encoder(version)
    for g in range(games):
        state = State.new(version, {"seed": int(seeds[g])})
        assert played.action_counts[g] <= played.actions.shape[1]
        for index in played.actions[g, : played.action_counts[g]]:
            legal: dict = {}
            encoder.mask(state, legal=legal)
            state.apply(legal[int(index)])
        assert state.is_terminal, g
        assert played.winners[g] == state.winner
        assert played.turns[g] == state.turn
        assert played.health[g].tolist() == [p.health for p in state.players]
        assert played.end_reason[g] == state.end_reason
    # Random play is random: both players win some games.
    assert set(played.winners.tolist()) == {0, 1}


@pytest.mark.parametrize("version", VERSIONS)
def test_games_handed_between_the_engines_play_on_the_same(version: str) -> None:
    batch = Batch.new(version, seeds=range(8))
    rng = np.random.default_rng(1)
    for _ in range(90):  # into the battle
        masks = batch.masks()
        batch.step([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
    other = Batch.new(version, seeds=range(100, 108))
    for g in range(8):
        state = batch.to_state(g)
        other.set_state(g, state)
        assert compare_states(state, other.to_state(g)) == []
    # Both batches now play on identically, and to_state gives independent copies.
    batch.to_state(0).players[0].health = -50
    for _ in range(40):
        masks = batch.masks()
        assert np.array_equal(masks, other.masks())
        actions = [rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks]
        batch.step(actions)
        other.step(actions)
    for g in range(8):
        assert compare_states(batch.to_state(g), other.to_state(g)) == []


def test_a_hand_made_position_plays_in_the_batch_as_in_the_reference() -> None:
    state = State.from_input("1.2", _TEXT_1_2, 0)
    batch = Batch.new("1.2", seeds=[0])
    batch.set_state(0, state)
    encoder = Encoder("1.2")
    legal: dict = {}
    encoder.mask(state, legal=legal)
    assert set(np.flatnonzero(batch.masks()[0]).tolist()) == set(legal)
    for index, action in legal.items():
        reference = state.clone()
        reference.apply(action)
        trial = batch.clone()
        trial.step([index])
        assert compare_states(reference, trial.to_state(0)) == [], action


def test_an_illegal_action_names_the_game_and_changes_no_game() -> None:
    batch = Batch.new("1.5", seeds=[1, 2, 3])
    before = batch.state.copy()
    with pytest.raises(IllegalBatchAction, match=r"game 1: action 0 \(PASS\) is not legal"):
        batch.step([batch.layout.deck, 0, batch.layout.deck])
    assert np.array_equal(batch.state, before)


def test_ended_games_are_skipped_and_report_their_end() -> None:
    batch = Batch.new("1.2", seeds=range(20))
    rng = np.random.default_rng(5)
    while not batch.terminal.all():
        masks = batch.masks()
        assert not masks[batch.terminal].any()
        batch.step([rng.choice(np.flatnonzero(m)) if m.any() else 123 for m in masks])
    assert set(batch.winners.tolist()) <= {0, 1}
    assert all(EndReason(r) is not EndReason.NONE for r in batch.end_reasons)
    losers = 1 - batch.winners
    health_ended = batch.end_reasons == EndReason.HEALTH
    assert (batch.health[np.arange(20), losers][health_ended] <= 0).all()


def test_one_seed_draws_the_game_seeds_and_parameters_give_the_same_games() -> None:
    from_seed = Batch.new("1.0", 5, seed=77)
    assert from_seed.seeds.tolist() == game_seeds(77, 5).tolist()
    official = conformance_games("1.0")[0]
    with_params = Batch.new("1.0", params=[official["params"]], league=official.get("league", 4))
    reference = State.new("1.0", official["params"], official.get("league", 4))
    assert compare_states(reference, with_params.to_state(0)) == []
    again = Batch.new("1.0", seeds=[int(from_seed.seeds[3])])
    assert np.array_equal(again.cards[0], from_seed.cards[3])


_TEXT_1_2 = """25 5 20 20 1
22 6 19 20 1
5 1
12 ATTACK 9 -1
8
3 1 0 0 3 3 2 ------ 0 0 0 0
11 3 0 1 2 1 1 --D--- 0 0 0 0
21 5 0 2 1 -1 -1 ------ 0 0 0 0
27 7 0 3 2 0 -2 ------ 0 -1 0 0
9 12 1 0 3 3 2 ------ 0 0 0 1
14 18 1 0 1 5 2 -C-G-- 0 0 0 0
16 20 -1 0 4 3 4 B--G-- 0 0 0 1
18 22 -1 0 2 1 2 -----W 0 0 0 0
"""


def test_reset_games_starts_new_games_in_place() -> None:
    batch = Batch.new("1.0", seeds=range(6))
    rng = np.random.default_rng(2)
    for _ in range(100):
        batch.step([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in batch.masks()])
    untouched = batch.state[[0, 2, 3, 5]].copy()
    batch.reset_games(np.array([False, True, False, False, True, False]), [500, 501])
    assert np.array_equal(batch.state[[0, 2, 3, 5]], untouched)
    for g, seed in ((1, 500), (4, 501)):
        assert compare_states(State.new("1.0", {"seed": seed}), batch.to_state(g)) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_observe_equals_the_environments_encoder(version: str) -> None:
    pytest.importorskip("cardarena.locm.fast.observation")  # the vector environment's
    batch = Batch.new(version, seeds=range(6))
    encoder = Encoder(version)
    rng = np.random.default_rng(4)
    for step in range(150):
        if step % 15 == 0:
            for players in (batch.current_player, 1 - batch.current_player):
                observed = batch.observe(players)
                for g in range(len(batch)):
                    expected = encoder.observe(batch.to_state(g), int(players[g]))
                    assert np.array_equal(observed[g], expected), (step, g)
        batch.step([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in batch.masks()])


def test_without_numba_the_engine_says_how_to_get_it() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['numba'] = None\n"
        "import cardarena.locm.fast.layout\n"  # the layout needs no numba
        "for name in ('kernels', 'batch', 'playouts'):\n"
        "    try:\n"
        "        __import__('cardarena.locm.fast.' + name)\n"
        "    except ImportError as error:\n"
        "        print(type(error).__name__, error)\n"
        "from cardarena.locm import fast\n"
        "try:\n"
        "    fast.Batch\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.splitlines()  # fmt: skip
    hint = f"FastEngineUnavailable {INSTALL_HINT}"
    assert output == [hint] * 4


def test_reset_games_writes_into_the_arrays_the_caller_holds() -> None:
    batch = Batch.new("1.2", seeds=range(3))
    state, cards = batch.state, batch.cards
    batch.reset_games([0, 1, 2], [7, 8, 9])
    assert batch.state is state and batch.cards is cards
    assert compare_states(State.new("1.2", {"seed": 8}), batch.to_state(1)) == []


def test_pool_choices_are_the_listed_legal_actions_without_listing_them() -> None:
    """pool_choice(row, k) is legal_actions' k-th index in 1.5 deck building, whatever
    cards are already at two copies (random playouts draw their choices through it)."""
    from cardarena.locm.fast.kernels import (
        MAX_LEGAL,
        V1_5,
        action_bounds,
        apply_legal,
        current_player,
        legal_actions,
        pool_choice,
        pool_choice_count,
    )

    batch = Batch.new("1.5", 4, seed=11)
    rng = np.random.default_rng(3)
    legal = np.zeros(MAX_LEGAL, np.int32)
    deck_at = action_bounds(V1_5)[3]
    counts = []
    for g in range(len(batch)):
        row, table = batch.state[g], batch.cards[g]
        while row[L.PHASE] == 0:
            count = legal_actions(row, table, legal)
            assert pool_choice_count(row) == count
            assert [pool_choice(row, k) for k in range(count)] == legal[:count].tolist()
            counts.append(count)
            # Mostly a second copy of a card chosen once, so that many cards close.
            base = L.PLAYER_0 + current_player(row) * L.PLAYER_SIZE
            copies = row[base + L.P_COPIES : base + L.P_COPIES + 120]
            once = [deck_at + int(c) for c in np.flatnonzero(copies == 1)]
            pick = once[0] if once and rng.random() < 0.7 else int(legal[rng.integers(count)])
            apply_legal(row, table, pick)
    assert len(counts) == 4 * 60
    assert min(counts) < 110  # many cards were at two copies


@pytest.mark.parametrize("version", VERSIONS)
def test_games_from_seeds_are_the_games_of_their_sub_seeds_and_tables(version: str) -> None:
    """Batch.new(seeds=...) and reset_games write a new game in one compiled call
    (generators.start_rows); it must be the row that the sub-seeds, the card tables and
    the template make step by step, as games from parameters are made."""
    from cardarena.locm.fast import generators

    seeds = game_seeds(99, 2000)
    batch = Batch.new(version, seeds=seeds)
    subseeds = generators.derive_subseeds(version, seeds)
    expected = Batch._empty(version, len(seeds), 4)
    expected._fill(np.arange(len(seeds)), seeds, subseeds,
                   generators.tables_from_subseeds(version, subseeds))  # fmt: skip
    assert np.array_equal(batch.state, expected.state)
    assert np.array_equal(batch.cards, expected.cards)
    batch.reset_games(np.arange(0, 2000, 7), seeds[::-7][: len(range(0, 2000, 7))])
    assert np.array_equal(batch.state[0], expected.state[-1])
    assert np.array_equal(batch.cards[7], expected.cards[-8])
