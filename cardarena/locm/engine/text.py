"""The bot input text, both ways: what the official referee sends, and a state read back.

The writers give each input block byte for byte as the official referees send it
(the conformance recordings check every one); the readers rebuild cards and a battle
state from such a block, for bots that search (:meth:`State.from_input`) and for
``locm bot``. One card-line parser serves every reader.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import ABILITIES_TEXT, CARD_LIST, Area, Card, CardType, keywords_from_text
from .errors import InvalidStateError
from .rules import (
    DECK_SIZE,
    HAND_LIMIT,
    MAX_MANA,
    RULESETS,
    RUNES,
    STARTING_HEALTH,
    RuleSet,
    ruleset,
)
from .state import Action, ActionType, CardInstance, Creature, Phase, Player, State
from .validation import (
    JAVA_INT_MAX,
    MAX_DRAWS,
    MAX_PERFORMED,
    check_state,
    expect_int,
    show,
)

JAVA_WHITESPACE = "".join(chr(code) for code in range(33))
"""What Java's ``String.trim`` removes: every character up to U+0020."""


# --- input text ------------------------------------------------------------------


def _block(lines: list[str]) -> str:
    """The SDK joins a turn's lines, trims the whole block and ends it with a newline."""
    return "\n".join(lines).strip(JAVA_WHITESPACE) + "\n"


def _card_tail(card: Card, lane: int, rules: RuleSet) -> str:
    """The version-dependent end of a card line: [area] [lane], then a trailing space."""
    if rules.area_effects:
        return f" {card.area} {lane} "
    return f" {lane} " if rules.has_lanes else " "


def card_line(card: Card, instance_id: int, rules: RuleSet) -> str:
    """A card not on the board (offered or in hand): location 0, lane -1."""
    return (
        f"{card.base_id} {instance_id} 0 {card.type} {card.cost} {card.attack} {card.defense} "
        f"{ABILITIES_TEXT[card.keywords]} {card.my_health} {card.opp_health} {card.draw}"
        + _card_tail(card, -1, rules)
    )


def offered_card_line(card: Card, rules: RuleSet) -> str:
    """A card shown during deck building: instance id -1."""
    return card_line(card, -1, rules)


def _creature_line(creature: Creature, location: int, rules: RuleSet) -> str:
    card = creature.card
    if creature.shows_effects or not rules.creature_effects_reset:
        effects = f"{card.my_health} {card.opp_health} {card.draw}"
    else:
        effects = "0 0 0"
    return (
        f"{card.base_id} {creature.id} {location} {card.type} {card.cost} {creature.attack} "
        f"{creature.defense} {ABILITIES_TEXT[creature.keywords]} {effects}"
        + _card_tail(card, creature.lane, rules)
    )


def _player_line(player: Player, rules: RuleSet) -> str:
    if rules.runes:
        return (
            f"{player.health} {player.max_mana} {len(player.deck)} {player.next_rune} "
            f"{player.draw_shown}"
        )
    return f"{player.health} {player.max_mana} {len(player.deck)} {player.draw_shown}"


def battle_input(state: State, player_index: int) -> str:
    """The input block of a battle turn, byte for byte as the official referee sends it."""
    rules = state.rules
    me = state.players[player_index]
    opp = state.players[1 - player_index]
    lines = [
        _player_line(me, rules),
        _player_line(opp, rules),
        f"{len(opp.hand)} {len(opp.performed)}",
    ]
    lines.extend(f"{base_id} {action}" for base_id, action in opp.performed)
    lines.append(str(len(me.hand) + len(me.board) + len(opp.board)))
    lines.extend(card_line(inst.card, inst.id, rules) for inst in me.hand)
    lines.extend(_creature_line(c, 1, rules) for c in me.board)
    lines.extend(_creature_line(c, -1, rules) for c in opp.board)
    return _block(lines)


def deck_building_input(state: State, player_index: int) -> str:
    """The input of the current draft turn (1.0/1.2) or of the constructed turn (1.5)."""
    rules = state.rules
    if rules.draft:
        turn = len(state.players[player_index].chosen)
        # The official mock lines: the opponent's deck shows one card more for P1.
        lines = [
            f"{STARTING_HEALTH} 0 {turn} 25 0",
            f"{STARTING_HEALTH} 0 {turn + player_index} 25 0",
            "0 0",
            "3",
        ]
        lines.extend(offered_card_line(card, rules) for card in state.draft[turn])
    else:
        lines = [
            f"{STARTING_HEALTH} 0 0 0",
            f"{STARTING_HEALTH} 0 0 0",
            "0 0",
            str(len(state.pool)),
        ]
        lines.extend(offered_card_line(card, rules) for card in state.pool)
    return _block(lines)


def player_input(state: State, player_index: int) -> str:
    """What ``player_index`` would receive now, in deck building or battle."""
    if state.phase == Phase.DECK_BUILDING:
        return deck_building_input(state, player_index)
    return battle_input(state, player_index)


# --- a state rebuilt from a bot's input text -----------------------------------------

UNKNOWN_CARD = Card(-1, 0, 99, 0, 1)
"""Stands for a card the player cannot see (opponent hand, deck order); never playable."""
_UNKNOWN_ID_BASE = 10_000


_LOCATIONS = {0: "in hand", 1: "on your board", -1: "on the opponent's board"}
_PERFORMED_NAMES = ("SUMMON", "ATTACK", "USE")


def _ints(words: Sequence[str], field: str) -> list[int]:
    try:
        return [int(word) for word in words]
    except ValueError:
        raise InvalidStateError(
            f"{field}: expected integers, got {show(' '.join(words))}"
        ) from None


def parse_card_line(
    line: str, rules: RuleSet, field: str = "card line"
) -> tuple[CardInstance, int, int]:
    """One card line of an input block: (instance with its printed card, location, lane).

    ``field`` names the line in the :class:`InvalidStateError` a malformed one raises.
    """
    fields = line.split()
    expected = _card_fields(rules)
    if len(fields) != expected:
        raise InvalidStateError(
            f"{field}: a LOCM {rules.version} card line has {expected} fields, "
            f"got {len(fields)}: {show(line)}"
        )
    numbers = _ints(fields[:7] + fields[8:], field)
    base_id, instance_id, location, kind, cost, attack, defense = numbers[:7]
    try:
        keywords = keywords_from_text(fields[7])
    except ValueError as error:
        raise InvalidStateError(f"{field}: {error}") from None
    my_health, opp_health, draw = numbers[7:10]
    area = numbers[10] if rules.area_effects else 0
    lane = numbers[-1] if rules.has_lanes else 0
    first_id = 0 if rules.area_effects else 1
    expect_int(base_id, f"{field}: card number", first_id, CARD_LIST[-1].base_id)
    expect_int(kind, f"{field}: card type", 0, len(CardType) - 1)
    expect_int(cost, f"{field}: cost", 0, MAX_MANA)
    if kind == CardType.CREATURE:
        expect_int(attack, f"{field}: creature attack", 0)
        expect_int(defense, f"{field}: creature defense", 1)
    for name, value in (("attack", attack), ("defense", defense), ("myHealthChange", my_health),
                        ("oppHealthChange", opp_health), ("cardDraw", draw)):  # fmt: skip
        expect_int(value, f"{field}: {name}")
    expect_int(area, f"{field}: area", 0, len(Area) - 1)
    card = Card(base_id, kind, cost, attack, defense, keywords, my_health, opp_health, draw, area)
    return CardInstance(instance_id, card), location, lane


def parse_offered_cards(text: str, version: str) -> list[Card]:
    """The cards offered in a deck-building input (the draft triple or the 1.5 pool)."""
    rules = ruleset(version)
    lines = text.strip("\n").split("\n")
    if len(lines) < 4:
        raise InvalidStateError(
            f"input: a deck-building block has 4 lines or more, got {len(lines)}"
        )
    counted = _ints(lines[3].split(), "input line 4")
    if len(counted) != 1 or not 0 <= counted[0] <= len(lines) - 4:
        raise InvalidStateError(
            f"input line 4: the card count says {show(lines[3])}, {len(lines) - 4} lines follow"
        )
    return [
        parse_card_line(line, rules, f"input line {5 + k}")[0].card
        for k, line in enumerate(lines[4 : 4 + counted[0]])
    ]


def state_from_input(
    version: str,
    text: str,
    player: int,
    player_turn: int = 0,
    my_deck: Sequence[Card] | None = None,
) -> State:
    """A battle state rebuilt from the input text ``player`` received at its turn start.

    What the text does not show is filled in: the opponent's hand and both decks are
    :data:`UNKNOWN_CARD` placeholders (or ``my_deck``, in order, when the bot tracks
    its own deck), ``player_turn`` is how many turns this player started before
    (for the 50-turn rule). Search agents determinise the placeholders.

    Text that no battle turn sends (a wrong field count, a number out of range, a card
    count that does not match the card lines, an item on the board, two cards with one
    instance id, ...) raises :class:`InvalidStateError` naming the line.
    """
    if not isinstance(version, str | RuleSet):
        raise InvalidStateError(f"version: expected a version string, got {show(version)}")
    try:
        rules = ruleset(version)
    except ValueError as error:
        raise InvalidStateError(f"version: {error}") from None
    if not isinstance(text, str):
        raise InvalidStateError(f"text: expected a string, got {show(text)}")
    expect_int(player, "player", 0, 1)
    expect_int(player_turn, "player_turn", 0, JAVA_INT_MAX // 2)
    if my_deck is not None:
        if not isinstance(my_deck, Sequence) or isinstance(my_deck, str):
            raise InvalidStateError(f"my_deck: expected a sequence of cards, got {show(my_deck)}")
        for k, card in enumerate(my_deck):
            if not isinstance(card, Card):
                raise InvalidStateError(f"my_deck[{k}]: expected a Card, got {show(card)}")
    lines = text.strip("\n").split("\n")
    if len(lines) < 4:
        raise InvalidStateError(f"input: a battle block has 4 lines or more, got {len(lines)}")
    player_fields = 5 if rules.runes else 4
    me_fields, opp_fields = (_ints(lines[i].split(), f"input line {i + 1}") for i in (0, 1))
    for i, fields in enumerate((me_fields, opp_fields)):
        if len(fields) != player_fields:
            raise InvalidStateError(
                f"input line {i + 1}: a LOCM {rules.version} player line has {player_fields} "
                f"numbers, got {len(fields)}"
            )
    opp_line = _ints(lines[2].split(), "input line 3")
    if len(opp_line) != 2:
        raise InvalidStateError("input line 3: expected the opponent's hand size and action count")
    opp_hand_size = expect_int(opp_line[0], "input line 3: opponent hand size", 0, HAND_LIMIT)
    opp_action_count = expect_int(opp_line[1], "input line 3: opponent action count", 0,
                                  min(MAX_PERFORMED, len(lines) - 4))  # fmt: skip
    state = State.new_battle(rules)
    state.active = player
    state.turn = 2 * player_turn + player
    step = 2 if rules.area_effects else 1  # 1.5: even ids, so area clones (id + 1) stay unique
    unknown_ids = iter(range(_UNKNOWN_ID_BASE, _UNKNOWN_ID_BASE + 200 * step, step))

    def fill(side: Player, fields: list[int], index: int, is_me: bool) -> None:
        line = f"input line {1 if is_me else 2}"
        side.health = expect_int(fields[0], f"{line}: health")
        side.max_mana = expect_int(fields[1], f"{line}: max mana", 0, MAX_MANA + 1)
        deck_size = expect_int(fields[2], f"{line}: deck size", 0, DECK_SIZE)
        side.draw_shown = expect_int(fields[-1], f"{line}: draw", 0, MAX_DRAWS)
        if rules.runes:
            next_rune = fields[3]
            if next_rune not in (*RUNES, 0):
                raise InvalidStateError(
                    f"{line}: next rune: expected one of {', '.join(map(str, RUNES))} or 0, "
                    f"got {next_rune}"
                )
            side.runes = [rune for rune in RUNES if rune <= next_rune]
        else:
            side.runes = []
        own_turn = player_turn if index >= player or is_me else player_turn - 1
        side.bonus_mana_turns = int(index == 1 and side.max_mana > min(MAX_MANA, own_turn + 1))
        side.mana = side.max_mana
        side.next_turn_draw = 1 if is_me else side.draw_shown
        if is_me and my_deck is not None:
            if len(my_deck) != deck_size:
                raise InvalidStateError(
                    f"my_deck: my_deck has {len(my_deck)} cards, the input says {deck_size}"
                )
            side.deck = [CardInstance(next(unknown_ids), card) for card in my_deck]
        else:
            side.deck = [CardInstance(next(unknown_ids), UNKNOWN_CARD) for _ in range(deck_size)]

    me, opp = state.players[player], state.players[1 - player]
    fill(me, me_fields, player, True)
    fill(opp, opp_fields, 1 - player, False)
    opp.hand = [CardInstance(next(unknown_ids), UNKNOWN_CARD) for _ in range(opp_hand_size)]
    for number, line in enumerate(lines[3 : 3 + opp_action_count], start=4):
        field = f"input line {number}"
        words = line.split()
        if len(words) not in (3, 4) or words[1] not in _PERFORMED_NAMES:
            raise InvalidStateError(
                f"{field}: expected 'cardNumber SUMMON|ATTACK|USE id [target]', got {show(line)}"
            )
        base_id, *numbers = _ints([words[0], *words[2:]], field)
        target = numbers[1] if len(numbers) > 1 else -1
        opp.performed.append((base_id, Action(ActionType[words[1]], numbers[0], target)))
    count_line = 4 + opp_action_count
    if len(lines) < count_line:
        raise InvalidStateError(f"input: line {count_line} (the card count) is missing")
    counted = _ints(lines[count_line - 1].split(), f"input line {count_line}")
    card_lines = lines[count_line:]
    if len(counted) != 1 or counted[0] != len(card_lines):
        raise InvalidStateError(
            f"input line {count_line}: the card count says {show(lines[count_line - 1])}, "
            f"{len(card_lines)} card line(s) follow"
        )
    for number, line in enumerate(card_lines, start=count_line + 1):
        field = f"input line {number}"
        inst, location, lane = parse_card_line(line, rules, field)
        expect_int(inst.id, f"{field}: instance id", 0, _UNKNOWN_ID_BASE - 1)
        if location not in _LOCATIONS:
            raise InvalidStateError(f"{field}: location is 0, 1 or -1, got {location}")
        if location == 0:
            if rules.has_lanes and lane not in (-1, 0, 1):  # the referees print -1
                raise InvalidStateError(f"{field}: a card in hand has lane -1, got {lane}")
            me.hand.append(inst)
            continue
        if inst.card.type != CardType.CREATURE:
            raise InvalidStateError(
                f"{field}: a {CardType(inst.card.type).name.lower().replace('_', ' ')} "
                f"{_LOCATIONS[location]}: only creatures are on the board"
            )
        if rules.has_lanes and lane not in (0, 1):
            raise InvalidStateError(f"{field}: a creature on the board has lane 0 or 1, got {lane}")
        creature = Creature(inst.id, inst.card, max(lane, 0))
        creature.can_attack = location == 1  # own creatures may attack at turn start
        (me if location == 1 else opp).board.append(creature)
    check_state(state, turn_start_input=True)
    return state


def detect_version(lines: Sequence[str]) -> str:
    """The version whose input shape a battle or deck-building block has: 1.5 player lines
    have 4 numbers (no rune), 1.0/1.2 ones 5; card lines have 11 fields, one more with
    lanes and one more with area effects (a block without cards cannot tell 1.0 from 1.2:
    it is taken for 1.2, the later one)."""
    player_fields = len(lines[0].split())
    cards = lines[4 + int(lines[2].split()[1]) :]
    card_fields = len(cards[0].split()) if cards else None
    for rules in reversed(RULESETS.values()):  # no card line: the latest version that fits
        if player_fields != (5 if rules.runes else 4):
            continue
        if card_fields is None or card_fields == _card_fields(rules):
            return rules.version
    raise ValueError(f"not a LOCM input block: {lines[0]!r}")


def _card_fields(rules: RuleSet) -> int:
    return 11 + (1 if rules.has_lanes else 0) + (1 if rules.area_effects else 0)
