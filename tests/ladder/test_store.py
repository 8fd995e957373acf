"""The ladder store on real SQLite files: hashed tokens, submissions, leases, a result that
comes twice, restart recovery, validation and automatic disabling."""

from __future__ import annotations

import hashlib
import sqlite3
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from cardarena.ladder.ratings import INITIAL
from cardarena.ladder.store import (
    TOKEN_PREFIX,
    DisableRule,
    LadderError,
    LadderLocked,
    LadderStore,
    StoreError,
    User,
)
from cardarena.tournaments.store import GameRecord, compress_log


def record(
    winner: int | None,
    error_seat: int | None = None,
    kind: str | None = None,
    overloaded: bool | None = None,
) -> GameRecord:
    """A finished game as the LOCM side reports it (the key fields only matter there)."""
    return GameRecord(
        key="k", first="a", second="b", round=0, seed=1, winner=winner,
        result="error" if kind == "referee" else "win" if winner is not None else "draw",
        end_reason="HEALTH" if kind is None else "TIMEOUT", error_seat=error_seat,
        error_kind=kind, detail=None, turns=10, first_turns=5, first_mean_ms=1.0,
        first_max_ms=2.0, second_turns=5, second_mean_ms=1.0, second_max_ms=2.0,
        duration_s=0.1, replay="locm play -p1 a -p2 b", log=compress_log({"turns": [1, 2]}),
        overloaded=overloaded,
    )  # fmt: skip


class Clock:
    """A clock the test moves (leases expire without waiting)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> LadderStore:
    with LadderStore(str(tmp_path / "ladder.db"), lock=True, clock=clock) as opened:
        yield opened


def active(store: LadderStore, user: User, name: str) -> int:
    """A version that passed its (here: skipped) validation and plays rated games."""
    version = store.submit(user, name, "python", "bot.py", b"print(1)", new_bot=True)
    store.record_build(version, True, "built", f"python3 /bots/{name}.py", f"/bots/{name}")
    store.set_status(version, "active")
    return version


def users(store: LadderStore) -> tuple[User, User]:
    first = store.user_for_token(store.add_user("alice"))
    second = store.user_for_token(store.add_user("bob"))
    assert first is not None and second is not None
    return first, second


def test_tokens_are_stored_hashed_and_looked_up_by_hash(store: LadderStore) -> None:
    token = store.add_user("alice", organiser=True)
    assert len(token) >= 40
    # never read as a command-line option (--token -x...), whatever its random part
    assert token.startswith(TOKEN_PREFIX)
    rows = store.db.execute("SELECT token_sha256 FROM users").fetchall()
    assert rows == [(hashlib.sha256(token.encode()).hexdigest(),)]
    dump = "\n".join(store.db.iterdump())
    assert token not in dump
    assert store.user_for_token(token) == User(1, "alice", True)
    for wrong in ("", token[:-1], token + "x", "x" * 500, rows[0][0]):
        assert store.user_for_token(wrong) is None
    again = store.new_token("alice")
    assert store.user_for_token(token) is None
    assert store.user_for_token(again) == User(1, "alice", True)
    assert again.startswith(TOKEN_PREFIX) and store.add_user("bob").startswith(TOKEN_PREFIX)


def test_names_and_owners_are_checked(store: LadderStore) -> None:
    alice, bob = users(store)
    with pytest.raises(LadderError, match="already a user"):
        store.add_user("alice")
    with pytest.raises(LadderError, match="letters"):
        store.add_user("../etc")
    store.submit(alice, "a1", "python", "bot.py", b"x", new_bot=True)
    with pytest.raises(LadderError, match="already a bot"):
        store.submit(bob, "a1", "python", "bot.py", b"x", new_bot=True)
    with pytest.raises(LadderError, match="another participant"):
        store.submit(bob, "a1", "python", "bot.py", b"x")
    with pytest.raises(LadderError, match="--new-bot"):
        store.submit(bob, "b1", "python", "bot.py", b"x")
    assert store.submit(alice, "a1", "python", "bot.py", b"y") == 2  # version 2
    store.set_setting("frozen", True)
    with pytest.raises(LadderError, match="frozen"):
        store.submit(alice, "a1", "python", "bot.py", b"z")


def test_a_second_server_on_the_file_is_refused(store: LadderStore, tmp_path: Path) -> None:
    with pytest.raises(LadderLocked, match="in use"):
        LadderStore(store.path, lock=True)
    with LadderStore(store.path) as beside:  # `user add` while the server runs
        beside.add_user("carol")
    assert [u.name for u in store.users()] == ["carol"]
    assert stat.S_IMODE((tmp_path / "ladder.db").stat().st_mode) == 0o600


def test_other_files_are_refused_in_one_line(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StoreError, match="not a ladder database"):
        LadderStore(str(other))
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a ladder database"):
        LadderStore(str(junk))
    with pytest.raises(StoreError, match="no directory"):
        LadderStore(str(tmp_path / "missing" / "l.db"))
    with pytest.raises(StoreError, match="is a directory"):
        LadderStore(str(tmp_path))


def test_a_result_that_comes_twice_counts_once(store: LadderStore) -> None:
    alice, bob = users(store)
    a, b = active(store, alice, "a1"), active(store, bob, "b1")
    store.queue_pair("rated", 7, a, b)
    game = store.lease("worker-1")
    assert game is not None and game.versions == (a, b) and game.seed == 7
    assert game.commands == ("python3 /bots/a1.py", "python3 /bots/b1.py")
    assert store.finish(game.id, record(winner=0)) is True
    assert store.finish(game.id, record(winner=1)) is False  # a late duplicate
    board = {row.name: row for row in store.leaderboard()}
    assert (board["a1"].wins, board["a1"].losses, board["a1"].games) == (1, 0, 1)
    assert (board["b1"].wins, board["b1"].losses, board["b1"].games) == (0, 1, 1)
    assert board["a1"].mu > INITIAL.mu > board["b1"].mu
    assert [row.name for row in store.leaderboard()] == ["a1", "b1"]
    assert store.rated_results() == (["a1", "b1"], [("a1", "b1", 1.0)])
    assert store.owners() == {"a1": "alice", "b1": "bob"}
    mark = store.change_mark()
    store.set_setting("paused", True)
    assert store.change_mark() != mark
    page = store.bot("a1")
    assert page is not None and len(page.history) == 1
    assert page.head_to_head[0].opponent == "b1" and page.head_to_head[0].wins == 1
    row, log = store.game(game.id) or (None, None)
    assert row is not None and row.state == "done" and log == {"turns": [1, 2]}
    assert store.count_games("done") == 1 and store.count_games("queued") == 1


def test_leases_expire_and_a_restart_queues_every_leased_game(
    store: LadderStore, clock: Clock
) -> None:
    alice, bob = users(store)
    a, b = active(store, alice, "a1"), active(store, bob, "b1")
    store.queue_pair("rated", 7, a, b)
    first = store.lease("w1", lease_s=60)
    second = store.lease("w2", lease_s=600)
    assert first is not None and second is not None and store.lease("w3") is None
    assert store.in_flight() == {a: 2, b: 2}
    clock.now += 61
    assert store.expire_leases() == 1  # only the first lease ran out
    again = store.lease("w3")
    assert again is not None and again.id == first.id
    # The expired worker answers late, then the new one: the first answer counts.
    assert store.finish(first.id, record(winner=1)) is True
    assert store.finish(again.id, record(winner=0)) is False
    assert store.expire_leases(every=True) == 1  # a restart: w2's game is played again
    replay = store.lease("w4")
    assert replay is not None and replay.id == second.id
    assert store.bot("b1").versions[0].rated_games == 1  # type: ignore[union-attr]


def test_a_referee_failure_is_played_again_a_few_times(store: LadderStore) -> None:
    alice, bob = users(store)
    a, b = active(store, alice, "a1"), active(store, bob, "b1")
    store.queue_pair("rated", 7, a, b)
    game = store.lease("w")
    assert game is not None
    # A timeout while the machine starved the bot of CPU is not the bot's: played again.
    assert store.finish(game.id, record(1, 0, "timeout", overloaded=True))
    assert store.lease("w") == replace(game, lease_expires=game.lease_expires)
    store.finish(game.id, record(1, 0, "timeout", overloaded=False))  # its own: counted
    assert store.bot("a1").versions[0].rated_games == 1  # type: ignore[union-attr]
    store.expire_leases(every=True)
    game = store.lease("w")
    assert game is not None
    for _attempt in range(2):
        assert store.finish(game.id, record(None, kind="referee"))
        game = store.lease("w")
        assert game is not None
    store.finish(game.id, record(None, kind="referee"))  # the third: kept, unrated
    row = store.game(game.id)
    assert row is not None and row[0].state == "done" and not row[0].rated
    assert store.bot("a1").versions[0].rated_games == 1  # type: ignore[union-attr]


def test_validation_activates_or_fails_a_version(store: LadderStore) -> None:
    alice, _bob = users(store)
    good = store.submit(alice, "good", "python", "bot.py", b"x", new_bot=True)
    bad = store.submit(alice, "bad", "python", "bot.py", b"x", new_bot=True)
    broken = store.submit(alice, "broken", "python", "bot.py", b"x", new_bot=True)
    store.record_build(good, True, "ok", "python3 good.py", "/g")
    store.record_build(bad, True, "ok", "python3 bad.py", "/b")
    store.record_build(broken, False, "SyntaxError", None, None)
    assert store.bot("broken").status == "failed"  # type: ignore[union-attr]
    assert store.validation_needed() == [good, bad]
    for version in (good, bad):
        store.queue_pair("validation", 3, version, None, opponent="builtin:greedy")
    assert store.validation_needed() == []
    while (game := store.lease("w")) is not None:
        seat = game.versions.index(bad) if bad in game.versions else None
        result = record(1 - seat, seat, "crash") if seat is not None else record(None)
        store.finish(game.id, result)
    assert store.bot("good").status == "active"  # type: ignore[union-attr]
    failed = store.bot("bad")
    assert failed is not None and failed.status == "failed"
    assert failed.reason is not None and "crash" in failed.reason
    assert failed.errors == {"crash": 2}


def test_a_new_version_replaces_the_old_one_when_it_passes(store: LadderStore) -> None:
    alice, bob = users(store)
    old, other = active(store, alice, "a1"), active(store, bob, "b1")
    store.queue_pair("rated", 7, old, other)
    game = store.lease("w")
    assert game is not None
    store.finish(game.id, record(winner=game.versions.index(old)))
    new = store.submit(alice, "a1", "python", "bot.py", b"v2")
    assert store.version(new).mu == store.version(old).mu  # type: ignore[union-attr]
    assert store.version(new).sigma == INITIAL.sigma  # type: ignore[union-attr]
    store.record_build(new, True, "ok", "python3 v2.py", "/v2")
    assert store.bot("a1").status == "active"  # the old version plays meanwhile
    store.queue_pair("validation", 1, new, None, opponent="builtin:greedy")
    while (game := store.lease("w")) is not None:
        if game.kind == "validation":
            store.finish(game.id, record(None))
    assert store.version(old).status == "retired"  # type: ignore[union-attr]
    assert store.count_games("queued") == 0  # the old version's queued game was dropped
    assert [e.id for e in store.entrants()] == [other, new]


def test_a_version_that_keeps_crashing_is_disabled(tmp_path: Path) -> None:
    rule = DisableRule(window=4, limit=3)
    with LadderStore(str(tmp_path / "l.db"), disable_rule=rule) as store:
        alice, bob = users(store)
        a, b = active(store, alice, "a1"), active(store, bob, "b1")
        outcomes = [None, "crash", "timeout", None, "crash"]  # a's errors, game by game
        for kind in outcomes:
            store.queue_pair("rated", 1, a, b)
            game = store.lease("w")
            assert game is not None and game.versions[0] == a
            store.finish(game.id, record(1, 0, kind) if kind else record(0))
            store.db.execute("DELETE FROM games WHERE state = 'queued'")
        page = store.bot("a1")
        assert page is not None and page.status == "disabled"
        assert (
            page.reason == "lost 3 of its last 4 rated games by its own errors (crash 2, timeout 1)"
        )
        assert store.bot("b1").status == "active"  # type: ignore[union-attr]
        assert [e.id for e in store.entrants()] == [b]
