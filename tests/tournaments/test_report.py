"""The report's numbers on fixed results, against values computed by hand."""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import replace

import pytest

from cardarena.tournaments.report import build_report, wilson_interval
from cardarena.tournaments.report.files import write_csv
from cardarena.tournaments.report.model import with_causes
from cardarena.tournaments.report.text import LISTED_GAMES, report_text
from cardarena.tournaments.store import GameRecord

Z = 1.959963984540054  # the 97.5% quantile of the standard normal distribution


def record(
    first: str,
    second: str,
    round_index: int,
    winner: int | None,
    *,
    result: str = "win",
    turns: tuple[tuple[int, float, float], tuple[int, float, float]] = ((0, 0, 0), (0, 0, 0)),
    error_seat: int | None = None,
    error_kind: str | None = None,
) -> GameRecord:
    (t0, mean0, max0), (t1, mean1, max1) = turns
    return GameRecord(
        key=f"{first}\t{second}\t{round_index}", first=first, second=second, round=round_index,
        seed=round_index, winner=winner, result=result, end_reason="HEALTH",
        error_seat=error_seat, error_kind=error_kind, detail=None, turns=t0 + t1,
        first_turns=t0, first_mean_ms=mean0, first_max_ms=max0,
        second_turns=t1, second_mean_ms=mean1, second_max_ms=max1,
        duration_s=0.1, replay="locm play ...",
    )  # fmt: skip


RECORDS = [
    # 1. A beats B (A first).
    record("A", "B", 0, 0, turns=((2, 10, 15), (2, 20, 30))),
    # 2. A beats B (A second).
    record("B", "A", 0, 1, turns=((3, 20, 25), (1, 40, 40))),
    # 3. A and C: no winner.
    record("A", "C", 0, None, result="draw", turns=((1, 10, 10), (1, 5, 5))),
    # 4. C beats A, because A timed out.
    record("C", "A", 0, 0, turns=((2, 5, 6), (2, 100, 200)), error_seat=1, error_kind="timeout"),
    # 5. C beats B, because B crashed before its first battle turn.
    record("B", "C", 0, 1, turns=((0, 0, 0), (1, 1, 1)), error_seat=0, error_kind="crash"),
    # 6. The referee failed: left out of everything but the referee-error count.
    record("C", "B", 0, None, result="error", error_kind="referee"),
]


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    return build_report(["A", "B", "C"], RECORDS)


def test_counts_win_rates_and_errors(report) -> None:  # type: ignore[no-untyped-def]
    bots = {b.name: b for b in report.bots}
    assert report.games == 5 and report.referee_errors == 1
    # A: games 1-4 -> won 1 and 2, drew 3, lost 4 -> (2 + 0.5) / 4.
    a = bots["A"]
    assert (a.games, a.wins, a.losses, a.draws) == (4, 2, 1, 1)
    assert a.rate == pytest.approx(0.625)
    assert (a.timeouts, a.crashes, a.invalid_outputs) == (1, 0, 0)
    # B: games 1, 2, 5, all lost; one crash.
    b = bots["B"]
    assert (b.games, b.wins, b.losses, b.draws, b.crashes) == (3, 0, 3, 0, 1)
    # C: games 3, 4, 5 -> drew 3, won 4 and 5 -> 2.5 / 3.
    c = bots["C"]
    assert (c.games, c.wins, c.draws) == (3, 2, 1)
    assert c.rate == pytest.approx(2.5 / 3)


def test_turn_times(report) -> None:  # type: ignore[no-untyped-def]
    bots = {b.name: b for b in report.bots}
    # A: (2*10 + 1*40 + 1*10 + 2*100) / (2+1+1+2) = 270 / 6 = 45 ms; max 200 (game 4).
    assert bots["A"].mean_turn_ms == pytest.approx(45.0)
    assert bots["A"].max_turn_ms == 200
    # B: (2*20 + 3*20 + 0) / 5 = 20 ms; max 30.  C: (5 + 2*5 + 1) / 4 = 4 ms; max 6.
    assert bots["B"].mean_turn_ms == pytest.approx(20.0)
    assert bots["B"].max_turn_ms == 30
    assert bots["C"].mean_turn_ms == pytest.approx(4.0)
    assert bots["C"].max_turn_ms == 6


def test_matrix_and_wilson_intervals(report) -> None:  # type: ignore[no-untyped-def]
    ab = report.matrix["A"]["B"]
    assert (ab.games, ab.wins, ab.rate) == (2, 2, 1.0)
    # Wilson, 2 of 2: denominator 1 + z²/2 = 2.9207294; centre (1 + z²/4) / 2.9207294
    # = 0.6711901; half-width (z²/4) / 2.9207294 = 0.3288099 -> [0.3423802, 1].
    low, high = ab.interval
    assert low == pytest.approx(0.3423802, abs=1e-6) and high == 1.0
    ac = report.matrix["A"]["C"]
    # A vs C: a draw and a loss -> 0.5 / 2 = 25%.  Wilson at p = 0.25, n = 2: centre
    # (0.25 + 0.9603647) / 2.9207294 = 0.4144050; half-width
    # z * sqrt(0.25 * 0.75 / 2 + z² / 16) / 2.9207294 = 1.959964 * 0.5777899 / 2.9207294
    # = 0.3877276 -> [0.0266773, 0.8021325].
    assert ac.rate == pytest.approx(0.25)
    low, high = ac.interval
    assert low == pytest.approx(0.0266773, abs=2e-6)
    assert high == pytest.approx(0.8021325, abs=2e-6)
    # The mirror cell: C's 1.5 of 2.
    assert report.matrix["C"]["A"].rate == pytest.approx(0.75)


def test_wilson_edge_cases() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(0, 10)
    # 0 of 10: upper bound z² / (n + z²) = 3.8414588 / 13.8414588 = 0.2775328.
    assert low == 0.0 and high == pytest.approx(0.2775328, abs=1e-6)


def test_rating_of_one_game_by_hand() -> None:
    # X beat Y once; with the prior's virtual draw X has 1.5 of 2, so the fitted
    # probability is 0.75: r_X - r_Y = 400 log10(0.75 / 0.25) = 190.848502, centred +-95.42.
    # Fisher information w = n p (1 - p) (ln 10 / 400)^2 with n = 2; for two centred
    # ratings sigma^2 = 1 / (4 w).
    single = build_report(["X", "Y"], [record("X", "Y", 0, 0)])
    bots = {b.name: b for b in single.bots}
    half = 200 * math.log10(3)
    assert half == pytest.approx(95.424251, abs=1e-6)
    assert bots["X"].rating == pytest.approx(half, abs=1e-6)
    assert bots["Y"].rating == pytest.approx(-half, abs=1e-6)
    w = 2 * 0.75 * 0.25 * (math.log(10) / 400) ** 2
    sigma = 1 / math.sqrt(4 * w)
    assert sigma == pytest.approx(141.8400, abs=1e-3)
    assert bots["X"].rating_sigma == pytest.approx(sigma, rel=1e-6)
    assert bots["X"].rating_low == pytest.approx(half - Z * sigma, rel=1e-6)
    assert [b.name for b in single.bots] == ["X", "Y"]  # best first


def _games(plan: list[tuple[str, str, int, int]]) -> list[GameRecord]:
    """Records of ``plan``: (a, b, a's wins, b's wins), seats alternating."""
    records = []
    for a, b, a_wins, b_wins in plan:
        winners = [a] * a_wins + [b] * b_wins
        for k, winner in enumerate(winners):
            first, second = (a, b) if k % 2 == 0 else (b, a)
            records.append(record(first, second, k, 0 if winner == first else 1))
    return records


# Three bots, every pairing 8 games: search beat greedy 5 of 8, and both won 11 of 16.
EQUAL_TOTALS = _games([("greedy", "random", 8, 0), ("search", "random", 6, 2),
                       ("search", "greedy", 5, 3)])  # fmt: skip


def test_ratings_do_not_depend_on_the_order_of_the_games() -> None:
    import random

    games = _games([("A", "B", 5, 3), ("B", "C", 6, 2), ("A", "C", 4, 4), ("C", "D", 7, 1),
                    ("A", "D", 8, 0)])  # fmt: skip
    reference = build_report(["A", "B", "C", "D"], games)
    shuffle = random.Random(7)
    for _ in range(5):
        shuffled = games[:]
        shuffle.shuffle(shuffled)
        again = build_report(["A", "B", "C", "D"], shuffled)
        assert [(b.name, b.rating, b.rating_sigma) for b in again.bots] == [
            (b.name, b.rating, b.rating_sigma) for b in reference.bots
        ]


def test_the_fit_is_the_maximum_likelihood() -> None:
    # At the maximum, each bot's expected score equals its score (with the prior's
    # virtual draw per pair that met), and the ratings are centred.
    games = _games([("A", "B", 5, 3), ("B", "C", 6, 2), ("A", "C", 4, 4), ("C", "D", 7, 1)])
    report = build_report(["A", "B", "C", "D"], games)
    rating = {b.name: b.rating for b in report.bots}
    assert sum(rating.values()) == pytest.approx(0, abs=1e-6)
    for bot in report.bots:
        expected = actual = 0.0
        for other, pair in report.matrix[bot.name].items():
            if not pair.games:
                continue
            p = 1 / (1 + 10 ** ((rating[other] - rating[bot.name]) / 400))
            expected += (pair.games + 1) * p
            actual += pair.score + 0.5
        assert expected == pytest.approx(actual, abs=1e-6)


def test_equal_totals_tie_and_head_to_head_orders_them() -> None:
    report = build_report(["random", "greedy", "search"], EQUAL_TOTALS)
    bots = {b.name: b for b in report.bots}
    assert bots["search"].wins == bots["greedy"].wins == 11
    # The model's ratings depend only on the totals here: a tie, not greedy ahead.
    assert bots["search"].rating == pytest.approx(bots["greedy"].rating, abs=1e-6)
    assert [b.name for b in report.bots] == ["search", "greedy", "random"]
    assert "equal ratings ordered by the games between them" in report_text(report)
    # Any order of the games: the same ranking.
    for reordered in (EQUAL_TOTALS[::-1], sorted(EQUAL_TOTALS, key=lambda r: r.winner or 0)):
        again = build_report(["random", "greedy", "search"], reordered)
        assert [b.name for b in again.bots] == ["search", "greedy", "random"]
    # One more win for greedy against random than search had: greedy is ahead.
    more = _games([("greedy", "random", 8, 0), ("search", "random", 5, 3),
                   ("search", "greedy", 5, 3)])  # fmt: skip
    assert build_report(["search", "greedy", "random"], more).bots[0].name == "greedy"


def test_a_bot_without_games_has_no_interval() -> None:
    report = build_report(["A", "B", "C"], [record("A", "B", 0, 0)])
    c = next(b for b in report.bots if b.name == "C")
    assert c.rating == 0 and math.isinf(c.rating_sigma)
    data = report.to_json()
    assert data["bots"]["C"]["rating_ci95"] == [None, None]
    assert [b.name for b in report.bots] == ["A", "B", "C"]  # no games yet: last
    row = next(line for line in report_text(report).splitlines() if line.startswith("C "))
    assert row.split()[1:4] == ["0", "0", "-"] and row.count("[") == 1  # no rating yet
    json.dumps(data, allow_nan=False)
    assert "Bradley-Terry" in data["rating_model"]


def test_exports(report, tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = report.to_json()
    assert data["games"] == 5
    assert data["bots"]["A"]["wins"] == 2 and data["bots"]["A"]["games"] == 4
    assert set(data["bots"]["A"]) >= {"games", "wins", "rating", "rating_ci95", "timeouts"}
    json.loads(json.dumps(data))
    bots_csv, matrix_csv, games_csv = write_csv(report, str(tmp_path))
    with open(bots_csv, encoding="utf-8") as bots_file:
        rows = list(csv.DictReader(bots_file))
    assert {row["bot"]: int(row["wins"]) for row in rows} == {"A": 2, "B": 0, "C": 2}
    assert all("Bradley-Terry" in row["rating_model"] for row in rows)
    with open(matrix_csv, encoding="utf-8") as matrix_file:
        cells = list(csv.DictReader(matrix_file))
    assert len(cells) == 6  # every ordered pair
    with open(games_csv, encoding="utf-8") as games_file:
        games = list(csv.DictReader(games_file))
    assert len(games) == 6 and {row["bot"] for row in rows} == {"A", "B", "C"}
    assert [row["lost_by"] for row in rows if row["bot"] == "B"] == ["crash=1;health=2"]
    text = report_text(report)
    assert "5 games" in text and "1 referee errors" in text


def test_an_error_charged_to_a_seat_is_its_loss_whatever_its_kind() -> None:
    """A sore loser's empty line (the official runner aborts: no winner stored by older
    versions), and a kind the report has never heard of, are the charged bot's losses;
    each kind is counted, and the rating follows the score."""
    sore = [
        record("S", "G", r, None, result="aborted", error_seat=0, error_kind="empty line")
        for r in range(3)
    ] + [
        record("G", "S", 0, None, result="aborted", error_seat=1, error_kind="empty line"),
        record("G", "S", 1, 0, error_seat=1, error_kind="out of memory"),
        record("G", "S", 2, None, result="aborted"),  # no one charged (e.g. the time quota)
    ]
    report = build_report(["S", "G"], sore)
    s = next(b for b in report.bots if b.name == "S")
    g = next(b for b in report.bots if b.name == "G")
    assert (s.games, s.wins, s.losses, s.draws) == (6, 0, 5, 1)
    assert s.rate == pytest.approx(0.5 / 6)
    assert s.errors == {"empty line": 4, "out of memory": 1}
    assert (s.timeouts, s.crashes, s.invalid_outputs) == (0, 0, 0)
    assert g.errors == {} and g.rate == pytest.approx(5.5 / 6)
    assert s.rating < 0 < g.rating
    text = report_text(report)
    assert "errors charged, each a lost game: S empty line 4, out of memory 1" in text
    assert report.to_json()["bots"]["S"]["errors"] == {"empty line": 4, "out of memory": 1}


def test_why_each_game_ended_and_each_bot_lost() -> None:
    """Each loss is counted under its error kind, else its end reason; a game's cause is the
    game's words with the loser in front, and a game stored without one (an older database)
    gets the game's words for it, or generic ones from its columns."""
    games = [
        *[replace(RECORDS[0], key=f"h{n}", round=n, cause="lost on health at turn 9")
          for n in range(3)],
        replace(RECORDS[3], cause="timed out at turn 4"),
        replace(RECORDS[4], cause="crashed at turn 6: ZeroDivisionError: division by zero"),
        replace(RECORDS[2], cause=None, detail=None),  # A-C draw, stored before causes
        RECORDS[5],  # the referee failed
    ]  # fmt: skip
    numbers = {record.key: number for number, record in enumerate(games, start=1)}
    derived = with_causes(games, lambda record: f"derived {record.end_reason}")
    assert [r.cause for r in derived[5:]] == ["derived HEALTH", "derived HEALTH"]
    report = build_report(["A", "B", "C"], derived, numbers=numbers)
    b = next(bot for bot in report.bots if bot.name == "B")
    a = next(bot for bot in report.bots if bot.name == "A")
    assert b.lost_by == {"health": 3, "crash": 1}
    assert b.losses_text == "lost 4: health 3, crash 1"
    assert a.losses_text == "lost 1: timeout 1"
    lines = report.game_lines
    assert [line.number for line in lines] == [7, 6, 5, 4, 3, 2, 1]  # newest first
    assert lines[2].why == "B crashed at turn 6: ZeroDivisionError: division by zero"
    assert lines[2].charged and lines[3].charged and not lines[4].charged
    assert lines[1].why == "derived HEALTH" and lines[1].winner is None  # the draw
    assert not lines[0].counted
    text = report_text(report, "locm view --db t.db --game N --open")
    assert re.search(r"^  B +lost 4: health 3, crash 1$", text, re.MULTILINE)
    assert "(open one: locm view --db t.db --game N --open)" in text
    assert "    #5  B vs C: B crashed at turn 6: ZeroDivisionError: division by zero" in text
    assert "    #3  A vs B: B lost on health at turn 9" in text
    listed = report.to_json()["game_list"]
    assert listed[3] == {
        "number": 4, "first": "C", "second": "A", "round": 1, "winner": "C", "loser": "A",
        "kind": "timeout", "cause": "timed out at turn 4", "why": "A timed out at turn 4",
        "turns": 4, "counted": True, "error": True,
    }  # fmt: skip
    # Without the game's words: generic ones from the stored columns.
    plain = build_report(["A", "B", "C"], with_causes(games, None))
    assert plain.game_lines[1].why == "health after 2 turns"
    assert plain.game_lines[0].why == "the referee failed"


def test_a_long_game_list_keeps_the_games_lost_by_an_error() -> None:
    games = [replace(RECORDS[0], key=f"g{n}", round=n, cause="lost on health at turn 9")
             for n in range(LISTED_GAMES)]  # fmt: skip
    games.append(replace(RECORDS[4], cause="crashed at turn 2"))
    text = report_text(build_report(["A", "B", "C"], games))
    listed = text.split("games lost by an error, newest first\n", 1)[1].splitlines()
    assert listed == [
        "        B vs C: B crashed at turn 2",
        f"      ... {LISTED_GAMES} more: every game's cause is in games.csv, report.json and "
        "the HTML report",
    ]
