"""The report as plain text: the bots table, why each bot lost, the win-rate matrix and
the games with their causes."""

from __future__ import annotations

import math

from .model import RATING_MODEL, Report, wilson_interval

LISTED_GAMES = 40
"""At most this many games are listed with their causes; past it, only the games a bot
lost by an error (the rest are in games.csv, report.json and the HTML report)."""


def report_text(report: Report, open_game: str | None = None) -> str:
    """The report as a plain-text table (what ``locm report`` prints); ``open_game``: the
    command that opens game N in a viewer (``locm view --db T.db --game N --open``)."""
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
    losing = [b for b in report.bots if b.losses]
    if losing:
        lines.append("why each bot lost (the error charged, else how the game ended):")
        lines += [f"  {b.name:<{width}}  {b.losses_text}" for b in losing]
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
    lines += _game_list(report, open_game)
    return "\n".join(lines)


def _game_list(report: Report, open_game: str | None) -> list[str]:
    """The games with why each ended, newest first: all of them up to LISTED_GAMES, else
    the ones a bot lost by an error (a crash, a timeout, an invalid answer...)."""
    games = report.game_lines
    if not games:
        return []
    title = "games, newest first, and why each ended"
    if len(games) > LISTED_GAMES:
        games = [g for g in games if g.charged]
        title = "games lost by an error, newest first"
    shown_games = games[:LISTED_GAMES]
    lines = ["", title + (f" (open one: {open_game})" if open_game else "")]
    for g in shown_games:
        number = "" if g.number is None else f"#{g.number}"
        lines.append(f"{number:>6}  {g.first} vs {g.second}: {g.why}")
    left = len(report.game_lines) - len(shown_games)
    if left:
        lines.append(f"      ... {left} more: every game's cause is in games.csv, report.json "
                     "and the HTML report")  # fmt: skip
    return lines


def _rating(rating: float, low: float, high: float) -> str:
    """``rating [low, high]`` in Elo points, a fixed width; a bot without games: ``-``."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{'-':>7} {'':18}"
    return f"{rating:7.1f} [{low:7.1f}, {high:7.1f}]"
