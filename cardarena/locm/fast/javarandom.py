"""``java.util.Random`` and ``Collections.shuffle`` as compiled functions (numba).

The same numbers, call for call, as :mod:`cardarena.locm.engine.javarandom`, but
usable inside compiled loops. A generator is its 48-bit *state*, a plain int64:
:func:`scramble` turns a Java seed into it, and every drawing function takes the
state and returns ``(value, new_state)``; :func:`shuffle` permutes an array in place
and returns the new state. A plain int64 passed by value keeps the generator in a
register (no array to allocate or alias) and lets LLVM inline the hot calls.

Java's arithmetic is reproduced with int64: the 48-bit state times the multiplier
overflows 64 bits, but numba's integer multiply wraps (two's complement, as a Java
``long`` does) and only the low 48 bits are kept, so the product is exact.
"""

from __future__ import annotations

import numpy as np

from . import require_numba

require_numba()

from numba import njit  # noqa: E402 (after the one-line install hint)

MULTIPLIER = 0x5DEECE66D
ADDEND = 0xB
MASK = (1 << 48) - 1
DOUBLE_UNIT = 1.0 / (1 << 53)
INT_RANGE = 1 << 31
"""``u - r + m >= INT_RANGE`` is Java's ``u - r + m < 0`` (an int overflow) in int64."""


@njit(cache=True, nogil=True)
def scramble(seed: int) -> int:
    """``new Random(seed)``: the initial state of the generator of a Java long seed."""
    return (np.int64(seed) ^ MULTIPLIER) & MASK


@njit(cache=True, nogil=True)
def advance(state: int) -> int:
    """One step of the 48-bit linear congruential generator."""
    return (state * MULTIPLIER + ADDEND) & MASK


@njit(cache=True, nogil=True)
def next_bits(state: int, bits: int) -> tuple[int, int]:
    """``next(bits)``: the top ``bits`` bits of the next state (signed when 32)."""
    state = advance(state)
    value = state >> (48 - bits)
    if bits == 32 and value >= INT_RANGE:
        value -= 1 << 32
    return value, state


@njit(cache=True, nogil=True)
def next_int32(state: int) -> tuple[int, int]:
    """``nextInt()`` without a bound: a signed 32-bit value."""
    return next_bits(state, 32)


@njit(cache=True, nogil=True)
def next_int(state: int, bound: int) -> tuple[int, int]:
    """``nextInt(bound)`` (``bound`` > 0; not checked): the power-of-two shortcut and the
    rejection loop of the JDK, so that the number of draws is the JDK's too."""
    state = advance(state)
    u = state >> 17
    if bound & (bound - 1) == 0:
        return (bound * u) >> 31, state
    r = u % bound
    while u - r + bound - 1 >= INT_RANGE:
        state = advance(state)
        u = state >> 17
        r = u % bound
    return r, state


@njit(cache=True, nogil=True)
def next_long(state: int) -> tuple[int, int]:
    """``nextLong()``: ``((long) next(32) << 32) + next(32)``, wrapping like a Java long."""
    high, state = next_bits(state, 32)
    low, state = next_bits(state, 32)
    return (np.int64(high) << 32) + np.int64(low), state


@njit(cache=True, nogil=True)
def next_double(state: int) -> tuple[float, int]:
    """``nextDouble()``: 26 + 27 random bits scaled into [0, 1)."""
    state = advance(state)
    high = state >> 22
    state = advance(state)
    return ((high << 27) + (state >> 21)) * DOUBLE_UNIT, state


@njit(cache=True, nogil=True)
def shuffle(items: np.ndarray, state: int) -> int:
    """``Collections.shuffle(items, random)`` of the first ``len(items)`` entries, in
    place: for i = n .. 2, swap ``items[i - 1]`` with ``items[nextInt(i)]``."""
    for i in range(items.shape[0], 1, -1):
        j, state = next_int(state, i)
        swapped = items[i - 1]
        items[i - 1] = items[j]
        items[j] = swapped
    return state
