"""The report's numbers on fixed results, against values computed by hand."""

from __future__ import annotations

import csv
import json
import math

import pytest

from cardarena.tournaments.report import build_report, wilson_interval
from cardarena.tournaments.report.files import write_csv
from cardarena.tournaments.report.text import report_text
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
    # OpenSkill Bradley-Terry (full pairing), defaults mu 25, sigma 25/3, beta 25/6, and
    # the dynamics term tau = 25/300 added first: s² = (25/3)² + (25/300)² = 69.451389.
    # c = sqrt(2 s² + 2 beta²) = sqrt(138.902778 + 34.722222) = 13.176685; p = 1/2.
    # Winner: mu + s²/c * (1 - p) = 25 + 69.451389 / 13.176685 / 2 = 27.635390;
    # eta = (s / c) * s²/c² * p(1-p) = 0.632467 * 0.400000 * 0.25 = 0.0632467 (to 6 places),
    # sigma' = s * sqrt(1 - eta) = 8.333750 * 0.967860 = 8.065902 (the loser: mirror image).
    single = build_report(["X", "Y"], [record("X", "Y", 0, 0)])
    bots = {b.name: b for b in single.bots}
    s2 = (25 / 3) ** 2 + (25 / 300) ** 2
    c = math.sqrt(2 * s2 + 2 * (25 / 6) ** 2)
    expected_mu = 25 + s2 / c * 0.5
    assert expected_mu == pytest.approx(27.635390, abs=1e-6)
    assert bots["X"].rating == pytest.approx(expected_mu, abs=1e-9)
    assert bots["Y"].rating == pytest.approx(50 - expected_mu, abs=1e-9)
    eta = math.sqrt(s2) / c * s2 / c**2 * 0.25
    sigma = math.sqrt(s2) * math.sqrt(1 - eta)
    assert sigma == pytest.approx(8.065902, abs=1e-5)
    assert bots["X"].rating_sigma == pytest.approx(sigma, abs=1e-9)
    assert bots["X"].rating_low == pytest.approx(expected_mu - Z * sigma, abs=1e-9)
    assert [b.name for b in single.bots] == ["X", "Y"]  # best first


def test_ratings_do_not_depend_on_completion_order() -> None:
    shuffled = [RECORDS[i] for i in (4, 1, 5, 0, 3, 2)]
    ordered = sorted(shuffled, key=lambda r: (r.round, r.first, r.second))
    a = build_report(["A", "B", "C"], ordered)
    b = build_report(["A", "B", "C"], sorted(RECORDS, key=lambda r: (r.round, r.first, r.second)))
    assert [(x.name, x.rating) for x in a.bots] == [(x.name, x.rating) for x in b.bots]


def test_exports(report, tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = report.to_json()
    assert data["games"] == 5
    assert data["bots"]["A"]["wins"] == 2 and data["bots"]["A"]["games"] == 4
    assert set(data["bots"]["A"]) >= {"games", "wins", "rating", "rating_ci95", "timeouts"}
    json.loads(json.dumps(data))
    bots_csv, matrix_csv = write_csv(report, str(tmp_path))
    with open(bots_csv, encoding="utf-8") as bots_file:
        rows = list(csv.DictReader(bots_file))
    assert {row["bot"]: int(row["wins"]) for row in rows} == {"A": 2, "B": 0, "C": 2}
    with open(matrix_csv, encoding="utf-8") as matrix_file:
        cells = list(csv.DictReader(matrix_file))
    assert len(cells) == 6  # every ordered pair
    text = report_text(report)
    assert "5 games" in text and "1 referee errors" in text
