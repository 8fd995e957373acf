"""Per-client limits of the Shared Deck server, against a real server on loopback."""

from __future__ import annotations

import contextlib
import errno
import logging
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest

from cardarena.shared_deck.client import AuthenticationError, Client, ProtocolViolation
from cardarena.shared_deck.logins import KNOWN_SOURCES_PER_NAME, LOGIN_NICE
from cardarena.shared_deck.rules import Card, RuleSet
from cardarena.shared_deck.server import (
    COST_UNIT_BYTES,
    DEFAULT_MAX_CONNECTIONS,
    REFUSED_PER_TURN,
    RESERVED_DESCRIPTORS,
    ServerConfig,
)
from cardarena.shared_deck.store import Store
from tests.shared_deck.conftest import RawConnection, RunningServer
from tests.shared_deck.test_docs import section

StartServer = Callable[..., RunningServer]
CLI = [sys.executable, "-m", "cardarena.shared_deck.cli"]


def test_prelogin_flood_is_disconnected(start_server: StartServer) -> None:
    server = start_server(["alice"], prelogin_lines=4)
    flooder = server.raw()
    assert flooder.line() == "LOGIN"
    flooder.send("GET_MY_MATCHES\n" * 50)
    answers = []
    while True:
        line = flooder.line()
        if not line:
            break
        answers.append(line)
    # The server closed the connection (line() returned '') with at most four answers.
    assert len(answers) <= 4
    honest = server.raw()
    honest.login("alice", server.secrets["alice"])


@pytest.mark.parametrize("value", [0.0, -1.0, float("nan"), float("inf")])
def test_login_timeout_must_be_finite_and_positive(value: float) -> None:
    with pytest.raises(ValueError, match="login_timeout"):
        ServerConfig(login_timeout=value)


def test_login_timeout_closes_a_silent_connection(start_server: StartServer) -> None:
    server = start_server(["alice"], login_timeout=0.2)
    silent = server.raw()
    assert silent.line() == "LOGIN"
    assert silent.line() == ""  # closed by the server, not by the 10 s client timeout


def test_a_secret_sent_in_time_is_not_cut_off_by_a_slow_check(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The login timeout is the client's time; on a busy machine the (niced) check itself can
    # outlast it, and that must not cost an honest player the login.
    import cardarena.shared_deck.logins as logins

    release = threading.Event()
    real_verify = logins._verify

    def slow_verify(secret: str, stored: str | None) -> bool:
        assert release.wait(30), "the test never released the check"
        return real_verify(secret, stored)

    monkeypatch.setattr(logins, "_verify", slow_verify)
    server = start_server(["alice"], login_timeout=0.2)
    honest = server.raw()
    assert honest.line() == "LOGIN"
    honest.send("alice\n")
    assert honest.line() == "PASSWORD"
    honest.send(f"{server.secrets['alice']}\n")
    witness = server.raw()  # connected later, silent: its closing shows the timeout has passed
    assert witness.line() == "LOGIN"
    assert witness.line() == ""
    release.set()
    assert honest.line() == "OK"
    assert honest.ask("GET_MY_MATCHES", 1)[0] == "OK"
    honest.close()
    witness.close()


# ------------------------------------------------------------------ helpers
def wait_until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Poll a condition (not a fixed sleep): fails only if it is still false at the timeout."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def connect_from(server: RunningServer, source: str, receive_buffer: int = 0) -> RawConnection:
    """A raw connection from another loopback address (Linux routes all of 127/8 locally)."""
    connection = RawConnection.__new__(RawConnection)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.settimeout(10)
    sock.bind((source, 0))
    sock.connect((server.host, server.port))
    connection.sock, connection.reader = sock, sock.makefile("rb")
    return connection


def my_turn_match(connection: RawConnection) -> int:
    """A match where it is this player's turn (two players: one of the two)."""
    ok, _, ids = connection.ask("GET_MY_MATCHES", 3)
    assert ok == "OK"
    for match_id in map(int, ids.split()):
        answer = connection.ask(f"GET_TURN_INFO {match_id}", 2)
        if answer[1].split()[0] == "1":
            return match_id
    raise AssertionError("no match where it is my turn")


# ------------------------------------------------------------------ connections
def test_connection_cap_closes_the_oldest_not_logged_in_then_refuses(
    start_server: StartServer,
) -> None:
    server = start_server(["alice", "bob", "carol"], max_connections=3)
    first, second, third = (server.raw() for _ in range(3))
    for connection in (first, second, third):
        assert connection.line() == "LOGIN"
    fourth = server.raw()
    assert fourth.line() == "LOGIN"
    assert first.line() == ""  # the oldest connection not logged in made room
    for connection, name in ((second, "alice"), (third, "bob"), (fourth, "carol")):
        connection.send(f"{name}\n{server.secrets[name]}\n")
        assert [connection.line() for _ in range(2)] == ["PASSWORD", "OK"]
    # Everyone is logged in: a new connection is closed before a byte is sent.
    fifth = server.raw()
    assert fifth.line() == ""
    assert second.ask("GET_MY_MATCHES")[0] == "OK"
    assert server.server.refused_connections == 2
    for connection in (first, second, third, fourth, fifth):
        connection.close()


def test_descriptor_limit_is_raised_and_a_flood_stays_below_it(tmp_path: Path) -> None:
    """A real ``serve`` started with a soft limit of 48 descriptors (hard 512): it raises the
    soft limit, caps connections well below it (512 - 332 = 180), and 400 connections cost
    neither an honest login nor a log flood."""
    db = tmp_path / "fd.db"
    with contextlib.closing(Store(db)) as store:
        secret = store.add_player("alice")
    log = tmp_path / "serve.log"

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (48, 512))

    server = subprocess.Popen(
        [*CLI, "serve", "--port", "0", "--db", str(db), "--turn-seconds", "0.5"],
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
        preexec_fn=low_limit,
    )
    flood: list[socket.socket] = []
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("shared-deck listening on 127.0.0.1:"), log.read_text()
        port = int(line.rsplit(":", 1)[1])
        limits = Path(f"/proc/{server.pid}/limits").read_text()
        assert re.search(r"Max open files\s+512\s+512", limits), limits
        for _ in range(400):
            flood.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        honest = RawConnection("127.0.0.1", port)
        honest.login("alice", secret)
        assert honest.ask("GET_MY_MATCHES", 3)[0] == "OK"
        honest.close()
    finally:
        for sock in flood:
            sock.close()
        server.send_signal(signal.SIGINT)
        server.wait(30)
    text = log.read_text()
    assert server.returncode == 0, text
    assert "Traceback" not in text and "out of system resource" not in text, text
    assert text.count("connection cap 180 reached") == 1, text
    assert len(text.splitlines()) < 20, text


def test_asyncio_errors_are_not_repeated_in_the_log(
    start_server: StartServer, caplog: pytest.LogCaptureFixture
) -> None:
    server = start_server(["alice"])
    context = {
        "message": "socket.accept() out of system resource",
        "exception": OSError(errno.EMFILE, "Too many open files"),
    }

    def flood() -> None:
        for _ in range(1000):
            server.loop.call_exception_handler(dict(context))

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        server.call(flood)
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == [context["message"]]


# ------------------------------------------------------------------ secret checks
def test_a_wrong_secret_flood_does_not_delay_an_honest_login(start_server: StartServer) -> None:
    """200 wrong secrets queued from 127.0.0.2 (the per-address limit raised to let them all
    in): checks are served round-robin per address, so alice's login from 127.0.0.1 waits for
    at most one of them, not 200 (about 10 s of scrypt on one thread)."""
    server = start_server(["alice", "bob"], login_checks_per_address=200)
    checker = server.server.checker
    assert checker is not None
    flood = [connect_from(server, "127.0.0.2") for _ in range(200)]
    for number, connection in enumerate(flood):
        connection.send(f"nobody{number}\nnot-the-secret\n")
    wait_until(lambda: server.call(lambda: checker.per_address_count.get("127.0.0.2", 0)) >= 150)
    honest = server.raw()
    honest.login("alice", server.secrets["alice"])
    # Counted, not timed (a busy machine makes any scrypt check slow): alice got in while
    # most of the flood still waited, so hers was not queued behind it.
    queued = server.call(lambda: checker.per_address_count.get("127.0.0.2", 0))
    assert queued >= 100, "the flood was checked first"
    # The flooders leave: their checks that have not started are dropped, not run.
    for connection in flood:
        connection.close()
    wait_until(lambda: server.call(lambda: checker.per_address_count.get("127.0.0.2", 0)) == 0)
    assert checker.dropped >= 90
    assert honest.ask("GET_MY_MATCHES", 3)[0] == "OK"
    honest.close()


def test_checks_are_limited_per_address_and_per_name(start_server: StartServer) -> None:
    server = start_server(["alice", "bob"], login_checks_per_address=4)
    checker = server.server.checker
    assert checker is not None
    checked = ["LOGIN", "PASSWORD", "ERR 940 AuthenticationFailed", ""]
    refused = ["LOGIN", "PASSWORD", ""]  # closed unanswered: the secret was never checked

    def outcomes(connections: list[RawConnection]) -> list[list[str]]:
        answers = []
        for connection in connections:
            lines = [connection.line() for _ in range(3)]
            answers.append(lines if lines == refused else [*lines, connection.line()])
        return answers

    # Ten wrong secrets at once from one address: four are checked, the others refused.
    same_address = [connect_from(server, "127.0.0.3") for _ in range(10)]
    for number, connection in enumerate(same_address):
        connection.send(f"nobody{number}\nwrong\n")
    answers = outcomes(same_address)
    assert answers.count(checked) + answers.count(refused) == 10
    assert answers.count(refused) >= 4  # six, unless a check ended before the last arrived
    # Wrong secrets for bob: one at a time from one address; from six other addresses, all
    # six are checked (no total per name that other addresses could fill).
    from_one = [connect_from(server, "127.0.0.4") for _ in range(3)]
    from_many = [connect_from(server, f"127.0.2.{number}") for number in range(1, 7)]
    for connection in from_one + from_many:
        connection.send("bob\nwrong\n")
    # While bob's flood is being checked, alice and bob (from 127.0.0.1) still log in.
    server.raw().login("alice", server.secrets["alice"])
    answers = outcomes(from_one + from_many)
    assert answers.count(checked) + answers.count(refused) == 9
    assert answers[:3].count(refused) >= 1 and answers[3:] == [checked] * 6
    for _ in range(3):  # a flood aimed at bob from one address does not lock him out
        flood = [connect_from(server, "127.0.0.4") for _ in range(3)]
        for connection in flood:
            connection.send("bob\nwrong\n")
        server.raw().login("bob", server.secrets["bob"])
        for connection in flood:
            connection.close()
    for connection in same_address + from_one + from_many:
        connection.close()


# ------------------------------------------------------------------ cost and output
BIG_DECK = RuleSet(deck_size=1000, turns_per_match=60)


def read_answers(connection: RawConnection, count: int) -> list[str]:
    """The first line of each of ``count`` answers to GET_DECK (skipping a deck's lines)."""
    firsts = []
    for _ in range(count):
        first = connection.line()
        firsts.append(first)
        if first == "OK":
            for _ in range(int(connection.line())):
                connection.line()
    return firsts


def test_the_turn_budget_counts_the_cost_of_answers(start_server: StartServer) -> None:
    """998 GET_DECK on a 1,000-card deck: a few are answered, then the budget is spent, and
    after REFUSED_PER_TURN refusals the rest waits for the next turn."""
    server = start_server(["alice", "bob"], rules=BIG_DECK, turn_seconds=30.0)
    alice = server.raw()
    alice.login("alice", server.secrets["alice"])
    match_id = my_turn_match(alice)
    alice.send(f"GET_DECK {match_id}\n" * 998)
    deck_bytes = len("".join(card.line + "\n" for card in server.call(lambda: deck_of(server))))
    cost = 1 + (len(f"OK\n{1000}\n") + deck_bytes) // COST_UNIT_BYTES
    assert cost >= 40  # a 1,000-card deck is not one unit
    answered = -(-1000 // cost)  # answered while the budget was not yet spent
    firsts = read_answers(alice, answered + REFUSED_PER_TURN)
    assert firsts == ["OK"] * answered + ["ERR 953 TooManyCommands"] * REFUSED_PER_TURN
    session = server.call(lambda: server.server.sessions["alice"])
    assert server.call(lambda: server.server.throttled) == [session]
    alice.close()


def deck_of(server: RunningServer) -> list[Card]:
    arena = server.server.arena
    assert arena is not None and arena.current is not None
    return list(arena.current.deck)


@pytest.mark.parametrize(
    ("limit", "counter"),
    [({"max_unread_bytes": 20_000}, "bytes"), ({"unread_seconds": 0.3}, "seconds")],
)
def test_a_client_that_never_reads_is_disconnected_and_freed(
    start_server: StartServer, limit: dict[str, float], counter: str
) -> None:
    """A real socket with a small receive buffer asks for whole decks and never reads: over
    the byte cap (or the time it may leave 64 KiB unread) it is cut off and its memory freed."""
    server = start_server(
        ["alice", "bob"], rules=BIG_DECK, turn_seconds=30.0, command_budget=100_000, **limit
    )
    reader = connect_from(server, "127.0.0.1", receive_buffer=4096)
    reader.login("alice", server.secrets["alice"])
    match_id = my_turn_match(reader)
    connection = weakref.ref(server.call(lambda: server.server.sessions["alice"]))
    reader.sock.settimeout(0.5)
    with contextlib.suppress(TimeoutError, ConnectionError):
        for _ in range(100):  # at most ~1 MB of commands; the server stops reading long before
            reader.sock.sendall(f"GET_DECK {match_id}\n".encode() * 1000)
    wait_until(lambda: server.call(lambda: server.server.dropped_nonreaders) == 1)
    wait_until(lambda: server.call(lambda: connection() is None))  # nothing holds it any more
    assert server.call(lambda: "alice" not in server.server.sessions)
    bob = server.raw()
    bob.login("bob", server.secrets["bob"])
    assert bob.ask("GET_MY_MATCHES", 3)[0] == "OK"
    reader.close()
    bob.close()


def test_a_client_refused_too_often_is_not_read_until_the_next_turn(
    start_server: StartServer,
) -> None:
    server = start_server(["alice", "bob"], command_budget=5, turn_seconds=2.0)
    alice = server.raw()
    alice.login("alice", server.secrets["alice"])
    assert alice.ask("WAIT", 2) == ["OK", "OK"]  # at the start of a turn
    alice.send("GET_MY_MATCHES\n" * (5 + REFUSED_PER_TURN + 50))
    assert [alice.line() for _ in range(15)] == ["OK", "2", "1 2"] * 5
    assert [alice.line() for _ in range(REFUSED_PER_TURN)] == ["ERR 953 TooManyCommands"] * 100
    # The last 50 lines were held, not refused: the next turn answers them with a new budget.
    assert [alice.line() for _ in range(15)] == ["OK", "2", "1 2"] * 5
    assert [alice.line() for _ in range(45)] == ["ERR 953 TooManyCommands"] * 45
    alice.close()


def test_a_long_burst_is_answered_in_slices(start_server: StartServer) -> None:
    """256 KiB of commands in one go are answered 64 KiB at a time in separate loop callbacks
    (so one client cannot hold the loop): all of them, in order."""
    server = start_server(["alice", "bob"], command_budget=100_000, turn_seconds=30.0)
    alice = server.raw()
    alice.login("alice", server.secrets["alice"])
    lines = 256 * 1024 // len("GET_TURN_INFO 1\n")
    alice.send("GET_TURN_INFO 1\n" * lines)
    answers = [alice.line() for _ in range(2 * lines)]
    assert answers[0::2] == ["OK"] * lines
    assert len(set(answers[1::2])) == 1
    assert alice.ask("GET_MY_MATCHES", 3) == ["OK", "2", "1 2"]
    alice.close()


def test_the_limits_section_states_the_defaults_of_the_code() -> None:
    text = section("Limits")
    config = ServerConfig()
    for name in (
        "max_connections", "login_timeout", "prelogin_lines", "login_checks_per_address",
        "login_threads", "command_budget", "max_unread_bytes", "unread_seconds",
    ):  # fmt: skip
        assert f"`ServerConfig.{name}`" in text, name
    assert f"| {DEFAULT_MAX_CONNECTIONS}, fewer" in text
    assert f"| {config.login_timeout:.0f} s |" in text
    assert f"| {config.prelogin_lines} |" in text
    assert f"| {config.login_checks_per_address} waiting or running |" in text
    assert "| Secret checks per name | 1 per source |" in text
    assert f"the last {KNOWN_SOURCES_PER_NAME} sources" in text
    assert f"| {config.login_threads}, at a lower CPU priority (nice +{LOGIN_NICE}) |" in text
    assert f"| {config.command_budget} units |" in text
    assert f"| {REFUSED_PER_TURN} |" in text
    assert f"1 per {COST_UNIT_BYTES} bytes of its answer" in text
    assert config.max_unread_bytes == 1 << 20 and "| 1 MiB |" in text
    assert f"| {config.unread_seconds:.0f} s with 64 KiB or more unread |" in text
    assert f"at least {RESERVED_DESCRIPTORS} below it" in text


def test_the_client_takes_a_login_closed_unanswered_for_a_lost_connection() -> None:
    """What the server does to a login over the limits (LOGIN, PASSWORD, then close): the
    client library raises a connection error, which its reconnection retries, not
    AuthenticationError, which makes bots give up."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def busy_server() -> None:
        connection, _ = listener.accept()
        with connection, connection.makefile("rb") as reader:
            connection.sendall(b"LOGIN\n")
            reader.readline()
            connection.sendall(b"PASSWORD\n")
            reader.readline()

    thread = threading.Thread(target=busy_server)
    thread.start()
    try:
        with pytest.raises(ProtocolViolation) as raised:
            Client.connect("127.0.0.1", port, "alice", "secret", timeout=10)
        assert not isinstance(raised.value, AuthenticationError)
        assert isinstance(raised.value, OSError)  # in the reconnection's retried errors
    finally:
        thread.join(10)
        listener.close()
