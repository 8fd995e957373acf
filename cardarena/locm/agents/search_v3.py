"""The search agent, third version: search-v2's turn planning, judged by learned-v2's
value network instead of a hand-set evaluation.

search-v2 enumerates the distinct ends of the turn (stage 1), plays the opponent's
reply on the best of them (stage 2: its visible board; stage 3: sampled hands) and
keeps the turn whose position after the reply scores best. Its score was a weighted
sum of health, board and cards, with weights set by hand and by matches. Here the
position after the reply is scored by the network builtin:learned plays with (trained
by self-play to give the chance that a position is won, :mod:`.learned_v2`): it has
seen millions of finished games, so it knows, say, when a smaller board with more
cards in hand is ahead. Stage 1 still orders the turn's ends by search-v2's static
evaluation: ordering them by the network won no more games (docs/agents.md lists what
was tried). The time budget and the positions compared in stage 3 depend on the version
(:data:`VERSION_BUDGETS`, :data:`VERSION_SAMPLED`).

With ``reply="learned"`` the opponent's reply is the network's own best turn (one
action at a time, the action whose afterstate it rates highest for the opponent)
instead of builtin:greedy's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.state import Action, Phase, State
from .evaluation import WIN_SCORE
from .greedy import lethal_attack
from .learned_v2 import (
    FEATURES,
    ValueNetwork,
    afterstate_values,
    load_weights,
    position_features,
)
from .search_v2 import SearchAgentV2, _Position, play_next_turn

VERSION_BUDGETS = {"1.0": 0.45, "1.2": 0.6, "1.5": 0.6}
"""Share of the official turn limit the search may use, per version (search-v2: 0.45 in
all). More time won more 1.2 games against search-v1 (68% against 63.5%, 200 games) and
was neutral in 1.5; 1.0's limit is 100 ms, where a loaded machine leaves less margin."""

VERSION_SAMPLED = {"1.0": 4, "1.2": 4, "1.5": 8}
"""Positions compared by sampled hands in stage 3, per version (search-v2: 4). In 1.5
against search-v1 (200 games each): 4 won 60.0%, 8 won 63.5%, 16 won 62.5%."""

VALUE_SCALE = 1000.0
"""A win probability is scored as this many points (a won game: :data:`WIN_SCORE`)."""


def world_value(world: State, player: int, network: ValueNetwork) -> float:
    """``player``'s score of ``world``: the network's chance of a win, in points."""
    if world.is_terminal:
        return WIN_SCORE if world.winner == player else -WIN_SCORE
    return VALUE_SCALE * float(network.values(position_features(world, player)[None, :])[0])


def play_learned_reply(world: State, player: int, network: ValueNetwork) -> State:
    """End ``player``'s turn in ``world`` (in place) and let the opponent play the
    actions the network rates best for it, lethal first, until it would rather pass."""

    def choose(position: State) -> Action:
        actions = position.legal_actions()
        lethal = lethal_attack(position, actions)
        if lethal is not None:
            return lethal
        return actions[int(np.argmax(afterstate_values(position, actions, network)))]

    return play_next_turn(world, choose)


class SearchAgentV3(SearchAgentV2):
    """search-v2's turn enumeration and replies, scored by the learned value network."""

    name = "search"

    def __init__(
        self,
        seed: int | None = None,
        reply: str = "greedy",
        budget_fraction: float | None = None,
        sampled_candidates: int | None = None,
        **options: Any,
    ) -> None:
        """``budget_fraction`` and ``sampled_candidates`` None: the version's
        (:data:`VERSION_BUDGETS`, :data:`VERSION_SAMPLED`)."""
        super().__init__(seed, **options)
        self.fixed_budget_fraction = budget_fraction
        self.fixed_sampled_candidates = sampled_candidates
        if reply not in ("greedy", "learned"):
            raise ValueError(f"reply must be 'greedy' or 'learned', not {reply!r}")
        self.reply = reply
        self._networks = load_weights().networks
        for network in self._networks.values():
            network.values(np.zeros((2, FEATURES)))  # numpy's first products: not on a turn
        self.network: ValueNetwork = self._networks["1.2"]

    def budget_s(self, state: State) -> float:
        self.budget_fraction = self.fixed_budget_fraction or VERSION_BUDGETS[state.version]
        return super().budget_s(state)

    def plan_turn(self, state: State) -> list[Action]:
        if state.phase != Phase.DECK_BUILDING:
            self.network = self._networks[state.version]
            self.sampled_candidates = self.fixed_sampled_candidates or self._finalists(
                state.version
            )
        return self._plan_turn(state)

    def _finalists(self, version: str) -> int:
        """Positions compared in stage 3 unless given (:data:`VERSION_SAMPLED`)."""
        return VERSION_SAMPLED[version]

    def _reply(self, world: State, player: int) -> State:
        if self.reply == "learned":
            return play_learned_reply(world, player, self.network)
        return super()._reply(world, player)

    def _score_world(self, world: State, player: int) -> float:
        return world_value(world, player, self.network)

    def _sampled_replies(
        self, root: State, player: int, candidates: list[_Position], deadline: float
    ) -> int:
        """Stage 3, as search-v2's, once :meth:`_score_unreplied` has run."""
        self._score_unreplied(candidates, player)
        return super()._sampled_replies(root, player, candidates, deadline)

    def _score_unreplied(self, candidates: list[_Position], player: int) -> None:
        """A shortlisted position that stage 2 had no time for is scored without a reply,
        so that all scores are on the network's scale."""
        for candidate in candidates:
            if candidate.board_reply is None:
                candidate.board_reply = world_value(candidate.state, player, self.network)
