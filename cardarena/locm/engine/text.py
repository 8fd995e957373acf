"""The bot input text, both ways: what the official referee sends, and a state read back.

The writers give each input block byte for byte as the official referees send it
(the conformance recordings check every one); the readers rebuild cards and a battle
state from such a block, for bots that search (:meth:`State.from_input`) and for
``locm bot``. One card-line parser serves every reader.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import ABILITIES_TEXT, Card, keywords_from_text
from .rules import MAX_MANA, RULESETS, RUNES, STARTING_HEALTH, RuleSet, ruleset
from .state import Action, ActionType, CardInstance, Creature, Phase, Player, State

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


def parse_card_line(line: str, rules: RuleSet) -> tuple[CardInstance, int, int]:
    """One card line of an input block: (instance with its printed card, location, lane)."""
    fields = line.split()
    expected = _card_fields(rules)
    if len(fields) != expected:
        raise ValueError(f"a LOCM {rules.version} card line has {expected} fields: {line!r}")
    base_id, instance_id, location, kind, cost, attack, defense = (int(f) for f in fields[:7])
    keywords = keywords_from_text(fields[7])
    my_health, opp_health, draw = (int(f) for f in fields[8:11])
    area = int(fields[11]) if rules.area_effects else 0
    lane = int(fields[-1]) if rules.has_lanes else 0
    card = Card(base_id, kind, cost, attack, defense, keywords, my_health, opp_health, draw, area)
    return CardInstance(instance_id, card), location, lane


def parse_offered_cards(text: str, version: str) -> list[Card]:
    """The cards offered in a deck-building input (the draft triple or the 1.5 pool)."""
    rules = ruleset(version)
    lines = text.strip("\n").split("\n")
    count = int(lines[3])
    return [parse_card_line(line, rules)[0].card for line in lines[4 : 4 + count]]


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
    """
    rules = ruleset(version)
    lines = text.strip("\n").split("\n")
    me_fields, opp_fields = (list(map(int, lines[i].split())) for i in (0, 1))
    opp_hand_size, opp_action_count = map(int, lines[2].split())
    state = State.new_battle(rules)
    state.active = player
    state.turn = 2 * player_turn + player
    unknown_ids = iter(range(_UNKNOWN_ID_BASE, _UNKNOWN_ID_BASE + 200))

    def fill(side: Player, fields: list[int], index: int, is_me: bool) -> None:
        side.health, side.max_mana, deck_size = fields[0], fields[1], fields[2]
        side.draw_shown = fields[-1]
        side.runes = [rune for rune in RUNES if rune <= fields[3]] if rules.runes else []
        own_turn = player_turn if index >= player or is_me else player_turn - 1
        side.bonus_mana_turns = int(index == 1 and side.max_mana > min(MAX_MANA, own_turn + 1))
        side.mana = side.max_mana
        side.next_turn_draw = 1 if is_me else side.draw_shown
        if is_me and my_deck is not None:
            if len(my_deck) != deck_size:
                raise ValueError(f"my_deck has {len(my_deck)} cards, the input says {deck_size}")
            side.deck = [CardInstance(next(unknown_ids), card) for card in my_deck]
        else:
            side.deck = [CardInstance(next(unknown_ids), UNKNOWN_CARD) for _ in range(deck_size)]

    me, opp = state.players[player], state.players[1 - player]
    fill(me, me_fields, player, True)
    fill(opp, opp_fields, 1 - player, False)
    opp.hand = [CardInstance(next(unknown_ids), UNKNOWN_CARD) for _ in range(opp_hand_size)]
    for line in lines[3 : 3 + opp_action_count]:
        base_id, name, *numbers = line.split()
        target = int(numbers[1]) if len(numbers) > 1 else -1
        opp.performed.append((int(base_id), Action(ActionType[name], int(numbers[0]), target)))
    card_count = int(lines[3 + opp_action_count])
    for line in lines[4 + opp_action_count : 4 + opp_action_count + card_count]:
        inst, location, lane = parse_card_line(line, rules)
        if location == 0:
            me.hand.append(inst)
            continue
        creature = Creature(inst.id, inst.card, max(lane, 0))
        creature.can_attack = location == 1  # own creatures may attack at turn start
        (me if location == 1 else opp).board.append(creature)
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
