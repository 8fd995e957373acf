"""The tournament report as one HTML page (``locm report --html DIR``, ``locm serve``).

The page (``index.html``) holds the same numbers as the text report — ratings, win
matrix with 95% intervals, turn times, errors, why each bot lost, the two PNG pictures —
and the list of games with why each ended, each linked to ``games/N.html`` (N: the
game's number in the database): the game's own viewer page, which the game provides
(LOCM: :mod:`cardarena.locm.viewer`); the cause links where the game says, the frame the
game ended on (LOCM: ``games/N.html#frame=F``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from ...pages import asset, content_policy, render, trusted
from ..store import GameRecord, reading
from .model import (
    RATING_MODEL,
    Describe,
    GameLine,
    Report,
    build_report,
    scored_winner,
    wilson_interval,
    with_causes,
)

PICTURES = ("matrix.png", "ratings.png")
Row = dict[str, object]
"""One row of a table, as the template reads it."""


@dataclass
class Snapshot:
    """What a report page needs from the database, read in one go."""

    report: Report
    records: list[GameRecord]
    numbers: dict[str, int]
    settings: dict[str, str]

    @property
    def version_key(self) -> tuple[int, int]:
        """Changes whenever a game is added or replaced: (count, last game number)."""
        return len(self.records), max(self.numbers.values(), default=0)


def read_snapshot(db: str, describe: Describe | None = None) -> Snapshot:
    """Everything the report page shows, from a read-only database; ``describe`` gives
    the games stored without a cause (an older database) the game's words for it."""
    with reading(db) as store:
        records = with_causes(store.records(), describe)
        bots = list(store.bots())
        settings = store.meta()
        numbers = store.game_numbers()
    return Snapshot(build_report(bots, records, settings, numbers), records, numbers, settings)


def read_change_mark(db: str) -> tuple[int, int]:
    """The database's :meth:`~TournamentStore.change_mark`, read-only."""
    with reading(db) as store:
        return store.change_mark()


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _bot_rows(report: Report) -> list[Row]:
    rows = []
    for bot in report.bots:
        low, high = wilson_interval(bot.wins + bot.draws / 2, bot.games)
        rows.append({
            "name": bot.name, "games": bot.games, "wins": bot.wins, "losses": bot.losses,
            "draws": bot.draws, "rate": _pct(bot.rate), "low": f"{low:.0%}",
            "high": f"{high:.0%}", "rated": math.isfinite(bot.rating_sigma),  # played
            "rating": f"{bot.rating:.1f}",
            "rating_low": f"{bot.rating_low:.1f}", "rating_high": f"{bot.rating_high:.1f}",
            "mean_turn_ms": f"{bot.mean_turn_ms:.1f}", "max_turn_ms": f"{bot.max_turn_ms:.1f}",
            "timeouts": bot.timeouts, "overloaded_timeouts": bot.overloaded_timeouts,
            "crashes": bot.crashes, "invalid_outputs": bot.invalid_outputs,
            "out_of_memory": bot.out_of_memory,
            "lost_by": bot.losses_text.partition(": ")[2],
            "other_errors": ", ".join(f"{kind} {n}" for kind, n in sorted(bot.errors.items())
                                      if kind not in ("timeout", "crash", "invalid", "memory")),
        })  # fmt: skip
    return rows


def _matrix_rows(report: Report) -> list[Row]:
    """Per bot, its cells against every bot (None: itself, or never met); a cell's
    background runs from red to green with the win rate (like the PNG heatmap)."""
    names = [b.name for b in report.bots]
    rows = []
    for a in names:
        cells: list[Row | None] = []
        for b in names:
            stats = report.matrix.get(a, {}).get(b)
            if a == b or stats is None or not stats.games or stats.rate is None:
                cells.append(None)
                continue
            low, high = stats.interval
            cells.append({
                "rate": _pct(stats.rate), "low": f"{low:.0%}", "high": f"{high:.0%}",
                "games": stats.games, "red": int(200 * (1 - stats.rate)) + 40,
                "green": int(170 * stats.rate) + 50,
            })  # fmt: skip
        rows.append({"name": a, "cells": cells})
    return rows


def _game_rows(
    records: Sequence[GameRecord],
    numbers: Mapping[str, int],
    unlinked: Collection[int],
    lines: Sequence[GameLine],
    cause_link: Callable[[int], str],
) -> list[Row]:
    why = {line.key: line.why for line in lines}
    rows = []
    ordered = sorted(records, key=lambda r: -numbers.get(r.key, 0))  # newest first
    for record in ordered:
        seats = (record.first, record.second)
        winner = scored_winner(record)
        outcome = record.result if winner is None else f"{seats[winner]} wins"
        error = ""
        if record.error_kind:
            who = "" if record.error_seat is None else seats[record.error_seat] + " "
            error = f"{who}{record.error_kind}"
        number = numbers.get(record.key, 0)
        rows.append({
            "number": number,
            # the referee failed (no log to show), or the log could not be shown
            "linked": record.result != "error" and number not in unlinked,
            "why": why.get(record.key, record.cause or ""),
            "end_link": cause_link(number),
            "first": record.first, "second": record.second, "round": record.round + 1,
            "outcome": outcome, "end": record.end_reason.lower(), "turns": record.turns,
            "error": error, "replay": record.replay,
        })  # fmt: skip
    return rows


def game_link(number: int) -> str:
    """Where game ``number`` links to: its page, beside the report page."""
    return f"games/{number}.html"


LIVE_SCRIPT = """
"use strict";
(function () {
  const shown = document.body.dataset.version;
  async function poll() {
    try {
      const answer = await fetch("status.json", {cache: "no-store"});
      const status = await answer.json();
      document.getElementById("live-status").textContent =
        "live · " + status.stored + " games stored · checked " + new Date().toLocaleTimeString();
      if (status.version !== shown) { location.reload(); return; }
    } catch (e) {
      document.getElementById("live-status").textContent = "live · server unreachable, retrying";
    }
    setTimeout(poll, 2000);
  }
  setTimeout(poll, 2000);
})();
"""


def report_page(
    snapshot: Snapshot,
    *,
    game: str,
    live: bool = False,
    pictures: bool = True,
    unlinked: Collection[int] = (),
    cause_link: Callable[[int], str] | None = None,
) -> str:
    """The report as one HTML page of a ``game`` tournament (``live``: it reloads itself
    when games are added; games ``unlinked`` have no page to link to; ``cause_link``: where
    game N's cause links to, the game's page where it ended; by default its page). Rendered by
    :func:`cardarena.pages.render`: every stored string (bot names, settings, results,
    replay commands) is escaped; only the live script runs."""
    report, settings = snapshot.report, snapshot.settings
    return render(
        __package__,
        "report.html",
        game=game,
        version=settings.get("version", "?"),
        facts=[(key, value) for key, value in sorted(settings.items()) if key != "schema"],
        report=report,
        live=live,
        now=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        key="-".join(map(str, snapshot.version_key)),
        rating_model=RATING_MODEL,
        bots=_bot_rows(report),
        names=[b.name for b in report.bots],
        matrix=_matrix_rows(report),
        pictures=PICTURES if pictures and report.games else (),
        games=_game_rows(
            snapshot.records, snapshot.numbers, unlinked, report.game_lines, cause_link or game_link
        ),
        script=trusted(LIVE_SCRIPT),  # our own code: inlined as it is
        css=asset(__package__, "report.css"),
        policy=content_policy(LIVE_SCRIPT, connect=True) if live else content_policy(),
    )
