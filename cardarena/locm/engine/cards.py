"""Cards: the immutable card record, the 1.0/1.2 card list and the 1.5 generator.

A :class:`Card` is shared by every state of a game (and by clones of it); only
creatures on the board carry mutable values. The 1.5 generator reproduces the
official ``CardGenerator`` draw for draw (see ``locm-randomness.md`` §6).
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
import struct
from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import NamedTuple

from .cardlist_data import CARD_LIST_1_2
from .javarandom import ADDEND, DOUBLE_UNIT, MASK, MULTIPLIER, JavaRandom


class CardType(IntEnum):
    CREATURE = 0
    GREEN_ITEM = 1
    RED_ITEM = 2
    BLUE_ITEM = 3


class Area(IntEnum):
    """1.5 area of effect: the target only, its whole lane, or both lanes."""

    TARGET = 0
    LANE1 = 1
    LANE2 = 2


# Keyword bits, in the order of the 6-character abilities string "BCDGLW".
BREAKTHROUGH = 1
CHARGE = 2
DRAIN = 4
GUARD = 8
LETHAL = 16
WARD = 32
KEYWORD_LETTERS = "BCDGLW"
ALL_KEYWORDS = 63

ABILITIES_TEXT: tuple[str, ...] = tuple(
    "".join(letter if bits >> i & 1 else "-" for i, letter in enumerate(KEYWORD_LETTERS))
    for bits in range(64)
)
"""``ABILITIES_TEXT[bits]`` is the input text of a keyword set, e.g. ``"B--G-W"``."""


def keywords_from_text(text: str) -> int:
    """Parse a ``BCDGLW``-style abilities string into keyword bits."""
    if len(text) != 6:
        raise ValueError(f"abilities must have 6 characters, got {text!r}")
    bits = 0
    for i, (char, letter) in enumerate(zip(text, KEYWORD_LETTERS, strict=True)):
        if char == letter:
            bits |= 1 << i
        elif char != "-":
            raise ValueError(f"bad abilities string {text!r}")
    return bits


class Card(NamedTuple):
    """A card as printed: an immutable value shared between states."""

    base_id: int
    type: int
    cost: int
    attack: int
    defense: int
    keywords: int = 0
    my_health: int = 0
    opp_health: int = 0
    draw: int = 0
    area: int = 0  # Area.TARGET

    @property
    def is_creature(self) -> bool:
        return self.type == CardType.CREATURE

    @property
    def abilities(self) -> str:
        return ABILITIES_TEXT[self.keywords]

    def __repr__(self) -> str:
        return (
            f"Card(#{self.base_id} {CardType(self.type).name.lower()} cost={self.cost} "
            f"{self.attack}/{self.defense} {self.abilities} my={self.my_health} "
            f"opp={self.opp_health} draw={self.draw} area={Area(self.area).name.lower()})"
        )


_new_card = tuple.__new__
"""``_new_card(Card, fields)`` skips NamedTuple's Python-level __new__ (hot in the generator)."""


def _load_card_list() -> tuple[Card, ...]:
    return tuple(Card(*row) for row in CARD_LIST_1_2)


CARD_LIST: tuple[Card, ...] = _load_card_list()
"""The 160 cards of 1.0/1.2, baseIds 1..160 in order (also the 1.5 predefined list)."""
CARDS_BY_ID: dict[int, Card] = {card.base_id: card for card in CARD_LIST}


# --- 1.0 draft pools by league level ---------------------------------------------

_NO_DRAIN_LETHAL_WARD = ~(DRAIN | LETHAL | WARD)


def draft_pool_cards(league: int) -> tuple[Card, ...]:
    """The cards a 1.0 draft may offer at a CodinGame league level (≥ 4: all 160)."""
    if league <= 1:
        return tuple(
            c
            for c in CARD_LIST
            if c.is_creature and not c.keywords and not (c.my_health or c.opp_health or c.draw)
        )
    if league == 2:
        return tuple(
            c
            for c in CARD_LIST
            if c.is_creature and c.keywords & _NO_DRAIN_LETHAL_WARD == c.keywords
        )
    if league == 3:
        return tuple(c for c in CARD_LIST if c.keywords & _NO_DRAIN_LETHAL_WARD == c.keywords)
    return CARD_LIST


# --- 1.5 card generator ----------------------------------------------------------

CARDS_IN_CONSTRUCTED = 120

# The generator weights of the official cardWeights.json, in file order:
# (value, weight, multCost, addCost). Numbers only; value names are the file's keys.
# Values are plain ints (CardType / Area numbers) so that cards hold plain ints.
_TYPE_WEIGHTS = ((0, 0.4), (1, 0.2), (2, 0.2), (3, 0.2))  # creature, green, red, blue
_MANA_WEIGHTS = tuple((mana, 0.1) for mana in range(13))
_AREA_PROPS = ((0, 50.0, 1.0, 0.0), (1, 25.0, 0.7, 0.0), (2, 25.0, 0.6, 0.0))  # target, lanes
_KEYWORD_COUNT_WEIGHTS = ((0, 10.0), (1, 5.0), (2, 3.0), (3, 2.0), (4, 1.0), (5, 1.0), (6, 1.0))
_KEYWORD_PROPS = tuple((1 << i, 1.0, 1.0, 1.0) for i in range(6))
_DRAW_PROPS = ((0, 100.0, 1.0, 0.0), (1, 50.0, 1.0, 0.0), (2, 25.0, 1.0, 1.0),
               (3, 25.0, 1.0, 1.0), (4, 5.0, 1.0, 2.0))  # fmt: skip
_MY_HEALTH_PROPS = ((0, 100.0, 1.0, 0.0), (1, 50.0, 1.0, 0.0), (2, 25.0, 1.0, 1.0),
                    (3, 25.0, 1.0, 1.0))  # fmt: skip
_OPP_HEALTH_PROPS = ((0, 100.0, 1.0, 0.0), (-1, 50.0, 1.0, 0.0), (-2, 25.0, 1.0, 1.0),
                     (-3, 25.0, 1.0, 1.0))  # fmt: skip
_BONUS_MEAN = 1.0
_BONUS_STD = 2.0

# Property order slots, shuffled in place from card to card.
_AREA, _KEYWORDS, _DRAW, _MY_HEALTH, _OPP_HEALTH = range(5)


def _doubles(seed: int, count: int) -> list[float]:
    """The next ``count`` ``nextDouble()`` values of ``Random(seed)``, in one tight loop."""
    state = (seed ^ MULTIPLIER) & MASK
    out: list[float] = []
    append = out.append
    for _ in range(count):
        state = (state * MULTIPLIER + ADDEND) & MASK
        high = state >> 22
        state = (state * MULTIPLIER + ADDEND) & MASK
        append(((high << 27) + (state >> 21)) * DOUBLE_UNIT)
    return out


class _FloatTable:
    """A weighted table with fractional weights: the official subtraction loop, kept exact.

    The loop's stopping entry is monotone in ``x`` (each rounded subtraction is), so
    entry ``k`` is reached exactly when ``x <= bounds[k]``, the largest ``x`` for which
    the loop itself stops by ``k`` (found at import by bisecting over doubles, running
    the loop): :meth:`pick` is then one bisection, with the same result as the loop.
    """

    __slots__ = ("bounds", "entries", "total")

    def __init__(self, entries: Sequence[tuple[int, float]]) -> None:
        # Totals are summed in file order; math.fsum equals Java's compensated sum here.
        self.total = math.fsum(weight for _value, weight in entries)
        self.entries = tuple(sorted(entries, key=lambda entry: entry[1]))
        top = _double_bits(2.0 * self.total)  # x = u * total < total
        bounds = []
        for k in range(len(self.entries) - 1):
            low, high = 0, top  # the loop stops by k at x = 0: the last such double
            while low < high:
                middle = (low + high + 1) // 2
                if self.loop_index(_bits_double(middle)) <= k:
                    low = middle
                else:
                    high = middle - 1
            bounds.append(_bits_double(low))
        bounds.append(math.inf)  # the last entry: where the loop stops or falls through
        self.bounds = tuple(bounds)

    def loop_index(self, x: float) -> int:
        """The official loop from ``x``: the index of the entry it stops at."""
        for index, (_value, weight) in enumerate(self.entries):
            x -= weight
            if x <= 0:
                return index
        return len(self.entries) - 1

    def pick(self, u: float) -> int:
        return self.entries[bisect.bisect_left(self.bounds, u * self.total)][0]


def _double_bits(x: float) -> int:
    """The bit pattern of a non-negative double (ordered like the doubles themselves)."""
    bits: int = struct.unpack("<q", struct.pack("<d", x))[0]
    return bits


def _bits_double(bits: int) -> float:
    value: float = struct.unpack("<d", struct.pack("<q", bits))[0]
    return value


class _IntTable:
    """A weighted table with whole-number weights.

    Subtracting whole weights from ``x`` one by one is exact for as long as ``x``
    stays positive, so the official loop stops at the first cumulative weight
    ``>= x``: a bisection gives the same entry.
    """

    __slots__ = ("bounds", "entries", "total")

    def __init__(self, entries: Sequence[tuple[int, float, float, float]]) -> None:
        assert all(float(weight).is_integer() for _v, weight, _m, _a in entries)
        self.entries = tuple(sorted(entries, key=lambda entry: entry[1]))
        self.bounds = tuple(itertools.accumulate(entry[1] for entry in self.entries))
        self.total = self.bounds[-1]

    def pick(self, u: float) -> tuple[int, float, float, float]:
        return self.entries[bisect.bisect_left(self.bounds, u * self.total)]


_TYPE_TABLE = _FloatTable(_TYPE_WEIGHTS)
_MANA_TABLE = _FloatTable(_MANA_WEIGHTS)
_AREA_TABLE = _IntTable(_AREA_PROPS)
_KEYWORD_COUNT_TABLE = _IntTable(tuple((n, w, 1.0, 0.0) for n, w in _KEYWORD_COUNT_WEIGHTS))
_KEYWORD_TABLE = _IntTable(_KEYWORD_PROPS)
_DRAW_TABLE = _IntTable(_DRAW_PROPS)
_MY_HEALTH_TABLE = _IntTable(_MY_HEALTH_PROPS)
_OPP_HEALTH_TABLE = _IntTable(_OPP_HEALTH_PROPS)


assert all(entry[1] == 1.0 for entry in _KEYWORD_TABLE.entries)
_KEYWORD_BITS_IN_ORDER = tuple(entry[0] for entry in _KEYWORD_TABLE.entries)
_KEYWORD_MULT, _KEYWORD_ADD = _KEYWORD_PROPS[0][2], _KEYWORD_PROPS[0][3]
assert all(entry[2:] == (_KEYWORD_MULT, _KEYWORD_ADD) for entry in _KEYWORD_PROPS)


def _order_swaps(seed: int, count: int) -> list[tuple[int, int, int, int]]:
    """``Collections.shuffle`` of a 5-list, ``count`` times: the j of each of the 4 swaps.

    ``nextInt(5)``, ``nextInt(4)``, ``nextInt(3)``, ``nextInt(2)`` unrolled; for a
    power-of-two bound the result is the top bits of ``next(31)``.
    """
    state = (seed ^ MULTIPLIER) & MASK
    out = []
    limit = 1 << 31
    for _ in range(count):
        state = (state * MULTIPLIER + ADDEND) & MASK
        u = state >> 17
        j5 = u % 5
        while u - j5 + 4 >= limit:
            state = (state * MULTIPLIER + ADDEND) & MASK
            u = state >> 17
            j5 = u % 5
        state = (state * MULTIPLIER + ADDEND) & MASK
        j4 = state >> 46
        state = (state * MULTIPLIER + ADDEND) & MASK
        u = state >> 17
        j3 = u % 3
        while u - j3 + 2 >= limit:
            state = (state * MULTIPLIER + ADDEND) & MASK
            u = state >> 17
            j3 = u % 3
        state = (state * MULTIPLIER + ADDEND) & MASK
        out.append((j5, j4, j3, state >> 47))
    return out


DoubleStreams = Callable[[Sequence[int], int], list[list[float]]]
"""``streams(seeds, count)``: the first ``count`` ``nextDouble()`` of ``Random(seed)`` per seed."""


def java_double_streams(seeds: Sequence[int], count: int) -> list[list[float]]:
    """:data:`DoubleStreams` in pure Python (the envs pass a numpy one: same numbers)."""
    return [_doubles(seed, count) for seed in seeds]


_by_cost = operator.itemgetter(1)
"""The sort key of a generated card's fields (type, cost, ...): its cost."""
_ALLOWED_KEYWORDS: tuple[tuple[int, ...], ...] = tuple(
    tuple(bit for bit in _KEYWORD_BITS_IN_ORDER if not bit & taken) for taken in range(64)
)
"""The keyword bits still open to a card that has ``taken``, in table order."""


def generate_cards(
    card_gen_seed: int,
    count: int = CARDS_IN_CONSTRUCTED,
    streams: DoubleStreams = java_double_streams,
) -> tuple[Card, ...]:
    """The 1.5 card set of ``cardGenSeed``, baseIds 0..count-1 in cost order.

    ``cardGenSeed`` only seeds 11 private generators (type, mana, area, property
    order, keyword count, keyword, draw, my health, opponent health, bonus attack,
    bonus defense, in that order); each private generator's draws are taken in
    advance, which is invisible since nothing else reads them. ``streams`` computes
    those draws (a faster implementation may be passed; the numbers must be the same).
    """
    parent = JavaRandom(card_gen_seed)
    seeds = [parent.next_int() for _ in range(11)]
    types, manas, areas, keyword_counts, draws, my_healths, opp_healths, attacks, defenses = (
        streams([seeds[0], seeds[1], seeds[2], seeds[4], seeds[6], seeds[7], seeds[8],
                 seeds[9], seeds[10]], count)
    )  # fmt: skip
    swaps = _order_swaps(seeds[3], count)
    keyword_doubles = streams([seeds[5]], count + count // 2 + 8)[0]  # extended if short
    bisect_left = bisect.bisect_left

    def picks(table: _IntTable, us: list[float]) -> list[tuple[int, float, float, float]]:
        """One pick per card, whether or not the property is kept (one draw each)."""
        entries, bounds, total = table.entries, table.bounds, table.total
        return [entries[bisect_left(bounds, u * total)] for u in us]

    # The shuffled property order holds (slot, picks); picks None = keywords.
    order: list[tuple[int, list[tuple[int, float, float, float]] | None]] = [
        (_AREA, picks(_AREA_TABLE, areas)),
        (_KEYWORDS, None),
        (_DRAW, picks(_DRAW_TABLE, draws)),
        (_MY_HEALTH, picks(_MY_HEALTH_TABLE, my_healths)),
        (_OPP_HEALTH, picks(_OPP_HEALTH_TABLE, opp_healths)),
    ]
    keyword_index = 0
    keyword_count_index = 0
    ceil = math.ceil
    count_bounds, count_entries = _KEYWORD_COUNT_TABLE.bounds, _KEYWORD_COUNT_TABLE.entries
    count_total = _KEYWORD_COUNT_TABLE.total
    allowed_keywords = _ALLOWED_KEYWORDS
    blue = int(CardType.BLUE_ITEM)
    red = int(CardType.RED_ITEM)
    creature = int(CardType.CREATURE)
    type_entries, type_bounds, type_total = (
        _TYPE_TABLE.entries,
        _TYPE_TABLE.bounds,
        _TYPE_TABLE.total,
    )
    mana_entries, mana_bounds, mana_total = (
        _MANA_TABLE.entries,
        _MANA_TABLE.bounds,
        _MANA_TABLE.total,
    )

    drafts: list[tuple[int, int, int, int, int, int, int, int, int]] = []
    for i in range(count):
        card_type = type_entries[bisect_left(type_bounds, types[i] * type_total)][0]
        mana = mana_entries[bisect_left(mana_bounds, manas[i] * mana_total)][0]
        budget = float(mana)
        chosen = [0, 0, 0, 0, 0]  # by property slot (area 0 = Target); [_KEYWORDS] = bits
        j5, j4, j3, j2 = swaps[i]  # Collections.shuffle: swap(i - 1, j) for i = 5..2
        order[4], order[j5] = order[j5], order[4]
        order[3], order[j4] = order[j4], order[3]
        order[2], order[j3] = order[j3], order[2]
        order[1], order[j2] = order[j2], order[1]
        for slot, kept in order:
            if kept is not None:
                value, _w, mult, add = kept[i]
                spent = budget * mult - add
                if spent < 0:
                    # The official builder undoes the cost arithmetically, rounding and all.
                    budget = (spent + add) / mult
                else:
                    budget = spent
                    chosen[slot] = value
                continue
            if card_type == blue:
                continue
            u = keyword_counts[keyword_count_index]
            keyword_count_index += 1
            keywords = 0
            for _k in range(count_entries[bisect_left(count_bounds, u * count_total)][0]):
                if keyword_index == len(keyword_doubles):
                    keyword_doubles = streams([seeds[5]], 2 * keyword_index)[0]
                allowed = allowed_keywords[keywords]
                # All keyword weights are 1: the loop stops at the first k with x <= k + 1.
                x = keyword_doubles[keyword_index] * len(allowed)
                keyword_index += 1
                spent = budget * _KEYWORD_MULT - _KEYWORD_ADD
                if spent < 0:
                    budget = (spent + _KEYWORD_ADD) / _KEYWORD_MULT
                    break
                budget = spent
                keywords |= allowed[max(0, ceil(x) - 1)]
            chosen[_KEYWORDS] = keywords
        attack = int(budget + (attacks[i] * _BONUS_STD + _BONUS_MEAN))
        defense = int(budget + (defenses[i] * _BONUS_STD + _BONUS_MEAN))
        if card_type == creature:
            attack, defense = max(attack, 0), max(defense, 1)
        elif card_type == blue:
            attack, defense = 0, max(defense, 0)
        else:
            attack, defense = max(attack, 0), max(defense, 0)
        if card_type >= red:
            attack, defense = -attack, -defense
        drafts.append(
            (card_type, mana, attack, defense, chosen[_KEYWORDS], chosen[_MY_HEALTH],
             chosen[_OPP_HEALTH], chosen[_DRAW], chosen[_AREA])
        )  # fmt: skip
    drafts.sort(key=_by_cost)  # stable: equal costs keep generation order
    return tuple([_new_card(Card, (base_id, *draft)) for base_id, draft in enumerate(drafts)])
