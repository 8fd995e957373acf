"""``java.util.Random`` double streams with numpy: the 1.5 card generator's draws, fast.

The 48-bit LCG jumps ahead in closed form: after ``k`` steps the state is
``(A_k * s0 + C_k) mod 2**48``. Computed in uint64, whose wraparound is mod 2**64,
the result is still exact mod 2**48 (2**48 divides 2**64), so every state of a
stream comes from one vectorised multiply-add. The engine keeps the one generator
(:func:`cardarena.locm.engine.cards.generate_cards`); this only supplies its draws, equal
number for number to :func:`cardarena.locm.engine.cards.java_double_streams`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..engine.javarandom import ADDEND, DOUBLE_UNIT, MASK, MULTIPLIER

_jumps: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.uint64), np.zeros(0, np.uint64))
"""(A_k, C_k) for k = 1..len: the state after k steps is (A_k * s0 + C_k) mod 2**48."""


def _jump_tables(steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The jump coefficients of at least ``steps`` steps (grown and kept)."""
    global _jumps
    if len(_jumps[0]) < steps:
        size = max(steps, 2 * len(_jumps[0]), 512)
        multipliers, addends = [], []
        a, c = 1, 0
        for _ in range(size):
            a, c = (a * MULTIPLIER) & MASK, (c * MULTIPLIER + ADDEND) & MASK
            multipliers.append(a)
            addends.append(c)
        _jumps = (np.array(multipliers, np.uint64), np.array(addends, np.uint64))
    return _jumps


def double_streams(seeds: Sequence[int], count: int) -> list[list[float]]:
    """The first ``count`` ``nextDouble()`` of ``Random(seed)`` for each seed."""
    multipliers, addends = _jump_tables(2 * count)
    starts = np.array([(seed ^ MULTIPLIER) & MASK for seed in seeds], np.uint64)[:, None]
    states = (starts * multipliers[: 2 * count] + addends[: 2 * count]) & np.uint64(MASK)
    bits = ((states[:, 0::2] >> np.uint64(22)) << np.uint64(27)) + (
        states[:, 1::2] >> np.uint64(21)
    )
    values: list[list[float]] = (bits.astype(np.float64) * DOUBLE_UNIT).tolist()
    return values
