"""The environments' observation arrays, written for a whole batch in one compiled call.

Element for element what :meth:`cardarena.locm.encoding.encoder.Encoder.observe` gives
for the reference State of each row (the differential tests compare every value), so
that a policy trained on the single environments reads the batch engine's arrays
unchanged. The block offsets come from :func:`observation_layout` once, at import: the
compiled code sees them as constants.
"""

from __future__ import annotations

import numpy as np

from . import require_numba

require_numba()

from numba import njit  # noqa: E402 (after the one-line install hint)

from ..encoding import encoder  # noqa: E402
from ..engine.rules import DECK_SIZE, RUNES  # noqa: E402
from .layout import (  # noqa: E402
    ACTIVE,
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
    INSTANCE_CARD,
    K_ATTACK,
    K_CAN_ATTACK,
    K_CARD,
    K_DEFENSE,
    K_KEYWORDS,
    K_LANE,
    MAX_CARDS,
    P_BOARD,
    P_BOARD_COUNT,
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
    P_MANA,
    P_MAX_MANA,
    P_RUNES_LEFT,
    PHASE,
    PLAYER_0,
    PLAYER_SIZE,
    RUNE_COUNT,
    TURN,
    VERSION,
    VERSION_CODES,
)

_LAYOUTS = {version: encoder.observation_layout(version) for version in VERSION_CODES}
_BLOCKS = _LAYOUTS["1.0"].blocks
OBS_ME = _BLOCKS["me"][0]
OBS_OPPONENT = _BLOCKS["opponent"][0]
OBS_MY_DECK = _BLOCKS["my_deck"][0]
OBS_HAND = _BLOCKS["hand"][0]
OBS_MY_BOARD = _BLOCKS["my_board"][0]
OBS_OPPONENT_BOARD = _BLOCKS["opponent_board"][0]
OBS_OFFERED = _BLOCKS["offered"][0]
CARD_WIDTH = len(encoder.CARD_FIELDS)
CREATURE_WIDTH = len(encoder.CREATURE_FIELDS)
OFFER_WIDTH = len(encoder.OFFER_FIELDS)
DRAFT_OFFERS = _LAYOUTS["1.0"].blocks["offered"][1]
POOL_OFFERS = _LAYOUTS["1.5"].blocks["offered"][1]
OBS_SIZES: dict[str, int] = {version: layout.size for version, layout in _LAYOUTS.items()}
"""The observation length of each version (1.0/1.2: 3 draft offers, 1.5: the 120-card pool)."""
# The kernel writes the blocks in this order with these widths: fail at import, not in a
# silently shifted array, if the encoder's layout ever changes.
assert [name for name in _BLOCKS] == ["global", "me", "opponent", "my_deck", "hand",
                                      "my_board", "opponent_board", "offered"]  # fmt: skip
assert (len(encoder.GLOBAL_FIELDS), len(encoder.PLAYER_FIELDS), len(encoder.MY_DECK_FIELDS)) == (
    7,
    7,
    17,
)
assert (CARD_WIDTH, CREATURE_WIDTH, OFFER_WIDTH) == (21, 12, 22)
assert all(layout.blocks["offered"][0] == OBS_OFFERED for layout in _LAYOUTS.values())
assert POOL_OFFERS == MAX_CARDS and DRAFT_OFFERS == 3
RUNE_VALUES = np.array(RUNES, np.int32)
"""The runes in breaking order: the next one is ``RUNE_VALUES[RUNE_COUNT - runes_left]``."""
_DRAFT = 0
_POOL = 2
_DECK_BUILDING = 0
_ENDED = 2


@njit(cache=True, nogil=True, inline="always")
def _clip(value: int, low: int, high: int) -> int:
    return low if value < low else high if value > high else value


@njit(cache=True, nogil=True, inline="always")  # a leaf: one compile less
def _write_card(row: np.ndarray, start: int, cards: np.ndarray, index: int) -> None:
    """The CARD_FIELDS values of card table row ``index`` at ``row[start:start + 21]``.

    Reads the table in place: a view of the card's row would cost reference counting."""
    kind = cards[index, C_TYPE]
    keywords = cards[index, C_KEYWORDS]
    area = cards[index, C_AREA]
    row[start] = 1
    row[start + 1] = _clip(cards[index, C_BASE_ID], 0, 160)
    row[start + 2] = kind == 0
    row[start + 3] = kind == 1
    row[start + 4] = kind == 2
    row[start + 5] = kind == 3
    row[start + 6] = _clip(cards[index, C_COST], 0, 12)
    row[start + 7] = _clip(cards[index, C_ATTACK], -99, 99)
    row[start + 8] = _clip(cards[index, C_DEFENSE], -99, 99)
    for bit in range(6):
        row[start + 9 + bit] = keywords >> bit & 1
    row[start + 15] = _clip(cards[index, C_MY_HEALTH], -99, 99)
    row[start + 16] = _clip(cards[index, C_OPP_HEALTH], -99, 99)
    row[start + 17] = _clip(cards[index, C_DRAW], 0, 9)
    row[start + 18] = area == 0
    row[start + 19] = area == 1
    row[start + 20] = area == 2


@njit(cache=True, nogil=True, inline="always")  # a leaf: one compile less
def _write_player(row: np.ndarray, start: int, game: np.ndarray, base: int) -> None:
    """The PLAYER_FIELDS of the player whose block starts at column ``base``."""
    row[start] = _clip(game[base + P_HEALTH], -99, 99)
    row[start + 1] = game[base + P_MANA]
    row[start + 2] = game[base + P_MAX_MANA]
    row[start + 3] = game[base + P_DECK_END] - game[base + P_DECK_TOP]
    row[start + 4] = game[base + P_HAND_COUNT]
    runes_left = game[base + P_RUNES_LEFT]
    row[start + 5] = RUNE_VALUES[RUNE_COUNT - runes_left] if runes_left > 0 else 0
    draw = game[base + P_DRAW_SHOWN]
    row[start + 6] = 30 if draw > 30 else draw


@njit(cache=True, nogil=True, inline="always")  # a leaf: one compile less
def _write_board(
    row: np.ndarray, start: int, game: np.ndarray, cards: np.ndarray, base: int, lanes: bool
) -> None:
    """The 6 CREATURE_FIELDS rows of a board, each creature at its slot (rows zeroed)."""
    next_slot_0 = 0
    next_slot_1 = 3 if lanes else 0
    for k in range(game[base + P_BOARD_COUNT]):
        creature = base + P_BOARD + k * CREATURE_SIZE
        lane = game[creature + K_LANE]
        if lane == 0:
            slot = next_slot_0
            next_slot_0 += 1
        else:
            slot = next_slot_1
            next_slot_1 += 1
        at = start + slot * CREATURE_WIDTH
        keywords = game[creature + K_KEYWORDS]
        row[at] = 1
        row[at + 1] = _clip(cards[game[creature + K_CARD], C_BASE_ID], 0, 160)
        row[at + 2] = _clip(game[creature + K_ATTACK], 0, 99)
        row[at + 3] = _clip(game[creature + K_DEFENSE], 0, 99)
        for bit in range(6):
            row[at + 4 + bit] = keywords >> bit & 1
        row[at + 10] = lane
        row[at + 11] = game[creature + K_CAN_ATTACK] != 0


@njit(cache=True, nogil=True)
def observe_game(
    game: np.ndarray, cards: np.ndarray, player: int, row: np.ndarray, write_offers: bool
) -> None:
    """One observation: ``row`` (float32) becomes ``Encoder.observe(state, player)``.

    ``write_offers=False`` leaves the offered block alone outside deck building: the
    caller knows it holds zeros already (a battle's rows are written thousands of times,
    the 1.5 pool block is 2640 floats).
    """
    phase = game[PHASE]
    me = PLAYER_0 + player * PLAYER_SIZE
    opp = PLAYER_0 + (1 - player) * PLAYER_SIZE
    for k in range(OBS_OFFERED):
        row[k] = 0
    chosen = game[me + P_CHOSEN_COUNT]
    if phase == _DECK_BUILDING:
        chosen_0 = game[PLAYER_0 + P_CHOSEN_COUNT]
        chosen_1 = game[PLAYER_0 + PLAYER_SIZE + P_CHOSEN_COUNT]
        current = 1 if chosen_1 < chosen_0 else 0
    else:
        current = game[ACTIVE]
    row[0] = phase == _DECK_BUILDING
    row[1] = phase == 1
    row[2] = phase == _ENDED
    row[3] = player
    row[4] = phase != _ENDED and current == player
    row[5] = _clip(game[TURN], 0, 255)
    row[6] = chosen
    _write_player(row, OBS_ME, game, me)
    _write_player(row, OBS_OPPONENT, game, opp)
    if phase == _DECK_BUILDING:
        for k in range(chosen):
            card = game[me + P_CHOSEN + k]
            row[OBS_MY_DECK + cards[card, C_COST]] += 1
            row[OBS_MY_DECK + 13 + cards[card, C_TYPE]] += 1
        end = row.shape[0]
        for k in range(OBS_OFFERED, end):
            row[k] = 0
        if game[VERSION] == _POOL:
            for i in range(POOL_OFFERS):
                at = OBS_OFFERED + i * OFFER_WIDTH
                _write_card(row, at, cards, i)
                row[at + OFFER_WIDTH - 1] = game[me + P_COPIES + i]
        elif chosen < DECK_SIZE:  # one draft triple per pick: 30 triples
            for pick in range(DRAFT_OFFERS):
                _write_card(row, OBS_OFFERED + pick * OFFER_WIDTH, cards, 3 * chosen + pick)
        return
    for k in range(game[me + P_DECK_TOP], game[me + P_DECK_END]):
        card = game[INSTANCE_CARD + game[me + P_DECK + k]]
        if cards[card, C_BASE_ID] >= 0:
            row[OBS_MY_DECK + cards[card, C_COST]] += 1
            row[OBS_MY_DECK + 13 + cards[card, C_TYPE]] += 1
    for k in range(game[me + P_HAND_COUNT]):
        card = game[INSTANCE_CARD + game[me + P_HAND + k]]
        _write_card(row, OBS_HAND + k * CARD_WIDTH, cards, card)
    lanes = game[VERSION] != _DRAFT
    _write_board(row, OBS_MY_BOARD, game, cards, me, lanes)
    _write_board(row, OBS_OPPONENT_BOARD, game, cards, opp, lanes)
    if write_offers:
        for k in range(OBS_OFFERED, row.shape[0]):
            row[k] = 0


@njit(cache=True, nogil=True)
def _observe_all(
    state: np.ndarray, cards: np.ndarray, players: np.ndarray, out: np.ndarray
) -> None:
    for g in range(state.shape[0]):
        observe_game(state[g], cards[g], players[g], out[g], True)


def observe_batch(
    state: np.ndarray, cards: np.ndarray, players: np.ndarray, out: np.ndarray
) -> np.ndarray:
    """Write every game's observation as ``players[g]`` sees it into ``out[N, obs_size]``.

    ``out`` is float32 of the batch version's observation size (:data:`OBS_SIZES`);
    ``players`` holds 0 or 1 per game. Returns ``out``.
    """
    games = state.shape[0]
    if cards.shape[0] != games or players.shape != (games,) or out.shape[0] != games:
        raise ValueError(
            f"observe_batch: {games} games but cards {cards.shape}, players "
            f"{players.shape}, out {out.shape}"
        )
    if out.dtype != np.float32 or not out.flags.c_contiguous:
        raise ValueError("observe_batch: out must be a C-contiguous float32 array")
    if games:
        expected = OBS_SIZES["1.5"] if state[0, VERSION] == _POOL else OBS_SIZES["1.0"]
        if out.shape[1] != expected:
            raise ValueError(f"observe_batch: out has {out.shape[1]} columns, not {expected}")
    _observe_all(state, cards, players.astype(np.int32, copy=False), out)
    return out
