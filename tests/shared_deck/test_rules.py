"""The rules engine, the deck generator and the tournament formulas, without any I/O."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardarena.shared_deck.arena import pairings, tournament_points, tournament_seed
from cardarena.shared_deck.deck import deck_from_text, deck_to_text, generate_deck
from cardarena.shared_deck.errors import ErrorCode, GameError
from cardarena.shared_deck.match import ACTIONS, Action, replay
from cardarena.shared_deck.rules import (
    CARD_TYPES,
    CREATURE,
    TARGET_BOARD,
    TARGET_OPPONENT,
    TARGET_SELF,
    Card,
    Creature,
    MatchState,
    RuleSet,
    match_score,
)

STARTER = Card.parse("1 C 2 3 3 0 2")
FIGHTER = Card.parse("2 C 3 2 2 0 1")
DAMAGE_2 = Card.parse("3 D 2 0 0 1 -1")
HEAL_3 = Card.parse("4 H 0 3 0 0 -1")
BUFF = Card.parse("5 B 1 2 0 0 -1")
DEACTIVATE = Card.parse("6 I 0 0 0 0 -1")
TAKE_2 = Card.parse("7 T 2 0 0 0 -1")
EXPENSIVE = Card.parse("8 C 1 5 5 4 0")
FILLER = tuple(Card(100 + i, CREATURE, 1, 1, 1, 0, 1) for i in range(12))
DECK = (STARTER, FIGHTER, DAMAGE_2, HEAL_3, BUFF, DEACTIVATE, TAKE_2, EXPENSIVE, *FILLER)


def new_state(deck: tuple[Card, ...] = DECK, **rules: int) -> MatchState:
    return MatchState(deck, RuleSet(**rules))


def give(state: MatchState, side: int, card: Card) -> None:
    """Put a card in a hand directly, to test one rule at a time."""
    state.hands[side][card.id] = card


def summon(state: MatchState, side: int, card: Card, active: bool = True) -> Creature:
    creature = Creature(card)
    creature.active = active
    state.boards[side][card.id] = creature
    return creature


def refused(code: ErrorCode, action, *args: int) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(GameError) as caught:
        action(*args)
    assert caught.value.code is code


# --------------------------------------------------------------------- scores
def test_match_score_uses_alpha_three_for_a_win_zero_for_a_loss_and_one_and_a_half_else() -> None:
    assert match_score(7, 0, 20) == 7 - 0 + 60
    assert match_score(0, 7, 20) == 0 - 7 + 0
    assert match_score(12, 5, 20) == 12 - 5 + 30


def test_odd_initial_health_is_refused() -> None:
    with pytest.raises(ValueError, match="even"):
        RuleSet(init_hp=21)


def test_tournament_points_rank_by_strictly_smaller_pooled_scores() -> None:
    # Pool: 10, 10, 30, 50, 50, 70. R(10)=0, R(30)=2, R(50)=3, R(70)=5.
    points = tournament_points({"a": [70, 10], "b": [50, 30], "c": [50, 10]})
    assert points["a"] == pytest.approx(5**1.5)
    assert points["b"] == pytest.approx(3**1.5 + 2**1.5)
    assert points["c"] == pytest.approx(3**1.5)


def test_pairings_play_every_ordered_pair_once() -> None:
    games = pairings(["c", "a", "b"])
    assert sorted(games) == [("a", "b"), ("a", "c"), ("b", "a"), ("b", "c"), ("c", "a"), ("c", "b")]


def test_tournament_seed_is_stable_and_differs_between_tournaments() -> None:
    assert tournament_seed(7, 3) == tournament_seed(7, 3)
    assert len({tournament_seed(7, n) for n in range(50)}) == 50


# ---------------------------------------------------------------------- cards
def test_draw_and_burn_limits_and_empty_deck() -> None:
    state = new_state(deck=(STARTER, FIGHTER, DAMAGE_2), draws_per_turn=2, burns_per_turn=1)
    assert state.draw() == STARTER
    assert state.draw() == FIGHTER
    refused(ErrorCode.DrawLimitExceeded, state.draw)
    state.burn()
    refused(ErrorCode.BurnLimitExceeded, state.burn)
    state.end_turn()
    refused(ErrorCode.DeckIsEmpty, state.draw)
    refused(ErrorCode.DeckIsEmpty, state.burn)
    assert state.deck_cards() == ()


def test_hand_limit() -> None:
    state = new_state(hand_limit=1, draws_per_turn=3)
    state.draw()
    refused(ErrorCode.HandLimitExceeded, state.draw)
    assert state.deck_cards()[0] == FIGHTER


def test_take_raises_the_draw_limit_without_drawing() -> None:
    state = new_state(draws_per_turn=0)
    give(state, 0, TAKE_2)
    refused(ErrorCode.WrongTarget, state.play, TAKE_2.id, TARGET_OPPONENT)
    state.play(TAKE_2.id, TARGET_SELF)
    assert state.hands[0] == {} and state.draws_left == 2
    state.draw()
    state.draw()
    refused(ErrorCode.DrawLimitExceeded, state.draw)


def test_discard() -> None:
    state = new_state()
    state.draw()
    state.discard(STARTER.id)
    assert state.hands[0] == {}
    refused(ErrorCode.CardNotInHand, state.discard, STARTER.id)


def test_card_location_errors() -> None:
    state = new_state()
    summon(state, 1, FIGHTER)
    give(state, 1, HEAL_3)
    summon(state, 0, STARTER, active=False)
    state.finish_block()  # own creatures become active...
    state.boards[0][STARTER.id].active = False  # ...so make it inactive again
    refused(ErrorCode.NoCardWithSuchId, state.add_mana, 999)
    refused(ErrorCode.NotYourCard, state.add_mana, FIGHTER.id)
    refused(ErrorCode.NotYourCard, state.play, HEAL_3.id, TARGET_SELF)
    refused(ErrorCode.CardNotOnBoard, state.attack, EXPENSIVE.id)
    refused(ErrorCode.CardNotInHand, state.play, EXPENSIVE.id, TARGET_BOARD)
    refused(ErrorCode.InactiveCard, state.attack, STARTER.id)


# ------------------------------------------------------------------ mana, board
def test_creatures_enter_inactive_and_tap_for_mana_after_the_next_blocking_phase() -> None:
    state = new_state()
    state.draw()
    state.play(STARTER.id, TARGET_BOARD)
    refused(ErrorCode.InactiveCard, state.add_mana, STARTER.id)
    state.end_turn()
    assert state.current == 1
    state.end_turn()
    assert state.boards[0][STARTER.id].active is False  # still the blocking phase
    state.add_mana(STARTER.id)  # an action ends the blocking phase, activating it first
    assert state.mana == STARTER.mana
    refused(ErrorCode.InactiveCard, state.add_mana, STARTER.id)
    state.end_turn()
    assert state.mana == 0  # the pool is lost at the end of the turn


def test_playing_costs_mana() -> None:
    state = new_state()
    summon(state, 0, STARTER)
    give(state, 0, EXPENSIVE)
    state.finish_block()
    state.add_mana(STARTER.id)
    refused(ErrorCode.NotEnoughMana, state.play, EXPENSIVE.id, TARGET_BOARD)
    give(state, 0, DAMAGE_2)
    state.play(DAMAGE_2.id, TARGET_OPPONENT)
    assert state.mana == STARTER.mana - DAMAGE_2.cost
    assert state.hp[1] == 20 - 2


def test_creature_cards_target_the_board_only() -> None:
    state = new_state()
    give(state, 0, FIGHTER)
    refused(ErrorCode.WrongTarget, state.play, FIGHTER.id, TARGET_SELF)
    state.play(FIGHTER.id, TARGET_BOARD)
    assert FIGHTER.id in state.boards[0]


# -------------------------------------------------------------------- combat
def attack_with(state: MatchState, card: Card) -> None:
    """Side 0 attacks with ``card`` (already on its board); the turn passes to side 1."""
    state.attack(card.id)
    state.end_turn()


def test_unblocked_attacker_hits_the_player_after_the_blocking_phase() -> None:
    state = new_state()
    summon(state, 0, FIGHTER)
    attack_with(state, FIGHTER)
    assert [c.id for c in state.attacking_creatures()] == [FIGHTER.id]
    assert state.hp[1] == 20
    state.finish_block()
    assert state.hp[1] == 20 - FIGHTER.attack
    refused(ErrorCode.BlockingAlreadyFinished, state.finish_block)
    refused(ErrorCode.BlockingAlreadyFinished, state.block, FIGHTER.id, STARTER.id)


def test_an_idle_turn_still_resolves_the_attack() -> None:
    state = new_state()
    summon(state, 0, FIGHTER)
    attack_with(state, FIGHTER)
    state.end_turn()
    assert state.hp[1] == 20 - FIGHTER.attack


def test_block_fights_both_ways_and_stops_the_damage() -> None:
    state = new_state()
    summon(state, 0, FIGHTER)  # AT 3, HP 2
    summon(state, 1, STARTER)  # AT 2, HP 3
    attack_with(state, FIGHTER)
    refused(ErrorCode.NoSuchAttacker, state.block, STARTER.id, STARTER.id)
    state.block(FIGHTER.id, STARTER.id)
    assert FIGHTER.id not in state.boards[0]  # 2 damage kills the attacker (HP 2)
    assert STARTER.id not in state.boards[1]  # 3 damage kills the blocker (HP 3)
    state.finish_block()
    assert state.hp[1] == 20


def test_surviving_blocker_is_inactive_until_the_phase_ends_and_attacker_may_be_blocked_twice() -> (
    None
):
    state = new_state()
    big = Card.parse("50 C 1 9 9 0 0")
    summon(state, 0, big)
    first = summon(state, 1, STARTER)
    second = summon(state, 1, FIGHTER)
    attack_with(state, big)
    state.block(big.id, STARTER.id)
    assert first.active is False and first.hp == STARTER.hp - 1
    refused(ErrorCode.InactiveCard, state.block, big.id, STARTER.id)
    state.block(big.id, FIGHTER.id)
    assert state.boards[0][big.id].hp == 9 - STARTER.attack - FIGHTER.attack
    state.draw()  # any other action ends the blocking phase
    assert state.hp[1] == 20 and first.active and second.active


def test_deadly_attack_ends_the_match() -> None:
    state = new_state(init_hp=2)
    summon(state, 0, FIGHTER)
    attack_with(state, FIGHTER)
    refused(ErrorCode.GameHasEnded, state.draw)  # the phase ends first, and with it the match
    assert state.ended and state.hp == [2, 0]
    assert state.score(0) == 2 + 3 * 2 and state.score(1) == -2


# -------------------------------------------------------------------- spells
def test_heal_is_capped_for_creatures_and_players() -> None:
    state = new_state()
    creature = summon(state, 1, STARTER)
    creature.hp = 1
    give(state, 0, HEAL_3)
    state.play(HEAL_3.id, STARTER.id)
    assert creature.hp == STARTER.hp_max
    heal_again = Card.parse("40 H 0 3 0 0 -1")
    give(state, 0, heal_again)
    state.hp[0] = 19
    state.play(heal_again.id, TARGET_SELF)
    assert state.hp[0] == 20


def test_damage_removes_creatures_and_stops_players_at_zero() -> None:
    state = new_state(init_hp=2)
    summon(state, 1, FIGHTER)
    give(state, 0, DAMAGE_2)
    summon(state, 0, STARTER)
    state.finish_block()
    state.add_mana(STARTER.id)
    state.play(DAMAGE_2.id, FIGHTER.id)
    assert FIGHTER.id not in state.boards[1]
    big = Card.parse("41 D 9 0 0 0 -1")
    give(state, 0, big)
    state.play(big.id, TARGET_OPPONENT)
    assert state.hp[1] == 0 and state.ended


def test_damage_on_oneself_can_lose_the_match() -> None:
    state = new_state(init_hp=2)
    big = Card.parse("41 D 9 0 0 0 -1")
    give(state, 0, big)
    state.play(big.id, TARGET_SELF)
    assert state.hp == [0, 2] and state.ended and state.score(0) == -2


def test_buff_and_deactivate_take_creatures_only() -> None:
    state = new_state()
    creature = summon(state, 1, FIGHTER)
    give(state, 0, BUFF)
    give(state, 0, DEACTIVATE)
    refused(ErrorCode.WrongTarget, state.play, BUFF.id, TARGET_SELF)
    refused(ErrorCode.WrongTarget, state.play, DEACTIVATE.id, TARGET_OPPONENT)
    refused(ErrorCode.SpellTargetNotOnBoard, state.play, BUFF.id, EXPENSIVE.id)
    refused(ErrorCode.WrongTarget, state.play, BUFF.id, TARGET_BOARD)
    state.play(BUFF.id, FIGHTER.id)
    assert (creature.attack, creature.hp, creature.hp_max) == (4, 4, 4)
    state.play(DEACTIVATE.id, FIGHTER.id)
    assert creature.active is False
    again = Card.parse("42 I 0 0 0 0 -1")
    give(state, 0, again)
    state.play(again.id, FIGHTER.id)  # nothing happens, but the card is spent
    assert again.id not in state.hands[0] and creature.active is False


def test_deactivated_creature_cannot_block_in_its_next_blocking_phase() -> None:
    state = new_state()
    summon(state, 0, FIGHTER)
    summon(state, 1, STARTER)
    give(state, 0, DEACTIVATE)
    state.play(DEACTIVATE.id, STARTER.id)
    attack_with(state, FIGHTER)
    refused(ErrorCode.InactiveCard, state.block, FIGHTER.id, STARTER.id)


# ---------------------------------------------------------------- turn limit
def test_turn_limit_ends_the_match_and_scores_both_alive_at_one_and_a_half() -> None:
    state = new_state(turns_per_match=3)
    assert state.turns_left == 3
    state.end_turn()
    state.end_turn()
    assert state.turns_left == 1 and not state.ended
    state.end_turn()
    assert state.ended and state.turns_left == 0
    refused(ErrorCode.GameHasEnded, state.draw)
    assert state.score(0) == state.score(1) == 30


def snapshot(state: MatchState) -> tuple[object, ...]:
    boards = tuple(
        tuple(sorted((c.id, c.attack, c.hp, c.hp_max, c.active) for c in board.values()))
        for board in state.boards
    )
    return (
        state.deck_position,
        tuple(tuple(sorted(hand)) for hand in state.hands),
        boards,
        tuple(state.hp),
        state.turn_index,
        state.ended,
        (state.current, state.mana, state.draws_left, state.burns_left, state.blocking)
        if not state.ended
        else None,
        tuple(sorted(state.attackers)) if not state.ended else None,
    )


ACTION_NAMES = sorted(ACTIONS)


@settings(max_examples=60, deadline=None)
@given(
    plan=st.lists(
        st.tuples(
            st.integers(0, 3),  # idle turns before the action
            st.sampled_from(ACTION_NAMES),
            st.lists(st.sampled_from([1, 2, 3, 4, 5, 6, 7, 8, 100, 101, -1, -5, -6]), max_size=2),
        ),
        max_size=25,
    ),
    jump=st.integers(0, 12),
)
def test_lazy_catch_up_equals_turn_by_turn_and_replay_reproduces_it(
    plan: list[tuple[int, str, list[int]]], jump: int
) -> None:
    rules = RuleSet(turns_per_match=30, init_hp=10)
    stepwise, lazy = MatchState(DECK, rules), MatchState(DECK, rules)
    log = []
    for idle, command, raw_args in plan:
        for _ in range(idle):
            stepwise.end_turn()
        lazy.advance_to(stepwise.turn_index)
        if stepwise.ended:
            break
        args = tuple(raw_args[: _ARITY[command]] + [1] * (_ARITY[command] - len(raw_args)))
        outcomes = []
        for state in (stepwise, lazy):
            try:
                ACTIONS[command](state, args)
                outcomes.append(0)
            except GameError as error:
                outcomes.append(error.code.value)
        assert outcomes[0] == outcomes[1]
        log.append(Action(stepwise.turn_index, stepwise.current, command, args, outcomes[0]))
        assert snapshot(stepwise) == snapshot(lazy)
    target = min(stepwise.turn_index + jump, rules.turns_per_match)
    while stepwise.turn_index < target and not stepwise.ended:
        stepwise.end_turn()
    lazy.advance_to(target)
    assert snapshot(stepwise) == snapshot(lazy)
    replayed = replay(DECK, rules, log)
    stepwise.advance_to(rules.turns_per_match)
    assert replayed.hp == stepwise.hp and snapshot(replayed) == snapshot(stepwise)


_ARITY = {"DISCARD_CARD": 1, "ADD_MANA": 1, "PLAY_CARD": 2, "ATTACK": 1, "BLOCK": 2}
_ARITY.update({name: 0 for name in ACTION_NAMES if name not in _ARITY})


def test_replay_rejects_a_log_that_does_not_fit_the_rules() -> None:
    rules = RuleSet(turns_per_match=4)
    with pytest.raises(ValueError, match="rules say"):
        replay(DECK, rules, [Action(0, 0, "ADD_MANA", (STARTER.id,), 0)])
    with pytest.raises(ValueError, match="elsewhere"):
        replay(DECK, rules, [Action(0, 1, "DRAW_CARD", (), 0)])


# ---------------------------------------------------------------------- deck
@pytest.mark.parametrize("seed", [0, 1, 2, 12345])
def test_generated_deck_is_valid_and_can_start_a_game(seed: int) -> None:
    deck = generate_deck(seed, 80)
    assert len(deck) == 80 and len({card.id for card in deck}) == 80
    for card in deck:
        card.validate()
        assert all(abs(v) < 10 for v in (card.attack, card.hp, card.hp_max, card.cost))
    assert {card.type for card in deck} == set(CARD_TYPES)
    starters = [c for c in deck if c.type == CREATURE and c.cost == 0 and c.mana > 0]
    assert starters and any(c in starters for c in deck[:3])
    assert generate_deck(seed, 80) == deck
    assert deck_from_text(deck_to_text(deck)) == deck


def test_small_decks_still_hold_every_type_and_seeds_differ() -> None:
    assert {card.type for card in generate_deck(3, 6)} == set(CARD_TYPES)
    assert generate_deck(1) != generate_deck(2)
    with pytest.raises(ValueError):
        generate_deck(1, 1001)


def test_card_validation_refuses_malformed_cards() -> None:
    for line in ("0 C 1 1 1 0 0", "5 C 1 0 1 0 0", "5 C 1 3 2 0 0", "5 H 1 3 0 0 -1",
                 "5 X 0 0 0 0 -1", "5 D 101 0 0 0 -1", "5 D 1 0 0 0 2"):
        with pytest.raises(ValueError):
            Card.parse(line).validate()
