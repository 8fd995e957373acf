"""What the environments accept from a learner: seeds, action indices and shaping weights.

An action is a true integer (a Python int or a numpy integer, not a bool, a float or a
string: ``int(1.9)`` or ``int("0")`` would silently play another move); a shaping
weight a finite number (a NaN weight makes every reward NaN). Both are checked where
they come in, once per call, with an error that names the value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..engine.javarandom import JAVA_LONG_MAX, JAVA_LONG_MIN
from ..engine.state import IllegalActionError

SHAPING_TERMS = ("health", "board")


def _shown(value: object) -> str:
    text = repr(value)
    text = text if len(text) <= 40 else text[:37] + "..."
    return f"{text} ({type(value).__name__})"


def game_seed(seed: Any) -> int | None:
    """A reset's ``seed`` (the official game seed) as an int, or None: TypeError for
    anything but an integer (``"7"`` or ``7.0`` is not taken for 7), ValueError for one
    outside Java's 64-bit signed range, which the official referee's seeds live in."""
    if seed is None:
        return None
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer):
        raise TypeError(f"a reset seed is an integer (the official game seed), got {_shown(seed)}")
    value = int(seed)
    if not JAVA_LONG_MIN <= value <= JAVA_LONG_MAX:
        raise ValueError(f"a reset seed is a 64-bit signed integer, got {value}")
    return value


def action_index(action: Any, size: int) -> int:
    """``action`` as an index in ``0..size-1``: TypeError for anything but an integer,
    IllegalActionError for one outside the action space."""
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]  # a 0-d array: its scalar
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
        raise TypeError(
            f"an action is an integer (a Python int or a numpy integer), got {_shown(action)}"
        )
    index = int(action)
    if not 0 <= index < size:
        raise IllegalActionError(f"action {index} is outside the action space 0..{size - 1}")
    return index


def action_array(actions: Any, count: int) -> np.ndarray:
    """A batch of ``count`` actions as int64: TypeError unless they are integers (an
    integer array, or a list of ints), ValueError for another shape."""
    array = np.asarray(actions)
    if array.shape != (count,):
        raise ValueError(f"step() takes {count} actions, got shape {array.shape}")
    if array.dtype.kind not in "iu":
        bad = next(
            (
                a
                for a in array.tolist()
                if isinstance(a, bool) or not isinstance(a, int | np.integer)
            ),
            array.dtype,
        )
        raise TypeError(
            "actions are integers (an integer array or a list of ints), got "
            f"{array.dtype} values such as {_shown(bad)}"
        )
    return array.astype(np.int64, copy=False)


def checked_shaping(shaping: Mapping[str, float] | None) -> dict[str, float]:
    """The shaping weights by term; ValueError naming an unknown term or a weight that is
    not a finite number."""
    if shaping is None:
        return {}
    if not isinstance(shaping, Mapping):
        raise ValueError(f"shaping is a mapping of term to weight, got {_shown(shaping)}")
    weights: dict[str, float] = {}
    for term, weight in shaping.items():
        if term not in SHAPING_TERMS:
            raise ValueError(f"unknown shaping term {term!r}; known: {', '.join(SHAPING_TERMS)}")
        if (
            isinstance(weight, bool | np.bool_)
            or not isinstance(weight, int | float | np.integer | np.floating)
            or not math.isfinite(weight)
        ):
            raise ValueError(
                f"shaping[{term!r}]: the weight is a finite number, got {_shown(weight)}"
            )
        weights[term] = float(weight)
    return weights
