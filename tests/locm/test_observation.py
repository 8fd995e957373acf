"""States rebuilt from a bot's input text agree with the real game."""

from __future__ import annotations

import pytest

from cardarena.locm import Phase, ProtocolGame, State
from cardarena.locm.engine.text import (
    UNKNOWN_CARD,
    battle_input,
    detect_version,
    parse_offered_cards,
)
from tests.conftest import conformance_games

VERSIONS = ("1.0", "1.2", "1.5")


def recorded_games(version: str, limit: int) -> list[dict]:
    return conformance_games(version)[:limit]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_recorded_battle_input_round_trips(version: str) -> None:
    deck_building_requests = 2 if version == "1.5" else 60
    checked = 0
    for game in recorded_games(version, 10_000):
        own_turns = [0, 0]
        for turn in game["turns"][deck_building_requests:]:
            player = turn["player"]
            state = State.from_input(version, turn["input"], player, own_turns[player])
            own_turns[player] += 1
            assert battle_input(state, player) == turn["input"]
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize("version", VERSIONS)
def test_the_version_is_told_from_every_recorded_input(version: str) -> None:
    """Deck building and battle blocks alike: ``locm bot`` reads the version from them."""
    for game in recorded_games(version, 20):
        for turn in game["turns"]:
            assert detect_version(turn["input"].splitlines()) == version


@pytest.mark.parametrize("version", VERSIONS)
def test_rebuilt_state_has_the_real_legal_actions(version: str) -> None:
    for game in recorded_games(version, 25):
        protocol = ProtocolGame(version, game["params"], game.get("league", 4))
        turns = iter(game["turns"])
        own_turns = [0, 0]
        while requests := protocol.requests():
            real = protocol.state
            if real.phase != Phase.DECK_BUILDING and not real.is_terminal:
                player = requests[0].player
                rebuilt = State.from_input(version, requests[0].input, player, own_turns[player])
                own_turns[player] += 1
                assert rebuilt.legal_actions() == real.legal_actions()
                assert rebuilt.turn == real.turn
                assert len(rebuilt.players[1 - player].hand) == len(real.players[1 - player].hand)
                assert all(i.card is UNKNOWN_CARD for i in rebuilt.players[1 - player].hand)
            protocol.answer([next(turns)["output"] for _ in requests])


def test_offered_cards_parse_back() -> None:
    state = State.new("1.5", {"seed": 42})
    assert parse_offered_cards(state.input_text(0), "1.5") == list(state.pool)
    state = State.new("1.2", {"seed": 42})
    assert parse_offered_cards(state.input_text(1), "1.2") == list(state.draft[0])


def test_my_deck_must_match_the_shown_count() -> None:
    state = State.new("1.2", {"seed": 2})
    while state.phase == Phase.DECK_BUILDING:
        state.apply(state.legal_actions()[0])
    text = state.input_text(0)
    shown = len(state.players[0].deck)
    with pytest.raises(ValueError, match=f"my_deck has 1 cards, the input says {shown}"):
        State.from_input("1.2", text, 0, my_deck=[UNKNOWN_CARD])
    deck = [inst.card for inst in state.players[0].deck]
    assert [i.card for i in State.from_input("1.2", text, 0, my_deck=deck).players[0].deck] == deck
