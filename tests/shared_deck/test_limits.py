"""Per-client limits of the Shared Deck server, against a real server on loopback."""

from __future__ import annotations

from collections.abc import Callable

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
