"""The report as plain text: the bots table and the win-rate matrix."""

from __future__ import annotations

import math

from .model import RATING_MODEL, Report, wilson_interval


def report_text(report: Report) -> str:
    """The report as a plain-text table (what ``locm report`` prints)."""
    names = [b.name for b in report.bots]
    width = max([len(n) for n in names] + [8])
    lines = [f"{report.games} games" + (
        f" ({report.referee_errors} referee errors, not counted)" if report.referee_errors else ""
    )]  # fmt: skip
    lines.append("")
    lines.append(
        f"{'bot':<{width}}  games  wins  win rate [95% CI]     rating [95% CI]           "
        "mean ms   max ms  timeouts crashes invalid  oom"
    )
    for b in report.bots:
        rate = "    -" if b.rate is None else f"{b.rate:6.1%}"
        low, high = wilson_interval(b.wins + b.draws / 2, b.games)
        lines.append(
            f"{b.name:<{width}}  {b.games:5d} {b.wins:5d}  {rate} [{low:4.0%}, {high:4.0%}]"
            f"  {_rating(b.rating, b.rating_low, b.rating_high)}"
            f"  {b.mean_turn_ms:8.1f} {b.max_turn_ms:8.1f}  {b.timeouts:8d} {b.crashes:7d}"
            f" {b.invalid_outputs:7d} {b.out_of_memory:4d}"
        )
    lines.append(f"ratings: {RATING_MODEL}; equal ratings ordered by the games between them")
    charged = [b for b in report.bots if b.errors]
    if charged:
        lines.append("errors charged, each a lost game: " + "; ".join(
            f"{b.name} " + ", ".join(f"{kind} {n}" for kind, n in sorted(b.errors.items()))
            for b in charged
        ))  # fmt: skip
    overloaded = [b for b in report.bots if b.overloaded_timeouts]
    if overloaded:
        counts = ", ".join(f"{b.name} {b.overloaded_timeouts}" for b in overloaded)
        lines.append(
            f"timeouts while the machine starved the bot of CPU: {counts} "
            "(the machine's fault: --retry-errors plays them again)"
        )
    lines.append("")
    lines.append("win rate of the row against the column (both seats) [95% CI]")
    cell = 20
    lines.append(" " * width + "".join(f"{n[: cell - 1]:>{cell}}" for n in names))
    for a in names:
        cells = []
        for b in names:
            stats = report.matrix.get(a, {}).get(b)
            if a == b or stats is None or not stats.games:
                cells.append(f"{'-':>{cell}}")
                continue
            low, high = stats.interval
            cells.append(f"{stats.rate:.0%} [{low:.0%},{high:.0%}]".rjust(cell))
        lines.append(f"{a:<{width}}" + "".join(cells))
    return "\n".join(lines)


def _rating(rating: float, low: float, high: float) -> str:
    """``rating [low, high]`` in Elo points, a fixed width; a bot without games: ``-``."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{'-':>7} {'':18}"
    return f"{rating:7.1f} [{low:7.1f}, {high:7.1f}]"
