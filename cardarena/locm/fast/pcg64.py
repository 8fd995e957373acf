"""numpy's default generator (PCG64) as compiled functions, for draws inside compiled loops.

The vector environment draws each autoreset from the env's own ``np.random.Generator``,
exactly as the single environment does (``integers`` of a full-range long, of 2 and of
``2**63``). Doing that inside the compiled step, with no Python per game, needs the
generator itself in compiled code: its state is a row of :data:`STATE_WORDS` uint64
(the 128-bit LCG state and increment as high/low words, and the buffered 32-bit half
that ``next_uint32`` keeps), read from and written back to a Python
``Generator`` with :func:`load` and :func:`store`. The draws are numpy's, word for word
(XSL-RR output, Lemire's bounded integers); the tests compare them with numpy's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import require_numba

require_numba()

from numba import njit  # noqa: E402 (after the one-line install hint)

STATE_HI, STATE_LO, INC_HI, INC_LO, HAS_UINT32, UINTEGER = range(6)
STATE_WORDS = 6
"""uint64 words of one generator's state row."""
_MULT_HI = np.uint64(2549297995355413924)
_MULT_LO = np.uint64(4865540595714422341)
"""PCG_DEFAULT_MULTIPLIER_128, as numpy's pcg64 uses it."""
_MASK32 = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)
_U58 = np.uint64(58)
_U64 = np.uint64(64)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)


@njit(cache=True, nogil=True, inline="always")
def _mul_high(a: np.uint64, b: np.uint64) -> np.uint64:
    """The high 64 bits of the 128-bit product of two uint64."""
    a_lo = a & _MASK32
    a_hi = a >> _U32
    b_lo = b & _MASK32
    b_hi = b >> _U32
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> _U32) + (hi_lo & _MASK32) + lo_hi
    return hi_hi + (hi_lo >> _U32) + (cross >> _U32)


@njit(cache=True, nogil=True)
def next_uint64(rng: np.ndarray) -> np.uint64:
    """numpy's ``pcg64_next64``: one LCG step of the 128-bit state, then XSL-RR."""
    s_hi = rng[STATE_HI]
    s_lo = rng[STATE_LO]
    # state = state * MULT + inc (mod 2**128)
    lo = s_lo * _MULT_LO
    hi = _mul_high(s_lo, _MULT_LO) + s_lo * _MULT_HI + s_hi * _MULT_LO
    new_lo = lo + rng[INC_LO]
    carry = _ONE if new_lo < lo else _ZERO
    new_hi = hi + rng[INC_HI] + carry
    rng[STATE_HI] = new_hi
    rng[STATE_LO] = new_lo
    value = new_hi ^ new_lo
    rot = new_hi >> _U58
    if rot == _ZERO:
        return value
    return (value >> rot) | (value << (_U64 - rot))


@njit(cache=True, nogil=True)
def next_uint32(rng: np.ndarray) -> np.uint64:
    """numpy's ``pcg64_next32``: the low half of a 64-bit draw, the high half kept for
    the next call."""
    if rng[HAS_UINT32] != _ZERO:
        rng[HAS_UINT32] = _ZERO
        return rng[UINTEGER]
    value = next_uint64(rng)
    rng[HAS_UINT32] = _ONE
    rng[UINTEGER] = value >> _U32
    return value & _MASK32


@njit(cache=True, nogil=True)
def full_range_int64(rng: np.ndarray) -> int:
    """``integers(-2**63, 2**63 - 1, endpoint=True)``: a raw word offset by -2**63."""
    return np.int64(next_uint64(rng) ^ np.uint64(0x8000000000000000))


@njit(cache=True, nogil=True)
def below_2_63(rng: np.ndarray) -> int:
    """``integers(2**63)``: Lemire's product of a raw word and 2**63 is the word halved."""
    return np.int64(next_uint64(rng) >> _ONE)


@njit(cache=True, nogil=True)
def coin(rng: np.ndarray) -> int:
    """``integers(2)``: Lemire's 32-bit product of a ``next_uint32`` and 2, its top bit."""
    return np.int64(next_uint32(rng) >> np.uint64(31))


def load(generator: np.random.Generator, out: np.ndarray) -> None:
    """Copy a PCG64 ``Generator``'s state into a state row (ValueError for another one)."""
    state: dict[str, Any] = generator.bit_generator.state
    if state["bit_generator"] != "PCG64":
        raise ValueError(f"expected a PCG64 generator, got {state['bit_generator']}")
    inner = state["state"]
    mask = (1 << 64) - 1
    out[STATE_HI] = inner["state"] >> 64
    out[STATE_LO] = inner["state"] & mask
    out[INC_HI] = inner["inc"] >> 64
    out[INC_LO] = inner["inc"] & mask
    out[HAS_UINT32] = state["has_uint32"]
    out[UINTEGER] = state["uinteger"]


def store(row: np.ndarray, generator: np.random.Generator) -> None:
    """Put a state row back into a PCG64 ``Generator`` (the inverse of :func:`load`)."""
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (int(row[STATE_HI]) << 64) | int(row[STATE_LO]),
                  "inc": (int(row[INC_HI]) << 64) | int(row[INC_LO])},
        "has_uint32": int(row[HAS_UINT32]),
        "uinteger": int(row[UINTEGER]),
    }  # fmt: skip


def generator(row: np.ndarray) -> np.random.Generator:
    """A Python ``Generator`` in the state of a state row (for draws made in Python;
    :func:`load` them back afterwards)."""
    result = np.random.Generator(np.random.PCG64())
    store(row, result)
    return result
