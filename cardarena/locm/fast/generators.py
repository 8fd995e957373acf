"""Compiled game creation: sub-seeds, draft triples, the 1.5 card pool, deck shuffles.

Everything random that happens before the first battle turn, drawn exactly as the
reference engine draws it (:mod:`cardarena.locm.engine.params`,
:mod:`~cardarena.locm.engine.deckbuilding`, :func:`~cardarena.locm.engine.cards.generate_cards`,
``State._start_battle``), so that a game of the batch engine is the reference game
of the same parameters, card for card and id for id.

Python entry points (arrays in, arrays out):

* :func:`game_seeds` — N game seeds drawn from one seed (what ``play_random`` uses);
* :func:`derive_subseeds` — every official sub-seed of N seeds, ``[N, k]`` int64;
* :func:`create_tables` — the card tables and sub-seeds of N games from their seeds;
* :func:`tables_from_subseeds` — the card tables from given sub-seeds;
* :func:`tables_from_parameters` — from reference :class:`GameParameters` (predefined
  cards go through the reference code: see there);
* :func:`reference_parameters` — one game's seed and sub-seeds back to GameParameters;
* :func:`start_rows` — new games written into a batch's arrays from their seeds, in one
  compiled call (what :class:`~.batch.Batch` uses).

Compiled kernels for other compiled code (numba ``@njit``; call them from ``@njit``):
:func:`fill_draft_table`, :func:`fill_constructed_table`, :func:`deal_decks` (and
:func:`deal_all_decks`, its batch form for Python).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import require_numba

require_numba()

from numba import njit  # noqa: E402 (after the one-line install hint)

from ..engine.cards import (  # noqa: E402
    _AREA_TABLE,
    _BONUS_MEAN,
    _BONUS_STD,
    _DRAW_TABLE,
    _KEYWORD_ADD,
    _KEYWORD_BITS_IN_ORDER,
    _KEYWORD_COUNT_TABLE,
    _KEYWORD_MULT,
    _KEYWORD_TABLE,
    _MANA_TABLE,
    _MY_HEALTH_TABLE,
    _OPP_HEALTH_TABLE,
    _TYPE_TABLE,
    CARD_LIST,
    CARDS_IN_CONSTRUCTED,
    Card,
    CardType,
    draft_pool_cards,
)
from ..engine.deckbuilding import DRAFT_POOL_SIZE, constructed_pool, draft_triples  # noqa: E402
from ..engine.params import SEED_NAMES, GameParameters, resolve_parameters  # noqa: E402
from ..engine.rules import DECK_SIZE, ruleset  # noqa: E402
from .javarandom import (  # noqa: E402
    DOUBLE_UNIT,
    divisor,
    scramble,
    wide_next_double_bits,
    wide_next_int,
    wide_next_int32,
    wide_next_int_by,
    wide_next_long,
    widen,
)
from .layout import (  # noqa: E402
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
    CARD_COUNT,
    CARD_FIELDS,
    INSTANCE_CARD,
    MAX_CARDS,
    MAX_IDS,
    P_CHOSEN,
    P_DECK,
    P_DECK_END,
    P_DECK_TOP,
    P_HAND,
    P_HAND_COUNT,
    PLAYER_0,
    PLAYER_SIZE,
    SHUFFLE_SEED,
    VERSION,
    VERSION_CODES,
)

# --- the card data, as arrays (built once at import) -------------------------------------


def card_row(card: Card) -> list[int]:
    """A card's fields in the order of the ``C_*`` columns of :mod:`.layout`."""
    row = [0] * CARD_FIELDS
    row[C_BASE_ID] = card.base_id
    row[C_TYPE] = card.type
    row[C_COST] = card.cost
    row[C_ATTACK] = card.attack
    row[C_DEFENSE] = card.defense
    row[C_KEYWORDS] = card.keywords
    row[C_MY_HEALTH] = card.my_health
    row[C_OPP_HEALTH] = card.opp_health
    row[C_DRAW] = card.draw
    row[C_AREA] = card.area
    return row


def card_rows(cards: Sequence[Card]) -> np.ndarray:
    """Cards as an ``int32[len(cards), CARD_FIELDS]`` table."""
    table = np.zeros((len(cards), CARD_FIELDS), dtype=np.int32)
    for index, card in enumerate(cards):
        table[index] = card_row(card)
    return table


CARD_TABLE: np.ndarray = card_rows(CARD_LIST)
"""The 160 cards of 1.0/1.2 (row ``base_id - 1``), from the package's own card list."""
_ROW_OF_BASE_ID = {card.base_id: row for row, card in enumerate(CARD_LIST)}


def draft_pool_rows(version: str, league: int = 4) -> np.ndarray:
    """The rows of :data:`CARD_TABLE` a draft of ``version`` may offer at ``league``,
    in the reference order (``draft_pool_cards``; 1.2 and league >= 4: all 160).
    ValueError for a league below 1, as ``State.new`` says."""
    if isinstance(league, bool) or not isinstance(league, int) or league < 1:
        raise ValueError(f"league must be a positive integer, got {league!r}")
    allowed = draft_pool_cards(ruleset(version).draft_league(league))
    return np.array([_ROW_OF_BASE_ID[card.base_id] for card in allowed], dtype=np.int32)


# The 1.5 generator's weighted tables in search order (ascending weight), as arrays.
#
# A weighted choice draws ``u = n / 2**53`` (``nextDouble``: ``n`` is the 53-bit integer of
# two steps) and takes the entry where the official subtraction loop from ``x = u * total``
# stops. That entry only grows with ``x`` and ``x`` with ``n`` (the reference engine's
# tables give each entry's largest ``x`` as ``bounds``), so the entry is the number of
# limits ``n`` exceeds, where a limit is the largest ``n`` whose ``x`` is within a bound:
# integers only, no floating point and no data-dependent loop (looked up by :func:`_choice`).


def _draw_limits(bounds: Sequence[float], total: float) -> list[int]:
    """For each bound but the last, the largest 53-bit ``n`` with
    ``(n * 2**-53) * total <= bound`` (-1 where none is), in double arithmetic."""
    limits = []
    for bound in bounds[:-1]:
        low, high = -1, (1 << 53) - 1
        while low < high:
            middle = (low + high + 1) // 2
            if (middle * DOUBLE_UNIT) * total <= bound:
                low = middle
            else:
                high = middle - 1
        limits.append(low)
    return limits


_NEVER = np.iinfo(np.int64).max
"""A limit no draw exceeds (pads a short table)."""
_TYPE_VALUES = np.array([value for value, _w in _TYPE_TABLE.entries], dtype=np.int64)
_TYPE_LIMITS = np.array(_draw_limits(_TYPE_TABLE.bounds, _TYPE_TABLE.total), dtype=np.int64)
_MANA_VALUES = np.array([value for value, _w in _MANA_TABLE.entries], dtype=np.int64)
_MANA_LIMITS = np.array(_draw_limits(_MANA_TABLE.bounds, _MANA_TABLE.total), dtype=np.int64)
_COUNT_VALUES = np.array([entry[0] for entry in _KEYWORD_COUNT_TABLE.entries], dtype=np.int64)
_COUNT_LIMITS = np.array(
    _draw_limits(_KEYWORD_COUNT_TABLE.bounds, _KEYWORD_COUNT_TABLE.total), dtype=np.int64
)
assert all(entry[1] == 1.0 for entry in _KEYWORD_TABLE.entries)  # the search is a ceil
_KEYWORD_COUNT = len(_KEYWORD_BITS_IN_ORDER)
_OPEN_KEYWORDS = np.zeros((1 << _KEYWORD_COUNT, _KEYWORD_COUNT), dtype=np.int64)
"""``[taken, k]``: the ``k``-th keyword bit still open to a card with bits ``taken``, in
the keyword table's order (the reference ``_ALLOWED_KEYWORDS``)."""
for _taken in range(1 << _KEYWORD_COUNT):
    _open = [bit for bit in _KEYWORD_BITS_IN_ORDER if not bit & _taken]
    _OPEN_KEYWORDS[_taken, : len(_open)] = _open
assert sorted(_KEYWORD_BITS_IN_ORDER) == [1 << k for k in range(_KEYWORD_COUNT)]
_KEYWORD_LIMITS = np.full((_KEYWORD_COUNT + 1, _KEYWORD_COUNT - 1), _NEVER, dtype=np.int64)
"""``[open, j - 1]``: the largest 53-bit draw with ``(n * 2**-53) * open <= j`` for
j = 1 .. open - 1, so that ``ceil(u * open) - 1`` (at least 0) is the number of limits
of its row a draw exceeds."""
for _open_count in range(1, _KEYWORD_COUNT + 1):
    _limits = _draw_limits([float(j) for j in range(1, _open_count + 1)], float(_open_count))
    _KEYWORD_LIMITS[_open_count, : len(_limits)] = _limits

# The four budget properties (area, draw, my health, opp health): one table each, the
# row of its slot in [5, 5] arrays (limits padded with _NEVER; the keywords' row is
# unused).
_SLOT_AREA, _SLOT_KEYWORDS, _SLOT_DRAW, _SLOT_MY_HEALTH, _SLOT_OPP_HEALTH = range(5)
"""The property order's slots, as the reference ``generate_cards`` starts them."""
_PROPERTY_TABLES = {
    _SLOT_AREA: _AREA_TABLE,
    _SLOT_DRAW: _DRAW_TABLE,
    _SLOT_MY_HEALTH: _MY_HEALTH_TABLE,
    _SLOT_OPP_HEALTH: _OPP_HEALTH_TABLE,
}
_PROPERTY_LIMITS = np.full((5, 4), _NEVER, dtype=np.int64)
_PROPERTY_VALUES = np.zeros((5, 5), dtype=np.int64)
_PROPERTY_MULT = np.ones((5, 5))
_PROPERTY_ADD = np.zeros((5, 5))
for _slot, _table in _PROPERTY_TABLES.items():
    _limits = _draw_limits(_table.bounds, _table.total)
    _PROPERTY_LIMITS[_slot, : len(_limits)] = _limits
    for _k, (_value, _weight, _mult, _add) in enumerate(_table.entries):
        _PROPERTY_VALUES[_slot, _k] = _value
        _PROPERTY_MULT[_slot, _k] = _mult
        _PROPERTY_ADD[_slot, _k] = _add
_MAX_COST = int(_MANA_VALUES.max())

# The limits as a look-up: the top _BUCKET_BITS bits of a draw pick a bucket of the
# draws; each table's limits are far enough apart that a bucket holds at most one (checked
# here), so a choice is the bucket's first entry, plus one past that limit.
_BUCKET_BITS = 6
_BUCKET_SHIFT = 53 - _BUCKET_BITS
_TYPE_CHOICE, _MANA_CHOICE, _COUNT_CHOICE = 0, 1, 2
_PROPERTY_CHOICE = 3
"""``_PROPERTY_CHOICE + slot``: a property's table (the keywords' row is never used)."""
_KEYWORD_CHOICE = _PROPERTY_CHOICE + 5
"""``_KEYWORD_CHOICE + open``: which of ``open`` open keywords a draw takes."""
_CHOICE_LIMITS = [list(_TYPE_LIMITS), list(_MANA_LIMITS), list(_COUNT_LIMITS)]
_CHOICE_LIMITS += [[v for v in _PROPERTY_LIMITS[_s] if v != _NEVER] for _s in range(5)]
_CHOICE_LIMITS += [[v for v in _KEYWORD_LIMITS[_c] if v != _NEVER] for _c in range(7)]
_CHOICE_FIRST = np.zeros((len(_CHOICE_LIMITS), 1 << _BUCKET_BITS), dtype=np.int8)
_CHOICE_LIMIT = np.full((len(_CHOICE_LIMITS), 1 << _BUCKET_BITS), _NEVER, dtype=np.int64)
for _t, _limits in enumerate(_CHOICE_LIMITS):
    for _b in range(1 << _BUCKET_BITS):
        _low, _high = _b << _BUCKET_SHIFT, ((_b + 1) << _BUCKET_SHIFT) - 1  # its draws
        _CHOICE_FIRST[_t, _b] = sum(1 for _limit in _limits if _limit < _low)
        _inside = [_limit for _limit in _limits if _low <= _limit < _high]
        assert len(_inside) <= 1, "two limits in one bucket: raise _BUCKET_BITS"
        if _inside:
            _CHOICE_LIMIT[_t, _b] = _inside[0]
_UNDO_IS_ADD = (
    _KEYWORD_MULT == 1.0
    and _KEYWORD_ADD >= 0
    and (_PROPERTY_MULT > 0).all()
    and (_PROPERTY_ADD >= 0).all()
    and ((_PROPERTY_ADD == 0) | (_PROPERTY_MULT == 1.0)).all()
    and (_MANA_VALUES >= 0).all()
)
"""The official undo of a property it cannot afford, ``budget = (spent + add) / mult``,
is ``spent + add``: the budget starts at a cost >= 0 and stays >= 0 (a kept ``spent`` is,
and an undone one is at least ``-add``), so a property without ``add`` is always kept, and
every property with one has ``mult`` 1, where the division is exact."""
assert _UNDO_IS_ADD, "the 1.5 generator's tables changed: restore the division"
VERSION_CODES_15 = VERSION_CODES["1.5"]
_CREATURE = int(CardType.CREATURE)
_RED = int(CardType.RED_ITEM)
_BLUE = int(CardType.BLUE_ITEM)
# By card type, as the reference clamps attack and defense: creatures have defense >= 1,
# blue items no attack, red and blue items the negated values.
_TYPE_ATTACKS = np.ones(4, dtype=np.int64)
_TYPE_ATTACKS[_BLUE] = 0
_TYPE_MIN_DEFENSE = np.zeros(4, dtype=np.int64)
_TYPE_MIN_DEFENSE[_CREATURE] = 1
_TYPE_SIGN = np.array([-1 if card_type >= _RED else 1 for card_type in range(4)], np.int64)
assert sorted(_TYPE_VALUES.tolist()) == [0, 1, 2, 3]


# --- seeds ---------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _game_seeds(seed: int, count: int) -> np.ndarray:
    out = np.empty(count, dtype=np.int64)
    state = widen(scramble(seed))
    for game in range(count):
        out[game], state = wide_next_long(state)
    return out


def game_seeds(seed: int, count: int) -> np.ndarray:
    """``count`` game seeds from one: ``new Random(seed)``'s first ``count`` ``nextLong()``.

    Each game is then reproducible by the reference engine from its own seed alone
    (``State.new(version, {"seed": game_seeds(seed, n)[g]})``).
    """
    return _game_seeds(int(seed), int(count))


@njit(cache=True, nogil=True)
def _derive_subseeds(seeds: np.ndarray, names: int) -> np.ndarray:
    out = np.empty((seeds.shape[0], names), dtype=np.int64)
    for game in range(seeds.shape[0]):
        state = widen(scramble(seeds[game]))
        for name in range(names):
            out[game, name], state = wide_next_long(state)
    return out


def subseed_names(version: str) -> tuple[str, ...]:
    """The sub-seeds of ``version`` in derivation order: the columns of a sub-seed row."""
    return SEED_NAMES[ruleset(version).draft]


def derive_subseeds(version: str, seeds: np.ndarray) -> np.ndarray:
    """``[N, k]`` int64: every sub-seed of each ``seed``, as ``resolve_parameters`` derives
    them (successive ``nextLong()`` of ``Random(seed)``, columns :func:`subseed_names`)."""
    seeds = np.ascontiguousarray(seeds, dtype=np.int64).reshape(-1)
    return _derive_subseeds(seeds, len(subseed_names(version)))


# --- 1.0 / 1.2 draft -------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _copy_card(table: np.ndarray, row: int, card_table: np.ndarray, source: int) -> None:
    """``table[row, :] = card_table[source, :]`` as a plain loop (a slice assignment
    checks shapes and overlap at run time: several times the copy itself)."""
    # Every field read before any is written: the compiler may then move them as vectors
    # (a store between two loads could change the second, so one by one it moves words).
    f0, f1, f2, f3, f4 = (card_table[source, 0], card_table[source, 1],
                          card_table[source, 2], card_table[source, 3],
                          card_table[source, 4])  # fmt: skip
    f5, f6, f7, f8, f9 = (card_table[source, 5], card_table[source, 6],
                          card_table[source, 7], card_table[source, 8],
                          card_table[source, 9])  # fmt: skip
    table[row, 0], table[row, 1], table[row, 2], table[row, 3], table[row, 4] = f0, f1, f2, f3, f4
    table[row, 5], table[row, 6], table[row, 7], table[row, 8], table[row, 9] = f5, f6, f7, f8, f9


@njit(cache=True, nogil=True)
def fill_draft_table(
    table: np.ndarray, draft_seed: int, allowed_rows: np.ndarray, card_table: np.ndarray
) -> None:
    """The 30 draft triples of ``draftChoicesSeed`` into ``table[3 * turn + pick, :]``.

    ``allowed_rows``: the rows of ``card_table`` the draft may offer, in the reference
    order (:func:`draft_pool_rows`); as ``deckbuilding.draft_triples`` draws them.
    The pool holds distinct cards, so a pick repeats a card exactly when it repeats a
    pool position: the picks are compared as positions.
    """
    allowed = allowed_rows.shape[0]
    size = min(DRAFT_POOL_SIZE, allowed)
    pool = np.empty(size, dtype=np.int64)  # card_table rows
    seen = np.zeros(allowed, dtype=np.bool_)
    allowed_multiplier, allowed_shift = divisor(allowed)
    size_multiplier, size_shift = divisor(size)
    state = widen(scramble(draft_seed))
    found = 0
    while found < size:
        index, state = wide_next_int_by(state, allowed, allowed_multiplier, allowed_shift)
        pool[found] = allowed_rows[index]  # kept only if new: no branch to mispredict
        found += np.int64(not seen[index])
        seen[index] = True
    for turn in range(DECK_SIZE):
        first, state = wide_next_int_by(state, size, size_multiplier, size_shift)
        second, state = wide_next_int_by(state, size, size_multiplier, size_shift)
        while second == first:
            second, state = wide_next_int_by(state, size, size_multiplier, size_shift)
        third, state = wide_next_int_by(state, size, size_multiplier, size_shift)
        while third in (first, second):
            third, state = wide_next_int_by(state, size, size_multiplier, size_shift)
        _copy_card(table, 3 * turn, card_table, pool[first])
        _copy_card(table, 3 * turn + 1, card_table, pool[second])
        _copy_card(table, 3 * turn + 2, card_table, pool[third])


@njit(cache=True, nogil=True)
def _fill_draft_tables(
    cards: np.ndarray, draft_seeds: np.ndarray, allowed_rows: np.ndarray, card_table: np.ndarray
) -> None:
    for game in range(draft_seeds.shape[0]):
        fill_draft_table(cards[game], draft_seeds[game], allowed_rows, card_table)


# --- 1.5 card generator -----------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _choice(draw: int, table: int) -> int:
    """The entry of weighted table ``table`` (``_*_CHOICE``) a 53-bit ``draw`` takes: the
    number of its limits the draw exceeds, looked up (see :data:`_CHOICE_FIRST`)."""
    bucket = draw >> _BUCKET_SHIFT
    return np.int64(_CHOICE_FIRST[table, bucket]) + np.int64(draw > _CHOICE_LIMIT[table, bucket])


@njit(cache=True, nogil=True, inline="always")
def _shuffle_five(order: int, wide: np.uint64) -> tuple[int, np.uint64]:
    """``Collections.shuffle`` of the five property slots packed 3 bits each in ``order``
    (position ``p`` at bits ``3p``): swap ``p - 1`` with ``nextInt(p)`` for p = 5 .. 2
    (each bound a constant, so that the compiler divides by a multiply)."""
    j, wide = wide_next_int(wide, 5)
    order = _swap_slots(order, 4, j)
    j, wide = wide_next_int(wide, 4)
    order = _swap_slots(order, 3, j)
    j, wide = wide_next_int(wide, 3)
    order = _swap_slots(order, 2, j)
    j, wide = wide_next_int(wide, 2)
    return _swap_slots(order, 1, j), wide


@njit(cache=True, nogil=True, inline="always")
def _swap_slots(order: int, p: int, q: int) -> int:
    a = (order >> (3 * p)) & 7
    b = (order >> (3 * q)) & 7
    return order ^ (((a ^ b) << (3 * p)) | ((a ^ b) << (3 * q)))


@njit(cache=True, nogil=True)
def fill_constructed_table(table: np.ndarray, card_gen_seed: int) -> None:
    """The 120 cards of ``cardGenSeed`` into ``table`` (baseIds 0..119, cost order), as
    ``cards.generate_cards`` with the Java double streams makes them.

    The 11 private generators are drawn lazily, card by card: each has its own state,
    so the numbers are those the reference draws in advance. Every generator but the
    keywords' draws the same for every card whatever the budget (a property's pick is
    drawn whether or not it is kept), so one pass draws those for all cards (no branch,
    independent generators side by side) and counts the costs; a second walks each card's
    budget with its keywords and writes the card once, in its row of the stable sort by
    cost.
    """
    count = table.shape[0]
    parent = widen(scramble(card_gen_seed))
    seed32, parent = wide_next_int32(parent)
    type_rng = widen(scramble(seed32))
    seed32, parent = wide_next_int32(parent)
    mana_rng = widen(scramble(seed32))
    seed32, parent = wide_next_int32(parent)
    area_rng = widen(scramble(seed32))
    seed32, parent = wide_next_int32(parent)
    order_rng = widen(scramble(seed32))
    seed32, parent = wide_next_int32(parent)
    count_rng = widen(scramble(seed32))
    seed32, parent = wide_next_int32(parent)
    keyword_rng = widen(scramble(seed32))
    seed32, parent = wide_next_int32(parent)
    draw_rng = widen(scramble(seed32))
    seed32, parent = wide_next_int32(parent)
    my_rng = widen(scramble(seed32))
    seed32, parent = wide_next_int32(parent)
    opp_rng = widen(scramble(seed32))
    seed32, parent = wide_next_int32(parent)
    attack_rng = widen(scramble(seed32))
    seed32, parent = wide_next_int32(parent)
    defense_rng = widen(scramble(seed32))
    # First every draw that does not depend on the budget (all but the keywords'): the
    # generators are private, so each may run ahead of the others. Per card: its cost,
    # type, property order (packed), each property's pick (3 bits a slot), the keywords it
    # wants, the attack and defense draws. Then the stable sort's first row of each cost.
    drawn = np.empty((count, 7), dtype=np.int64)
    next_row = np.zeros(_MAX_COST + 2, dtype=np.int64)
    order = 0
    for position in range(5):
        order |= position << (3 * position)
    for i in range(count):
        draw, mana_rng = wide_next_double_bits(mana_rng)
        mana = _MANA_VALUES[_choice(draw, _MANA_CHOICE)]
        next_row[mana + 1] += 1
        draw, type_rng = wide_next_double_bits(type_rng)
        card_type = _TYPE_VALUES[_choice(draw, _TYPE_CHOICE)]
        order, order_rng = _shuffle_five(order, order_rng)
        draw, area_rng = wide_next_double_bits(area_rng)
        picks = _choice(draw, _PROPERTY_CHOICE + _SLOT_AREA) << (3 * _SLOT_AREA)
        draw, draw_rng = wide_next_double_bits(draw_rng)
        picks |= _choice(draw, _PROPERTY_CHOICE + _SLOT_DRAW) << (3 * _SLOT_DRAW)
        draw, my_rng = wide_next_double_bits(my_rng)
        picks |= _choice(draw, _PROPERTY_CHOICE + _SLOT_MY_HEALTH) << (3 * _SLOT_MY_HEALTH)
        draw, opp_rng = wide_next_double_bits(opp_rng)
        picks |= _choice(draw, _PROPERTY_CHOICE + _SLOT_OPP_HEALTH) << (3 * _SLOT_OPP_HEALTH)
        # The keyword count is drawn where the reference draws it (at the keywords'
        # slot, not for blue items), here before the walk.
        draw, counted = wide_next_double_bits(count_rng)
        blue = card_type == _BLUE
        count_rng = count_rng if blue else counted
        drawn[i, 0] = mana
        drawn[i, 1] = card_type
        drawn[i, 2] = order
        drawn[i, 3] = picks
        drawn[i, 4] = 0 if blue else _COUNT_VALUES[_choice(draw, _COUNT_CHOICE)]
        drawn[i, 5], attack_rng = wide_next_double_bits(attack_rng)
        drawn[i, 6], defense_rng = wide_next_double_bits(defense_rng)
    for cost in range(_MAX_COST + 1):
        next_row[cost + 1] += next_row[cost]
    chosen = np.zeros(5, dtype=np.int64)  # kept values by slot (keywords: bits)
    for i in range(count):
        mana, card_type, order, picks, wanted = (drawn[i, 0], drawn[i, 1], drawn[i, 2],
                                                 drawn[i, 3], drawn[i, 4])  # fmt: skip
        budget = float(mana)
        for position in range(5):
            slot = (order >> (3 * position)) & 7
            # The property's step; for the keywords' slot a neutral one (keep, cost 0).
            entry = (picks >> (3 * slot)) & 7
            add = _PROPERTY_ADD[slot, entry]
            spent = budget * _PROPERTY_MULT[slot, entry] - add
            kept = spent >= 0
            budget = spent if kept else spent + add  # the official undo (_UNDO_IS_ADD)
            chosen[slot] = _PROPERTY_VALUES[slot, entry] if kept else 0
            if slot == _SLOT_KEYWORDS and wanted > 0:
                keywords = 0
                for k in range(wanted):
                    draw, keyword_rng = wide_next_double_bits(keyword_rng)
                    spent = budget * _KEYWORD_MULT - _KEYWORD_ADD
                    if spent < 0:
                        budget = spent + _KEYWORD_ADD  # the official undo (_UNDO_IS_ADD)
                        break
                    budget = spent
                    # Each keyword taken was open: k taken, _KEYWORD_COUNT - k open.
                    open_count = _KEYWORD_COUNT - k
                    taken = _choice(draw, _KEYWORD_CHOICE + open_count)
                    keywords |= _OPEN_KEYWORDS[keywords, taken]
                chosen[_SLOT_KEYWORDS] = keywords
        attack = int(budget + ((drawn[i, 5] * DOUBLE_UNIT) * _BONUS_STD + _BONUS_MEAN))
        defense = int(budget + ((drawn[i, 6] * DOUBLE_UNIT) * _BONUS_STD + _BONUS_MEAN))
        sign = _TYPE_SIGN[card_type]  # red and blue items: negative; blue: no attack
        attack = max(attack, 0) * _TYPE_ATTACKS[card_type] * sign
        defense = max(defense, _TYPE_MIN_DEFENSE[card_type]) * sign
        row = next_row[mana]  # the stable sort by cost: rows numbered 0..count-1
        next_row[mana] = row + 1
        table[row, C_BASE_ID] = row
        table[row, C_TYPE] = card_type
        table[row, C_COST] = mana
        table[row, C_ATTACK] = attack
        table[row, C_DEFENSE] = defense
        table[row, C_KEYWORDS] = chosen[_SLOT_KEYWORDS]
        table[row, C_MY_HEALTH] = chosen[_SLOT_MY_HEALTH]
        table[row, C_OPP_HEALTH] = chosen[_SLOT_OPP_HEALTH]
        table[row, C_DRAW] = chosen[_SLOT_DRAW]
        table[row, C_AREA] = chosen[_SLOT_AREA]


@njit(cache=True, nogil=True)
def _fill_constructed_tables(cards: np.ndarray, card_gen_seeds: np.ndarray) -> None:
    for game in range(card_gen_seeds.shape[0]):
        fill_constructed_table(cards[game, :CARDS_IN_CONSTRUCTED], card_gen_seeds[game])


# --- deck shuffles at battle start --------------------------------------------------------

_IDS_AFTER_SHUFFLE = np.zeros(len(VERSION_CODES), dtype=np.bool_)
for _version, _code in VERSION_CODES.items():
    _IDS_AFTER_SHUFFLE[_code] = ruleset(_version).ids_after_shuffle


@njit(cache=True, nogil=True)
def deal_decks(row: np.ndarray, shuffle_seed_0: int, shuffle_seed_1: int) -> None:
    """Both players' decks and starting hands into a state row, as ``_start_battle``.

    Reads ``row[VERSION]`` and each player's ``P_CHOSEN`` (30 card indexes); writes
    ``INSTANCE_CARD`` (every id: -1, then the 60 deck cards), ``P_DECK`` (the
    shuffled ids, top first), the first ``4 + player`` of them into ``P_HAND``
    (``P_HAND_COUNT``), and ``P_DECK_TOP = 4 + player``, ``P_DECK_END = 30``: the deck
    is ``deck[top:end]``. Phase, turn and the first ``start_turn`` are the caller's.
    Each player's 30 choice positions are shuffled with its ``shufflePlayer{player}Seed``;
    1.0/1.2 then number the shuffled cards ``2 * i + player + 1``, 1.5 numbers them in
    choice order ``60 * player + 2 * k`` (the numbered instances are what is shuffled).
    """
    ids_after_shuffle = _IDS_AFTER_SHUFFLE[row[VERSION]]
    for instance in range(MAX_IDS):
        row[INSTANCE_CARD + instance] = -1
    # Both players' shuffles in the row itself (no scratch array, no array views to count
    # references of): first the shuffled choice positions, then their ids. The
    # two shuffles take turns draw by draw, so that their generators step side by side.
    deck_0 = PLAYER_0 + P_DECK
    deck_1 = PLAYER_0 + PLAYER_SIZE + P_DECK
    for k in range(DECK_SIZE):
        row[deck_0 + k] = k
        row[deck_1 + k] = k
    state_0 = widen(scramble(shuffle_seed_0))
    state_1 = widen(scramble(shuffle_seed_1))
    for i in range(DECK_SIZE, 1, -1):
        multiplier, shift = divisor(i)
        j, state_0 = wide_next_int_by(state_0, i, multiplier, shift)
        swapped = row[deck_0 + i - 1]
        row[deck_0 + i - 1] = row[deck_0 + j]
        row[deck_0 + j] = swapped
        j, state_1 = wide_next_int_by(state_1, i, multiplier, shift)
        swapped = row[deck_1 + i - 1]
        row[deck_1 + i - 1] = row[deck_1 + j]
        row[deck_1 + j] = swapped
    for player in range(2):
        base = PLAYER_0 + player * PLAYER_SIZE
        deck = base + P_DECK
        chosen = base + P_CHOSEN
        for i in range(DECK_SIZE):
            k = row[deck + i]
            ident = 2 * i + player + 1 if ids_after_shuffle else 2 * DECK_SIZE * player + 2 * k
            row[deck + i] = ident
            row[INSTANCE_CARD + ident] = row[chosen + k]
        hand_size = 4 + player
        for i in range(hand_size):
            row[base + P_HAND + i] = row[deck + i]
        row[base + P_HAND_COUNT] = hand_size
        row[base + P_DECK_TOP] = hand_size
        row[base + P_DECK_END] = DECK_SIZE


@njit(cache=True, nogil=True)
def _deal_all_decks(
    states: np.ndarray, shuffle_seeds_0: np.ndarray, shuffle_seeds_1: np.ndarray
) -> None:
    for game in range(states.shape[0]):
        deal_decks(states[game], shuffle_seeds_0[game], shuffle_seeds_1[game])


def deal_all_decks(version: str, states: np.ndarray, subseeds: np.ndarray) -> None:
    """:func:`deal_decks` for every row of ``states[N, STATE_SIZE]`` (int32, in place),
    with the shuffle seeds of ``subseeds[N, k]`` (each row's ``P_CHOSEN`` filled)."""
    names = subseed_names(version)
    _deal_all_decks(
        states,
        np.ascontiguousarray(subseeds[:, names.index("shufflePlayer0Seed")], dtype=np.int64),
        np.ascontiguousarray(subseeds[:, names.index("shufflePlayer1Seed")], dtype=np.int64),
    )


# --- Python entry points ----------------------------------------------------------------------


def empty_tables(count: int) -> np.ndarray:
    """``int32[count, MAX_CARDS, CARD_FIELDS]`` zeros: card tables to fill."""
    return np.zeros((count, MAX_CARDS, CARD_FIELDS), dtype=np.int32)


def tables_from_subseeds(version: str, subseeds: np.ndarray, league: int = 4) -> np.ndarray:
    """The card tables of N games from their sub-seed rows (columns :func:`subseed_names`):
    the 30 draft triples (1.0/1.2, rows ``3 * turn + pick``) or the 120-card pool (1.5)."""
    rules = ruleset(version)
    names = subseed_names(rules.version)
    subseeds = np.ascontiguousarray(subseeds, dtype=np.int64).reshape(-1, len(names))
    cards = empty_tables(subseeds.shape[0])
    if rules.draft:
        draft_seeds = np.ascontiguousarray(subseeds[:, names.index("draftChoicesSeed")])
        _fill_draft_tables(cards, draft_seeds, draft_pool_rows(rules.version, league), CARD_TABLE)
    else:
        card_gen_seeds = np.ascontiguousarray(subseeds[:, names.index("cardGenSeed")])
        _fill_constructed_tables(cards, card_gen_seeds)
    return cards


@njit(cache=True, nogil=True, inline="always")
def _split_long(value: int) -> tuple[int, int]:
    """A Java long as two int32 words (high, low), the low one as a signed int32."""
    low = value & 0xFFFFFFFF
    return value >> 32, low - (1 << 32) if low >= 1 << 31 else low


@njit(cache=True, nogil=True, inline="always")
def _start_row_fields(row: np.ndarray, table: np.ndarray, seed: int, template: np.ndarray,
                      pool: bool) -> int:  # fmt: skip
    """What :func:`start_row` writes before the cards (its row and the unused card rows);
    returns the cards' seed (draftChoicesSeed, or cardGenSeed for a pool)."""
    rng = widen(scramble(seed))
    first, rng = wide_next_long(rng)  # draftChoicesSeed, or cardGenSeed
    if pool:
        _choices, rng = wide_next_long(rng)  # constructedChoicesSeed
    for i in range(template.shape[0]):  # row[:] = template, without a slice's checks
        row[i] = template[i]
    row[CARD_COUNT] = CARDS_IN_CONSTRUCTED if pool else 3 * DECK_SIZE
    for player in range(2):
        shuffle_seed, rng = wide_next_long(rng)
        high, low = _split_long(shuffle_seed)
        row[SHUFFLE_SEED + 2 * player] = high
        row[SHUFFLE_SEED + 2 * player + 1] = low
    # Zero only the rows the cards do not overwrite (every field of a card's row is set).
    used = CARDS_IN_CONSTRUCTED if pool else 3 * DECK_SIZE
    for card in range(used, table.shape[0]):
        for field in range(CARD_FIELDS):
            table[card, field] = 0
    return first


@njit(cache=True, nogil=True)
def start_draft_row(
    row: np.ndarray, table: np.ndarray, seed: int, template: np.ndarray, allowed_rows: np.ndarray
) -> None:
    """:func:`start_row` of a version with a draft (1.0, 1.2): compiled on its own, so
    that code playing only these versions never compiles the 1.5 card generator."""
    first = _start_row_fields(row, table, seed, template, False)
    fill_draft_table(table, first, allowed_rows, CARD_TABLE)


@njit(cache=True, nogil=True)
def start_pool_row(row: np.ndarray, table: np.ndarray, seed: int, template: np.ndarray) -> None:
    """:func:`start_row` of 1.5 (the 120-card pool), compiled on its own."""
    first = _start_row_fields(row, table, seed, template, True)
    fill_constructed_table(table[:CARDS_IN_CONSTRUCTED], first)


@njit(cache=True, nogil=True)
def start_row(
    row: np.ndarray,
    table: np.ndarray,
    seed: int,
    template: np.ndarray,
    allowed_rows: np.ndarray,
) -> None:
    """One new game in ``row`` and ``table`` from its ``seed``: a battle-less ``template``
    row, its card count, the players' shuffle seeds, and the draft triples
    (``allowed_rows`` of :data:`CARD_TABLE`) or the 120-card pool, as
    :func:`derive_subseeds` and :func:`tables_from_subseeds` give them. The template's
    ``VERSION`` says which: a pool (1.5) has no draft. (Compiles both versions' code:
    :func:`start_draft_row` and :func:`start_pool_row` compile one each.)"""
    if template[VERSION] == VERSION_CODES_15:
        start_pool_row(row, table, seed, template)
    else:
        start_draft_row(row, table, seed, template, allowed_rows)


@njit(cache=True, nogil=True)
def _start_draft_rows(state: np.ndarray, cards: np.ndarray, games: np.ndarray,
                      seeds: np.ndarray, template: np.ndarray, allowed_rows: np.ndarray,
                      ) -> None:  # fmt: skip
    for k in range(games.shape[0]):
        g = games[k]
        start_draft_row(state[g], cards[g], seeds[k], template, allowed_rows)


@njit(cache=True, nogil=True)
def _start_pool_rows(state: np.ndarray, cards: np.ndarray, games: np.ndarray,
                     seeds: np.ndarray, template: np.ndarray) -> None:  # fmt: skip
    for k in range(games.shape[0]):
        g = games[k]
        start_pool_row(state[g], cards[g], seeds[k], template)


def start_rows(
    state: np.ndarray,
    cards: np.ndarray,
    games: np.ndarray,
    seeds: np.ndarray,
    template: np.ndarray,
    allowed_rows: np.ndarray,
) -> None:
    """New games in rows ``games`` of ``state`` and ``cards``, from ``seeds`` (one each),
    in one compiled call (:func:`start_row` for each: the template's version's own)."""
    if template[VERSION] == VERSION_CODES_15:
        _start_pool_rows(state, cards, games, seeds, template)
    else:
        _start_draft_rows(state, cards, games, seeds, template, allowed_rows)


def create_tables(
    version: str, seeds: np.ndarray, league: int = 4
) -> tuple[np.ndarray, np.ndarray]:
    """``(cards, subseeds)`` of N games, each game given by its ``seed`` alone (as
    ``State.new(version, {"seed": seed}, league)``): ``cards[N, MAX_CARDS, CARD_FIELDS]``
    int32 and ``subseeds[N, k]`` int64 (columns :func:`subseed_names`)."""
    subseeds = derive_subseeds(version, seeds)
    return tables_from_subseeds(version, subseeds, league), subseeds


def reference_table(params: GameParameters, league: int = 4) -> np.ndarray:
    """One game's card table built by the reference engine (any parameters, predefined
    cards included): ``int32[MAX_CARDS, CARD_FIELDS]``."""
    table = np.zeros((MAX_CARDS, CARD_FIELDS), dtype=np.int32)
    if ruleset(params.version).draft:
        triples = draft_triples(params, league)
        cards: Sequence[Card] = [card for triple in triples for card in triple]
    else:
        cards = constructed_pool(params)
    table[: len(cards)] = card_rows(cards)
    return table


def _is_predefined(params: GameParameters) -> bool:
    return (
        params.predefined_draft_ids is not None
        or params.predefined_card_list_file is not None
        or params.predefined_constructed_ids is not None
    )


def tables_from_parameters(
    version: str, params: Sequence[GameParameters], league: int = 4
) -> tuple[np.ndarray, np.ndarray]:
    """``(cards, subseeds)`` of N games of resolved parameters (explicit sub-seeds honoured).

    Games with predefined cards (``predefinedDraftIds``, ``predefinedCardListFile``,
    ``predefinedConstructedIds``) are rare and not compiled: their tables are built
    by the reference engine (:func:`reference_table`), the others by the compiled code.
    """
    rules = ruleset(version)
    names = subseed_names(rules.version)
    for game_params in params:
        if ruleset(game_params.version) is not rules:
            raise ValueError(f"parameters are for LOCM {game_params.version}, not {version}")
    subseeds = np.array(
        [[game_params.seeds[name] for name in names] for game_params in params], dtype=np.int64
    ).reshape(len(params), len(names))
    cards = tables_from_subseeds(rules.version, subseeds, league)
    for game, game_params in enumerate(params):
        if _is_predefined(game_params):
            cards[game] = reference_table(game_params, league)
    return cards, subseeds


def reference_parameters(
    version: str, seed: int, subseeds: Sequence[int] | np.ndarray | None = None
) -> GameParameters:
    """The reference engine's parameters of one game of the batch: its ``seed``, and its
    sub-seed row where that differs from what ``seed`` derives (then given explicitly,
    as a game created with those parameters would be)."""
    derived = resolve_parameters(version, {"seed": int(seed)})
    if subseeds is None:
        return derived
    names = subseed_names(version)
    given: dict[str, object] = {"seed": int(seed)}
    for name, value in zip(names, (int(value) for value in subseeds), strict=True):
        if derived.seeds[name] != value:
            given[name] = value
    return derived if len(given) == 1 else resolve_parameters(version, given)
