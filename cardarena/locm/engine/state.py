"""The LOCM game state: deck building and battle, for every rule set.

One :class:`State` holds a whole game. It lists legal actions, applies them,
clones cheaply and tells whose turn it is and who won. Randomness happens only
while the game is created and the decks are shuffled, from the official
seeds, so the same parameters and the same actions always give the same game.

Hot-path notes: cards are immutable and shared; creatures and players are flat
``__slots__`` records copied field by field on :meth:`State.clone`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import IntEnum
from typing import TYPE_CHECKING, Any, NamedTuple

from .cards import (
    BREAKTHROUGH,
    CHARGE,
    DRAIN,
    GUARD,
    LETHAL,
    WARD,
    Area,
    Card,
    CardType,
    DoubleStreams,
    java_double_streams,
)
from .deckbuilding import (
    MAX_COPIES,
    DraftTriple,
    constructed_pool,
    draft_pool_distinct_count,
    draft_triples,
)
from .errors import InvalidStateError
from .javarandom import JavaRandom
from .params import GameParameters, ParameterError, game_parameters, resolve_parameters
from .rules import (
    DECK_SIZE,
    DECKOUT_DAMAGE,
    HAND_LIMIT,
    HEALTH_PER_BONUS_DRAW,
    MAX_MANA,
    RUNES,
    STARTING_HEALTH,
    TURN_LIMIT,
    RuleSet,
    ruleset,
)

if TYPE_CHECKING:
    from .views import PlayerView


class IllegalActionError(ValueError):
    """An action that is not legal in the current state was applied."""


class Phase(IntEnum):
    DECK_BUILDING = 0
    BATTLE = 1
    ENDED = 2


class EndReason(IntEnum):
    """Why a game ended (kaggle-style fixed status values)."""

    NONE = 0
    HEALTH = 1
    """A player's health reached 0 or less during an action."""
    DECK_OUT = 2
    """The loser died in its own draw step from drawing on an empty deck."""
    TURN_LIMIT = 3
    """The loser died in its own draw step from its 51st turn on."""
    INVALID_OUTPUT = 4
    TIMEOUT = 5
    ABORTED_TIME_QUOTA = 6
    """The SDK's 30 s total-time quota ran out: no result (reachable in 1.2)."""
    ABORTED_EMPTY_LINE = 7
    """1.0/1.2: an empty answer line makes the official runner abort: no result."""
    FRAME_LIMIT = 8
    """The SDK's 1400-frame limit: no winner."""


class ActionType(IntEnum):
    PASS = 0
    SUMMON = 1
    ATTACK = 2
    USE = 3
    PICK = 4
    CHOOSE = 5


_ACTION_NAMES = tuple(kind.name for kind in ActionType)


class Action(NamedTuple):
    """One action. ``id``/``target`` mean: SUMMON card id/lane (lane -1 in 1.0),
    ATTACK attacker/target (-1 = opponent), USE item/target, PICK index 0-2,
    CHOOSE baseId. In battle, PASS through :meth:`State.apply` ends the turn.

    ``type`` is an :class:`ActionType` number; the engine stores plain ints (they
    compare equal to the enum members and are faster on the hot path).
    """

    type: int
    id: int = -1
    target: int = -1

    def __str__(self) -> str:
        kind = self.type
        if kind == ActionType.PASS:
            return "PASS"
        if kind == ActionType.SUMMON:
            return f"SUMMON {self.id}" if self.target < 0 else f"SUMMON {self.id} {self.target}"
        if kind == ActionType.PICK or kind == ActionType.CHOOSE:
            return f"{_ACTION_NAMES[kind]} {self.id}"
        return f"{_ACTION_NAMES[kind]} {self.id} {self.target}"

    def __repr__(self) -> str:
        return f"Action(ActionType.{_ACTION_NAMES[self.type]}, {self.id}, {self.target})"


PASS = Action(ActionType.PASS)
_DECK_BUILDING, _BATTLE, _ENDED = Phase.DECK_BUILDING, Phase.BATTLE, Phase.ENDED
# Plain ints on the hot path: comparing an int with an IntEnum member costs twice as much.
_PASS_TYPE, _SUMMON, _ATTACK, _USE, _PICK, _CHOOSE = (int(kind) for kind in ActionType)
_CREATURE, _GREEN, _BLUE = (int(kind) for kind in (CardType.CREATURE, CardType.GREEN_ITEM,
                                                    CardType.BLUE_ITEM))  # fmt: skip
_new_action = tuple.__new__
"""``_new_action(Action, (type, id, target))`` skips NamedTuple's Python-level __new__."""
_PICK_ACTIONS = tuple(Action(_PICK, index) for index in range(3))
_ACTION_ROWS: tuple[dict[int, dict[int, Action]], ...] = ({}, {}, {}, {})
"""Battle actions are values, built once and shared: ``_ACTION_ROWS[type][id][target]``."""
_MAX_ACTION_ROWS = 4096


def _action_row(kind: int, card_id: int) -> dict[int, Action]:
    rows = _ACTION_ROWS[kind]
    row = rows.get(card_id)
    if row is None:
        if len(rows) >= _MAX_ACTION_ROWS:  # only hand-made positions with odd ids get here
            rows.clear()
        row = rows[card_id] = {}
    return row


class CardInstance(NamedTuple):
    """A card with its instance id, as it sits in a deck or hand."""

    id: int
    card: Card


class Creature:
    """A creature on the board: the only mutable card-like record."""

    __slots__ = (
        "attack",
        "can_attack",
        "card",
        "defense",
        "has_attacked",
        "id",
        "keywords",
        "lane",
        "shows_effects",
    )

    def __init__(self, instance_id: int, card: Card, lane: int) -> None:
        self.id = instance_id
        self.card = card
        self.lane = lane
        self.attack = card.attack
        self.defense = card.defense
        self.keywords = card.keywords
        self.can_attack = bool(card.keywords & CHARGE)
        self.has_attacked = False
        self.shows_effects = True
        """1.0/1.2 quirk: False once the creature survived an attack or an item."""

    def copy(self) -> Creature:
        new = Creature(self.id, self.card, self.lane)
        new.attack = self.attack
        new.defense = self.defense
        new.keywords = self.keywords
        new.can_attack = self.can_attack
        new.has_attacked = self.has_attacked
        new.shows_effects = self.shows_effects
        return new

    def __repr__(self) -> str:
        return (
            f"Creature(id={self.id} #{self.card.base_id} {self.attack}/{self.defense} "
            f"kw={self.keywords} lane={self.lane} can_attack={self.can_attack})"
        )


class Player:
    """One player's mutable state."""

    __slots__ = (
        "board",
        "bonus_mana_turns",
        "choosable",
        "chosen",
        "chosen_counts",
        "deck",
        "draw_shown",
        "hand",
        "health",
        "health_lost",
        "mana",
        "max_mana",
        "next_turn_draw",
        "performed",
        "runes",
    )

    def __init__(self, index: int, runes: bool) -> None:
        self.health = STARTING_HEALTH
        self.max_mana = index  # P1 starts one ahead: the second player's bonus
        self.mana = index
        self.bonus_mana_turns = index
        self.hand: list[CardInstance] = []
        self.deck: list[CardInstance] = []
        self.board: list[Creature] = []
        self.runes: list[int] = list(RUNES) if runes else []
        self.next_turn_draw = 1
        self.draw_shown = 1
        self.health_lost = 0
        self.performed: list[tuple[int, Action]] = []
        """(baseId, action) of each action executed in this player's last turn."""
        self.chosen: list[Card] = []
        """Deck-building choices, in order."""
        self.chosen_counts: dict[int, int] = {}
        """How many copies of each baseId were chosen."""
        self.choosable: tuple[Action, ...] | None = None
        """1.5: cached CHOOSE actions still open to this player (None: recompute)."""

    def copy(self) -> Player:
        new = Player(0, False)  # every field is overwritten below
        new.health = self.health
        new.max_mana = self.max_mana
        new.mana = self.mana
        new.bonus_mana_turns = self.bonus_mana_turns
        new.hand = self.hand.copy()
        new.deck = self.deck.copy()
        new.board = [creature.copy() for creature in self.board]
        new.runes = self.runes.copy()
        new.next_turn_draw = self.next_turn_draw
        new.draw_shown = self.draw_shown
        new.health_lost = self.health_lost
        new.performed = self.performed.copy()
        new.chosen = self.chosen.copy()
        new.chosen_counts = self.chosen_counts.copy()
        new.choosable = self.choosable
        return new

    @property
    def next_rune(self) -> int:
        return self.runes[0] if self.runes else 0


class State:
    """A whole LOCM game: create it with :meth:`new`, then ``apply`` actions."""

    __slots__ = (
        "active",
        "draft",
        "end_reason",
        "league",
        "params",
        "phase",
        "players",
        "pool",
        "pool_actions",
        "pool_by_id",
        "rules",
        "turn",
        "winner",
    )

    rules: RuleSet
    params: GameParameters
    league: int
    draft: tuple[DraftTriple, ...]
    pool: tuple[Card, ...]
    pool_actions: tuple[Action, ...]
    """1.5: the CHOOSE action of each pool card, in pool order (shared by clones)."""
    pool_by_id: dict[int, Card]
    players: tuple[Player, Player]
    phase: Phase
    active: int
    turn: int
    winner: int | None
    end_reason: EndReason

    def __init__(
        self,
        rules: RuleSet,
        params: GameParameters,
        league: int,
        draft: tuple[DraftTriple, ...],
        pool: tuple[Card, ...],
        pool_actions: tuple[Action, ...],
        pool_by_id: dict[int, Card],
        players: tuple[Player, Player],
        phase: Phase,
        active: int,
        turn: int,
        winner: int | None = None,
        end_reason: EndReason = EndReason.NONE,
    ) -> None:
        """Every field given; use :meth:`new` (or :meth:`new_battle`) to start a game."""
        self.rules = rules
        self.params = params
        self.league = league
        self.draft = draft
        self.pool = pool
        self.pool_actions = pool_actions
        self.pool_by_id = pool_by_id
        self.players = players
        self.phase = phase
        self.active = active
        self.turn = turn
        self.winner = winner
        self.end_reason = end_reason

    @classmethod
    def new(
        cls,
        version: str | RuleSet | None = None,
        params: Mapping[str, object] | GameParameters | None = None,
        league: int = 4,
        card_streams: DoubleStreams = java_double_streams,
    ) -> State:
        """A new game at the start of deck building.

        ``params`` are the official game parameters (``{"seed": 42}``, ...); absent
        seeds are derived or drawn at random, and :attr:`params` keeps what was used.
        Resolved :class:`GameParameters` carry their version; without them, ``version``
        defaults to the latest.
        ``league`` is the CodinGame league level of the 1.0 draft pool (4 = all cards).
        ``card_streams`` draws the 1.5 card generator's numbers (the envs pass a numpy one).
        An unknown version, a malformed parameter or a league the version does not have
        raises :class:`InvalidStateError` (:class:`ParameterError` for parameters).
        """
        resolved, rules = _checked_new_arguments(version, params, league, card_streams)
        draft: tuple[DraftTriple, ...] = ()
        pool: tuple[Card, ...] = ()
        if rules.draft:
            draft = draft_triples(resolved, league)
        else:
            pool = constructed_pool(resolved, card_streams)
        return cls(
            rules,
            resolved,
            league,
            draft,
            pool,
            tuple([_new_action(Action, (_CHOOSE, card.base_id, -1)) for card in pool]),
            {card.base_id: card for card in pool},
            (Player(0, rules.runes), Player(1, rules.runes)),
            _DECK_BUILDING,
            0,
            -1,
        )

    @classmethod
    def new_battle(cls, version: str | RuleSet = "1.5") -> State:
        """An empty battle (no cards anywhere), for positions built by hand or from text.

        Its parameters are all-zero seeds: such a state cannot be replayed from them.
        """
        rules = _checked_rules(version)
        players = (Player(0, rules.runes), Player(1, rules.runes))
        params = resolve_parameters(rules, {"seed": 0})
        return cls(rules, params, 4, (), (), (), {}, players, _BATTLE, 0, 0)

    @classmethod
    def from_input(
        cls,
        version: str,
        text: str,
        player: int,
        player_turn: int = 0,
        my_deck: Sequence[Card] | None = None,
    ) -> State:
        """Rebuild a battle state from the text ``player`` received (see :mod:`.text`)."""
        from .text import state_from_input

        return state_from_input(version, text, player, player_turn, my_deck)

    # --- the research API --------------------------------------------------------

    @property
    def version(self) -> str:
        return self.rules.version

    @property
    def current_player(self) -> int:
        """The player to act: in deck building the one with fewer choices (P0 first)."""
        if self.phase is _DECK_BUILDING:
            p0, p1 = self.players
            return 1 if len(p1.chosen) < len(p0.chosen) else 0
        return self.active

    @property
    def is_terminal(self) -> bool:
        return self.phase is _ENDED

    def returns(self) -> tuple[float, float]:
        """+1 for the winner, -1 for the loser, 0 each while running or without winner."""
        if self.winner is None:
            return (0.0, 0.0)
        return (1.0, -1.0) if self.winner == 0 else (-1.0, 1.0)

    def clone(self) -> State:
        p0, p1 = self.players
        return State(
            self.rules,
            self.params,
            self.league,
            self.draft,
            self.pool,
            self.pool_actions,
            self.pool_by_id,
            (p0.copy(), p1.copy()),
            self.phase,
            self.active,
            self.turn,
            self.winner,
            self.end_reason,
        )

    def __copy__(self) -> State:
        return self.clone()

    def __deepcopy__(self, memo: dict[int, Any]) -> State:
        return self.clone()

    def legal_actions(self) -> list[Action]:
        """Every legal action of the player to act, in a fixed order; [] once ended."""
        phase = self.phase
        if phase is _BATTLE:
            return self._battle_actions()
        if phase is _DECK_BUILDING:
            if self.rules.draft:
                return list(_PICK_ACTIONS)
            player = self.players[self.current_player]
            if player.choosable is None:
                counts = player.chosen_counts
                player.choosable = tuple(
                    [
                        action
                        for action, card in zip(self.pool_actions, self.pool, strict=True)
                        if counts.get(card.base_id, 0) < MAX_COPIES
                    ]
                )
            return list(player.choosable)
        return []

    def is_legal(self, action: Action) -> bool:
        phase = self.phase
        if phase is _BATTLE:
            if action.type == _PASS_TYPE:
                return action.id == -1 == action.target
            return self._battle_legal(action)
        if phase is _DECK_BUILDING:
            if self.rules.draft:
                return action in _PICK_ACTIONS
            return self._choice_legal(self.current_player, action)
        return False

    def _choice_legal(self, player: int, action: Action) -> bool:
        """1.5: may ``player`` CHOOSE now (a pool card it holds fewer than 2 copies of)?"""
        return (
            action.type == _CHOOSE
            and action.target == -1
            and action.id in self.pool_by_id
            and self.players[player].chosen_counts.get(action.id, 0) < MAX_COPIES
        )

    def apply(self, action: Action) -> None:
        """Apply one action of :attr:`current_player`; raise IllegalActionError if illegal."""
        if type(action) is not Action and not isinstance(action, Action):
            raise TypeError(f"expected an Action, got {type(action).__name__}")
        phase = self.phase
        if phase is _BATTLE:
            if action.type == _PASS_TYPE and action.id == -1 == action.target:
                self.start_turn()
            elif self._battle_legal(action):
                self.execute(action)
            else:
                raise IllegalActionError(
                    f"{action} is not legal for player {self.active} at turn {self.turn}"
                )
            return
        if phase is _ENDED:
            raise IllegalActionError(f"the game has ended; cannot apply {action}")
        player = self.current_player
        if self.rules.draft:
            if action.type == _PICK and action.target == -1 and 0 <= action.id <= 2:
                self.add_choice(player, self.draft[len(self.players[player].chosen)][action.id])
                return
        elif self._choice_legal(player, action):
            self.add_choice(player, self.pool_by_id[action.id])
            return
        raise IllegalActionError(
            f"{action} is not a legal deck-building action for player {player} "
            f"in LOCM {self.version}"
        )

    def random_action(self, draw: Callable[[], float]) -> Action:
        """``legal_actions()[int(draw() * len(legal_actions()))]`` without building the list.

        What :class:`~cardarena.locm.agents.RandomAgent` plays (the same draw, the same
        action); deck building picks straight from the cached choices. ValueError once ended.
        """
        phase = self.phase
        if phase is _DECK_BUILDING:
            if self.rules.draft:
                return _PICK_ACTIONS[int(draw() * 3)]
            player = self.players[self.current_player]
            choosable = player.choosable
            if choosable is None:
                self.legal_actions()  # fills the cache
                choosable = player.choosable
                assert choosable is not None
            return choosable[int(draw() * len(choosable))]
        actions = self._battle_actions() if phase is _BATTLE else []
        if not actions:
            raise ValueError("the game has ended: there is no legal action")
        return actions[int(draw() * len(actions))]

    def _random_picks(self, draws: tuple[Callable[[], float] | None, ...]) -> None:
        """Deck building by uniform random picks while the player to choose has a draw
        (``draws[player]``, None: someone else decides): :meth:`random_action` then
        :meth:`_apply_legal` pick after pick, in one loop (the envs' reset)."""
        p0, p1 = self.players
        draft = self.draft if self.rules.draft else None
        while self.phase is _DECK_BUILDING:
            player = 1 if len(p1.chosen) < len(p0.chosen) else 0
            draw = draws[player]
            if draw is None:
                return
            chooser = p1 if player else p0
            if draft is not None:
                self.add_choice(player, draft[len(chooser.chosen)][int(draw() * 3)])
                continue
            choosable = chooser.choosable
            if choosable is None:
                self.legal_actions()  # fills the cache
                choosable = chooser.choosable
                assert choosable is not None
            action = choosable[int(draw() * len(choosable))]
            self.add_choice(player, self.pool_by_id[action.id])

    def _apply_legal(self, action: Action) -> None:
        """Apply an action taken from :meth:`legal_actions` (or :meth:`random_action`) of
        this very state, skipping the legality check :meth:`apply` would repeat.

        Internal: for callers that hold the legal list already (the envs). Anything
        else must go through :meth:`apply`.
        """
        if self.phase is _BATTLE:
            if action.type == _PASS_TYPE:
                self.start_turn()
            else:
                self.execute(action)
            return
        player = self.current_player
        if self.rules.draft:
            self.add_choice(player, self.draft[len(self.players[player].chosen)][action.id])
        else:
            self.add_choice(player, self.pool_by_id[action.id])

    # --- deck building -----------------------------------------------------------

    def add_choice(self, player: int, card: Card) -> None:
        """Add a card to a player's deck choices; start the battle once both have 30."""
        chosen = self.players[player].chosen
        if len(chosen) >= DECK_SIZE:
            raise IllegalActionError(f"player {player} has already chosen {DECK_SIZE} cards")
        chosen.append(card)
        chooser = self.players[player]
        counts = chooser.chosen_counts
        counts[card.base_id] = copies = counts.get(card.base_id, 0) + 1
        choosable = chooser.choosable
        if copies >= MAX_COPIES and choosable is not None:
            # The card's CHOOSE closes: drop it from the cache (recompute if listed twice).
            closed = _new_action(Action, (_CHOOSE, card.base_id, -1))
            if choosable.count(closed) == 1:
                i = choosable.index(closed)
                chooser.choosable = choosable[:i] + choosable[i + 1 :]
            else:
                chooser.choosable = None
        if len(self.players[0].chosen) == DECK_SIZE == len(self.players[1].chosen):
            self._start_battle()

    def _start_battle(self) -> None:
        rules, params = self.rules, self.params
        next_id = 0
        for index, player in enumerate(self.players):
            if rules.ids_after_shuffle:
                cards = list(player.chosen)
                JavaRandom(params.seeds[f"shufflePlayer{index}Seed"]).shuffle(cards)
                deck = [
                    _new_action(CardInstance, (2 * i + index + 1, card))  # no NamedTuple call
                    for i, card in enumerate(cards)
                ]
            else:
                deck = []
                for card in player.chosen:
                    deck.append(CardInstance(next_id, card))
                    next_id += 2
                JavaRandom(params.seeds[f"shufflePlayer{index}Seed"]).shuffle(deck)
            hand_size = 4 + index
            player.hand = deck[:hand_size]
            player.deck = deck[hand_size:]
        self.phase = Phase.BATTLE
        self.active = 1
        self.turn = -1
        self.start_turn()

    def draft_pool_size(self) -> int:
        """Distinct cards the draft could offer (drives the official 'show draft' frames)."""
        return draft_pool_distinct_count(self.draft, self.params, self.league)

    # --- battle: legality ----------------------------------------------------------

    def _battle_actions(self) -> list[Action]:
        active = self.active
        me = self.players[active]
        opp = self.players[1 - active]
        actions = [PASS]
        append = actions.append
        my_board = me.board
        opp_board = opp.board
        items: list[CardInstance] = []
        if me.hand:
            mana = me.mana
            summonable: list[int] = []
            for inst in me.hand:
                card = inst.card
                if card.cost <= mana:
                    if card.type == _CREATURE:
                        summonable.append(inst.id)
                    else:
                        items.append(inst)
            if summonable:
                rules = self.rules
                capacity = rules.lane_capacity
                lanes_open: tuple[int, ...]
                if rules.has_lanes:
                    left = 0
                    for creature in my_board:
                        if creature.lane == 0:
                            left += 1
                    if left < capacity:
                        lanes_open = (0, 1) if len(my_board) - left < capacity else (0,)
                    else:
                        lanes_open = (1,) if len(my_board) - left < capacity else ()
                else:
                    lanes_open = (-1,) if len(my_board) < capacity else ()
                summon_rows = _ACTION_ROWS[_SUMMON]
                for lane in lanes_open:
                    for card_id in summonable:
                        row = summon_rows.get(card_id) or _action_row(_SUMMON, card_id)
                        action = row.get(lane)
                        if action is None:
                            action = row[lane] = _new_action(Action, (_SUMMON, card_id, lane))
                        append(action)
        lanes: list[list[int]] | None = None
        for creature in my_board:
            if not creature.can_attack:
                continue
            if lanes is None:
                # Per lane: the Guard ids if any, else the face (-1) and every creature.
                lanes = [[-1], [-1]]
                guards: list[list[int]] = [[], []]
                for c in opp_board:
                    lanes[c.lane].append(c.id)
                    if c.keywords & GUARD:
                        guards[c.lane].append(c.id)
                if guards[0]:
                    lanes[0] = guards[0]
                if guards[1]:
                    lanes[1] = guards[1]
            attacker = creature.id
            row = _ACTION_ROWS[_ATTACK].get(attacker) or _action_row(_ATTACK, attacker)
            for target in lanes[creature.lane]:
                action = row.get(target)
                if action is None:
                    action = row[target] = _new_action(Action, (_ATTACK, attacker, target))
                append(action)
        for inst in items:
            kind = inst.card.type
            item = inst.id
            if kind == _GREEN:
                targets = [c.id for c in my_board]
            elif kind == _BLUE:
                targets = [-1, *(c.id for c in opp_board)]
            else:
                targets = [c.id for c in opp_board]
            row = _ACTION_ROWS[_USE].get(item) or _action_row(_USE, item)
            for target in targets:
                action = row.get(target)
                if action is None:
                    action = row[target] = _new_action(Action, (_USE, item, target))
                append(action)
        return actions

    def _battle_legal(self, action: Action) -> bool:
        """Exactly: is ``action`` among :meth:`_battle_actions` (without building them)."""
        me, opp = self.players[self.active], self.players[1 - self.active]
        kind = action.type
        if kind == _ATTACK:
            attacker = _find(me.board, action.id)
            if attacker is None or not attacker.can_attack:
                return False
            lane = attacker.lane
            target_id = action.target
            target = None
            guarded = False
            for c in opp.board:
                if c.lane == lane:
                    if c.keywords & GUARD:
                        guarded = True
                    if c.id == target_id:
                        target = c
            if target_id == -1:
                return not guarded
            return target is not None and (not guarded or bool(target.keywords & GUARD))
        if kind == _SUMMON:
            inst = _find_in_hand(me.hand, action.id)
            if inst is None or inst.card.type != _CREATURE or inst.card.cost > me.mana:
                return False
            if not self.rules.has_lanes:
                return action.target == -1 and len(me.board) < self.rules.lane_capacity
            lane = action.target
            if lane not in (0, 1):
                return False
            return sum(1 for c in me.board if c.lane == lane) < self.rules.lane_capacity
        if kind == _USE:
            inst = _find_in_hand(me.hand, action.id)
            if inst is None:
                return False
            card = inst.card
            if card.type == _CREATURE or card.cost > me.mana:
                return False
            if card.type == _GREEN:
                return _find(me.board, action.target) is not None
            if action.target == -1:
                return card.type == _BLUE
            return _find(opp.board, action.target) is not None
        return False

    # --- battle: effects -----------------------------------------------------------

    def execute(self, action: Action) -> None:
        """Execute a legal SUMMON/ATTACK/USE of the active player (no legality check)."""
        me = self.players[self.active]
        opp = self.players[1 - self.active]
        kind = action.type
        if kind == _ATTACK:
            attacker = _find(me.board, action.id)
            assert attacker is not None
            base_id = attacker.card.base_id
            if action.target == -1:
                my_delta, opp_delta = self._attack_face(attacker)
            else:
                defender = _find(opp.board, action.target)
                assert defender is not None
                my_delta, opp_delta = self._attack_creature(me, attacker, opp, defender)
            draw_delta = 0
        else:
            inst = _find_in_hand(me.hand, action.id)
            assert inst is not None
            card = inst.card
            base_id = card.base_id
            me.hand.remove(inst)
            me.mana -= card.cost
            if kind == _SUMMON:
                copies = self._summon(me, inst, action.target)
            elif action.target == -1:  # blue item on the opponent
                self._modify_health(me, card.my_health)
                self._modify_health(opp, card.defense + card.opp_health)
                me.next_turn_draw += card.draw
                me.performed.append((base_id, action))
                self._check_winner()
                return
            else:
                copies = self._use_item(me, opp, card, action.target)
            my_delta = copies * card.my_health
            opp_delta = copies * card.opp_health
            draw_delta = copies * card.draw
        if my_delta:  # a zero delta changes nothing (no rune, no bonus draw)
            self._modify_health(me, my_delta)
        if opp_delta:
            self._modify_health(opp, opp_delta)
        me.next_turn_draw += draw_delta
        me.performed.append((base_id, action))
        if me.health <= 0 or opp.health <= 0:
            self._check_winner()

    def _summon(self, me: Player, inst: CardInstance, lane: int) -> int:
        card = inst.card
        if lane < 0:
            lane = 0  # 1.0: one board, every creature in lane 0
        me.board.append(Creature(inst.id, card, lane))
        if not self.rules.area_effects or card.area == Area.TARGET:
            return 1
        clone_lane = lane if card.area == Area.LANE1 else 1 - lane
        if sum(1 for c in me.board if c.lane == clone_lane) < self.rules.lane_capacity:
            me.board.append(Creature(inst.id + 1, card, clone_lane))
            return 2
        return 1

    def _attack_face(self, attacker: Creature) -> tuple[int, int]:
        attacker.can_attack = False
        attacker.has_attacked = True
        attacker.shows_effects = False
        attack = attacker.attack
        return (attack if attacker.keywords & DRAIN else 0), -attack

    def _attack_creature(
        self, me: Player, attacker: Creature, opp: Player, defender: Creature
    ) -> tuple[int, int]:
        a_kw, d_kw = attacker.keywords, defender.keywords
        a_att, d_att = attacker.attack, defender.attack
        attacker.can_attack = False
        attacker.has_attacked = True
        if d_kw & WARD and a_att > 0:
            defender.keywords = d_kw & ~WARD
        if a_kw & WARD and d_att > 0:
            attacker.keywords = a_kw & ~WARD
        dealt = 0 if d_kw & WARD else a_att
        taken = 0 if a_kw & WARD else d_att
        gain = breakthrough = 0
        defender_dies = dealt >= defender.defense
        if a_kw & BREAKTHROUGH and defender_dies:
            breakthrough = defender.defense - dealt
        if a_kw & LETHAL and dealt > 0:
            defender_dies = True
        if a_kw & DRAIN and dealt > 0:
            gain = a_att
        attacker_dies = taken >= attacker.defense
        if d_kw & LETHAL and taken > 0:
            attacker_dies = True
        if defender_dies:
            opp.board.remove(defender)
        else:
            defender.defense -= dealt
            defender.shows_effects = False
        if attacker_dies:
            me.board.remove(attacker)
        else:
            attacker.defense -= taken
            attacker.shows_effects = False
        return gain, breakthrough

    def _use_item(self, me: Player, opp: Player, item: Card, target_id: int) -> int:
        """Apply an item to its target (and its area in 1.5); return how many it hit."""
        side = me if item.type == _GREEN else opp
        target = _find(side.board, target_id)
        assert target is not None
        if not self.rules.area_effects or item.area == Area.TARGET:
            affected = [target]
        elif item.area == Area.LANE1:
            affected = [c for c in side.board if c.lane == target.lane]
        else:
            affected = list(side.board)
        green = item.type == _GREEN
        for creature in affected:
            if green:
                creature.keywords |= item.keywords
                if item.keywords & CHARGE:
                    creature.can_attack = not creature.has_attacked
            else:
                creature.keywords &= ~item.keywords
            creature.attack = max(0, creature.attack + item.attack)
            if creature.keywords & WARD and item.defense < 0:
                creature.keywords &= ~WARD
            else:
                creature.defense += item.defense
            if creature.defense <= 0:
                side.board.remove(creature)
            else:
                creature.shows_effects = False
        return len(affected)

    def _modify_health(self, player: Player, delta: int) -> None:
        player.health += delta
        if delta >= 0:
            return
        if self.rules.runes:
            runes = player.runes
            while runes and player.health <= runes[0]:
                runes.pop(0)
                player.next_turn_draw += 1
        else:
            lost_before = player.health_lost
            player.health_lost = lost_before - delta
            player.next_turn_draw += (
                player.health_lost // HEALTH_PER_BONUS_DRAW - lost_before // HEALTH_PER_BONUS_DRAW
            )

    def _check_winner(self) -> None:
        if self.winner is not None:
            return
        active = self.active
        if self.players[1 - active].health <= 0:
            self._finish(active, EndReason.HEALTH)
        elif self.players[active].health <= 0:
            self._finish(1 - active, EndReason.HEALTH)

    def _finish(self, winner: int | None, reason: EndReason) -> None:
        self.winner = winner
        self.end_reason = reason
        self.phase = Phase.ENDED

    # --- turns -------------------------------------------------------------------

    def end_turn(self) -> None:
        """End the active player's turn and run the next player's start of turn."""
        if self.phase != Phase.BATTLE:
            raise IllegalActionError("end_turn outside the battle")
        self.start_turn()

    def start_turn(self) -> None:
        """The official start-of-turn procedure (rules §7), exactly in its order."""
        self._check_winner()
        if self.winner is not None:
            return
        previous = self.players[self.active]
        for creature in previous.board:
            creature.can_attack = False
            creature.has_attacked = False
        previous.draw_shown = previous.next_turn_draw
        self.active = active = 1 - self.active
        player = self.players[active]
        player.performed = []
        self.turn += 1
        cap = MAX_MANA + (1 if player.bonus_mana_turns > 0 else 0)
        if player.max_mana < cap:
            player.max_mana += 1
        if player.bonus_mana_turns > 0 and player.mana == 0:
            player.bonus_mana_turns -= 1
            if player.bonus_mana_turns == 0:
                player.max_mana -= 1
        player.mana = player.max_mana
        for creature in player.board:
            creature.can_attack = True
        player_turn = self.turn // 2
        self._draw_cards(player, player.next_turn_draw, player_turn)
        player.draw_shown = player.next_turn_draw
        player.next_turn_draw = 1
        player.health_lost = 0
        if player.health <= 0:
            reason = EndReason.TURN_LIMIT if player_turn >= TURN_LIMIT else EndReason.DECK_OUT
            self._finish(1 - active, reason)

    def _draw_cards(self, player: Player, count: int, player_turn: int) -> None:
        hand, deck = player.hand, player.deck
        if self.rules.runes:
            for _ in range(count):
                if not deck or player_turn >= TURN_LIMIT:
                    player.health = player.runes.pop(0) if player.runes else 0
                    continue
                if len(hand) == HAND_LIMIT:
                    break
                hand.append(deck.pop(0))
            return
        if player_turn >= TURN_LIMIT:
            player.health -= DECKOUT_DAMAGE
        for _ in range(count):
            if len(hand) == HAND_LIMIT:
                continue
            if deck:
                hand.append(deck.pop(0))
            else:
                player.health -= DECKOUT_DAMAGE

    # --- ending from outside (protocol errors, SDK limits) -----------------------

    def forfeit(self, loser: int, reason: EndReason) -> None:
        """End the game because ``loser`` broke the protocol (invalid output, timeout).

        A player already dead from its own draw step stays the loser either way.
        """
        self.winner = 1 - loser
        self.end_reason = reason
        self.phase = Phase.ENDED

    def abort(self, reason: EndReason) -> None:
        """End the game with no result (SDK quota, frame limit, empty 1.0/1.2 line)."""
        self.winner = None
        self.end_reason = reason
        self.phase = Phase.ENDED

    # --- views and serialisation (see :mod:`.text`) ---------------------------

    def input_text(self, player: int) -> str:
        """The exact text the official referee would send ``player`` now."""
        from .text import player_input

        return player_input(self, player)

    def view(self, player: int) -> PlayerView:
        """What ``player`` can see: no deck order, no opponent hand."""
        from .views import player_view

        return player_view(self, player)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready snapshot; :meth:`from_dict` rebuilds an equal state."""
        from .views import state_to_dict

        return state_to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], version: str | None = None) -> State:
        from .views import state_from_dict

        return state_from_dict(data, version)

    def __repr__(self) -> str:
        p0, p1 = self.players
        return (
            f"<State LOCM {self.version} {self.phase.name.lower()} turn={self.turn} "
            f"active={self.active} hp={p0.health}/{p1.health} winner={self.winner}>"
        )


def _find(board: Sequence[Creature], instance_id: int) -> Creature | None:
    for creature in board:
        if creature.id == instance_id:
            return creature
    return None


def _find_in_hand(hand: Iterable[CardInstance], instance_id: int) -> CardInstance | None:
    for inst in hand:
        if inst.id == instance_id:
            return inst
    return None


def _checked_rules(version: object) -> RuleSet:
    if not isinstance(version, str | RuleSet):
        kind = type(version).__name__
        raise InvalidStateError(f"version: expected a version string, got a {kind}")
    try:
        return ruleset(version)
    except ValueError as error:
        raise InvalidStateError(f"version: {error}") from None


def _checked_new_arguments(
    version: object, params: object, league: object, card_streams: object
) -> tuple[GameParameters, RuleSet]:
    """:meth:`State.new`'s arguments checked: the resolved parameters and their rules."""
    if version is not None:
        _checked_rules(version)
    if params is not None and not isinstance(params, Mapping | GameParameters):
        raise InvalidStateError(
            f"params: expected a mapping of game parameters, got {type(params).__name__}"
        )
    try:
        resolved = game_parameters(version, params)  # type: ignore[arg-type]
    except ParameterError:
        raise
    except ValueError as error:
        raise InvalidStateError(f"params: {error}") from None
    rules = ruleset(resolved.version)
    if not isinstance(league, int) or isinstance(league, bool):
        raise InvalidStateError(f"league: expected an int, got {league!r}")
    try:
        rules.check_league(league)
    except ValueError as error:
        raise InvalidStateError(f"league: {error}") from None
    if not callable(card_streams):
        raise InvalidStateError("card_streams: expected a callable")
    return resolved, rules
