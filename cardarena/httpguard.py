"""Limits for the project's small HTTP servers (``locm serve``, the Shared Deck dashboard,
the page of ``locm play -p1 human``).

Why: aiohttp keeps every connection it accepts until the client goes or a long keep-alive
timer fires, and counts none of them, so idle sockets could take every descriptor of the
process and nobody else got in. Here every connection is counted against a cap of its own
and timed by the server, independently of the aiohttp version:

- at the cap, a new connection closes the oldest *idle* one: no request being answered, none
  arriving (bytes waiting in the kernel count: a client whose request has come but not yet
  been read keeps its place); else the oldest one whose request head started arriving more
  than GRACE_SECONDS ago; else, if the newcomer's own request is already waiting, one whose
  head is still arriving; a connection whose head has arrived whole is never closed for
  another; only when there is nothing to close is the new one refused with a short 503;
- a connection with no request in progress is closed after ``idle_seconds`` without a byte
  (keep-alive, or a client that connects and sends nothing);
- a request's head must have arrived ``head_seconds`` after its first byte (a client that
  trickles its headers one byte at a time is closed);
- the ``Host`` header must name the address the server was bound to (DNS rebinding: a page
  elsewhere whose name resolves to this machine cannot read it), see :class:`HostCheck`;
- a server that takes POSTs takes them from its own pages only, as JSON
  (:func:`same_origin_json_posts`).

The servers' command lines share the limits' options (:func:`add_http_options`). aiohttp is
imported only by :meth:`ConnectionGuard.middleware`, :meth:`~ConnectionGuard.site` and
:func:`same_origin_json_posts`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import ipaddress
import logging
import math
import os
import resource
import socket
import struct
import termios
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger("cardarena.httpguard")

BACKLOG = 8
"""How many sockets asyncio accepts at once before any is counted (each takes a descriptor)."""
KERNEL_BACKLOG = 128
"""Connections the kernel holds until they are accepted (no descriptor yet): on a busy machine
the server may not run for a while, and a short queue would drop a client's SYN (a 1 s retry)."""
BASE_DESCRIPTORS = 16
"""Descriptors of the process besides connections: standard streams, the event loop, the
listening sockets, module and font files opened on the way."""
MIN_CONNECTIONS = 4
"""Below this many connections the descriptor limit is too low to serve anything."""
REPEAT_LOG_SECONDS = 60.0
GRACE_SECONDS = 1.0
"""A connection whose request head started arriving less than this long ago is not closed to
make room (unless the head timeout is shorter)."""

_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Length: 21\r\nRetry-After: 1\r\nConnection: close\r\n\r\ntoo many connections\n"
)


@dataclass(frozen=True)
class HttpLimits:
    """What one HTTP server allows (options of ``locm serve`` and ``shared-deck serve``)."""

    max_connections: int = 64
    """Open connections at most (lowered to fit the descriptor limit)."""
    idle_seconds: float = 15.0
    """A connection with no request in progress is closed after this long without a byte."""
    head_seconds: float = 10.0
    """A request's line and headers must arrive within this long of their first byte."""

    def __post_init__(self) -> None:
        if self.max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        for name in ("idle_seconds", "head_seconds"):
            value = getattr(self, name)
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds")


def raise_descriptor_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit (as far as allowed); returns the soft one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return target if soft == resource.RLIM_INFINITY else soft


def accept_reserve(backlog: int = BACKLOG) -> int:
    """Descriptors that sockets accepted but not yet counted (or closed but not yet released)
    may hold: asyncio accepts up to ``backlog`` sockets per loop round, and a socket is
    counted two rounds later."""
    return 3 * backlog


def fitted_cap(wanted: int, descriptors: int, reserve: int, what: str) -> int:
    """``wanted`` connections, lowered to fit ``descriptors`` less ``reserve``; ValueError
    (one line) where not even MIN_CONNECTIONS fit."""
    fits = descriptors - reserve
    if fits < MIN_CONNECTIONS:
        raise ValueError(
            f"the descriptor limit ({descriptors}) is too low for {what}: it needs at least "
            f"{reserve + MIN_CONNECTIONS} (ulimit -n)"
        )
    if wanted > fits:
        log.warning("%s: at most %d connections (descriptor limit %d)", what, fits, descriptors)
    return min(wanted, fits)


class HostCheck:
    """Which ``Host`` headers a server answers.

    Bound to one address: that address (or the name given as ``--host``); bound to a loopback
    address or ``localhost``: also ``localhost``, ``127.0.0.1`` and ``::1``; bound to every
    address (``0.0.0.0``, ``::``): any IP address literal (a rebinding page has a name, never
    a literal), ``localhost`` and this machine's host names. ``extra`` names more (a DNS
    name of the machine, a proxy's name); ``*`` allows any."""

    def __init__(self, bound: str, extra: Iterable[str] = ()) -> None:
        self.any = False
        self.literals = False
        self.names: set[str] = set()
        for name in extra:
            if name.strip() == "*":
                self.any = True
            elif name.strip():
                self.names.add(_normal(name))
        host = _normal(bound)
        address = _address(host)
        if host in ("", "0.0.0.0", "::") or (address is not None and address.is_unspecified):
            self.literals = True
            self.names |= {"localhost", *_machine_names()}
            return
        self.names.add(host if address is None else str(address))
        if host == "localhost" or (address is not None and address.is_loopback):
            self.names |= {"localhost", "127.0.0.1", "::1"}

    def allows(self, header: str | None) -> bool:
        if self.any:
            return True
        if not header:
            return False
        host = _normal(_strip_port(header))
        address = _address(host)
        if address is not None:
            return self.literals or str(address) in self.names
        return host in self.names


def _normal(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _strip_port(header: str) -> str:
    header = header.strip()
    if header.startswith("["):
        return header[: header.find("]") + 1] if "]" in header else header
    if header.count(":") == 1:
        return header.split(":", 1)[0]
    return header


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _machine_names() -> set[str]:
    names = {socket.gethostname().lower()}
    with contextlib.suppress(OSError):
        names.add(socket.getfqdn().lower())
    return {name.rstrip(".") for name in names if name}


class _Guarded(asyncio.Protocol):
    """Wraps aiohttp's protocol: counts, times and (at the cap) refuses the connection."""

    def __init__(self, guard: ConnectionGuard, factory: Callable[[], asyncio.Protocol]) -> None:
        self.guard = guard
        self.factory = factory
        self.inner: asyncio.Protocol | None = None
        self.transport: asyncio.Transport | None = None
        self.busy = 0
        """Requests being answered (set by the guard's middleware)."""
        self.last = guard.loop.time()
        """When the last byte arrived or the last request ended."""
        self.head_started: float | None = None
        """When the first byte of a request not yet being answered arrived."""
        self.head_complete = False
        """That request's head has arrived whole (its blank line): it is about to be answered."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if not self.guard.admit(self):
            transport.write(_BUSY)
            transport.close()
            return
        self.inner = self.factory()
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.inner is None:
            return
        self.last = self.guard.loop.time()
        if not self.busy:
            if self.head_started is None:
                self.head_started = self.last
            if b"\r\n\r\n" in data or b"\n\n" in data:
                self.head_complete = True
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return None if self.inner is None else self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.forget(self)
        if self.inner is not None:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def bytes_waiting(self) -> bool:
        """Whether bytes from the client wait in the kernel, not yet read (FIONREAD)."""
        sock = None if self.transport is None else self.transport.get_extra_info("socket")
        if sock is None:
            return False
        try:
            answer = fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
        except OSError:
            return False
        return bool(struct.unpack("i", answer)[0])

    def close(self) -> None:
        if self.transport is not None:
            self.transport.abort()


class ConnectionGuard:
    """The connections of one HTTP server: the cap, the timers, the Host check.

    Use :meth:`middleware` in the aiohttp application and :meth:`site` instead of
    ``web.TCPSite``; :meth:`stop` ends the timer."""

    def __init__(
        self, limits: HttpLimits, host_check: HostCheck, max_connections: int | None = None
    ) -> None:
        self.limits = limits
        self.host_check = host_check
        self.max_connections = max_connections or limits.max_connections
        self.loop = asyncio.get_running_loop()
        self.open: dict[_Guarded, None] = {}
        """Counted connections, oldest first."""
        self.by_transport: dict[asyncio.BaseTransport, _Guarded] = {}
        self.refused = 0
        """New connections answered 503 because every counted one was busy."""
        self.evicted = 0
        """Idle connections closed to make room for a new one."""
        self.timed_out = 0
        """Connections closed by the idle or head timer."""
        self._reported = -math.inf
        self._timer: asyncio.TimerHandle | None = None
        self._interval = min(1.0, limits.idle_seconds / 4, limits.head_seconds / 4)
        self._timer = self.loop.call_later(self._interval, self._sweep)

    # ------------------------------------------------------------ connections
    def _victim(self, eager: bool) -> _Guarded | None:
        """The connection to close for a new one: the oldest idle one (no request being
        answered, none arriving), else the oldest whose request head has been arriving for
        GRACE_SECONDS, else, for an ``eager`` newcomer (its request is already waiting), the
        oldest whose head is still arriving; None if every one is answering or receiving."""
        now = self.loop.time()
        grace = min(GRACE_SECONDS, self.limits.head_seconds)
        slow = arriving = None
        for connection in self.open:  # oldest first
            if connection.busy or connection.head_complete:
                continue
            started = connection.head_started
            if started is None:
                if not connection.bytes_waiting():
                    return connection
                continue
            if slow is None and now - started >= grace:
                slow = connection
            if arriving is None:
                arriving = connection
        return slow or (arriving if eager else None)

    def admit(self, connection: _Guarded) -> bool:
        if len(self.open) >= self.max_connections:
            idle = self._victim(connection.bytes_waiting())
            if idle is None:
                self.refused += 1
                self._report()
                return False
            self.evicted += 1
            self._report()
            self._drop(idle)
            idle.close()
        self.open[connection] = None
        assert connection.transport is not None
        self.by_transport[connection.transport] = connection
        return True

    def forget(self, connection: _Guarded) -> None:
        self._drop(connection)

    def _drop(self, connection: _Guarded) -> None:
        self.open.pop(connection, None)
        if connection.transport is not None:
            self.by_transport.pop(connection.transport, None)

    def _report(self) -> None:
        now = self.loop.time()
        if now - self._reported >= REPEAT_LOG_SECONDS:
            self._reported = now
            log.warning(
                "HTTP connection cap %d reached (%d idle closed, %d refused so far)",
                self.max_connections, self.evicted, self.refused,
            )  # fmt: skip

    def _sweep(self) -> None:
        now = self.loop.time()
        for connection in list(self.open):
            if connection.busy:
                continue
            started = connection.head_started
            if (started is not None and now - started > self.limits.head_seconds) or (
                now - connection.last > self.limits.idle_seconds
            ):
                self.timed_out += 1
                self._drop(connection)
                connection.close()
        self._timer = self.loop.call_later(self._interval, self._sweep)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # ---------------------------------------------------------------- aiohttp
    def middleware(self) -> Any:
        """The aiohttp middleware that marks the connection busy while its request is
        answered and refuses a request whose Host header is not allowed (421)."""
        from aiohttp import web

        @web.middleware
        async def guard(
            request: web.Request,
            handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
        ) -> web.StreamResponse:
            transport = request.transport
            connection = None if transport is None else self.by_transport.get(transport)
            if connection is not None:
                connection.busy += 1
                connection.head_started = None
                connection.head_complete = False
            try:
                if not self.host_check.allows(request.headers.get("Host")):
                    return web.Response(
                        status=421,
                        text="this server does not answer for that Host (see --allow-host)\n",
                    )
                return await handler(request)
            finally:
                if connection is not None:
                    connection.busy -= 1
                    connection.last = self.loop.time()

        return guard

    def site(self, runner: web.BaseRunner, host: str, port: int) -> web.BaseSite:
        """Where the server listens (instead of ``web.TCPSite``), every connection going
        through this guard."""
        from aiohttp import web

        guard = self

        class GuardedSite(web.BaseSite):
            @property
            def name(self) -> str:
                shown = f"[{host}]" if ":" in host else host
                return f"http://{shown}:{port}"

            async def start(self) -> None:
                await super().start()
                server: Any = self._runner.server
                assert server is not None
                self._server = await asyncio.get_running_loop().create_server(
                    lambda: _Guarded(guard, server), host, port,
                    backlog=self._backlog, reuse_address=True,
                )  # fmt: skip
                for listening in self._server.sockets:  # asyncio listened with BACKLOG
                    with socket.socket(fileno=os.dup(listening.fileno())) as same:
                        same.listen(KERNEL_BACKLOG)

        return GuardedSite(runner, backlog=BACKLOG)


# ------------------------------------------------------------------ posts
def same_origin_json_posts() -> Any:
    """The aiohttp middleware of a server that takes POSTs from its own page only: every
    request but GET and HEAD must be ``application/json`` (415 otherwise) and, where the
    browser says where it comes from (``Origin``, ``Sec-Fetch-Site``), come from this very
    origin (403 otherwise).

    Why: a page elsewhere can make a browser send a ``text/plain`` or form POST anywhere,
    with its cookies (a ``SameSite`` cookie too, from another port of the same host) and no
    preflight; a JSON POST from another origin needs a CORS preflight, which these servers
    never grant. Clients that are not browsers send neither header and are judged by the
    address's token alone, as before."""
    from aiohttp import web

    @web.middleware
    async def posts(
        request: web.Request,
        handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
    ) -> web.StreamResponse:
        if request.method in ("GET", "HEAD"):
            return await handler(request)
        origin = request.headers.get("Origin")
        site = request.headers.get("Sec-Fetch-Site")
        if (origin is not None and origin != f"http://{request.host}") or site not in (
            None, "same-origin",
        ):  # fmt: skip
            return web.Response(status=403, text="refused: this server takes requests from "
                                "its own pages only\n")  # fmt: skip
        if request.content_type != "application/json":
            return web.Response(status=415, text="refused: send application/json\n")
        return await handler(request)

    return posts


# ------------------------------------------------------------------ command lines
def add_http_options(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    prefix: str = "",
    server: str = "",
    cap_note: str = "fewer to fit the descriptor limit",
    host_option: str = "--host",
) -> None:
    """The limits' options of an HTTP server, worded alike in every command:
    ``--max-connections``, ``--idle-timeout``, ``--header-timeout`` and ``--allow-host``.
    ``prefix`` (``http-``) tells them apart where a command has another server, ``server``
    (``dashboard``) names the one they are for; :func:`limits_from` reads them back."""
    from .argtypes import count, positive_number

    whose = f"the {server}'s " if server else ""
    one = f"a {server} " if server else "a "
    parser.add_argument(
        f"--{prefix}max-connections",
        type=count,
        default=HttpLimits.max_connections,
        help=f"{whose}open connections at most (default %(default)s, {cap_note}); at the "
        "cap a new one closes the oldest idle one",
    )
    parser.add_argument(
        f"--{prefix}idle-timeout",
        type=positive_number,
        default=HttpLimits.idle_seconds,
        metavar="SECONDS",
        help=f"close {one}connection with no request in progress after this long without a "
        "byte (default %(default)s)",
    )
    parser.add_argument(
        f"--{prefix}header-timeout",
        type=positive_number,
        default=HttpLimits.head_seconds,
        metavar="SECONDS",
        help=f"{one}request's headers must arrive within this long (default %(default)s)",
    )
    parser.add_argument(
        f"--{prefix}allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help=f"{f'the {server} also answers' if server else 'also answer'} requests whose Host "
        f"header is NAME (repeatable; '*': any); by default only the {host_option} address "
        "and, on loopback, localhost",
    )


def limits_from(args: argparse.Namespace, prefix: str = "") -> tuple[HttpLimits, tuple[str, ...]]:
    """The limits and the allowed hosts given by :func:`add_http_options`' options."""
    name = prefix.replace("-", "_")
    limits = HttpLimits(
        getattr(args, f"{name}max_connections"),
        getattr(args, f"{name}idle_timeout"),
        getattr(args, f"{name}header_timeout"),
    )
    return limits, tuple(getattr(args, f"{name}allow_host"))
