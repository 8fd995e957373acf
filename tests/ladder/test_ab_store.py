"""A/B tests over a real store and scheduler: who may test what, pairs taking turns with the
rated games within the A/B share, the SPRT fed in finishing order (and replayed the same
after a restart), verdicts, budget, stop, and no rating moved by an A/B game."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cardarena.ladder.abtests import AbSettings, AbTests
from cardarena.ladder.limits import RateLimits, Throttled, check_ab, check_submission, wait_s
from cardarena.ladder.scheduler import Scheduler
from cardarena.ladder.sprt import Sprt
from cardarena.ladder.store import LadderError, LadderStore, User
from tests.ladder.test_store import record


def people(store: LadderStore, *names: str, organiser: bool = False) -> list[User]:
    users = []
    for name in names:
        user = store.user_for_token(store.add_user(name, organiser))
        assert user is not None
        users.append(user)
    return users


def active(store: LadderStore, user: User, bot: str) -> int:
    """A new bot that plays (an in-process command: no build folder)."""
    version = store.submit(user, bot, "python", "bot.py", b"x", new_bot=True)
    store.record_build(version, True, "ok", f"python3 {bot}.py", None)
    store.set_status(version, "active")
    return version


def new_version(store: LadderStore, user: User, bot: str) -> int:
    """A second version of ``bot``: active, the first one retired."""
    version = store.submit(user, bot, "python", "bot.py", b"x")
    store.record_build(version, True, "ok", f"python3 {bot}2.py", None)
    store.set_status(version, "active")
    store.set_bot_status(bot, "active")
    for row in store.versions():
        if row.bot == bot and row.id != version:
            store.set_status(row.id, "retired", "replaced")
    return version


@pytest.fixture
def ladder(tmp_path: Path) -> tuple[LadderStore, AbTests, Scheduler, list[User]]:
    store = LadderStore(str(tmp_path / "ladder.db"), lock=True)
    alice, bob, carol = people(store, "alice", "bob", "carol")
    active(store, alice, "a")
    active(store, bob, "b")
    active(store, carol, "c")
    new_version(store, alice, "a")
    tests = AbTests(store, AbSettings(max_pairs=50), workers=2)
    scheduler = Scheduler(store, validation_opponent="builtin:greedy", rng=random.Random(3),
                          ab=tests)  # fmt: skip
    return store, tests, scheduler, [alice, bob, carol]


def test_who_may_test_what(ladder: tuple[LadderStore, AbTests, Scheduler, list[User]]) -> None:
    store, tests, _scheduler, (alice, bob, _carol) = ladder
    assert tests.create(alice, "a", "a.v1", 0, 20) == 1  # her new version against her old
    assert tests.create(alice, "a.v2", "b", 0, 400, max_pairs=5) == 2  # against an active bot
    refusals = {
        ("b", "a.v1"): "is not yours",  # A is always one's own
        ("a", "a"): "same version",
        ("a", "nobody"): "no bot or version",
        ("a", "a.v9"): "no bot or version",
    }
    for (a, b), why in refusals.items():
        with pytest.raises(LadderError, match=why):
            tests.create(alice, a, b)
    store.set_bot_status("b", "retired")  # bob's bot no longer plays: not a B for alice
    with pytest.raises(LadderError, match="another participant's active one"):
        tests.create(alice, "a", "b")
    assert tests.create(bob, "b", "a") == 3  # his own retired version may be A
    for elo0, elo1, pairs in ((5, 5, None), (0, 2000, None), (0, 20, 0), (0, 20, 51)):
        with pytest.raises(LadderError):
            tests.create(alice, "a", "c", elo0, elo1, pairs)
    assert tests.get(1, bob) is None and tests.get(1, alice) is not None  # the owner's only
    with pytest.raises(LadderError, match="no A/B test 1 of yours"):
        tests.stop(1, bob)
    assert tests.stop(1, alice) and not tests.stop(1, alice)
    assert tests.get(1, alice)["state"] == "stopped"  # type: ignore[index]


def play_all(store: LadderStore, scheduler: Scheduler, games: int, winner_a: bool) -> list[str]:
    """Lease and finish ``games`` games: A wins its A/B games (if ``winner_a``), the first
    seat wins rated ones. The kinds, in order."""
    kinds = []
    for _ in range(games):
        game = scheduler.next_game()
        assert game is not None
        kinds.append(game.kind)
        if game.kind == "ab":
            a = store.db.execute(
                "SELECT a_first FROM ab_pairs WHERE pair = ?", (game.pair,)
            ).fetchone()[0]
            seat_a = game.versions.index(a)
            scheduler.record(game.id, record(seat_a if winner_a else 1 - seat_a))
        else:
            scheduler.record(game.id, record(0))
    return kinds


def test_pairs_take_turns_decide_and_never_rate(
    ladder: tuple[LadderStore, AbTests, Scheduler, list[User]],
) -> None:
    store, tests, scheduler, (alice, _bob, _carol) = ladder
    ratings = {v.id: (v.mu, v.sigma, v.rated_games) for v in store.versions()}
    test = tests.create(alice, "a", "a.v1", 0, 400)
    kinds = play_all(store, scheduler, 8, winner_a=True)
    assert kinds.count("ab") == 4 and kinds.count("rated") == 4  # every other pair
    for version in (3, 4):  # the versions under test: moved by rated games only
        row = store.version(version)
        assert row is not None
        rated = store.db.execute(
            "SELECT COUNT(*) FROM games WHERE rated = 1 AND (first = ? OR second = ?)",
            (version, version),
        ).fetchone()[0]
        assert row.rated_games == rated
    assert store.version(1).rated_games == ratings[1][2]  # type: ignore[union-attr]
    shown = tests.get(test, alice)
    assert shown is not None
    assert shown["pentanomial"] == [0, 0, 0, 0, 2] and shown["pairs"] == 2
    expected = Sprt(0, 400)
    expected.add_pair(1, 1)
    expected.add_pair(1, 1)
    assert shown["llr"] == pytest.approx(expected.llr, abs=1e-3)
    play_all(store, scheduler, 16, winner_a=True)
    shown = tests.get(test, alice)
    assert shown is not None and shown["state"] == "accepted", shown
    assert shown["elo"]["value"] > 400 and shown["llr"] >= shown["bounds"][1]
    queued = store.db.execute("SELECT COUNT(*) FROM games WHERE kind = 'ab' AND state = 'queued'")
    assert queued.fetchone()[0] == 0
    assert set(play_all(store, scheduler, 4, winner_a=True)) == {"rated"}  # decided: no more

    again = AbTests(store, AbSettings(max_pairs=50), workers=2)  # a restart replays the pairs
    assert again._sprt(test, (0, 400, 0.05, 0.05)).llr == pytest.approx(shown["llr"], abs=1e-3)


def test_rejected_budget_and_a_withdrawn_version(
    ladder: tuple[LadderStore, AbTests, Scheduler, list[User]],
) -> None:
    store, tests, scheduler, (alice, _bob, _carol) = ladder
    losing = tests.create(alice, "a", "c", 0, 400)
    play_all(store, scheduler, 24, winner_a=False)
    assert tests.get(losing, alice)["state"] == "rejected"  # type: ignore[index]
    short = tests.create(alice, "a", "a.v1", 0, 2, max_pairs=2)
    play_all(store, scheduler, 8, winner_a=True)
    shown = tests.get(short, alice)
    assert shown is not None and (shown["state"], shown["pairs"]) == ("budget", 2)
    withdrawn = tests.create(alice, "a", "b", 0, 20)
    play_all(store, scheduler, 2, winner_a=True)
    store.set_bot_status("b", "disabled", "by an organiser")
    play_all(store, scheduler, 4, winner_a=True)  # a rated pair, then A/B's turn
    shown = tests.get(withdrawn, alice)
    assert shown is not None and shown["state"] == "stopped", shown
    assert "disabled" in shown["reason"]


def test_rate_limits(tmp_path: Path) -> None:
    now = [1000.0]
    store = LadderStore(str(tmp_path / "ladder.db"), clock=lambda: now[0])
    alice, boss = people(store, "alice") + people(store, "boss", organiser=True)
    limits = RateLimits(submissions_per_hour=2, ab_per_day=1)
    for user in (alice, boss):
        for index in range(2):
            check_submission(store, user, limits)
            store.submit(user, f"{user.name}{index}", "python", "bot.py", b"x", new_bot=True)
            now[0] += 60
    with pytest.raises(Throttled) as refused:
        check_submission(store, alice, limits)
    assert refused.value.retry_after == 3600 - 240  # when her first one leaves the hour
    assert "at most 2 submissions per hour" in str(refused.value)
    check_submission(store, boss, limits)  # organisers are exempt
    now[0] += refused.value.retry_after
    check_submission(store, alice, limits)
    assert wait_s([0.0, 10.0], 2, 100, 50) == 50 and wait_s([0.0], 2, 100, 50) == 0
    with pytest.raises(Throttled, match="running"):
        check_ab([], 2, alice, limits, 2, now[0])
    with pytest.raises(Throttled, match="at most 1 A/B tests per day"):
        check_ab([now[0] - 10], 0, alice, limits, 2, now[0])
    check_ab([now[0] - 10], 5, boss, limits, 2, now[0])
