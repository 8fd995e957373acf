"""The passive agent: builds a scored deck, then never does anything in battle."""

from __future__ import annotations

from ..engine.state import PASS, Action, Phase, State
from .cardscore import deck_building_action


class PassAgent:
    """Always PASS in battle: a sparring partner that tests a bot's offence."""

    name = "pass"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed

    def act(self, state: State) -> Action:
        if state.phase == Phase.DECK_BUILDING:
            return deck_building_action(state)
        if state.is_terminal:
            raise ValueError("the game has ended: there is no legal action")
        return PASS
