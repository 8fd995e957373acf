"""Whole matches and tournaments on a real server, checked against the rules engine and
against the scoring formulas computed by hand."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable

import pytest

from cardarena.shared_deck.bots import run_bot
from cardarena.shared_deck.client import Client, ServerError
from cardarena.shared_deck.errors import ErrorCode
from cardarena.shared_deck.match import replay
from cardarena.shared_deck.rules import TARGET_OPPONENT, TARGET_SELF, RuleSet
from cardarena.shared_deck.store import Store

from .conftest import RunningServer, fixed_deck

StartServer = Callable[..., RunningServer]


def test_bots_play_full_matches_that_the_rules_engine_replays_exactly(
    start_server: StartServer,
) -> None:
    turns = 20
    server = start_server(
        ["greedy", "randomer"],
        start_after_logins=2,
        rules=RuleSet(turns_per_match=turns),
        seed=11,
        # Long enough that a busy machine does not make the bots miss the turns they attack in.
        turn_seconds=0.25,
    )

    async def bots() -> None:
        await asyncio.gather(
            *(
                run_bot(server.host, server.port, name, server.secrets[name], strategy, seed=3,
                        turns=turns + 4)
                for name, strategy in (("greedy", "greedy"), ("randomer", "random"))
            )
        )

    asyncio.run(bots())
    server.wait_saved(1)
    with contextlib.closing(Store(server.server.config.db_path)) as store:
        tournament = store.tournament(1)
    assert len(tournament.matches) == 2
    with server.client("greedy") as client:
        for match in tournament.matches:
            assert any(a.command == "PLAY_CARD" and a.code == 0 for a in match.actions())
            assert any(a.command == "ATTACK" and a.code == 0 for a in match.actions())
            state = replay(tournament.deck, tournament.rules, match.actions())
            assert state.ended
            assert state.hp == [match.first_hp, match.second_hp]
            assert [state.score(0), state.score(1)] == [match.first_score, match.second_score]
            side = 0 if match.first == "greedy" else 1
            # The previous tournament stays reachable for its final scores.
            final = client.get_final_score(match.match_id)
            assert (final.mine, final.opponent) == (state.score(side), state.score(1 - side))


KILL_DECK = fixed_deck("1 D 20 0 0 0 -1", *(f"{i} C 1 1 1 0 1" for i in range(2, 12)))


def scripted_player(
    server: RunningServer, name: str, target: int, stop: threading.Event, errors: list[str]
) -> None:
    """On each of its turns, draw the top card and play it at ``target``."""
    with server.client(name) as client:
        while not stop.is_set():
            client.wait()
            for match_id in client.get_my_matches():
                if not client.get_turn_info(match_id).my_turn:
                    continue
                try:
                    card = client.draw_card(match_id)
                    client.play_card(match_id, card.id, target)
                except ServerError as error:
                    errors.append(f"{name}, match {match_id}: {error}")


def test_four_player_tournament_scores_match_hand_computed_values(
    start_server: StartServer,
) -> None:
    # "killer" plays Damage 20 at its opponent on its first turn of every match, "loser" plays
    # it at itself; "c" and "d" never connect. Pairings give (INIT_HP 20):
    #   killer's 6 matches: killer 20-0+60 = 80, opponent 0-20+0 = -20
    #   loser vs c and d (4 matches): loser -20, the other 80
    #   c vs d (2 matches): 20-20+30 = 30 each
    # Pool: ten 80s, ten -20s, four 30s, so R(80) = 14, R(30) = 10, R(-20) = 0.
    server = start_server(
        ["killer", "loser", "c", "d"],
        start_after_logins=2,
        turn_seconds=0.2,
        rules=RuleSet(turns_per_match=4),
        deck_factory=KILL_DECK,
    )
    stop = threading.Event()
    errors: list[str] = []
    threads = [
        threading.Thread(target=scripted_player, args=(server, name, target, stop, errors))
        for name, target in (("killer", TARGET_OPPONENT), ("loser", TARGET_SELF))
    ]
    for thread in threads:
        thread.start()
    try:
        server.wait_saved(1)
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    assert errors == []
    with contextlib.closing(Store(server.server.config.db_path)) as store:
        tournament = store.tournament(1)
        leaderboard = {row.player: row.points for row in store.leaderboard()}
    expected = {
        "killer": 6 * 14**1.5,
        "loser": 0.0,
        "c": 2 * 14**1.5 + 2 * 10**1.5,
        "d": 2 * 14**1.5 + 2 * 10**1.5,
    }
    assert tournament.points == pytest.approx(expected)
    assert leaderboard == pytest.approx(expected)
    scores = {(m.first, m.second): (m.first_score, m.second_score) for m in tournament.matches}
    assert scores[("killer", "c")] == scores[("c", "killer")][::-1] == (80, -20)
    assert scores[("loser", "killer")] == (-20, 80)
    assert scores[("d", "loser")] == (80, -20)
    assert scores[("c", "d")] == (30, 30)


def test_client_raises_typed_errors(start_server: StartServer) -> None:
    server = start_server(["alice", "bob"])
    with Client.connect(server.host, server.port, "alice", server.secrets["alice"]) as client:
        with pytest.raises(ServerError) as caught:
            client.get_hp(999)
        assert caught.value.code is ErrorCode.NoSuchMatch
        with pytest.raises(ServerError) as caught:
            client.request("NOPE")
        assert caught.value.code is ErrorCode.UnknownCommand
