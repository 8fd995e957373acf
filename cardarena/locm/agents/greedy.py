"""The greedy agent: one action at a time, the one that leaves the best position.

In the spirit of the competition's rule-based baselines: it summons while that
adds to the board, trades when the trade is worth more than face damage, breaks
through Guards, uses items where they change the most, and goes face when the
damage it can deal this turn is lethal. Deck building uses the card scores of
:mod:`.cardscore`. Ties are broken by a seeded random draw, so it is reproducible.
"""

from __future__ import annotations

import random

from ..engine.cards import GUARD
from ..engine.state import PASS, Action, ActionType, Phase, State
from .cardscore import DEFAULT_DECK, DeckPolicy, deck_building_action
from .evaluation import BASELINE, Weights, evaluate

IMPROVEMENT = 1e-6
"""An action must beat passing by more than this (rounding noise is not a reason to act)."""


def face_damage_available(state: State) -> int:
    """Damage the active player's ready creatures could deal to the face right now."""
    me, opp = state.players[state.active], state.players[1 - state.active]
    guarded = 0
    for creature in opp.board:
        if creature.keywords & GUARD:
            guarded |= 1 << creature.lane
    return sum(c.attack for c in me.board if c.can_attack and not guarded & (1 << c.lane))


def lethal_attack(state: State, actions: list[Action]) -> Action | None:
    """A face attack if the ready, unguarded creatures can kill this turn."""
    if face_damage_available(state) < state.players[1 - state.active].health:
        return None
    for action in actions:
        if action.type == ActionType.ATTACK and action.target == -1:
            return action
    return None


def best_greedy_action(
    state: State,
    actions: list[Action] | None = None,
    tie_break: random.Random | None = None,
    weights: Weights = BASELINE,
) -> Action:
    """The one-step greedy choice for the active player (PASS if nothing helps)."""
    player = state.active
    if actions is None:
        actions = state.legal_actions()
    lethal = lethal_attack(state, actions)
    if lethal is not None:
        return lethal
    best_action = PASS
    best_score = evaluate(state, player, weights) + IMPROVEMENT
    for action in actions:
        if action.type == ActionType.PASS:
            continue
        child = state.clone()
        child.execute(action)
        score = evaluate(child, player, weights)
        if tie_break is not None:
            score += tie_break.random() * 1e-9
        if score > best_score:
            best_score = score
            best_action = action
    return best_action


class GreedyAgent:
    """Scored deck building, then the best immediate action until nothing improves."""

    name = "greedy"

    def __init__(
        self,
        seed: int | None = None,
        weights: Weights = BASELINE,
        deck_policy: DeckPolicy = DEFAULT_DECK,
    ) -> None:
        self._random = random.Random(seed)
        self.weights = weights
        self.deck_policy = deck_policy

    def act(self, state: State) -> Action:
        if state.phase == Phase.DECK_BUILDING:
            return deck_building_action(state, self.deck_policy)
        if state.is_terminal:
            raise ValueError("the game has ended: there is no legal action")
        return best_greedy_action(state, tie_break=self._random, weights=self.weights)
