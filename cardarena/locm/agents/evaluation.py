"""A static evaluation of a battle position, shared by the greedy and search agents.

It reads only what the evaluated player may see (both boards, both healths, hand
*sizes*, draw counts), so an agent that scores positions with it learns nothing
hidden. Units are "stat points": one attack or defense point on the board is
worth about one point, and so is one point of the opponent's health. The
weights are data (:class:`Weights`): the greedy baseline uses plain ones, the
search agent weights tuned by self-play (``benchmarks/agents.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cards import BREAKTHROUGH, DRAIN, GUARD, LETHAL, WARD
from ..state import Creature, Phase, State

WIN_SCORE = 1_000_000.0


@dataclass(frozen=True, slots=True)
class Weights:
    """How much each feature of a position is worth, in stat points."""

    creature_base: float = 1.5
    attack: float = 1.0
    defense: float = 1.0
    enemy_attack: float = 1.0
    """An enemy creature's attack (what it threatens next turn)."""
    hand_card: float = 1.2
    """A card in hand: an option, worth less than what it becomes on the board."""
    draw_card: float = 0.8
    my_health: float = 1.0
    opp_health: float = 1.0
    low_health: float = 1.0
    """Extra worth of each own health point below :attr:`low_health_below`."""
    low_health_below: int = 12
    lethal_threat: float = 12.0
    """Penalty for letting the opponent's board reach our face for a kill next turn."""


BASELINE = Weights()
"""The greedy agent's weights: round numbers, chosen by hand."""
TUNED = Weights(
    creature_base=2.0,
    attack=1.0,
    defense=1.0,
    enemy_attack=1.3,
    hand_card=1.0,
    draw_card=0.8,
    my_health=1.0,
    opp_health=1.0,
    low_health=1.0,
    low_health_below=12,
    lethal_threat=12.0,
)
"""The search agent's weights (see the module docstring)."""


def creature_score(creature: Creature, attack_weight: float, weights: Weights) -> float:
    """What one creature on the board is worth."""
    attack, defense, keywords = creature.attack, creature.defense, creature.keywords
    value = weights.creature_base + attack_weight * attack + weights.defense * defense
    if keywords:
        if keywords & WARD:
            value += 0.8 * attack + 1.0
        if keywords & LETHAL and attack > 0:
            value += 2.5
        if keywords & GUARD:
            value += 0.5 + 0.2 * defense
        if keywords & DRAIN:
            value += 0.4 * attack
        if keywords & BREAKTHROUGH:
            value += 0.2 * attack
    return value


def _damage_through(attackers: list[Creature], defenders: list[Creature]) -> int:
    """Face damage the attackers' side could deal next turn: lanes with a Guard block it."""
    guarded = 0
    for creature in defenders:
        if creature.keywords & GUARD:
            guarded |= 1 << creature.lane
    total = 0
    for creature in attackers:
        if not guarded & (1 << creature.lane):
            total += creature.attack
    return total


def evaluate(state: State, player: int, weights: Weights = BASELINE) -> float:
    """The position's worth for ``player`` (higher is better; wins are huge)."""
    if state.phase is Phase.ENDED:
        if state.winner is None:
            return 0.0
        # A quicker win beats a later one, a later loss beats a quicker one.
        return WIN_SCORE - state.turn if state.winner == player else -WIN_SCORE + state.turn
    me, opp = state.players[player], state.players[1 - player]
    my_health, opp_health = me.health, opp.health
    score = weights.my_health * my_health - weights.opp_health * opp_health
    if my_health < weights.low_health_below:
        score -= weights.low_health * (weights.low_health_below - my_health)
    if opp_health < weights.low_health_below:
        score += weights.low_health * (weights.low_health_below - opp_health)
    for creature in me.board:
        score += creature_score(creature, weights.attack, weights)
    for creature in opp.board:
        score -= creature_score(creature, weights.enemy_attack, weights)
    score += weights.hand_card * (len(me.hand) - len(opp.hand))
    score += weights.draw_card * (me.next_turn_draw - opp.next_turn_draw)
    if state.active == player:
        # The opponent moves next: could its board kill us?
        if _damage_through(opp.board, me.board) >= my_health:
            score -= weights.lethal_threat
    elif _damage_through(me.board, opp.board) >= opp_health:
        score += weights.lethal_threat
    return score
