"""Per-client limits of the Shared Deck server, against a real server on loopback."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cardarena.shared_deck.server import ServerConfig
from tests.shared_deck.conftest import RunningServer

StartServer = Callable[..., RunningServer]


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
