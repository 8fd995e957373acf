"""Whole games in one compiled loop: random play and scripted (random / greedy) playouts.

:func:`play_random` creates N games from one seed and plays them to the end, deck
building included, random against random: each move is drawn uniformly among the
legal actions (PASS included), as the reference RandomAgent does. :func:`playout`
plays a :class:`~.batch.Batch` to the end from its current positions with a policy
per seat: ``"random"``, or ``"greedy"``, the compiled one-step greedy choice of
``builtin:greedy`` (its evaluation and weights, :mod:`cardarena.locm.agents.evaluation`).
Deck building in a playout is random for both policies.

Randomness: each game has its own generator (splitmix64) seeded from the game's seed
and the playout seed, so a game's moves do not depend on the other games of the batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import NamedTuple

import numpy as np

from ..engine.cards import BREAKTHROUGH, DRAIN, GUARD, LETHAL, WARD
from ..engine.rules import ruleset
from . import layout as L
from . import require_numba
from .batch import Batch, new_game_arrays
from .generators import game_seeds, start_draft_row, start_pool_row
from .kernels import (
    BATTLE,
    DECK_BUILDING,
    ENDED,
    MAX_LEGAL,
    V1_5,
    action_bounds,
    apply_legal,
    current_player,
    legal_actions,
    pool_choice,
    pool_choice_count,
)
from .threads import run_all, slices, thread_count

require_numba()

from numba import njit  # noqa: E402

POLICIES = {"random": 0, "greedy": 1}
"""The compiled policies a playout can give a seat."""
RECORD_LIMIT = 4096
"""Actions recorded per game when a playout records its moves."""
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)

# builtin:greedy's choice rule and evaluation (cardarena.locm.agents.greedy / evaluation);
# the agents sit above this package, so the numbers are repeated here and a test keeps
# them equal to the agents' (tests/locm/test_fast_playouts.py).
WIN_SCORE = 1_000_000.0
IMPROVEMENT = 1e-6
WEIGHT_NAMES = ("my_health", "opp_health", "my_low", "opp_low", "low_health_below",
                "my_creature", "my_attack", "my_defense", "my_keywords", "opp_creature",
                "opp_attack", "opp_defense", "opp_keywords", "hand", "draw",
                "lethal_threat", "lethal_chance")  # fmt: skip
GREEDY_WEIGHTS = np.array([1.0, 1.0, 1.0, 1.0, 12, 1.5, 1.0, 1.0, 1.0, 1.5, 1.0, 1.0, 1.0,
                           1.2, 0.8, 12.0, 12.0], np.float64)  # fmt: skip
"""builtin:greedy's weights (``evaluation.BASELINE``) in the order of WEIGHT_NAMES."""


class Playouts(NamedTuple):
    """The outcome of every game of a playout, one entry per game."""

    winners: np.ndarray
    """int8 [N]: 0 or 1 (-1: no winner)."""
    turns: np.ndarray
    """int32 [N]: the reference ``State.turn`` at the end."""
    health: np.ndarray
    """int32 [N, 2]: both players' final health."""
    end_reason: np.ndarray
    """int8 [N]: :class:`~cardarena.locm.engine.state.EndReason` numbers."""
    actions: np.ndarray | None = None
    """int16 [N, RECORD_LIMIT] when recorded: each game's action indexes in order."""
    action_counts: np.ndarray | None = None
    """int32 [N] when recorded: actions each game took (recorded up to RECORD_LIMIT)."""


def weights_array(weights: object | None = None) -> np.ndarray:
    """The evaluation weights as the compiled code reads them: GREEDY_WEIGHTS, or those
    of any object with the attributes of ``evaluation.Weights`` (the search agent's TUNED)."""
    if weights is None:
        return GREEDY_WEIGHTS.copy()
    return np.array([float(getattr(weights, name)) for name in WEIGHT_NAMES], np.float64)


@njit(cache=True, nogil=True, _nrt=False, forceinline=True)
def _next_uniform(rng: np.ndarray, g: int, n: int) -> int:
    """A uniform integer in [0, n) from game ``g``'s splitmix64 generator."""
    x = rng[g] + _GOLDEN
    rng[g] = x
    z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return int(((z >> np.uint64(33)) * np.uint64(n)) >> np.uint64(31))


@njit(cache=True, nogil=True)
def _side_value(row: np.ndarray, base: int, w: np.ndarray, first: int) -> float:
    """Creatures, attack, defense and keyword value of one board, weighted."""
    attack = 0.0
    defense = 0.0
    keywords = 0.0
    count = row[base + L.P_BOARD_COUNT]
    for i in range(count):
        at = base + L.P_BOARD + i * L.CREATURE_SIZE
        a = row[at + L.K_ATTACK]
        d = row[at + L.K_DEFENSE]
        kw = row[at + L.K_KEYWORDS]
        attack += a
        defense += d
        if kw:
            value = 0.0
            if kw & WARD:
                value += 0.8 * a + 1.0
            if kw & LETHAL and a > 0:
                value += 2.5
            if kw & GUARD:
                value += 0.5 + 0.2 * d
            if kw & DRAIN:
                value += 0.4 * a
            if kw & BREAKTHROUGH:
                value += 0.2 * a
            keywords += value
    return (
        w[first] * count + w[first + 1] * attack + w[first + 2] * defense + w[first + 3] * keywords
    )


@njit(cache=True, nogil=True)
def _damage_through(row: np.ndarray, attackers: int, defenders: int) -> int:
    guarded = 0
    for i in range(row[defenders + L.P_BOARD_COUNT]):
        at = defenders + L.P_BOARD + i * L.CREATURE_SIZE
        if row[at + L.K_KEYWORDS] & GUARD:
            guarded |= 1 << row[at + L.K_LANE]
    total = 0
    for i in range(row[attackers + L.P_BOARD_COUNT]):
        at = attackers + L.P_BOARD + i * L.CREATURE_SIZE
        if not guarded & (1 << row[at + L.K_LANE]):
            total += row[at + L.K_ATTACK]
    return total


@njit(cache=True, nogil=True)
def evaluate(row: np.ndarray, player: int, w: np.ndarray) -> float:
    """builtin:greedy's evaluation of a position for ``player`` (agents/evaluation.py)."""
    if row[L.PHASE] == ENDED:
        if row[L.WINNER] < 0:
            return 0.0
        if row[L.WINNER] == player:
            return WIN_SCORE - row[L.TURN]
        return -WIN_SCORE + row[L.TURN]
    me = L.PLAYER_0 + player * L.PLAYER_SIZE
    opp = L.PLAYER_0 + (1 - player) * L.PLAYER_SIZE
    my_health = row[me + L.P_HEALTH]
    opp_health = row[opp + L.P_HEALTH]
    score = w[0] * my_health - w[1] * opp_health
    below = w[4]
    if my_health < below:
        score -= w[2] * (below - my_health)
    if opp_health < below:
        score += w[3] * (below - opp_health)
    score += _side_value(row, me, w, 5)
    score -= _side_value(row, opp, w, 9)
    score += w[13] * (row[me + L.P_HAND_COUNT] - row[opp + L.P_HAND_COUNT])
    score += w[14] * (row[me + L.P_NEXT_TURN_DRAW] - row[opp + L.P_NEXT_TURN_DRAW])
    if row[L.ACTIVE] == player:
        if _damage_through(row, opp, me) >= my_health:
            score -= w[15]
    elif _damage_through(row, me, opp) >= opp_health:
        score += w[16]
    return score


@njit(cache=True, nogil=True)
def _lethal_face_attack(row: np.ndarray, attack_at: int) -> int:
    """builtin:greedy's lethal rule: if the ready creatures in unguarded lanes can kill,
    the face attack of the first of them in board order; else -1."""
    me = L.PLAYER_0 + row[L.ACTIVE] * L.PLAYER_SIZE
    opp = L.PLAYER_0 + (1 - row[L.ACTIVE]) * L.PLAYER_SIZE
    has_lanes = row[L.VERSION] != 0
    guarded = 0
    for i in range(row[opp + L.P_BOARD_COUNT]):
        at = opp + L.P_BOARD + i * L.CREATURE_SIZE
        if row[at + L.K_KEYWORDS] & GUARD:
            guarded |= 1 << row[at + L.K_LANE]
    damage = 0
    first_slot = -1
    next0 = 0
    next1 = 3
    for i in range(row[me + L.P_BOARD_COUNT]):
        at = me + L.P_BOARD + i * L.CREATURE_SIZE
        lane = row[at + L.K_LANE]
        if not has_lanes:
            slot = i
        elif lane == 0:
            slot = next0
            next0 += 1
        else:
            slot = next1
            next1 += 1
        if row[at + L.K_CAN_ATTACK] and not guarded & (1 << lane):
            damage += row[at + L.K_ATTACK]
            if first_slot < 0:
                first_slot = slot
    if first_slot < 0 or damage < row[opp + L.P_HEALTH]:
        return -1
    return attack_at + first_slot * 7


@njit(cache=True, nogil=True)
def greedy_action(row: np.ndarray, table: np.ndarray, legal: np.ndarray, n: int,
                  w: np.ndarray, scratch: np.ndarray) -> int:  # fmt: skip
    """The one-step greedy choice among the ``n`` legal indexes: a lethal face attack, else
    the action whose result evaluates best for the active player if it beats passing by
    more than IMPROVEMENT, else PASS (the first best in index order on ties)."""
    _lanes, attack_at, _use, _deck, _size = action_bounds(row[L.VERSION])
    lethal = _lethal_face_attack(row, attack_at)
    if lethal >= 0:
        return lethal
    player = row[L.ACTIVE]
    best = 0
    best_score = evaluate(row, player, w) + IMPROVEMENT
    for k in range(n):
        index = legal[k]
        if index == 0:
            continue
        for i in range(row.shape[0]):  # scratch[:] = row, without a slice's checks to compile
            scratch[i] = row[i]
        apply_legal(scratch, table, np.int64(index))  # the type every caller passes
        score = evaluate(scratch, player, w)
        if score > best_score:
            best_score = score
            best = index
    return best


@njit(cache=True, nogil=True)
def _play(state: np.ndarray, cards: np.ndarray, policies: np.ndarray, rng: np.ndarray,
          w: np.ndarray, record: np.ndarray, counts: np.ndarray) -> None:  # fmt: skip
    """Play every game of the batch to its end (``record``: [N, R] action log, R may be 0)."""
    legal = np.empty(MAX_LEGAL, np.int32)
    scratch = np.empty(state.shape[1], np.int32)
    limit = record.shape[1]
    for g in range(state.shape[0]):
        row = state[g]
        table = cards[g]
        taken = 0
        while row[L.PHASE] != ENDED:
            if row[L.PHASE] == DECK_BUILDING and row[L.VERSION] == V1_5:
                # A random pool choice without listing the 120 cards (the same draw).
                index = pool_choice(row, _next_uniform(rng, g, pool_choice_count(row)))
            else:
                n = legal_actions(row, table, legal)
                if row[L.PHASE] == BATTLE and policies[current_player(row)] == 1:
                    index = greedy_action(row, table, legal, n, w, scratch)
                else:
                    index = legal[_next_uniform(rng, g, n)]
            if taken < limit:
                record[g, taken] = index
            taken += 1
            apply_legal(row, table, index)
        counts[g] = taken


def _seeds_to_rng(seeds: np.ndarray, seed: int) -> np.ndarray:
    """Each game's generator state: its game seed mixed with the playout seed."""
    salt = np.uint64((seed * 0x9E3779B97F4A7C15) & 0xFFFF_FFFF_FFFF_FFFF)
    return seeds.astype(np.int64).view(np.uint64) ^ salt


def playout(
    batch: Batch,
    policies: Sequence[str] = ("random", "greedy"),
    seed: int = 0,
    *,
    record: bool = False,
    weights: object | None = None,
    threads: int | None = 1,
) -> Playouts:
    """Play every game of ``batch`` to its end, in place, ``policies[p]`` moving for
    player ``p`` (``"random"`` or ``"greedy"``); deck building, if not done, is random.

    ``record`` keeps each game's action indexes (the first RECORD_LIMIT). ``threads``:
    the batch is played in that many slices at once (None: every core this process may
    use); each game has its own random stream, so the games are the same for any count.
    """
    threads = thread_count(threads)
    codes = np.array([_policy_code(name) for name in policies], np.int8)
    if codes.shape != (2,):
        raise ValueError(f"give one policy per player, got {list(policies)}")
    log = np.zeros((len(batch), RECORD_LIMIT if record else 0), np.int16)
    counts = np.zeros(len(batch), np.int32)
    rng = _seeds_to_rng(batch.seeds, seed)
    w = weights_array(weights)
    state, cards = batch.state, batch.cards
    run_all([partial(_play, state[a:b], cards[a:b], codes, rng[a:b], w, log[a:b], counts[a:b])
             for a, b in slices(len(batch), threads)])  # fmt: skip
    return Playouts(batch.winners, batch.turns, batch.health, batch.end_reasons,
                    log if record else None, counts if record else None)  # fmt: skip


def _random_games_for(pool: bool) -> Callable[..., None]:
    """:func:`_random_games` of a version with the 120-card pool (1.5) or a draft, each
    compiled on first use with only its own game set-up (numba prunes the branches on the
    closure constant ``pool``; the two are cached apart)."""
    compiled = _RANDOM_GAMES.get(pool)
    if compiled is None:
        compiled = _RANDOM_GAMES[pool] = _compile_random_games(pool)
    return compiled


_RANDOM_GAMES: dict[bool, Callable[..., None]] = {}


def _compile_random_games(pool: bool) -> Callable[..., None]:
    @njit(cache=True, nogil=True)
    def _random_games(
        seeds: np.ndarray,
        rng: np.ndarray,
        template: np.ndarray,
        allowed_rows: np.ndarray,
        winners: np.ndarray,
        turns: np.ndarray,
        health: np.ndarray,
        reasons: np.ndarray,
        record: np.ndarray,
        counts: np.ndarray,
    ) -> None:
        """Create and play each game in turn in one row and one card table (a few KB that stay
        in the core's cache), random against random, keeping only the outcomes: the games of
        :func:`playout` on a new batch, without writing a batch out to memory."""
        row = np.empty(template.shape[0], np.int32)
        table = np.empty((L.MAX_CARDS, L.CARD_FIELDS), np.int32)
        legal = np.empty(MAX_LEGAL, np.int32)
        limit = record.shape[1]
        draft_at = action_bounds(template[L.VERSION])[3]
        for g in range(seeds.shape[0]):
            if pool:
                start_pool_row(row, table, seeds[g], template)
            else:
                start_draft_row(row, table, seeds[g], template, allowed_rows)
            taken = 0
            while row[L.PHASE] != ENDED:
                if row[L.PHASE] != DECK_BUILDING:
                    index = legal[_next_uniform(rng, g, legal_actions(row, table, legal))]
                elif pool:
                    index = pool_choice(row, _next_uniform(rng, g, pool_choice_count(row)))
                else:  # a draft pick: legal_actions would list the three picks in order
                    index = draft_at + _next_uniform(rng, g, 3)
                if taken < limit:
                    record[g, taken] = index
                taken += 1
                apply_legal(row, table, index)
            counts[g] = taken
            winners[g] = row[L.WINNER]
            turns[g] = row[L.TURN]
            health[g, 0] = row[L.PLAYER_0 + L.P_HEALTH]
            health[g, 1] = row[L.PLAYER_1 + L.P_HEALTH]
            reasons[g] = row[L.END_REASON]

    return _random_games


def play_random(n: int, version: str, seed: int, *, record: bool = False,
                league: int = 4, threads: int | None = 1) -> Playouts:  # fmt: skip
    """``n`` whole games, random against random, deck building included, in one compiled
    loop (per thread: ``threads`` as in :func:`playout`). Game ``g`` is
    ``State.new(version, {"seed": game_seeds(seed, n)[g]})``; the games are those of
    ``playout(Batch.new(version, n, seed=seed), ("random", "random"), seed)``."""
    template, allowed_rows = new_game_arrays(version, league)
    threads = thread_count(threads)
    seeds = game_seeds(seed, n)
    rng = _seeds_to_rng(seeds, seed)
    winners = np.empty(n, np.int8)
    turns = np.empty(n, np.int32)
    health = np.empty((n, 2), np.int32)
    reasons = np.empty(n, np.int8)
    log = np.zeros((n, RECORD_LIMIT if record else 0), np.int16)
    counts = np.zeros(n, np.int32)
    random_games = _random_games_for(not ruleset(version).draft)
    run_all([partial(random_games, seeds[a:b], rng[a:b], template, allowed_rows, winners[a:b],
                     turns[a:b], health[a:b], reasons[a:b], log[a:b], counts[a:b])
             for a, b in slices(n, threads)])  # fmt: skip
    return Playouts(winners, turns, health, reasons, log if record else None,
                    counts if record else None)  # fmt: skip


def _policy_code(name: str) -> int:
    try:
        return POLICIES[name]
    except KeyError:
        raise ValueError(
            f"unknown playout policy {name!r}; expected one of {', '.join(POLICIES)}"
        ) from None
