"""The rules of one Shared Deck match: pure, deterministic, no I/O.

A :class:`MatchState` knows nothing of players' names, sockets or clocks. It always acts for
the player whose turn it is (``state.current``); who may call it is decided one layer up, in
:mod:`.match`. Every refused action raises :class:`~.errors.GameError` with the protocol's code
and leaves the state unchanged, except that an action other than BLOCK ends the blocking phase
first (as the specification says), even when the action itself is then refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .errors import ErrorCode, GameError

CREATURE: Final = "C"
HEAL: Final = "H"
DAMAGE: Final = "D"
TAKE: Final = "T"
BUFF: Final = "B"
DEACTIVATE: Final = "I"
CARD_TYPES: Final = (CREATURE, HEAL, DAMAGE, TAKE, BUFF, DEACTIVATE)
SPELL_TYPES: Final = (HEAL, DAMAGE, TAKE, BUFF, DEACTIVATE)

TARGET_BOARD: Final = -1
"""PLAY_CARD target of a creature card: put it on the board."""
TARGET_SELF: Final = -5
"""PLAY_CARD target: the player who plays the card."""
TARGET_OPPONENT: Final = -6
"""PLAY_CARD target: that player's opponent."""

MAX_CARD_ID: Final = 1000
MAX_ABS_VALUE: Final = 100


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every number of the game, so that none is hard-wired (spec: keep them configurable)."""

    init_hp: int = 20
    deck_size: int = 80
    turns_per_match: int = 60
    draws_per_turn: int = 2
    burns_per_turn: int = 2
    hand_limit: int = 10

    def __post_init__(self) -> None:
        if self.init_hp <= 0 or self.init_hp % 2:
            # 1.5 * INIT_HP must be whole so that every score is an integer.
            raise ValueError(f"init_hp must be positive and even, got {self.init_hp}")
        if self.turns_per_match < 1:
            raise ValueError("turns_per_match must be at least 1")
        if self.deck_size < 1:
            raise ValueError("deck_size must be at least 1")
        if min(self.draws_per_turn, self.burns_per_turn, self.hand_limit) < 0:
            raise ValueError("card limits must not be negative")


@dataclass(frozen=True, slots=True)
class Card:
    """A card as printed in the deck or a hand: ``ID TYPE AT HP HPMAX COST MANA``.

    Immutable, so one deck tuple is shared by every match of a tournament.
    """

    id: int
    type: str
    attack: int
    hp: int
    hp_max: int
    cost: int
    mana: int

    def validate(self) -> None:
        """Raise ValueError unless the card follows the specification's constraints."""
        if not 0 < self.id <= MAX_CARD_ID:
            raise ValueError(f"card id {self.id} is not in 1..{MAX_CARD_ID}")
        if self.type not in CARD_TYPES:
            raise ValueError(f"card {self.id}: unknown type {self.type!r}")
        values = (self.attack, self.hp, self.hp_max, self.cost, self.mana)
        if any(abs(value) > MAX_ABS_VALUE for value in values):
            raise ValueError(f"card {self.id}: a value is above {MAX_ABS_VALUE} in magnitude")
        if self.cost < 0:
            raise ValueError(f"card {self.id}: negative cost")
        if self.type == CREATURE:
            if not 0 < self.hp <= self.hp_max or self.mana < 0:
                raise ValueError(f"card {self.id}: a creature needs 0 < HP <= HPMAX, MANA >= 0")
        elif self.mana != -1 or (self.attack, self.hp, self.hp_max) != _spell_fields(self):
            raise ValueError(f"card {self.id}: fields do not match the {self.type} spell layout")

    @property
    def line(self) -> str:
        """The card in the protocol's notation."""
        return (
            f"{self.id} {self.type} {self.attack} {self.hp} {self.hp_max} {self.cost} {self.mana}"
        )

    @classmethod
    def parse(cls, line: str) -> Card:
        """Read ``ID TYPE AT HP HPMAX COST MANA`` (extra trailing fields are ignored)."""
        fields = line.split()
        if len(fields) < 7:
            raise ValueError(f"a card needs 7 fields: {line!r}")
        card_id, card_type, attack, hp, hp_max, cost, mana = fields[:7]
        return cls(int(card_id), card_type, int(attack), int(hp), int(hp_max), int(cost), int(mana))


def _spell_fields(card: Card) -> tuple[int, int, int]:
    """The (AT, HP, HPMAX) a well-formed spell of this kind has; unused fields are 0."""
    if card.type == HEAL:
        return (0, card.hp, 0)
    if card.type in (DAMAGE, TAKE):
        return (card.attack, 0, 0)
    if card.type == BUFF:
        return (card.attack, card.hp, 0)
    return (0, 0, 0)


class Creature:
    """A creature on the board: its card's stats, changed by fights and spells."""

    __slots__ = ("active", "attack", "cost", "hp", "hp_max", "id", "mana")

    def __init__(self, card: Card) -> None:
        self.id = card.id
        self.attack = card.attack
        self.hp = card.hp
        self.hp_max = card.hp_max
        self.cost = card.cost
        self.mana = card.mana
        self.active = False  # a creature enters the board inactive

    @property
    def line(self) -> str:
        """The creature with its current stats, in the card notation."""
        return f"{self.id} C {self.attack} {self.hp} {self.hp_max} {self.cost} {self.mana}"


def match_score(my_hp: int, opponent_hp: int, init_hp: int) -> int:
    """``MY_HP - OPP_HP + alpha * INIT_HP``; alpha is 3 for a win, 0 for a loss, else 1.5."""
    if opponent_hp == 0:
        bonus = 3 * init_hp
    elif my_hp == 0:
        bonus = 0
    else:
        bonus = 3 * init_hp // 2
    return my_hp - opponent_hp + bonus


class MatchState:
    """The whole state of one match; sides are 0 (moves first) and 1.

    The deck is a shared tuple read through ``deck_position`` (its top card), so starting a
    match costs nothing whatever the deck's size.
    """

    __slots__ = (
        "attacked_this_turn",
        "attackers",
        "blocked",
        "blocking",
        "boards",
        "burns_left",
        "card_ids",
        "current",
        "deck",
        "deck_position",
        "draws_left",
        "ended",
        "hands",
        "hp",
        "mana",
        "rules",
        "turn_index",
    )

    def __init__(
        self, deck: tuple[Card, ...], rules: RuleSet, card_ids: frozenset[int] | None = None
    ) -> None:
        self.rules = rules
        self.deck = deck
        # Shared by all matches of a tournament when given: a match then starts in O(1).
        self.card_ids = frozenset(card.id for card in deck) if card_ids is None else card_ids
        self.deck_position = 0
        self.hands: tuple[dict[int, Card], dict[int, Card]] = ({}, {})
        self.boards: tuple[dict[int, Creature], dict[int, Creature]] = ({}, {})
        self.hp = [rules.init_hp, rules.init_hp]
        self.current = 0
        self.turn_index = 0
        self.ended = False
        self.mana = 0
        self.draws_left = rules.draws_per_turn
        self.burns_left = rules.burns_per_turn
        self.blocking = True
        self.attackers: list[int] = []
        self.blocked: set[int] = set()
        self.attacked_this_turn: list[int] = []

    # ----------------------------------------------------------------- views
    @property
    def turns_left(self) -> int:
        """Turns left counting the current one; 0 once the match has ended."""
        return 0 if self.ended else self.rules.turns_per_match - self.turn_index

    def deck_cards(self) -> tuple[Card, ...]:
        """The cards still in the deck, top first."""
        return self.deck[self.deck_position :]

    def attacking_creatures(self) -> list[Creature]:
        """The opponent's creatures that attacked in its last turn and are still on the board."""
        board = self.boards[1 - self.current]
        return sorted((board[i] for i in self.attackers if i in board), key=_by_id)

    def score(self, side: int) -> int:
        """The match score of ``side`` from the current health of both players."""
        return match_score(self.hp[side], self.hp[1 - side], self.rules.init_hp)

    # ------------------------------------------------------------- the clock
    def end_turn(self) -> None:
        """Pass the move: close an open blocking phase, then hand the turn to the opponent."""
        if self.ended:
            return
        if self.blocking:
            self.finish_blocking()
            if self.ended:
                return
        self.turn_index += 1
        if self.turn_index >= self.rules.turns_per_match:
            self.ended = True
            return
        self.current = 1 - self.current
        self.mana = 0
        self.draws_left = self.rules.draws_per_turn
        self.burns_left = self.rules.burns_per_turn
        self.blocking = True
        self.attackers = self.attacked_this_turn
        self.attacked_this_turn = []
        self.blocked = set()

    def advance_to(self, turn_index: int) -> None:
        """End turns until ``turn_index`` is reached, quickly when nobody acts.

        After four turns without actions no attack is pending and every creature is active, so
        further idle turns only move the counter and the side to move.
        """
        idle_steps = 0
        while self.turn_index < turn_index and not self.ended:
            if idle_steps == 4:
                skipped = min(turn_index, self.rules.turns_per_match) - self.turn_index
                if self.turn_index + skipped >= self.rules.turns_per_match:
                    self.turn_index = self.rules.turns_per_match
                    self.ended = True
                    return
                self.turn_index += skipped
                if skipped % 2:
                    self.current = 1 - self.current
                return
            self.end_turn()
            idle_steps += 1

    # -------------------------------------------------------------- blocking
    def block(self, attacker_id: int, blocker_id: int) -> None:
        """BLOCK: an own active creature fights one attacker; both hit at once."""
        self._check_running()
        if not self.blocking:
            raise GameError(ErrorCode.BlockingAlreadyFinished)
        opponent_board = self.boards[1 - self.current]
        attacker = opponent_board.get(attacker_id)
        if attacker is None or attacker_id not in self.attackers:
            raise GameError(ErrorCode.NoSuchAttacker)
        blocker = self._own_active_creature(blocker_id)
        attacker.hp -= blocker.attack
        blocker.hp -= attacker.attack
        self.blocked.add(attacker_id)
        if attacker.hp <= 0:
            del opponent_board[attacker_id]
        if blocker.hp <= 0:
            del self.boards[self.current][blocker_id]
        else:
            blocker.active = False

    def finish_blocking(self) -> None:
        """Unblocked attackers hit the current player, then its creatures become active."""
        self.blocking = False
        side = self.current
        opponent_board = self.boards[1 - side]
        for attacker_id in self.attackers:
            attacker = opponent_board.get(attacker_id)
            if attacker is not None and attacker_id not in self.blocked:
                self._hurt_player(side, attacker.attack)
                if self.ended:
                    return
        for creature in self.boards[side].values():
            creature.active = True

    def finish_block(self) -> None:
        """FINISH_BLOCK: end the blocking phase explicitly."""
        self._check_running()
        if not self.blocking:
            raise GameError(ErrorCode.BlockingAlreadyFinished)
        self.finish_blocking()

    def start_action(self) -> None:
        """Called before every action except BLOCK: it ends the blocking phase first."""
        self._check_running()
        if self.blocking:
            self.finish_blocking()
            self._check_running()

    # --------------------------------------------------------------- actions
    def draw(self) -> Card:
        """DRAW_CARD: the deck's top card goes to the current player's hand."""
        self.start_action()
        if self.draws_left <= 0:
            raise GameError(ErrorCode.DrawLimitExceeded)
        if self.deck_position >= len(self.deck):
            raise GameError(ErrorCode.DeckIsEmpty)
        hand = self.hands[self.current]
        if len(hand) >= self.rules.hand_limit:
            raise GameError(ErrorCode.HandLimitExceeded)
        card = self.deck[self.deck_position]
        self.deck_position += 1
        self.draws_left -= 1
        hand[card.id] = card
        return card

    def burn(self) -> Card:
        """BURN_CARD: the deck's top card is thrown away."""
        self.start_action()
        if self.burns_left <= 0:
            raise GameError(ErrorCode.BurnLimitExceeded)
        if self.deck_position >= len(self.deck):
            raise GameError(ErrorCode.DeckIsEmpty)
        card = self.deck[self.deck_position]
        self.deck_position += 1
        self.burns_left -= 1
        return card

    def discard(self, card_id: int) -> None:
        """DISCARD_CARD: a card leaves the current player's hand for good."""
        self.start_action()
        self._own_hand_card(card_id)
        del self.hands[self.current][card_id]

    def add_mana(self, card_id: int) -> None:
        """ADD_MANA: tap an active creature; it becomes inactive and adds its MANA to the pool."""
        self.start_action()
        creature = self._own_active_creature(card_id)
        creature.active = False
        self.mana += creature.mana

    def attack(self, card_id: int) -> None:
        """ATTACK: an active creature attacks; the opponent resolves it in its blocking phase."""
        self.start_action()
        creature = self._own_active_creature(card_id)
        creature.active = False
        self.attacked_this_turn.append(card_id)

    def play(self, card_id: int, target: int) -> None:
        """PLAY_CARD: pay COST from the pool; a creature enters the board, a spell is cast."""
        self.start_action()
        card = self._own_hand_card(card_id)
        side = self.current
        target_creature: Creature | None = None
        if card.type == CREATURE:
            if target != TARGET_BOARD:
                raise GameError(ErrorCode.WrongTarget)
        elif target > 0:
            if card.type == TAKE:
                raise GameError(ErrorCode.WrongTarget)
            target_creature = self.boards[0].get(target) or self.boards[1].get(target)
            if target_creature is None:
                raise GameError(ErrorCode.SpellTargetNotOnBoard)
        elif not _may_target_player(card.type, target):
            raise GameError(ErrorCode.WrongTarget)
        if card.cost > self.mana:
            raise GameError(ErrorCode.NotEnoughMana)
        self.mana -= card.cost
        del self.hands[side][card_id]
        if card.type == CREATURE:
            self.boards[side][card_id] = Creature(card)
        elif target_creature is not None:
            self._cast_on_creature(card, target_creature)
        else:
            self._cast_on_player(card, side if target == TARGET_SELF else 1 - side)

    # --------------------------------------------------------------- helpers
    def _cast_on_creature(self, card: Card, creature: Creature) -> None:
        if card.type == HEAL:
            creature.hp = min(creature.hp + card.hp, creature.hp_max)
        elif card.type == DAMAGE:
            creature.hp -= card.attack
        elif card.type == BUFF:
            creature.attack += card.attack
            creature.hp += card.hp
            creature.hp_max += card.hp
        else:  # DEACTIVATE: nothing happens to an inactive creature, the card is spent anyway
            creature.active = False
        if creature.hp <= 0:
            for board in self.boards:
                board.pop(creature.id, None)

    def _cast_on_player(self, card: Card, side: int) -> None:
        if card.type == HEAL:
            self.hp[side] = min(self.hp[side] + card.hp, self.rules.init_hp)
        elif card.type == DAMAGE:
            self._hurt_player(side, card.attack)
        else:  # TAKE, on the current player only
            self.draws_left += card.attack

    def _hurt_player(self, side: int, damage: int) -> None:
        self.hp[side] = max(0, min(self.hp[side] - damage, self.rules.init_hp))
        if self.hp[side] == 0:
            self.ended = True

    def _check_running(self) -> None:
        if self.ended:
            raise GameError(ErrorCode.GameHasEnded)

    def _locate_foreign(self, card_id: int) -> None:
        """Raise the error for a card that is not where the current player needs it."""
        if card_id not in self.card_ids:
            raise GameError(ErrorCode.NoCardWithSuchId)
        opponent = 1 - self.current
        if card_id in self.hands[opponent] or card_id in self.boards[opponent]:
            raise GameError(ErrorCode.NotYourCard)

    def _own_active_creature(self, card_id: int) -> Creature:
        creature = self.boards[self.current].get(card_id)
        if creature is None:
            self._locate_foreign(card_id)
            raise GameError(ErrorCode.CardNotOnBoard)
        if not creature.active:
            raise GameError(ErrorCode.InactiveCard)
        return creature

    def _own_hand_card(self, card_id: int) -> Card:
        card = self.hands[self.current].get(card_id)
        if card is None:
            self._locate_foreign(card_id)
            raise GameError(ErrorCode.CardNotInHand)
        return card


def _may_target_player(card_type: str, target: int) -> bool:
    """Take aims at its caster only; Heal and Damage at either player; others at no player."""
    if card_type == TAKE:
        return target == TARGET_SELF
    return card_type in (HEAL, DAMAGE) and target in (TARGET_SELF, TARGET_OPPONENT)


def _by_id(creature: Creature) -> int:
    return creature.id
