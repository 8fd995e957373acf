"""The ladder's final: the top K bots play every pair until their ranks are separated.

An organiser starts it (``POST /api/final``, ``locm ladder final start``): submissions are
frozen, the finalists are the K best active bots of the board (the version each plays), and
rated play stops while the final runs. The final has ratings of its own: only its games
count, fitted from nothing (:func:`cardarena.ladder.ratings.board_fit`); the open ladder's
ratings and games are left as they were. Its games (kind ``final``, never rated) are queued
in pairs, the same seed with the seats swapped, round by round over every pair of finalists
(:func:`cardarena.ladder.matchmaking.final_pairs`). At the end of each round the scheduler
asks :func:`cardarena.ladder.sprt.ranks_separated` whether every finalist is significantly
above the next at the chosen confidence, from the games finished so far; the final stops
queueing games when they are, or when the next pair would go over the game budget. The
games still being played then finish and count; the final is ``done`` when none is left.

Everything lives in the database (tables ``finals``, ``finalists``, ``final_pairs``, made
when missing), so a server restarted mid-final goes on with it. This module also answers
``GET /api/final`` (:func:`final_json`).
"""

from __future__ import annotations

import random
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from .api import iso_time
from .matchmaking import final_pairs
from .ratings import CONFIDENCE, board_fit
from .scheduler import random_seed
from .sprt import unseparated
from .store import LadderError, LadderStore

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_TOP",
    "FinalProgramme",
    "Finalist",
    "ensure_tables",
    "final_json",
    "final_results",
    "start_final",
    "stop_final",
]

DEFAULT_TOP = 4
DEFAULT_BUDGET = 1000
"""Games a final plays at most unless the organiser says otherwise."""
MAX_TOP = 32
MAX_BUDGET = 1_000_000
REFEREE = "referee"
"""The error kind of a game the platform failed: left out of every count."""

TABLES = """
CREATE TABLE IF NOT EXISTS finals (
    id INTEGER PRIMARY KEY,
    top INTEGER NOT NULL,
    confidence REAL NOT NULL,
    budget INTEGER NOT NULL,
    state TEXT NOT NULL,
    end_reason TEXT,
    started REAL NOT NULL,
    ended REAL,
    started_by TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS finalists (
    final INTEGER NOT NULL REFERENCES finals(id),
    place INTEGER NOT NULL,
    version INTEGER NOT NULL REFERENCES versions(id),
    name TEXT NOT NULL,
    PRIMARY KEY (final, version)
);
CREATE TABLE IF NOT EXISTS final_pairs (
    pair INTEGER PRIMARY KEY,
    final INTEGER NOT NULL REFERENCES finals(id),
    a INTEGER NOT NULL,
    b INTEGER NOT NULL
);
"""
"""``finals.state``: ``running`` (``end_reason`` set once it queues no more games) or
``done``; ``final_pairs``: which pairs of games (``games.pair``) are whose."""


def ensure_tables(store: LadderStore) -> None:
    """Make the final's tables in a ladder database that has none yet (the server does it
    at its start; the tables are new to the ladder's schema 1 and harmless to it)."""
    with store.transaction() as db:
        for statement in TABLES.strip().split(";"):
            if statement.strip():
                db.execute(statement)


def has_tables(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'finals'")
    return row.fetchone() is not None


@dataclass(frozen=True)
class Finalist:
    place: int
    """Its place on the board when the final started (1 = first)."""
    version: int
    name: str
    status: str
    """The status of that version now (a finalist disabled mid-final plays no more)."""


def _current(db: sqlite3.Connection) -> tuple[Any, ...] | None:
    """The newest final: (id, top, confidence, budget, state, end_reason, started, ended,
    started_by), or None."""
    if not has_tables(db):
        return None
    return db.execute(
        "SELECT id, top, confidence, budget, state, end_reason, started, ended, started_by "
        "FROM finals ORDER BY id DESC LIMIT 1"
    ).fetchone()


def _finalists(db: sqlite3.Connection, final: int) -> list[Finalist]:
    rows = db.execute(
        "SELECT f.place, f.version, f.name, v.status FROM finalists f JOIN versions v ON "
        "v.id = f.version WHERE f.final = ? ORDER BY f.place",
        (final,),
    )
    return [Finalist(int(p), int(v), str(n), str(s)) for p, v, n, s in rows]


def start_final(
    store: LadderStore,
    top: int = DEFAULT_TOP,
    confidence: float = CONFIDENCE,
    budget: int = DEFAULT_BUDGET,
    *,
    by: str = "an organiser",
) -> int:
    """Start a final among the ``top`` best active bots of the board; its id. Freezes the
    submissions. LadderError (one line) when it cannot start: a final already running,
    fewer than two active bots, a budget too small for one round, a confidence out of
    range."""
    if isinstance(top, bool) or not isinstance(top, int) or not 2 <= top <= MAX_TOP:
        raise LadderError(f"top is a whole number from 2 to {MAX_TOP}, not {top!r}")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not (0.5 <= confidence < 1)
    ):
        raise LadderError(f"confidence is a number from 0.5 up to 1 (e.g. 0.95), not "
                          f"{confidence!r}")  # fmt: skip
    if isinstance(budget, bool) or not isinstance(budget, int) or not 0 < budget <= MAX_BUDGET:
        raise LadderError(f"budget is a whole number of games from 1 to {MAX_BUDGET}")
    ensure_tables(store)
    board = [row for row in store.leaderboard() if row.status == "active"][:top]
    if len(board) < 2:
        raise LadderError(f"a final needs at least two active bots ({len(board)} now)")
    rounds = len(final_pairs(list(range(len(board))))) * 2
    if budget < rounds:
        raise LadderError(
            f"a budget of {budget} games is less than one round of the {len(board)} "
            f"finalists ({rounds} games: every pair, both seats)"
        )
    with store.transaction() as db:
        running = _current(db)
        if running is not None and running[4] == "running":
            raise LadderError(f"final {running[0]} is still running (stop it first)")
        cursor = db.execute(
            "INSERT INTO finals (top, confidence, budget, state, started, started_by) "
            "VALUES (?, ?, ?, 'running', ?, ?)",
            (top, float(confidence), budget, time.time(), by),
        )
        final = int(cursor.lastrowid or 0)
        for place, row in enumerate(board, 1):
            version = db.execute(
                "SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot WHERE b.name = ? "
                "AND v.status = 'active' ORDER BY v.number DESC LIMIT 1",
                (row.name,),
            ).fetchone()[0]
            db.execute(
                "INSERT INTO finalists (final, place, version, name) VALUES (?, ?, ?, ?)",
                (final, place, int(version), row.name),
            )
        db.execute("INSERT OR REPLACE INTO settings VALUES ('frozen', '1')")
    return final


def stop_final(store: LadderStore) -> int:
    """End the running final now: its queued games are dropped, those in play finish and
    count (it is ``done`` then, at once if none is in play); its id. LadderError if no final
    is running, or it is already ending."""
    with store.transaction() as db:
        running = _current(db)
        if running is None or running[4] != "running":
            raise LadderError("no final is running")
        final = int(running[0])
        db.execute(
            "DELETE FROM games WHERE state = 'queued' AND kind = 'final' AND pair IN "
            "(SELECT pair FROM final_pairs WHERE final = ?)",
            (final,),
        )
        in_play = _in_play(db, final)
        if running[5] is not None and in_play:
            raise LadderError(f"final {final} is ending already ({running[5]}): it is over "
                              f"when its {in_play} game(s) in play finish")  # fmt: skip
        db.execute("UPDATE finals SET end_reason = COALESCE(end_reason, 'stopped') WHERE id = ?",
                   (final,))  # fmt: skip
        if not in_play:
            db.execute("UPDATE finals SET state = 'done', ended = ? WHERE id = ?",
                       (time.time(), final))  # fmt: skip
    return final


def final_results(
    db: sqlite3.Connection, final: int
) -> tuple[list[str], list[tuple[str, str, float]]]:
    """The finalists' names (board order at the start) and the final's finished games as
    (first, second, first's score), in the order they finished. A seat charged with an
    error lost; games the platform failed are left out."""
    names = {f.version: f.name for f in _finalists(db, final)}
    results: list[tuple[str, str, float]] = []
    for first, second, winner, error_seat, error_kind in db.execute(
        "SELECT g.first, g.second, g.winner, g.error_seat, g.error_kind FROM games g JOIN "
        "final_pairs p ON p.pair = g.pair WHERE p.final = ? AND g.kind = 'final' AND "
        "g.state = 'done' ORDER BY g.finished_at, g.id",
        (final,),
    ):
        if error_kind == REFEREE or first not in names or second not in names:
            continue
        scored = winner if error_seat is None else 1 - int(error_seat)
        score = 0.5 if scored is None else 1.0 if scored == 0 else 0.0
        results.append((names[first], names[second], score))
    return list(names.values()), results


def _pair_counts(db: sqlite3.Connection, final: int) -> dict[tuple[int, int], int]:
    counts: dict[tuple[int, int], int] = {}
    for a, b, n in db.execute(
        "SELECT a, b, COUNT(*) FROM final_pairs WHERE final = ? GROUP BY a, b", (final,)
    ):
        key = (min(int(a), int(b)), max(int(a), int(b)))
        counts[key] = counts.get(key, 0) + int(n)
    return counts


def _games(db: sqlite3.Connection, final: int) -> int:
    """The final's games played, in play or queued: what its budget counts (games dropped
    unplayed, a disabled finalist's, count for nothing)."""
    return int(db.execute(
        "SELECT COUNT(*) FROM games g JOIN final_pairs p ON p.pair = g.pair WHERE p.final = ?",
        (final,),
    ).fetchone()[0])  # fmt: skip


def _in_play(db: sqlite3.Connection, final: int) -> int:
    return int(db.execute(
        "SELECT COUNT(*) FROM games g JOIN final_pairs p ON p.pair = g.pair WHERE p.final = ? "
        "AND g.state IN ('queued', 'leased')",
        (final,),
    ).fetchone()[0])  # fmt: skip


class FinalProgramme:
    """The final's part in the scheduler (:attr:`cardarena.ladder.scheduler.Scheduler.
    programmes`): queues its next pair when a worker is free, and holds rated play while
    a final runs."""

    def holds_rated_play(self, store: LadderStore) -> bool:
        with store._lock:
            current = _current(store.db)
        return current is not None and current[4] == "running"

    def queue_games(self, store: LadderStore, rng: random.Random) -> bool:
        """Queue the final's next pair (True), or end the final / do nothing (False)."""
        if not self.holds_rated_play(store):  # no final running: no write, no change mark
            return False
        with store.transaction() as db:
            current = _current(db)
            if current is None or current[4] != "running":
                return False
            final, _top, confidence, budget, _state, end_reason = current[:6]
            if end_reason is None:
                end_reason = self._decide(db, int(final), float(confidence), int(budget))
                if end_reason is not None:
                    db.execute("UPDATE finals SET end_reason = ? WHERE id = ?",
                               (end_reason, final))  # fmt: skip
            if end_reason is not None:
                if not _in_play(db, int(final)):
                    db.execute(
                        "UPDATE finals SET state = 'done', ended = ? WHERE id = ?",
                        (time.time(), final),
                    )
                return False
            return self._queue_pair(db, int(final), rng)

    def _playing(self, db: sqlite3.Connection, final: int) -> list[Finalist]:
        return [f for f in _finalists(db, final) if f.status == "active"]

    def _decide(
        self, db: sqlite3.Connection, final: int, confidence: float, budget: int
    ) -> str | None:
        """Why the final queues no more games (``separated``, ``budget``, ``too few
        finalists``), or None."""
        playing = self._playing(db, final)
        matchups = final_pairs([f.version for f in playing])
        if not matchups:
            return "too few finalists"
        counts = _pair_counts(db, final)
        queued = _games(db, final)
        if queued + 2 > budget:
            return "budget"
        played = [counts.get((min(pair), max(pair)), 0) for pair in matchups]
        if min(played) == max(played) and min(played) >= 1:  # a round is complete
            names, results = final_results(db, final)
            shown = {f.name for f in playing}
            names = [n for n in names if n in shown]
            if not unseparated(names, [r for r in results if shown >= {r[0], r[1]}],
                               confidence):  # fmt: skip
                return "separated"
        return None

    def _queue_pair(self, db: sqlite3.Connection, final: int, rng: random.Random) -> bool:
        playing = self._playing(db, final)
        counts = _pair_counts(db, final)
        matchups = final_pairs([f.version for f in playing])
        a, b = min(matchups, key=lambda pair: counts.get((min(pair), max(pair)), 0))
        last = db.execute("SELECT MAX(pair) FROM games").fetchone()[0]
        pair = int(last or 0) + 1
        seed = random_seed(rng)
        for first, second in ((a, b), (b, a)):
            db.execute(
                "INSERT INTO games (kind, pair, seed, first, second, state, priority, "
                "queued_at) VALUES ('final', ?, ?, ?, ?, 'queued', 1, ?)",
                (pair, seed, first, second, time.time()),
            )
        db.execute("INSERT INTO final_pairs (pair, final, a, b) VALUES (?, ?, ?, ?)",
                   (pair, final, a, b))  # fmt: skip
        return True


def _elo(value: float) -> float | None:
    return None if value in (float("inf"), float("-inf")) else round(value, 1)


def final_json(db: sqlite3.Connection) -> dict[str, Any] | None:
    """The newest final as ``GET /api/final`` shows it, or None if there was none."""
    current = _current(db)
    if current is None:
        return None
    final, top, confidence, budget, state, end_reason, started, ended, started_by = current
    finalists = _finalists(db, int(final))
    names, results = final_results(db, int(final))
    counts = _pair_counts(db, int(final))
    in_play = _in_play(db, int(final))
    queued_games = _games(db, int(final))
    by_version = {f.version: f.name for f in finalists}
    fit = board_fit(names, results, float(confidence)) if results else []
    fitted = {row.name: row for row in fit}
    open_pairs = unseparated(names, results, float(confidence)) if results else []
    games = {name: 0 for name in names}
    points = {name: 0.0 for name in names}
    for a, b, score in results:
        games[a] += 1
        games[b] += 1
        points[a] += score
        points[b] += 1 - score
    met: dict[frozenset[str | None], int] = {}
    for a, b, _score in results:
        met[frozenset((a, b))] = met.get(frozenset((a, b)), 0) + 1
    order = [row.name for row in fit] or names
    status = {f.name: f.status for f in finalists}
    standings = []
    for rank, name in enumerate(order, 1):
        row = fitted.get(name)
        standings.append({
            "rank": rank, "name": name, "status": status.get(name), "games": games[name],
            "score": points[name],
            "elo": None if row is None or not row.games else {
                "value": _elo(row.elo), "low": _elo(row.low), "high": _elo(row.high)},
            "tied_with": [] if row is None else list(row.tied_with),
        })  # fmt: skip
    return {
        "id": int(final),
        "state": str(state),
        "end_reason": end_reason,
        "top": int(top),
        "confidence": float(confidence),
        "budget": int(budget),
        "started": iso_time(started),
        "ended": iso_time(ended),
        "started_by": started_by,
        "finalists": [{"place": f.place, "name": f.name, "status": f.status} for f in finalists],
        "pairs": [
            {
                "bots": [by_version.get(a, "?"), by_version.get(b, "?")],
                "pairs": n,
                "games_played": met.get(frozenset((by_version.get(a), by_version.get(b))), 0),
            }
            for (a, b), n in sorted(counts.items())
        ],
        "games_played": len(results),
        "games_in_play": in_play,
        "games_left": max(0, int(budget) - queued_games) if state == "running" else 0,
        "separated": bool(results) and not open_pairs,
        "not_separated": [list(pair) for pair in open_pairs],
        "standings": standings,
    }
