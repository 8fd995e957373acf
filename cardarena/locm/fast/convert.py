"""One game between the two engines: a reference :class:`State` to a batch row and back.

Plain Python and numpy (no numba), so that the differential tests, ``Batch.to_state``
and ``Batch.set_state`` share one exact translation. :func:`compare_states` names every
field where two reference states differ: the differential tests' error messages.

Instance ids index the row's instance table, so they must be below
:data:`~.layout.MAX_IDS`. A state rebuilt from text holds placeholder ids from 10,000
on: :func:`row_from_state` renumbers those into free ids and, given an ``id_map``,
records how, so that :func:`state_from_row` restores them exactly.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence

import numpy as np

from ..engine.cards import Card
from ..engine.params import GameParameters, resolve_parameters
from ..engine.rules import DECK_SIZE, HAND_LIMIT, RUNES, RuleSet, ruleset
from ..engine.state import (
    Action,
    CardInstance,
    Creature,
    EndReason,
    Phase,
    Player,
    State,
)
from . import layout as L

_new_tuple = tuple.__new__
"""``_new_tuple(Card, values)`` skips the NamedTuple's Python-level ``__new__`` (hot here)."""
DRAFT_ROWS = 3 * DECK_SIZE
"""Rows of a 1.0/1.2 card table that hold the draft triples."""
VERSION_NAMES: dict[int, str] = {code: name for name, code in L.VERSION_CODES.items()}


class ConversionError(ValueError):
    """A state that the batch arrays cannot hold (one line says why)."""


# --- cards ----------------------------------------------------------------------------


def card_values(card: Card) -> tuple[int, ...]:
    """A card's row of the card table (the C_* fields in order)."""
    return (card.base_id, card.type, card.cost, card.attack, card.defense, card.keywords,
            card.my_health, card.opp_health, card.draw, card.area)  # fmt: skip


def card_from_values(values: Sequence[int]) -> Card:
    """The reference :class:`Card` of one card-table row."""
    return Card._make([int(v) for v in values[: L.CARD_FIELDS]])


_TABLES: dict[bytes, list[Card]] = {}
_TABLES_KEPT = 1024
"""Card tables converted lately (a game is converted again and again while it is played)."""


def _cards_of(cards: np.ndarray, count: int) -> list[Card]:
    """The reference Cards of the first ``count`` rows of a card table (cached)."""
    used = np.ascontiguousarray(cards[:count], np.int32)
    key = used.tobytes()
    table = _TABLES.get(key)
    if table is None:
        if len(_TABLES) >= _TABLES_KEPT:
            _TABLES.clear()
        table = _TABLES[key] = [_new_tuple(Card, values) for values in used.tolist()]
    return table


class _Table:
    """A game's card table while it is being filled: rows and the first row of each card."""

    def __init__(self) -> None:
        self.cards = np.zeros((L.MAX_CARDS, L.CARD_FIELDS), np.int32)
        self.count = 0
        self.row_of: dict[Card, int] = {}

    def add(self, card: Card) -> int:
        if self.count >= L.MAX_CARDS:
            raise ConversionError(f"a game holds at most {L.MAX_CARDS} distinct card rows")
        row = self.count
        self.cards[row] = card_values(card)
        self.row_of.setdefault(card, row)
        self.count += 1
        return row

    def find(self, card: Card) -> int:
        row = self.row_of.get(card)
        return self.add(card) if row is None else row


def _card_table(state: State) -> _Table:
    table = _Table()
    if state.rules.draft and state.draft:
        for triple in state.draft:
            for card in triple:
                table.add(card)
    elif not state.rules.draft and state.pool:
        for card in state.pool:
            table.add(card)
    return table


# --- ids ------------------------------------------------------------------------------


def _instances(state: State) -> list[int]:
    ids = []
    for player in state.players:
        ids += [inst.id for inst in player.hand]
        ids += [inst.id for inst in player.deck]
        ids += [creature.id for creature in player.board]
    return ids


def area_safe_ids(used: set[int], count: int) -> list[int] | None:
    """``count`` instance ids below MAX_IDS that ``used`` does not hold, highest first,
    each leaving room for a 1.5 area summon's copy, which takes id + 1: that id is below
    MAX_IDS and nobody's (neither used, nor another given id), and no given id is the
    copy id of a used one. None if there are fewer."""
    blocked = used | {i + 1 for i in used}
    given: list[int] = []
    for i in range(L.MAX_IDS - 2, -1, -1):
        if i in blocked or i + 1 in used or (given and given[-1] == i + 1):
            continue
        given.append(i)
        if len(given) == count:
            return given
    return None if count else []


def _renumbering(state: State) -> dict[int, int]:
    """Original id -> row id for every instance id outside the instance table."""
    ids = _instances(state)
    outside = sorted({i for i in ids if not 0 <= i < L.MAX_IDS})
    if not outside:
        return {}
    used = {i for i in ids if 0 <= i < L.MAX_IDS}
    spaced = area_safe_ids(used, len(outside))
    if spaced is not None:
        return dict(zip(outside, spaced, strict=True))
    # Too few: any free id (a 1.5 area copy of a renumbered card may then clash).
    blocked = used | {i + 1 for i in used}
    free = [i for i in range(L.MAX_IDS - 1, -1, -1) if i not in blocked]
    if len(free) < len(outside):
        raise ConversionError(
            f"{len(outside)} instance ids are {L.MAX_IDS} or more and only {len(free)} "
            "free ids remain to renumber them"
        )
    return dict(zip(outside, free, strict=False))


# --- state -> row ---------------------------------------------------------------------


def row_from_state(
    state: State, id_map: MutableMapping[int, int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The batch row and card table of a reference state (``(STATE_SIZE,)``,
    ``(MAX_CARDS, CARD_FIELDS)``, int32).

    ``id_map``, if given, is cleared and filled with row id -> original id for the ids
    that had to be renumbered (placeholders of a state rebuilt from text).
    """
    rules = state.rules
    table = _card_table(state)
    renumber = _renumbering(state)
    if id_map is not None:
        id_map.clear()
        id_map.update({new: old for old, new in renumber.items()})
    row = np.zeros(L.STATE_SIZE, np.int32)
    row[L.VERSION] = L.VERSION_CODES[rules.version]
    row[L.PHASE] = int(state.phase)
    row[L.ACTIVE] = state.active
    row[L.TURN] = state.turn
    row[L.WINNER] = -1 if state.winner is None else state.winner
    row[L.END_REASON] = int(state.end_reason)
    for player in (0, 1):
        high, low = L.seed_words(state.params.seeds.get(f"shufflePlayer{player}Seed", 0))
        row[L.SHUFFLE_SEED + 2 * player] = high
        row[L.SHUFFLE_SEED + 2 * player + 1] = low
    row[L.INSTANCE_CARD : L.INSTANCE_CARD + L.MAX_IDS] = -1

    def instance(inst_id: int, card: Card) -> int:
        new_id = renumber.get(inst_id, inst_id)
        row[L.INSTANCE_CARD + new_id] = table.find(card)
        return new_id

    for index, player in enumerate(state.players):
        base = L.player_offset(index)
        _check_runes(player.runes, rules)
        if len(player.hand) > HAND_LIMIT:
            raise ConversionError(f"player {index} holds {len(player.hand)} cards (at most 8)")
        if len(player.board) > L.BOARD_LIMIT:
            raise ConversionError(f"player {index} has {len(player.board)} creatures (at most 6)")
        if len(player.deck) > DECK_SIZE or len(player.chosen) > DECK_SIZE:
            raise ConversionError(f"player {index} has more than {DECK_SIZE} deck cards")
        if len(player.performed) > L.MAX_PERFORMED:
            raise ConversionError(
                f"player {index} performed {len(player.performed)} actions "
                f"(the row keeps {L.MAX_PERFORMED})"
            )
        row[base + L.P_HEALTH] = player.health
        row[base + L.P_MANA] = player.mana
        row[base + L.P_MAX_MANA] = player.max_mana
        row[base + L.P_BONUS_MANA_TURNS] = player.bonus_mana_turns
        row[base + L.P_NEXT_TURN_DRAW] = player.next_turn_draw
        row[base + L.P_DRAW_SHOWN] = player.draw_shown
        row[base + L.P_HEALTH_LOST] = player.health_lost
        row[base + L.P_RUNES_LEFT] = len(player.runes)
        row[base + L.P_HAND_COUNT] = len(player.hand)
        for slot, inst in enumerate(player.hand):
            row[base + L.P_HAND + slot] = instance(inst.id, inst.card)
        row[base + L.P_DECK_TOP] = 0
        row[base + L.P_DECK_END] = len(player.deck)
        for slot, inst in enumerate(player.deck):
            row[base + L.P_DECK + slot] = instance(inst.id, inst.card)
        row[base + L.P_BOARD_COUNT] = len(player.board)
        for slot, creature in enumerate(player.board):
            at = base + L.P_BOARD + slot * L.CREATURE_SIZE
            row[at + L.K_ID] = instance(creature.id, creature.card)
            row[at + L.K_CARD] = table.find(creature.card)
            row[at + L.K_LANE] = creature.lane
            row[at + L.K_ATTACK] = creature.attack
            row[at + L.K_DEFENSE] = creature.defense
            row[at + L.K_KEYWORDS] = creature.keywords
            row[at + L.K_CAN_ATTACK] = creature.can_attack
            row[at + L.K_HAS_ATTACKED] = creature.has_attacked
            row[at + L.K_SHOWS_EFFECTS] = creature.shows_effects
        row[base + L.P_PERFORMED_COUNT] = len(player.performed)
        for slot, (base_id, action) in enumerate(player.performed):
            at = base + L.P_PERFORMED + slot * L.PERFORMED_SIZE
            row[at : at + 4] = (base_id, action.type, action.id, action.target)
        row[base + L.P_CHOSEN_COUNT] = len(player.chosen)
        for turn, card in enumerate(player.chosen):
            card_index = _chosen_row(state, table, turn, card)
            row[base + L.P_CHOSEN + turn] = card_index
            row[base + L.P_COPIES + card_index] += 1
    row[L.CARD_COUNT] = table.count
    return row, table.cards


def _chosen_row(state: State, table: _Table, turn: int, card: Card) -> int:
    """The row of a chosen card: in a draft, the offer it was picked from."""
    if state.rules.draft and turn < len(state.draft) and table.count >= DRAFT_ROWS:
        triple = state.draft[turn]
        if card in triple:
            return 3 * turn + triple.index(card)
    return table.find(card)


def _check_runes(runes: list[int], rules: RuleSet) -> None:
    if list(runes) != list(RUNES[len(RUNES) - len(runes) :]):
        raise ConversionError(f"runes {runes} are not the last runes of {list(RUNES)}")
    if runes and not rules.runes:
        raise ConversionError(f"LOCM {rules.version} has no runes, the state holds {runes}")


# --- row -> state ---------------------------------------------------------------------


def version_of(row: np.ndarray) -> str:
    """The version of a stored row ("1.0", "1.2" or "1.5")."""
    return VERSION_NAMES[int(row[L.VERSION])]


def state_from_row(
    row: np.ndarray,
    cards: np.ndarray,
    params: GameParameters | None = None,
    version: str | RuleSet | None = None,
    league: int = 4,
    id_map: MutableMapping[int, int] | None = None,
) -> State:
    """The reference state of a batch row and its card table.

    ``params`` are the game's parameters (None: seed 0 with the row's shuffle seeds,
    enough to finish its deck building the same way). ``id_map`` (row id -> original
    id) restores ids that :func:`row_from_state` renumbered.
    """
    row = np.asarray(row)
    rules = ruleset(version if version is not None else version_of(row))
    if L.VERSION_CODES[rules.version] != int(row[L.VERSION]):
        raise ConversionError(f"the row is LOCM {version_of(row)}, not {rules.version}")
    count = int(row[L.CARD_COUNT])
    table = _cards_of(np.asarray(cards), count)
    if params is None:
        given: dict[str, object] = {"seed": 0}
        for player in (0, 1):
            at = L.SHUFFLE_SEED + 2 * player
            given[f"shufflePlayer{player}Seed"] = L.seed_from_words(row[at], row[at + 1])
        params = resolve_parameters(rules, given)
    draft: tuple[tuple[Card, Card, Card], ...] = ()
    pool: tuple[Card, ...] = ()
    if rules.draft and count >= DRAFT_ROWS:
        draft = tuple((table[3 * t], table[3 * t + 1], table[3 * t + 2]) for t in range(DECK_SIZE))
    elif not rules.draft and count == L.MAX_CARDS:
        pool = tuple(table)
    ids = id_map or {}
    words = row.tolist()
    players = (_player(words, 0, table, ids, rules), _player(words, 1, table, ids, rules))
    winner = int(words[L.WINNER])
    return State(
        rules,
        params,
        league,
        draft,
        pool,
        tuple(Action(5, card.base_id, -1) for card in pool),
        {card.base_id: card for card in pool},
        players,
        Phase(words[L.PHASE]),
        int(words[L.ACTIVE]),
        int(words[L.TURN]),
        None if winner < 0 else winner,
        EndReason(words[L.END_REASON]),
    )


def _player(
    words: list[int], index: int, table: list[Card], ids: MutableMapping[int, int], rules: RuleSet
) -> Player:
    base = L.player_offset(index)

    def card_of(row_id: int) -> Card:
        return table[words[L.INSTANCE_CARD + row_id]]

    player = Player(index, rules.runes)
    player.health = words[base + L.P_HEALTH]
    player.mana = words[base + L.P_MANA]
    player.max_mana = words[base + L.P_MAX_MANA]
    player.bonus_mana_turns = words[base + L.P_BONUS_MANA_TURNS]
    player.next_turn_draw = words[base + L.P_NEXT_TURN_DRAW]
    player.draw_shown = words[base + L.P_DRAW_SHOWN]
    player.health_lost = words[base + L.P_HEALTH_LOST]
    runes_left = words[base + L.P_RUNES_LEFT]
    player.runes = list(RUNES[len(RUNES) - runes_left :]) if runes_left else []
    hand = words[base + L.P_HAND : base + L.P_HAND + words[base + L.P_HAND_COUNT]]
    player.hand = [_new_tuple(CardInstance, (ids.get(i, i), card_of(i))) for i in hand]
    deck = words[base + L.P_DECK + words[base + L.P_DECK_TOP] : base + L.P_DECK
                 + words[base + L.P_DECK_END]]  # fmt: skip
    player.deck = [_new_tuple(CardInstance, (ids.get(i, i), card_of(i))) for i in deck]
    board = []
    for slot in range(words[base + L.P_BOARD_COUNT]):
        at = base + L.P_BOARD + slot * L.CREATURE_SIZE
        row_id = words[at + L.K_ID]
        creature = Creature(ids.get(row_id, row_id), table[words[at + L.K_CARD]],
                            words[at + L.K_LANE])  # fmt: skip
        creature.attack = words[at + L.K_ATTACK]
        creature.defense = words[at + L.K_DEFENSE]
        creature.keywords = words[at + L.K_KEYWORDS]
        creature.can_attack = bool(words[at + L.K_CAN_ATTACK])
        creature.has_attacked = bool(words[at + L.K_HAS_ATTACKED])
        creature.shows_effects = bool(words[at + L.K_SHOWS_EFFECTS])
        board.append(creature)
    player.board = board
    performed = []
    for slot in range(words[base + L.P_PERFORMED_COUNT]):
        at = base + L.P_PERFORMED + slot * L.PERFORMED_SIZE
        base_id, kind, ident, target = words[at : at + 4]
        performed.append((base_id, _new_tuple(Action, (kind, ident, target))))
    player.performed = performed
    chosen = [table[i] for i in words[base + L.P_CHOSEN : base + L.P_CHOSEN
                                      + words[base + L.P_CHOSEN_COUNT]]]  # fmt: skip
    player.chosen = chosen
    counts: dict[int, int] = {}
    for card in chosen:
        counts[card.base_id] = counts.get(card.base_id, 0) + 1
    player.chosen_counts = counts
    player.choosable = None
    return player


# --- comparing two reference states -------------------------------------------------

_PLAYER_SCALARS = ("health", "mana", "max_mana", "bonus_mana_turns", "next_turn_draw",
                   "draw_shown", "health_lost", "runes")  # fmt: skip
_CREATURE_FIELDS = ("id", "card", "lane", "attack", "defense", "keywords", "can_attack",
                    "has_attacked", "shows_effects")  # fmt: skip


def compare_states(a: State, b: State) -> list[str]:
    """Every field where ``a`` and ``b`` differ, one line each
    (``"player 1 board[2].defense: 3 != 4"``); [] when they are the same game position."""
    out: list[str] = []
    for name in ("version", "phase", "active", "turn", "winner", "end_reason", "league"):
        left, right = getattr(a, name), getattr(b, name)
        if left != right:
            out.append(f"{name}: {left!r} != {right!r}")
    if a.params.seeds != b.params.seeds:
        out.append(f"params.seeds: {a.params.seeds} != {b.params.seeds}")
    _compare_lists(out, "draft", a.draft, b.draft)
    _compare_lists(out, "pool", a.pool, b.pool)
    for index, (left, right) in enumerate(zip(a.players, b.players, strict=True)):
        where = f"player {index}"
        for name in _PLAYER_SCALARS:
            x, y = getattr(left, name), getattr(right, name)
            if x != y:
                out.append(f"{where} {name}: {x!r} != {y!r}")
        _compare_lists(out, f"{where} hand", left.hand, right.hand)
        _compare_lists(out, f"{where} deck", left.deck, right.deck)
        if len(left.board) != len(right.board):
            out.append(f"{where} board size: {len(left.board)} != {len(right.board)}")
        for slot, (x, y) in enumerate(zip(left.board, right.board, strict=False)):
            for name in _CREATURE_FIELDS:
                u, v = getattr(x, name), getattr(y, name)
                if u != v:
                    out.append(f"{where} board[{slot}].{name}: {u!r} != {v!r}")
        _compare_lists(out, f"{where} performed", left.performed, right.performed)
        _compare_lists(out, f"{where} chosen", left.chosen, right.chosen)
        if left.chosen_counts != right.chosen_counts:
            out.append(f"{where} chosen_counts: {left.chosen_counts} != {right.chosen_counts}")
    return out


def _compare_lists(out: list[str], name: str, left: Sequence[object],
                   right: Sequence[object]) -> None:  # fmt: skip
    if tuple(left) == tuple(right):
        return
    if len(left) != len(right):
        out.append(f"{name} size: {len(left)} != {len(right)}")
    for i, (x, y) in enumerate(zip(left, right, strict=False)):
        if x != y:
            out.append(f"{name}[{i}]: {x!r} != {y!r}")
            return
