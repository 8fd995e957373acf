"""``java.util.Random`` and ``Collections.shuffle`` as compiled functions (numba).

The same numbers, call for call, as :mod:`cardarena.locm.engine.javarandom`, but
usable inside compiled loops. A generator is its 48-bit *state*, a plain int64:
:func:`scramble` turns a Java seed into it, and every drawing function takes the
state and returns ``(value, new_state)``; :func:`shuffle` permutes an array in place
and returns the new state. A plain int64 passed by value keeps the generator in a
register (no array to allocate or alias) and lets LLVM inline the hot calls.

Hot loops use the *wide* form of the same generator (``wide_*``): a uint64 whose low
48 bits are the state. The linear congruential step ``state * 0x5DEECE66D + 0xB``
only carries upwards, so the low 48 bits of the unmasked 64-bit product are those of
the masked one: a wide state skips the ``& (2**48 - 1)`` of every step, which is a
quarter of the step's latency in a loop of dependent draws, and is masked once where
a 48-bit state is handed out (:func:`narrow`). The arithmetic is uint64, which wraps
by definition (numba's int64 arithmetic is marked as never overflowing).
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

_MULTIPLIER = np.uint64(MULTIPLIER)
_ADDEND = np.uint64(ADDEND)
_MASK = np.uint64(MASK)
_BITS_31 = np.uint64((1 << 31) - 1)
_BITS_32 = np.uint64((1 << 32) - 1)
_BITS_26 = np.uint64((1 << 26) - 1)
_BITS_27 = np.uint64((1 << 27) - 1)
_SHIFT_16 = np.uint64(16)
_SHIFT_17 = np.uint64(17)
_SHIFT_21 = np.uint64(21)
_SHIFT_22 = np.uint64(22)


def _divisor(bound: int) -> tuple[int, int]:
    """``(multiplier, shift)`` with ``u // bound == (u * multiplier) >> shift`` for every
    ``0 <= u < 2**31`` (Granlund and Montgomery: ``shift = 31 + ceil(log2(bound))``,
    ``multiplier = ceil(2**shift / bound)``, so ``u * multiplier < 2**63``)."""
    shift = 31 + max(0, (bound - 1).bit_length())
    return -(-(1 << shift) // bound), shift


DIVISORS = 256
"""Bounds below this have their division by a multiply in :data:`DIVISOR_MULTIPLIER`."""
DIVISOR_MULTIPLIER = np.array([0, *(_divisor(b)[0] for b in range(1, DIVISORS))], np.int64)
DIVISOR_SHIFT = np.array([0, *(_divisor(b)[1] for b in range(1, DIVISORS))], np.int64)


# --- the wide state (uint64, low 48 bits) ---------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def widen(state: int) -> np.uint64:
    """A 48-bit state as a wide one."""
    return np.uint64(state)


@njit(cache=True, nogil=True, inline="always")
def narrow(wide: np.uint64) -> int:
    """A wide state as the 48-bit state (int64) the other functions take."""
    return np.int64(wide & _MASK)


@njit(cache=True, nogil=True, inline="always")
def wide_advance(wide: np.uint64) -> np.uint64:
    """One step of the generator, unmasked."""
    return wide * _MULTIPLIER + _ADDEND


@njit(cache=True, nogil=True, inline="always")
def wide_next_int32(wide: np.uint64) -> tuple[int, np.uint64]:
    """``nextInt()`` without a bound: a signed 32-bit value."""
    wide = wide_advance(wide)
    value = np.int64((wide >> _SHIFT_16) & _BITS_32)
    if value >= INT_RANGE:
        value -= 1 << 32
    return value, wide


@njit(cache=True, nogil=True, inline="always")
def wide_next_int(wide: np.uint64, bound: int) -> tuple[int, np.uint64]:
    """``nextInt(bound)`` (``bound`` > 0; not checked), as :func:`next_int`."""
    wide = wide_advance(wide)
    u = np.int64((wide >> _SHIFT_17) & _BITS_31)
    if bound & (bound - 1) == 0:
        return (bound * u) >> 31, wide
    r = u % bound
    while u - r + bound - 1 >= INT_RANGE:
        wide = wide_advance(wide)
        u = np.int64((wide >> _SHIFT_17) & _BITS_31)
        r = u % bound
    return r, wide


@njit(cache=True, nogil=True, inline="always")
def divisor(bound: int) -> tuple[int, int]:
    """``(multiplier, shift)`` of ``bound`` (> 0) for :func:`wide_next_int_by`: a table
    look-up below :data:`DIVISORS`, else one division."""
    if bound < DIVISORS:
        return DIVISOR_MULTIPLIER[bound], DIVISOR_SHIFT[bound]
    shift = 31
    while (1 << (shift - 31)) < bound:
        shift += 1
    return ((1 << shift) + bound - 1) // bound, shift


@njit(cache=True, nogil=True, inline="always")
def wide_next_int_by(
    wide: np.uint64, bound: int, multiplier: int, shift: int
) -> tuple[int, np.uint64]:
    """:func:`wide_next_int` with the remainder by a multiply (``divisor(bound)``): a
    hardware division takes several times as long, and a draft or a shuffle draws a
    hundred bounded numbers a game."""
    wide = wide_advance(wide)
    u = np.int64((wide >> _SHIFT_17) & _BITS_31)
    if bound & (bound - 1) == 0:
        return (bound * u) >> 31, wide
    r = u - ((u * multiplier) >> shift) * bound
    while u - r + bound - 1 >= INT_RANGE:
        wide = wide_advance(wide)
        u = np.int64((wide >> _SHIFT_17) & _BITS_31)
        r = u - ((u * multiplier) >> shift) * bound
    return r, wide


@njit(cache=True, nogil=True, inline="always")
def wide_next_long(wide: np.uint64) -> tuple[int, np.uint64]:
    """``nextLong()``, as :func:`next_long`."""
    high, wide = wide_next_int32(wide)
    low, wide = wide_next_int32(wide)
    return np.int64((np.uint64(high) << np.uint64(32)) + np.uint64(low)), wide


@njit(cache=True, nogil=True, inline="always")
def wide_next_double_bits(wide: np.uint64) -> tuple[int, np.uint64]:
    """The 53-bit integer ``n`` of ``nextDouble()`` (which is ``n * 2**-53``)."""
    wide = wide_advance(wide)
    high = np.int64((wide >> _SHIFT_22) & _BITS_26)
    wide = wide_advance(wide)
    low = np.int64((wide >> _SHIFT_21) & _BITS_27)
    return (high << 27) + low, wide


@njit(cache=True, nogil=True, inline="always")
def wide_next_double(wide: np.uint64) -> tuple[float, np.uint64]:
    """``nextDouble()``, as :func:`next_double`."""
    bits, wide = wide_next_double_bits(wide)
    return bits * DOUBLE_UNIT, wide


@njit(cache=True, nogil=True, inline="always")
def wide_shuffle(items: np.ndarray, wide: np.uint64) -> np.uint64:
    """:func:`shuffle` with a wide state (inlined: no reference counting of ``items``)."""
    for i in range(items.shape[0], 1, -1):
        multiplier, shift = divisor(i)
        j, wide = wide_next_int_by(wide, i, multiplier, shift)
        swapped = items[i - 1]
        items[i - 1] = items[j]
        items[j] = swapped
    return wide


# --- the 48-bit state (int64) ------------------------------------------------------------------


@njit(cache=True, nogil=True)
def scramble(seed: int) -> int:
    """``new Random(seed)``: the initial state of the generator of a Java long seed."""
    return (np.int64(seed) ^ MULTIPLIER) & MASK


@njit(cache=True, nogil=True)
def advance(state: int) -> int:
    """One step of the 48-bit linear congruential generator."""
    return narrow(wide_advance(widen(state)))


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
    value, wide = wide_next_int32(widen(state))
    return value, narrow(wide)


@njit(cache=True, nogil=True)
def next_int(state: int, bound: int) -> tuple[int, int]:
    """``nextInt(bound)`` (``bound`` > 0; not checked): the power-of-two shortcut and the
    rejection loop of the JDK, so that the number of draws is the JDK's too."""
    value, wide = wide_next_int(widen(state), bound)
    return value, narrow(wide)


@njit(cache=True, nogil=True)
def next_long(state: int) -> tuple[int, int]:
    """``nextLong()``: ``((long) next(32) << 32) + next(32)``, wrapping like a Java long."""
    value, wide = wide_next_long(widen(state))
    return value, narrow(wide)


@njit(cache=True, nogil=True)
def next_double(state: int) -> tuple[float, int]:
    """``nextDouble()``: 26 + 27 random bits scaled into [0, 1)."""
    value, wide = wide_next_double(widen(state))
    return value, narrow(wide)


@njit(cache=True, nogil=True)
def shuffle(items: np.ndarray, state: int) -> int:
    """``Collections.shuffle(items, random)`` of the first ``len(items)`` entries, in
    place: for i = n .. 2, swap ``items[i - 1]`` with ``items[nextInt(i)]``."""
    return narrow(wide_shuffle(items, widen(state)))
