"""Self-play for ``builtin:learned`` (learned-v2): compiled games between value networks,
builtin:greedy and random play, recording the positions a learner chose.

learned-v2 is an *afterstate* value network: for every legal battle action it looks at
the position the action leads to and takes the one its network rates likeliest to win
(greedy's lethal rule first, as builtin:greedy). This module holds the compiled halves
of that agent, for training: the position features (:func:`position`) and the network
(:func:`value`) on batch rows. The agent's numpy halves live in
:mod:`cardarena.locm.agents.learned_v2` (the agents sit above this package, so the
definitions are repeated there); ``tests/locm/test_learned_v2.py`` keeps both equal.

A network is one flat float64 vector (:func:`pack` / :func:`unpack`), so that a league
of past selves is one 2-D array handed to :func:`play_league`.
"""

from __future__ import annotations

import numpy as np

from ..engine.cards import BREAKTHROUGH, DRAIN, GUARD, LETHAL, WARD
from . import layout as L
from . import require_numba
from .kernels import (
    BATTLE,
    DECK_BUILDING,
    ENDED,
    MAX_LEGAL,
    action_bounds,
    apply_legal,
    legal_actions,
)
from .playouts import (
    _damage_through,
    _lethal_face_attack,
    _next_uniform,
    evaluate,
    greedy_action,
)

require_numba()

from numba import njit  # noqa: E402

FEATURES = 54
"""Length of a position's feature vector (the agent's ``FEATURES`` must match)."""
GREEDY = -1
"""A seat code of :func:`play_league`: builtin:greedy's compiled choice."""
RANDOM = -2
"""A seat code of :func:`play_league`: uniformly random legal actions."""


def shapes(hidden: int) -> list[tuple[int, ...]]:
    """The shapes of a network's parameters: W1, b1, W2, b2, w3, b3."""
    return [(FEATURES, hidden), (hidden,), (hidden, hidden), (hidden,), (hidden,), (1,)]


def pack(params: list[np.ndarray]) -> np.ndarray:
    """A network's parameters as one flat float64 vector."""
    return np.concatenate([np.asarray(p, np.float64).ravel() for p in params])


def unpack(flat: np.ndarray, hidden: int) -> list[np.ndarray]:
    """The parameters of a flat vector (views into it)."""
    out = []
    at = 0
    for shape in shapes(hidden):
        size = int(np.prod(shape))
        out.append(flat[at : at + size].reshape(shape))
        at += size
    return out


@njit(cache=True, nogil=True)
def _side(row: np.ndarray, base: int, out: np.ndarray, at: int, lanes: np.ndarray,
          lane_at: int) -> None:  # fmt: skip
    """One board's block of features (12 values from ``at``; lane counts/attack at lane_at)."""
    count = row[base + L.P_BOARD_COUNT]
    attack = 0.0
    defense = 0.0
    guards = 0.0
    guard_defense = 0.0
    wards = 0.0
    lethals = 0.0
    drain = 0.0
    breakthrough = 0.0
    ready = 0.0
    keyword_value = 0.0
    top = 0.0
    for i in range(4):
        lanes[i] = 0.0
    for i in range(count):
        k = base + L.P_BOARD + i * L.CREATURE_SIZE
        a = row[k + L.K_ATTACK]
        d = row[k + L.K_DEFENSE]
        kw = row[k + L.K_KEYWORDS]
        lane = row[k + L.K_LANE]
        attack += a
        defense += d
        lanes[2 * lane] += 1.0
        lanes[2 * lane + 1] += a
        if a > top:
            top = a
        if row[k + L.K_CAN_ATTACK]:
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
    out[at] = count / 6.0
    out[at + 1] = attack / 20.0
    out[at + 2] = defense / 20.0
    out[at + 3] = guards / 3.0
    out[at + 4] = guard_defense / 10.0
    out[at + 5] = wards / 3.0
    out[at + 6] = lethals / 3.0
    out[at + 7] = drain / 10.0
    out[at + 8] = breakthrough / 10.0
    out[at + 9] = ready / 20.0
    out[at + 10] = keyword_value / 10.0
    out[at + 11] = top / 10.0
    out[lane_at] = lanes[0] / 3.0
    out[lane_at + 1] = lanes[1] / 10.0
    out[lane_at + 2] = lanes[2] / 3.0
    out[lane_at + 3] = lanes[3] / 10.0


@njit(cache=True, nogil=True)
def _public(row: np.ndarray, player: int, w: np.ndarray, out: np.ndarray,
            lanes: np.ndarray) -> None:  # fmt: skip
    """Every feature but the own hand's (13-16); ``w``: greedy's evaluation weights."""
    me = L.PLAYER_0 + player * L.PLAYER_SIZE
    opp = L.PLAYER_0 + (1 - player) * L.PLAYER_SIZE
    my_health = row[me + L.P_HEALTH]
    opp_health = row[opp + L.P_HEALTH]
    out[0] = my_health / 30.0
    out[1] = opp_health / 30.0
    out[2] = row[me + L.P_NEXT_TURN_DRAW] / 3.0
    out[3] = row[opp + L.P_NEXT_TURN_DRAW] / 3.0
    out[4] = row[me + L.P_MANA] / 12.0
    out[5] = row[me + L.P_MAX_MANA] / 12.0
    out[6] = row[opp + L.P_MAX_MANA] / 12.0
    out[7] = row[me + L.P_HAND_COUNT] / 8.0
    out[8] = row[opp + L.P_HAND_COUNT] / 8.0
    out[9] = (row[me + L.P_DECK_END] - row[me + L.P_DECK_TOP]) / 30.0
    out[10] = (row[opp + L.P_DECK_END] - row[opp + L.P_DECK_TOP]) / 30.0
    out[11] = min(row[L.TURN], 100) / 50.0
    out[12] = 1.0 if row[L.ACTIVE] == player else 0.0
    _side(row, me, out, 17, lanes, 41)
    _side(row, opp, out, 29, lanes, 45)
    mine = _damage_through(row, me, opp)
    theirs = _damage_through(row, opp, me)
    out[49] = theirs / 30.0
    out[50] = mine / 30.0
    out[51] = 1.0 if theirs >= my_health else 0.0
    out[52] = 1.0 if mine >= opp_health else 0.0
    out[53] = evaluate(row, player, w) / 30.0


@njit(cache=True, nogil=True)
def _hand(row: np.ndarray, table: np.ndarray, player: int, out: np.ndarray) -> None:
    """The player's own hand: creatures, items, cards it can pay for now, creature stats."""
    me = L.PLAYER_0 + player * L.PLAYER_SIZE
    mana = row[me + L.P_MANA]
    creatures = 0.0
    items = 0.0
    castable = 0.0
    stats = 0.0
    for i in range(row[me + L.P_HAND_COUNT]):
        card = row[L.INSTANCE_CARD + row[me + L.P_HAND + i]]
        if table[card, L.C_TYPE] == 0:
            creatures += 1.0
            stats += table[card, L.C_ATTACK] + table[card, L.C_DEFENSE]
        else:
            items += 1.0
        if table[card, L.C_COST] <= mana:
            castable += 1.0
    out[13] = creatures / 8.0
    out[14] = items / 8.0
    out[15] = castable / 8.0
    out[16] = stats / 20.0


@njit(cache=True, nogil=True)
def position(row: np.ndarray, table: np.ndarray, player: int, w: np.ndarray,
             out: np.ndarray, lanes: np.ndarray) -> None:  # fmt: skip
    """The :data:`FEATURES` features of a running battle position as ``player`` sees it:
    only what that player may see (its own hand, the sizes of the opponent's)."""
    _public(row, player, w, out, lanes)
    _hand(row, table, player, out)


@njit(cache=True, nogil=True)
def value(net: np.ndarray, hidden: int, x: np.ndarray, h1: np.ndarray,
          h2: np.ndarray) -> float:  # fmt: skip
    """The network's win probability for features ``x`` (tanh, tanh, sigmoid)."""
    f = x.shape[0]
    b1 = f * hidden
    w2 = b1 + hidden
    b2 = w2 + hidden * hidden
    w3 = b2 + hidden
    b3 = w3 + hidden
    for j in range(hidden):
        h1[j] = net[b1 + j]
    for i in range(f):
        xi = x[i]
        if xi != 0.0:
            at = i * hidden
            for j in range(hidden):
                h1[j] += xi * net[at + j]
    for j in range(hidden):
        h1[j] = np.tanh(h1[j])
    for j in range(hidden):
        h2[j] = net[b2 + j]
    for i in range(hidden):
        hi = h1[i]
        at = w2 + i * hidden
        for j in range(hidden):
            h2[j] += hi * net[at + j]
    z = net[b3]
    for j in range(hidden):
        z += np.tanh(h2[j]) * net[w3 + j]
    return 1.0 / (1.0 + np.exp(-z))


@njit(cache=True, nogil=True)
def afterstate_value(row: np.ndarray, table: np.ndarray, player: int, net: np.ndarray,
                     hidden: int, w: np.ndarray, x: np.ndarray, lanes: np.ndarray,
                     h1: np.ndarray, h2: np.ndarray) -> float:  # fmt: skip
    """The worth of a position for ``player``: 1 won, 0 lost or drawn, else the network's."""
    if row[L.PHASE] == ENDED:
        return 1.0 if row[L.WINNER] == player else 0.0
    position(row, table, player, w, x, lanes)
    return value(net, hidden, x, h1, h2)


@njit(cache=True, nogil=True)
def network_action(row: np.ndarray, table: np.ndarray, legal: np.ndarray, n: int,
                   net: np.ndarray, hidden: int, w: np.ndarray, scratch: np.ndarray,
                   x: np.ndarray, lanes: np.ndarray, h1: np.ndarray,
                   h2: np.ndarray) -> int:  # fmt: skip
    """learned-v2's choice: greedy's lethal face attack, else the legal action (PASS
    included) whose afterstate the network rates highest (the first best on ties).

    PASS is rated on the opponent's next turn as the player can foresee it: the
    opponent's unspent mana (which ends the second player's bonus mana when it is 0) is
    not shown to a bot, so it is taken as unspent, as ``State.from_input`` does."""
    _lanes, attack_at, _use, _deck, _size = action_bounds(row[L.VERSION])
    lethal = _lethal_face_attack(row, attack_at)
    if lethal >= 0:
        return lethal
    player = row[L.ACTIVE]
    opp = L.PLAYER_0 + (1 - player) * L.PLAYER_SIZE
    best = legal[0]
    best_value = -1.0
    for k in range(n):
        scratch[:] = row
        if legal[k] == 0:  # PASS: the opponent's unspent mana is unseen (see above)
            scratch[opp + L.P_MANA] = scratch[opp + L.P_MAX_MANA]
        apply_legal(scratch, table, legal[k])
        v = afterstate_value(scratch, table, player, net, hidden, w, x, lanes, h1, h2)
        if v > best_value:
            best_value = v
            best = legal[k]
    return best


@njit(cache=True, nogil=True)
def _deck_choice(row: np.ndarray, legal: np.ndarray, n: int, values: np.ndarray,
                 deck_at: int) -> int:  # fmt: skip
    """The legal deck-building action whose card has the highest value (first on ties):
    a 1.0/1.2 pick from the triple on offer, a 1.5 pool card with copies left."""
    version = row[L.VERSION]
    best = legal[0]
    best_value = -1e300
    if version != 2:
        player = 1 if row[L.PLAYER_1 + L.P_CHOSEN_COUNT] < row[L.PLAYER_0 + L.P_CHOSEN_COUNT] else 0
        turn = row[L.PLAYER_0 + player * L.PLAYER_SIZE + L.P_CHOSEN_COUNT]
        for k in range(n):
            card = 3 * turn + legal[k] - deck_at
            if values[card] > best_value:
                best_value = values[card]
                best = legal[k]
        return best
    for k in range(n):
        card = legal[k] - deck_at
        if values[card] > best_value:
            best_value = values[card]
            best = legal[k]
    return best


@njit(cache=True, nogil=True)
def play_league(state: np.ndarray, cards: np.ndarray, seats: np.ndarray, nets: np.ndarray,
                hidden: int, w: np.ndarray, deck_values: np.ndarray, rng: np.ndarray,
                epsilon: float, record: np.ndarray, out_x: np.ndarray, out_game: np.ndarray,
                out_player: np.ndarray) -> int:  # fmt: skip
    """Play every game of the batch to its end.

    ``seats[g, p]``: who plays seat ``p`` of game ``g`` in battle — a row of ``nets``,
    :data:`GREEDY` or :data:`RANDOM`. Deck building picks the highest of
    ``deck_values[g, p]`` (one value per card-table row), or at random where a value row
    is all NaN. A network seat explores: with probability ``epsilon`` a random legal
    action. Where ``record[g, p]``, the features of each running position seat ``p``
    chose in battle go to ``out_x`` (with the game and seat), while there is room.
    Returns how many positions were recorded.
    """
    legal = np.empty(MAX_LEGAL, np.int32)
    scratch = np.empty(state.shape[1], np.int32)
    x = np.empty(FEATURES, np.float64)
    lanes = np.empty(4, np.float64)
    h1 = np.empty(hidden, np.float64)
    h2 = np.empty(hidden, np.float64)
    limit = out_x.shape[0]
    stored = 0
    for g in range(state.shape[0]):
        row = state[g]
        table = cards[g]
        _lanes, _attack, _use, deck_at, _size = action_bounds(row[L.VERSION])
        while row[L.PHASE] != ENDED:
            n = legal_actions(row, table, legal)
            if row[L.PHASE] == DECK_BUILDING:
                chosen0 = row[L.PLAYER_0 + L.P_CHOSEN_COUNT]
                player = 1 if row[L.PLAYER_1 + L.P_CHOSEN_COUNT] < chosen0 else 0
                values = deck_values[g, player]
                if np.isnan(values[0]):
                    index = legal[_next_uniform(rng, g, n)]
                else:
                    index = _deck_choice(row, legal, n, values, deck_at)
                apply_legal(row, table, index)
                continue
            player = row[L.ACTIVE]
            seat = seats[g, player]
            if seat == GREEDY:
                index = greedy_action(row, table, legal, n, w, scratch)
            elif seat == RANDOM or (
                epsilon > 0.0 and _next_uniform(rng, g, 1 << 20) < epsilon * (1 << 20)
            ):
                index = legal[_next_uniform(rng, g, n)]
            else:
                index = network_action(row, table, legal, n, nets[seat], hidden, w, scratch,
                                       x, lanes, h1, h2)  # fmt: skip
            apply_legal(row, table, index)
            if record[g, player] and row[L.PHASE] == BATTLE and stored < limit:
                position(row, table, player, w, out_x[stored], lanes)
                out_game[stored] = g
                out_player[stored] = player
                stored += 1
    return stored
