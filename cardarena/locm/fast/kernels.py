"""The LOCM rules compiled with numba: legal actions and their effects over batch rows.

Every function works on one game as a *row* (``state[g]``, a view) and its *card
table* (``cards[g]``), so that the batch kernels loop over games inside compiled code
and a playout can try an action on a scratch copy of a row. The rules are the reference
engine's (:mod:`cardarena.locm.engine.state`), statement for statement where the order
matters (health changes, runes, bonus draws, the draw step, deaths, winners); the
differential tests compare both engines after every action.

Actions are indexes of the environments' :class:`~cardarena.locm.encoding.encoder.ActionLayout`
(PASS, SUMMON hand slot x lane, ATTACK board slot x target, USE hand slot x target,
PICK or CHOOSE). The public kernels, stable for the other fast modules:

* :func:`legal_masks` — the legal-action masks of a whole batch;
* :func:`step_games` — one action per game, checked, for a whole batch;
* :func:`legal_actions` / :func:`apply_legal` — one game, for compiled loops.
"""

from __future__ import annotations

import numpy as np

from ..engine.cards import BREAKTHROUGH, CHARGE, DRAIN, GUARD, LETHAL, WARD
from ..engine.rules import (
    DECK_SIZE,
    DECKOUT_DAMAGE,
    HAND_LIMIT,
    HEALTH_PER_BONUS_DRAW,
    MAX_MANA,
    RUNES,
    TURN_LIMIT,
)
from . import require_numba
from .layout import (
    ACTIVE,
    BOARD_LIMIT,
    C_AREA,
    C_ATTACK,
    C_BASE_ID,
    C_COST,
    C_DEFENSE,
    C_DRAW,
    C_KEYWORDS,
    C_MY_HEALTH,
    C_OPP_HEALTH,
    C_TYPE,
    CREATURE_SIZE,
    END_REASON,
    INSTANCE_CARD,
    K_ATTACK,
    K_CAN_ATTACK,
    K_CARD,
    K_DEFENSE,
    K_HAS_ATTACKED,
    K_ID,
    K_KEYWORDS,
    K_LANE,
    K_SHOWS_EFFECTS,
    MAX_PERFORMED,
    P_BOARD,
    P_BOARD_COUNT,
    P_BONUS_MANA_TURNS,
    P_CHOSEN,
    P_CHOSEN_COUNT,
    P_COPIES,
    P_DECK,
    P_DECK_END,
    P_DECK_TOP,
    P_DRAW_SHOWN,
    P_HAND,
    P_HAND_COUNT,
    P_HEALTH,
    P_HEALTH_LOST,
    P_MANA,
    P_MAX_MANA,
    P_NEXT_TURN_DRAW,
    P_PERFORMED,
    P_PERFORMED_COUNT,
    P_RUNES_LEFT,
    PERFORMED_SIZE,
    PHASE,
    PLAYER_0,
    PLAYER_SIZE,
    SHUFFLE_SEED,
    TURN,
    VERSION,
    WINNER,
)

require_numba()

from numba import njit  # noqa: E402

from .generators import deal_decks  # noqa: E402

RULES = {"cache": True, "nogil": True, "_nrt": False, "forceinline": True}
"""How the rules functions are compiled (``@njit(**RULES)``), for speed: without numba's
reference counting (``_nrt``: they allocate nothing, so passing a row, a table or a buffer
costs no atomic increment and decrement per call: a third of a game's compiled time
before), and inlined by LLVM into their callers (``forceinline``: a compiled loop becomes
one function, without the argument passing of a row and a table per call). A function that
allocates sets ``_nrt=True`` itself, else it would inherit False from its caller."""

# Phases, end reasons, action types and card types as the reference engine numbers them.
DECK_BUILDING, BATTLE, ENDED = 0, 1, 2
HEALTH_END, DECK_OUT_END, TURN_LIMIT_END = 1, 2, 3
PASS_TYPE, SUMMON_TYPE, ATTACK_TYPE, USE_TYPE = 0, 1, 2, 3
CREATURE, GREEN, RED, BLUE = 0, 1, 2, 3
V1_0, V1_2, V1_5 = 0, 1, 2

# The environments' action layout (cardarena.locm.encoding.encoder.action_layout).
SUMMON_AT = 1
TARGETS_ATTACK = 7
TARGETS_USE = 13
POOL_SIZE = 120
MAX_LEGAL = 1 + 2 * HAND_LIMIT + 6 * TARGETS_ATTACK + HAND_LIMIT * TARGETS_USE + POOL_SIZE
"""More than any version's action count: the size of a buffer of legal indexes."""
MAX_COPIES = 2
LANE_CAPACITY = 3
BOARD_CAPACITY_1_0 = 6
RUNE_VALUES = np.array(RUNES, np.int32)
RUNE_COUNT = len(RUNES)


@njit(**RULES)
def action_bounds(version: int) -> tuple[int, int, int, int, int]:
    """(lanes, attack start, use start, deck start, size) of a version's action layout."""
    lanes = 1 if version == V1_0 else 2
    attack = SUMMON_AT + HAND_LIMIT * lanes
    use = attack + BOARD_LIMIT * TARGETS_ATTACK
    deck = use + HAND_LIMIT * TARGETS_USE
    size = deck + (POOL_SIZE if version == V1_5 else 3)
    return lanes, attack, use, deck, size


@njit(**RULES)
def current_player(row: np.ndarray) -> int:
    """The player to act: in deck building the one with fewer choices (player 0 first)."""
    if row[PHASE] == DECK_BUILDING:
        p0 = row[PLAYER_0 + P_CHOSEN_COUNT]
        p1 = row[PLAYER_0 + PLAYER_SIZE + P_CHOSEN_COUNT]
        return 1 if p1 < p0 else 0
    return row[ACTIVE]


@njit(**RULES)
def _index(value: int) -> int:
    """A non-negative number read from a row (a player, an instance id, a card index) as an
    int64 that the compiler knows is non-negative (zero-extended from 32 bits): the array
    indexes computed from it then need no negative-index wraparound (a compare and a select
    per access otherwise). Only for values that are never negative."""
    return np.int64(np.uint32(value))


@njit(**RULES)
def _block(player: int) -> int:
    """The first column of ``player``'s block (0 or 1), known non-negative (see _index)."""
    return PLAYER_0 + _index(player) * PLAYER_SIZE


# --- board helpers -------------------------------------------------------------------


@njit(**RULES)
def _board_index(row: np.ndarray, base: int, slot: int, has_lanes: bool) -> int:
    """The board index of the creature in an environment slot, -1 if the slot is empty."""
    count = row[base + P_BOARD_COUNT]
    if not has_lanes:
        return slot if slot < count else -1
    lane = slot // 3
    nth = slot - 3 * lane
    for i in range(count):
        if row[base + P_BOARD + i * CREATURE_SIZE + K_LANE] == lane:
            if nth == 0:
                return i
            nth -= 1
    return -1


@njit(**RULES)
def _remove_creature(row: np.ndarray, base: int, index: int) -> None:
    count = row[base + P_BOARD_COUNT]
    start = base + P_BOARD + index * CREATURE_SIZE
    end = base + P_BOARD + count * CREATURE_SIZE
    for k in range(start, end - CREATURE_SIZE):
        row[k] = row[k + CREATURE_SIZE]
    for k in range(end - CREATURE_SIZE, end):
        row[k] = 0
    row[base + P_BOARD_COUNT] = count - 1


@njit(**RULES)
def _add_creature(row: np.ndarray, table: np.ndarray, base: int, ident: int, card: int,
                  lane: int) -> None:  # fmt: skip
    at = base + P_BOARD + row[base + P_BOARD_COUNT] * CREATURE_SIZE
    keywords = table[card, C_KEYWORDS]
    row[at + K_ID] = ident
    row[at + K_CARD] = card
    row[at + K_LANE] = lane
    row[at + K_ATTACK] = table[card, C_ATTACK]
    row[at + K_DEFENSE] = table[card, C_DEFENSE]
    row[at + K_KEYWORDS] = keywords
    row[at + K_CAN_ATTACK] = 1 if keywords & CHARGE else 0
    row[at + K_HAS_ATTACKED] = 0
    row[at + K_SHOWS_EFFECTS] = 1
    row[base + P_BOARD_COUNT] += 1


@njit(**RULES)
def _lane_count(row: np.ndarray, base: int, lane: int) -> int:
    n = 0
    for i in range(row[base + P_BOARD_COUNT]):
        if row[base + P_BOARD + i * CREATURE_SIZE + K_LANE] == lane:
            n += 1
    return n


@njit(**RULES)
def _remove_from_hand(row: np.ndarray, base: int, slot: int) -> int:
    """Take the card in a hand slot out of the hand; return its instance id."""
    count = row[base + P_HAND_COUNT]
    ident = row[base + P_HAND + slot]
    for k in range(base + P_HAND + slot, base + P_HAND + count - 1):
        row[k] = row[k + 1]
    row[base + P_HAND + count - 1] = 0
    row[base + P_HAND_COUNT] = count - 1
    return ident


# --- health, winners, turns ----------------------------------------------------------


@njit(**RULES)
def _modify_health(row: np.ndarray, base: int, delta: int, runes: bool) -> None:
    health = row[base + P_HEALTH] + delta
    row[base + P_HEALTH] = health
    if delta >= 0:
        return
    if runes:
        left = row[base + P_RUNES_LEFT]
        while left > 0 and health <= RUNE_VALUES[RUNE_COUNT - left]:
            left -= 1
            row[base + P_NEXT_TURN_DRAW] += 1
        row[base + P_RUNES_LEFT] = left
    else:
        before = row[base + P_HEALTH_LOST]
        after = before - delta
        row[base + P_HEALTH_LOST] = after
        row[base + P_NEXT_TURN_DRAW] += (after // HEALTH_PER_BONUS_DRAW
                                         - before // HEALTH_PER_BONUS_DRAW)  # fmt: skip


@njit(**RULES)
def _finish(row: np.ndarray, winner: int, reason: int) -> None:
    row[WINNER] = winner
    row[END_REASON] = reason
    row[PHASE] = ENDED


@njit(**RULES)
def _check_winner(row: np.ndarray) -> None:
    if row[WINNER] >= 0:
        return
    active = row[ACTIVE]
    if row[_block(1 - active) + P_HEALTH] <= 0:
        _finish(row, active, HEALTH_END)
    elif row[_block(active) + P_HEALTH] <= 0:
        _finish(row, 1 - active, HEALTH_END)


@njit(**RULES)
def _draw_cards(row: np.ndarray, base: int, count: int, player_turn: int, runes: bool) -> None:
    hand = row[base + P_HAND_COUNT]
    top = row[base + P_DECK_TOP]
    end = row[base + P_DECK_END]
    if runes:
        for _ in range(count):
            if top >= end or player_turn >= TURN_LIMIT:
                left = row[base + P_RUNES_LEFT]
                if left > 0:
                    row[base + P_HEALTH] = RUNE_VALUES[RUNE_COUNT - left]
                    row[base + P_RUNES_LEFT] = left - 1
                else:
                    row[base + P_HEALTH] = 0
                continue
            if hand == HAND_LIMIT:
                break
            row[base + P_HAND + hand] = row[base + P_DECK + top]
            hand += 1
            top += 1
    else:
        if player_turn >= TURN_LIMIT:
            row[base + P_HEALTH] -= DECKOUT_DAMAGE
        for _ in range(count):
            if hand == HAND_LIMIT:
                continue
            if top < end:
                row[base + P_HAND + hand] = row[base + P_DECK + top]
                hand += 1
                top += 1
            else:
                row[base + P_HEALTH] -= DECKOUT_DAMAGE
    row[base + P_HAND_COUNT] = hand
    row[base + P_DECK_TOP] = top


@njit(**RULES)
def _start_turn(row: np.ndarray) -> None:
    """The official start of turn (the reference ``State.start_turn``), in its order."""
    _check_winner(row)
    if row[WINNER] >= 0:
        return
    previous = _block(row[ACTIVE])
    for i in range(row[previous + P_BOARD_COUNT]):
        at = previous + P_BOARD + i * CREATURE_SIZE
        row[at + K_CAN_ATTACK] = 0
        row[at + K_HAS_ATTACKED] = 0
    row[previous + P_DRAW_SHOWN] = row[previous + P_NEXT_TURN_DRAW]
    active = 1 - row[ACTIVE]
    row[ACTIVE] = active
    base = _block(active)
    row[base + P_PERFORMED_COUNT] = 0
    turn = row[TURN] + 1
    row[TURN] = turn
    bonus = row[base + P_BONUS_MANA_TURNS]
    cap = MAX_MANA + (1 if bonus > 0 else 0)
    if row[base + P_MAX_MANA] < cap:
        row[base + P_MAX_MANA] += 1
    if bonus > 0 and row[base + P_MANA] == 0:
        row[base + P_BONUS_MANA_TURNS] = bonus - 1
        if bonus - 1 == 0:
            row[base + P_MAX_MANA] -= 1
    row[base + P_MANA] = row[base + P_MAX_MANA]
    for i in range(row[base + P_BOARD_COUNT]):
        row[base + P_BOARD + i * CREATURE_SIZE + K_CAN_ATTACK] = 1
    player_turn = turn // 2
    _draw_cards(row, base, row[base + P_NEXT_TURN_DRAW], player_turn, row[VERSION] != V1_5)
    row[base + P_DRAW_SHOWN] = row[base + P_NEXT_TURN_DRAW]
    row[base + P_NEXT_TURN_DRAW] = 1
    row[base + P_HEALTH_LOST] = 0
    if row[base + P_HEALTH] <= 0:
        _finish(row, 1 - active, TURN_LIMIT_END if player_turn >= TURN_LIMIT else DECK_OUT_END)


# --- deck building ---------------------------------------------------------------------


@njit(**RULES)
def _shuffle_seed(row: np.ndarray, player: int) -> int:
    """A player's shuffle seed (a Java long) from the two words the row stores."""
    high = np.int64(row[SHUFFLE_SEED + 2 * player])
    low = np.int64(row[SHUFFLE_SEED + 2 * player + 1]) & 0xFFFFFFFF
    return (high << 32) | low


@njit(cache=True, nogil=True, _nrt=True)  # deal_decks allocates: NRT on (not inherited)
def _start_battle(row: np.ndarray) -> None:
    """Shuffle both decks with the players' seeds and deal the hands (fast-gen's
    :func:`.generators.deal_decks`), then start turn 0 (the reference ``_start_battle``)."""
    deal_decks(row, _shuffle_seed(row, 0), _shuffle_seed(row, 1))
    row[PHASE] = BATTLE
    row[ACTIVE] = 1
    row[TURN] = -1
    _start_turn(row)


@njit(**RULES)
def _add_choice(row: np.ndarray, player: int, card: int) -> None:
    base = _block(player)
    count = row[base + P_CHOSEN_COUNT]
    row[base + P_CHOSEN + count] = card
    row[base + P_CHOSEN_COUNT] = count + 1
    row[base + P_COPIES + card] += 1
    other = _block(1 - player)
    if count + 1 == DECK_SIZE and row[other + P_CHOSEN_COUNT] == DECK_SIZE:
        _start_battle(row)


# --- battle effects ------------------------------------------------------------------


@njit(**RULES)
def _after_action(row: np.ndarray, me: int, opp: int, my_delta: int, opp_delta: int,
                  draw_delta: int, base_id: int, kind: int, ident: int, target: int,
                  runes: bool) -> None:  # fmt: skip
    """The common end of SUMMON/ATTACK/USE: health changes, draws, performed, winner."""
    if my_delta != 0:
        _modify_health(row, me, my_delta, runes)
    if opp_delta != 0:
        _modify_health(row, opp, opp_delta, runes)
    row[me + P_NEXT_TURN_DRAW] += draw_delta
    count = row[me + P_PERFORMED_COUNT]
    if count < MAX_PERFORMED:
        at = me + P_PERFORMED + count * PERFORMED_SIZE
        row[at] = base_id
        row[at + 1] = kind
        row[at + 2] = ident
        row[at + 3] = target
        row[me + P_PERFORMED_COUNT] = count + 1
    if row[me + P_HEALTH] <= 0 or row[opp + P_HEALTH] <= 0:
        _check_winner(row)


@njit(**RULES)
def _attack(row: np.ndarray, table: np.ndarray, me: int, opp: int, index: int,
            target_index: int, runes: bool) -> None:  # fmt: skip
    """Board creature ``index`` attacks the face (``target_index`` -1) or a creature."""
    at = me + P_BOARD + index * CREATURE_SIZE
    ident = row[at + K_ID]
    base_id = table[_index(row[at + K_CARD]), C_BASE_ID]
    a_kw = row[at + K_KEYWORDS]
    a_att = row[at + K_ATTACK]
    row[at + K_CAN_ATTACK] = 0
    row[at + K_HAS_ATTACKED] = 1
    if target_index < 0:
        row[at + K_SHOWS_EFFECTS] = 0
        gain = a_att if a_kw & DRAIN else 0
        _after_action(row, me, opp, gain, -a_att, 0, base_id, ATTACK_TYPE, ident, -1, runes)
        return
    dt = opp + P_BOARD + target_index * CREATURE_SIZE
    target = row[dt + K_ID]
    d_kw = row[dt + K_KEYWORDS]
    d_att = row[dt + K_ATTACK]
    if d_kw & WARD and a_att > 0:
        row[dt + K_KEYWORDS] = d_kw & ~WARD
    if a_kw & WARD and d_att > 0:
        row[at + K_KEYWORDS] = a_kw & ~WARD
    dealt = 0 if d_kw & WARD else a_att
    taken = 0 if a_kw & WARD else d_att
    gain = 0
    breakthrough = 0
    d_def = row[dt + K_DEFENSE]
    defender_dies = dealt >= d_def
    if a_kw & BREAKTHROUGH and defender_dies:
        breakthrough = d_def - dealt
    if a_kw & LETHAL and dealt > 0:
        defender_dies = True
    if a_kw & DRAIN and dealt > 0:
        gain = a_att
    attacker_dies = taken >= row[at + K_DEFENSE]
    if d_kw & LETHAL and taken > 0:
        attacker_dies = True
    if defender_dies:
        _remove_creature(row, opp, target_index)
    else:
        row[dt + K_DEFENSE] = d_def - dealt
        row[dt + K_SHOWS_EFFECTS] = 0
    if attacker_dies:
        _remove_creature(row, me, index)
    else:
        row[at + K_DEFENSE] -= taken
        row[at + K_SHOWS_EFFECTS] = 0
    _after_action(row, me, opp, gain, breakthrough, 0, base_id, ATTACK_TYPE, ident, target, runes)


@njit(**RULES)
def _summon(row: np.ndarray, table: np.ndarray, me: int, opp: int, slot: int, lane: int,
            version: int) -> None:  # fmt: skip
    """Summon the creature in hand ``slot`` to ``lane`` (-1: 1.0's single board)."""
    ident = _remove_from_hand(row, me, slot)
    card = _index(row[INSTANCE_CARD + _index(ident)])
    row[me + P_MANA] -= table[card, C_COST]
    place = 0 if lane < 0 else lane
    _add_creature(row, table, me, ident, card, place)
    copies = 1
    area = table[card, C_AREA]
    if version == V1_5 and area != 0:
        clone_lane = place if area == 1 else 1 - place
        if _lane_count(row, me, clone_lane) < LANE_CAPACITY:
            row[INSTANCE_CARD + ident + 1] = card
            _add_creature(row, table, me, ident + 1, card, clone_lane)
            copies = 2
    _after_action(row, me, opp, copies * table[card, C_MY_HEALTH],
                  copies * table[card, C_OPP_HEALTH], copies * table[card, C_DRAW],
                  table[card, C_BASE_ID], SUMMON_TYPE, ident, lane, version != V1_5)  # fmt: skip


@njit(**RULES)
def _use(row: np.ndarray, table: np.ndarray, me: int, opp: int, slot: int, side: int,
         target_index: int, version: int) -> None:  # fmt: skip
    """Use the item in hand ``slot`` on creature ``target_index`` of ``side`` (a player
    block), or on the opponent (``target_index`` -1, blue items)."""
    runes = version != V1_5
    ident = _remove_from_hand(row, me, slot)
    card = _index(row[INSTANCE_CARD + _index(ident)])
    row[me + P_MANA] -= table[card, C_COST]
    base_id = table[card, C_BASE_ID]
    if target_index < 0:
        # The reference applies both changes unconditionally (a zero change is a no-op).
        _after_action(row, me, opp, table[card, C_MY_HEALTH],
                      table[card, C_DEFENSE] + table[card, C_OPP_HEALTH], table[card, C_DRAW],
                      base_id, USE_TYPE, ident, -1, runes)  # fmt: skip
        return
    target_at = side + P_BOARD + target_index * CREATURE_SIZE
    target = row[target_at + K_ID]
    target_lane = row[target_at + K_LANE]
    area = table[card, C_AREA] if version == V1_5 else 0
    green = table[card, C_TYPE] == GREEN
    item_kw = table[card, C_KEYWORDS]
    item_att = table[card, C_ATTACK]
    item_def = table[card, C_DEFENSE]
    affected = 0
    i = 0
    while i < row[side + P_BOARD_COUNT]:
        at = side + P_BOARD + i * CREATURE_SIZE
        if area == 0:
            hit = i == target_index
        elif area == 1:
            hit = row[at + K_LANE] == target_lane
        else:
            hit = True
        if not hit:
            i += 1
            continue
        affected += 1
        keywords = row[at + K_KEYWORDS]
        if green:
            keywords |= item_kw
            if item_kw & CHARGE:
                row[at + K_CAN_ATTACK] = 0 if row[at + K_HAS_ATTACKED] else 1
        else:
            keywords &= ~item_kw
        attack = row[at + K_ATTACK] + item_att
        row[at + K_ATTACK] = attack if attack > 0 else 0
        if keywords & WARD and item_def < 0:
            keywords &= ~WARD
        else:
            row[at + K_DEFENSE] += item_def
        row[at + K_KEYWORDS] = keywords
        if row[at + K_DEFENSE] <= 0:
            _remove_creature(row, side, i)
            if area == 0:
                break
            continue  # the next creature moved into index i
        row[at + K_SHOWS_EFFECTS] = 0
        i += 1
    _after_action(row, me, opp, affected * table[card, C_MY_HEALTH],
                  affected * table[card, C_OPP_HEALTH], affected * table[card, C_DRAW],
                  base_id, USE_TYPE, ident, target, runes)  # fmt: skip


# --- legal actions --------------------------------------------------------------------


@njit(**RULES)
def legal_actions(row: np.ndarray, table: np.ndarray, out: np.ndarray) -> int:
    """Write the legal action indexes of the player to act into ``out``, each once (PASS
    first, then SUMMON, ATTACK, USE; or the deck-building actions); return how many,
    0 once the game has ended. ``out`` holds at least :data:`MAX_LEGAL` entries."""
    phase = row[PHASE]
    if phase == ENDED:
        return 0
    version = row[VERSION]
    lanes, attack_at, use_at, deck_at, _size = action_bounds(version)
    if phase == DECK_BUILDING:
        if version != V1_5:
            for k in range(3):
                out[k] = deck_at + k
            return 3
        base = _block(current_player(row))
        n = 0
        for k in range(POOL_SIZE):
            if row[base + P_COPIES + k] < MAX_COPIES:
                out[n] = deck_at + k
                n += 1
        return n
    has_lanes = version != V1_0
    me = _block(row[ACTIVE])
    opp = _block(1 - row[ACTIVE])
    out[0] = 0
    n = 1
    mana = row[me + P_MANA]
    hand = row[me + P_HAND_COUNT]
    my_count = row[me + P_BOARD_COUNT]
    opp_count = row[opp + P_BOARD_COUNT]
    # The loops below write each candidate at out[n] and then advance n by 0 or 1 (a
    # candidate that is not legal is overwritten by the next one): the same list as
    # branching on every candidate, without the mispredicted branches of random positions.
    # SUMMON: lanes with room.
    if has_lanes:
        left = _lane_count(row, me, 0)
        open0 = left < LANE_CAPACITY
        open1 = my_count - left < LANE_CAPACITY
    else:
        open0 = my_count < BOARD_CAPACITY_1_0
        open1 = False
    # The hand once: the affordable creatures and items as bits, each card's type in 2 bits.
    creatures = 0
    items = 0
    kinds = 0
    for slot in range(hand):
        card = _index(row[INSTANCE_CARD + _index(row[me + P_HAND + slot])])
        kind = table[card, C_TYPE]
        affordable = table[card, C_COST] <= mana
        creatures |= np.int64((kind == CREATURE) & affordable) << slot
        items |= np.int64((kind != CREATURE) & affordable) << slot
        kinds |= np.int64(kind) << (2 * slot)
    if open0 or open1:
        for slot in range(hand):
            ok = (creatures >> slot) & 1
            first = SUMMON_AT + slot * lanes
            out[n] = first
            n += ok & open0
            out[n] = first + 1
            n += ok & open1
    # ATTACK: per lane the Guards if any, else the face and every creature.
    guarded0 = False
    guarded1 = False
    for i in range(opp_count):
        at = opp + P_BOARD + i * CREATURE_SIZE
        guard = (row[at + K_KEYWORDS] & GUARD) != 0
        in_lane1 = row[at + K_LANE] != 0
        guarded0 |= guard & (not in_lane1)
        guarded1 |= guard & in_lane1
    my_next0 = 0
    my_next1 = 3
    for i in range(my_count):
        at = me + P_BOARD + i * CREATURE_SIZE
        lane = row[at + K_LANE]
        if not has_lanes:
            slot = i
        elif lane == 0:
            slot = my_next0
            my_next0 += 1
        else:
            slot = my_next1
            my_next1 += 1
        if not row[at + K_CAN_ATTACK]:
            continue
        first = attack_at + slot * TARGETS_ATTACK
        guarded = guarded0 if lane == 0 else guarded1
        out[n] = first
        n += not guarded
        next0 = 0
        next1 = 3
        for j in range(opp_count):
            dt = opp + P_BOARD + j * CREATURE_SIZE
            d_lane = row[dt + K_LANE]
            if not has_lanes:
                d_slot = j
            elif d_lane == 0:
                d_slot = next0
                next0 += 1
            else:
                d_slot = next1
                next1 += 1
            out[n] = first + 1 + d_slot
            n += (d_lane == lane) & ((not guarded) | ((row[dt + K_KEYWORDS] & GUARD) != 0))
    # USE: green on own creatures, red on the opponent's, blue on them or the face.
    for slot in range(hand):
        if not (items >> slot) & 1:
            continue
        kind = (kinds >> (2 * slot)) & 3
        first = use_at + slot * TARGETS_USE
        green = kind == GREEN
        side = me if green else opp
        offset = 1 if green else 1 + BOARD_LIMIT
        count = my_count if green else opp_count
        out[n] = first
        n += kind == BLUE
        next0 = 0
        next1 = 3
        for j in range(count):
            if not has_lanes:
                t_slot = j
            elif row[side + P_BOARD + j * CREATURE_SIZE + K_LANE] == 0:
                t_slot = next0
                next0 += 1
            else:
                t_slot = next1
                next1 += 1
            out[n] = first + offset + t_slot
            n += 1
    return n


@njit(**RULES)
def _full_cards_up_to(row: np.ndarray, base: int, card: int) -> int:
    """How many pool cards numbered ``<= card`` the player holds MAX_COPIES of (each such
    card is MAX_COPIES times in its choices)."""
    full = 0
    for k in range(row[base + P_CHOSEN_COUNT]):
        chosen = row[base + P_CHOSEN + k]
        if chosen <= card and row[base + P_COPIES + chosen] >= MAX_COPIES:
            full += 1
    return full // MAX_COPIES


@njit(**RULES)
def pool_choice_count(row: np.ndarray) -> int:
    """How many legal actions a 1.5 deck-building row has (the pool cards still open to
    the player to choose), from its choices alone: :func:`legal_actions` would list them."""
    base = _block(current_player(row))
    return POOL_SIZE - _full_cards_up_to(row, base, POOL_SIZE)


@njit(**RULES)
def pool_choice(row: np.ndarray, k: int) -> int:
    """The action index ``legal_actions`` would list ``k``-th in a 1.5 deck-building row.

    The ``k``-th open card is the fixed point of ``c = k + (full cards <= c)``, reached
    from ``c = k`` in a step or two: cheaper than listing the 120 pool cards."""
    base = _block(current_player(row))
    first = np.int64(k)  # a uint64 draw plus an int64 would be a float in numba
    card = first
    while True:
        moved = first + _full_cards_up_to(row, base, card)
        if moved == card:
            return action_bounds(V1_5)[3] + card
        card = moved


@njit(**RULES)
def apply_legal(row: np.ndarray, table: np.ndarray, index: int) -> None:
    """Apply action ``index``, which must be legal (from :func:`legal_actions`)."""
    version = row[VERSION]
    lanes, attack_at, use_at, deck_at, _size = action_bounds(version)
    if row[PHASE] == DECK_BUILDING:
        player = current_player(row)
        offset = index - deck_at
        if version == V1_5:
            _add_choice(row, player, offset)
        else:
            turn = row[_block(player) + P_CHOSEN_COUNT]
            _add_choice(row, player, 3 * turn + offset)
        return
    if index == 0:
        _start_turn(row)
        return
    has_lanes = version != V1_0
    me = _block(row[ACTIVE])
    opp = _block(1 - row[ACTIVE])
    if index < attack_at:
        slot = (index - SUMMON_AT) // lanes
        lane = (index - SUMMON_AT) - slot * lanes if has_lanes else -1
        _summon(row, table, me, opp, slot, lane, version)
    elif index < use_at:
        slot = (index - attack_at) // TARGETS_ATTACK
        target = (index - attack_at) - slot * TARGETS_ATTACK
        attacker = _board_index(row, me, slot, has_lanes)
        defender = -1 if target == 0 else _board_index(row, opp, target - 1, has_lanes)
        _attack(row, table, me, opp, attacker, defender, version != V1_5)
    else:
        slot = (index - use_at) // TARGETS_USE
        target = (index - use_at) - slot * TARGETS_USE
        if target == 0:
            # np.int64: a literal -1 would compile a second _use for itself
            _use(row, table, me, opp, slot, opp, np.int64(-1), version)
        elif target <= BOARD_LIMIT:
            _use(row, table, me, opp, slot, me, _board_index(row, me, target - 1, has_lanes),
                 version)  # fmt: skip
        else:
            _use(row, table, me, opp, slot, opp,
                 _board_index(row, opp, target - 1 - BOARD_LIMIT, has_lanes), version)  # fmt: skip


@njit(**RULES)
def is_legal(row: np.ndarray, table: np.ndarray, index: int, buffer: np.ndarray) -> bool:
    """Is ``index`` a legal action of the player to act (``buffer``: MAX_LEGAL scratch)?"""
    n = legal_actions(row, table, buffer)
    for k in range(n):  # noqa: SIM110 - a plain loop: numba compiles no generator here
        if buffer[k] == index:
            return True
    return False


# --- batch kernels --------------------------------------------------------------------


@njit(cache=True, nogil=True)
def legal_masks(state: np.ndarray, cards: np.ndarray, out: np.ndarray) -> None:
    """``out[g]`` (bool, the version's action count) = the legal actions of game ``g``'s
    player to act, for every game of the batch (all False for an ended game)."""
    buffer = np.empty(MAX_LEGAL, np.int32)
    for g in range(state.shape[0]):
        mask = out[g]
        mask[:] = False
        n = legal_actions(state[g], cards[g], buffer)
        for k in range(n):
            mask[buffer[k]] = True


@njit(cache=True, nogil=True)
def step_games(state: np.ndarray, cards: np.ndarray, actions: np.ndarray,
               status: np.ndarray) -> int:  # fmt: skip
    """Apply ``actions[g]`` to every running game ``g``, checked first for all games.

    ``status[g]`` becomes 0 (applied), 1 (illegal) or 2 (the game had ended: skipped).
    If any action is illegal, nothing is applied and the first such game is returned;
    otherwise -1.
    """
    buffer = np.empty(MAX_LEGAL, np.int32)
    first_illegal = -1
    for g in range(state.shape[0]):
        if state[g, PHASE] == ENDED:
            status[g] = 2
        elif is_legal(state[g], cards[g], actions[g], buffer):
            status[g] = 0
        else:
            status[g] = 1
            if first_illegal < 0:
                first_illegal = g
    if first_illegal >= 0:
        return first_illegal
    for g in range(state.shape[0]):
        if status[g] == 0:
            apply_legal(state[g], cards[g], actions[g])
    return -1
