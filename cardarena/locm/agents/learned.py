"""The learned agent: a battle policy trained with MaskablePPO, played with numpy alone.

One network plays the battle of LOCM 1.2 and 1.5 (their battle observations and
battle actions share one layout, see docs/envs.md). Its input is the battle part of
the environment observation (everything before the deck-building offers), each field
divided by its largest magnitude, plus one flag that is 1 in 1.5; its output is one
logit per battle action (PASS, SUMMON, ATTACK, USE). It plays the legal action of
highest logit, so it is deterministic. Deck building reuses the greedy agent's card
scores (:mod:`.cardscore`); the network never learned it.

The weights live in ``learned_battle.npz`` next to this module: ``w0, b0, w1, b1, ...``
(hidden layers, tanh) and ``w_out, b_out``, plus ``scale`` (the divisors) and
``meta`` (a JSON string). ``examples/rl/train_battle.py`` trains and exports it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.rules import ruleset
from ..engine.state import Action, Phase, State
from . import AGENT_VERSIONS, check_agent_version
from .cardscore import DEFAULT_DECK, deck_building_action

WEIGHTS_FILE = Path(__file__).with_name("learned_battle.npz")
VERSIONS = AGENT_VERSIONS["learned-v1"]
"""The versions the network was trained for (1.0 has one lane: another action layout)."""


def _encoding():  # type: ignore[no-untyped-def]
    """The encoding module, imported late: it is pure numpy, but keeps the engine import-light."""
    from ..encoding import encoder as encoding

    return encoding


@cache
def battle_spec(version: str) -> tuple[int, int, np.ndarray]:
    """(observation prefix length, battle action count, field divisors) of ``version``."""
    encoding = _encoding()
    layout = encoding.observation_layout(version)
    prefix = layout.blocks["offered"][0]
    bound = np.maximum(np.abs(layout.low[:prefix]), np.abs(layout.high[:prefix]))
    scale = np.maximum(bound, 1.0).astype(np.float32)
    return prefix, encoding.action_layout(version).deck, scale


def feature_size(version: str = "1.5") -> int:
    """The network's input size: the battle observation plus the version flag."""
    return battle_spec(version)[0] + 1


def battle_features(observation: np.ndarray, version: str, out: np.ndarray | None = None):  # type: ignore[no-untyped-def]
    """The network input of one full environment observation (see the module docstring)."""
    prefix, _actions, scale = battle_spec(version)
    if out is None:
        out = np.empty(prefix + 1, np.float32)
    np.divide(observation[:prefix], scale, out=out[:prefix])
    out[prefix] = 1.0 if ruleset(version).area_effects else 0.0  # the flag: 1.5 rules
    return out


class Network:
    """The exported policy network: tanh hidden layers, then the action logits."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        hidden = sorted(int(k[1:]) for k in arrays if k.startswith("w") and k[1:].isdigit())
        self.layers = [(arrays[f"w{i}"], arrays[f"b{i}"]) for i in hidden]
        self.w_out, self.b_out = arrays["w_out"], arrays["b_out"]
        self.scale = arrays["scale"]
        self.meta: dict[str, Any] = json.loads(str(arrays["meta"]))

    def logits(self, features: np.ndarray) -> np.ndarray:
        x = features
        for w, b in self.layers:
            x = np.tanh(x @ w + b)
        return x @ self.w_out + self.b_out


@cache
def load_network(path: str | Path = WEIGHTS_FILE) -> Network:
    """The network stored at ``path`` (loaded once; numpy only, no pickle)."""
    with np.load(path, allow_pickle=False) as data:
        return Network({key: data[key] for key in data.files})


class LearnedAgent:
    """Greedy card scores for deck building, the trained network for the battle."""

    name = "learned"
    reads_own_deck = True
    """``locm bot`` gives it the cards left in its deck, as the environment observation has."""

    def __init__(self, seed: int | None = None, network: Network | None = None) -> None:
        # Deterministic: the seed is accepted like every built-in's, and unused.
        self.network = network or load_network()
        _encoding()  # imported now, not on the first battle turn's clock
        self._encoders: dict[str, Any] = {}
        self._features: dict[str, np.ndarray] = {}

    def act(self, state: State) -> Action:
        if state.phase == Phase.DECK_BUILDING:
            return deck_building_action(state, DEFAULT_DECK)
        if state.is_terminal:
            raise ValueError("the game has ended: there is no legal action")
        version = state.rules.version
        encoder = self._encoders.get(version)
        if encoder is None:
            check_agent_version("learned-v1", version)
            encoder = self._encoders[version] = _encoding().Encoder(ruleset(version))
            self._features[version] = np.empty(feature_size(version), np.float32)
        player = state.current_player
        features = battle_features(encoder.observe(state, player), version,
                                   self._features[version])  # fmt: skip
        battle_actions = battle_spec(version)[1]
        legal = encoder.mask(state)[:battle_actions]
        logits = self.network.logits(features)
        return encoder.decode(state, int(np.argmax(np.where(legal, logits, -np.inf))))


__all__ = [
    "VERSIONS",
    "WEIGHTS_FILE",
    "LearnedAgent",
    "Network",
    "battle_features",
    "battle_spec",
    "feature_size",
    "load_network",
]
