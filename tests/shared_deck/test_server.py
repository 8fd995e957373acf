"""A real server on 127.0.0.1 with real sockets: handshake, every command and error code,
WAIT, the budget, bad input, and the behaviour of idle or half-closed clients."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

from cardarena.shared_deck.rules import RuleSet

from .conftest import RawConnection, RunningServer, fixed_deck

StartServer = Callable[..., RunningServer]

SMALL_DECK = fixed_deck(
    "1 C 2 3 3 0 2",
    "2 D 2 0 0 1 -1",
    "3 C 1 1 1 0 1",
    "4 H 0 1 0 0 -1",
    "5 B 1 1 0 0 -1",
    "6 C 2 2 2 0 1",
)


def err(code: int, name: str) -> list[str]:
    return [f"ERR {code} {name}"]


def logged_in(server: RunningServer, name: str) -> RawConnection:
    connection = server.raw()
    connection.login(name, server.secrets[name])
    return connection


def wait_turn(*connections: RawConnection) -> None:
    """WAIT on every connection: one OK at once, the second when the next turn starts."""
    for connection in connections:
        assert connection.ask("WAIT") == ["OK"]
    for connection in connections:
        assert connection.line() == "OK"


def wait_for_matches(connection: RawConnection) -> None:
    while connection.ask("GET_MY_MATCHES", 3)[1] == "0":
        wait_turn(connection)


def test_every_command_and_game_error_code_over_the_wire(start_server: StartServer) -> None:
    server = start_server(
        ["alice", "bob", "carol"],
        turn_seconds=0.5,
        start_after_logins=2,
        rules=RuleSet(init_hp=2, draws_per_turn=3, hand_limit=2, turns_per_match=8, deck_size=6),
        deck_factory=SMALL_DECK,
    )
    alice, bob = logged_in(server, "alice"), logged_in(server, "bob")
    wait_for_matches(alice)
    # Matches: 1 alice-bob, 2 bob-alice, 3 alice-carol, 4 carol-alice, 5 bob-carol, 6 carol-bob.
    # ---- turn 0: alice moves in match 1, bob in match 2
    assert alice.ask("GET_MY_MATCHES", 3) == ["OK", "4", "1 2 3 4"]
    assert alice.ask("GET_TURN_INFO 1", 2) == ["OK", "1 8"]
    assert alice.ask("GET_TURN_INFO 2", 2) == ["OK", "0 8"]
    assert alice.ask("GET_HP 2") == err(913, "NotYourTurn")
    assert alice.ask("GET_HP 5") == err(930, "NotYourMatch")
    assert alice.ask("GET_HP 77") == err(954, "NoSuchMatch")
    assert alice.ask("GET_FINAL_SCORE 1") == err(933, "GameHasNotEndedYet")
    assert alice.ask("GET_HP 1", 2) == ["OK", "2 2 2"]
    assert alice.ask("GET_CARD_LIMITS 1", 2) == ["OK", "3 2 2"]
    assert alice.ask("GET_CURRENT_MANA 1", 2) == ["OK", "0"]
    assert alice.ask("GET_DECK 1", 8) == [
        "OK", "6", "1 C 2 3 3 0 2", "2 D 2 0 0 1 -1", "3 C 1 1 1 0 1", "4 H 0 1 0 0 -1",
        "5 B 1 1 0 0 -1", "6 C 2 2 2 0 1",
    ]  # fmt: skip
    assert alice.ask("GET_ATTACKERS 1", 2) == ["OK", "0"]
    assert alice.ask("BLOCK 1 1 1") == err(910, "NoSuchAttacker")
    assert alice.ask("DRAW_CARD 1", 2) == ["OK", "1 C 2 3 3 0 2"]
    assert alice.ask("FINISH_BLOCK 1") == err(911, "BlockingAlreadyFinished")
    assert alice.ask("DRAW_CARD 1", 2) == ["OK", "2 D 2 0 0 1 -1"]
    assert alice.ask("DRAW_CARD 1") == err(919, "HandLimitExceeded")
    assert alice.ask("PLAY_CARD 1 2 -6") == err(901, "NotEnoughMana")
    assert alice.ask("PLAY_CARD 1 1 -6") == err(915, "WrongTarget")
    assert alice.ask("PLAY_CARD 1 2 999") == err(916, "SpellTargetNotOnBoard")
    assert alice.ask("PLAY_CARD 1 3 -1") == err(906, "CardNotInHand")
    assert alice.ask("PLAY_CARD 1 1 -1") == ["OK"]
    assert alice.ask("ADD_MANA 1 1") == err(905, "InactiveCard")
    assert alice.ask("ADD_MANA 1 2") == err(912, "CardNotOnBoard")
    assert alice.ask("ADD_MANA 1 4242") == err(900, "NoCardWithSuchId")
    assert alice.ask("DRAW_CARD 1", 2) == ["OK", "3 C 1 1 1 0 1"]
    assert alice.ask("DRAW_CARD 1") == err(907, "DrawLimitExceeded")
    assert alice.ask("GET_HANDS 1", 4) == ["OK", "2 0", "2 D 2 0 0 1 -1", "3 C 1 1 1 0 1"]
    assert alice.ask("DISCARD_CARD 1 3") == ["OK"]
    assert alice.ask("BURN_CARD 1") == ["OK"]
    assert alice.ask("BURN_CARD 1") == ["OK"]
    assert alice.ask("BURN_CARD 1") == err(908, "BurnLimitExceeded")
    assert alice.ask("GET_BOARD 1", 3) == ["OK", "1 0", "1 C 2 3 3 0 2 0"]
    assert alice.ask("GET_DECK 1", 3) == ["OK", "1", "6 C 2 2 2 0 1"]
    assert bob.ask("DRAW_CARD 2", 2) == ["OK", "1 C 2 3 3 0 2"]
    assert bob.ask("PLAY_CARD 2 1 -1") == ["OK"]
    assert bob.ask("DRAW_CARD 1") == err(913, "NotYourTurn")
    # WAIT holds the commands sent after it until the next turn starts.
    alice.send("WAIT\nGET_TURN_INFO 1\n")
    assert alice.line() == "OK"
    bob_wait = bob.ask("WAIT")
    assert [alice.line(), alice.line(), alice.line()] == ["OK", "OK", "0 7"]
    assert [*bob_wait, bob.line()] == ["OK", "OK"]
    # ---- turn 1: bob moves in match 1
    assert bob.ask("GET_BOARD 1", 3) == ["OK", "0 1", "1 C 2 3 3 0 2 0"]
    assert bob.ask("ADD_MANA 1 1") == err(903, "NotYourCard")
    assert bob.ask("DRAW_CARD 1", 2) == ["OK", "6 C 2 2 2 0 1"]
    assert bob.ask("DRAW_CARD 1") == err(918, "DeckIsEmpty")
    assert bob.ask("PLAY_CARD 1 6 -1") == ["OK"]
    wait_turn(alice, bob)
    # ---- turn 2: alice taps her creature and kills bob in match 1; bob attacks in match 2
    assert alice.ask("ADD_MANA 1 1") == ["OK"]
    assert alice.ask("GET_CURRENT_MANA 1", 2) == ["OK", "2"]
    assert alice.ask("PLAY_CARD 1 2 -6") == ["OK"]
    assert alice.ask("DRAW_CARD 1") == err(932, "GameHasEnded")
    assert alice.ask("GET_FINAL_SCORE 1", 2) == ["OK", "8 -2"]  # 2 - 0 + 3*2 ; 0 - 2 + 0
    assert bob.ask("GET_FINAL_SCORE 1", 2) == ["OK", "-2 8"]
    assert bob.ask("GET_TURN_INFO 1", 2) == ["OK", "0 0"]
    assert bob.ask("ATTACK 2 1") == ["OK"]
    wait_turn(alice, bob)
    # ---- turn 3: alice faces bob's attacker in match 2 and lets it through
    assert alice.ask("GET_ATTACKERS 2", 3) == ["OK", "1", "1 C 2 3 3 0 2"]
    assert alice.ask("BLOCK 2 1 1") == err(903, "NotYourCard")
    assert alice.ask("FINISH_BLOCK 2") == ["OK"]
    assert alice.ask("GET_FINAL_SCORE 2", 2) == ["OK", "-2 8"]
    alice.close()
    bob.close()


def test_login_handshake(start_server: StartServer) -> None:
    # Turns that cannot time out during the test: the matches stay the first tournament's
    # however long the secret checks take on a loaded machine.
    server = start_server(["alice", "bob"], turn_seconds=600)
    connection = server.raw()
    assert connection.line() == "LOGIN"
    assert connection.ask("GET_MY_MATCHES") == err(941, "NotLoggedIn")
    assert connection.ask("alice") == ["PASSWORD"]
    assert connection.ask(server.secrets["alice"]) == ["OK"]
    assert connection.ask("GET_MY_MATCHES", 3) == ["OK", "2", "1 2"]

    for name, secret in (("alice", server.secrets["bob"]), ("nobody", "x"), ("", "")):
        refused = server.raw()
        assert refused.line() == "LOGIN"
        assert refused.ask(name) == ["PASSWORD"]  # even for an unknown name
        assert refused.ask(secret) == err(940, "AuthenticationFailed")
        assert refused.line() == ""  # and the server closes the connection
        refused.close()

    # A second login for the same player closes the first connection, saying why.
    second = logged_in(server, "alice")
    assert connection.line() == "ERR 942 LoggedInElsewhere"
    assert connection.line() == ""
    assert second.ask("GET_MY_MATCHES", 3) == ["OK", "2", "1 2"]
    connection.close()
    second.close()


def test_protocol_errors_never_disturb_the_connection(start_server: StartServer) -> None:
    server = start_server(["alice", "bob"])
    alice = logged_in(server, "alice")
    for line, answer in (
        ("HELLO", err(950, "UnknownCommand")),
        ("get_hp 1", err(950, "UnknownCommand")),
        ("", err(950, "UnknownCommand")),
        ("GET_HP", err(951, "WrongArguments")),
        ("GET_HP 1 2", err(951, "WrongArguments")),
        ("GET_HP x", err(951, "WrongArguments")),
        ("GET_HP +1", err(951, "WrongArguments")),
        ("GET_HP 1_0", err(951, "WrongArguments")),
        ("GET_MY_MATCHES 1", err(951, "WrongArguments")),
        ("A" * 1025, err(952, "LineTooLong")),
        ("A" * 1024, err(950, "UnknownCommand")),
        ("GET_HP 99999999999999999999999", err(951, "WrongArguments")),
    ):
        assert alice.ask(line) == answer, line
    alice.send(b"\x00\xff\xfe garbage\r\n")
    assert alice.line() == "ERR 950 UnknownCommand"
    alice.send("GET_MY_MATCHES\r\n")
    assert [alice.line() for _ in range(3)] == ["OK", "2", "1 2"]
    # A huge line arriving in pieces is refused once, then dropped up to its end.
    for _ in range(5):
        alice.send("B" * 3000)
    alice.send("\nGET_MY_MATCHES\n")
    assert [alice.line() for _ in range(4)] == ["ERR 952 LineTooLong", "OK", "2", "1 2"]
    assert server.server.internal_errors == 0
    alice.close()


def test_flooding_is_cut_by_the_per_turn_budget(start_server: StartServer) -> None:
    server = start_server(["alice", "bob"], command_budget=5, turn_seconds=0.2)
    alice = logged_in(server, "alice")
    wait_turn(alice)  # start at the beginning of a turn, so that all of it fits in one
    alice.send("GET_MY_MATCHES\n" * 8)
    answers = [alice.line() for _ in range(5 * 3 + 3)]
    assert answers[:15] == ["OK", "2", "1 2"] * 5
    assert answers[15:] == ["ERR 953 TooManyCommands"] * 3
    wait_turn(alice)  # WAIT is never refused, and the budget is per turn
    assert alice.ask("GET_MY_MATCHES", 3) == ["OK", "2", "1 2"]
    alice.close()


def test_a_client_that_never_reads_does_not_slow_the_others(start_server: StartServer) -> None:
    server = start_server(["alice", "bob"], turn_seconds=0.2)
    flooder = logged_in(server, "alice")
    flooder.sock.settimeout(0.5)
    sent = 0
    try:
        while sent < 50_000_000:
            flooder.sock.send(b"GET_DECK 1\n" * 10_000)
            sent += 110_000
    except (TimeoutError, BlockingIOError):
        pass  # the server stopped reading: its answers are not being read
    bob = logged_in(server, "bob")
    started = time.monotonic()
    assert bob.ask("GET_MY_MATCHES", 3) == ["OK", "2", "1 2"]
    assert time.monotonic() - started < 5  # generous: only proves bob was not blocked
    flooder.close()
    bob.close()


def test_silent_and_half_closed_clients(start_server: StartServer) -> None:
    server = start_server(["alice", "bob"], login_timeout=0.5)
    silent = server.raw()
    assert silent.line() == "LOGIN"
    bob = logged_in(server, "bob")
    assert bob.ask("GET_MY_MATCHES", 3) == ["OK", "2", "1 2"]
    assert silent.line() == ""  # closed at the login timeout

    half = server.raw()
    half.send(f"alice\n{server.secrets['alice']}\nGET_MY_MATCHES\nWAIT\n")
    half.sock.shutdown(socket.SHUT_WR)
    lines = [half.line() for _ in range(8)]
    assert lines == ["LOGIN", "PASSWORD", "OK", "OK", "2", "1 2", "OK", "OK"]
    assert half.line() == ""
    assert bob.ask("GET_MY_MATCHES", 3) == ["OK", "2", "1 2"]
    silent.close()
    half.close()
    bob.close()


def test_many_clients_at_once_get_their_own_answers(start_server: StartServer) -> None:
    names = [f"p{i}" for i in range(6)]
    server = start_server(names, turn_seconds=1.0)
    failures: list[str] = []

    def play(name: str) -> None:
        with server.client(name) as client:
            ids = client.get_my_matches()
            for _ in range(50):
                if sorted(client.get_my_matches()) != sorted(ids):
                    failures.append(name)

    threads = [threading.Thread(target=play, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == []


def test_attack_and_block_over_the_wire(start_server: StartServer) -> None:
    server = start_server(
        ["alice", "bob"],
        turn_seconds=0.3,
        start_after_logins=2,
        rules=RuleSet(turns_per_match=10),
        deck_factory=fixed_deck("1 C 2 3 3 0 2", "2 C 1 5 5 0 1", "3 H 0 1 0 0 -1"),
    )
    alice, bob = logged_in(server, "alice"), logged_in(server, "bob")
    wait_for_matches(alice)
    # Match 1: alice moves on even turns, bob on odd ones.
    assert alice.ask("DRAW_CARD 1", 2) == ["OK", "1 C 2 3 3 0 2"]
    assert alice.ask("PLAY_CARD 1 1 -1") == ["OK"]
    wait_turn(alice, bob)
    assert bob.ask("DRAW_CARD 1", 2) == ["OK", "2 C 1 5 5 0 1"]
    assert bob.ask("PLAY_CARD 1 2 -1") == ["OK"]
    wait_turn(alice, bob)
    assert alice.ask("ATTACK 1 1") == ["OK"]
    wait_turn(alice, bob)
    assert bob.ask("GET_ATTACKERS 1", 3) == ["OK", "1", "1 C 2 3 3 0 2"]
    assert bob.ask("BLOCK 1 1 2") == err(905, "InactiveCard")  # played last turn: not yet
    assert bob.ask("FINISH_BLOCK 1") == ["OK"]
    assert bob.ask("GET_HP 1", 2) == ["OK", "20 18 20"]
    wait_turn(alice, bob)
    assert alice.ask("ATTACK 1 1") == ["OK"]
    wait_turn(alice, bob)
    assert bob.ask("BLOCK 1 1 2") == ["OK"]
    assert bob.ask("GET_BOARD 1", 4) == ["OK", "1 1", "2 C 1 3 5 0 1 0", "1 C 2 2 3 0 2 0"]
    assert bob.ask("BLOCK 1 1 2") == err(905, "InactiveCard")  # a blocker blocks once
    assert bob.ask("FINISH_BLOCK 1") == ["OK"]
    assert bob.ask("GET_HP 1", 2) == ["OK", "20 18 20"]  # a blocked attacker deals no damage
    assert bob.ask("GET_BOARD 1", 4) == ["OK", "1 1", "2 C 1 3 5 0 1 1", "1 C 2 2 3 0 2 0"]
    alice.close()
    bob.close()
