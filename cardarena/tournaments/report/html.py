"""The tournament report as one HTML page (``locm report --html DIR``, ``locm serve``).

The page (``index.html``) holds the same numbers as the text report — ratings, win
matrix with 95% intervals, turn times, errors, the two PNG pictures — and the list
of games, each linked to ``games/N.html`` (N: the game's number in the database):
the game's own viewer page, which the game provides (LOCM: :mod:`cardarena.locm.viewer`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib.resources import files

from ..store import GameRecord, reading
from .model import OVERLOAD, RATING_MODEL, BotStats, Report, build_report, wilson_interval

PICTURES = ("matrix.png", "ratings.png")


@cache
def _css() -> str:
    return files(__package__).joinpath("report.css").read_text(encoding="utf-8")


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


def read_snapshot(db: str) -> Snapshot:
    """Everything the report page shows, from a read-only database."""
    with reading(db) as store:
        records = store.records()
        bots = list(store.bots())
        settings = store.meta()
        numbers = store.game_numbers()
    return Snapshot(build_report(bots, records, settings), records, numbers, settings)


def read_change_mark(db: str) -> tuple[int, int]:
    """The database's :meth:`~TournamentStore.change_mark`, read-only."""
    with reading(db) as store:
        return store.change_mark()


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _heat(rate: float | None) -> str:
    """A red-to-green background for a win rate (like the PNG heatmap)."""
    if rate is None:
        return ""
    red, green = int(200 * (1 - rate)) + 40, int(170 * rate) + 50
    return f' style="background: rgb({red}, {green}, 70)"'


def _rating(bot: BotStats) -> str:
    if not math.isfinite(bot.rating_sigma):
        return "-"
    return f"{bot.rating:.1f} <small>[{bot.rating_low:.1f}, {bot.rating_high:.1f}]</small>"


def _bots_table(report: Report) -> str:
    rows = []
    for rank, bot in enumerate(report.bots, 1):
        low, high = wilson_interval(bot.wins + bot.draws / 2, bot.games)
        rows.append(
            f'<tr data-bot="{html.escape(bot.name)}"><td>{rank}</td>'
            f"<td class=name>{html.escape(bot.name)}</td><td>{bot.games}</td>"
            f"<td>{bot.wins}</td><td>{bot.losses}</td><td>{bot.draws}</td>"
            f"<td>{_pct(bot.rate)} <small>[{low:.0%}, {high:.0%}]</small></td>"
            f"<td>{_rating(bot)}</td><td>{bot.mean_turn_ms:.1f}</td><td>{bot.max_turn_ms:.1f}</td>"
            f"<td>{bot.timeouts}</td><td>{bot.overloaded_timeouts}</td><td>{bot.crashes}</td>"
            f"<td>{bot.invalid_outputs}</td></tr>"
        )
    return (
        '<table id="bots"><thead><tr><th>#</th><th>bot</th><th>games</th><th>wins</th>'
        "<th>losses</th><th>draws</th><th>win rate [95% CI]</th><th>rating [95% CI]</th>"
        "<th>mean turn ms</th><th>max turn ms</th><th>timeouts</th>"
        f'<th title="timeouts while the load per core was above {OVERLOAD:g}">of which '
        "overloaded</th><th>crashes</th><th>invalid</th></tr></thead><tbody>"
        + "".join(rows) + "</tbody></table>"
    )  # fmt: skip


def _matrix_table(report: Report) -> str:
    names = [b.name for b in report.bots]
    head = "".join(f"<th>{html.escape(n)}</th>" for n in names)
    rows = []
    for a in names:
        cells = []
        for b in names:
            stats = report.matrix.get(a, {}).get(b)
            if a == b or stats is None or not stats.games:
                cells.append("<td class=none>–</td>")
                continue
            low, high = stats.interval
            cells.append(
                f"<td{_heat(stats.rate)}><b>{_pct(stats.rate)}</b><br>"
                f"<small>[{low:.0%}, {high:.0%}] n={stats.games}</small></td>"
            )
        rows.append(f"<tr><th>{html.escape(a)}</th>{''.join(cells)}</tr>")
    return (
        '<table id="matrix"><caption>win rate of the row against the column, both seats '
        f"[95% Wilson interval]</caption><thead><tr><th></th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _games_table(records: Sequence[GameRecord], numbers: Mapping[str, int]) -> str:
    rows = []
    ordered = sorted(records, key=lambda r: -numbers.get(r.key, 0))  # newest first
    for record in ordered:
        number = numbers.get(record.key, 0)
        seats = (record.first, record.second)
        if record.winner is None:
            outcome = record.result
        else:
            outcome = f"{html.escape(seats[record.winner])} wins"
        link = f'<a href="games/{number}.html">game {number}</a>'
        if record.result == "error":
            link = f"game {number}"  # the referee failed: there is no log to show
        error = ""
        if record.error_kind:
            who = "" if record.error_seat is None else html.escape(seats[record.error_seat]) + " "
            error = f"{who}{record.error_kind}"
        rows.append(
            f'<tr data-game="{number}"><td>{link}</td><td>{html.escape(record.first)}</td>'
            f"<td>{html.escape(record.second)}</td><td>{record.round + 1}</td>"
            f"<td>{outcome}</td><td>{html.escape(record.end_reason.lower())}</td>"
            f"<td>{record.turns}</td><td>{html.escape(error)}</td>"
            f"<td><code>{html.escape(record.replay)}</code></td></tr>"
        )
    return (
        '<table id="games"><thead><tr><th>game</th><th>player 0</th><th>player 1</th>'
        "<th>round</th><th>result</th><th>end</th><th>turns</th><th>error</th>"
        "<th>replay with</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


LIVE_SCRIPT = """<script>
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
</script>"""


def report_page(
    snapshot: Snapshot, *, game: str, live: bool = False, pictures: bool = True
) -> str:
    """The report as one HTML page of a ``game`` tournament (``live``: it reloads itself
    when games are added)."""
    report, settings = snapshot.report, snapshot.settings
    version = settings.get("version", "?")
    facts = ", ".join(f"{key}={html.escape(value)}" for key, value in sorted(settings.items())
                      if key != "schema")  # fmt: skip
    errors = ""
    if report.referee_errors:
        errors = f" ({report.referee_errors} referee errors, not counted)"
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    status = '<span id="live-status">live</span>' if live else f"written {now}"
    images = ""
    if pictures and report.games:
        images = (
            '<section class="pictures">'
            + "".join(f'<img src="{name}" alt="{name[:-4]}">' for name in PICTURES)
            + "</section>"
        )
    key = "-".join(map(str, snapshot.version_key))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(game)} {html.escape(version)} tournament</title>
<style>{_css()}</style></head>
<body data-version="{key}" data-games="{report.games}">
<header><h1>{html.escape(game)} {html.escape(version)} tournament</h1>
<p><b id="game-count">{report.games}</b> games{errors} · {status}</p>
<p class="muted">{facts}</p></header>
<h2>Ratings</h2>{_bots_table(report)}
<p class="muted">Ratings: {html.escape(RATING_MODEL)}; equal ratings are ordered by the games
between them. A game without a winner counts half a win for each side; referee failures are
left out.</p>
<h2>Win matrix</h2>{_matrix_table(report)}
{images}
<h2>Games</h2>
<p class="muted">Newest first. Each game opens in the replay viewer.</p>
{_games_table(snapshot.records, snapshot.numbers)}
{LIVE_SCRIPT if live else ""}
</body></html>
"""
