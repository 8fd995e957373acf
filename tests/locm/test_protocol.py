"""Parsing bot output exactly as the official referees do (locm-protocol.md §3, §6)."""

from __future__ import annotations

import pytest

from cardarena.locm import Action, ActionType, ProtocolError, ProtocolGame, ruleset
from cardarena.locm.engine.cards import CARDS_BY_ID
from cardarena.locm.engine.state import EndReason
from cardarena.locm.referee.protocol_game import (
    parse_battle_output,
    parse_constructed_output,
    parse_draft_output,
)

ATTACK, SUMMON, USE, PASS = ActionType.ATTACK, ActionType.SUMMON, ActionType.USE, ActionType.PASS


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("ATTACK 1 2", [(ATTACK, 1, 2)]),
        (" ATTACK 1 2 ", [(ATTACK, 1, 2)]),
        ("ATTACK 1 2 go go", [(ATTACK, 1, 2)]),
        ("ATTACK +3 -1", [(ATTACK, 3, -1)]),
        ("ATTACK 03 -1", [(ATTACK, 3, -1)]),
        ("SUMMON 5 7", [(SUMMON, 5, 7)]),
        ("PASS;SUMMON 4 0", [(PASS, -1, -1), (SUMMON, 4, 0)]),
        (";;USE 3 -1 ; ;PASS anything;", [(USE, 3, -1), (PASS, -1, -1)]),
        ("", []),
    ],
)
def test_battle_lines_that_parse(line: str, expected: list[tuple[int, int, int]]) -> None:
    parsed = parse_battle_output(line, ruleset("1.5"))
    assert [tuple(action) for action, _text in parsed] == expected


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("ATTACK  1 2", "Invalid ATTACK arguments"),
        ("ATTACK\t1 2", "Invalid action name"),
        ("ATTACK 1\t2", "Invalid ATTACK arguments"),
        ("attack 1 2", "Invalid action name"),
        ("SUMMON 5", "Invalid SUMMON arguments. Expected two integers (card id and lane)."),
        ("ATTACK 3 -1x", "Invalid ATTACK arguments"),
        ("USE 9", "Invalid USE arguments"),
        ("WAIT", "Should be SUMMON, ATTACK,  USE or PASS."),
        ("SUMMON 1 0;HELLO", "Invalid action name"),
        ("ATTACK 1 2147483648", "Invalid ATTACK arguments"),
    ],
)
def test_battle_hard_errors(line: str, message: str) -> None:
    with pytest.raises(ProtocolError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_battle_output(line, ruleset("1.5"))


def test_1_0_summon_takes_one_argument_and_the_rest_is_text() -> None:
    ((action, text),) = parse_battle_output("SUMMON 5 1", ruleset("1.0"))
    assert action == Action(SUMMON, 5, -1) and text == "1"
    with pytest.raises(ProtocolError, match=r"Should be SUMMON, ATTACK, or USE\."):
        parse_battle_output("MOVE 1", ruleset("1.0"))


OFFERED = [CARDS_BY_ID[137], CARDS_BY_ID[116], CARDS_BY_ID[40]]


@pytest.mark.parametrize(
    ("line", "index"),
    [
        ("PICK 1", 1),
        ("PICK 2 hello", 2),
        ("PICK 1 ", 1),
        ("PASS", 0),
        ("PASS x", 0),
        ("CHOOSE 40", 2),
    ],
)
def test_draft_answers(line: str, index: int) -> None:
    assert parse_draft_output(line, OFFERED)[0] == index


@pytest.mark.parametrize(
    "line",
    [
        "PICK 3",
        "PICK -1",
        "PICK",
        " PICK 1",
        "PICK  1",
        "PICK 1\t",
        "PICK 1;",
        "PASS;",
        "pick 1",
        "CHOOSE 5",
    ],
)
def test_draft_hard_errors(line: str) -> None:
    with pytest.raises(ProtocolError):
        parse_draft_output(line, OFFERED)


def test_choose_error_lists_the_offered_ids_in_java_hashset_order() -> None:
    with pytest.raises(ProtocolError, match=r"base id \[116, 40, 137\]\."):
        parse_draft_output("CHOOSE 5", OFFERED)  # buckets 116&15=4, 137&15=9, 40&15=8


def test_constructed_answers() -> None:
    pool = ProtocolGame("1.5", {"seed": 42}).state.pool
    cards, _ = parse_constructed_output("CHOOSE 5;CHOOSE 5;PASS", pool)
    assert [c.base_id for c in cards[:4]] == [5, 5, 0, 0] and len(cards) == 30
    cards, _ = parse_constructed_output("PASS x;PASS y", pool)
    assert [c.base_id for c in cards] == [0, 0]  # PASS with text takes one card
    with pytest.raises(ProtocolError, match="at most 2 times"):
        parse_constructed_output("CHOOSE 1;CHOOSE 1;CHOOSE 1", pool)
    with pytest.raises(ProtocolError, match="valid card's base id"):
        parse_constructed_output("CHOOSE 120", pool)
    with pytest.raises(ProtocolError, match='Expected  "CHOOSE id" or "PASS"'):
        parse_constructed_output("PICK 1", pool)


def test_wrong_card_count_is_a_hard_error_of_that_player() -> None:
    game = ProtocolGame("1.5", {"seed": 1})
    game.answer(["PASS", "CHOOSE 1"])
    assert game.scores == (0, -1) and game.winner == 0
    assert game.summaries[-1] == "$1 didn't choose correct number of cards!"


def test_player_zero_error_stops_before_player_one_is_examined() -> None:
    game = ProtocolGame("1.2", {"seed": 1})
    game.answer(["PICK 9", "garbage"])
    assert game.scores == (-1, 0) and game.error_player == 0


def test_empty_line_aborts_1_2_and_is_no_action_in_1_5() -> None:
    game = ProtocolGame("1.2", {"seed": 1})
    game.answer(["PICK 0", ""])
    assert game.over and game.winner is None and game.end_reason == EndReason.ABORTED_EMPTY_LINE
    game = ProtocolGame("1.5", {"seed": 1})
    game.answer(["PASS", "PASS"])
    game.answer([""])
    assert not game.over and game.state.active == 1


def test_time_quota_aborts_1_2_pass_versus_pass_at_turn_103() -> None:
    game = ProtocolGame("1.2", {"seed": 9})
    while requests := game.requests():
        game.answer(["PASS"] * len(requests))
    assert game.end_reason == EndReason.ABORTED_TIME_QUOTA and game.state.turn == 103
    assert game.scores == (0, 0) and game.winner is None


def test_draw_step_death_then_timeout_keeps_the_winner_and_says_so() -> None:
    game = ProtocolGame("1.5", {"seed": 9})
    while not game.state.is_terminal:
        game.answer(["PASS"] * len(game.requests()))
    loser = game.state.active
    assert game.requests()[0].player == loser  # the dead player is still asked
    game.answer([None])
    assert game.scores == ((-1, 1) if loser == 0 else (1, -1))
    assert game.summaries[-2:] == [f"${loser} timeout!", f"${1 - loser} won!"]
