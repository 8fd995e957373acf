"""The tournament report: win-rate matrix, ratings, timings, errors; text, CSV, JSON, PNG.

Conventions (also in docs/tournaments.md):

* A game without a winner (a draw, or a run the official runner would abort)
  counts half a win for each side; games the referee itself failed are left out.
* Win rates carry Wilson score 95% intervals.
* A timeout is also counted apart as *overloaded* when the machine's load per
  core (1-minute load average / cores, stored with the game) was above
  ``OVERLOAD``: bots were then waiting for a CPU, and the timeout may be the
  machine's fault rather than the bot's.
* Ratings: OpenSkill's Bradley-Terry model (``BradleyTerryFull``) fitted over all
  games in schedule order (not completion order, so the ratings do not depend
  on the number of workers); the interval is ``mu ± 1.96 sigma``.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import Any

from .store import GameRecord

Z95 = NormalDist().inv_cdf(0.975)
OVERLOAD = 1.0
"""Load per core above which a timeout is reported as happening under overload."""


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (sound even at 0% or 100%)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return (low, high)


@dataclass
class PairStats:
    """One bot's results against one opponent, both seats together."""

    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def score(self) -> float:
        return self.wins + self.draws / 2

    @property
    def rate(self) -> float | None:
        return self.score / self.games if self.games else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.score, self.games)


@dataclass
class BotStats:
    name: str
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    rating: float = 0.0
    rating_low: float = 0.0
    rating_high: float = 0.0
    rating_sigma: float = 0.0
    turns: int = 0
    mean_turn_ms: float = 0.0
    max_turn_ms: float = 0.0
    timeouts: int = 0
    crashes: int = 0
    invalid_outputs: int = 0
    overloaded_timeouts: int = 0
    """Of the timeouts, those that happened while the machine was overloaded."""

    @property
    def rate(self) -> float | None:
        return (self.wins + self.draws / 2) / self.games if self.games else None


@dataclass
class Report:
    games: int
    bots: list[BotStats]
    matrix: dict[str, dict[str, PairStats]]
    referee_errors: int = 0
    settings: dict[str, str] = field(default_factory=dict)

    # --- exports -----------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        def pair(stats: PairStats) -> dict[str, Any]:
            low, high = stats.interval
            return {
                "games": stats.games,
                "wins": stats.wins,
                "losses": stats.losses,
                "draws": stats.draws,
                "win_rate": stats.rate,
                "ci95": [low, high],
            }

        bots = {}
        for bot in self.bots:
            entry = asdict(bot)
            entry.pop("name")
            entry["win_rate"] = bot.rate
            entry["rating_ci95"] = [bot.rating_low, bot.rating_high]
            bots[bot.name] = entry
        return {
            "games": self.games,
            "referee_errors": self.referee_errors,
            "settings": self.settings,
            "rating_model": "openskill BradleyTerryFull (interval: mu ± 1.96 sigma)",
            "bots": bots,
            "matrix": {
                a: {b: pair(stats) for b, stats in row.items()} for a, row in self.matrix.items()
            },
        }

    def write_csv(self, directory: str) -> list[str]:
        os.makedirs(directory, exist_ok=True)
        bots_path = os.path.join(directory, "bots.csv")
        with open(bots_path, "w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(
                ["bot", "games", "wins", "losses", "draws", "win_rate", "rating", "rating_low",
                 "rating_high", "mean_turn_ms", "max_turn_ms", "timeouts", "crashes",
                 "invalid_outputs", "overloaded_timeouts"]
            )  # fmt: skip
            for b in self.bots:
                writer.writerow(
                    [b.name, b.games, b.wins, b.losses, b.draws, _num(b.rate), _num(b.rating),
                     _num(b.rating_low), _num(b.rating_high), _num(b.mean_turn_ms),
                     _num(b.max_turn_ms), b.timeouts, b.crashes, b.invalid_outputs,
                     b.overloaded_timeouts]
                )  # fmt: skip
        matrix_path = os.path.join(directory, "matrix.csv")
        with open(matrix_path, "w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(
                ["bot", "opponent", "games", "wins", "losses", "draws", "win_rate", "low", "high"]
            )
            for a, row in self.matrix.items():
                for b, s in row.items():
                    low, high = s.interval
                    writer.writerow(
                        [a, b, s.games, s.wins, s.losses, s.draws, _num(s.rate), _num(low),
                         _num(high)]
                    )  # fmt: skip
        return [bots_path, matrix_path]

    def write_json(self, directory: str) -> str:
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, "report.json")
        with open(path, "w", encoding="utf-8") as out:
            json.dump(self.to_json(), out, indent=2)
            out.write("\n")
        return path

    def write_pictures(self, directory: str) -> list[str]:
        """matrix.png (heatmap) and ratings.png (ratings with intervals)."""
        from .plots import plot_matrix, plot_ratings

        os.makedirs(directory, exist_ok=True)
        matrix_path = os.path.join(directory, "matrix.png")
        ratings_path = os.path.join(directory, "ratings.png")
        plot_matrix(self, matrix_path)
        plot_ratings(self, ratings_path)
        return [matrix_path, ratings_path]

    # --- text ----------------------------------------------------------------------

    def text(self) -> str:
        names = [b.name for b in self.bots]
        width = max([len(n) for n in names] + [8])
        lines = [f"{self.games} games" + (
            f" ({self.referee_errors} referee errors, not counted)" if self.referee_errors else ""
        )]  # fmt: skip
        lines.append("")
        lines.append(
            f"{'bot':<{width}}  games  wins  win rate [95% CI]     rating [95% CI]        "
            "mean ms   max ms  timeouts crashes invalid"
        )
        for b in self.bots:
            rate = "    -" if b.rate is None else f"{b.rate:6.1%}"
            low, high = wilson_interval(b.wins + b.draws / 2, b.games)
            lines.append(
                f"{b.name:<{width}}  {b.games:5d} {b.wins:5d}  {rate} [{low:4.0%}, {high:4.0%}]"
                f"  {b.rating:6.2f} [{b.rating_low:6.2f}, {b.rating_high:6.2f}]"
                f"  {b.mean_turn_ms:8.1f} {b.max_turn_ms:8.1f}  {b.timeouts:8d} {b.crashes:7d}"
                f" {b.invalid_outputs:7d}"
            )
        overloaded = [b for b in self.bots if b.overloaded_timeouts]
        if overloaded:
            counts = ", ".join(f"{b.name} {b.overloaded_timeouts}" for b in overloaded)
            lines.append(
                f"timeouts while the machine was overloaded (load per core > {OVERLOAD:g}): "
                f"{counts} (possibly the machine's fault, not the bot's)"
            )
        lines.append("")
        lines.append("win rate of the row against the column (both seats) [95% CI]")
        cell = 20
        lines.append(" " * width + "".join(f"{n[: cell - 1]:>{cell}}" for n in names))
        for a in names:
            cells = []
            for b in names:
                stats = self.matrix.get(a, {}).get(b)
                if a == b or stats is None or not stats.games:
                    cells.append(f"{'-':>{cell}}")
                    continue
                low, high = stats.interval
                cells.append(f"{stats.rate:.0%} [{low:.0%},{high:.0%}]".rjust(cell))
            lines.append(f"{a:<{width}}" + "".join(cells))
        return "\n".join(lines)


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


_RANKS: dict[int | None, list[int]] = {None: [1, 1], 0: [1, 2], 1: [2, 1]}
"""OpenSkill ranks (1 = best) of the two seats by winning seat; equal ranks = a tie."""


def _ratings(names: Sequence[str], records: Sequence[GameRecord]) -> dict[str, tuple[float, float]]:
    """(mu, sigma) per bot from OpenSkill's Bradley-Terry model, games in the given order."""
    from openskill.models import BradleyTerryFull

    model = BradleyTerryFull()
    ratings = {name: model.rating(name=name) for name in names}
    for record in records:
        if record.result == "error":
            continue
        first, second = ratings[record.first], ratings[record.second]
        ranks = _RANKS[record.winner]
        [[new_first], [new_second]] = model.rate([[first], [second]], ranks=ranks)
        ratings[record.first], ratings[record.second] = new_first, new_second
    return {name: (r.mu, r.sigma) for name, r in ratings.items()}


def build_report(
    bots: Sequence[str], records: Sequence[GameRecord], settings: Mapping[str, str] | None = None
) -> Report:
    """The report of ``records`` (in schedule order) among ``bots`` (in display order)."""
    names = list(bots)
    for record in records:
        for name in (record.first, record.second):
            if name not in names:
                names.append(name)
    stats = {name: BotStats(name) for name in names}
    matrix = {a: {b: PairStats() for b in names if b != a} for a in names}
    turn_ms_total = dict.fromkeys(names, 0.0)
    counted = [r for r in records if r.result != "error"]
    for record in counted:
        seats = (record.first, record.second)
        for seat, name in enumerate(seats):
            other = seats[1 - seat]
            bot, pair = stats[name], matrix[name][other]
            bot.games += 1
            pair.games += 1
            if record.winner is None:
                bot.draws += 1
                pair.draws += 1
            elif record.winner == seat:
                bot.wins += 1
                pair.wins += 1
            else:
                bot.losses += 1
                pair.losses += 1
            turns = record.first_turns if seat == 0 else record.second_turns
            mean_ms = record.first_mean_ms if seat == 0 else record.second_mean_ms
            max_ms = record.first_max_ms if seat == 0 else record.second_max_ms
            bot.turns += turns
            turn_ms_total[name] += mean_ms * turns
            bot.max_turn_ms = max(bot.max_turn_ms, max_ms)
            if record.error_seat == seat:
                if record.error_kind == "timeout":
                    bot.timeouts += 1
                    if record.load is not None and record.load > OVERLOAD:
                        bot.overloaded_timeouts += 1
                elif record.error_kind == "crash":
                    bot.crashes += 1
                elif record.error_kind == "invalid":
                    bot.invalid_outputs += 1
    for name, bot in stats.items():
        bot.mean_turn_ms = turn_ms_total[name] / bot.turns if bot.turns else 0.0
    for name, (mu, sigma) in _ratings(names, counted).items():
        bot = stats[name]
        bot.rating, bot.rating_sigma = mu, sigma
        bot.rating_low, bot.rating_high = mu - Z95 * sigma, mu + Z95 * sigma
    ordered = sorted(stats.values(), key=lambda b: (-b.rating, b.name))
    return Report(
        games=len(counted),
        bots=ordered,
        matrix=matrix,
        referee_errors=len(records) - len(counted),
        settings=dict(settings or {}),
    )
