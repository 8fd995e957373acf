"""Floods from many source addresses: secret checks, connections, the dashboard, the bot.

Real sockets on loopback only: the honest player connects from 127.0.0.1, the attackers from
127.0.0.2 ... 127.0.0.17 (Linux routes all of 127.0.0.0/8 locally). Every attack loop stops by
itself (a deadline and a stop event); nothing measures speed (see
benchmarks/servers_under_flood.py for the 2-second bar).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import resource
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

import cardarena.shared_deck.logins as logins
from cardarena.httpguard import BASE_DESCRIPTORS, HttpLimits, accept_reserve
from cardarena.shared_deck.dashboard import DESCRIPTOR_SHARE
from cardarena.shared_deck.logins import KNOWN_SOURCES_PER_NAME, SecretChecker, source_of
from cardarena.shared_deck.server import RESERVED_DESCRIPTORS
from cardarena.shared_deck.store import Store
from tests.shared_deck.conftest import RawConnection, RunningServer
from tests.shared_deck.test_docs import section
from tests.shared_deck.test_limits import connect_from, wait_until

StartServer = Callable[..., RunningServer]
CLI = [sys.executable, "-m", "cardarena.shared_deck.cli"]
SOURCES = [f"127.0.0.{n}" for n in range(2, 18)]
IDLE_SOURCES = [f"127.0.1.{n}" for n in range(2, 18)]


# ------------------------------------------------------------------ the rationing itself
def test_sources_are_ipv4_addresses_and_ipv6_64s() -> None:
    assert source_of("127.0.0.5") == "127.0.0.5" != source_of("127.0.0.6")
    assert source_of("::ffff:127.0.0.5") == "127.0.0.5"
    assert source_of("2001:db8:1:2::1") == source_of("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert source_of("2001:db8:1:3::1") != source_of("2001:db8:1:2::1")
    assert source_of("fe80::1%eth0") == "fe80::/64"
    assert source_of("/run/socket") == "/run/socket"


Submit = Callable[[str, str, str], object]


Scenario = Callable[[SecretChecker, Submit], list[object]]


def run_checks(
    scenario: Scenario, threads: int = 1
) -> tuple[SecretChecker, list[object], list[tuple[str, str]]]:
    """Run ``scenario(checker, submit)`` in one loop callback (so no check ends before all are
    queued) with a secret check that only records what ran; returns the checker, what the
    scenario returned, and (thread, secret) in the order the checks ran."""
    ran: list[tuple[str, str]] = []
    loop = asyncio.new_event_loop()
    checker = SecretChecker(loop, threads, per_address=8)
    pending = 0
    finished = loop.create_future()

    def done(_accepted: bool) -> None:
        nonlocal pending
        pending -= 1
        if pending == 0 and not finished.done():
            finished.set_result(None)

    def submit(address: str, name: str, secret: str) -> object:
        nonlocal pending
        check = checker.submit(address, name, secret, "stored", done)
        pending += check is not None
        return check

    def verify(secret: str, _stored: str | None) -> bool:
        ran.append((threading.current_thread().name, secret))
        return secret.startswith("right")

    async def main() -> list[object]:
        results = scenario(checker, submit)
        if pending:
            await finished
        return results

    real = logins._verify
    logins._verify = verify
    try:
        results = loop.run_until_complete(main())
    finally:
        logins._verify = real
        checker.close()
        checker.shutdown()
        loop.close()
    return checker, results, ran


def test_a_player_is_served_before_the_floods_of_16_sources() -> None:
    """16 sources flood alice and bob with wrong secrets: a second check for the same name
    from the same source is refused while the first runs, or takes its place while it waits;
    alice, back from the source she logged in from, is
    checked at once on the thread kept for that; carol, from a new source, waits for at most
    one check of each other source, not for the second round."""

    def first_login(_checker: SecretChecker, submit: Submit) -> list[object]:
        return [submit("127.0.0.1", "alice", "right-first")]

    def flood(checker: SecretChecker, submit: Submit) -> list[object]:
        checker.known = known  # alice logged in from 127.0.0.1 before
        results = []
        for source in SOURCES:
            results.append(submit(source, "alice", f"wrong-alice-{source}"))
            results.append(submit(source, "bob", f"wrong-bob-{source}"))
        results.append(submit("127.0.0.2", "alice", "wrong-alice-again"))  # one is running
        results.append(submit("127.0.0.3", "alice", "wrong-alice-retry"))  # replaces one waiting
        results.append(submit("127.0.0.1", "alice", "right-again"))
        results.append(submit("127.0.0.50", "carol", "right-carol"))
        return results

    known = run_checks(first_login)[0].known
    assert list(known["alice"]) == ["127.0.0.1"]
    checker, results, ran = run_checks(flood)
    refused = 2 * len(SOURCES)  # the second alice check from 127.0.0.2
    assert results[refused] is None
    assert all(result is not None for i, result in enumerate(results) if i != refused)
    assert checker.replaced == 1
    kept = [secret for thread, secret in ran if thread.startswith("shared-deck-login-known")]
    assert kept == ["right-again"]
    general = [secret for thread, secret in ran if not thread.startswith("shared-deck-login-known")]
    assert len(general) == 2 * len(SOURCES) + 1
    assert "wrong-alice-127.0.0.3" not in general
    assert general.index("wrong-alice-retry") == 2  # in the place of the one it replaced
    carol = general.index("right-carol")
    second_round = [general.index(f"wrong-bob-{source}") for source in SOURCES[1:]]
    assert carol < min(second_round), general  # one check of each other source at most
    assert list(checker.known["carol"]) == ["127.0.0.50"]
    assert checker.refused == 1 and not checker.per_address_count


def test_known_sources_per_name_are_the_latest_few() -> None:
    sources = [f"127.0.1.{n}" for n in range(1, KNOWN_SOURCES_PER_NAME + 3)]

    def logins_from_everywhere(_checker: SecretChecker, submit: Submit) -> list[object]:
        return [submit(source, "alice", "right") for source in sources]

    checker, _, ran = run_checks(logins_from_everywhere, threads=4)
    assert len(ran) == len(sources)
    assert len(checker.known["alice"]) == KNOWN_SOURCES_PER_NAME


def test_a_second_check_from_the_same_ipv6_64_is_refused() -> None:
    def from_one_64(_checker: SecretChecker, submit: Submit) -> list[object]:
        return [
            submit("2001:db8:0:1::1", "alice", "wrong-1"),
            submit("2001:db8:0:1::2", "alice", "wrong-2"),
            submit("2001:db8:0:2::1", "alice", "wrong-3"),
        ]

    _, results, ran = run_checks(from_one_64)
    assert results[1] is None and results[0] is not None and results[2] is not None
    assert sorted(secret for _, secret in ran) == ["wrong-1", "wrong-3"]


# ------------------------------------------------------------------ against a real server
class Attack:
    """Attack threads from the 16 sources, stopped by ``end()`` or after ``seconds``."""

    def __init__(self, server: RunningServer, seconds: float = 120.0) -> None:
        self.server = server
        self.stop = threading.Event()
        self.deadline = time.monotonic() + seconds
        self.threads: list[threading.Thread] = []
        self.answered: dict[str, int] = {}
        self.lock = threading.Lock()

    def running(self) -> bool:
        return not self.stop.is_set() and time.monotonic() < self.deadline

    def start(self, target: Callable[[str], None], sources: list[str]) -> None:
        for source in sources:
            thread = threading.Thread(target=target, args=(source,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def wrong_secrets(self, source: str) -> None:
        while self.running():
            with contextlib.suppress(OSError):
                connection = connect_from(self.server, source)
                try:
                    connection.send("alice\nnot-the-secret\n")
                    lines = [connection.line() for _ in range(3)]
                finally:
                    connection.close()
                if lines[2].startswith("ERR 940"):
                    with self.lock:
                        self.answered[source] = self.answered.get(source, 0) + 1

    def idle(self, source: str, keep: int = 10) -> None:
        """Keep ``keep`` connections open, reopening at most two closed ones per 0.2 s."""
        with selectors.DefaultSelector() as selector:
            count = 0
            while self.running():
                for _ in range(keep if count == 0 else min(2, keep - count)):
                    try:
                        sock = connect_from(self.server, source).sock
                    except OSError:
                        break
                    selector.register(sock, selectors.EVENT_READ)
                    count += 1
                for key, _ in selector.select(0.2):
                    sock = key.fileobj
                    with contextlib.suppress(OSError):
                        if sock.recv(4096):  # type: ignore[union-attr]
                            continue  # the LOGIN line
                    selector.unregister(sock)
                    sock.close()  # type: ignore[union-attr]
                    count -= 1
            for key in list(selector.get_map().values()):
                key.fileobj.close()  # type: ignore[union-attr]

    def end(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(60)


def test_a_player_logs_in_while_16_addresses_hammer_its_name_over_the_cap(
    start_server: StartServer,
) -> None:
    """Wrong secrets for alice from 16 addresses without pause, and 10 idle connections from
    each of 16 others (160, over a cap of 100): alice logs in from 127.0.0.1 every time, and
    the wrong secrets keep being checked meanwhile (the floods were real)."""
    server = start_server(["alice"], max_connections=100, login_timeout=60.0)
    attack = Attack(server)
    attack.start(attack.idle, IDLE_SOURCES)
    attack.start(attack.wrong_secrets, SOURCES)
    try:
        wait_until(lambda: len(attack.answered) >= 8, timeout=120)
        checked_before = sum(attack.answered.values())
        for _ in range(6):
            alice = RawConnection(server.host, server.port, timeout=60)
            alice.login("alice", server.secrets["alice"])
            assert alice.ask("GET_MY_MATCHES")[0] == "OK"
            alice.close()
        assert sum(attack.answered.values()) > checked_before  # checked all along
        assert server.call(lambda: server.server.refused_connections) > 0  # the cap was hit
    finally:
        attack.end()
    checker = server.server.checker
    assert checker is not None and "127.0.0.1" in checker.known["alice"]


def start_serve(db: Path, nofile: int, *options: str) -> tuple[subprocess.Popen[str], int, str]:
    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    process = subprocess.Popen(
        [*CLI, "serve", "--db", str(db), "--port", "0", "--turn-seconds", "0.5", *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=low_limit,
    )  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("shared-deck listening on"), process.stderr.read()  # type: ignore[union-attr]
    port = int(line.rsplit(":", 1)[1])
    dashboard = process.stdout.readline().split(" on ", 1)[1].strip() if options else ""
    return process, port, dashboard


def test_idle_dashboard_connections_never_take_the_players_descriptors(tmp_path: Path) -> None:
    """A real ``serve --http-port`` with 1,024 descriptors: the dashboard's cap (64) and the
    descriptors it may hold are kept out of the players' cap; 320 idle dashboard connections
    from 16 addresses leave the dashboard answering and a player logging in."""
    db = tmp_path / "fd.db"
    with contextlib.closing(Store(db)) as store:
        secret = store.add_player("alice")
    process, port, dashboard = start_serve(db, 1024, "--http-port", "0")
    http_port = int(dashboard.rstrip("/").rsplit(":", 1)[1])
    idle: list[socket.socket] = []
    try:
        for source in SOURCES:
            for _ in range(20):
                sock = socket.socket()
                sock.settimeout(30)
                sock.bind((source, 0))
                sock.connect(("127.0.0.1", http_port))
                idle.append(sock)
        with urllib.request.urlopen(dashboard + "api/live", timeout=60) as answer:
            assert answer.status == 200
        alice = RawConnection("127.0.0.1", port, timeout=60)
        alice.login("alice", secret)
        assert alice.ask("GET_MY_MATCHES")[0] == "OK"
        alice.close()
        assert len(os.listdir(f"/proc/{process.pid}/fd")) < 1024
    finally:
        for sock in idle:
            sock.close()
        process.send_signal(signal.SIGINT)
        _, log = process.communicate(timeout=60)
    assert process.returncode == 0, log
    cap = min(HttpLimits.max_connections, 1024 // DESCRIPTOR_SHARE)
    dashboard_descriptors = cap + accept_reserve() + BASE_DESCRIPTORS // 2
    players = 1024 - dashboard_descriptors - max(RESERVED_DESCRIPTORS, 512)
    assert f"max_connections 4096 lowered to {players} (descriptor limit 1024)" in log, log
    doc = section("Limits")  # docs/shared-deck.md says the same
    assert f"the dashboard: {players} player connections, {cap} dashboard connections" in doc
    assert f"plus {dashboard_descriptors - cap}" in section("The web dashboard")
    assert re.search(r"HTTP connection cap 64 reached \(\d+ idle closed", log), log
    assert "Traceback" not in log and "Too many open files" not in log, log


def test_an_idle_dashboard_connection_is_closed(start_server: StartServer) -> None:
    server = start_server(["alice"], http_port=0, http_limits=HttpLimits(idle_seconds=0.5))
    assert server.dashboard is not None
    host, port = server.dashboard.address
    with socket.create_connection((host, port), timeout=60) as sock:
        assert sock.recv(4096) == b""  # closed by the server, long before the 60 s timeout
    request = urllib.request.Request(f"http://{host}:{port}/api/live", headers={"Host": "x.test"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 421


# ------------------------------------------------------------------ the bot
def test_the_bot_keeps_reconnecting_past_ten_attempts_and_ctrl_c_exits(tmp_path: Path) -> None:
    """A server that lets the bot log in once, then closes every connection at once: the bot
    keeps reconnecting (no attempt limit by default), and Ctrl-C ends it with one line."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(60)
    port = listener.getsockname()[1]
    bot = subprocess.Popen(
        [*CLI, "bot", "--name", "alice", "--secret", "s", "--port", str(port),
         "--reconnect-max-delay", "0.05"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        first, _ = listener.accept()
        with first, first.makefile("rb") as reader:
            first.sendall(b"LOGIN\n")
            reader.readline()
            first.sendall(b"PASSWORD\n")
            reader.readline()
            first.sendall(b"OK\n")
            reader.readline()  # its first command; then the connection is lost
        for _ in range(15):  # more than the old limit of 10 attempts
            again, _ = listener.accept()
            again.close()
        assert bot.poll() is None, "the bot gave up"
        bot.send_signal(signal.SIGINT)
        _, stderr = bot.communicate(timeout=60)
    finally:
        listener.close()
        if bot.poll() is None:
            bot.kill()
            bot.communicate()
    assert bot.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == "shared-deck bot: interrupted"
    assert "Traceback" not in stderr
