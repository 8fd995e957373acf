"""learned-v3: deck building learned end to end by self-play, battles by learned-v2's network.

Deck building is a *pointer* network over the cards on offer (the draft's three in
1.0/1.2, the 120-card pool in 1.5): each offered card is embedded from its features
(type, cost, attack, defense, keywords, effects, area, copies already chosen and its
fitted value, :mod:`.cardvalues`), the deck chosen so far and the whole offer (the mean
of the embeddings: what else there is to take) make a context, and a score per card
comes from both. The legal cards' scores are a softmax: training samples from it, the
agent plays its most likely card. Generated 1.5 cards need nothing of their own: a card
is its features.

It was trained by ``scripts/train_learned_v3.py`` with policy gradients (REINFORCE with
a baseline) on whole games in the compiled engine: the network builds one deck, the
opponent another (the fitted deck, which builtin:search-v3 builds, or a past snapshot),
learned-v2's compiled network battles on both sides, and the winner is the reward.
Its battle is learned-v2's (:mod:`.learned_v2`): the legal action whose afterstate that
value network rates best.

The weights live in ``learned_v3.npz`` next to this module: ``deck/<version>/<name>``
arrays and ``meta`` (a JSON string: how they were trained). numpy alone, no pickle.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ..encoding.encoder import observation_layout
from ..engine.cards import Card
from ..engine.rules import RuleSet, ruleset
from ..engine.state import Action, ActionType, Phase, State
from .cardvalues import STAT_POINTS_PER_LOG_ODDS, fitted_value
from .cardvalues_data import CARD_VALUES, FEATURE_WEIGHTS
from .learned_v2 import LearnedAgentV2

WEIGHTS_FILE = Path(__file__).with_name("learned_v3.npz")

# Offered-card row fields (encoder.OFFER_FIELDS) the network reads, and their scales.
_OFFER_FIELDS = (
    ("creature", 1.0),
    ("green_item", 1.0),
    ("red_item", 1.0),
    ("blue_item", 1.0),
    ("cost", 12.0),
    ("attack", 12.0),
    ("defense", 12.0),
    ("breakthrough", 1.0),
    ("charge", 1.0),
    ("drain", 1.0),
    ("guard", 1.0),
    ("lethal", 1.0),
    ("ward", 1.0),
    ("my_health", 10.0),
    ("opp_health", 10.0),
    ("draw", 4.0),
    ("area_lane", 1.0),
    ("area_both_lanes", 1.0),
    ("copies_chosen", 2.0),
)
CARD_INPUTS = len(_OFFER_FIELDS) + 1
"""Inputs per offered card: the fields above, then its fitted value (per 100 points)."""
CONTEXT_INPUTS = 17 + 1
"""Context inputs: the deck so far (cards per cost 0–12, creatures, items by colour),
per 10 cards, then the share of the 30 picks made."""
FITTED_SCALE = 100.0


_SCALES = np.array([1.0 / scale for _, scale in _OFFER_FIELDS])
"""What each read field is multiplied by."""


@cache
def _layout(version: str) -> dict[str, Any]:
    """Where deck_inputs reads in a version's observations."""
    layout = observation_layout(version)
    start, rows, fields = layout.blocks["offered"]
    deck_start, _, deck_fields = layout.blocks["my_deck"]
    global_start, _, global_fields = layout.blocks["global"]
    names = [f[0] for f in fields]
    return {
        "offered": start,
        "rows": rows,
        "width": len(fields),
        "columns": np.array([names.index(name) for name, _ in _OFFER_FIELDS]),
        "deck": (deck_start, len(deck_fields)),
        "chosen": global_start + [f[0] for f in global_fields].index("cards_chosen"),
        "names": names,
    }


def fitted_offer_values(rows: np.ndarray, version: str) -> np.ndarray:
    """The fitted value (stat points, :func:`.cardvalues.fitted_value`) of each offered
    card, from its observation row: [..., OFFER_FIELDS] -> [...]."""
    names = _layout(version)["names"]

    def col(name: str) -> np.ndarray:
        return rows[..., names.index(name)].astype(np.float64)

    values = CARD_VALUES.get(version)
    if values is not None:
        table = np.concatenate([[0.0], np.asarray(values, np.float64)])
        ids = np.clip(col("base_id").astype(np.int64), 0, len(values))
        return STAT_POINTS_PER_LOG_ODDS * table[ids]
    weights = np.asarray(FEATURE_WEIGHTS[version], np.float64)
    width = 16
    kinds = np.stack([col("creature"), col("green_item"), col("red_item"), col("blue_item")], -1)
    cost, attack, defense = col("cost"), col("attack"), col("defense")
    keywords = [col(k) for k in ("breakthrough", "charge", "drain", "guard", "lethal", "ward")]
    area = ruleset(version).area_effects
    block = np.stack(
        [
            np.ones_like(cost),
            cost,
            cost * cost,
            attack,
            defense,
            *keywords,
            col("my_health"),
            col("opp_health"),
            col("draw"),
            col("area_lane") * area,
            col("area_both_lanes") * area,
        ],
        -1,
    )
    total = np.zeros(rows.shape[:-1])
    for kind in range(4):
        total += kinds[..., kind] * (block @ weights[kind * width : (kind + 1) * width])
    creature = kinds[..., 0]
    extra = np.stack(
        [
            attack * defense,
            (attack == 0).astype(np.float64),
            attack * keywords[5],
            attack * keywords[4],
            attack * keywords[2],
        ],
        -1,
    )
    total += creature * (extra @ weights[4 * width :])
    return STAT_POINTS_PER_LOG_ODDS * total


def deck_inputs(observations: np.ndarray, version: str) -> tuple[np.ndarray, np.ndarray]:
    """(cards [N, C, CARD_INPUTS], context [N, CONTEXT_INPUTS]) of deck-building
    observations [N, obs] (the encoder's layout; C = 3 or 120 offers)."""
    lay = _layout(version)
    start, rows, width = lay["offered"], lay["rows"], lay["width"]
    offered = observations[:, start : start + rows * width].reshape(len(observations), rows, width)
    cards = np.empty((len(observations), rows, CARD_INPUTS))
    cards[..., :-1] = offered[..., lay["columns"]] * _SCALES
    cards[..., -1] = fitted_offer_values(offered, version) / FITTED_SCALE
    deck_start, deck_width = lay["deck"]
    context = np.empty((len(observations), CONTEXT_INPUTS))
    context[:, :deck_width] = observations[:, deck_start : deck_start + deck_width] / 10.0
    context[:, deck_width] = observations[:, lay["chosen"]] / 30.0
    return cards, context


PARAMETER_NAMES = ("w1", "b1", "wc", "wp", "bc", "w2", "w3", "b2", "v", "a")


def parameter_shapes(hidden: int) -> dict[str, tuple[int, ...]]:
    h = hidden
    return {
        "w1": (CARD_INPUTS, h),
        "b1": (h,),
        "wc": (CONTEXT_INPUTS, h),
        "wp": (h, h),
        "bc": (h,),
        "w2": (h, h),
        "w3": (h, h),
        "b2": (h,),
        "v": (h,),
        "a": (1,),
    }


@dataclass
class DeckNetwork:
    """The pointer network's parameters (float64 arrays by name) and its forward pass.

    For offered cards x_i, the deck so far d and the legal cards L:
    e_i = tanh(x_i W1 + b1); c = tanh(d Wc + mean_i(e_i) Wp + bc);
    z_i = tanh(e_i W2 + c W3 + b2); score_i = z_i·v + a × fitted_i; softmax over L.
    """

    params: dict[str, np.ndarray]
    dtype: type = np.float32
    """What the passes compute in (float64 for a gradient check)."""

    @property
    def hidden(self) -> int:
        return int(self.params["b1"].shape[0])

    @classmethod
    def initial(cls, hidden: int, rng: np.random.Generator, fitted_weight: float) -> DeckNetwork:
        """Small random weights, ``v`` zero: it starts as a softmax of the fitted values."""
        params: dict[str, np.ndarray] = {}
        for name, shape in parameter_shapes(hidden).items():
            if len(shape) == 2:
                params[name] = rng.normal(0.0, 1.0 / np.sqrt(shape[0]), shape)
            else:
                params[name] = np.zeros(shape)
        params["a"][0] = fitted_weight
        return cls(params)

    def forward(self, cards: np.ndarray, context: np.ndarray) -> tuple[np.ndarray, dict]:
        """Scores [N, C] of cards [N, C, F] in contexts [N, K], and what backward needs
        (computed in float32: the network is small and the batches large)."""
        p = {k: v.astype(self.dtype) for k, v in self.params.items()}
        cards = cards.astype(self.dtype, copy=False)
        context = context.astype(self.dtype, copy=False)
        e = np.tanh(cards @ p["w1"] + p["b1"])
        pooled = e.mean(axis=1)
        c = np.tanh(context @ p["wc"] + pooled @ p["wp"] + p["bc"])
        z = np.tanh(e @ p["w2"] + (c @ p["w3"])[:, None, :] + p["b2"])
        scores = z @ p["v"] + p["a"][0] * cards[..., -1]
        return scores, {
            "cards": cards,
            "context": context,
            "e": e,
            "pooled": pooled,
            "c": c,
            "z": z,
        }

    def backward(self, cache_: dict, grad_scores: np.ndarray) -> dict[str, np.ndarray]:
        """Gradients of the parameters (float64), given d(loss)/d(scores) [N, C]."""
        p = {k: v.astype(self.dtype) for k, v in self.params.items()}
        grad_scores = grad_scores.astype(self.dtype, copy=False)
        cards, context = cache_["cards"], cache_["context"]
        e, pooled, c, z = cache_["e"], cache_["pooled"], cache_["c"], cache_["z"]
        g: dict[str, np.ndarray] = {}
        g["a"] = np.array([np.sum(grad_scores * cards[..., -1])])
        g["v"] = np.einsum("nc,nch->h", grad_scores, z)
        dz = grad_scores[..., None] * p["v"] * (1.0 - z * z)  # [N, C, H]
        g["b2"] = dz.sum(axis=(0, 1))
        g["w2"] = np.einsum("nci,ncj->ij", e, dz)
        dc_in = dz.sum(axis=1)  # [N, H]: through c W3
        g["w3"] = c.T @ dc_in
        dc = dc_in @ p["w3"].T * (1.0 - c * c)
        g["bc"] = dc.sum(axis=0)
        g["wc"] = context.T @ dc
        g["wp"] = pooled.T @ dc
        de = dz @ p["w2"].T + (dc @ p["wp"].T)[:, None, :] / e.shape[1]
        de *= 1.0 - e * e
        g["b1"] = de.sum(axis=(0, 1))
        g["w1"] = np.einsum("ncf,nch->fh", cards, de)
        return {k: v.astype(np.float64) for k, v in g.items()}


def masked_softmax(scores: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Softmax of ``scores`` over the ``legal`` entries of each row (others 0)."""
    shifted = np.where(legal, scores, -np.inf)
    shifted = shifted - shifted.max(axis=-1, keepdims=True)
    exp = np.where(legal, np.exp(shifted), 0.0)
    return exp / exp.sum(axis=-1, keepdims=True)


class Weights:
    """The shipped deck networks, one per version, and how they were trained."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.meta: dict[str, Any] = json.loads(str(arrays["meta"]))
        self.networks: dict[str, DeckNetwork] = {}
        for key, value in arrays.items():
            if key.startswith("deck/"):
                _, version, name = key.split("/")
                self.networks.setdefault(version, DeckNetwork({})).params[name] = value


@cache
def load_weights(path: str | Path = WEIGHTS_FILE) -> Weights:
    """The networks stored at ``path`` (loaded once; numpy only, no pickle)."""
    with np.load(path, allow_pickle=False) as data:
        return Weights({key: data[key] for key in data.files})


def save_weights(path: str | Path, networks: dict[str, DeckNetwork], meta: dict[str, Any]) -> None:
    """Write deck networks (version -> network) and ``meta`` as an .npz."""
    arrays: dict[str, np.ndarray] = {"meta": np.array(json.dumps(meta, sort_keys=True))}
    for version, network in networks.items():
        for name, value in network.params.items():
            arrays[f"deck/{version}/{name}"] = np.asarray(value, np.float64)
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)


def _card_block(card: Card, rules: RuleSet) -> tuple[float, ...]:
    """A card's first CARD_INPUTS - 2 inputs (without copies and fitted value), unscaled."""
    kw, area = card.keywords, card.area
    has_area = rules.area_effects
    return (
        card.type == 0,
        card.type == 1,
        card.type == 2,
        card.type == 3,
        card.cost,
        card.attack,
        card.defense,
        *(kw >> bit & 1 for bit in range(6)),
        card.my_health,
        card.opp_health,
        card.draw,
        has_area and area == 1,
        has_area and area == 2,
    )


def card_inputs(cards: Sequence[Card], copies: Sequence[int], rules: RuleSet) -> np.ndarray:
    """[C, CARD_INPUTS] of offered cards (with the copies of each already chosen), as
    :func:`deck_inputs` reads them from an observation."""
    out = np.empty((len(cards), CARD_INPUTS))
    for i, card in enumerate(cards):
        out[i, :-2] = _card_block(card, rules)
        out[i, -2] = copies[i]
        out[i, -1] = fitted_value(card, rules)
    out[:, :-1] *= _SCALES
    out[:, -1] /= FITTED_SCALE
    return out


def context_inputs(chosen: Sequence[Card]) -> np.ndarray:
    """[CONTEXT_INPUTS] of the deck chosen so far, as :func:`deck_inputs` reads them."""
    out = np.zeros(CONTEXT_INPUTS)
    for card in chosen:
        out[min(card.cost, 12)] += 1
        out[13 + card.type] += 1
    out[:-1] /= 10.0
    out[-1] = len(chosen) / 30.0
    return out


class LearnedDeckBuilder:
    """Deck building by a deck network: at each pick the most likely card.

    It works from the cards alone (what a bot sees): :meth:`pick` for a 1.0/1.2 draft
    triple, :meth:`deck` for a 1.5 pool (30 picks in a row, two copies at most), and
    :meth:`action` for the player to act in a :class:`State`.
    """

    def __init__(self, weights: Weights | None = None) -> None:
        self._weights = weights
        self._decks: dict[int, tuple[tuple[Card, ...], list[Card]]] = {}

    def network(self, version: str) -> DeckNetwork:
        weights = self._weights if self._weights is not None else load_weights()
        try:
            return weights.networks[version]
        except KeyError:
            raise ValueError(f"learned-v3 has no deck network for LOCM {version}") from None

    def _best(
        self, cards: np.ndarray, chosen: Sequence[Card], legal: np.ndarray, version: str
    ) -> int:
        scores, _ = self.network(version).forward(cards[None], context_inputs(chosen)[None])
        return int(np.argmax(np.where(legal, scores[0], -np.inf)))

    def pick(self, offered: Sequence[Card], chosen: Sequence[Card], rules: RuleSet) -> int:
        """The draft pick (0, 1 or 2) from ``offered``, given the cards ``chosen`` so far."""
        cards = card_inputs(offered, [0] * len(offered), rules)
        return self._best(cards, chosen, np.ones(len(offered), bool), rules.version)

    def deck(self, pool: Sequence[Card], rules: RuleSet) -> list[Card]:
        """The 30 cards chosen from a 1.5 pool, in the order of the picks."""
        copies = [0] * len(pool)
        chosen: list[Card] = []
        cards = card_inputs(pool, copies, rules)
        while len(chosen) < 30:
            legal = np.array([c < 2 for c in copies])
            i = self._best(cards, chosen, legal, rules.version)
            copies[i] += 1
            cards[i, -2] = copies[i] / 2.0
            chosen.append(pool[i])
        return chosen

    def action(self, state: State) -> Action:
        """The choice of the player to act (deck building only)."""
        player = state.players[state.current_player]
        if state.rules.draft:
            offered = state.draft[len(player.chosen)]
            return Action(ActionType.PICK, self.pick(offered, player.chosen, state.rules))
        cached = self._decks.get(id(state.pool))
        if cached is None or cached[0] is not state.pool:
            if len(self._decks) > 16:
                self._decks.clear()
            cached = (state.pool, self.deck(state.pool, state.rules))
            self._decks[id(state.pool)] = cached
        plan, done = cached[1], len(player.chosen)
        chosen = Counter(card.base_id for card in player.chosen)
        if done < len(plan) and chosen == Counter(card.base_id for card in plan[:done]):
            return Action(ActionType.CHOOSE, plan[done].base_id)  # the picks in their order
        # Off the plan (someone else chose for us): the network's pick from here.
        copies = [player.chosen_counts.get(card.base_id, 0) for card in state.pool]
        cards = card_inputs(state.pool, copies, state.rules)
        legal = np.array([c < 2 for c in copies])
        i = self._best(cards, player.chosen, legal, state.rules.version)
        return Action(ActionType.CHOOSE, state.pool[i].base_id)


class LearnedAgentV3(LearnedAgentV2):
    """learned-v3's deck network, then learned-v2's battle (see the module)."""

    name = "learned-v3"

    def __init__(self, seed: int | None = None, weights: Weights | None = None) -> None:
        super().__init__(seed)
        self.deck_builder: LearnedDeckBuilder | None = LearnedDeckBuilder(weights)

    def act(self, state: State) -> Action:
        if state.phase == Phase.DECK_BUILDING and self.deck_builder is not None:
            return self.deck_builder.action(state)
        return super().act(state)
