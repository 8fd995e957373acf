"""The SQLite store on a real file: hashed secrets, atomic tournaments, the leaderboard."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

import pytest

from cardarena.shared_deck.arena import Arena, TournamentResult
from cardarena.shared_deck.deck import generate_deck
from cardarena.shared_deck.rules import RuleSet
from cardarena.shared_deck.store import DatabaseLocked, ServerLock, Store, verify_secret


def play_tournament(arena: Arena, players: list[str], actions: int) -> TournamentResult:
    """A tournament where the first ``actions`` matches see one draw by their first player."""
    tournament = arena.start_tournament(players)
    assert tournament is not None
    for match_id in list(tournament.matches_of[players[0]])[:actions]:
        found = arena.match(match_id)
        assert found is not None
        found[0].perform(0, "DRAW_CARD", ())
    while True:
        finished = arena.tick()
        if finished is not None:
            return finished.result(arena.turn)


def test_secrets_are_stored_hashed_with_salt(tmp_path: Path) -> None:
    db = tmp_path / "players.db"
    with contextlib.closing(Store(db)) as store:
        first = store.add_player("alice")
        second = store.add_player("bob")
        assert first != second and len(first) >= 32
        stored = store.secret_hash("alice")
        assert stored is not None and first not in stored
        assert verify_secret(first, stored)
        assert not verify_secret(second, stored)
        assert not verify_secret(first, "not a hash")
        assert store.secret_hash("nobody") is None
        with pytest.raises(ValueError, match="exists"):
            store.add_player("alice")
        for bad in ("", "a b", "x" * 33, "WAIT", "GET_HP", "-dash", "é"):
            with pytest.raises(ValueError, match="invalid"):
                store.add_player(bad)
    assert first.encode() not in db.read_bytes()


def test_finished_tournaments_and_leaderboard_survive_reopening(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    players = ["alice", "bob", "carol"]
    rules = RuleSet(turns_per_match=4)
    with contextlib.closing(Store(db)) as store:
        for name in players:
            store.add_player(name)
        arena = Arena(rules, store.base_seed(5))
        results = []
        for _ in range(2):
            result = play_tournament(arena, players, actions=2)
            store.finish_tournament(result)
            results.append(result)
        store.begin_tournament(3, 99, rules, generate_deck(99, 10))  # then the server dies
    with contextlib.closing(Store(db)) as store:
        assert store.base_seed(None) == 5
        assert store.discard_unfinished() == [3]
        assert store.finished_tournaments() == [1, 2]
        assert store.next_numbers() == (3, 13)
        for result in results:
            stored = store.tournament(result.number)
            assert stored.points == pytest.approx(result.points)
            assert stored.deck == result.deck and stored.rules == rules
            assert stored.matches == result.matches
            drawn = [m for m in stored.matches if m.actions()]
            assert len(drawn) == 2 and drawn[0].actions()[0].command == "DRAW_CARD"
        board = {row.player: (row.points, row.tournaments) for row in store.leaderboard()}
        for name in players:
            total = sum(result.points[name] for result in results)
            assert board[name] == (pytest.approx(total), 2)


def test_a_failing_tournament_write_leaves_nothing_behind(tmp_path: Path) -> None:
    db = tmp_path / "atomic.db"
    with contextlib.closing(Store(db)) as store:
        for name in ("alice", "bob"):
            store.add_player(name)
        arena = Arena(RuleSet(turns_per_match=2), 1)
        result = play_tournament(arena, ["alice", "bob"], actions=1)
        real = store.connection

        class FailingLeaderboard:
            """The real connection, except that the leaderboard update fails."""

            def __getattr__(self, name: str) -> object:
                return getattr(real, name)

            def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
                if sql.startswith("INSERT INTO leaderboard"):
                    raise sqlite3.OperationalError("disk full (simulated)")
                return real.execute(sql, *args)

        store.connection = FailingLeaderboard()  # type: ignore[assignment]
        try:
            with pytest.raises(sqlite3.OperationalError):
                store.finish_tournament(result)
        finally:
            store.connection = real
        assert store.finished_tournaments() == []
        assert store.connection.execute("SELECT COUNT(*) FROM matches").fetchone() == (0,)
        assert all(row.tournaments == 0 for row in store.leaderboard())
        store.finish_tournament(result)  # and the same write succeeds afterwards
        assert store.finished_tournaments() == [1]


def test_the_server_lock_file_is_left_only_by_its_holder(tmp_path: Path) -> None:
    """DB.lock: a refused taker leaves the holder's file; a holder removes its file
    when it lets go; a file left by a killed holder is taken over."""
    db = tmp_path / "league.db"
    lock_file = tmp_path / "league.db.lock"
    first = ServerLock(db)
    assert lock_file.read_text() == f"{os.getpid()}\n"
    with pytest.raises(DatabaseLocked, match=f"lock file {lock_file}"):
        ServerLock(db)
    assert lock_file.read_text() == f"{os.getpid()}\n"  # still the first one's
    first.release()
    assert not lock_file.exists()
    lock_file.write_text("12345\n")  # left by a server that was killed
    second = ServerLock(db)
    assert lock_file.read_text() == f"{os.getpid()}\n"
    second.release()
    assert list(tmp_path.iterdir()) == []
