"""The turn clock survives an exception in a tick: an in-process server on loopback with a
failure injected into one tick, or into the scoring of one tournament."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import pytest

from cardarena.shared_deck.arena import Tournament
from cardarena.shared_deck.rules import Card, RuleSet
from cardarena.shared_deck.server import MAX_FAILED_TICKS, ServerConfig
from cardarena.shared_deck.store import Store

from .conftest import RawConnection, RunningServer

StartServer = Callable[..., RunningServer]
LOGGER = "cardarena.shared_deck.server"


def logged_in(server: RunningServer, name: str) -> RawConnection:
    connection = server.raw()
    connection.login(name, server.secrets[name])
    return connection


def wait_turn(connection: RawConnection) -> None:
    assert connection.ask("WAIT") == ["OK"]
    assert connection.line() == "OK"


def tracebacks(caplog: pytest.LogCaptureFixture, text: str) -> int:
    return sum(
        1
        for record in caplog.records
        if record.exc_info is not None and text in str(record.exc_info[1])
    )


def test_a_tick_that_raises_is_logged_once_and_its_tournament_played_again(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    original = Tournament.tick
    armed = [True]

    def tick_once_failing(self: Tournament, global_turn: int) -> bool:
        if armed[0] and global_turn - self.start_turn == 2:
            armed[0] = False
            raise RuntimeError("injected tick failure")
        return original(self, global_turn)

    monkeypatch.setattr(Tournament, "tick", tick_once_failing)
    server = start_server(["alice", "bob"], rules=RuleSet(turns_per_match=4))
    alice = logged_in(server, "alice")
    for _ in range(12):  # the clock goes on through the failed tick: every WAIT completes
        wait_turn(alice)
    server.wait_saved(1)
    assert not armed[0] and server.call(lambda: server.server.failed_ticks) == 1
    assert tracebacks(caplog, "injected tick failure") == 1
    assert "tournament 1 abandoned (its turn failed)" in caplog.text
    with contextlib.closing(Store(server.server.config.db_path)) as store:
        replayed = store.tournament(1)  # the same number, and the same match ids
        assert [match.match_id for match in replayed.matches] == [1, 2]
        assert all(match.turns_played == 4 for match in replayed.matches)
        assert store.connection.execute("SELECT COUNT(*) FROM matches").fetchone() == (
            2 * len(store.finished_tournaments()),
        )
    assert server.server.failure is None


def test_a_tournament_whose_scoring_raises_is_played_again(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    original = Tournament.summarize
    armed = [True]

    def summarize_once_failing(self: Tournament, matches: object) -> object:
        if armed[0]:
            armed[0] = False
            raise RuntimeError("injected scoring failure")
        return original(self, matches)  # type: ignore[arg-type]

    monkeypatch.setattr(Tournament, "summarize", summarize_once_failing)
    server = start_server(["alice", "bob"], rules=RuleSet(turns_per_match=3))
    alice = logged_in(server, "alice")
    server.wait_saved(2)
    wait_turn(alice)
    assert tracebacks(caplog, "injected scoring failure") == 1
    assert server.server.saved_tournaments[:2] == [1, 2]
    assert "tournament 1 abandoned (its scoring failed)" in caplog.text


def test_a_failure_that_repeats_stops_the_server_loudly(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A deck that cannot be made, found only once a second player exists (a deck size
    the card pool cannot fill). Start-up refuses such a deck size; a deck factory that
    fails all the same costs a logged traceback (once), the clock goes on, and after a run
    of failed turns the server stops and says why instead of idling forever."""
    caplog.set_level(logging.INFO, logger=LOGGER)

    def no_deck(seed: int, size: int) -> tuple[Card, ...]:
        raise ValueError("injected: no deck of this size")

    server = start_server(["alice"], deck_factory=no_deck)
    alice = logged_in(server, "alice")
    for _ in range(3):  # one player: no tournament, nothing fails
        wait_turn(alice)
    assert server.server.failed_ticks == 0
    server.call(lambda: server.server.store and server.server.store.add_player("bob"))
    server.run(asyncio.wait_for(server.server.done.wait(), 30))
    assert server.server.failed_ticks == MAX_FAILED_TICKS
    assert server.server.failure == (
        f"{MAX_FAILED_TICKS} turns in a row failed;"
        " last: ValueError: injected: no deck of this size"
    )
    assert tracebacks(caplog, "injected: no deck") == 1  # then one line per repeat


def test_a_deck_size_that_cannot_work_is_refused_at_start_up() -> None:
    with pytest.raises(ValueError, match="deck_size must be at most 1000"):
        ServerConfig(rules=RuleSet(deck_size=1001))
    for bad in ({"turn_seconds": float("nan")}, {"turn_seconds": float("inf")},
                {"login_timeout": 0.0}, {"port": 70000}, {"min_players": -1}):  # fmt: skip
        with pytest.raises(ValueError):
            ServerConfig(**bad)  # type: ignore[arg-type]
