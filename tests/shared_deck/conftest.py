"""A real server on 127.0.0.1 (port 0) in a background thread, and a raw line client."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from cardarena.shared_deck.cli import start_dashboard
from cardarena.shared_deck.client import Client
from cardarena.shared_deck.rules import Card
from cardarena.shared_deck.server import GameServer, ServerConfig
from cardarena.shared_deck.store import Store

if TYPE_CHECKING:
    from cardarena.shared_deck.dashboard import Dashboard

T = TypeVar("T")


class RunningServer:
    """A GameServer on its own event loop thread, with registered players and their secrets."""

    def __init__(self, db_path: Path, players: list[str], **config: Any) -> None:
        with contextlib.closing(Store(db_path)) as store:
            self.secrets = {name: store.add_player(name) for name in players}
        config.setdefault("turn_seconds", 0.05)
        # Most tests look at the first tournament before its players log in.
        config.setdefault("min_players", 0)
        http_port = config.pop("http_port", None)  # the web dashboard, wired as `serve` does
        http_host = config.pop("http_host", None)
        http_limits = config.pop("http_limits", None)
        self.server = GameServer(ServerConfig(db_path=db_path, port=0, **config))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.dashboard: Dashboard | None = None
        if http_port is not None:
            dashboard = start_dashboard(self.server, http_host, http_port, http_limits)
            self.dashboard = self.run(dashboard)
        self.host, self.port = self.run(self.server.start())

    def run(self, coroutine: Any, timeout: float = 30.0) -> Any:
        """Run a coroutine on the server's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def call(self, function: Callable[[], T]) -> T:
        """Run a plain function on the server's loop (to read its state safely)."""
        future: Future[T] = Future()

        def run() -> None:
            try:
                future.set_result(function())
            except Exception as error:
                future.set_exception(error)

        self.loop.call_soon_threadsafe(run)
        return future.result(10)

    def client(self, name: str) -> Client:
        return Client.connect(self.host, self.port, name, self.secrets[name], timeout=10)

    def raw(self) -> RawConnection:
        return RawConnection(self.host, self.port)

    def wait_saved(self, count: int, timeout: float = 30.0) -> None:
        self.run(asyncio.wait_for(self.server.wait_for_saved_tournaments(count), timeout))

    def stop(self) -> None:
        if self.dashboard is not None:
            self.run(self.dashboard.stop())
        self.run(self.server.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class RawConnection:
    """Bytes in, lines out: for checking the exact text of answers."""

    def __init__(self, host: str, port: int, timeout: float = 10.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.reader = self.sock.makefile("rb")

    def send(self, data: bytes | str) -> None:
        self.sock.sendall(data.encode() if isinstance(data, str) else data)

    def line(self) -> str:
        """The next line without its end; '' once the server has closed the connection."""
        return self.reader.readline().decode("ascii").rstrip("\n")

    def ask(self, command: str, lines: int = 1) -> list[str]:
        """Send one command and read exactly ``lines`` answer lines."""
        self.send(command + "\n")
        return [self.line() for _ in range(lines)]

    def login(self, name: str, secret: str) -> None:
        assert self.line() == "LOGIN"
        self.send(f"{name}\n")
        assert self.line() == "PASSWORD"
        self.send(f"{secret}\n")
        assert self.line() == "OK"

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., RunningServer]]:
    """``start_server(["alice", "bob"], turn_seconds=..., ...)``; stopped after the test."""
    servers: list[RunningServer] = []

    def start(players: list[str], **config: Any) -> RunningServer:
        db = tmp_path / f"server{len(servers)}.db"
        server = RunningServer(db, players, **config)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def fixed_deck(*lines: str) -> Callable[[int, int], tuple[Card, ...]]:
    """A deck factory that always returns these cards, top first (for hand-computed tests)."""
    deck = tuple(Card.parse(line) for line in lines)
    for card in deck:
        card.validate()
    return lambda seed, size: deck
