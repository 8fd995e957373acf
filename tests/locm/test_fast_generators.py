"""The fast engine's compiled generators draw exactly what the reference engine draws."""

from __future__ import annotations

import random

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("numba")

from cardarena.locm.engine.javarandom import (  # noqa: E402
    JAVA_LONG_MAX,
    JAVA_LONG_MIN,
    JavaRandom,
)
from cardarena.locm.fast import javarandom as fast_random  # noqa: E402

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
