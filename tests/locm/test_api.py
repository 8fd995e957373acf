"""The research API: one reusable test battery run on every version."""

from __future__ import annotations

import json
import pickle
import random

import pytest

from cardarena.locm import (
    PASS,
    Action,
    ActionType,
    IllegalActionError,
    ParameterError,
    Phase,
    ProtocolGame,
    State,
)
from cardarena.locm.agents import RandomAgent

VERSIONS = ("1.0", "1.2", "1.5")


def play_random(state: State, seed: int, max_actions: int = 10_000) -> list[Action]:
    agent = RandomAgent(seed)
    history = []
    while not state.is_terminal and len(history) < max_actions:
        action = agent.act(state)
        history.append(action)
        state.apply(action)
    return history


@pytest.mark.parametrize("version", VERSIONS)
def test_same_parameters_and_actions_give_the_same_game(version: str) -> None:
    first = State.new(version, {"seed": 11})
    history = play_random(first, seed=5)
    replayed = State.new(version, first.params.as_dict())
    for action in history:
        replayed.apply(action)
    assert replayed.to_dict() == first.to_dict()
    assert replayed.is_terminal and replayed.winner == first.winner


@pytest.mark.parametrize("version", VERSIONS)
def test_every_listed_action_is_legal_and_applies(version: str) -> None:
    rng = random.Random(3)
    state = State.new(version, {"seed": 21})
    while not state.is_terminal:
        actions = state.legal_actions()
        assert actions and len(set(actions)) == len(actions)
        for action in actions:
            assert state.is_legal(action)
            state.clone().apply(action)  # never raises
        state.apply(rng.choice(actions))
    assert state.legal_actions() == [] and state.winner in (0, 1, None)
    assert sum(state.returns()) == 0


@pytest.mark.parametrize("version", VERSIONS)
def test_clone_is_independent(version: str) -> None:
    state = State.new(version, {"seed": 8})
    agent = RandomAgent(1)
    while state.phase != Phase.BATTLE or state.turn < 8:
        state.apply(agent.act(state))
    before = state.to_dict()
    copy = state.clone()
    play_random(copy, seed=2)
    assert copy.is_terminal and state.to_dict() == before
    # and the other way round: playing on the original leaves the clone untouched
    copy = state.clone()
    snapshot = copy.to_dict()
    play_random(state, seed=2)
    assert copy.to_dict() == snapshot


@pytest.mark.parametrize("version", VERSIONS)
def test_pickle_and_json_round_trips(version: str) -> None:
    state = State.new(version, {"seed": 4})
    agent = RandomAgent(9)
    while state.phase != Phase.BATTLE or state.turn < 6:
        state.apply(agent.act(state))
    for restored in (
        pickle.loads(pickle.dumps(state)),
        State.from_dict(json.loads(json.dumps(state.to_dict())), version=version),
    ):
        assert restored.to_dict() == state.to_dict()
        assert restored.input_text(restored.active) == state.input_text(state.active)
        assert restored.legal_actions() == state.legal_actions()
        history = play_random(state.clone(), seed=3)
        twin = restored.clone()
        for action in history:
            twin.apply(action)
        assert twin.winner == play_random_winner(state, 3)


def play_random_winner(state: State, seed: int) -> int | None:
    copy = state.clone()
    play_random(copy, seed)
    return copy.winner


def test_a_state_from_another_version_is_refused() -> None:
    data = State.new("1.2", {"seed": 1}).to_dict()
    with pytest.raises(ValueError, match=r"LOCM 1\.2, expected LOCM 1\.5"):
        State.from_dict(data, version="1.5")
    with pytest.raises(ValueError, match="not a cardarena LOCM state"):
        State.from_dict({"format": "something else"})


def test_illegal_actions_raise_a_clear_error() -> None:
    state = State.new("1.5", {"seed": 1})
    with pytest.raises(IllegalActionError, match="PICK 0 is not a legal deck-building action"):
        state.apply(Action(ActionType.PICK, 0))
    with pytest.raises(TypeError, match="expected an Action"):
        state.apply("PASS")  # type: ignore[arg-type]
    while state.phase == Phase.DECK_BUILDING:
        state.apply(state.legal_actions()[0])
    with pytest.raises(IllegalActionError, match="ATTACK 999 -1 is not legal for player 0"):
        state.apply(Action(ActionType.ATTACK, 999, -1))
    state.abort(state.end_reason)
    with pytest.raises(IllegalActionError, match="the game has ended"):
        state.apply(PASS)


@pytest.mark.parametrize(
    ("version", "params", "message"),
    [
        ("2.0", {}, "unknown LOCM version '2.0'"),
        ("1.5", {"seed": "abc"}, "seed must be a decimal 64-bit integer"),
        ("1.5", {"seed": "42 "}, "seed must be a decimal 64-bit integer"),
        ("1.5", {"seed": 2**63}, "outside the Java long range"),
        ("1.2", {"draftChoicesSeed": "x1"}, "draftChoicesSeed must be a decimal 64-bit integer"),
        ("1.5", {"predefinedConstructedIds": "1,2,3"}, "needs 120 comma-separated card ids, got 3"),
        ("1.5", {"predefinedConstructedIds": ",".join(["0"] * 120)}, "card id 0 offered twice"),
        (
            "1.5",
            {"predefinedConstructedIds": ",".join(map(str, range(1, 121)))},
            r"unknown card id 120 \(generated cards are 0-119\)",
        ),
        (
            "1.5",
            {
                "predefinedCardListFile": "cardlist.txt",
                "predefinedConstructedIds": ",".join(map(str, range(0, 120))),
            },
            "unknown card id 0 in cardlist.txt",
        ),
        ("1.5", {"predefinedConstructedIds": "a" + ",1" * 119}, "entry 1 .'a'. is not a card id"),
        ("1.2", {"predefinedDraftIds": "1 2 3,4 5 6"}, "needs 30 comma-separated triples, got 2"),
        ("1.2", {"predefinedDraftIds": ",".join(["1 2 999"] * 30)}, "unknown card id 999"),
        ("1.2", {"predefinedDraftIds": ",".join(["1 2"] * 30)}, "needs 3 card ids"),
        ("1.5", {"predefinedCardListFile": "x.txt"}, "unknown card list 'x.txt'"),
    ],
)
def test_bad_parameters_are_refused_with_their_name(
    version: str, params: dict, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        State.new(version, params)
    if version in VERSIONS:
        with pytest.raises(ParameterError):
            State.new(version, params)


def test_predefined_draft_ids_replace_the_draft_generator() -> None:
    ids = ",".join(f"{i} {i + 1} {i + 2}" for i in range(1, 91, 3))
    state = State.new("1.2", {"seed": 5, "predefinedDraftIds": ids.replace(" ", "_")})
    assert [c.base_id for c in state.draft[0]] == [1, 2, 3]
    assert [c.base_id for c in state.draft[29]] == [88, 89, 90]
    # Printed back exactly as given, as the official referee does (replayable with -d).
    assert state.params.as_dict()["predefinedDraftIds"] == ids.replace(" ", "_")


def test_keys_a_version_does_not_read_are_kept_and_printed_back() -> None:
    given = {"cardGenSeed": "7", "draftChoicesSeed": "007", "seed": "3", "myTag": "run 1"}
    state = State.new("1.5", given)
    params = state.params.as_dict()
    assert params["draftChoicesSeed"] == "007" and params["myTag"] == "run 1"
    assert params["cardGenSeed"] == "7"  # a known sub-seed: the value used
    assert State.new("1.5", {"seed": "3", "cardGenSeed": "7"}).pool == state.pool
    # 1.2 ignores the 1.5 keys, even malformed ones, like the official referee.
    assert State.new("1.2", {"seed": 3, "cardGenSeed": "x", "predefinedCardListFile": "y"})


def test_predefined_constructed_ids_fix_the_1_5_pool_in_the_order_given() -> None:
    ids = ",".join(str(i) for i in reversed(range(120)))
    state = State.new("1.5", {"seed": 3, "predefinedConstructedIds": ids})
    generated = {card.base_id: card for card in State.new("1.5", {"seed": 3}).pool}
    assert [card.base_id for card in state.pool] == list(reversed(range(120)))
    assert state.pool[0] == generated[119]
    listed = ",".join(str(i) for i in range(41, 161))
    state = State.new("1.5", {"seed": 3, "predefinedCardListFile": "cardlist.txt",
                              "predefinedConstructedIds": listed})  # fmt: skip
    assert [card.base_id for card in state.pool] == list(range(41, 161))
    play_random(state, seed=1)
    assert state.is_terminal


def test_predefined_card_list_in_1_5_offers_120_of_the_160_cards() -> None:
    state = State.new("1.5", {"seed": 5, "predefinedCardListFile": "cardlist.txt"})
    costs = [(card.cost, card.base_id) for card in state.pool]
    assert len(costs) == 120 and costs == sorted(costs) and len(set(costs)) == 120
    play_random(state, seed=1)
    assert state.is_terminal


def test_missing_seed_is_drawn_and_reported() -> None:
    state = State.new("1.5")
    again = State.new("1.5", state.params.as_dict())
    assert again.pool == state.pool and again.params.as_dict() == state.params.as_dict()


def test_view_hides_what_the_player_cannot_see() -> None:
    state = State.new("1.2", {"seed": 3})
    play_random(state, seed=1, max_actions=90)
    view = state.view(0)
    assert view.opponent.hand is None and view.opponent.hand_size == len(state.players[1].hand)
    assert view.me.hand == tuple(state.players[0].hand)
    deck_cards = sorted(inst.card.base_id for inst in state.players[0].deck)
    assert [card.base_id for card in view.my_deck] == deck_cards  # the multiset, not the order
    assert "deck" not in repr(view.opponent).lower().replace("deck_size", "")


@pytest.mark.parametrize("version", VERSIONS)
def test_input_text_is_what_the_protocol_sends(version: str) -> None:
    game = ProtocolGame(version, {"seed": 17})
    requests = game.requests()
    assert [r.input for r in requests] == [game.state.input_text(p) for p in (0, 1)]
    first_line = requests[0].input.splitlines()[0]
    assert first_line == ("30 0 0 0" if version == "1.5" else "30 0 0 25 0")
