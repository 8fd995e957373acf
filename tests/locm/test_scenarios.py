"""Hand-built positions, one per mechanic and special case of the rules spec."""

from __future__ import annotations

from cardarena.locm import Action, ActionType, Area, EndReason, State
from cardarena.locm.engine.cards import BREAKTHROUGH, CHARGE, DRAIN, GUARD, LETHAL, WARD
from cardarena.locm.engine.text import battle_input

from .scenario import BLUE, GREEN, RED, battle, creature_card, item_card, on_board

SUMMON, ATTACK, USE = ActionType.SUMMON, ActionType.ATTACK, ActionType.USE


def attack_targets(state: State, attacker: int) -> set[int]:
    return {a.target for a in state.legal_actions() if a.type == ATTACK and a.id == attacker}


# --- guard -------------------------------------------------------------------------


def test_guard_protects_only_its_lane_in_1_2_and_1_5() -> None:
    guard, plain = creature_card(1, 5, GUARD), creature_card(1, 1)
    for version in ("1.2", "1.5"):
        state = battle(
            version,
            boards=(
                [on_board(plain, 1, lane=0), on_board(plain, 3, lane=1)],
                [
                    on_board(guard, 2, lane=0),
                    on_board(plain, 4, lane=0),
                    on_board(plain, 6, lane=1),
                ],
            ),
        )
        assert attack_targets(state, 1) == {2}  # lane 0: the Guard only
        assert attack_targets(state, 3) == {-1, 6}  # lane 1: face or the lane's creature
        assert not state.is_legal(Action(ATTACK, 1, -1))


def test_guard_protects_the_whole_board_in_1_0() -> None:
    guard, plain = creature_card(1, 5, GUARD), creature_card(1, 1)
    state = battle("1.0", boards=([on_board(plain, 1)], [on_board(guard, 2), on_board(plain, 4)]))
    assert attack_targets(state, 1) == {2}


# --- ward ----------------------------------------------------------------------------


def test_ward_absorbs_lethal_breakthrough_and_drain() -> None:
    killer = creature_card(5, 5, LETHAL | BREAKTHROUGH | DRAIN)
    warded = creature_card(1, 2, WARD)
    state = battle(boards=([on_board(killer, 1)], [on_board(warded, 2)]), health=(20, 20))
    state.apply(Action(ATTACK, 1, 2))
    defender = state.players[1].board[0]
    assert defender.defense == 2 and not defender.keywords & WARD  # alive, ward gone
    assert state.players[0].health == 20  # no drain heal
    assert state.players[1].health == 20  # no breakthrough
    assert state.players[0].board[0].defense == 4  # counter-attack still hits


def test_zero_attack_keeps_ward_and_triggers_nothing() -> None:
    zero = creature_card(0, 3, LETHAL)
    warded = creature_card(1, 1, WARD)
    state = battle(boards=([on_board(zero, 1)], [on_board(warded, 2)]))
    state.apply(Action(ATTACK, 1, 2))
    assert state.players[1].board[0].keywords & WARD


def test_breakthrough_excess_and_drain_full_attack() -> None:
    smasher = creature_card(7, 9, BREAKTHROUGH | DRAIN)
    small = creature_card(1, 3)
    state = battle(boards=([on_board(smasher, 1)], [on_board(small, 2)]), health=(10, 30))
    state.apply(Action(ATTACK, 1, 2))
    assert state.players[1].health == 30 - (7 - 3)  # excess over the defender's defense
    assert state.players[0].health == 10 + 7  # drain heals the whole attack
    assert state.players[1].board == []


def test_lethal_kill_without_damage_kill_gives_no_breakthrough() -> None:
    poison = creature_card(1, 5, LETHAL | BREAKTHROUGH)
    big = creature_card(1, 8)
    state = battle(boards=([on_board(poison, 1)], [on_board(big, 2)]))
    state.apply(Action(ATTACK, 1, 2))
    assert state.players[1].board == [] and state.players[1].health == 30


# --- area effects (1.5) --------------------------------------------------------------


def test_lane1_summon_clones_only_into_a_lane_with_room() -> None:
    lane1 = creature_card(2, 2, cost=1, draw=1, my_health=1)
    lane1 = type(lane1)(5, 0, 1, 2, 2, 0, 1, 0, 1, Area.LANE1)
    filler = creature_card(1, 1)
    state = battle(hands=([(10, lane1), (12, lane1)], []), boards=([on_board(filler, 40)], []))
    state.apply(Action(SUMMON, 10, 0))  # lane had 1: the new one + its clone fill it
    me = state.players[0]
    assert [(c.id, c.lane) for c in me.board] == [(40, 0), (10, 0), (11, 0)]
    assert me.health == 32 and me.next_turn_draw == 3  # effects once per copy
    state.apply(Action(SUMMON, 12, 1))
    state.apply(Action(ATTACK, 40, -1))
    assert sum(c.lane == 1 for c in me.board) == 2
    assert state.players[1].performed == [] and me.performed[0] == (5, Action(SUMMON, 10, 0))


def test_lane2_summon_does_not_clone_into_a_full_lane() -> None:
    lane2 = type(creature_card(1, 1))(7, 0, 0, 1, 1, 0, 0, -1, 0, Area.LANE2)
    filler = creature_card(1, 1)
    full = [on_board(filler, 40 + 2 * i, lane=1) for i in range(3)]
    state = battle(hands=([(10, lane2)], []), boards=(full, []))
    state.apply(Action(SUMMON, 10, 0))
    assert [c.id for c in state.players[0].board if c.lane == 0] == [10]
    assert state.players[1].health == 29  # one copy, one effect


def test_lane2_red_item_worked_example_from_the_spec() -> None:
    two = creature_card(2, 2)
    one = creature_card(1, 1)
    warded = creature_card(1, 1, WARD)
    p0_board = [
        on_board(two, 6, 0), on_board(two, 7, 0), on_board(warded, 20, 0),
        on_board(one, 24, 1), on_board(two, 4, 1), on_board(two, 5, 1),
    ]  # fmt: skip
    red = type(two)(50, RED, 0, -1, -2, 0, 1, -1, 1, Area.LANE2)
    blue = type(two)(51, BLUE, 0, 0, -2, 0, 0, -1, 0, Area.LANE2)
    state = battle(
        hands=([], [(31, red), (33, blue)]), boards=(p0_board, []), health=(30, 30), active=1
    )
    state.apply(Action(USE, 31, 6))
    p0, p1 = state.players
    assert [(c.id, c.attack, c.defense, bool(c.keywords & WARD)) for c in p0.board] == [
        (20, 0, 1, False)
    ]
    assert (p0.health, p1.health, p1.next_turn_draw) == (24, 36, 7)
    state.apply(Action(USE, 33, -1))
    assert p0.health == 21  # -2 defense -1 opp, not multiplied on the face
    assert p0.health_lost == 9 and p0.next_turn_draw == 2  # one extra draw per 5 HP lost


def test_lane1_green_item_buffs_the_targets_lane_only() -> None:
    plain = creature_card(1, 1)
    green = type(plain)(60, GREEN, 0, 1, 1, CHARGE, 0, 0, 0, Area.LANE1)
    board = [on_board(plain, 2, 0, can_attack=False), on_board(plain, 4, 1, can_attack=False)]
    state = battle(hands=([(10, green)], []), boards=(board, []))
    state.apply(Action(USE, 10, 2))
    first, second = state.players[0].board
    assert (first.attack, first.defense, first.can_attack) == (2, 2, True)
    assert (second.attack, second.defense, second.can_attack) == (1, 1, False)


# --- items ---------------------------------------------------------------------------


def test_blue_item_on_the_face_deals_defense_plus_opp_health() -> None:
    blue = item_card(BLUE, 5, -3, opp_health=-1, my_health=2)
    state = battle(hands=([(10, blue)], []))
    state.apply(Action(USE, 10, -1))
    assert state.players[1].health == 26 and state.players[0].health == 32


def test_red_item_attack_reduction_still_applies_through_ward() -> None:
    red = item_card(RED, -2, -3)
    warded = creature_card(3, 3, WARD)
    state = battle(hands=([(10, red)], []), boards=([], [on_board(warded, 2)]))
    state.apply(Action(USE, 10, 2))
    target = state.players[1].board[0]
    assert (target.attack, target.defense, target.keywords & WARD) == (1, 3, 0)


def test_green_charge_does_not_revive_an_attack_already_made() -> None:
    charge = item_card(GREEN, 0, 0, CHARGE)
    plain = creature_card(1, 4)
    attacked = on_board(plain, 2, can_attack=False)
    attacked.has_attacked = True
    fresh = on_board(plain, 4, can_attack=False)
    state = battle(hands=([(10, charge), (12, charge)], []), boards=([attacked, fresh], []))
    state.apply(Action(USE, 10, 2))
    state.apply(Action(USE, 12, 4))
    assert not attacked.can_attack and fresh.can_attack


def test_items_colours_and_targets() -> None:
    plain = creature_card(1, 1)
    green, red, blue = item_card(GREEN, 1, 1), item_card(RED, -1, -1), item_card(BLUE, 0, -1)
    state = battle(
        hands=([(10, green), (12, red), (14, blue)], []),
        boards=([on_board(plain, 2)], [on_board(plain, 3)]),
    )
    uses = {(a.id, a.target) for a in state.legal_actions() if a.type == USE}
    assert uses == {(10, 2), (12, 3), (14, 3), (14, -1)}


# --- draws, hand limit, deck-out -----------------------------------------------------


def test_hand_limit_1_5_skips_the_draw_without_damage() -> None:
    card = creature_card(1, 1, cost=20)
    hand = [(100 + 2 * i, card) for i in range(8)]
    state = battle(hands=([], hand), decks=([(1, card)], []), active=0)
    state.players[1].next_turn_draw = 3
    state.apply(Action(ActionType.PASS))
    p1 = state.players[1]
    assert len(p1.hand) == 8 and p1.health == 30 and p1.draw_shown == 3


def test_empty_deck_1_5_deals_ten_per_draw_unless_the_hand_is_full() -> None:
    state = battle(decks=([], []), active=0)
    state.players[1].next_turn_draw = 2
    state.apply(Action(ActionType.PASS))
    assert state.players[1].health == 10
    assert state.players[1].health_lost == 0  # deck-out damage gives no bonus draws


def test_rune_lost_per_draw_on_an_empty_deck_1_2() -> None:
    state = battle("1.2", decks=([], []), health=(30, 23), active=0)
    state.players[1].next_turn_draw = 2
    state.apply(Action(ActionType.PASS))
    p1 = state.players[1]
    assert p1.runes == [15, 10, 5] and p1.health == 20  # HP := the rune's value


def test_hand_limit_1_2_stops_the_remaining_draws() -> None:
    card = creature_card(1, 1, cost=20)
    state = battle(
        "1.2",
        hands=([], [(100 + 2 * i, card) for i in range(7)]),
        decks=([], [(200, card), (202, card), (204, card)]),
        active=0,
    )
    state.players[1].next_turn_draw = 3
    state.apply(Action(ActionType.PASS))
    p1 = state.players[1]
    assert len(p1.hand) == 8 and len(p1.deck) == 2 and p1.health == 30


def test_runes_break_at_or_below_their_threshold_and_give_draws() -> None:
    attacker = creature_card(12, 12)
    state = battle("1.2", boards=([on_board(attacker, 1)], []), health=(30, 30))
    state.apply(Action(ATTACK, 1, -1))  # 30 -> 18 breaks 25 and 20
    p1 = state.players[1]
    assert p1.runes == [15, 10, 5] and p1.next_turn_draw == 3 and p1.next_rune == 15


def test_turn_limit_1_5_deals_ten_each_turn_from_the_51st() -> None:
    card = creature_card(1, 1, cost=20)
    state = battle(decks=([(1, card)] * 5, [(2, card)] * 5), active=1, turn=99)
    state.apply(Action(ActionType.PASS))  # P0's turn 100 = its 51st
    assert state.turn == 100 and state.players[0].health == 20


def test_both_players_at_zero_the_active_player_wins() -> None:
    both = creature_card(1, 1, my_health=-2, opp_health=-2)
    state = battle("1.2", hands=([(10, both)], []), health=(2, 2), active=0)
    state.apply(Action(SUMMON, 10, 0))
    assert state.winner == 0 and state.end_reason == EndReason.HEALTH


def test_death_in_own_draw_step_ends_as_deck_out() -> None:
    state = battle(decks=([], []), health=(30, 5), active=0)
    state.apply(Action(ActionType.PASS))
    assert state.is_terminal and state.winner == 0 and state.end_reason == EndReason.DECK_OUT


# --- mana ------------------------------------------------------------------------------


def test_second_player_loses_its_bonus_after_spending_all_its_mana() -> None:
    state = State.new("1.5", {"seed": 3})
    while not state.players[1].board and state.turn < 1:
        state.apply(state.legal_actions()[0])
    p1 = state.players[1]
    assert state.active == 1 and p1.max_mana == 2 and p1.bonus_mana_turns == 1
    p1.mana = 0  # as if it spent everything this turn
    state.apply(Action(ActionType.PASS))
    state.apply(Action(ActionType.PASS))
    assert p1.max_mana == 2 and p1.bonus_mana_turns == 0  # 3 - 1


# --- what bots see -------------------------------------------------------------------


def test_1_2_creature_shows_zero_effects_after_surviving_an_attack() -> None:
    card = creature_card(1, 5, my_health=1, opp_health=-1)
    for version, shown in (("1.2", "0 0 0"), ("1.5", "1 -1 0")):
        state = battle(version, boards=([on_board(card, 1)], [on_board(card, 2)]))
        state.apply(Action(ATTACK, 1, 2))
        lines = battle_input(state, 0).splitlines()
        assert lines[-2].split()[8:11] == shown.split()  # my attacker
        assert lines[-1].split()[8:11] == shown.split()  # the defender
