"""A static evaluation of a battle position, shared by the greedy and search agents.

It reads only what the evaluated player may see (both boards, both healths, hand
*sizes*, draw counts), so an agent that scores positions with it learns nothing
hidden. Units are "stat points": one attack or defense point on the board is
worth about one point, and so is one point of the opponent's health. The
weights are data (:class:`Weights`): the greedy baseline uses plain ones, the
search agent slightly different ones (:data:`TUNED`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.cards import BREAKTHROUGH, DRAIN, GUARD, LETHAL, WARD
from ..engine.state import Creature, Phase, State

WIN_SCORE = 1_000_000.0


@dataclass(frozen=True, slots=True)
class Weights:
    """How much each feature of a position is worth, in opponent health points.

    "my" is the evaluated player, "opp" its opponent. Creature features are sums
    over that side's board: one per creature, its attack, its defense, and its
    keyword value (:func:`keyword_value`).
    """

    my_health: float = 1.0
    opp_health: float = 1.0
    my_low: float = 1.0
    """Extra worth of each own health point below :attr:`low_health_below`."""
    opp_low: float = 1.0
    """Extra worth of each opponent health point it is below :attr:`low_health_below`."""
    low_health_below: int = 12
    my_creature: float = 1.5
    my_attack: float = 1.0
    my_defense: float = 1.0
    my_keywords: float = 1.0
    opp_creature: float = 1.5
    opp_attack: float = 1.0
    opp_defense: float = 1.0
    opp_keywords: float = 1.0
    hand: float = 1.2
    """Per card of hand-size difference (mine minus the opponent's)."""
    draw: float = 0.8
    """Per card of next-turn-draw difference."""
    lethal_threat: float = 12.0
    """Penalty, on our turn, for leaving the opponent's board able to kill us next turn."""
    lethal_chance: float = 12.0
    """Bonus, on the opponent's turn, for our board being able to kill it next turn."""


BASELINE = Weights()
"""The greedy agent's weights: round numbers, chosen by hand."""
TUNED = Weights(my_creature=2.0, opp_creature=2.0, opp_attack=1.3, hand=1.0)
"""The search agent's weights: creatures worth a little more, enemy attack feared a
little more. (Weights fitted by logistic regression on who won greedy self-play
games, one set per moment of evaluation, were tried too: no measurable gain.)"""


BOARD_CONTROL = Weights(
    my_creature=10.0,
    opp_creature=10.0,
    my_attack=5.0,
    opp_attack=5.5,
    my_defense=3.5,
    opp_defense=3.5,
    my_keywords=3.5,
    opp_keywords=3.5,
    hand=4.0,
    draw=2.5,
    lethal_threat=30.0,
    lethal_chance=30.0,
)
"""search-v2's weights in 1.0/1.2: the board is worth about five times what it is in
:data:`TUNED`, against the same health, as in the contest winners' evaluations (Coac's
counts a creature's attack ten times a health point). Chosen from 100-game matches of
search-v2 against search-v1 (60% in 1.2, 48% in 1.5); 400 games then gave 53.5% in 1.2,
no clear gain, and 62% in 1.0 (docs/agents.md)."""


def keyword_value(creature: Creature) -> float:
    """What a creature's keywords add to its attack and defense, in stat points."""
    keywords = creature.keywords
    if not keywords:
        return 0.0
    attack, defense = creature.attack, creature.defense
    value = 0.0
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
    w = weights
    my_health, opp_health = me.health, opp.health
    score = w.my_health * my_health - w.opp_health * opp_health
    below = w.low_health_below
    if my_health < below:
        score -= w.my_low * (below - my_health)
    if opp_health < below:
        score += w.opp_low * (below - opp_health)
    attack = defense = keywords = 0.0
    for creature in me.board:
        attack += creature.attack
        defense += creature.defense
        if creature.keywords:
            keywords += keyword_value(creature)
    score += (
        w.my_creature * len(me.board)
        + w.my_attack * attack
        + w.my_defense * defense
        + w.my_keywords * keywords
    )
    attack = defense = keywords = 0.0
    for creature in opp.board:
        attack += creature.attack
        defense += creature.defense
        if creature.keywords:
            keywords += keyword_value(creature)
    score -= (
        w.opp_creature * len(opp.board)
        + w.opp_attack * attack
        + w.opp_defense * defense
        + w.opp_keywords * keywords
    )
    score += w.hand * (len(me.hand) - len(opp.hand))
    score += w.draw * (me.next_turn_draw - opp.next_turn_draw)
    if state.active == player:
        # The opponent moves next: could its board kill us?
        if _damage_through(opp.board, me.board) >= my_health:
            score -= w.lethal_threat
    elif _damage_through(me.board, opp.board) >= opp_health:
        score += w.lethal_chance
    return score
