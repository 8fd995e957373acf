"""A small Python client for the Shared Deck server, blocking (:class:`Client`) or asyncio
(:class:`AsyncClient`), with the same methods.

Every answer is read into a typed value from :mod:`.protocol`; every ``ERR`` line raises
:class:`ServerError` with its :class:`~.errors.ErrorCode`, so a bot can write
``except ServerError as e: if e.code is ErrorCode.NotYourTurn: ...``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from types import TracebackType
from typing import Self

from .errors import ErrorCode
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


def _command_line(command: str, args: tuple[int, ...]) -> bytes:
    return (" ".join((command, *map(str, args))) + "\n").encode()


def _check_status(command: str, line: str) -> None:
    if line == "OK":
        return
    if line.startswith("ERR "):
        try:
            code = error_from_line(line)
        except ValueError:
            raise ProtocolViolation(f"unexpected answer to {command}: {line!r}") from None
        raise ServerError(code, command)
    raise ProtocolViolation(f"unexpected answer to {command}: {line!r}")


class Client:
    """A blocking client: ``with Client.connect(host, port, name, secret) as c: ...``."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = sock.makefile("rb")

    @classmethod
    def connect(
        cls, host: str, port: int, name: str, secret: str, timeout: float | None = 30.0
    ) -> Client:
        """Connect and log in; raises AuthenticationError when refused."""
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = cls(sock)
        try:
            client._expect("LOGIN")
            client._send(f"{name}\n".encode())
            client._expect("PASSWORD")
            client._send(f"{secret}\n".encode())
            line = client._readline()
            if line != "OK":
                raise AuthenticationError(ErrorCode.AuthenticationFailed, "login")
        except BaseException:
            client.close()
            raise
        return client

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
            raise ProtocolViolation("the server closed the connection")
        return line.decode("ascii").rstrip("\r\n")

    def _expect(self, expected: str) -> None:
        line = self._readline()
        if line != expected:
            raise ProtocolViolation(f"expected {expected!r}, got {line!r}")

    def request(self, command: str, *args: int) -> list[str]:
        """Send one command and return its data lines; raises ServerError on ``ERR``."""
        self._send(_command_line(command, args))
        _check_status(command, self._readline())
        count = fixed_data_lines(command)
        if count is not None:
            return [self._readline() for _ in range(count)]
        first = self._readline()
        return [first] + [self._readline() for _ in range(counted_data_lines(command, first))]

    def wait(self) -> None:
        """WAIT: return when the next turn starts."""
        self.request("WAIT")
        _check_status("WAIT", self._readline())

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

    @classmethod
    async def connect(cls, host: str, port: int, name: str, secret: str) -> AsyncClient:
        """Connect and log in; raises AuthenticationError when refused."""
        reader, writer = await asyncio.open_connection(host, port)
        client = cls(reader, writer)
        try:
            await client._expect("LOGIN")
            writer.write(f"{name}\n".encode())
            await client._expect("PASSWORD")
            writer.write(f"{secret}\n".encode())
            if await client._readline() != "OK":
                raise AuthenticationError(ErrorCode.AuthenticationFailed, "login")
        except BaseException:
            await client.close()
            raise
        return client

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
            raise ProtocolViolation("the server closed the connection")
        return line.decode("ascii").rstrip("\r\n")

    async def _expect(self, expected: str) -> None:
        line = await self._readline()
        if line != expected:
            raise ProtocolViolation(f"expected {expected!r}, got {line!r}")

    async def request(self, command: str, *args: int) -> list[str]:
        """Send one command and return its data lines; raises ServerError on ``ERR``."""
        self.writer.write(_command_line(command, args))
        _check_status(command, await self._readline())
        count = fixed_data_lines(command)
        if count is not None:
            return [await self._readline() for _ in range(count)]
        first = await self._readline()
        rest = [await self._readline() for _ in range(counted_data_lines(command, first))]
        return [first, *rest]

    async def wait(self) -> None:
        """WAIT: return when the next turn starts."""
        await self.request("WAIT")
        _check_status("WAIT", await self._readline())

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
