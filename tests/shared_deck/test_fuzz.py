"""Hypothesis throws random bytes and random command lines at a running server: every line
gets exactly one well-formed answer, nothing crashes, and other clients are not disturbed."""

from __future__ import annotations

import re
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardarena.shared_deck.errors import ErrorCode
from cardarena.shared_deck.protocol import (
    ARGUMENT_COUNTS,
    MAX_LINE_BYTES,
    counted_data_lines,
    fixed_data_lines,
)

from .conftest import RawConnection, RunningServer, fixed_deck

StartServer = Callable[..., RunningServer]
ERROR_LINE = re.compile(r"ERR (\d+) (\w+)")
DATA_LINE = re.compile(r"[-0-9A-Z ]*")
FUZZ_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
DECK = fixed_deck(*(f"{i} C 1 2 2 0 1" for i in range(1, 4)), "4 D 1 0 0 0 -1", "5 B 1 1 0 0 -1")


def commands_answered(payload: bytes) -> list[str | None]:
    """The command each answer belongs to (None: a line that can only be refused)."""
    expected: list[str | None] = []
    for line in payload.split(b"\n")[:-1]:
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > MAX_LINE_BYTES:
            expected.append(None)
            continue
        try:
            words = line.decode("ascii").split()
        except UnicodeDecodeError:
            words = []
        expected.append(words[0] if words and words[0] in ARGUMENT_COUNTS else None)
    return expected


def check_answers(connection: RawConnection, payload: bytes) -> None:
    for command in commands_answered(payload):
        status = connection.line()
        if status != "OK":
            match = ERROR_LINE.fullmatch(status)
            assert match, status
            assert ErrorCode(int(match[1])).name == match[2]
            continue
        assert command is not None, "a line that is no command was accepted"
        if command == "WAIT":
            assert connection.line() == "OK"
            continue
        count = fixed_data_lines(command)
        lines = [connection.line() for _ in range(count)] if count is not None else []
        if count is None:
            lines.append(connection.line())
            lines += [connection.line() for _ in range(counted_data_lines(command, lines[0]))]
        assert all(DATA_LINE.fullmatch(line) for line in lines), lines


command_lines = st.lists(
    st.tuples(
        st.sampled_from(sorted(ARGUMENT_COUNTS)),
        st.lists(
            st.one_of(
                st.integers(-7, 12),
                st.integers(-(10**20), 10**20),
                st.text(alphabet="0123456789-+_xé ", max_size=4),
            ),
            max_size=4,
        ),
        st.sampled_from(["\n", "\r\n"]),
    ).map(lambda t: " ".join([t[0], *map(str, t[1])]) + t[2]),
    min_size=1,
    max_size=25,
).map(lambda lines: "".join(lines).encode("utf-8"))

binary_lines = st.lists(st.binary(max_size=1500), min_size=1, max_size=5).map(
    lambda parts: b"\n".join(parts) + b"\n"
)


def fuzz_server(start_server: StartServer) -> RunningServer:
    return start_server(["fuzzer", "other"], turn_seconds=0.05, deck_factory=DECK)


def test_random_command_lines_and_bytes_after_login(start_server: StartServer) -> None:
    server = fuzz_server(start_server)
    other = server.raw()
    other.login("other", server.secrets["other"])

    @FUZZ_SETTINGS
    @given(payload=st.one_of(command_lines, binary_lines))
    def fuzz(payload: bytes) -> None:
        connection = server.raw()
        connection.login("fuzzer", server.secrets["fuzzer"])
        connection.send(payload)
        check_answers(connection, payload)
        assert connection.ask("GET_MY_MATCHES", 3)[0] == "OK"
        connection.close()
        # 0 on the turn between two tournaments (the next waits until the last is stored)
        assert other.ask("GET_MY_MATCHES", 3)[:2] in (["OK", "2"], ["OK", "0"])

    fuzz()
    assert server.server.internal_errors == 0
    other.close()


def test_random_bytes_before_login(start_server: StartServer) -> None:
    server = fuzz_server(start_server)
    other = server.raw()
    other.login("other", server.secrets["other"])

    @FUZZ_SETTINGS
    @given(payload=st.one_of(binary_lines, command_lines, st.binary(max_size=3000)))
    def fuzz(payload: bytes) -> None:
        connection = server.raw()
        connection.send(payload)
        # The greeting comes whatever we sent: wait for it as long as a loaded machine
        # needs; then 0.15 s for any answers to the payload (none is a fair outcome too).
        connection.sock.settimeout(30)
        lines = [connection.reader.readline().decode("ascii").rstrip("\n")]
        connection.sock.settimeout(0.15)
        try:
            while line := connection.reader.readline():
                lines.append(line.decode("ascii").rstrip("\n"))
        except TimeoutError:
            pass  # still waiting for a name or a secret
        connection.close()
        assert lines[0] == "LOGIN"
        for line in lines[1:]:
            assert line in ("PASSWORD", "ERR 941 NotLoggedIn", "ERR 940 AuthenticationFailed",
                            "ERR 952 LineTooLong"), line
        # 0 on the turn between two tournaments (the next waits until the last is stored)
        assert other.ask("GET_MY_MATCHES", 3)[:2] in (["OK", "2"], ["OK", "0"])

    fuzz()
    assert server.server.internal_errors == 0
    other.close()
