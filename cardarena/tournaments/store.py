"""The tournament database: one SQLite file, safe against interruption.

Every finished game is one row, written in its own transaction in WAL mode, so a
crash or ``kill -9`` at any moment leaves either the whole row or nothing
(``synchronous=NORMAL``: only a power cut could lose the last few games — never
corrupt the file — and a per-game fsync would cap the rate of fast tournaments).
A game's key is the primary key: a game can never be stored twice, and resuming
plays exactly the scheduled games that have no row.
An advisory lock file stops two tournaments from running on one database at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

SCHEMA_VERSION = "1"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (name TEXT PRIMARY KEY, command TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    key TEXT PRIMARY KEY,
    first TEXT NOT NULL,
    second TEXT NOT NULL,
    round INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    winner INTEGER,
    result TEXT NOT NULL,
    end_reason TEXT NOT NULL,
    error_seat INTEGER,
    error_kind TEXT,
    detail TEXT,
    turns INTEGER NOT NULL,
    first_turns INTEGER NOT NULL,
    first_mean_ms REAL NOT NULL,
    first_max_ms REAL NOT NULL,
    second_turns INTEGER NOT NULL,
    second_mean_ms REAL NOT NULL,
    second_max_ms REAL NOT NULL,
    duration_s REAL NOT NULL,
    replay TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    log BLOB
);
"""

RESULTS = ("win", "draw", "aborted", "error")
"""win: someone won; draw: the game ended with no winner; aborted: the official
runner would have given no result; error: the referee itself failed."""
ERROR_KINDS = ("timeout", "crash", "invalid", "referee")


class ConfigMismatch(ValueError):
    """The database belongs to a tournament with other settings."""


class TournamentLocked(RuntimeError):
    """Another tournament process is using this database."""


@dataclass(frozen=True)
class GameRecord:
    """Everything stored about one finished game (game-agnostic)."""

    key: str
    first: str
    second: str
    round: int
    seed: int
    winner: int | None
    """Seat of the winner (0 = first), None without a winner."""
    result: str
    end_reason: str
    error_seat: int | None
    error_kind: str | None
    detail: str | None
    turns: int
    first_turns: int
    first_mean_ms: float
    first_max_ms: float
    second_turns: int
    second_mean_ms: float
    second_max_ms: float
    duration_s: float
    replay: str
    """A command line that replays this game."""
    log: bytes | None = None
    """The zlib-compressed JSON game log."""
    finished_at: str = ""


def compress_log(log: Mapping[str, Any]) -> bytes:
    return zlib.compress(json.dumps(log, ensure_ascii=False).encode("utf-8"), 6)


def decompress_log(blob: bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(blob).decode("utf-8"))  # type: ignore[no-any-return]


_COLUMNS = [f.name for f in fields(GameRecord)]
_INSERT = (
    f"INSERT OR IGNORE INTO games ({', '.join(_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in _COLUMNS)})"
)


class TournamentStore:
    """The results of one tournament; use as a context manager."""

    def __init__(self, path: str, *, lock: bool = True, create: bool = True) -> None:
        if not create and not os.path.exists(path):
            raise FileNotFoundError(f"no tournament database at {path}")
        self.path = path
        self._lock_file: int | None = None
        if lock:
            self._lock_file = os.open(f"{path}-lock", os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(self._lock_file)
                self._lock_file = None
                raise TournamentLocked(
                    f"{path} is in use by another tournament (lock {path}-lock)"
                ) from None
        self.db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        with self.transaction():
            for statement in _SCHEMA.strip().split(";"):
                if statement.strip():
                    self.db.execute(statement)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def close(self) -> None:
        self.db.close()
        if self._lock_file is not None:
            os.close(self._lock_file)  # releases the flock
            self._lock_file = None

    def __enter__(self) -> TournamentStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- settings ------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM meta").fetchall())

    def bots(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT name, command FROM bots ORDER BY rowid").fetchall())

    def configure(self, settings: Mapping[str, str], bots: Mapping[str, str]) -> None:
        """Record the settings and bots, or check them against what is recorded.

        A tournament may be resumed with more bots or more games, never with other
        seeds, versions or commands: that would mix incomparable games.
        """
        with self.transaction():
            stored = self.meta()
            wanted = {"schema": SCHEMA_VERSION, **settings}
            for key, value in wanted.items():
                if key in stored and stored[key] != value:
                    raise ConfigMismatch(
                        f"{self.path} holds a tournament with {key}={stored[key]}, "
                        f"not {key}={value}; use another --db"
                    )
            known = self.bots()
            for name, command in bots.items():
                if name in known and known[name] != command:
                    raise ConfigMismatch(
                        f"{self.path}: bot {name!r} was {known[name]!r}, not {command!r}; "
                        "give the new command another name or use another --db"
                    )
            for key, value in wanted.items():
                self.db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (key, value))
            for name, command in bots.items():
                self.db.execute("INSERT OR IGNORE INTO bots VALUES (?, ?)", (name, command))

    # --- games -----------------------------------------------------------------------

    def done_keys(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT key FROM games")}

    def add(self, record: GameRecord) -> bool:
        """Store a finished game; False if that game was already stored (not replaced)."""
        values = [getattr(record, name) for name in _COLUMNS]  # no deep copy of the log
        if not record.finished_at:
            values[_COLUMNS.index("finished_at")] = datetime.now(UTC).isoformat(timespec="seconds")
        with self.transaction():
            cursor = self.db.execute(_INSERT, values)
        return cursor.rowcount == 1

    def records(self, with_logs: bool = False) -> list[GameRecord]:
        """Every stored game, in schedule order (round, then seats)."""
        columns = [c for c in _COLUMNS if with_logs or c != "log"]
        rows = self.db.execute(
            f"SELECT {', '.join(columns)} FROM games ORDER BY round, first, second"
        ).fetchall()
        return [GameRecord(**dict(zip(columns, row, strict=True))) for row in rows]

    def log(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT log FROM games WHERE key = ?", (key,)).fetchone()
        return None if row is None or row[0] is None else decompress_log(row[0])

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
