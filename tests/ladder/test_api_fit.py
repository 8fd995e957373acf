"""The server's board fit: computed again in the background, at most once per interval, so
that no page waits for it; the board shows the previous fit meanwhile."""

from __future__ import annotations

from pathlib import Path

import pytest

from cardarena.ladder.api import StoreData
from cardarena.ladder.ratings import board_fit, board_fit_counts
from tests.ladder.test_scheduler import active, setup
from tests.ladder.test_service import wait_for
from tests.ladder.test_store import record


def test_a_changed_board_s_fit_comes_from_the_background(tmp_path: Path) -> None:
    store, scheduler, people = setup(tmp_path)
    for person, name in zip(people, ("a1", "b1", "c1"), strict=True):
        active(store, person, name)

    def play(games: int) -> None:
        for _ in range(games):
            game = scheduler.next_game()
            assert game is not None
            store.finish(game.id, record(0))

    def fitted_games(fit: dict) -> int:
        return sum(row.games for row in fit.values()) // 2

    play(2)
    data = StoreData(store, refresh_s=0.05)
    first = data.fit()  # none yet: computed at once
    assert fitted_games(first) == 2
    play(2)
    assert data.fit() is first  # the previous fit at once; the new one is being computed
    wait_for(lambda: fitted_games(data.fit()) == 4, "the fit of all 4 games")
    assert data.fit() is data.fit()  # unchanged store: the same fit, nothing computed
    immediate = StoreData(store)  # refresh_s 0: always the current fit
    play(2)
    assert fitted_games(immediate.fit()) == 6
    store.close()


def test_the_fit_counted_by_pair_is_the_fit_game_by_game(tmp_path: Path) -> None:
    store, scheduler, people = setup(tmp_path)
    for person, name in zip(people, ("a1", "b1", "c1"), strict=True):
        active(store, person, name)
    for index in range(24):
        game = scheduler.next_game()
        assert game is not None
        store.finish(game.id, record((None, 0, 1, 1)[index % 4]))
    names, counted = store.rated_counts()
    assert names == store.rated_results()[0] and len(counted) == 3
    assert board_fit_counts(names, counted) == board_fit(*store.rated_results())
    with pytest.raises(ValueError, match="between 0 and 3"):
        board_fit_counts(["a", "b"], [("a", "b", 3.5, 3)])
    store.close()
