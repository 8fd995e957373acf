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
        actions = state.legal_actions()
        if not actions:
            raise ValueError("the game has ended: there is no legal action")
        return actions[int(self._random() * len(actions))]
