"""learned-v2: an afterstate value network trained by self-play, played with numpy alone.

For every legal battle action the agent looks at the position the action leads to and
plays the one its network rates likeliest to win (a won game is worth 1, a lost one 0;
PASS is rated by the position after the turn ends), after builtin:greedy's lethal rule.
The network reads :data:`FEATURES` numbers about a position, as the acting player may
see it: both healths, draws, mana, hand and deck sizes, its own hand, each board's
creatures, attack, defense and keywords, lane by lane, the damage each board could
deal next turn, and builtin:greedy's evaluation of the position. Two tanh layers, a
sigmoid out.

It was trained in the compiled engine (:mod:`cardarena.locm.fast.selfplay`, whose
features and network this module repeats in numpy; a test keeps them equal) by
``scripts/train_learned.py``: games against a league of its past selves, builtin:greedy
and random play, each iteration fitting the network to who won. Deck building uses
the fitted card values (:data:`.cardscore.FITTED_DECK`): the network learned the battle only.

The weights live in ``learned_v2.npz`` next to this module: ``net/<version>`` (a flat
float64 vector), ``hidden/<version>`` and ``meta`` (a JSON string: how it was trained).
The shipped file has a network for each of 1.0, 1.2 and 1.5.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.cards import BREAKTHROUGH, DRAIN, GUARD, LETHAL, WARD
from ..engine.state import Action, ActionType, Phase, Player, State
from . import check_agent_version
from .cardscore import FITTED_DECK, deck_building_action
from .evaluation import BASELINE
from .greedy import lethal_attack

WEIGHTS_FILE = Path(__file__).with_name("learned_v2.npz")
FEATURES = 54
"""Length of a position's feature vector (``fast.selfplay.FEATURES``)."""


_SIDE_SCALE = (6.0, 20.0, 20.0, 3.0, 10.0, 3.0, 3.0, 10.0, 10.0, 20.0, 10.0, 10.0)
SCALE = 1.0 / np.array(
    (30.0, 30.0, 3.0, 3.0, 12.0, 12.0, 12.0, 8.0, 8.0, 30.0, 30.0, 50.0, 1.0,
     8.0, 8.0, 8.0, 20.0, *_SIDE_SCALE, *_SIDE_SCALE, 3.0, 10.0, 3.0, 10.0,
     3.0, 10.0, 3.0, 10.0, 30.0, 30.0, 1.0, 1.0, 30.0)
)  # fmt: skip
"""What each raw feature is multiplied by (``fast.selfplay`` divides by the same numbers)."""


def _side(player: Player) -> tuple[list[float], list[float], float, int]:
    """One board's 12 features, its lanes' 4 (count and attack per lane), greedy's
    keyword value of it (``fast.selfplay._side``), unscaled, and its guarded lanes (bits)."""
    attack = defense = guards = guard_defense = wards = lethals = 0.0
    drain = breakthrough = ready = keyword_value = top = 0.0
    lanes = [0.0, 0.0, 0.0, 0.0]
    guarded = 0
    for creature in player.board:
        a, d, kw = creature.attack, creature.defense, creature.keywords
        attack += a
        defense += d
        lane = 2 * creature.lane
        lanes[lane] += 1.0
        lanes[lane + 1] += a
        if a > top:
            top = a
        if creature.can_attack:
            ready += a
        if kw:
            if kw & GUARD:
                guards += 1.0
                guard_defense += d
                keyword_value += 0.5 + 0.2 * d
                guarded |= 1 << creature.lane
            if kw & WARD:
                wards += 1.0
                keyword_value += 0.8 * a + 1.0
            if kw & LETHAL:
                lethals += 1.0
                if a > 0:
                    keyword_value += 2.5
            if kw & DRAIN:
                drain += a
                keyword_value += 0.4 * a
            if kw & BREAKTHROUGH:
                breakthrough += a
                keyword_value += 0.2 * a
    block = [float(len(player.board)), attack, defense, guards, guard_defense, wards, lethals,
             drain, breakthrough, ready, keyword_value, top]  # fmt: skip
    return block, lanes, keyword_value, guarded


def _through(lanes: list[float], guarded: int) -> float:
    """Face damage a board could deal next turn: its attack in the lanes the other
    board does not guard."""
    return (0.0 if guarded & 1 else lanes[1]) + (0.0 if guarded & 2 else lanes[3])


def raw_features(state: State, player: int) -> list[float]:
    """The features of a running battle position as ``player`` sees it, before
    :data:`SCALE`: only what that player may see (its own hand, the sizes of the
    opponent's), and builtin:greedy's evaluation of it, worked out from the same sums."""
    me, opp = state.players[player], state.players[1 - player]
    creatures = items = castable = stats = 0.0
    mana = me.mana
    for instance in me.hand:
        card = instance.card
        if card.type == 0:
            creatures += 1.0
            stats += card.attack + card.defense
        else:
            items += 1.0
        if card.cost <= mana:
            castable += 1.0
    my_block, my_lanes, my_keywords, my_guards = _side(me)
    opp_block, opp_lanes, opp_keywords, opp_guards = _side(opp)
    my_health, opp_health = me.health, opp.health
    mine, theirs = _through(my_lanes, opp_guards), _through(opp_lanes, my_guards)
    my_turn = state.active == player
    # builtin:greedy's evaluation (evaluation.evaluate with BASELINE), from these sums
    w = BASELINE
    score = w.my_health * my_health - w.opp_health * opp_health
    below = w.low_health_below
    if my_health < below:
        score -= w.my_low * (below - my_health)
    if opp_health < below:
        score += w.opp_low * (below - opp_health)
    score += (w.my_creature * my_block[0] + w.my_attack * my_block[1]
              + w.my_defense * my_block[2] + w.my_keywords * my_keywords)  # fmt: skip
    score -= (w.opp_creature * opp_block[0] + w.opp_attack * opp_block[1]
              + w.opp_defense * opp_block[2] + w.opp_keywords * opp_keywords)  # fmt: skip
    score += w.hand * (len(me.hand) - len(opp.hand))
    score += w.draw * (me.next_turn_draw - opp.next_turn_draw)
    if my_turn:
        if theirs >= my_health:
            score -= w.lethal_threat
    elif mine >= opp_health:
        score += w.lethal_chance
    return [
        my_health, opp_health, me.next_turn_draw, opp.next_turn_draw, mana, me.max_mana,
        opp.max_mana, len(me.hand), len(opp.hand), len(me.deck), len(opp.deck),
        min(state.turn, 100), 1.0 if my_turn else 0.0,
        creatures, items, castable, stats, *my_block, *opp_block, *my_lanes, *opp_lanes,
        theirs, mine, float(theirs >= my_health), float(mine >= opp_health), score,
    ]  # fmt: skip


def position_features(state: State, player: int) -> np.ndarray:
    """The :data:`FEATURES` features of a running battle position (float64, scaled)."""
    return np.array(raw_features(state, player), np.float64) * SCALE


class ValueNetwork:
    """Features -> tanh -> tanh -> sigmoid: the chance that the position is won."""

    def __init__(self, flat: np.ndarray, hidden: int) -> None:
        flat = np.asarray(flat, np.float64)
        expected = FEATURES * hidden + hidden * hidden + 3 * hidden + 1
        if flat.shape != (expected,):
            raise ValueError(f"a network of {hidden} hidden units has {expected} numbers, "
                             f"got {flat.shape}")  # fmt: skip
        self.hidden = hidden
        self.flat = flat
        """All the parameters as one vector (the ones below are views into it)."""
        at = 0
        parts = []
        for shape in ((FEATURES, hidden), (hidden,), (hidden, hidden), (hidden,), (hidden,), (1,)):
            size = int(np.prod(shape))
            parts.append(flat[at : at + size].reshape(shape))
            at += size
        self.w1, self.b1, self.w2, self.b2, self.w3, self.b3 = parts

    def values(self, x: np.ndarray) -> np.ndarray:
        """Win probabilities of the rows of ``x`` ([n, FEATURES])."""
        h = np.tanh(x @ self.w1 + self.b1)
        h = np.tanh(h @ self.w2 + self.b2)
        z = h @ self.w3 + self.b3[0]
        return 1.0 / (1.0 + np.exp(-z))


FIT_BATCH = 256


def fit_network(flat: np.ndarray, hidden: int, x: np.ndarray, y: np.ndarray,
                adam: list[Any], learning_rate: float, epochs: int,
                rng: np.random.Generator) -> float:  # fmt: skip
    """Fit the network ``flat`` (float64, updated in place) to the chances ``y`` of the
    rows of ``x``: Adam epochs on the cross-entropy, batches of :data:`FIT_BATCH` in an
    order drawn from ``rng``. ``adam`` is the optimiser's [m, v, steps], updated in place,
    so that fits can continue one another. Returns the last epoch's mean loss.

    Used by training (``scripts/train_learned.py``) and fine-tuning
    (``benchmarks/search_value.py``); playing needs none of it."""
    if not isinstance(flat, np.ndarray) or flat.dtype != np.float64:
        raise TypeError("fit_network updates a float64 vector in place")
    net = ValueNetwork(flat, hidden)  # its parameters are views into ``flat``
    w1, b1, w2, b2, w3, b3 = net.w1, net.b1, net.w2, net.b2, net.w3, net.b3
    m, v, t = adam
    loss_sum = 0.0
    for _epoch in range(epochs):
        order = rng.permutation(len(x))
        loss_sum = 0.0
        for start in range(0, len(x), FIT_BATCH):
            idx = order[start : start + FIT_BATCH]
            xb, yb = x[idx], y[idx]
            a1 = np.tanh(xb @ w1 + b1)
            a2 = np.tanh(a1 @ w2 + b2)
            p = 1.0 / (1.0 + np.exp(-(a2 @ w3 + b3[0])))
            eps = 1e-7
            loss_sum += float(-np.sum(yb * np.log(p + eps) + (1 - yb) * np.log(1 - p + eps)))
            dz = (p - yb) / len(idx)
            d2 = np.outer(dz, w3) * (1 - a2 * a2)
            d1 = (d2 @ w2.T) * (1 - a1 * a1)
            grad = np.concatenate([(xb.T @ d1).ravel(), d1.sum(axis=0), (a1.T @ d2).ravel(),
                                   d2.sum(axis=0), a2.T @ dz, [dz.sum()]])  # fmt: skip
            t += 1
            m *= 0.9
            m += 0.1 * grad
            v *= 0.999
            v += 0.001 * grad * grad
            flat -= learning_rate * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    adam[:] = [m, v, t]
    return loss_sum / max(1, len(x))


class Weights:
    """The shipped networks, one per version, and how they were trained."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.meta: dict[str, Any] = json.loads(str(arrays["meta"]))
        self.networks = {
            key.split("/", 1)[1]: ValueNetwork(arrays[key], int(arrays["hidden/" + key[4:]]))
            for key in arrays
            if key.startswith("net/")
        }


@cache
def load_weights(path: str | Path = WEIGHTS_FILE) -> Weights:
    """The networks stored at ``path`` (loaded once; numpy only, no pickle)."""
    with np.load(path, allow_pickle=False) as data:
        return Weights({key: data[key] for key in data.files})


def save_weights(path: str | Path, networks: dict[str, tuple[np.ndarray, int]],
                 meta: dict[str, Any]) -> None:  # fmt: skip
    """Write networks (version -> (flat vector, hidden units)) and ``meta`` as an .npz."""
    arrays: dict[str, np.ndarray] = {"meta": np.array(json.dumps(meta, sort_keys=True))}
    for version, (flat, hidden) in networks.items():
        arrays[f"net/{version}"] = np.asarray(flat, np.float64)
        arrays[f"hidden/{version}"] = np.array(hidden, np.int64)
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)


class LearnedAgentV2:
    """The fitted deck, then the legal action whose afterstate the network likes best."""

    name = "learned-v2"
    deck_policy = FITTED_DECK
    """How it builds decks (``locm bot`` reads it too)."""

    def __init__(self, seed: int | None = None, weights: Weights | None = None) -> None:
        # Deterministic: the seed is accepted like every built-in's, and unused.
        self.weights = weights or load_weights()
        for network in self.weights.networks.values():
            network.values(np.zeros((2, FEATURES)))  # numpy's first products: not on a turn

    def network(self, version: str) -> ValueNetwork:
        """This version's network (ValueError, one line, for a version it was not trained for)."""
        network = self.weights.networks.get(version)
        if network is None:
            check_agent_version("learned-v2", version)
            trained = " and ".join(sorted(self.weights.networks))
            raise ValueError(f"these learned-v2 weights play LOCM {trained}, not {version}")
        return network

    def act(self, state: State) -> Action:
        if state.phase == Phase.DECK_BUILDING:
            return deck_building_action(state, self.deck_policy)
        if state.is_terminal:
            raise ValueError("the game has ended: there is no legal action")
        network = self.network(state.rules.version)
        actions = state.legal_actions()
        lethal = lethal_attack(state, actions)
        if lethal is not None:
            return lethal
        return actions[int(np.argmax(self.action_values(state, actions, network)))]

    def action_values(self, state: State, actions: list[Action], network: ValueNetwork,
                      dedupe: bool = True) -> np.ndarray:  # fmt: skip
        """Each action's afterstate value for the player to act (:func:`afterstate_values`)."""
        return afterstate_values(state, actions, network, dedupe)


def afterstate_values(state: State, actions: list[Action], network: ValueNetwork,
                      dedupe: bool = True) -> np.ndarray:  # fmt: skip
    """Each action's afterstate value for the player to act (1 won, 0 lost).

    With ``dedupe``, an action that does what an earlier one did — the same card to
    the same place, or a creature identical to an earlier attacker against the same
    target (1.5 decks hold pairs) — is not simulated again: its afterstate has the
    same features, hence the same value (a test checks this)."""
    player = state.active
    values = np.empty(len(actions), np.float64)
    rows = []
    running = []
    copies: list[tuple[int, int]] = []
    seen: dict[tuple[object, ...], int] = {}
    me = state.players[player]
    hand = {instance.id: instance.card for instance in me.hand} if dedupe else {}
    board = {creature.id: creature for creature in me.board} if dedupe else {}
    for k, action in enumerate(actions):
        if dedupe and action.type != ActionType.PASS:
            key = _effect_key(action, hand, board)
            first = seen.setdefault(key, k)
            if first != k:
                copies.append((k, first))
                continue
        child = state.clone()
        if action.type == ActionType.PASS:
            # The turn ends, the opponent's starts. Its unspent mana (0 ends the
            # second player's bonus mana) is not shown to a bot: taken as unspent,
            # as State.from_input does (fast.selfplay.network_action does the same).
            opponent = child.players[1 - player]
            opponent.mana = opponent.max_mana
            child.start_turn()
        else:
            child.execute(action)
        if child.phase is Phase.ENDED:
            values[k] = 1.0 if child.winner == player else 0.0
        else:
            rows.append(raw_features(child, player))
            running.append(k)
    if running:
        values[running] = network.values(np.array(rows, np.float64) * SCALE)
    for k, first in copies:
        values[k] = values[first]
    return values


def _effect_key(action: Action, hand: dict[int, Any], board: dict[int, Any]) -> tuple[object, ...]:
    """What an action does, without the instance ids of the acting card or creature."""
    if action.type == ActionType.ATTACK:
        c = board[action.id]
        return (action.type, c.attack, c.defense, c.keywords, c.lane, c.can_attack,
                c.has_attacked, c.shows_effects, action.target)  # fmt: skip
    return (action.type, hand[action.id], action.target)


__all__ = [
    "FEATURES",
    "SCALE",
    "WEIGHTS_FILE",
    "LearnedAgentV2",
    "ValueNetwork",
    "Weights",
    "afterstate_values",
    "load_weights",
    "position_features",
    "raw_features",
    "save_weights",
]
