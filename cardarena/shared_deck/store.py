"""SQLite persistence: players (with hashed secrets), tournaments, matches, the leaderboard.

A tournament is written twice: a ``running`` row when it starts (its number, seed and deck),
then everything else in one transaction when it finishes. A crash leaves at most a ``running``
row, which :meth:`Store.discard_unfinished` removes at the next start; the tournament is then
played again under the same number, seed and deck.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import sqlite3
import stat
import tempfile
import urllib.parse
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from .arena import MatchResult, TournamentResult
from .deck import deck_from_text, deck_to_text
from .protocol import ARGUMENT_COUNTS
from .rules import Card, RuleSet

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
"""Player names: short, printable, one word. Command names are refused as well, so that the
server can tell a command sent before login from a name."""

SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
SECRET_BYTES = 24

SCHEMA = """
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS players (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    secret_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    removed_at TEXT
);
CREATE TABLE IF NOT EXISTS tournaments (
    number INTEGER PRIMARY KEY,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'finished')),
    rules TEXT NOT NULL,
    deck TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE TABLE IF NOT EXISTS matches (
    id INTEGER PRIMARY KEY,
    tournament INTEGER NOT NULL REFERENCES tournaments (number),
    first_player INTEGER NOT NULL REFERENCES players (id),
    second_player INTEGER NOT NULL REFERENCES players (id),
    first_hp INTEGER NOT NULL,
    second_hp INTEGER NOT NULL,
    first_score INTEGER NOT NULL,
    second_score INTEGER NOT NULL,
    turns_played INTEGER NOT NULL,
    log TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS matches_by_tournament ON matches (tournament);
CREATE TABLE IF NOT EXISTS tournament_points (
    tournament INTEGER NOT NULL REFERENCES tournaments (number),
    player INTEGER NOT NULL REFERENCES players (id),
    points REAL NOT NULL,
    PRIMARY KEY (tournament, player)
);
CREATE TABLE IF NOT EXISTS leaderboard (
    player INTEGER PRIMARY KEY REFERENCES players (id),
    points REAL NOT NULL,
    tournaments INTEGER NOT NULL
);
"""


def hash_secret(secret: str) -> str:
    """A salted scrypt hash with its parameters, so that they can change later."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(secret.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${digest.hex()}"


def verify_secret(secret: str, stored: str) -> bool:
    """Whether ``secret`` matches a hash made by :func:`hash_secret` (constant-time compare)."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        computed = hashlib.scrypt(
            secret.encode(errors="replace"),
            salt=bytes.fromhex(salt),
            n=int(n),
            r=int(r),
            p=int(p),
        )
    except ValueError:
        return False
    return hmac.compare_digest(computed.hex(), digest)


@functools.cache
def dummy_hash() -> str:
    """Checked against for unknown names, so that a login takes as long whether the name exists."""
    return hash_secret(secrets.token_urlsafe(SECRET_BYTES))


def valid_player_name(name: str) -> bool:
    return NAME_PATTERN.fullmatch(name) is not None and name not in ARGUMENT_COUNTS


def check_player_name(name: str) -> None:
    """ValueError (the line to show) for a name no player may have."""
    if not valid_player_name(name):
        raise ValueError(
            f"invalid player name {name!r}: use 1-32 letters, digits, '_', '.', '-' "
            "(starting with a letter or digit), and not a command name"
        )


class DatabaseMissing(Exception):
    """The database file does not exist and this command does not create it."""


class DatabaseLocked(Exception):
    """Another ``shared-deck serve`` holds the database."""


class DatabaseRefused(Exception):
    """The path cannot be a shared-deck database: a folder, a file that is not SQLite, another
    application's SQLite database (a LOCM tournament's, ...), or a place where none can be
    made. Raised before anything is written; the message is one line naming the file."""


OUR_TABLES = frozenset(
    {"settings", "players", "tournaments", "matches", "tournament_points", "leaderboard"}
)
"""The tables of SCHEMA: a database with other tables is another application's."""
SQLITE_HEADER = b"SQLite format 3\x00"


def check_database(path: str | Path) -> None:
    """Refuse, touching nothing, a path that exists and is not a shared-deck database.

    A missing path or an empty file passes (it is made into a database as before), and so does
    a SQLite file with no table yet or with shared-deck's tables only. Nothing is written: the
    header is read as bytes and the schema through ``immutable=1`` (read-only where a ``-wal``
    file says the database is in use).

    Call it only before this process opens the database (the command line does, for every
    command, and :class:`~.server.GameServer` before its lock): closing a descriptor of a
    file drops every POSIX lock this process holds on it, SQLite's included. A :class:`Store`
    checks the tables again through its own connection (:func:`_check_tables`).
    """
    path = Path(path)
    if not _check_place(path):
        return
    try:
        with path.open("rb") as file:
            header = file.read(len(SQLITE_HEADER))
    except OSError as error:
        raise DatabaseRefused(f"database {path} cannot be read: {error.strerror}") from None
    if header != SQLITE_HEADER:
        raise DatabaseRefused(f"database {path} is not a SQLite database; nothing was changed")
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    try:
        if wal.exists() and not shm.exists():
            # Reading a write-ahead log needs its shared-memory index, which SQLite would
            # create beside the file even read-only: read a copy of both instead.
            with tempfile.TemporaryDirectory(prefix="shared-deck-check-") as folder:
                copy = Path(folder) / "check.db"
                shutil.copyfile(path, copy)
                shutil.copyfile(wal, f"{copy}-wal")
                _check_schema(copy, "mode=ro", path)
        else:
            # With a live log (its -shm beside it), read through it; without one, the file
            # is the whole database and ``immutable=1`` reads it without any side file.
            _check_schema(path, "mode=ro" if wal.exists() else "mode=ro&immutable=1", path)
    except OSError as error:
        raise DatabaseRefused(f"database {path} cannot be read: {error.strerror}") from None


def _check_schema(file: Path, options: str, path: Path) -> None:
    """Open ``file`` read-only with the URI ``options`` and check its tables (``path`` is the
    database as the user named it, for the message)."""
    uri = f"file:{urllib.parse.quote(str(file))}?{options}"
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=30.0)) as connection:
            _check_tables(connection, path)
    except sqlite3.Error as error:
        raise DatabaseRefused(
            f"database {path} cannot be read as SQLite ({error}); nothing was changed"
        ) from None


def _check_place(path: Path) -> bool:
    """Whether something is at ``path`` to be checked (False: nothing, or an empty file); a
    folder or a device is refused. Only ``stat``: no descriptor is opened."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return False
    except OSError as error:
        raise DatabaseRefused(f"database {path} cannot be read: {error.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise DatabaseRefused(f"database {path} is a directory, not a database file")
    if not stat.S_ISREG(info.st_mode):
        raise DatabaseRefused(f"database {path} is not a regular file")
    return info.st_size > 0


def _check_tables(connection: sqlite3.Connection, path: Path) -> None:
    """Refuse a database with tables that are not shared-deck's (read only, nothing written)."""
    try:
        tables = {
            name
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not name.startswith("sqlite_")
        }
    except sqlite3.DatabaseError as error:
        if "not a database" in str(error):
            raise DatabaseRefused(
                f"database {path} is not a SQLite database; nothing was changed"
            ) from None
        raise
    if not tables or (tables <= OUR_TABLES and {"players", "tournaments"} <= tables):
        return
    if {"games", "meta"} <= tables:
        raise DatabaseRefused(
            f"database {path} is a LOCM tournament database, not a shared-deck one;"
            " nothing was changed"
        )
    raise DatabaseRefused(
        f"database {path} is another application's SQLite database (tables: "
        f"{', '.join(sorted(tables)[:6])}{', ...' if len(tables) > 6 else ''}),"
        " not a shared-deck one; nothing was changed"
    )


@dataclass(frozen=True, slots=True)
class StandingRow:
    """One line of the leaderboard."""

    player: str
    points: float
    tournaments: int
    removed: bool = False


@dataclass(frozen=True, slots=True)
class StoredTournament:
    """A finished tournament read back: enough to replay every match."""

    number: int
    seed: int
    rules: RuleSet
    deck: tuple[Card, ...]
    points: dict[str, float]
    matches: tuple[MatchResult, ...]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def lock_path(path: str | Path) -> Path:
    return Path(f"{path}.lock")


class ServerLock:
    """An exclusive ``flock`` on ``DB.lock``: one server per database.

    The lock belongs to the open file description, so the kernel drops it when the process
    dies, however it dies (the file, with the process id in it, then stays until the next
    server takes it). The holder removes the file when it lets go, while it still holds the
    lock; so whoever takes the lock checks that the file it locked is still the one at the
    path, and tries again if it is not. A server refused here leaves the holder's file alone,
    and a file it made itself is removed again.
    """

    def __init__(self, db_path: str | Path) -> None:
        self.path = lock_path(db_path)
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            except FileExistsError:
                try:
                    fd = os.open(self.path, os.O_RDWR | os.O_CLOEXEC)
                except FileNotFoundError:  # removed by its holder meanwhile: make it again
                    continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
                os.close(fd)
                by = f" (process {holder})" if holder.isdigit() else ""
                raise DatabaseLocked(
                    f"database {db_path} is already served by another shared-deck serve{by};"
                    f" lock file {self.path}"
                ) from None
            if _same_file(fd, self.path):
                break
            os.close(fd)  # its holder removed it after we opened it: take the new one
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd: int | None = fd

    def release(self) -> None:
        """Remove the lock file, then let go of the lock (in that order: see the class)."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                if _same_file(self.fd, self.path):
                    self.path.unlink()
            os.close(self.fd)  # closing the only descriptor releases the flock
            self.fd = None


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        named = path.stat()
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


class Store:
    """One connection to the database; use one Store per thread.

    ``create=False`` refuses a path that does not exist (a mistyped ``--db`` must not make an
    empty database); ``read_only=True`` opens it for reading only, so that a reader needs no
    write access. A database it creates is made owner-only (0600) before SQLite writes to it;
    SQLite gives its WAL and shared-memory files the database file's permissions.
    """

    def __init__(self, path: str | Path, *, create: bool = True, read_only: bool = False) -> None:
        path = Path(path)
        _check_place(path)  # a folder: one clear line (SQLite would say "disk I/O error")
        if not path.exists():
            if read_only or not create:
                raise DatabaseMissing(f"database {path} does not exist")
            try:
                os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
            except FileExistsError:
                pass  # made meanwhile by another process
            except OSError as error:  # no such folder, no permission
                raise DatabaseRefused(
                    f"database {path} cannot be created: {error.strerror}"
                ) from None
        self.read_only = read_only
        uri = f"file:{urllib.parse.quote(str(path))}?mode={'ro' if read_only else 'rw'}"
        if read_only:
            self.connection = self._open_read_only(uri)
            self._check_tables(path)
            self._removed_column = "removed_at" in self._player_columns()
            return
        self.connection = sqlite3.connect(
            uri, uri=True, isolation_level=None, check_same_thread=False, timeout=30.0
        )
        self._check_tables(path)  # before anything is written
        self.connection.execute("PRAGMA journal_mode = WAL")
        self.connection.execute("PRAGMA synchronous = FULL")
        self.connection.execute("PRAGMA foreign_keys = ON")
        self.connection.executescript(SCHEMA)  # idempotent: every statement is IF NOT EXISTS
        if "removed_at" not in self._player_columns():  # a database made before removal existed
            try:
                self.connection.execute("ALTER TABLE players ADD COLUMN removed_at TEXT")
            except sqlite3.OperationalError as error:  # unless another process just did it
                if "duplicate column" not in str(error):
                    raise
        self._removed_column = True

    @staticmethod
    def _open_read_only(uri: str) -> sqlite3.Connection:
        """Read-only, also where nothing can be written: a WAL database needs its ``-shm``
        file, and on a read-only file system that cannot be made, so the file is then read
        as immutable (nobody can be writing it there either)."""
        for suffix in ("", "&immutable=1"):
            connection = sqlite3.connect(
                uri + suffix, uri=True, isolation_level=None, check_same_thread=False, timeout=30
            )
            try:
                connection.execute("PRAGMA query_only = ON")
                connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError:
                connection.close()
                if suffix:
                    raise
                continue
            return connection
        raise AssertionError("unreachable")

    def _check_tables(self, path: Path) -> None:
        try:
            _check_tables(self.connection, path)
        except BaseException:
            self.connection.close()
            raise

    def _player_columns(self) -> set[str]:
        return {row[1] for row in self.connection.execute("PRAGMA table_info(players)")}

    @property
    def _active(self) -> str:
        """SQL condition on players ``p``: not removed."""
        return "p.removed_at IS NULL" if self._removed_column else "1"

    def close(self) -> None:
        self.connection.close()

    def _transaction(self) -> _Transaction:
        """``with store._transaction():`` runs a block as one IMMEDIATE transaction."""
        return _Transaction(self.connection)

    # ----------------------------------------------------------------- players
    def add_player(self, name: str) -> str:
        """Register a player and return its new secret; only its hash is stored."""
        check_player_name(name)
        secret = secrets.token_urlsafe(SECRET_BYTES)
        try:
            with self._transaction():
                self.connection.execute(
                    "INSERT INTO players (name, secret_hash, created_at) VALUES (?, ?, ?)",
                    (name, hash_secret(secret), _now()),
                )
        except sqlite3.IntegrityError:
            raise ValueError(f"player {name!r} already exists") from None
        return secret

    def rotate_secret(self, name: str) -> str:
        """Give a player a new secret (returned once); the old one stops working at once."""
        secret = secrets.token_urlsafe(SECRET_BYTES)
        with self._transaction():
            changed = self.connection.execute(
                "UPDATE players SET secret_hash = ? WHERE name = ? AND removed_at IS NULL",
                (hash_secret(secret), name),
            ).rowcount
        if not changed:
            raise ValueError(f"no player {name!r}")
        return secret

    def remove_player(self, name: str) -> None:
        """Stop a player from logging in and from joining tournaments; keep its history (its
        matches, points and leaderboard line), so its name stays taken."""
        with self._transaction():
            changed = self.connection.execute(
                "UPDATE players SET removed_at = ? WHERE name = ? AND removed_at IS NULL",
                (_now(), name),
            ).rowcount
        if not changed:
            raise ValueError(f"no player {name!r}")

    def player_names(self) -> list[str]:
        """The players who may log in and play: registered and not removed."""
        return [
            row[0]
            for row in self.connection.execute(
                f"SELECT name FROM players p WHERE {self._active} ORDER BY name"
            )
        ]

    def secret_hash(self, name: str) -> str | None:
        """The stored hash of a player who may log in; None for unknown or removed names."""
        row = self.connection.execute(
            f"SELECT secret_hash FROM players p WHERE name = ? AND {self._active}", (name,)
        ).fetchone()
        return None if row is None else row[0]

    # ---------------------------------------------------------------- settings
    def base_seed(self, requested: int | None) -> int:
        """The server's base seed: the requested one, else the stored one, else a new one."""
        if requested is None:
            row = self.connection.execute(
                "SELECT value FROM settings WHERE key = 'base_seed'"
            ).fetchone()
            if row is not None:
                return int(row[0])
            requested = secrets.randbits(63)
        with self._transaction():
            self.connection.execute(
                "INSERT OR REPLACE INTO settings (key, value) VALUES ('base_seed', ?)",
                (str(requested),),
            )
        return requested

    # ------------------------------------------------------------- tournaments
    def discard_unfinished(self) -> list[int]:
        """Remove tournaments that were running when the server stopped; returns their numbers."""
        with self._transaction():
            numbers = [
                row[0]
                for row in self.connection.execute(
                    "SELECT number FROM tournaments WHERE status = 'running'"
                )
            ]
            for number in numbers:
                self.connection.execute("DELETE FROM matches WHERE tournament = ?", (number,))
                self.connection.execute(
                    "DELETE FROM tournament_points WHERE tournament = ?", (number,)
                )
                self.connection.execute("DELETE FROM tournaments WHERE number = ?", (number,))
        return numbers

    def next_numbers(self) -> tuple[int, int]:
        """The next tournament number and the next match id."""
        (tournament,) = self.connection.execute(
            "SELECT COALESCE(MAX(number), 0) + 1 FROM tournaments"
        ).fetchone()
        (match_id,) = self.connection.execute(
            "SELECT COALESCE(MAX(id), 0) + 1 FROM matches"
        ).fetchone()
        return tournament, match_id

    def begin_tournament(
        self, number: int, seed: int, rules: RuleSet, deck: tuple[Card, ...]
    ) -> None:
        """Record that a tournament started, with the seed and deck that define it."""
        with self._transaction():
            self.connection.execute(
                "INSERT INTO tournaments (number, seed, status, rules, deck, started_at) "
                "VALUES (?, ?, 'running', ?, ?, ?)",
                (number, seed, json.dumps(asdict(rules)), deck_to_text(deck), _now()),
            )

    def finish_tournament(self, result: TournamentResult) -> None:
        """Store a finished tournament's matches, points and leaderboard in one transaction."""
        with self._transaction():
            ids = dict(self.connection.execute("SELECT name, id FROM players"))
            self.connection.execute(
                "INSERT OR IGNORE INTO tournaments (number, seed, status, rules, deck, started_at)"
                " VALUES (?, ?, 'running', ?, ?, ?)",
                (
                    result.number,
                    result.seed,
                    json.dumps(asdict(result.rules)),
                    deck_to_text(result.deck),
                    _now(),
                ),
            )
            self.connection.executemany(
                "INSERT INTO matches (id, tournament, first_player, second_player, first_hp,"
                " second_hp, first_score, second_score, turns_played, log)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (
                        match.match_id,
                        result.number,
                        ids[match.first],
                        ids[match.second],
                        match.first_hp,
                        match.second_hp,
                        match.first_score,
                        match.second_score,
                        match.turns_played,
                        match.log,
                    )
                    for match in result.matches
                ),
            )
            for player, points in result.points.items():
                self.connection.execute(
                    "INSERT INTO tournament_points (tournament, player, points) VALUES (?, ?, ?)",
                    (result.number, ids[player], points),
                )
                self.connection.execute(
                    "INSERT INTO leaderboard (player, points, tournaments) VALUES (?, ?, 1)"
                    " ON CONFLICT (player) DO UPDATE SET points = points + excluded.points,"
                    " tournaments = tournaments + 1",
                    (ids[player], points),
                )
            self.connection.execute(
                "UPDATE tournaments SET status = 'finished', finished_at = ? WHERE number = ?",
                (_now(), result.number),
            )

    # ------------------------------------------------------------------ reading
    def leaderboard(self) -> list[StandingRow]:
        """Every registered player, best first; players without a tournament have 0 points."""
        rows = self.connection.execute(
            "SELECT p.name, COALESCE(l.points, 0.0), COALESCE(l.tournaments, 0),"
            f" NOT ({self._active}) FROM players p LEFT JOIN leaderboard l ON l.player = p.id"
            " ORDER BY 2 DESC, p.name"
        )
        return [StandingRow(name, points, count, bool(gone)) for name, points, count, gone in rows]

    def finished_tournaments(self) -> list[int]:
        return [
            row[0]
            for row in self.connection.execute(
                "SELECT number FROM tournaments WHERE status = 'finished' ORDER BY number"
            )
        ]

    def tournament(self, number: int) -> StoredTournament:
        """A finished tournament with its matches and their action logs."""
        row = self.connection.execute(
            "SELECT seed, rules, deck FROM tournaments WHERE number = ? AND status = 'finished'",
            (number,),
        ).fetchone()
        if row is None:
            raise KeyError(f"no finished tournament {number}")
        seed, rules_json, deck_text = row
        points = dict(
            self.connection.execute(
                "SELECT p.name, t.points FROM tournament_points t JOIN players p"
                " ON p.id = t.player WHERE t.tournament = ?",
                (number,),
            )
        )
        rows = self.connection.execute(
            "SELECT m.id, a.name, b.name, m.first_hp, m.second_hp, m.first_score,"
            " m.second_score, m.turns_played, m.log FROM matches m"
            " JOIN players a ON a.id = m.first_player"
            " JOIN players b ON b.id = m.second_player"
            " WHERE m.tournament = ? ORDER BY m.id",
            (number,),
        )
        matches = tuple(MatchResult(*row) for row in rows)
        rules = RuleSet(**json.loads(rules_json))
        return StoredTournament(number, seed, rules, deck_from_text(deck_text), points, matches)

    def match(self, match_id: int) -> StoredMatch:
        """One match of a finished tournament, with what is needed to replay it."""
        row = self.connection.execute(
            "SELECT m.id, a.name, b.name, m.first_hp, m.second_hp, m.first_score,"
            " m.second_score, m.turns_played, m.log, t.number, t.seed, t.rules, t.deck"
            " FROM matches m JOIN tournaments t ON t.number = m.tournament"
            " JOIN players a ON a.id = m.first_player"
            " JOIN players b ON b.id = m.second_player"
            " WHERE m.id = ? AND t.status = 'finished'",
            (match_id,),
        ).fetchone()
        if row is None:
            raise KeyError(f"no stored match {match_id}")
        result = MatchResult(*row[:9])
        number, seed, rules_json, deck_text = row[9:]
        rules = RuleSet(**json.loads(rules_json))
        return StoredMatch(number, seed, rules, deck_from_text(deck_text), result)

    # ------------------------------------------------------ browsing (dashboard)
    def tournament_summaries(self) -> list[TournamentSummary]:
        """Every finished tournament, newest first, with its size and its best player."""
        rows = self.connection.execute(
            "SELECT t.number, t.seed, t.started_at, t.finished_at,"
            " (SELECT COUNT(*) FROM matches m WHERE m.tournament = t.number),"
            " (SELECT COUNT(*) FROM tournament_points s WHERE s.tournament = t.number),"
            " (SELECT p.name FROM tournament_points s JOIN players p ON p.id = s.player"
            "  WHERE s.tournament = t.number ORDER BY s.points DESC, p.name LIMIT 1)"
            " FROM tournaments t WHERE t.status = 'finished' ORDER BY t.number DESC"
        )
        return [TournamentSummary(*row) for row in rows]

    def points_by_tournament(self, player: str | None = None) -> dict[int, dict[str, float]]:
        """Points of every player (or one) in every finished tournament: {number: {name: pts}}."""
        query = (
            "SELECT s.tournament, p.name, s.points FROM tournament_points s"
            " JOIN players p ON p.id = s.player"
        )
        rows = (
            self.connection.execute(query + " WHERE p.name = ?", (player,))
            if player is not None
            else self.connection.execute(query)
        )
        table: dict[int, dict[str, float]] = {}
        for number, name, points in rows:
            table.setdefault(number, {})[name] = points
        return table

    def player_matches(self, player: str, limit: int) -> list[tuple[int, MatchResult]]:
        """A player's last ``limit`` stored matches, newest first, with their tournament."""
        rows = self.connection.execute(
            "SELECT m.tournament, m.id, a.name, b.name, m.first_hp, m.second_hp, m.first_score,"
            " m.second_score, m.turns_played, '' FROM matches m"
            " JOIN players a ON a.id = m.first_player"
            " JOIN players b ON b.id = m.second_player"
            " WHERE a.name = ? OR b.name = ? ORDER BY m.id DESC LIMIT ?",
            (player, player, limit),
        )
        return [(row[0], MatchResult(*row[1:])) for row in rows]


@dataclass(frozen=True, slots=True)
class TournamentSummary:
    """One line of the list of finished tournaments."""

    number: int
    seed: int
    started_at: str
    finished_at: str | None
    matches: int
    players: int
    best: str | None


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """A stored match and its tournament's deck and rules."""

    tournament: int
    seed: int
    rules: RuleSet
    deck: tuple[Card, ...]
    result: MatchResult


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on an exception."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def __enter__(self) -> sqlite3.Connection:
        self.connection.execute("BEGIN IMMEDIATE")
        return self.connection

    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None:
        if exc_type is None:
            try:
                self.connection.execute("COMMIT")
            except sqlite3.Error:
                self._rollback()
                raise
        else:
            self._rollback()

    def _rollback(self) -> None:
        """Undo what is left to undo: after a full disk or an I/O error SQLite may already
        have rolled the transaction back, and a second ROLLBACK would hide the first error."""
        if self.connection.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self.connection.execute("ROLLBACK")
