"""The HTTP servers' connection guard (cardarena/httpguard.py): the Host rule, and the cap on
a real aiohttp server on loopback (``locm serve`` and the dashboard have their own tests)."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from cardarena.httpguard import ConnectionGuard, HostCheck, HttpLimits, fitted_cap

pytest.importorskip("aiohttp")


@pytest.mark.parametrize(
    ("bound", "extra", "allowed", "refused"),
    [
        ("127.0.0.1", (), ["127.0.0.1:80", "localhost", "LOCALHOST:8000", "[::1]:1", "localhost."],
         ["127.0.0.2", "evil.example", "localhost.evil.example", "", "10.0.0.1:80"]),
        ("::1", (), ["[::1]:8000", "localhost:1", "127.0.0.1"], ["[::2]", "example.org"]),
        ("localhost", (), ["localhost:9", "127.0.0.1"], ["my.example"]),
        ("192.0.2.7", (), ["192.0.2.7:8000", "[::ffff:192.0.2.7]:80"],
         ["localhost", "127.0.0.1", "192.0.2.8", "rebind.example"]),
        ("0.0.0.0", (), ["192.0.2.7:8000", "10.1.2.3", "[2001:db8::1]:80", "localhost"],
         ["rebind.example:8000", "example.org"]),
        ("::", (), ["[2001:db8::1]:80", "127.0.0.1:1"], ["rebind.example"]),
        ("127.0.0.1", ("arena.example",), ["arena.example:8000", "ARENA.example."],
         ["other.example"]),
        ("127.0.0.1", ("*",), ["anything.example", ""], []),
    ],
)  # fmt: skip
def test_host_rule(
    bound: str, extra: tuple[str, ...], allowed: list[str], refused: list[str]
) -> None:
    check = HostCheck(bound, extra)
    for host in allowed:
        assert check.allows(host), host
    for host in refused:
        assert not check.allows(host), host
    assert check.allows(None) is ("*" in extra)  # no Host header at all


def test_the_cap_fits_the_descriptor_limit() -> None:
    assert fitted_cap(64, 1000, 60, "x") == 64
    assert fitted_cap(64, 100, 60, "x") == 40
    with pytest.raises(ValueError, match="descriptor limit \\(62\\) is too low for x"):
        fitted_cap(64, 62, 60, "x")


@pytest.mark.parametrize("bad", [{"max_connections": 0}, {"idle_seconds": 0.0},
                                 {"head_seconds": float("nan")}])  # fmt: skip
def test_limits_are_checked(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        HttpLimits(**bad)


class Guarded:
    """A guarded aiohttp server on its own loop thread; ``/hold`` answers when released."""

    def __init__(self, cap: int) -> None:
        from aiohttp import web

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.release = asyncio.Event()

        async def hold(_request: web.Request) -> web.Response:
            await self.release.wait()
            return web.Response(text="released")

        async def start() -> tuple[ConnectionGuard, web.AppRunner, int]:
            guard = ConnectionGuard(HttpLimits(idle_seconds=60), HostCheck("127.0.0.1"), cap)
            app = web.Application(middlewares=[guard.middleware()])
            app.router.add_get("/hold", hold)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            await guard.site(runner, "127.0.0.1", 0).start()
            return guard, runner, runner.addresses[0][1]

        self.guard, self.runner, self.port = self.run(start())

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(60)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.release.set)
        self.guard.loop.call_soon_threadsafe(self.guard.stop)
        self.run(self.runner.cleanup())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


@pytest.fixture
def guarded() -> Iterator[Guarded]:
    server = Guarded(cap=3)
    yield server
    server.stop()


def request(port: int, path: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    return sock


def test_at_the_cap_idle_ones_make_room_and_busy_ones_are_kept(guarded: Guarded) -> None:
    """Three connections busy answering: a fourth is refused with a 503; once one is idle,
    a new connection closes it instead and is answered."""
    busy = [request(guarded.port, "/hold") for _ in range(3)]
    while guarded.run(_busy_count(guarded.guard)) < 3:
        pass  # each waits on the server's event: they are all being answered
    refused = request(guarded.port, "/hold")
    assert refused.recv(4096).startswith(b"HTTP/1.1 503")
    guarded.loop.call_soon_threadsafe(guarded.release.set)
    for sock in busy:
        assert b"released" in sock.recv(4096)
    newcomer = request(guarded.port, "/hold")  # the three are idle now: the oldest goes
    assert b"released" in newcomer.recv(4096)
    assert busy[0].recv(4096) == b""
    assert guarded.guard.refused == 1 and guarded.guard.evicted >= 1
    for sock in [*busy, refused, newcomer]:
        sock.close()


async def _busy_count(guard: ConnectionGuard) -> int:
    await asyncio.sleep(0.01)
    return sum(1 for connection in guard.open if connection.busy)


def test_requests_still_arriving_keep_their_place_for_a_while() -> None:
    """At the cap, a connection whose request head is arriving is not closed for a newcomer
    that sends nothing (503), until its head has been arriving for GRACE_SECONDS."""
    from cardarena.httpguard import GRACE_SECONDS

    server = Guarded(cap=2)
    try:
        partial = []
        for _ in range(2):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
            sock.sendall(b"GET /hold HTTP/1.1\r\n")  # never the blank line
            partial.append(sock)
        while server.run(_arriving(server.guard)) < 2:
            pass
        started = server.loop.time()
        quiet = socket.create_connection(("127.0.0.1", server.port), timeout=60)
        answer = quiet.recv(4096)
        if server.loop.time() - started < GRACE_SECONDS:  # (a very slow machine: too late)
            assert answer.startswith(b"HTTP/1.1 503")
        while server.loop.time() - started < GRACE_SECONDS:  # a condition on the server's clock
            pass
        later = socket.create_connection(("127.0.0.1", server.port), timeout=60)
        while partial[0].recv(4096):  # the oldest arriving head is closed for it
            pass
        assert server.guard.evicted == 1 and server.guard.timed_out == 0
        for sock in [*partial, quiet, later]:
            sock.close()
    finally:
        server.stop()


async def _arriving(guard: ConnectionGuard) -> int:
    await asyncio.sleep(0.01)
    return sum(1 for connection in guard.open if connection.head_started is not None)
