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
the fitted card values (:data:`.cardscore.FITTED_DECK`), which the issue allows.

The weights live in ``learned_v2.npz`` next to this module: ``net/<version>`` (a flat
float64 vector), ``hidden/<version>`` and ``meta`` (a JSON string: how it was trained).
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
from .evaluation import BASELINE, evaluate
from .greedy import lethal_attack

WEIGHTS_FILE = Path(__file__).with_name("learned_v2.npz")
FEATURES = 54
"""Length of a position's feature vector (``fast.selfplay.FEATURES``)."""


def _side(player: Player, out: np.ndarray, at: int, lane_at: int) -> None:
    """One board's block of features (``fast.selfplay._side``)."""
    attack = defense = guards = guard_defense = wards = lethals = 0.0
    drain = breakthrough = ready = keyword_value = top = 0.0
    lanes = [0.0, 0.0, 0.0, 0.0]
    for creature in player.board:
        a, d, kw = creature.attack, creature.defense, creature.keywords
        attack += a
        defense += d
        lanes[2 * creature.lane] += 1.0
        lanes[2 * creature.lane + 1] += a
        top = max(top, a)
        if creature.can_attack:
            ready += a
        if kw & GUARD:
            guards += 1.0
            guard_defense += d
            keyword_value += 0.5 + 0.2 * d
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
    out[at : at + 12] = (
        len(player.board) / 6.0, attack / 20.0, defense / 20.0, guards / 3.0,
        guard_defense / 10.0, wards / 3.0, lethals / 3.0, drain / 10.0,
        breakthrough / 10.0, ready / 20.0, keyword_value / 10.0, top / 10.0,
    )  # fmt: skip
    out[lane_at : lane_at + 4] = (lanes[0] / 3.0, lanes[1] / 10.0, lanes[2] / 3.0,
                                  lanes[3] / 10.0)  # fmt: skip


def _through(attackers: Player, defenders: Player) -> int:
    """Face damage the attackers' board could deal next turn (guarded lanes block it)."""
    guarded = 0
    for creature in defenders.board:
        if creature.keywords & GUARD:
            guarded |= 1 << creature.lane
    return sum(c.attack for c in attackers.board if not guarded & (1 << c.lane))


def position_features(state: State, player: int, out: np.ndarray | None = None) -> np.ndarray:
    """The features of a running battle position as ``player`` sees it (float64)."""
    if out is None:
        out = np.empty(FEATURES, np.float64)
    me, opp = state.players[player], state.players[1 - player]
    out[0:13] = (
        me.health / 30.0, opp.health / 30.0, me.next_turn_draw / 3.0,
        opp.next_turn_draw / 3.0, me.mana / 12.0, me.max_mana / 12.0, opp.max_mana / 12.0,
        len(me.hand) / 8.0, len(opp.hand) / 8.0, len(me.deck) / 30.0, len(opp.deck) / 30.0,
        min(state.turn, 100) / 50.0, 1.0 if state.active == player else 0.0,
    )  # fmt: skip
    creatures = items = castable = stats = 0.0
    for instance in me.hand:
        card = instance.card
        if card.type == 0:
            creatures += 1.0
            stats += card.attack + card.defense
        else:
            items += 1.0
        if card.cost <= me.mana:
            castable += 1.0
    out[13:17] = (creatures / 8.0, items / 8.0, castable / 8.0, stats / 20.0)
    _side(me, out, 17, 41)
    _side(opp, out, 29, 45)
    mine, theirs = _through(me, opp), _through(opp, me)
    out[49:53] = (theirs / 30.0, mine / 30.0, float(theirs >= me.health),
                  float(mine >= opp.health))  # fmt: skip
    out[53] = evaluate(state, player, BASELINE) / 30.0
    return out


class ValueNetwork:
    """Features -> tanh -> tanh -> sigmoid: the chance that the position is won."""

    def __init__(self, flat: np.ndarray, hidden: int) -> None:
        flat = np.asarray(flat, np.float64)
        expected = FEATURES * hidden + hidden * hidden + 3 * hidden + 1
        if flat.shape != (expected,):
            raise ValueError(f"a network of {hidden} hidden units has {expected} numbers, "
                             f"got {flat.shape}")  # fmt: skip
        self.hidden = hidden
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

    def action_values(self, state: State, actions: list[Action],
                      network: ValueNetwork) -> np.ndarray:  # fmt: skip
        """Each action's afterstate value for the player to act (1 won, 0 lost)."""
        player = state.active
        values = np.empty(len(actions), np.float64)
        x = np.empty((len(actions), FEATURES), np.float64)
        running = []
        for k, action in enumerate(actions):
            child = state.clone()
            if action.type == ActionType.PASS:
                child.start_turn()  # the turn ends: the opponent's starts
            else:
                child.execute(action)
            if child.phase is Phase.ENDED:
                values[k] = 1.0 if child.winner == player else 0.0
            else:
                position_features(child, player, x[len(running)])
                running.append(k)
        if running:
            values[running] = network.values(x[: len(running)])
        return values


__all__ = [
    "FEATURES",
    "WEIGHTS_FILE",
    "LearnedAgentV2",
    "ValueNetwork",
    "Weights",
    "load_weights",
    "position_features",
    "save_weights",
]
