"""The tournament database: one SQLite file, safe against interruption.

Every finished game is one row, written in its own transaction in WAL mode, so a
crash or ``kill -9`` at any moment leaves either the whole row or nothing
(``synchronous=NORMAL``: only a power cut could lose the last few games — never
corrupt the file — and a per-game fsync would cap the rate of fast tournaments).
A game's key is the primary key: a game can never be stored twice, and resuming
plays exactly the scheduled games that have no row.
An advisory lock file stops two tournaments from running on one database at once;
its descriptor is closed in every forked child (workers, bots), so only the
tournament process itself ever holds the lock, and it removes the file when it closes
the database.

Every problem with the file itself (missing, not a database, another program's
database, a directory, an unwritable place) is a :class:`StoreError` with a
one-line message, raised before anything is written. The database and lock files
are created readable by their owner only (0600).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import weakref
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

from ..untrusted import UntrustedInputError, decompress, load_json

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
    log BLOB,
    load REAL,
    overloaded INTEGER,
    cause TEXT
);
"""

RESULTS = ("win", "draw", "aborted", "error")
"""win: someone won; draw: the game ended with no winner; aborted: the official
runner would have given no result (where one bot caused it, e.g. an empty line in
LOCM 1.0/1.2, it is charged: ``error_seat`` and ``error_kind`` name it and the other
seat is the ``winner``); error: the referee itself failed."""
REFEREE = "referee"
"""The error kind of a game the platform failed (a worker lost, a referee error): no
bot's doing, left out of the statistics and always played again."""
ERROR_KINDS = ("timeout", "crash", "invalid", "empty line", "too long", "memory", REFEREE)
"""The error kinds LOCM records; a game may name any other kind (a new way for a bot to
lose, e.g. ``out of memory``): an error charged to a seat is that seat's loss whatever
its kind, and the report counts each kind. ``memory``: the bot went over its memory
budget (the kernel killed it, out of memory)."""


FILE_MODE = 0o600
_OUR_TABLES = frozenset(("meta", "bots", "games"))


class StoreError(ValueError):
    """The database file cannot be used: a one-line reason, nothing was written."""


class ConfigMismatch(StoreError):
    """The database belongs to a tournament with other settings."""


class TournamentLocked(StoreError, RuntimeError):
    """Another tournament process is using this database."""


_OPEN_STORES: weakref.WeakSet[TournamentStore] = weakref.WeakSet()


def _forget_locks_in_child() -> None:
    """After a fork: close the child's copies of the lock descriptors.

    An flock belongs to the open file description, which a fork shares: a worker
    that kept its copy would hold the lock after the tournament process died.
    (Descriptors are non-inheritable, so bots started with exec never get one.)
    """
    for store in list(_OPEN_STORES):
        fd, store._lock_file = store._lock_file, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


os.register_at_fork(after_in_child=_forget_locks_in_child)


def check_place(path: str, create: bool, what: str = "tournament") -> None:
    """Refuse a path that cannot hold a database (a ``what`` database: the tournament's, the
    ladder's), with a one-line reason."""
    if os.path.isdir(path):
        raise StoreError(f"{path} is a directory, not a {what} database")
    if os.path.exists(path):
        if not os.path.isfile(path):
            raise StoreError(f"{path} is not a regular file")
        return
    if not create:
        raise StoreError(f"no {what} database at {path}")
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        raise StoreError(f"cannot create {path}: no directory {directory}")


def describe(error: sqlite3.Error, what: str = "tournament", failed: str = "cannot be read") -> str:
    """What went wrong with a ``what`` database, after its path: one line."""
    text = str(error)
    if "not a database" in text or "malformed" in text:
        return f"is not a {what} database (damaged, truncated or another kind of file)"
    return f"{failed}: {text}"


def _connect_read_only(path: str) -> sqlite3.Connection:
    """Open for reading only, writing nothing: ``mode=ro``, so a leftover WAL is read and
    never checkpointed (a tournament still writing is followed through its WAL); without a
    WAL file (nobody is writing: a writer keeps one while it runs) ``immutable=1`` reads
    the main file without making the ``-wal`` and ``-shm`` files a WAL reader needs; also
    where those cannot be made (a read-only directory or file system)."""
    from urllib.parse import quote

    uri = f"file:{quote(os.path.abspath(path))}"
    tries = ("mode=ro", "mode=ro&immutable=1")
    if not os.path.exists(f"{path}-wal"):
        tries = tries[1:]
    last: sqlite3.Error | None = None
    for options in tries:
        try:
            db = sqlite3.connect(f"{uri}?{options}", uri=True, isolation_level=None)
        except sqlite3.Error as error:
            last = error
            continue
        try:
            db.execute("SELECT name FROM sqlite_master").fetchall()
            db.execute("PRAGMA query_only = ON")  # even a writable file is only read
        except sqlite3.DatabaseError as error:
            db.close()
            if "not a database" in str(error) or "malformed" in str(error):
                raise StoreError(f"{path} {describe(error)}") from None
            last = error
            continue
        return db
    raise StoreError(f"{path} cannot be read: {last}")


def _check_schema(db: sqlite3.Connection, path: str) -> bool:
    """True if the file is ours (or empty); refuse other programs' databases untouched."""
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as error:
        raise StoreError(f"{path} {describe(error)}") from None
    if not tables:
        return False
    if {"players", "leaderboard"} <= tables:
        raise StoreError(f"{path} is a Shared Deck database, not a locm tournament database")
    if not tables >= _OUR_TABLES:
        raise StoreError(
            f"{path} is not a tournament database (its tables: {', '.join(sorted(tables))})"
        )
    return True


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
    load: float | None = None
    """The machine's load per core (1-minute average / cores) when the game ended
    (informative: a bot can raise it itself, so no decision is made from it)."""
    overloaded: bool | None = None
    """For a timeout: True if the bot was measured starved of CPU by the machine in the
    turn it ran out of time (the only games ``--retry-errors`` replays), False if it
    was measured and was not; None if not a timeout, or not measured (no cgroup, or a
    database from before this column)."""
    cause: str | None = None
    """Why the game ended, in the game's own words, said of the seat that lost where one
    did (``crashed at turn 6: <its last stderr line>``), else of the game (``draw at turn
    50``); None in a database from before this column: the game derives it from the
    other columns (:func:`cardarena.tournaments.report.model.with_causes`)."""


def compress_log(log: Mapping[str, Any]) -> bytes:
    return zlib.compress(json.dumps(log, ensure_ascii=False).encode("utf-8"), 6)


def decompress_log(blob: bytes, what: str = "the stored log") -> dict[str, Any]:
    """A stored log, read in bounded memory (:mod:`cardarena.untrusted`: the database may
    come from elsewhere); StoreError, naming ``what``, if it is not a log or too large."""
    try:
        log = load_json(decompress(blob))
    except UntrustedInputError as error:
        raise StoreError(f"{what} cannot be read: {error}") from None
    if not isinstance(log, dict):
        raise StoreError(f"{what} is not a game log (a JSON object)")
    return log


_COLUMNS = [f.name for f in fields(GameRecord)]
_INSERT = (
    f"INSERT OR IGNORE INTO games ({', '.join(_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in _COLUMNS)})"
)


_TEXT = ("key", "first", "second", "result", "end_reason", "replay")
_OPTIONAL_TEXT = ("error_kind", "detail", "finished_at", "cause")
_WHOLE = ("round", "seed", "turns", "first_turns", "second_turns")
_REAL = ("first_mean_ms", "first_max_ms", "second_mean_ms", "second_max_ms", "duration_s")
_REQUIRED = frozenset((*_TEXT, *_WHOLE, *_REAL, "winner", "error_seat"))


def _checked(row: dict[str, Any], path: str) -> GameRecord:
    """A row as a GameRecord, or StoreError naming the game and the field: a database from
    elsewhere may hold anything in any column (SQLite keeps 'abc' in an INTEGER column)."""

    def bad(name: str, want: str) -> StoreError:
        shown = repr(row[name])[:40]
        game = str(row["key"])[:60]
        return StoreError(f"{path}: game {game!r} has {name} = {shown} (want {want}): "
                          "not a tournament database this version wrote")  # fmt: skip

    for name in _TEXT:
        if not isinstance(row[name], str):
            raise bad(name, "text")
    for name in _OPTIONAL_TEXT:
        if row.get(name) is not None and not isinstance(row[name], str):
            raise bad(name, "text or NULL")
    for name in _WHOLE:
        if not isinstance(row[name], int) or (name != "seed" and row[name] < 0):
            raise bad(name, "a whole number" if name == "seed" else "a whole number >= 0")
    for name in (*_REAL, "load"):
        if row.get(name) is not None and not isinstance(row[name], int | float):
            raise bad(name, "a number")
    for name in ("winner", "error_seat"):
        if row[name] not in (None, 0, 1) or isinstance(row[name], float):
            raise bad(name, "0, 1 or NULL")
    if row["first"] == row["second"]:
        raise bad("second", "another bot than first")
    if row.get("log") is not None and not isinstance(row["log"], bytes):
        raise bad("log", "compressed bytes or NULL")
    if row.get("overloaded") not in (None, 0, 1) or isinstance(row.get("overloaded"), float):
        raise bad("overloaded", "0, 1 or NULL")
    if row.get("overloaded") is not None:
        row = {**row, "overloaded": bool(row["overloaded"])}
    return GameRecord(**row)


def _texts(rows: Sequence[tuple[Any, Any]], path: str, table: str) -> dict[str, str]:
    """Name-value rows of ``table`` (meta, bots), which must all be text."""
    for row in rows:
        if not all(isinstance(value, str) for value in row):
            raise StoreError(f"{path}: the {table} table holds {repr(row)[:60]}, not text: "
                             "not a tournament database this version wrote")  # fmt: skip
    return dict(rows)


def lock_file_path(path: str) -> str:
    """The lock file of the database ``path``: ``DB.lock`` (as for shared-deck serve)."""
    return f"{path}.lock"


@contextlib.contextmanager
def reading(path: str) -> Iterator[TournamentStore]:
    """The store at ``path`` opened read-only, without the lock (reports, viewers, live
    pages: the tournament may still be running); any SQLite error on the way is a
    one-line :class:`StoreError`."""
    try:
        with TournamentStore(path, lock=False, create=False, read_only=True) as store:
            yield store
    except sqlite3.Error as error:
        raise StoreError(f"{path} cannot be read: {error}") from None


class TournamentStore:
    """The results of one tournament; use as a context manager."""

    def __init__(
        self, path: str, *, lock: bool = True, create: bool = True, read_only: bool = False
    ) -> None:
        """Open (and with ``create``, make) the database at ``path``.

        ``read_only`` opens it without writing anything, even a journal: for
        reports on files the user may not (or cannot) write.
        """
        check_place(path, create and not read_only)
        self.path = path
        self._lock_file: int | None = None
        self._made_lock = False
        self._db: sqlite3.Connection | None = None
        try:
            if read_only:
                self._db = _connect_read_only(path)
                _check_schema(self.db, path)
                self._columns = self._game_columns()
                return
            if lock:
                self._take_lock()
            if not os.path.exists(path):  # sqlite gives the -wal and -shm files its mode
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
            self._db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
            ours = _check_schema(self.db, path)
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
                with self.transaction():
                    if not ours:
                        for statement in _SCHEMA.strip().split(";"):
                            if statement.strip():
                                self.db.execute(statement)
                    self._migrate()
            except sqlite3.DatabaseError as error:
                raise StoreError(f"{path} {describe(error)}") from None
            self._columns = self._game_columns()
        except BaseException:
            self._drop_made_lock()
            self.close()
            raise
        _OPEN_STORES.add(self)

    def _take_lock(self) -> None:
        lock_path = lock_file_path(self.path)
        for _attempt in range(3):
            try:
                self._lock_file = os.open(
                    lock_path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC, FILE_MODE
                )
                self._made_lock = True
            except FileExistsError:
                self._made_lock = False
                try:
                    self._lock_file = os.open(lock_path, os.O_RDWR | os.O_CLOEXEC)
                except FileNotFoundError:
                    continue  # removed meanwhile by a refused run: make it again
                except OSError as error:
                    raise StoreError(
                        f"cannot open the lock file {lock_path}: {error.strerror}"
                    ) from None
            except OSError as error:
                raise StoreError(
                    f"cannot create the lock file {lock_path}: {error.strerror}"
                ) from None
            try:
                fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(self._lock_file)
                self._lock_file = None
                raise TournamentLocked(
                    f"{self.path} is in use by another tournament (lock {lock_path})"
                ) from None
            # A refused run removes the lock file it made (holding the lock): if that
            # happened between our open and our flock, we hold a lock on a removed file.
            try:
                same = os.path.samestat(os.fstat(self._lock_file), os.stat(lock_path))
            except FileNotFoundError:
                same = False
            if same:
                return
            os.close(self._lock_file)
            self._lock_file = None
        raise TournamentLocked(f"{self.path}: the lock file {lock_path} keeps changing")

    def _drop_made_lock(self) -> None:
        """A refused run writes nothing: remove the lock file if this store made it
        (while still holding the lock, so no other run can be holding it)."""
        if self._lock_file is not None and self._made_lock:
            with contextlib.suppress(OSError):
                os.unlink(lock_file_path(self.path))

    def _migrate(self) -> None:
        """Add the columns newer versions record to a database made by an older one."""
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(games)")}
        if "load" not in columns:
            self.db.execute("ALTER TABLE games ADD COLUMN load REAL")
        if "overloaded" not in columns:
            self.db.execute("ALTER TABLE games ADD COLUMN overloaded INTEGER")
        if "cause" not in columns:
            self.db.execute("ALTER TABLE games ADD COLUMN cause TEXT")

    def _game_columns(self) -> list[str]:
        present = {row[1] for row in self.db.execute("PRAGMA table_info(games)")}
        return [c for c in _COLUMNS if c in present]

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"{self.path} is closed")
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._lock_file is not None:
            self._remove_lock_file()
            os.close(self._lock_file)  # releases the flock
            self._lock_file = None

    def _remove_lock_file(self) -> None:
        """Leave no ``DB.lock`` behind: removed while we still hold its lock, so no other
        run holds it; a run that opened it just before finds it gone after its flock
        (the check in :meth:`_take_lock`) and makes a new one."""
        assert self._lock_file is not None
        lock_path = lock_file_path(self.path)
        with contextlib.suppress(OSError):
            if os.path.samestat(os.fstat(self._lock_file), os.stat(lock_path)):
                os.unlink(lock_path)

    def __enter__(self) -> TournamentStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is not None and issubclass(kind, StoreError):  # refused (other settings)
            self._drop_made_lock()
        self.close()

    # --- settings ------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        return _texts(self.db.execute("SELECT key, value FROM meta").fetchall(), self.path, "meta")

    def bots(self) -> dict[str, str]:
        rows = self.db.execute("SELECT name, command FROM bots ORDER BY rowid").fetchall()
        return _texts(rows, self.path, "bots")

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
        columns = [c for c in self._columns if with_logs or c != "log"]
        rows = self.db.execute(
            f"SELECT {', '.join(columns)} FROM games ORDER BY round, first, second"
        ).fetchall()
        missing = _REQUIRED.difference(columns)
        if missing:
            raise StoreError(f"{self.path}: the games table has no column {sorted(missing)[0]!r} "
                             "(not a tournament database)")  # fmt: skip
        return [_checked(dict(zip(columns, row, strict=True)), self.path) for row in rows]

    def log(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT log FROM games WHERE key = ?", (key,)).fetchone()
        if row is None or row[0] is None:
            return None
        return decompress_log(row[0], f"the log of game {key!r} in {self.path}")

    def game_numbers(self) -> dict[str, int]:
        """Each stored game's number (its row id, in the order games finished): what
        ``locm view --game N`` and the HTML report call it. Stored rows are never rewritten,
        so a number stays valid (a game played again after ``--retry-errors`` gets a new one;
        only a manual VACUUM could renumber them)."""
        return {key: rowid for rowid, key in self.db.execute("SELECT rowid, key FROM games")}

    def change_mark(self) -> tuple[int, int]:
        """(games stored, highest game number): changes whenever a game is added or replaced,
        and costs one index lookup (live pages poll it)."""
        query = "SELECT COUNT(*), COALESCE(MAX(rowid), 0) FROM games"
        count, last = self.db.execute(query).fetchone()
        return int(count), int(last)

    def log_by_number(self, number: int) -> tuple[str, dict[str, Any] | None] | None:
        """(key, log) of game ``number``, None if there is no such game."""
        row = self.db.execute("SELECT key, log FROM games WHERE rowid = ?", (number,)).fetchone()
        if row is None:
            return None
        if row[1] is None:
            return row[0], None
        return row[0], decompress_log(row[1], f"the log of game {number} in {self.path}")

    def discard(self, error_kinds: Sequence[str], *, overloaded_timeouts: bool = False) -> int:
        """Delete the games recorded with these error kinds (and, with
        ``overloaded_timeouts``, the timeouts measured while the bot was starved of CPU by
        the machine), so that they are played again. Returns how many were deleted."""
        marks = ", ".join("?" for _ in error_kinds) or "NULL"
        query = f"DELETE FROM games WHERE error_kind IN ({marks})"
        if overloaded_timeouts:
            query += " OR (error_kind = 'timeout' AND overloaded = 1)"
        with self.transaction():
            cursor = self.db.execute(query, list(error_kinds))
        return cursor.rowcount

    def uncharged(self, end_reason: str) -> list[str]:
        """The keys of the games that ended for ``end_reason`` with no seat charged."""
        query = "SELECT key FROM games WHERE end_reason = ? AND error_seat IS NULL"
        return [row[0] for row in self.db.execute(query, (end_reason,))]

    def charge(self, key: str, seat: int, kind: str) -> bool:
        """Charge a stored game that names no culprit to ``seat`` (error ``kind``, the other
        seat its winner): rows an earlier version wrote. The game keeps its number."""
        query = ("UPDATE games SET error_seat = ?, error_kind = ?, winner = ? "
                 "WHERE key = ? AND error_seat IS NULL")  # fmt: skip
        with self.transaction():
            cursor = self.db.execute(query, (seat, kind, 1 - seat, key))
        return cursor.rowcount == 1

    def error_counts(self) -> dict[tuple[str, bool], int]:
        """How many games each error kind ended, per (kind, measured overloaded)."""
        overloaded = "overloaded = 1" if "overloaded" in self._columns else "0"
        query = (f"SELECT error_kind, {overloaded}, COUNT(*) FROM games "
                 "WHERE error_kind IS NOT NULL GROUP BY 1, 2")  # fmt: skip
        return {(str(kind), bool(over)): int(n) for kind, over, n in self.db.execute(query)}

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
