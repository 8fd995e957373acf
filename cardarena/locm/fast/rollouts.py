"""Determinised greedy rollouts: who wins from a position when its hidden cards are
guessed and both players then play builtin:greedy to the end, many times over.

A search agent ends its turn in a few candidate positions and asks which of them wins
most often. Each candidate is one batch row (:func:`.convert.row_from_state`) whose
hidden instances (the searcher's own deck, the opponent's hand and deck) already have
ids of their own; a rollout gives those ids cards afresh:

* the searcher's deck: its known cards (``my_cards``) in a new random order;
* the opponent's hand and deck: cards drawn without replacement from what it may hold
  (``opp_cards``): in 1.5 every pool card twice, in 1.0/1.2 one card of each draft
  triple (``triples``: the draft rows come in threes, one of them drawn per triple).

Then the turn ends (PASS) and the game is played out, both seats greedy (the compiled
choice of :func:`.playouts.greedy_action`). Rollout ``k`` of every candidate uses the
same generator seed, so candidates are compared on the same guesses (common random
numbers). The searcher's deck ids and the opponent's hidden ids are the same in every
candidate: its own turn moves no card between the hidden zones.
"""

from __future__ import annotations

import numpy as np

from . import layout as L
from . import require_numba
from .kernels import ENDED, MAX_LEGAL, apply_legal, legal_actions
from .playouts import _next_uniform, greedy_action

require_numba()

from numba import njit  # noqa: E402

_SALT = np.uint64(0xD1B54A32D192ED03)


@njit(cache=True, nogil=True)
def _seed_deal(rng: np.ndarray, seed: int, k: int) -> None:
    """Rollout ``k``'s generator: the same for every candidate (common random numbers)."""
    rng[0] = np.uint64(seed) ^ (np.uint64(k + 1) * _SALT)


@njit(cache=True, nogil=True)
def _deal_hidden(row: np.ndarray, player: int, my_cards: np.ndarray, opp_cards: np.ndarray,
                 triples: bool, rng: np.ndarray, pool: np.ndarray) -> None:  # fmt: skip
    """Give the hidden instances of ``row`` cards for one rollout (see the module)."""
    me = L.PLAYER_0 + player * L.PLAYER_SIZE
    opp = L.PLAYER_0 + (1 - player) * L.PLAYER_SIZE
    # Our deck: the known cards in a random order.
    top = row[me + L.P_DECK_TOP]
    end = row[me + L.P_DECK_END]
    n = end - top
    for k in range(n):
        pool[k] = my_cards[k]
    for k in range(n - 1, 0, -1):
        j = _next_uniform(rng, 0, k + 1)
        pool[k], pool[j] = pool[j], pool[k]
    for k in range(n):
        row[L.INSTANCE_CARD + row[me + L.P_DECK + top + k]] = pool[k]
    # The opponent's hand and deck: drawn without replacement from what it may hold.
    if triples:
        m = opp_cards.shape[0] // 3
        for t in range(m):
            pool[t] = opp_cards[3 * t + _next_uniform(rng, 0, 3)]
    else:
        m = opp_cards.shape[0]
        for t in range(m):
            pool[t] = opp_cards[t]
    hand = row[opp + L.P_HAND_COUNT]
    top = row[opp + L.P_DECK_TOP]
    end = row[opp + L.P_DECK_END]
    for k in range(min(hand + end - top, m)):
        j = k + _next_uniform(rng, 0, m - k)
        pool[k], pool[j] = pool[j], pool[k]
        ident = row[opp + L.P_HAND + k] if k < hand else row[opp + L.P_DECK + top + k - hand]
        row[L.INSTANCE_CARD + ident] = pool[k]


@njit(cache=True, nogil=True)
def _rollouts(rows: np.ndarray, table: np.ndarray, player: int, my_cards: np.ndarray,
              opp_cards: np.ndarray, triples: bool, first: int, count: int, seed: int,
              w: np.ndarray, wins: np.ndarray) -> None:  # fmt: skip
    """Rollouts ``first`` .. ``first + count - 1`` of every candidate row; ``wins[c]``
    gains 1 for each won by ``player``, 0.5 for each without a winner."""
    legal = np.empty(MAX_LEGAL, np.int32)
    scratch = np.empty(rows.shape[1], np.int32)
    row = np.empty(rows.shape[1], np.int32)
    pool = np.empty(max(opp_cards.shape[0], my_cards.shape[0], 1), np.int32)
    rng = np.empty(1, np.uint64)
    for c in range(rows.shape[0]):
        for k in range(first, first + count):
            row[:] = rows[c]
            _seed_deal(rng, seed, k)
            _deal_hidden(row, player, my_cards, opp_cards, triples, rng, pool)
            if row[L.PHASE] != ENDED:
                apply_legal(row, table, 0)  # PASS: the candidate's turn ends
            while row[L.PHASE] != ENDED:
                n = legal_actions(row, table, legal)
                apply_legal(row, table, greedy_action(row, table, legal, n, w, scratch))
            if row[L.WINNER] == player:
                wins[c] += 1.0
            elif row[L.WINNER] < 0:
                wins[c] += 0.5


def rollout_wins(rows: np.ndarray, table: np.ndarray, player: int, my_cards: np.ndarray,
                 opp_cards: np.ndarray, triples: bool, first: int, count: int, seed: int,
                 weights: np.ndarray, wins: np.ndarray) -> None:  # fmt: skip
    """Add to ``wins[c]`` the outcome of rollouts ``first`` .. ``first + count - 1`` of
    candidate row ``rows[c]`` (int32 ``[C, STATE_SIZE]``, all of one game, whose card
    table is ``table``), as seen by ``player``, whose turn each row is in.

    ``my_cards``: the card indexes of ``player``'s deck, as many as its deck holds;
    ``opp_cards``: the card indexes the opponent may hold (``triples``: 1.0/1.2 draft
    offers, three per triple); ``weights``: the greedy evaluation's
    (:func:`.playouts.weights_array`).
    """
    _rollouts(rows, table, player, my_cards.astype(np.int32), opp_cards.astype(np.int32),
              triples, first, count, seed & 0x7FFF_FFFF_FFFF_FFFF, weights, wins)  # fmt: skip


@njit(cache=True, nogil=True)
def _dealt(row: np.ndarray, player: int, my_cards: np.ndarray, opp_cards: np.ndarray,
           triples: bool, seed: int, k: int) -> None:  # fmt: skip
    pool = np.empty(max(opp_cards.shape[0], my_cards.shape[0], 1), np.int32)
    rng = np.empty(1, np.uint64)
    _seed_deal(rng, seed, k)
    _deal_hidden(row, player, my_cards, opp_cards, triples, rng, pool)


def dealt_row(row: np.ndarray, player: int, my_cards: np.ndarray, opp_cards: np.ndarray,
              triples: bool, seed: int, k: int) -> np.ndarray:  # fmt: skip
    """A copy of candidate ``row`` with the hidden cards rollout ``k`` of
    :func:`rollout_wins` (same ``seed``) deals it, before its turn ends: for tests and
    for watching a rollout in the reference engine."""
    out = row.copy()
    _dealt(out, player, my_cards.astype(np.int32), opp_cards.astype(np.int32), triples,
           seed & 0x7FFF_FFFF_FFFF_FFFF, k)  # fmt: skip
    return out
