"""The uniformly random agent: the baseline of every benchmark."""

from __future__ import annotations

import random

from ..state import Action, State


class RandomAgent:
    """Uniform over the legal actions (PASS, which ends a battle turn, included)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed).random

    def act(self, state: State) -> Action:
        return state.random_action(self._random)

    def play(self, state: State) -> None:
        """Act and apply at once: the action is legal by construction (no second check)."""
        state._apply_legal(state.random_action(self._random))
