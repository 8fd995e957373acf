"""The scheduler over a real store: validation first, pairs with one seed and the seats
swapped, the owner rule, the in-flight cap, pause, and recovery after a restart."""

from __future__ import annotations

import random
from pathlib import Path

from cardarena.ladder.scheduler import Scheduler
from cardarena.ladder.store import LadderStore, User
from tests.ladder.test_store import record


def setup(tmp_path: Path) -> tuple[LadderStore, Scheduler, list[User]]:
    store = LadderStore(str(tmp_path / "ladder.db"), lock=True)
    people = []
    for name in ("alice", "bob", "carol"):
        user = store.user_for_token(store.add_user(name))
        assert user is not None
        people.append(user)
    scheduler = Scheduler(store, validation_opponent="builtin:greedy", rng=random.Random(5))
    return store, scheduler, people


def active(store: LadderStore, user: User, name: str) -> int:
    version = store.submit(user, name, "python", "bot.py", b"x", new_bot=True)
    store.record_build(version, True, "ok", f"python3 {name}.py", f"/{name}")
    store.set_status(version, "active")
    return version


def test_validation_games_come_first_then_rated_pairs(tmp_path: Path) -> None:
    store, scheduler, (alice, bob, _carol) = setup(tmp_path)
    old = [active(store, alice, "a1"), active(store, bob, "b1")]
    new = store.submit(bob, "b2", "python", "bot.py", b"x", new_bot=True)
    store.record_build(new, True, "ok", "python3 b2.py", "/b2")
    kinds = []
    for _ in range(4):
        game = scheduler.next_game()
        assert game is not None and new in game.versions and "builtin:greedy" in game.commands
        kinds.append(game.kind)
        store.finish(game.id, record(None))
    assert kinds == ["validation"] * 4
    assert store.version(new).status == "active"  # type: ignore[union-attr]
    first = scheduler.next_game()
    second = scheduler.next_game()
    assert first is not None and second is not None
    assert (first.kind, first.pair, first.seed) == (second.kind, second.pair, second.seed)
    assert first.versions == second.versions[::-1]
    assert set(first.versions) <= {old[0], new} | {old[0], old[1]}
    assert old[0] in first.versions  # bob's two bots never meet: alice's is in every pair


def test_cap_in_flight_pause_and_recovery(tmp_path: Path) -> None:
    store, scheduler, (alice, bob, _carol) = setup(tmp_path)
    a, b = active(store, alice, "a1"), active(store, bob, "b1")
    leased = [scheduler.next_game(), scheduler.next_game()]
    assert all(game is not None for game in leased)
    assert scheduler.next_game() is None  # both bots have 2 games in flight
    store.finish(leased[0].id, record(0))  # type: ignore[union-attr]
    assert scheduler.next_game() is None  # b1 and a1 still have one each: a pair needs two
    store.finish(leased[1].id, record(0))  # type: ignore[union-attr]
    store.set_setting("paused", True)
    assert scheduler.next_game() is None
    store.set_setting("paused", False)
    game = scheduler.next_game()
    assert game is not None and set(game.versions) == {a, b}
    store.close()
    # A restart: the leased game was never finished, it is played again, once.
    with LadderStore(str(tmp_path / "ladder.db"), lock=True) as reopened:
        again = Scheduler(reopened, validation_opponent="builtin:greedy")
        assert again.recover() == 1
        replayed = again.next_game()
        assert replayed is not None and replayed.id == game.id
        assert again.record(replayed.id, record(1)) is True
        assert again.record(replayed.id, record(0)) is False
        assert reopened.count_games("done") == 3
