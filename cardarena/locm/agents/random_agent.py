"""The uniformly random agent: the baseline of every benchmark."""

from __future__ import annotations

import random

from ..engine.state import Action, State


class RandomAgent:
    """Uniform over the legal actions (PASS, which ends a battle turn, included)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.draw = random.Random(seed).random
        """The uniform draw in [0, 1) behind each pick (see State.random_action)."""

    def act(self, state: State) -> Action:
        return state.random_action(self.draw)
