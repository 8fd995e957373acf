"""A small Python client for the Shared Deck server, blocking (:class:`Client`) or asyncio
(:class:`AsyncClient`), with the same methods.

Every answer is read into a typed value from :mod:`.protocol`; every ``ERR`` line raises
:class:`ServerError` with its :class:`~.errors.ErrorCode`, so a bot can write
``except ServerError as e: if e.code is ErrorCode.NotYourTurn: ...``.

Given a :class:`Reconnect` policy, a client survives a lost connection: it reconnects with
exponential back-off and jitter, logs in again and repeats the read or ``WAIT`` that was cut
off; an action cut off raises :class:`Reconnected` (it may or may not have happened). It raises
:class:`GaveUp` when the policy's attempts (if limited) are spent and :class:`LoginTakenOver`
when another connection logged in as the same player (it never fights that one for the login).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from types import TracebackType
from typing import Self

from .errors import ErrorCode, NetworkError
from .match import ACTIONS
from .protocol import (
    Board,
    CardLimits,
    FinalScore,
    Hands,
    HitPoints,
    TurnInfo,
    counted_data_lines,
    error_from_line,
    fixed_data_lines,
    read_board,
    read_card,
    read_card_limits,
    read_cards,
    read_final_score,
    read_hands,
    read_hit_points,
    read_int,
    read_match_ids,
    read_turn_info,
)
from .rules import Card


class ServerError(Exception):
    """The server answered ``ERR <code> <Description>``."""

    def __init__(self, code: ErrorCode, command: str = "") -> None:
        super().__init__(f"{command}: ERR {code.value} {code.name}" if command else code.name)
        self.code = code
        self.command = command


class AuthenticationError(ServerError):
    """The login was refused (wrong name or secret)."""


class ProtocolViolation(ConnectionError):
    """The server sent something this client does not understand, or closed the connection."""


class ConnectionLost(ProtocolViolation):
    """The connection broke (closed, reset or timed out) and no reconnection was allowed."""


class LoginTakenOver(ConnectionError):
    """The server closed this connection because the player logged in on another one.

    Not a :class:`ServerError`, so that a bot's ``except ServerError`` does not swallow it.
    """

    def __init__(self, name: str) -> None:
        super().__init__(f"login taken over: another connection logged in as {name!r}")
        self.name = name


class GaveUp(ConnectionError):
    """Every reconnection attempt of the :class:`Reconnect` policy failed."""

    def __init__(self, attempts: int, last_error: BaseException) -> None:
        super().__init__(f"gave up after {attempts} reconnection attempt(s): {last_error}")
        self.attempts = attempts
        self.last_error = last_error


class Reconnected(ConnectionError):
    """The connection broke during an action and was re-established; whether the action took
    effect is unknown, so look at the match again before the next move."""

    def __init__(self, command: str) -> None:
        super().__init__(
            f"{command}: connection lost and re-established; the action may not have been performed"
        )
        self.command = command


@dataclass(frozen=True, slots=True)
class Reconnect:
    """How to reconnect after a lost connection.

    Attempt *k* (from 0) waits between half and all of ``min(max_delay, first_delay * 2**k)``
    seconds (the random half spreads many bots' reconnections over time), then connects and
    logs in. ``max_attempts`` failed attempts in a row raise :class:`GaveUp`; 0 never retries;
    None (the default) tries until it is back (or interrupted).
    """

    max_attempts: int | None = None
    max_delay: float = 30.0
    first_delay: float = 0.1

    def __post_init__(self) -> None:
        if self.max_attempts is not None and self.max_attempts < 0:
            raise ValueError("max_attempts must be 0 or more")
        if not (0 < self.first_delay <= self.max_delay < float("inf")):
            raise ValueError("need 0 < first_delay <= max_delay, both finite")

    def attempts(self) -> Iterator[int]:
        """0, 1, 2, ... up to ``max_attempts`` (for ever without a limit)."""
        return iter(range(self.max_attempts)) if self.max_attempts is not None else count()

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Seconds to wait before attempt ``attempt`` (0-based)."""
        cap = min(self.max_delay, self.first_delay * 2.0 ** min(attempt, 60))
        return cap / 2 + rng.uniform(0, cap / 2)


_LOST = (ConnectionLost, OSError, EOFError)
"""What counts as a lost connection (ConnectionLost and socket timeouts are OSErrors too)."""


def _retry_or_raise(command: str) -> None:
    """After a reconnection: reads and WAIT are repeated; an interrupted action raises."""
    if command in ACTIONS:
        raise Reconnected(command)


def _command_line(command: str, args: tuple[int, ...]) -> bytes:
    return (" ".join((command, *map(str, args))) + "\n").encode()


def _check_status(command: str, line: str, name: str) -> None:
    if line == "OK":
        return
    if line.startswith("ERR "):
        try:
            code = error_from_line(line)
        except ValueError:
            raise ProtocolViolation(f"unexpected answer to {command}: {line!r}") from None
        if code is ErrorCode.LoggedInElsewhere:
            raise LoginTakenOver(name)
        raise ServerError(code, command)
    raise ProtocolViolation(f"unexpected answer to {command}: {line!r}")


class Client:
    """A blocking client: ``with Client.connect(host, port, name, secret) as c: ...``."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = sock.makefile("rb")
        self.name = ""
        self.taken_over = False
        self.reconnect: Reconnect | None = None
        self.reconnections = 0
        self._login: tuple[str, int, str, float | None] = ("", 0, "", None)
        self._rng = random.Random()

    @classmethod
    def connect(
        cls,
        host: str,
        port: int,
        name: str,
        secret: str,
        timeout: float | None = 30.0,
        reconnect: Reconnect | None = None,
    ) -> Client:
        """Connect and log in; raises AuthenticationError when refused.

        The first connection is not retried (a wrong address fails at once); ``reconnect``
        applies to connections lost later.
        """
        client = cls(cls._open(host, port, name, secret, timeout))
        client.name = name
        client.reconnect = reconnect
        client._login = (host, port, secret, timeout)
        return client

    @staticmethod
    def _open(host: str, port: int, name: str, secret: str, timeout: float | None) -> socket.socket:
        sock = socket.create_connection((host, port), timeout=timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            reader = sock.makefile("rb")
            with reader:
                for expected, answer in (("LOGIN", name), ("PASSWORD", secret)):
                    line = reader.readline().decode("ascii", "replace").rstrip("\r\n")
                    if line != expected:
                        raise ProtocolViolation(f"expected {expected!r}, got {line!r}")
                    sock.sendall(f"{answer}\n".encode())
                verdict = reader.readline()
                if not verdict:  # closed unanswered: the server was busy (not a bad secret)
                    raise ProtocolViolation("the server closed the connection during login")
                if verdict.rstrip(b"\r\n") != b"OK":
                    raise AuthenticationError(ErrorCode.AuthenticationFailed, "login")
        except BaseException:
            sock.close()
            raise
        return sock

    def close(self) -> None:
        self.reader.close()
        self.sock.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _readline(self) -> str:
        line = self.reader.readline()
        if not line.endswith(b"\n"):
            raise ConnectionLost("the server closed the connection")
        return line.decode("ascii").rstrip("\r\n")

    def _status(self, command: str) -> None:
        try:
            _check_status(command, self._readline(), self.name)
        except LoginTakenOver:
            self.taken_over = True
            self.close()
            raise

    def _reconnect(self, lost: BaseException) -> None:
        """Back off, connect and log in again, or raise (ConnectionLost, GaveUp)."""
        self.close()
        policy = self.reconnect
        if policy is None or policy.max_attempts == 0:
            raise ConnectionLost(f"connection lost: {lost}") from lost
        host, port, secret, timeout = self._login
        error: BaseException = lost
        for attempt in policy.attempts():
            time.sleep(policy.delay(attempt, self._rng))
            try:
                self.sock = self._open(host, port, self.name, secret, timeout)
            except AuthenticationError:
                raise
            except _LOST as failure:
                error = failure
                continue
            self.reader = self.sock.makefile("rb")
            self.reconnections += 1
            return
        raise GaveUp(policy.max_attempts or 0, error) from error

    def _exchange(self, command: str, args: tuple[int, ...]) -> list[str]:
        self._send(_command_line(command, args))
        self._status(command)
        if command == "WAIT":
            self._status(command)
            return []
        count = fixed_data_lines(command)
        if count is not None:
            return [self._readline() for _ in range(count)]
        first = self._readline()
        return [first] + [self._readline() for _ in range(counted_data_lines(command, first))]

    def request(self, command: str, *args: int) -> list[str]:
        """Send one command and return its data lines; raises ServerError on ``ERR``.

        ``WAIT`` returns when the next turn starts. On a lost connection, see :class:`Reconnect`.
        """
        while True:
            if self.taken_over:
                raise LoginTakenOver(self.name)
            try:
                return self._exchange(command, args)
            except _LOST as lost:
                if self.taken_over:
                    raise
                self._reconnect(lost)
                _retry_or_raise(command)

    def wait(self) -> None:
        """WAIT: return when the next turn starts."""
        self.request("WAIT")

    def get_my_matches(self) -> list[int]:
        return read_match_ids(self.request("GET_MY_MATCHES"))

    def get_final_score(self, match_id: int) -> FinalScore:
        return read_final_score(self.request("GET_FINAL_SCORE", match_id))

    def get_turn_info(self, match_id: int) -> TurnInfo:
        return read_turn_info(self.request("GET_TURN_INFO", match_id))

    def get_hp(self, match_id: int) -> HitPoints:
        return read_hit_points(self.request("GET_HP", match_id))

    def get_card_limits(self, match_id: int) -> CardLimits:
        return read_card_limits(self.request("GET_CARD_LIMITS", match_id))

    def get_current_mana(self, match_id: int) -> int:
        return read_int(self.request("GET_CURRENT_MANA", match_id))

    def get_deck(self, match_id: int) -> list[Card]:
        return read_cards(self.request("GET_DECK", match_id))

    def get_hands(self, match_id: int) -> Hands:
        return read_hands(self.request("GET_HANDS", match_id))

    def get_board(self, match_id: int) -> Board:
        return read_board(self.request("GET_BOARD", match_id))

    def get_attackers(self, match_id: int) -> list[Card]:
        return read_cards(self.request("GET_ATTACKERS", match_id))

    def draw_card(self, match_id: int) -> Card:
        return read_card(self.request("DRAW_CARD", match_id))

    def burn_card(self, match_id: int) -> None:
        self.request("BURN_CARD", match_id)

    def discard_card(self, match_id: int, card_id: int) -> None:
        self.request("DISCARD_CARD", match_id, card_id)

    def add_mana(self, match_id: int, card_id: int) -> None:
        self.request("ADD_MANA", match_id, card_id)

    def play_card(self, match_id: int, card_id: int, target: int) -> None:
        self.request("PLAY_CARD", match_id, card_id, target)

    def attack(self, match_id: int, card_id: int) -> None:
        self.request("ATTACK", match_id, card_id)

    def block(self, match_id: int, attacker_id: int, blocker_id: int) -> None:
        self.request("BLOCK", match_id, attacker_id, blocker_id)

    def finish_block(self, match_id: int) -> None:
        self.request("FINISH_BLOCK", match_id)


class AsyncClient:
    """The asyncio twin of :class:`Client`: ``client = await AsyncClient.connect(...)``."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.name = ""
        self.taken_over = False
        self.reconnect: Reconnect | None = None
        self.reconnections = 0
        self._login: tuple[str, int, str] = ("", 0, "")
        self._rng = random.Random()

    @classmethod
    async def connect(
        cls, host: str, port: int, name: str, secret: str, reconnect: Reconnect | None = None
    ) -> AsyncClient:
        """Connect and log in; raises AuthenticationError when refused.

        The first connection is not retried; ``reconnect`` applies to connections lost later.
        """
        client = cls(*await cls._open(host, port, name, secret))
        client.name = name
        client.reconnect = reconnect
        client._login = (host, port, secret)
        return client

    @staticmethod
    async def _open(
        host: str, port: int, name: str, secret: str
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError as error:  # refused, unreachable, a name that does not resolve
            raise NetworkError.about("connect to", host, port, error) from None
        try:
            for expected, answer in (("LOGIN", name), ("PASSWORD", secret)):
                line = (await reader.readline()).decode("ascii", "replace").rstrip("\r\n")
                if line != expected:
                    raise ProtocolViolation(f"expected {expected!r}, got {line!r}")
                writer.write(f"{answer}\n".encode())
            verdict = await reader.readline()
            if not verdict:  # closed unanswered: the server was busy (not a bad secret)
                raise ProtocolViolation("the server closed the connection during login")
            if verdict.rstrip(b"\r\n") != b"OK":
                raise AuthenticationError(ErrorCode.AuthenticationFailed, "login")
        except BaseException:
            writer.close()
            raise
        return reader, writer

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):  # already gone: nothing to close
            await self.writer.wait_closed()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def _readline(self) -> str:
        line = await self.reader.readline()
        if not line.endswith(b"\n"):
            raise ConnectionLost("the server closed the connection")
        return line.decode("ascii").rstrip("\r\n")

    async def _status(self, command: str) -> None:
        try:
            _check_status(command, await self._readline(), self.name)
        except LoginTakenOver:
            self.taken_over = True
            await self.close()
            raise

    async def _reconnect(self, lost: BaseException) -> None:
        """Back off, connect and log in again, or raise (ConnectionLost, GaveUp)."""
        await self.close()
        policy = self.reconnect
        if policy is None or policy.max_attempts == 0:
            raise ConnectionLost(f"connection lost: {lost}") from lost
        host, port, secret = self._login
        error: BaseException = lost
        for attempt in policy.attempts():
            await asyncio.sleep(policy.delay(attempt, self._rng))
            try:
                self.reader, self.writer = await self._open(host, port, self.name, secret)
            except AuthenticationError:
                raise
            except _LOST as failure:
                error = failure
                continue
            self.reconnections += 1
            return
        raise GaveUp(policy.max_attempts or 0, error) from error

    async def _exchange(self, command: str, args: tuple[int, ...]) -> list[str]:
        self.writer.write(_command_line(command, args))
        await self._status(command)
        if command == "WAIT":
            await self._status(command)
            return []
        count = fixed_data_lines(command)
        if count is not None:
            return [await self._readline() for _ in range(count)]
        first = await self._readline()
        rest = [await self._readline() for _ in range(counted_data_lines(command, first))]
        return [first, *rest]

    async def request(self, command: str, *args: int) -> list[str]:
        """Send one command and return its data lines; raises ServerError on ``ERR``.

        ``WAIT`` returns when the next turn starts. On a lost connection, see :class:`Reconnect`.
        """
        while True:
            if self.taken_over:
                raise LoginTakenOver(self.name)
            try:
                return await self._exchange(command, args)
            except _LOST as lost:
                if self.taken_over:
                    raise
                await self._reconnect(lost)
                _retry_or_raise(command)

    async def wait(self) -> None:
        """WAIT: return when the next turn starts."""
        await self.request("WAIT")

    async def get_my_matches(self) -> list[int]:
        return read_match_ids(await self.request("GET_MY_MATCHES"))

    async def get_final_score(self, match_id: int) -> FinalScore:
        return read_final_score(await self.request("GET_FINAL_SCORE", match_id))

    async def get_turn_info(self, match_id: int) -> TurnInfo:
        return read_turn_info(await self.request("GET_TURN_INFO", match_id))

    async def get_hp(self, match_id: int) -> HitPoints:
        return read_hit_points(await self.request("GET_HP", match_id))

    async def get_card_limits(self, match_id: int) -> CardLimits:
        return read_card_limits(await self.request("GET_CARD_LIMITS", match_id))

    async def get_current_mana(self, match_id: int) -> int:
        return read_int(await self.request("GET_CURRENT_MANA", match_id))

    async def get_deck(self, match_id: int) -> list[Card]:
        return read_cards(await self.request("GET_DECK", match_id))

    async def get_hands(self, match_id: int) -> Hands:
        return read_hands(await self.request("GET_HANDS", match_id))

    async def get_board(self, match_id: int) -> Board:
        return read_board(await self.request("GET_BOARD", match_id))

    async def get_attackers(self, match_id: int) -> list[Card]:
        return read_cards(await self.request("GET_ATTACKERS", match_id))

    async def draw_card(self, match_id: int) -> Card:
        return read_card(await self.request("DRAW_CARD", match_id))

    async def burn_card(self, match_id: int) -> None:
        await self.request("BURN_CARD", match_id)

    async def discard_card(self, match_id: int, card_id: int) -> None:
        await self.request("DISCARD_CARD", match_id, card_id)

    async def add_mana(self, match_id: int, card_id: int) -> None:
        await self.request("ADD_MANA", match_id, card_id)

    async def play_card(self, match_id: int, card_id: int, target: int) -> None:
        await self.request("PLAY_CARD", match_id, card_id, target)

    async def attack(self, match_id: int, card_id: int) -> None:
        await self.request("ATTACK", match_id, card_id)

    async def block(self, match_id: int, attacker_id: int, blocker_id: int) -> None:
        await self.request("BLOCK", match_id, attacker_id, blocker_id)

    async def finish_block(self, match_id: int) -> None:
        await self.request("FINISH_BLOCK", match_id)
