"""Batches on several threads give the games of one thread, and the compiled PCG64 draws
what numpy's Generator draws (the vector env's autoresets rely on both)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

import itertools

from numba import njit

from cardarena.locm.engine.javarandom import JAVA_LONG_MAX, JAVA_LONG_MIN
from cardarena.locm.fast import pcg64
from cardarena.locm.fast.batch import Batch
from cardarena.locm.fast.playouts import play_random, playout
from cardarena.locm.fast.threads import slices, thread_count


@njit(cache=True)
def _draw(row: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    out = np.empty(kinds.shape[0], np.int64)
    for i in range(kinds.shape[0]):
        if kinds[i] == 0:
            out[i] = pcg64.full_range_int64(row)
        elif kinds[i] == 1:
            out[i] = pcg64.below_2_63(row)
        else:
            out[i] = pcg64.coin(row)
    return out


def test_compiled_pcg64_draws_numpys_numbers_and_state() -> None:
    """Any mix of the three draws (the coin's buffered 32-bit half included), from
    generators seeded as gymnasium seeds them, and the state handed back and forth."""
    from gymnasium.utils import seeding

    kinds_rng = np.random.default_rng(5)
    for seed in [*range(60), 2**64 - 1, 12345678901234567]:
        generator = seeding.np_random(seed)[0]
        row = np.zeros(pcg64.STATE_WORDS, np.uint64)
        pcg64.load(generator, row)
        kinds = kinds_rng.integers(0, 3, 41)
        expected = []
        for kind in kinds:
            if kind == 0:
                expected.append(int(generator.integers(JAVA_LONG_MIN, JAVA_LONG_MAX,
                                                       endpoint=True)))  # fmt: skip
            elif kind == 1:
                expected.append(int(generator.integers(2**63)))
            else:
                expected.append(int(generator.integers(2)))
        assert _draw(row, kinds).tolist() == expected
        assert pcg64.generator(row).bit_generator.state == generator.bit_generator.state


def test_load_refuses_another_bit_generator() -> None:
    with pytest.raises(ValueError, match="PCG64"):
        pcg64.load(np.random.Generator(np.random.MT19937(1)), np.zeros(6, np.uint64))


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_play_random_on_threads_plays_the_games_of_one_thread(version: str) -> None:
    one = play_random(301, version, 9, record=True, threads=1)
    three = play_random(301, version, 9, record=True, threads=3)
    for a, b in zip(one, three, strict=True):
        assert np.array_equal(a, b)


def test_threaded_creation_and_greedy_playouts_equal_one_thread() -> None:
    batches = [Batch.new("1.5", 257, seed=4, threads=threads) for threads in (1, 2)]
    assert np.array_equal(batches[0].state, batches[1].state)
    assert np.array_equal(batches[0].cards, batches[1].cards)
    results = [playout(batch, ("greedy", "random"), 3, threads=t)
               for batch, t in zip(batches, (1, 4), strict=True)]  # fmt: skip
    assert np.array_equal(results[0].winners, results[1].winners)
    assert np.array_equal(batches[0].state, batches[1].state)


def test_slices_cover_the_batch_and_threads_are_checked() -> None:
    for n, threads, minimum in [(0, 2, 1), (5, 8, 1), (1000, 3, 128), (100, 4, 64)]:
        cut = slices(n, threads, minimum)
        assert cut[0][0] == 0 and cut[-1][1] == n
        assert all(a[1] == b[0] for a, b in itertools.pairwise(cut))
        assert 1 <= len(cut) <= threads
    assert thread_count(None) >= 1
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="threads must be a positive integer"):
            thread_count(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_play_random_plays_the_games_of_a_playout_of_a_new_batch(version: str) -> None:
    """play_random plays each game in a scratch row: the games of the batch path."""
    fast = play_random(200, version, 21, record=True)
    batch = Batch.new(version, 200, seed=21)
    slow = playout(batch, ("random", "random"), 21, record=True)
    for a, b in zip(fast, slow, strict=True):
        assert np.array_equal(a, b)
    assert fast.winners.dtype == np.int8 and fast.turns.dtype == np.int32
