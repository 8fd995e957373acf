"""Clients that stay: a real ``shared-deck serve`` process is killed and restarted on the same
port with the same database; the bot and the client library reconnect and play on, give up
with a non-zero exit when it never returns, and stop when their login is taken over."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cardarena.shared_deck.client import (
    AsyncClient,
    Client,
    ConnectionLost,
    GaveUp,
    LoginTakenOver,
    Reconnect,
    Reconnected,
    ServerError,
)
from cardarena.shared_deck.errors import ErrorCode

from .conftest import RunningServer

CLI = [sys.executable, "-m", "cardarena.shared_deck.cli"]
DECK_SIZE = 40
TIMEOUT = 60.0
PATIENT = Reconnect(max_attempts=200, max_delay=0.3)


class ServeProcess:
    """``shared-deck serve`` in a subprocess that can be killed and started again."""

    def __init__(self, db: Path, log: Path) -> None:
        self.db, self.log = db, log
        self.port = 0
        self.process: subprocess.Popen[str] | None = None
        self.secrets = {name: self._add_player(name) for name in ("alice", "bob")}

    def _add_player(self, name: str) -> str:
        done = subprocess.run(
            [*CLI, "add-player", name, "--db", str(self.db)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout.strip()

    def start(self) -> None:
        options = ["--turn-seconds", "0.1", "--turns-per-match", "400", "--seed", "3"]
        options += ["--deck-size", str(DECK_SIZE), "--start-after-logins", "2"]
        self.process = subprocess.Popen(
            [*CLI, "serve", "--db", str(self.db), "--port", str(self.port), *options],
            stdout=subprocess.PIPE,
            stderr=self.log.open("a"),
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("shared-deck listening on 127.0.0.1:"), line
        self.port = int(line.rsplit(":", 1)[1])

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def bot(self, name: str, *options: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [
                *CLI,
                "bot",
                "--name",
                name,
                "--strategy",
                "greedy",
                "--port",
                str(self.port),
                *options,
            ],
            env={**os.environ, "SHARED_DECK_SECRET": self.secrets[name]},
            stderr=subprocess.PIPE,
            text=True,
        )

    def client(self, name: str, reconnect: Reconnect | None = PATIENT) -> Client:
        return Client.connect("127.0.0.1", self.port, name, self.secrets[name], 10, reconnect)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServeProcess]:
    server = ServeProcess(tmp_path / "league.db", tmp_path / "serve.log")
    server.start()
    yield server
    if server.process is not None and server.process.poll() is None:
        server.kill()


def poll(condition: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def opponent_moved(bob: Client, timeout: float = TIMEOUT) -> None:
    """Bob never acts, so a deck smaller than it started means his opponent drew or burnt."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for match in bob.get_my_matches():
            try:
                if len(bob.get_deck(match)) < DECK_SIZE:
                    return
            except ServerError as error:
                # a match id read just before a restart may be gone (954)
                assert error.code in (ErrorCode.NotYourTurn, ErrorCode.NoSuchMatch)
        bob.wait()
    raise AssertionError("the bot made no move in time")


def exit_of(bot: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        _, stderr = bot.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        bot.kill()
        raise
    return bot.returncode, stderr


def test_bot_reconnects_after_a_restart_and_plays_on(serve: ServeProcess) -> None:
    bot = serve.bot("alice", "--reconnect-attempts", "200", "--reconnect-max-delay", "0.3")
    try:
        with serve.client("bob") as bob:
            opponent_moved(bob)
            serve.kill()
            serve.start()  # same port, same database
            opponent_moved(bob)  # bob's client reconnected too, to the new server
            assert bob.reconnections == 1
            assert bot.poll() is None, "the bot left instead of reconnecting"
    finally:
        bot.kill()
        bot.wait(30)


def test_bot_gives_up_with_a_non_zero_exit(serve: ServeProcess) -> None:
    bot = serve.bot("alice", "--reconnect-attempts", "3", "--reconnect-max-delay", "0.1")
    with serve.client("bob") as bob:
        opponent_moved(bob)  # the bot is logged in and playing
        serve.kill()
    code, stderr = exit_of(bot)
    assert code == 1
    lines = stderr.strip().splitlines()
    assert lines[-1].startswith("shared-deck bot: gave up after 3 reconnection attempt(s)")
    assert "Traceback" not in stderr


def test_bot_without_reconnection_exits_non_zero_on_a_lost_connection(
    serve: ServeProcess,
) -> None:
    bot = serve.bot("alice", "--reconnect-attempts", "0")
    with serve.client("bob") as bob:
        opponent_moved(bob)
        serve.kill()
    code, stderr = exit_of(bot)
    assert code == 1
    assert stderr.strip().splitlines()[-1].startswith("shared-deck bot: connection lost")


def test_bot_stops_when_its_login_is_taken_over(serve: ServeProcess) -> None:
    bot = serve.bot("alice")
    with serve.client("bob") as bob:
        opponent_moved(bob)
        with serve.client("alice"):  # someone else logs in as alice
            code, stderr = exit_of(bot)
    assert code == 1
    assert stderr.strip().splitlines()[-1] == (
        "shared-deck bot: login taken over: another connection logged in as 'alice'"
    )


def test_bad_reconnect_options_are_usage_errors(serve: ServeProcess) -> None:
    for options in (["--reconnect-attempts", "-1"], ["--reconnect-max-delay", "nan"]):
        code, stderr = exit_of(serve.bot("alice", *options))
        assert code == 2, options
        assert stderr.startswith(f"shared-deck bot: argument {options[0]}: "), stderr
        assert len(stderr.strip().splitlines()) == 1


def test_async_client_reconnects_repeats_reads_and_reports_actions(serve: ServeProcess) -> None:
    async def scenario() -> None:
        alice = await AsyncClient.connect(
            "127.0.0.1", serve.port, "alice", serve.secrets["alice"], PATIENT
        )
        with serve.client("bob") as bob:
            poll(lambda: bool(bob.get_my_matches()), "the tournament")
            match = (await alice.get_my_matches())[0]
            serve.kill()
            serve.start()
            with pytest.raises(Reconnected):  # an action cut off: it may not have happened
                await alice.draw_card(match)
            assert alice.reconnections == 1
            bob.get_my_matches()  # the sync client repeats a read transparently
            assert bob.reconnections == 1
            poll(lambda: bool(bob.get_my_matches()), "the replayed tournament")
            assert match in await alice.get_my_matches()

            serve.kill()
            alice.reconnect = Reconnect(max_attempts=2, max_delay=0.05, first_delay=0.01)
            with pytest.raises(GaveUp, match="gave up after 2 reconnection attempt"):
                await alice.get_turn_info(match)
            bob.reconnect = None
            with pytest.raises(ConnectionLost):
                bob.get_my_matches()
        await alice.close()

    asyncio.run(scenario())


def test_takeover_raises_and_is_never_fought(start_server: Callable[..., RunningServer]) -> None:
    server = start_server(["alice", "bob"])
    policy = Reconnect(max_attempts=5, max_delay=0.05, first_delay=0.01)
    first = Client.connect(server.host, server.port, "alice", server.secrets["alice"], 10, policy)
    second = server.client("alice")
    with pytest.raises(LoginTakenOver, match="another connection logged in as 'alice'"):
        first.wait()
    with pytest.raises(LoginTakenOver):  # it stays taken over: no reconnection
        first.get_my_matches()
    assert first.reconnections == 0
    assert isinstance(second.get_my_matches(), list)  # the new login works
    second.close()

    async def in_async() -> None:
        old = await AsyncClient.connect(server.host, server.port, "bob", server.secrets["bob"])
        new = server.client("bob")
        with pytest.raises(LoginTakenOver):
            await old.get_my_matches()
        new.close()
        await old.close()

    asyncio.run(in_async())


def test_backoff_grows_with_jitter_up_to_the_cap() -> None:
    policy = Reconnect(max_attempts=10, max_delay=1.0, first_delay=0.1)
    rng = random.Random(1)
    delays = [[policy.delay(attempt, rng) for attempt in range(8)] for _ in range(50)]
    for attempt, cap in enumerate([0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0, 1.0]):
        seen = [row[attempt] for row in delays]
        assert all(cap / 2 <= d <= cap for d in seen)
        assert len(set(seen)) > 40  # jittered, not one fixed value
    for bad in ({"max_attempts": -1}, {"max_delay": 0.0}, {"max_delay": float("inf")}):
        with pytest.raises(ValueError):
            Reconnect(**bad)  # type: ignore[arg-type]
