"""The fast engine's compiled generators draw exactly what the reference engine draws."""

from __future__ import annotations

import doctest
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("numba")

from cardarena.locm.engine.javarandom import (  # noqa: E402
    JAVA_LONG_MAX,
    JAVA_LONG_MIN,
    JavaRandom,
)
from cardarena.locm.engine.params import SEED_NAMES, resolve_parameters  # noqa: E402
from cardarena.locm.engine.state import Phase, State  # noqa: E402
from cardarena.locm.fast import INSTALL_HINT, generators  # noqa: E402
from cardarena.locm.fast import javarandom as fast_random  # noqa: E402
from cardarena.locm.fast.layout import (  # noqa: E402
    INSTANCE_CARD,
    P_CHOSEN,
    P_DECK,
    P_DECK_END,
    P_DECK_TOP,
    P_HAND,
    P_HAND_COUNT,
    STATE_SIZE,
    VERSION,
    VERSION_CODES,
    player_offset,
)
from tests.conftest import conformance_games  # noqa: E402

EXTREME_SEEDS = (0, 1, -1, 42, JAVA_LONG_MAX, JAVA_LONG_MIN, JAVA_LONG_MIN + 1, 0x5DEECE66D,
                 -0x5DEECE66D, 1 << 47, (1 << 48) - 1, 1 << 48, -(1 << 48), 1 << 62)  # fmt: skip
BOUNDS = (1, 2, 3, 4, 5, 6, 7, 8, 16, 17, 30, 60, 100, 120, 160, 1 << 20, 1 << 30,
          (1 << 30) + 1, 1_500_000_000, (1 << 31) - 1)  # fmt: skip
"""Powers of two (the shortcut), small bounds, and large ones that often reject a draw."""


def _seeds(count: int, salt: int) -> list[int]:
    rng = random.Random(salt)
    return [*EXTREME_SEEDS, *(rng.randint(JAVA_LONG_MIN, JAVA_LONG_MAX) for _ in range(count))]


def _reference_state(rng: JavaRandom) -> int:
    return rng._seed  # the 48-bit state, which the compiled functions pass around


@pytest.mark.parametrize("seed", _seeds(200, 1))
def test_every_draw_and_the_state_after_it_equal_java_random(seed: int) -> None:
    reference = JavaRandom(seed)
    state = fast_random.scramble(seed)
    assert state == _reference_state(reference)
    for bound in BOUNDS:
        value, state = fast_random.next_int(state, bound)
        assert value == reference.next_int(bound), bound
        assert state == _reference_state(reference), bound
    for bits in (1, 17, 31, 32):
        value, state = fast_random.next_bits(state, bits)
        assert value == reference.next(bits)
    value, state = fast_random.next_int32(state)
    assert value == reference.next_int()
    for _ in range(4):
        long_value, state = fast_random.next_long(state)
        assert long_value == reference.next_long()
        double_value, state = fast_random.next_double(state)
        assert double_value == reference.next_double()
    assert state == _reference_state(reference)


def test_next_int_rejection_loop_is_taken_and_matches() -> None:
    """A bound just over 2^30 rejects about half of the draws: the loop is exercised."""
    rejected = 0
    for seed in _seeds(300, 2):
        reference = JavaRandom(seed)
        state = fast_random.scramble(seed)
        before = state
        value, state = fast_random.next_int(state, 1_500_000_000)
        assert value == reference.next_int(1_500_000_000)
        assert state == _reference_state(reference)
        rejected += state != fast_random.advance(before)
    assert rejected > 0


def test_long_values_cover_both_signs() -> None:
    """``nextLong`` adds a signed low word: negative and positive results both occur."""
    state = fast_random.scramble(7)
    reference = JavaRandom(7)
    signs = set()
    for _ in range(200):
        value, state = fast_random.next_long(state)
        assert value == reference.next_long()
        signs.add(value < 0)
    assert signs == {True, False}


def test_division_by_a_multiply_is_exact_for_every_31_bit_draw() -> None:
    """The remainders of bounded draws are taken by a multiply and a shift: the quotient
    must be the true one for any draw ``u < 2**31`` (the divisors of the table, and the
    ones computed for larger bounds)."""
    rng = random.Random(9)
    bounds = [*range(1, fast_random.DIVISORS + 2), *BOUNDS, (1 << 31) - 3, 999_999_937]
    for bound in bounds:
        multiplier, shift = fast_random.divisor(bound)
        assert 0 < multiplier <= 1 << 32, bound
        top = (1 << 31) - 1
        draws = {0, 1, bound - 1, bound, top, top - 1, top - top % bound, top - top % bound - 1}
        draws |= {k * bound + d for k in (1, 2, 3, top // bound - 1) for d in (-1, 0, 1)}
        draws |= {rng.randrange(top + 1) for _ in range(300)}
        for u in sorted(d for d in draws if 0 <= d <= top):
            assert (u * multiplier) >> shift == u // bound, (bound, u)


def test_next_int_by_a_divisor_equals_java_random() -> None:
    for seed in _seeds(40, 4):
        for bound in BOUNDS:
            reference = JavaRandom(seed)
            wide = fast_random.widen(fast_random.scramble(seed))
            multiplier, shift = fast_random.divisor(bound)
            for _ in range(20):
                value, wide = fast_random.wide_next_int_by(wide, bound, multiplier, shift)
                assert value == reference.next_int(bound), (seed, bound)
            assert fast_random.narrow(wide) == _reference_state(reference)


@pytest.mark.parametrize("length", [0, 1, 2, 5, 30, 60, 120])
def test_shuffle_order_equals_collections_shuffle(length: int) -> None:
    for seed in _seeds(50, 3 + length):
        reference = JavaRandom(seed)
        expected = list(range(length))
        reference.shuffle(expected)
        items = np.arange(length, dtype=np.int32)
        state = fast_random.shuffle(items, fast_random.scramble(seed))
        assert items.tolist() == expected
        assert state == _reference_state(reference)


# --- game creation (cardarena.locm.fast.generators) -------------------------------------------

FULL = os.environ.get("CARDARENA_FAST_FULL") == "1"
"""CARDARENA_FAST_FULL=1: compare tens of thousands of games per version, not a sample."""
VERSIONS = ("1.0", "1.2", "1.5")
TABLE_GAMES = {"1.0": 100_000, "1.2": 100_000, "1.5": 100_000} if FULL else {
    "1.0": 500, "1.2": 500, "1.5": 300}  # fmt: skip
DECK_GAMES = 5_000 if FULL else 100


def _game_seed_array(count: int, salt: int) -> np.ndarray:
    return np.array(_seeds(count, salt), dtype=np.int64)


@pytest.mark.parametrize("version", VERSIONS)
def test_subseeds_equal_the_reference_derivation(version: str) -> None:
    seeds = _game_seed_array(300, 10)
    subseeds = generators.derive_subseeds(version, seeds)
    names = generators.subseed_names(version)
    assert names == SEED_NAMES[version != "1.5"]
    for seed, row in zip(seeds.tolist(), subseeds.tolist(), strict=True):
        assert row == [resolve_parameters(version, {"seed": seed}).seeds[name] for name in names]


def test_game_seeds_are_the_next_longs_of_one_seed() -> None:
    reference = JavaRandom(-123456789)
    assert generators.game_seeds(-123456789, 50).tolist() == [
        reference.next_long() for _ in range(50)
    ]


@pytest.mark.parametrize("version", VERSIONS)
def test_tables_equal_the_reference_engine(version: str) -> None:
    seeds = _game_seed_array(TABLE_GAMES[version], 20)
    cards, subseeds = generators.create_tables(version, seeds)
    assert cards.shape == (len(seeds), generators.MAX_CARDS, generators.CARD_FIELDS)
    assert cards.dtype == np.int32
    for game, seed in enumerate(seeds.tolist()):
        params = generators.reference_parameters(version, seed, subseeds[game])
        assert params == resolve_parameters(version, {"seed": seed})
        expected = generators.reference_table(params)
        assert np.array_equal(cards[game], expected), f"{version} seed={seed}"


@pytest.mark.parametrize("league", [1, 2, 3, 4])
def test_draft_leagues_offer_the_reference_pool(league: int) -> None:
    seeds = _game_seed_array(200, 30 + league)
    cards, _subseeds = generators.create_tables("1.0", seeds, league=league)
    for game, seed in enumerate(seeds.tolist()):
        params = resolve_parameters("1.0", {"seed": seed})
        assert np.array_equal(cards[game], generators.reference_table(params, league))


@pytest.mark.parametrize("league", [0, -1, 2.0, True])
def test_a_league_that_is_not_a_positive_integer_is_refused(league: object) -> None:
    with pytest.raises(ValueError, match="league must be a positive integer"):
        generators.create_tables("1.0", np.arange(2), league=league)  # type: ignore[arg-type]


def _weighted_choice_cases() -> list[tuple[int, list[float], float]]:
    """(choice table, the reference bounds, total) of every weighted table of the pool."""
    from cardarena.locm.engine import cards as reference_cards

    cases = [
        (generators._TYPE_CHOICE, list(reference_cards._TYPE_TABLE.bounds),
         reference_cards._TYPE_TABLE.total),
        (generators._MANA_CHOICE, list(reference_cards._MANA_TABLE.bounds),
         reference_cards._MANA_TABLE.total),
        (generators._COUNT_CHOICE, list(reference_cards._KEYWORD_COUNT_TABLE.bounds),
         reference_cards._KEYWORD_COUNT_TABLE.total),
    ]  # fmt: skip
    for slot, table in generators._PROPERTY_TABLES.items():
        cases.append((generators._PROPERTY_CHOICE + slot, list(table.bounds), table.total))
    for open_count in range(1, 7):  # max(0, ceil(u * open) - 1): bounds 1, 2, .., open
        bounds = [float(j) for j in range(1, open_count + 1)]
        cases.append((generators._KEYWORD_CHOICE + open_count, bounds, float(open_count)))
    return cases


def test_weighted_choices_take_the_reference_entry_at_every_edge() -> None:
    """A draw's entry is looked up from the top bits and one limit: at each limit, each
    bucket edge and around them it is the entry the reference picks from the double."""
    import bisect

    top = (1 << 53) - 1
    shift = generators._BUCKET_SHIFT
    edges = {0, 1, top}
    for bucket in range(1 << generators._BUCKET_BITS):
        edges |= {(bucket << shift) - 1, bucket << shift, ((bucket + 1) << shift) - 1}
    rng = random.Random(11)
    for table, bounds, total in _weighted_choice_cases():
        draws = set(edges) | {rng.randrange(top + 1) for _ in range(2000)}
        for limit in generators._CHOICE_LIMITS[table]:
            draws |= {limit - 1, limit, limit + 1}
        for n in sorted(d for d in draws if 0 <= d <= top):
            expected = bisect.bisect_left(bounds, (n * fast_random.DOUBLE_UNIT) * total)
            assert generators._choice(n, table) == min(expected, len(bounds) - 1), (table, n)


def test_one_point_five_pools_cover_every_card_kind() -> None:
    """The sample exercises the generator's branches: every type, area and keyword, and
    cards whose keywords or properties the budget refused (costs 0..12)."""
    cards, _subseeds = generators.create_tables("1.5", _game_seed_array(100, 40))
    assert set(np.unique(cards[:, :, generators.C_TYPE]).tolist()) == {0, 1, 2, 3}
    assert set(np.unique(cards[:, :, generators.C_AREA]).tolist()) == {0, 1, 2}
    assert set(np.unique(cards[:, :, generators.C_COST]).tolist()) == set(range(13))
    keywords = np.bitwise_or.reduce(cards[:, :, generators.C_KEYWORDS], axis=None)
    assert keywords == 63


@pytest.mark.parametrize("version", VERSIONS)
def test_recorded_official_games_have_the_reference_tables(version: str) -> None:
    games = conformance_games(version)
    for league in sorted({game.get("league", 4) for game in games}):
        params = [
            resolve_parameters(version, game["params"])
            for game in games
            if game.get("league", 4) == league
        ]
        cards, subseeds = generators.tables_from_parameters(version, params, league)
        for game, game_params in enumerate(params):
            assert subseeds[game].tolist() == [
                game_params.seeds[name] for name in generators.subseed_names(version)
            ]
            expected = generators.reference_table(game_params, league)
            assert np.array_equal(cards[game], expected), game_params.seed


@pytest.mark.parametrize(
    ("version", "given"),
    [
        ("1.2", {"seed": 5, "predefinedDraftIds": ",".join(["1 2 3"] * 15 + ["160 7 9"] * 15)}),
        ("1.5", {"seed": 6, "predefinedCardListFile": "cardlist.txt"}),
        ("1.5", {"seed": 7, "predefinedConstructedIds": ",".join(map(str, range(119, -1, -1)))}),
    ],
)
def test_predefined_cards_are_built_by_the_reference_code(
    version: str, given: dict[str, object]
) -> None:
    params = resolve_parameters(version, given)
    plain = resolve_parameters(version, {"seed": given["seed"]})
    cards, _subseeds = generators.tables_from_parameters(version, [params, plain])
    assert np.array_equal(cards[0], generators.reference_table(params))
    assert np.array_equal(cards[1], generators.reference_table(plain))
    assert not np.array_equal(cards[0], cards[1])


def test_explicit_subseeds_are_honoured_and_given_back() -> None:
    params = resolve_parameters("1.2", {"seed": 11, "draftChoicesSeed": -99})
    cards, subseeds = generators.tables_from_parameters("1.2", [params])
    assert subseeds[0, 0] == -99
    assert np.array_equal(cards[0], generators.reference_table(params))
    assert generators.reference_parameters("1.2", 11, subseeds[0]) == params


def _reference_battle(version: str, seed: int, rng: random.Random) -> tuple[State, list[list[int]]]:
    """A reference game driven through deck building by random picks; the picks as card
    indexes of the batch table (draft row ``3 * turn + pick``, or pool position)."""
    state = State.new(version, {"seed": seed})
    chosen: list[list[int]] = [[], []]
    pool_index = {card.base_id: index for index, card in enumerate(state.pool)}
    while state.phase is Phase.DECK_BUILDING:
        player = state.current_player
        action = rng.choice(state.legal_actions())
        if state.rules.draft:
            chosen[player].append(3 * len(chosen[player]) + action.id)
        else:
            chosen[player].append(pool_index[action.id])
        state.apply(action)
    return state, chosen


@pytest.mark.parametrize("version", VERSIONS)
def test_dealt_decks_equal_start_battle(version: str) -> None:
    rng = random.Random(50)
    seeds = _game_seed_array(DECK_GAMES, 51)
    cards, subseeds = generators.create_tables(version, seeds)
    names = generators.subseed_names(version)
    shuffle_0 = names.index("shufflePlayer0Seed")
    shuffle_1 = names.index("shufflePlayer1Seed")
    undealt, dealt_rows = [], []
    for game, seed in enumerate(seeds.tolist()):
        state, chosen = _reference_battle(version, seed, rng)
        row = np.zeros(STATE_SIZE, dtype=np.int32)
        row[VERSION] = VERSION_CODES[version]
        row[INSTANCE_CARD + 120] = 7  # stale: dealing must clear every instance
        for player in range(2):
            base = player_offset(player)
            row[base + P_CHOSEN : base + P_CHOSEN + 30] = chosen[player]
        undealt.append(row.copy())
        generators.deal_decks(row, subseeds[game, shuffle_0], subseeds[game, shuffle_1])
        for player in range(2):
            base = player_offset(player)
            reference = state.players[player]
            # The reference has already drawn the first turn's card: hand then deck is
            # the dealt order.
            dealt = [*reference.hand, *reference.deck]
            ids = row[base + P_DECK : base + P_DECK + 30].tolist()
            assert ids == [instance.id for instance in dealt], (version, seed, player)
            card_indexes = [int(row[INSTANCE_CARD + instance_id]) for instance_id in ids]
            assert np.array_equal(
                cards[game][card_indexes],
                generators.card_rows([instance.card for instance in dealt]),
            )
            assert sorted(card_indexes) == sorted(chosen[player])
            hand_size = 4 + player
            assert row[base + P_HAND_COUNT] == hand_size == row[base + P_DECK_TOP]
            assert row[base + P_HAND : base + P_HAND + hand_size].tolist() == ids[:hand_size]
            assert row[base + P_DECK_END] == 30
        used = {instance.id for player in state.players for instance in player.hand}
        used |= {instance.id for player in state.players for instance in player.deck}
        unused = [i for i in range(generators.MAX_IDS) if i not in used]
        assert (row[INSTANCE_CARD + np.array(unused)] == -1).all()
        dealt_rows.append(row)
    batch = np.array(undealt)
    generators.deal_all_decks(version, batch, subseeds)
    assert np.array_equal(batch, np.array(dealt_rows))


def test_the_doc_examples_run_and_print_what_the_page_says() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "fast-generators.md"
    result = doctest.testfile(
        str(page), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted >= 20
    assert result.failed == 0


@pytest.mark.parametrize("module", ["javarandom", "generators"])
def test_without_numba_the_import_says_how_to_install_it(module: str) -> None:
    hide_numba = "import sys; sys.modules['numba'] = None; "  # import numba now fails
    done = subprocess.run(
        [sys.executable, "-c", f"{hide_numba}import cardarena.locm.fast.{module}"],
        capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].endswith(INSTALL_HINT)
