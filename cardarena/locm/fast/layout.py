"""Where everything lives in the batch engine's arrays (plain constants, no numba).

A batch of N games is two integer arrays, so that compiled loops take them whole
and a game is copied, compared or handed over as one row:

``state[N, STATE_SIZE]`` (int32)
    One row per game: the game header, then player 0's block, then player 1's.
``cards[N, MAX_CARDS, CARD_FIELDS]`` (int32)
    The cards a game can hold, one row each. 1.0/1.2: the 30 draft triples
    flattened (row ``3 * draft_turn + pick``, 90 rows). 1.5: the 120-card pool in
    pool order. A *card index* everywhere below is a row of this table.

Lists keep the reference engine's order (a hand, a board with its lanes mixed,
a deck from its top), so that slot ``k`` of the environments' encoding is found
the same way as in :mod:`cardarena.locm.encoding`.
"""

from __future__ import annotations

from ..engine.rules import DECK_SIZE, HAND_LIMIT, RUNES

# --- versions -------------------------------------------------------------------------

VERSION_CODES: dict[str, int] = {"1.0": 0, "1.2": 1, "1.5": 2}
"""The version number stored in a row (``state[g, VERSION]``)."""

# --- the card table ---------------------------------------------------------------------

MAX_CARDS = 120
"""Rows of a game's card table: 90 draft offers (1.0/1.2) or the 120-card pool (1.5)."""
C_BASE_ID = 0
C_TYPE = 1
"""0 creature, 1 green item, 2 red item, 3 blue item (:class:`~..engine.cards.CardType`)."""
C_COST = 2
C_ATTACK = 3
C_DEFENSE = 4
C_KEYWORDS = 5
"""Keyword bits as in :mod:`~..engine.cards` (B=1, C=2, D=4, G=8, L=16, W=32)."""
C_MY_HEALTH = 6
C_OPP_HEALTH = 7
C_DRAW = 8
C_AREA = 9
"""0 target, 1 its lane, 2 both lanes (1.5)."""
CARD_FIELDS = 10

# --- instance ids -------------------------------------------------------------------------

MAX_IDS = 128
"""Instance ids are below this: 1..60 in 1.0/1.2 (2i + player + 1), 0..119 in 1.5
(even ids in choice order, a 1.5 area summon's copy takes id + 1)."""

# --- the game header --------------------------------------------------------------------

VERSION = 0
PHASE = 1
"""0 deck building, 1 battle, 2 ended (:class:`~..engine.state.Phase`)."""
ACTIVE = 2
TURN = 3
"""The reference engine's ``State.turn`` (-1 during deck building)."""
WINNER = 4
"""-1 while running or without a winner."""
END_REASON = 5
"""An :class:`~..engine.state.EndReason` number."""
CARD_COUNT = 6
"""Rows of ``cards[g]`` in use: 90 (a 1.0/1.2 draft), 120 (a 1.5 pool), or the number of
distinct cards of a position built by hand or from text (no draft, no pool)."""
SHUFFLE_SEED = 7
"""The players' shuffle seeds (Java longs) as two int32 words each, high then low:
``state[g, SHUFFLE_SEED + 2 * player]`` and ``+ 2 * player + 1`` (the battle start needs them)."""
INSTANCE_CARD = SHUFFLE_SEED + 4
"""``state[g, INSTANCE_CARD + id]``: the card index of instance ``id`` (-1: unused)."""
HEADER_SIZE = INSTANCE_CARD + MAX_IDS

# --- a player's block (add PLAYER_0 or PLAYER_1) ---------------------------------------

P_HEALTH = 0
P_MANA = 1
P_MAX_MANA = 2
P_BONUS_MANA_TURNS = 3
P_NEXT_TURN_DRAW = 4
P_DRAW_SHOWN = 5
P_HEALTH_LOST = 6
P_RUNES_LEFT = 7
"""Runes not yet broken: the next one is ``RUNES[len(RUNES) - runes_left]`` (0 in 1.5)."""
P_HAND_COUNT = 8
P_HAND = 9
"""HAND_LIMIT instance ids, the first ``hand_count`` used, in hand order."""
P_DECK_TOP = P_HAND + HAND_LIMIT
"""Index in P_DECK of the deck's top card; the deck is ``deck[top:end]``."""
P_DECK_END = P_DECK_TOP + 1
P_DECK = P_DECK_END + 1
"""DECK_SIZE instance ids in deck order (the top is drawn first)."""
P_BOARD_COUNT = P_DECK + DECK_SIZE
P_BOARD = P_BOARD_COUNT + 1
"""BOARD_LIMIT creatures of CREATURE_FIELDS each, the first ``board_count`` used, in the
reference engine's board order (lanes mixed)."""
BOARD_LIMIT = 6

# Creature fields (offsets inside one creature record).
K_ID = 0
K_CARD = 1
"""The card index of the creature's card."""
K_LANE = 2
"""0 or 1 (always 0 in 1.0)."""
K_ATTACK = 3
K_DEFENSE = 4
K_KEYWORDS = 5
K_CAN_ATTACK = 6
K_HAS_ATTACKED = 7
K_SHOWS_EFFECTS = 8
CREATURE_SIZE = 9

P_PERFORMED_COUNT = P_BOARD + BOARD_LIMIT * CREATURE_SIZE
P_PERFORMED = P_PERFORMED_COUNT + 1
"""The actions executed in this player's last turn: (base_id, type, id, target) each."""
MAX_PERFORMED = 32
PERFORMED_SIZE = 4
P_CHOSEN_COUNT = P_PERFORMED + MAX_PERFORMED * PERFORMED_SIZE
P_CHOSEN = P_CHOSEN_COUNT + 1
"""Deck-building choices in order: DECK_SIZE card indexes."""
P_COPIES = P_CHOSEN + DECK_SIZE
"""1.5: ``copies[card index]``, how many copies of that pool card were chosen."""
PLAYER_SIZE = P_COPIES + MAX_CARDS

PLAYER_0 = HEADER_SIZE
PLAYER_1 = HEADER_SIZE + PLAYER_SIZE
STATE_SIZE = HEADER_SIZE + 2 * PLAYER_SIZE

RUNE_COUNT = len(RUNES)


def player_offset(player: int) -> int:
    """The first column of ``player``'s block in a state row."""
    return PLAYER_0 + player * PLAYER_SIZE


def seed_words(seed: int) -> tuple[int, int]:
    """A Java long as the two int32 words a row stores (high, low), both signed."""
    unsigned = seed & 0xFFFF_FFFF_FFFF_FFFF
    high, low = unsigned >> 32, unsigned & 0xFFFF_FFFF
    return (high - (1 << 32) if high >= 1 << 31 else high,
            low - (1 << 32) if low >= 1 << 31 else low)  # fmt: skip


def seed_from_words(high: int, low: int) -> int:
    """The Java long of two stored words (the inverse of :func:`seed_words`)."""
    unsigned = ((int(high) & 0xFFFF_FFFF) << 32) | (int(low) & 0xFFFF_FFFF)
    return unsigned - (1 << 64) if unsigned >= 1 << 63 else unsigned
