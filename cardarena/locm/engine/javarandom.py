"""A bit-exact port of ``java.util.Random`` and ``Collections.shuffle``.

The official LOCM referees draw every random number (draft triples, 1.5 card
generation, deck shuffles) from ``java.util.Random``; reproducing an official
game from its seeds needs the very same 48-bit generator, including the
rejection loop of ``nextInt(bound)`` and the signed arithmetic of ``nextLong``.
"""

from __future__ import annotations

from typing import Any

MULTIPLIER = 0x5DEECE66D
ADDEND = 0xB
MASK = (1 << 48) - 1
DOUBLE_UNIT = 1.0 / (1 << 53)
_INT_RANGE = 1 << 31

JAVA_LONG_MIN = -(1 << 63)
JAVA_LONG_MAX = (1 << 63) - 1
JAVA_INT_MIN = -(1 << 31)
JAVA_INT_MAX = (1 << 31) - 1


def to_int32(value: int) -> int:
    """Wrap an integer to a signed 32-bit value, as a Java ``int`` cast does."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def to_int64(value: int) -> int:
    """Wrap an integer to a signed 64-bit value, as a Java ``long`` cast does."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value & 0x8000000000000000 else value


class JavaRandom:
    """``java.util.Random``: same seed, same sequence as the JVM, call for call."""

    __slots__ = ("_seed",)

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ MULTIPLIER) & MASK

    def next(self, bits: int) -> int:
        """Advance the generator and return its top ``bits`` bits (signed when 32)."""
        seed = (self._seed * MULTIPLIER + ADDEND) & MASK
        self._seed = seed
        value = seed >> (48 - bits)
        if bits == 32 and value & 0x80000000:
            value -= 1 << 32
        return value

    def next_int(self, bound: int | None = None) -> int:
        """``nextInt()`` without a bound, ``nextInt(bound)`` with one."""
        if bound is None:
            return self.next(32)
        if bound <= 0:
            raise ValueError(f"bound must be positive, got {bound}")
        seed = (self._seed * MULTIPLIER + ADDEND) & MASK
        r = seed >> 17
        if bound & (bound - 1) == 0:
            self._seed = seed
            return (bound * r) >> 31
        m = bound - 1
        u = r
        r = u % bound
        while u - r + m >= _INT_RANGE:
            seed = (seed * MULTIPLIER + ADDEND) & MASK
            u = seed >> 17
            r = u % bound
        self._seed = seed
        return r

    def next_long(self) -> int:
        """``nextLong()``: the signed low word is added to the high word."""
        return to_int64((self.next(32) << 32) + self.next(32))

    def next_double(self) -> float:
        """``nextDouble()``: 53 random bits scaled into [0, 1)."""
        seed = (self._seed * MULTIPLIER + ADDEND) & MASK
        high = seed >> 22
        seed = (seed * MULTIPLIER + ADDEND) & MASK
        self._seed = seed
        return ((high << 27) + (seed >> 21)) * DOUBLE_UNIT

    def shuffle(self, items: list[Any]) -> None:
        """``Collections.shuffle(items, this)``, in place (``next_int`` inlined: hot at reset)."""
        seed = self._seed
        for i in range(len(items), 1, -1):
            seed = (seed * MULTIPLIER + ADDEND) & MASK
            u = seed >> 17
            if i & (i - 1) == 0:
                j = (i * u) >> 31
            else:
                j = u % i
                while u - j + i - 1 >= _INT_RANGE:
                    seed = (seed * MULTIPLIER + ADDEND) & MASK
                    u = seed >> 17
                    j = u % i
            items[i - 1], items[j] = items[j], items[i - 1]
        self._seed = seed


def parse_java_long(text: str) -> int:
    """``Long.parseLong``: optional sign, decimal digits, 64-bit range; else ValueError."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isdigit() or not body.isascii():
        raise ValueError(f"not a Java long: {text!r}")
    value = int(text)
    if not JAVA_LONG_MIN <= value <= JAVA_LONG_MAX:
        raise ValueError(f"out of the Java long range: {text!r}")
    return value


def parse_java_int(text: str) -> int:
    """``Integer.parseInt``: optional sign, decimal digits, 32-bit range; else ValueError.

    Like Java, any Unicode decimal digit is accepted (``str.isdecimal``).
    """
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isdecimal():
        raise ValueError(f"not a Java int: {text!r}")
    value = int(text)
    if not JAVA_INT_MIN <= value <= JAVA_INT_MAX:
        raise ValueError(f"out of the Java int range: {text!r}")
    return value
