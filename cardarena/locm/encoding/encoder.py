"""The fixed action layout, the legal-action mask and the observation arrays of LOCM.

Pure numpy over :class:`~cardarena.locm.engine.state.State` (no gymnasium), so every
environment, and a future batched engine, shares one encoding. An :class:`Encoder`
owns preallocated arrays and rewrites only what changed; card rows are computed
once per card and cached.

Slots: a hand slot is the card's index in the hand (0-7). A board slot is the
creature's index in its lane plus 3 × lane in 1.2/1.5 (lane 0: slots 0-2, lane 1:
slots 3-5) and its index on the single board in 1.0 (0-5). The observation and
the actions use the same slots, so "hand slot 2" means the same card in both.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ..engine.cards import Card
from ..engine.rules import HAND_LIMIT, RuleSet, ruleset
from ..engine.state import Action, ActionType, IllegalActionError, Phase, State

BOARD_SLOTS = 6
"""Per side: 1.0 has one lane of 6, 1.2/1.5 two lanes of 3."""
TARGETS_ATTACK = 1 + BOARD_SLOTS
"""ATTACK targets: the opponent's face, then its board slots."""
TARGETS_USE = 1 + 2 * BOARD_SLOTS
"""USE targets: none/face (blue items), own board slots (green), opponent slots (red, blue)."""
POOL_SIZE_1_5 = 120

_PASS, _SUMMON, _ATTACK, _USE, _PICK, _CHOOSE = (int(kind) for kind in ActionType)
_new_action = tuple.__new__
_DECK_BUILDING, _BATTLE, _ENDED = Phase.DECK_BUILDING, Phase.BATTLE, Phase.ENDED
_PASS_ACTION = Action(_PASS)


@dataclass(frozen=True)
class ActionLayout:
    """Where each kind of action starts in the Discrete space of one version."""

    version: str
    lanes: int
    summon: int
    attack: int
    use: int
    deck: int
    deck_actions: int
    """3 PICK actions (1.0/1.2) or 120 CHOOSE actions (1.5)."""
    size: int

    def describe(self, index: int) -> str:
        """A human-readable name of action ``index`` (for errors and docs)."""
        if not 0 <= index < self.size:
            return f"action {index} (outside 0..{self.size - 1})"
        if index == 0:
            return "action 0 (PASS)"
        if index < self.attack:
            slot, lane = divmod(index - self.summon, self.lanes)
            where = f" lane {lane}" if self.lanes > 1 else ""
            return f"action {index} (SUMMON hand slot {slot}{where})"
        if index < self.use:
            slot, target = divmod(index - self.attack, TARGETS_ATTACK)
            return f"action {index} (ATTACK with board slot {slot} {_attack_target(target)})"
        if index < self.deck:
            slot, target = divmod(index - self.use, TARGETS_USE)
            return f"action {index} (USE hand slot {slot} {_use_target(target)})"
        offset = index - self.deck
        if self.deck_actions == 3:
            return f"action {index} (PICK {offset})"
        return f"action {index} (CHOOSE pool card {offset})"


def _attack_target(target: int) -> str:
    return "on the opponent" if target == 0 else f"on opponent board slot {target - 1}"


def _use_target(target: int) -> str:
    if target == 0:
        return "without a creature target (the opponent)"
    if target <= BOARD_SLOTS:
        return f"on own board slot {target - 1}"
    return f"on opponent board slot {target - 1 - BOARD_SLOTS}"


def action_layout(version: str | RuleSet) -> ActionLayout:
    """The action layout of a version: PASS, SUMMON, ATTACK, USE, then PICK or CHOOSE."""
    rules = ruleset(version)
    lanes = 2 if rules.has_lanes else 1
    summon = 1
    attack = summon + HAND_LIMIT * lanes
    use = attack + BOARD_SLOTS * TARGETS_ATTACK
    deck = use + HAND_LIMIT * TARGETS_USE
    deck_actions = 3 if rules.draft else POOL_SIZE_1_5
    return ActionLayout(rules.version, lanes, summon, attack, use, deck, deck_actions,
                        deck + deck_actions)  # fmt: skip


# --- observation layout --------------------------------------------------------------

GLOBAL_FIELDS: tuple[tuple[str, float, float], ...] = (
    ("deck_building", 0, 1),
    ("battle", 0, 1),
    ("ended", 0, 1),
    ("seat", 0, 1),
    ("my_turn", 0, 1),
    ("turn", 0, 255),
    ("cards_chosen", 0, 30),
)
PLAYER_FIELDS: tuple[tuple[str, float, float], ...] = (
    ("health", -99, 99),
    ("mana", 0, 13),
    ("max_mana", 0, 13),
    ("deck_size", 0, 30),
    ("hand_size", 0, 8),
    ("next_rune", 0, 25),
    ("draw", 0, 30),
)
CARD_FIELDS: tuple[tuple[str, float, float], ...] = (
    ("present", 0, 1),
    ("base_id", 0, 160),
    ("creature", 0, 1),
    ("green_item", 0, 1),
    ("red_item", 0, 1),
    ("blue_item", 0, 1),
    ("cost", 0, 12),
    ("attack", -99, 99),
    ("defense", -99, 99),
    ("breakthrough", 0, 1),
    ("charge", 0, 1),
    ("drain", 0, 1),
    ("guard", 0, 1),
    ("lethal", 0, 1),
    ("ward", 0, 1),
    ("my_health", -99, 99),
    ("opp_health", -99, 99),
    ("draw", 0, 9),
    ("area_target", 0, 1),
    ("area_lane", 0, 1),
    ("area_both_lanes", 0, 1),
)
OFFER_FIELDS = (*CARD_FIELDS, ("copies_chosen", 0, 2))
MY_DECK_FIELDS: tuple[tuple[str, float, float], ...] = (
    *((f"cost_{cost}", 0, 30) for cost in range(13)),
    ("creatures", 0, 30),
    ("green_items", 0, 30),
    ("red_items", 0, 30),
    ("blue_items", 0, 30),
)
"""The player's own cards not yet drawn (battle) or chosen so far (deck building):
it built the deck, so it knows them, though not their order."""
CREATURE_FIELDS: tuple[tuple[str, float, float], ...] = (
    ("present", 0, 1),
    ("base_id", 0, 160),
    ("attack", 0, 99),
    ("defense", 0, 99),
    ("breakthrough", 0, 1),
    ("charge", 0, 1),
    ("drain", 0, 1),
    ("guard", 0, 1),
    ("lethal", 0, 1),
    ("ward", 0, 1),
    ("lane", 0, 1),
    ("can_attack", 0, 1),
)


@dataclass(frozen=True)
class ObservationLayout:
    """The blocks of the flat observation vector: name -> (start, rows, fields)."""

    version: str
    blocks: dict[str, tuple[int, int, tuple[tuple[str, float, float], ...]]]
    size: int
    low: np.ndarray
    high: np.ndarray

    def field(self, observation: np.ndarray, block: str, row: int, name: str) -> float:
        """One value of an observation by block, row and field name (for readers and tests)."""
        start, _rows, fields = self.blocks[block]
        names = [f[0] for f in fields]
        return float(observation[start + row * len(fields) + names.index(name)])


def observation_layout(version: str | RuleSet) -> ObservationLayout:
    """The observation layout of a version (only the offer block differs: 3 or 120 rows)."""
    rules = ruleset(version)
    offers = 3 if rules.draft else POOL_SIZE_1_5
    order = (
        ("global", 1, GLOBAL_FIELDS),
        ("me", 1, PLAYER_FIELDS),
        ("opponent", 1, PLAYER_FIELDS),
        ("my_deck", 1, MY_DECK_FIELDS),
        ("hand", HAND_LIMIT, CARD_FIELDS),
        ("my_board", BOARD_SLOTS, CREATURE_FIELDS),
        ("opponent_board", BOARD_SLOTS, CREATURE_FIELDS),
        ("offered", offers, OFFER_FIELDS),
    )
    blocks = {}
    low: list[float] = []
    high: list[float] = []
    start = 0
    for name, rows, fields in order:
        blocks[name] = (start, rows, fields)
        for _ in range(rows):
            low.extend(f[1] for f in fields)
            high.extend(f[2] for f in fields)
        start += rows * len(fields)
    return ObservationLayout(rules.version, blocks, start,
                             np.array(low, np.float32), np.array(high, np.float32))  # fmt: skip


def _clip(value: int, low: int, high: int) -> int:
    return low if value < low else high if value > high else value


_CACHE_LIMIT = 200_000
"""Row caches are cleared when they reach this size (1.5 makes 120 new cards a game)."""
_CARD_ROWS: dict[Card, tuple[float, ...]] = {}


def _card_values(card: Card) -> tuple[int | bool, ...]:
    """The CARD_FIELDS values of a card, as ints and bools."""
    kind, kw, area = card.type, card.keywords, card.area
    return (
        1,
        _clip(card.base_id, 0, 160),
        kind == 0, kind == 1, kind == 2, kind == 3,
        _clip(card.cost, 0, 12),
        _clip(card.attack, -99, 99),
        _clip(card.defense, -99, 99),
        kw & 1, kw >> 1 & 1, kw >> 2 & 1, kw >> 3 & 1, kw >> 4 & 1, kw >> 5 & 1,
        _clip(card.my_health, -99, 99),
        _clip(card.opp_health, -99, 99),
        _clip(card.draw, 0, 9),
        area == 0, area == 1, area == 2,
    )  # fmt: skip


def card_row(card: Card) -> tuple[float, ...]:
    """The CARD_FIELDS values of a card (cached: cards are immutable and shared)."""
    row = _CARD_ROWS.get(card)
    if row is None:
        row = tuple(float(v) for v in _card_values(card))
        if len(_CARD_ROWS) >= _CACHE_LIMIT:
            _CARD_ROWS.clear()
        _CARD_ROWS[card] = row
    return row


_KEYWORD_BITS: tuple[tuple[float, ...], ...] = tuple(
    tuple(float(bits >> i & 1) for i in range(6)) for bits in range(64)
)


_FLOAT32 = 4
_EMPTY_CREATURE_BYTES = bytes(len(CREATURE_FIELDS) * _FLOAT32)
_EMPTY_CARD_BYTES: tuple[bytes, ...] = tuple(
    bytes(len(CARD_FIELDS) * count * _FLOAT32) for count in range(HAND_LIMIT + 1)
)
"""The rows of ``count`` empty hand slots."""
_CARD_BYTES: dict[Card, bytes] = {}
_CREATURE_BYTES: dict[tuple[int, int, int, int, int, bool], bytes] = {}
"""(base_id, attack, defense, keywords, lane, can_attack) -> its CREATURE_FIELDS row."""
_HEAD = struct.Struct(f"{len(GLOBAL_FIELDS) + 2 * len(PLAYER_FIELDS) + len(MY_DECK_FIELDS)}f")
"""The global, me, opponent and my_deck blocks, packed as float32."""
_CARD_STRUCT = struct.Struct(f"{len(CARD_FIELDS)}f")
_CREATURE_STRUCT = struct.Struct(f"{len(CREATURE_FIELDS)}f")


def card_array(card: Card) -> np.ndarray:
    """:func:`card_row` as a float32 array."""
    return np.frombuffer(_card_bytes(card), np.float32)


def _card_bytes(card: Card) -> bytes:
    """:func:`card_row` as float32 bytes (cached: cards are immutable values)."""
    row = _CARD_BYTES.get(card)
    if row is None:
        if len(_CARD_BYTES) >= _CACHE_LIMIT:
            _CARD_BYTES.clear()
        row = _CARD_BYTES[card] = _CARD_STRUCT.pack(*_card_values(card))
    return row


def _creature_bytes(key: tuple[int, int, int, int, int, bool]) -> bytes:
    base_id, attack, defense, keywords, lane, can_attack = key
    return _CREATURE_STRUCT.pack(
        1,
        _clip(base_id, 0, 160),
        _clip(attack, 0, 99),
        _clip(defense, 0, 99),
        *_KEYWORD_BITS[keywords & 63],
        lane,
        can_attack,
    )


class Encoder:
    """Observations and masks of one LOCM version, seen by one player at a time."""

    def __init__(self, version: str | RuleSet) -> None:
        self.rules = ruleset(version)
        self.actions = action_layout(self.rules)
        self.obs_layout = observation_layout(self.rules)
        blocks = self.obs_layout.blocks
        # observe() appends the blocks before "offered" in this order, as one list.
        assert list(blocks)[:7] == ["global", "me", "opponent", "my_deck", "hand",
                                    "my_board", "opponent_board"]  # fmt: skip
        self._offered = blocks["offered"][0]
        self._offer_rows = blocks["offered"][1]
        self._end = self.obs_layout.size
        self._no_offers = bytes((self._end - self._offered) * _FLOAT32)
        self._deck_histogram: tuple[list, tuple, list[int]] | None = None
        """(deck, a copy of its cards then, histogram): decks only lose their top."""
        self._pool_block: tuple[tuple[Card, ...], np.ndarray] | None = None
        """(the pool, its encoded block): a 1.5 pool is encoded once per game."""

    # --- slots ---------------------------------------------------------------------

    def board_slots(self, board: list) -> list[int]:
        """The slot of each creature of a board, in board order."""
        if not self.rules.has_lanes:
            return list(range(len(board)))
        counts = [0, 3]
        slots = []
        for creature in board:
            lane = creature.lane
            slots.append(counts[lane])
            counts[lane] += 1
        return slots

    # --- masks and decoding --------------------------------------------------------

    def mask(
        self,
        state: State,
        out: np.ndarray | None = None,
        legal: dict[int, Action] | None = None,
    ) -> np.ndarray:
        """The legal actions of the player to act as a boolean vector (all False once ended).

        ``legal``, if given, is cleared and filled with index -> engine action for every
        legal index, so that a caller can apply the chosen action without decoding it.
        """
        layout = self.actions
        mask = np.zeros(layout.size, bool) if out is None else out
        if out is not None:
            mask.fill(False)
        if legal is not None:
            legal.clear()
        phase = state.phase
        if phase is Phase.ENDED:
            return mask
        if phase is Phase.DECK_BUILDING:
            deck = layout.deck
            if self.rules.draft:
                mask[deck : deck + 3] = True
                if legal is not None:
                    for offset in range(3):
                        legal[deck + offset] = _new_action(Action, (_PICK, offset, -1))
            else:
                counts = state.players[state.current_player].chosen_counts
                for i, card in enumerate(state.pool):
                    if counts.get(card.base_id, 0) < 2:
                        mask[deck + i] = True
                        if legal is not None:
                            legal[deck + i] = state.pool_actions[i]
            return mask
        actions = state.legal_actions()
        if len(actions) == 1:  # PASS alone: common, and nothing to look up
            mask[0] = True
            if legal is not None:
                legal[0] = actions[0]
            return mask
        me, opp = state.players[state.active], state.players[1 - state.active]
        lanes = layout.lanes
        summon, attack, use = layout.summon, layout.attack, layout.use
        # One map by instance id (ids are unique in a game): a hand card -> its hand slot,
        # an own creature -> 1 + its slot, an opponent creature -> 1 + 6 + its slot (the
        # USE target offsets; an ATTACK target offset is the latter minus 6).
        where = {inst.id: slot for slot, inst in enumerate(me.hand)}
        if lanes == 2:
            for board, first in ((me.board, 1), (opp.board, 1 + BOARD_SLOTS)):
                left, right = first, first + 3
                for creature in board:
                    if creature.lane:
                        where[creature.id] = right
                        right += 1
                    else:
                        where[creature.id] = left
                        left += 1
        else:
            for slot, creature in enumerate(me.board, 1):
                where[creature.id] = slot
            for slot, creature in enumerate(opp.board, 1 + BOARD_SLOTS):
                where[creature.id] = slot
        for action in actions:
            kind, ident, target = action
            if kind == _ATTACK:
                index = attack + (where[ident] - 1) * TARGETS_ATTACK
                if target != -1:
                    index += where[target] - BOARD_SLOTS
            elif kind == _SUMMON:
                index = summon + where[ident] * lanes + (target if target > 0 else 0)
            elif kind == _PASS:
                index = 0
            elif target == -1:
                index = use + where[ident] * TARGETS_USE
            else:
                index = use + where[ident] * TARGETS_USE + where[target]
            mask[index] = True
            if legal is not None:
                legal[index] = action
        return mask

    def decode(self, state: State, index: int) -> Action:
        """The engine action of ``index`` for the player to act; IllegalActionError if none."""
        layout = self.actions
        action = self._decode(state, int(index))
        if action is None or not state.is_legal(action):
            raise IllegalActionError(
                f"{layout.describe(int(index))} is not legal for player {state.current_player}"
                f" in {state!r}" + (f" (it would be {action})" if action is not None else "")
            )
        return action

    def _decode(self, state: State, index: int) -> Action | None:
        layout = self.actions
        if not 0 <= index < layout.size or state.phase is Phase.ENDED:
            return None
        if state.phase is Phase.DECK_BUILDING:
            if index < layout.deck:
                return None
            offset = index - layout.deck
            if self.rules.draft:
                return _new_action(Action, (_PICK, offset, -1))
            return state.pool_actions[offset] if offset < len(state.pool_actions) else None
        if index == 0:
            return _PASS_ACTION
        if index >= layout.deck:
            return None
        me, opp = state.players[state.active], state.players[1 - state.active]
        if index < layout.attack:
            slot, lane = divmod(index - layout.summon, layout.lanes)
            if slot >= len(me.hand):
                return None
            lane = lane if self.rules.has_lanes else -1
            return _new_action(Action, (_SUMMON, me.hand[slot].id, lane))
        if index < layout.use:
            slot, target = divmod(index - layout.attack, TARGETS_ATTACK)
            attacker = self._creature_at(me.board, slot)
            if attacker is None:
                return None
            if target == 0:
                return _new_action(Action, (_ATTACK, attacker, -1))
            defender = self._creature_at(opp.board, target - 1)
            return None if defender is None else _new_action(Action, (_ATTACK, attacker, defender))
        slot, target = divmod(index - layout.use, TARGETS_USE)
        if slot >= len(me.hand):
            return None
        item = me.hand[slot]
        if target == 0:
            return _new_action(Action, (_USE, item.id, -1))
        if target <= BOARD_SLOTS:
            if item.card.type != 1:
                return None
            creature = self._creature_at(me.board, target - 1)
        else:
            if item.card.type == 1:
                return None
            creature = self._creature_at(opp.board, target - 1 - BOARD_SLOTS)
        return None if creature is None else _new_action(Action, (_USE, item.id, creature))

    def _creature_at(self, board: list, slot: int) -> int | None:
        """The instance id of the creature in a board slot, or None if it is empty."""
        if not self.rules.has_lanes:
            return board[slot].id if slot < len(board) else None
        lane, index = divmod(slot, 3)  # lane 0: slots 0-2, lane 1: slots 3-5
        for creature in board:
            if creature.lane == lane:
                if index == 0:
                    return creature.id
                index -= 1
        return None

    def encode_action(self, state: State, action: Action) -> int:
        """The index of a legal engine action (for agents that act on the state)."""
        mask = self.mask(state)
        for index in np.flatnonzero(mask):
            if self._decode(state, int(index)) == action:
                return int(index)
        raise IllegalActionError(f"{action} is not legal in {state!r}")

    # --- observations ----------------------------------------------------------------

    def observe(self, state: State, player: int) -> np.ndarray:
        """A new observation array of ``state`` as ``player`` sees it (nothing hidden shown).

        In battle the array is one join of cached float32 byte rows (cards,
        creatures) after a packed head: far cheaper than element-wise numpy writes.
        """
        me, opp = state.players[player], state.players[1 - player]
        phase = state.phase
        turn = state.turn
        ended = phase is _ENDED
        my_health, my_draw = me.health, me.draw_shown
        opp_health, opp_draw = opp.health, opp.draw_shown
        values: list[float] = [
            phase is _DECK_BUILDING,
            phase is _BATTLE,
            ended,
            player,
            not ended and state.current_player == player,
            0 if turn < 0 else 255 if turn > 255 else turn,
            len(me.chosen),
            # PLAYER_FIELDS of me, then of the opponent.
            -99 if my_health < -99 else 99 if my_health > 99 else my_health,
            me.mana,
            me.max_mana,
            len(me.deck),
            len(me.hand),
            me.runes[0] if me.runes else 0,
            30 if my_draw > 30 else my_draw,
            -99 if opp_health < -99 else 99 if opp_health > 99 else opp_health,
            opp.mana,
            opp.max_mana,
            len(opp.deck),
            len(opp.hand),
            opp.runes[0] if opp.runes else 0,
            30 if opp_draw > 30 else opp_draw,
        ]
        if phase is not _DECK_BUILDING:
            # Battle: one join of cached float32 rows (cards, creatures) after the head.
            values += self._battle_histogram(me.deck)
            hand = me.hand
            pieces = [_HEAD.pack(*values)]
            cache = _CARD_BYTES
            for inst in hand:
                row = cache.get(inst.card)
                pieces.append(row if row is not None else _card_bytes(inst.card))
            pieces.append(_EMPTY_CARD_BYTES[HAND_LIMIT - len(hand)])
            self._board_rows(pieces, me.board)
            self._board_rows(pieces, opp.board)
            pieces.append(self._no_offers)
            return np.frombuffer(bytearray(b"".join(pieces)), np.float32)
        histogram = [0] * len(MY_DECK_FIELDS)
        for card in me.chosen:
            histogram[card.cost] += 1
            histogram[13 + card.type] += 1
        values += histogram
        obs = np.zeros(self._end, np.float32)
        obs[: len(values)] = values
        if self.rules.draft:
            turn = len(me.chosen)
            if turn < len(state.draft):
                width = len(OFFER_FIELDS)
                start = self._offered
                for card in state.draft[turn]:
                    obs[start : start + width - 1] = card_row(card)
                    start += width
        else:
            obs[self._offered : self._end] = self._pool(state)
            width = len(OFFER_FIELDS)
            counts = me.chosen_counts
            column = self._offered + width - 1
            for i, card in enumerate(state.pool):
                copies = counts.get(card.base_id)
                if copies:
                    obs[column + i * width] = copies
        return obs

    def _battle_histogram(self, deck: list) -> list[int]:
        """The my_deck block of a battle deck, kept while the deck only loses its top
        (a draw subtracts the drawn cards instead of counting the deck again)."""
        cached = self._deck_histogram
        size = len(deck)
        if cached is not None and cached[0] is deck:
            before = cached[1]
            drawn = len(before) - size
            if drawn >= 0 and (not size or (deck[0] is before[drawn] and deck[-1] is before[-1])):
                if not drawn:
                    return cached[2]
                histogram = list(cached[2])
                for inst in before[:drawn]:
                    card = inst.card
                    if card.base_id >= 0:
                        histogram[card.cost] -= 1
                        histogram[13 + card.type] -= 1
                self._deck_histogram = (deck, tuple(deck), histogram)
                return histogram
        histogram = [0] * len(MY_DECK_FIELDS)
        for inst in deck:
            card = inst.card
            if card.base_id < 0:  # a placeholder (a state rebuilt from a bot's input)
                continue
            histogram[card.cost] += 1
            histogram[13 + card.type] += 1
        self._deck_histogram = (deck, tuple(deck), histogram)
        return histogram

    def _board_rows(self, pieces: list[bytes], board: list) -> None:
        """Append the 6 creature rows of a board, each at its slot."""
        rows: list[bytes] = [_EMPTY_CREATURE_BYTES] * BOARD_SLOTS
        counts = [0, 3] if self.rules.has_lanes else [0, 0]
        cache = _CREATURE_BYTES
        for creature in board:
            lane = creature.lane
            slot = counts[lane]
            counts[lane] = slot + 1
            key = (creature.card.base_id, creature.attack, creature.defense,
                   creature.keywords, lane, creature.can_attack)  # fmt: skip
            row = cache.get(key)
            if row is None:
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                row = cache[key] = _creature_bytes(key)
            rows[slot] = row
        pieces += rows

    def _pool(self, state: State) -> np.ndarray:
        cached = self._pool_block
        if cached is not None and cached[0] is state.pool:
            return cached[1]
        width = len(OFFER_FIELDS)
        block = np.zeros(self._offer_rows * width, np.float32)
        for i, card in enumerate(state.pool[: self._offer_rows]):
            block[i * width : i * width + width - 1] = card_row(card)
        self._pool_block = (state.pool, block)
        return block
