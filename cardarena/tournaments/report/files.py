"""The report as files: bots.csv, matrix.csv, games.csv and report.json."""

from __future__ import annotations

import csv
import json
import math
import os

from .model import RATING_MODEL, Report


def write_csv(report: Report, directory: str) -> list[str]:
    os.makedirs(directory, exist_ok=True)
    bots_path = os.path.join(directory, "bots.csv")
    with open(bots_path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["bot", "games", "wins", "losses", "draws", "win_rate", "rating", "rating_low",
             "rating_high", "mean_turn_ms", "max_turn_ms", "timeouts", "crashes",
             "invalid_outputs", "out_of_memory", "overloaded_timeouts", "rating_model", "errors",
             "lost_by"]
        )  # fmt: skip
        for b in report.bots:
            writer.writerow(
                [b.name, b.games, b.wins, b.losses, b.draws, _num(b.rate), _num(b.rating),
                 _num(b.rating_low), _num(b.rating_high), _num(b.mean_turn_ms),
                 _num(b.max_turn_ms), b.timeouts, b.crashes, b.invalid_outputs,
                 b.out_of_memory, b.overloaded_timeouts, RATING_MODEL, _kinds(b.errors),
                 _kinds(b.lost_by)]
            )  # fmt: skip
    matrix_path = os.path.join(directory, "matrix.csv")
    with open(matrix_path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(
            ["bot", "opponent", "games", "wins", "losses", "draws", "win_rate", "low", "high"]
        )
        for a, row in report.matrix.items():
            for b, s in row.items():
                low, high = s.interval
                writer.writerow(
                    [a, b, s.games, s.wins, s.losses, s.draws, _num(s.rate), _num(low),
                     _num(high)]
                )  # fmt: skip
    games_path = os.path.join(directory, "games.csv")
    with open(games_path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["game", "first", "second", "round", "winner", "loser", "kind", "cause",
                         "turns", "counted", "error"])  # fmt: skip
        for g in report.game_lines:
            writer.writerow(
                ["" if g.number is None else g.number, g.first, g.second, g.round + 1,
                 g.winner or "", g.loser or "", g.kind, g.cause, g.turns, int(g.counted),
                 int(g.charged)]
            )  # fmt: skip
    return [bots_path, matrix_path, games_path]


def write_json(report: Report, directory: str) -> str:
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "report.json")
    with open(path, "w", encoding="utf-8") as out:
        json.dump(report.to_json(), out, indent=2)
        out.write("\n")
    return path


def _kinds(errors: dict[str, int]) -> str:
    """Every kind with its count: ``crash=1;empty line=4``."""
    return ";".join(f"{kind}={n}" for kind, n in sorted(errors.items()))


def _num(value: float | None) -> str:
    """A number as text; none, or not finite (a bot without games has no interval): empty."""
    return "" if value is None or not math.isfinite(value) else f"{value:.6g}"
