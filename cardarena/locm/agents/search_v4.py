"""The search agent, fourth version: search-v3's battle with learned-v3's deck building.

search-v3 (:mod:`.search_v3`) plans whole turns and scores positions with learned-v2's
value network; it builds the fitted deck (:data:`.cardscore.FITTED_DECK`), one card
value at a time. search-v4 plays the same turns and builds its deck with learned-v3's
pointer network (:mod:`.learned_v3`), trained by self-play against that fitted deck
with learned-v2's network battling on both sides, which is how search-v3 judges
positions too.
"""

from __future__ import annotations

from typing import Any

from ..engine.state import Action, Phase, State
from .learned_v3 import LearnedDeckBuilder, Weights
from .search_v3 import SearchAgentV3


class SearchAgentV4(SearchAgentV3):
    """search-v3's turns, learned-v3's deck."""

    name = "search"

    def __init__(
        self, seed: int | None = None, deck_weights: Weights | None = None, **options: Any
    ) -> None:
        super().__init__(seed, **options)
        self.deck_builder: LearnedDeckBuilder | None = LearnedDeckBuilder(deck_weights)

    def act(self, state: State) -> Action:
        if state.phase == Phase.DECK_BUILDING and self.deck_builder is not None:
            return self.deck_builder.action(state)
        return super().act(state)
