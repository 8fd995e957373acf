"""The final, through the store and the scheduler (no server, no referee): who the finalists
are, that rated play stops and submissions freeze, that every pair plays pairs of games with
the seats swapped, and that it ends when the ranks are separated or the budget is spent."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from cardarena.ladder.final import FinalProgramme, final_json, start_final, stop_final
from cardarena.ladder.scheduler import Scheduler
from cardarena.ladder.store import LadderError, LadderStore
from cardarena.tournaments.store import GameRecord

STRENGTH = {"ace": 3, "bee": 2, "cat": 1, "dog": 0}
"""The stronger bot always wins (a crash of ``dog`` in some games: charged, its loss)."""


def record(game: int, winner: int | None, error_seat: int | None = None) -> GameRecord:
    return GameRecord(
        key=str(game), first="a", second="b", round=0, seed=1, winner=winner,
        result="win" if winner is not None else "draw", end_reason="HEALTH",
        error_seat=error_seat, error_kind=None if error_seat is None else "crash",
        detail=None, turns=10, first_turns=5, first_mean_ms=1.0, first_max_ms=2.0,
        second_turns=5, second_mean_ms=1.0, second_max_ms=2.0, duration_s=0.1,
        replay="locm play ...",
    )  # fmt: skip


def ladder(tmp_path: Path) -> tuple[LadderStore, Scheduler]:
    store = LadderStore(str(tmp_path / "ladder.db"))
    for name, strength in STRENGTH.items():
        user = store.user_for_token(store.add_user(f"owner-{name}"))
        assert user is not None
        version = store.submit(user, name, "python", "bot.py", b"#", new_bot=True)
        store.record_build(version, True, "ok", f"builtin:{name}", None)
        store.set_status(version, "active")
        # the open ladder's ratings: bee ahead of ace (the final puts them right), dog last
        mu = 40 if name == "bee" else 20 + 5 * strength
        store.db.execute("UPDATE versions SET mu = ?, sigma = 1 WHERE id = ?", (mu, version))
    scheduler = Scheduler(store, validation_opponent="builtin:greedy", rng=random.Random(7))
    scheduler.programmes.append(FinalProgramme())
    return store, scheduler


def play(store: LadderStore, scheduler: Scheduler, limit: int) -> list[tuple[str, str, int]]:
    """Play the final's games the scheduler hands out, the stronger always winning, until it
    hands out none or another kind; (first, second, seed) of each."""
    played = []
    for _ in range(limit):
        game = scheduler.next_game()
        if game is None or game.kind != "final":
            break
        first, second = (label.split(".v")[0] for label in (game.first, game.second))
        winner = 0 if STRENGTH[first] > STRENGTH[second] else 1
        crash = 1 - winner if "dog" in (first, second) and game.id % 3 == 0 else None
        scheduler.record(game.id, record(game.id, winner, crash))
        played.append((first, second, game.seed))
    return played


def test_final_top_three_separates_and_ends(tmp_path: Path) -> None:
    store, scheduler = ladder(tmp_path)
    rated_before = store.count_games("done", "rated")
    final = start_final(store, top=3, confidence=0.9, budget=200, by="olga")
    assert store.settings()["frozen"]
    state = final_json(store.db)
    assert state is not None and state["id"] == final
    assert [f["name"] for f in state["finalists"]] == ["bee", "ace", "cat"]
    with pytest.raises(LadderError, match="still running"):
        start_final(store, top=2)

    played = play(store, scheduler, 400)  # ends with the first rated game after the final
    state = final_json(store.db)
    assert state is not None
    assert state["state"] == "done" and state["end_reason"] == "separated", state
    assert state["separated"] and not state["not_separated"]
    assert [row["name"] for row in state["standings"]] == ["ace", "bee", "cat"]
    assert all(row["elo"]["low"] > 0 for row in state["standings"][:1])
    assert state["games_played"] == len(played) < 200 and state["games_in_play"] == 0
    # every pair of finalists played, as many pairs each, both seats on one seed
    counts = {tuple(p["bots"]): p["pairs"] for p in state["pairs"]}
    assert len(counts) == 3 and len(set(counts.values())) == 1
    assert {p["games_played"] for p in state["pairs"]} == {2 * next(iter(counts.values()))}
    seeds: dict[int, set[tuple[str, str]]] = {}
    for first, second, seed in played:
        seeds.setdefault(seed, set()).add((first, second))
    assert all(len(seats) == 2 and {(b, a) for a, b in seats} == seats for seats in seeds.values())
    assert "dog" not in {name for game in played for name in game[:2]}
    # the open ladder's ratings did not move; rated play comes back after the final
    assert store.count_games("done", "rated") == rated_before
    assert store.count_games("leased", "rated") == 1


def test_budget_ends_a_final_of_equals_and_stop(tmp_path: Path) -> None:
    store, scheduler = ladder(tmp_path)
    start_final(store, top=2, budget=6)
    for _ in range(10):  # draws only: never separated
        game = scheduler.next_game()
        if game is None:
            break
        scheduler.record(game.id, record(game.id, None))
    state = final_json(store.db)
    assert state is not None
    assert (state["state"], state["end_reason"]) == ("done", "budget")
    assert state["games_played"] == 6 and not state["separated"]
    assert state["standings"][0]["tied_with"] == ["bee"] or state["standings"][0]["name"] == "bee"

    start_final(store, top=4, budget=100)
    leased = scheduler.next_game()
    assert leased is not None and leased.kind == "final"
    final = stop_final(store)  # its partner game is dropped; the leased one finishes
    with pytest.raises(LadderError, match="when its 1 game"):
        stop_final(store)
    scheduler.record(leased.id, record(leased.id, 0))
    game = scheduler.next_game()
    assert game is not None and game.kind == "rated"
    state = final_json(store.db)
    assert state is not None
    assert (state["id"], state["state"], state["end_reason"]) == (final, "done", "stopped")
    assert state["games_played"] == 1
    with pytest.raises(LadderError, match="no final is running"):
        stop_final(store)


@pytest.mark.parametrize(
    ("top", "confidence", "budget", "why"),
    [(1, 0.95, 10, "top is"), (3, 1.5, 10, "confidence"), (3, 0.95, 0, "budget is"),
     (4, 0.95, 5, "less than one round")],
)  # fmt: skip
def test_refused_starts(tmp_path: Path, top: int, confidence: float, budget: int, why: str) -> None:
    store, _scheduler = ladder(tmp_path)
    with pytest.raises(LadderError, match=why):
        start_final(store, top, confidence, budget)
    assert final_json(store.db) is None and not store.settings()["frozen"]
    mark = store.change_mark()  # no final: the programme neither writes nor holds play
    programme = FinalProgramme()
    assert not programme.queue_games(store, random.Random(1))
    assert not programme.holds_rated_play(store) and store.change_mark() == mark


def test_a_finalist_disabled_mid_final_plays_no_more(tmp_path: Path) -> None:
    store, scheduler = ladder(tmp_path)
    start_final(store, top=3, budget=60, confidence=0.999)
    play(store, scheduler, 6)
    store.set_bot_status("bee", "disabled", "organiser")
    played = play(store, scheduler, 60)
    assert played and all("bee" not in game[:2] for game in played)
    state = final_json(store.db)
    assert state is not None
    assert {row["name"]: row["status"] for row in state["standings"]}["bee"] == "disabled"
    assert dataclasses.asdict(record(1, 0))["winner"] == 0


def test_a_restart_mid_final_goes_on(tmp_path: Path) -> None:
    store, scheduler = ladder(tmp_path)
    start_final(store, top=3, confidence=0.9, budget=200)
    play(store, scheduler, 5)
    leased = scheduler.next_game()  # in play when the server dies
    assert leased is not None and leased.kind == "final"
    restarted = Scheduler(store, validation_opponent="builtin:greedy", rng=random.Random(8))
    restarted.programmes.append(FinalProgramme())
    assert restarted.recover() >= 1
    first, second = (label.split(".v")[0] for label in (leased.first, leased.second))
    late = record(leased.id, 0 if STRENGTH[first] > STRENGTH[second] else 1)
    assert scheduler.record(leased.id, late)  # the dead run's late answer counts, once
    played = play(store, restarted, 400)
    state = final_json(store.db)
    assert state is not None and (state["state"], state["end_reason"]) == ("done", "separated")
    assert [row["name"] for row in state["standings"]] == ["ace", "bee", "cat"]
    assert state["games_played"] == 5 + 1 + len(played)
    assert len({p["pairs"] for p in state["pairs"]}) == 1  # rounds stayed whole
