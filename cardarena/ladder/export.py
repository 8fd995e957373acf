"""The ladder's results as files: the final standings (or the board when there was no final)
as ``standings.csv`` and ``standings.json``, and the games they come from as the tournament
report's records (the HTML report with every game's viewer page is the game's part:
:mod:`cardarena.locm.ladder.export`).

Read from a database opened read-only (:func:`cardarena.ladder.store.reading`), so an export
is safe while the server runs. Text that bots or people chose (names, reasons) is written as
it is in JSON; in CSV a cell of text that a spreadsheet would take for a formula (it starts
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets a leading apostrophe.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..pages import write_page
from ..tournaments.store import GameRecord
from .api import LABEL, StoreData, game_json, iso_time
from .final import final_json
from .store import GameRow, LadderStore

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
DEFAULT_MAX_GAMES = 1000
"""Games of the board an export holds at most (the newest); a final's are all there."""
COLUMNS = ("rank", "bot", "owner", "version", "status", "reason", "games", "wins", "draws",
           "losses", "score", "elo", "elo_low", "elo_high", "tied_with", "mu", "sigma",
           "conservative")  # fmt: skip


def neutral(cell: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: a string that would start a formula is
    prefixed with an apostrophe; numbers and other strings are unchanged."""
    if isinstance(cell, str) and cell.startswith(FORMULA_STARTS):
        return "'" + cell
    return cell


@dataclass
class Export:
    """What an export writes: where the standings come from and the games behind them."""

    source: str
    """``final`` (the newest final's standings) or ``board`` (the ladder's leaderboard)."""
    meta: dict[str, str]
    standings: list[dict[str, Any]]
    final: dict[str, Any] | None
    games: list[GameRow] = field(default_factory=list)
    """The games the standings count (the final's, or the board's rated ones), oldest first."""
    names: dict[int, str] = field(default_factory=dict)
    """Each game's seats as bot names: game id -> (first, second) joined by a tab."""
    owners: dict[str, str] = field(default_factory=dict)

    def seats(self, game: GameRow) -> tuple[str, str]:
        first, second = self.names[game.id].split("\t")
        return first, second


def _bot(label: str) -> str:
    found = LABEL.fullmatch(label)
    return label if found is None else found["bot"]


def collect(store: LadderStore, *, board: bool = False,
            max_games: int = DEFAULT_MAX_GAMES) -> Export:  # fmt: skip
    """The standings and their games: the newest final's (unless ``board``), else the
    board's with its newest ``max_games`` rated games among the bots it shows."""
    with store._lock:
        final = None if board else final_json(store.db)
    meta = {k: v for k, v in store.meta().items() if k != "schema"}
    owners = store.owners()
    board_rows = StoreData(store).leaderboard()
    reasons = {row["name"]: row["reason"] for row in board_rows}
    if final is not None:
        with store._lock:
            versions = {
                str(name): int(number)
                for name, number in store.db.execute(
                    "SELECT f.name, v.number FROM finalists f JOIN versions v ON v.id = "
                    "f.version WHERE f.final = ?",
                    (final["id"],),
                )
            }
        rows = []
        for row in final["standings"]:
            elo = row["elo"] or {}
            wins, draws, losses = 0, 0, 0
            rows.append({
                "rank": row["rank"], "bot": row["name"], "owner": owners.get(row["name"], ""),
                "version": versions.get(row["name"]), "status": row["status"],
                "reason": reasons.get(row["name"]),
                "games": row["games"], "wins": wins, "draws": draws, "losses": losses,
                "score": row["score"], "elo": elo.get("value"), "elo_low": elo.get("low"),
                "elo_high": elo.get("high"), "tied_with": row["tied_with"], "mu": None,
                "sigma": None, "conservative": None,
            })  # fmt: skip
        with store._lock:
            ids = [
                int(r[0])
                for r in store.db.execute(
                    "SELECT g.id FROM games g JOIN final_pairs p ON p.pair = g.pair WHERE "
                    "p.final = ? AND g.kind = 'final' AND g.state = 'done' ORDER BY g.id",
                    (final["id"],),
                )
            ]
        export = Export("final", meta, rows, final, owners=owners)
    else:
        rows = []
        for row in board_rows:
            elo = row["elo"] or {}
            rows.append({
                "rank": row["rank"], "bot": row["name"], "owner": row["owner"],
                "version": row["version"], "status": row["status"], "reason": row["reason"],
                "games": row["games"],
                "wins": row["wins"], "draws": row["draws"], "losses": row["losses"],
                "score": row["wins"] + row["draws"] / 2, "elo": elo.get("value"),
                "elo_low": elo.get("low"), "elo_high": elo.get("high"),
                "tied_with": row["tied_with"], "mu": row["rating"]["mu"],
                "sigma": row["rating"]["sigma"], "conservative": row["rating"]["conservative"],
            })  # fmt: skip
        shown = {f"{row['name']}.v{row['version']}" for row in board_rows}
        with store._lock:
            ids = []
            for game_id, first, second in store.db.execute(
                "SELECT g.id, b1.name || '.v' || v1.number, b2.name || '.v' || v2.number "
                "FROM games g JOIN versions v1 ON v1.id = g.first JOIN bots b1 ON b1.id = "
                "v1.bot JOIN versions v2 ON v2.id = g.second JOIN bots b2 ON b2.id = v2.bot "
                "WHERE g.kind = 'rated' AND g.rated = 1 AND g.state = 'done' ORDER BY g.id DESC"
            ):
                if first in shown and second in shown:
                    ids.append(int(game_id))
                    if len(ids) >= max_games:
                        break
            ids.reverse()
        export = Export("board", meta, rows, None, owners=owners)
    for game_id in ids:
        found = store.game(game_id)
        if found is None:
            continue
        row = found[0]
        export.games.append(row)
        export.names[row.id] = f"{_bot(row.first)}\t{_bot(row.second)}"
    if final is not None:  # wins, draws and losses of each finalist in the final
        tally = {row["bot"]: row for row in export.standings}
        for game in export.games:
            seats = export.seats(game)
            winner = game.winner if game.error_seat is None else 1 - game.error_seat
            if game.error_kind == "referee":
                continue
            for seat, name in enumerate(seats):
                if name not in tally:
                    continue
                key = "draws" if winner is None else "wins" if winner == seat else "losses"
                tally[name][key] += 1
    return export


def standings_csv(export: Export) -> str:
    """``standings.csv``: one row per bot, best first (formula-like text neutralised)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in export.standings:
        cells = []
        for column in COLUMNS:
            value = row.get(column)
            if column == "tied_with":
                value = " ".join(value or ())
            cells.append("" if value is None else neutral(value))
        writer.writerow(cells)
    return out.getvalue()


def standings_data(export: Export, game_page: str | None = "games/{id}.html") -> dict[str, Any]:
    """``standings.json``: the standings, the final (if any) and every game behind them."""
    games = []
    for game in export.games:
        shown = game_json(game, export.owners)
        shown["viewer"] = None if game_page is None else game_page.format(id=game.id)
        games.append(shown)
    return {
        "source": export.source,
        "ladder": export.meta,
        "exported": iso_time(datetime.now(UTC).timestamp()),
        "final": export.final,
        "standings": export.standings,
        "games": games,
    }


def write_standings(export: Export, directory: str) -> list[str]:
    """Write ``standings.csv`` and ``standings.json`` into ``directory``; their paths."""
    os.makedirs(directory, exist_ok=True)
    paths = [os.path.join(directory, "standings.csv"), os.path.join(directory, "standings.json")]
    write_page(paths[0], standings_csv(export))
    text = json.dumps(standings_data(export), ensure_ascii=False, indent=2, allow_nan=False)
    write_page(paths[1], text + "\n")
    return paths


def records(export: Export) -> tuple[list[str], list[GameRecord], dict[str, int]]:
    """The export's games as the tournament report's records (seats named by bot; the
    ladder keeps no per-turn times: they are 0), the bots in standings order, and each
    record's number (its game id on the ladder)."""
    result: list[GameRecord] = []
    numbers: dict[str, int] = {}
    for game in export.games:
        first, second = export.seats(game)
        key = str(game.id)
        result.append(GameRecord(
            key=key, first=first, second=second, round=0, seed=game.seed, winner=game.winner,
            result=game.result or "error", end_reason=game.end_reason or "",
            error_seat=game.error_seat, error_kind=game.error_kind, detail=game.detail,
            turns=game.turns or 0, first_turns=0, first_mean_ms=0.0, first_max_ms=0.0,
            second_turns=0, second_mean_ms=0.0, second_max_ms=0.0,
            duration_s=game.duration_s or 0.0, replay=game.replay or "",
            finished_at=iso_time(game.finished_at) or "",
        ))  # fmt: skip
        numbers[key] = game.id
    names: Sequence[str] = [row["bot"] for row in export.standings]
    return list(names), result, numbers
