"""The ladder's record of truth: one SQLite file, written by the server process only.

Participants (a token each, stored as its SHA-256 only), their bots, every submitted
version of a bot (the uploaded archive itself, its build log and command, its status and
its online rating), every game (queued, leased to a worker, done: its result and its
compressed log), the rating history and the organiser's switches (paused, submissions
frozen). WAL mode: the web pages read while the scheduler writes.

A game's result and the ratings it moves are written in one transaction, and a game is
finished at most once: a result that comes back twice (a lease that expired and was played
again, a worker that answered late) is ignored the second time. After a crash or
``kill -9`` every leased game is still ``leased`` in the file: :meth:`LadderStore.expire_leases`
queues them again, so no finished game is lost and none counts twice.

Every problem with the file itself is a :class:`StoreError` with a one-line message; a
refused request (a name taken, a bot of someone else) is a :class:`LadderError`.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import hmac
import os
import re
import secrets
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..tournaments.store import (
    REFEREE,
    GameRecord,
    StoreError,
    check_place,
    decompress_log,
    describe,
)
from .matchmaking import Entrant
from .ratings import INITIAL, Rating, after_game, conservative, new_version

__all__ = [
    "BOT_STATUSES",
    "GAME_KINDS",
    "GAME_STATES",
    "BoardRow",
    "BotPage",
    "DisableRule",
    "Entrant",
    "GameRow",
    "HeadToHead",
    "LadderError",
    "LadderLocked",
    "LadderStore",
    "LeasedGame",
    "StoreError",
    "User",
    "VersionRow",
]

SCHEMA_VERSION = "1"
BOT_STATUSES = ("building", "failed", "validating", "active", "disabled", "retired")
GAME_KINDS = ("validation", "rated", "ab", "final")
GAME_STATES = ("queued", "leased", "done")
PLAYING = ("active",)
"""The statuses of a version that plays rated games."""
FILE_MODE = 0o600
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
"""User and bot names: 1-40 letters, digits, '-', '_' and '.', starting with a letter or digit."""
MAX_REFEREE_ATTEMPTS = 3
"""A game the platform failed (a worker lost, the referee failed) is queued again, at most
this many times in all; then it is kept as done, unrated (a bot command that no longer
starts, say, must not keep a worker busy forever)."""
DEFAULT_LEASE_S = 900.0
"""A leased game not finished within this time is queued again (a worker that vanished)."""
TIMEOUT = "timeout"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_sha256 TEXT NOT NULL UNIQUE,
    organiser INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE bots (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    owner INTEGER NOT NULL REFERENCES users(id),
    status TEXT NOT NULL,
    reason TEXT,
    created REAL NOT NULL
);
CREATE TABLE versions (
    id INTEGER PRIMARY KEY,
    bot INTEGER NOT NULL REFERENCES bots(id),
    number INTEGER NOT NULL,
    language TEXT NOT NULL,
    filename TEXT NOT NULL,
    archive BLOB NOT NULL,
    build_log TEXT,
    command TEXT,
    folder TEXT,
    status TEXT NOT NULL,
    reason TEXT,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    rated_games INTEGER NOT NULL DEFAULT 0,
    wins INTEGER NOT NULL DEFAULT 0,
    draws INTEGER NOT NULL DEFAULT 0,
    losses INTEGER NOT NULL DEFAULT 0,
    last_played REAL NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    UNIQUE (bot, number)
);
CREATE INDEX versions_status ON versions(status);
CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    pair INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    first INTEGER REFERENCES versions(id),
    second INTEGER REFERENCES versions(id),
    opponent TEXT,
    state TEXT NOT NULL,
    priority INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_expires REAL,
    winner INTEGER,
    result TEXT,
    end_reason TEXT,
    error_seat INTEGER,
    error_kind TEXT,
    detail TEXT,
    log BLOB,
    replay TEXT,
    turns INTEGER,
    duration_s REAL,
    rated INTEGER NOT NULL DEFAULT 0,
    queued_at REAL NOT NULL,
    finished_at REAL
);
CREATE INDEX games_state ON games(state, priority, id);
CREATE INDEX games_first ON games(first, id);
CREATE INDEX games_second ON games(second, id);
CREATE INDEX games_pair ON games(pair);
CREATE TABLE ratings (
    id INTEGER PRIMARY KEY,
    version INTEGER NOT NULL REFERENCES versions(id),
    game INTEGER NOT NULL REFERENCES games(id),
    mu REAL NOT NULL,
    sigma REAL NOT NULL
);
CREATE INDEX ratings_version ON ratings(version, id);
CREATE TABLE results (
    version INTEGER NOT NULL REFERENCES versions(id),
    opponent INTEGER NOT NULL REFERENCES versions(id),
    wins INTEGER NOT NULL DEFAULT 0,
    draws INTEGER NOT NULL DEFAULT 0,
    losses INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (version, opponent)
) WITHOUT ROWID;
CREATE INDEX games_errors ON games(error_kind) WHERE error_kind IS NOT NULL;
"""
_OUR_TABLES = frozenset(
    ("meta", "settings", "users", "bots", "versions", "games", "ratings", "results")
)
SETTINGS = ("paused", "frozen")
"""The organiser's switches: ``paused`` (no new game starts), ``frozen`` (no submission)."""


class LadderError(ValueError):
    """A request the ladder refuses (a name taken, another's bot, frozen): one line."""


class LadderLocked(StoreError, RuntimeError):
    """Another server process is using this database."""


@dataclass(frozen=True)
class User:
    id: int
    name: str
    organiser: bool


@dataclass(frozen=True)
class DisableRule:
    """Disable a playing version charged with ``limit`` or more errors (crash, timeout,
    memory, invalid answer...) in its last ``window`` rated games."""

    window: int = 10
    limit: int = 6


@dataclass(frozen=True)
class LeasedGame:
    """A game handed to a worker: who plays, with which seed, and its lease."""

    id: int
    kind: str
    pair: int
    seed: int
    first: str
    """The first seat's name: the bot's name and version (``name.v2``) or the built-in."""
    second: str
    commands: tuple[str, str]
    versions: tuple[int | None, int | None]
    """The versions in the seats; None for a built-in opponent (validation games)."""
    lease_owner: str
    lease_expires: float


@dataclass(frozen=True)
class BoardRow:
    rank: int
    name: str
    owner: str
    status: str
    reason: str | None
    version: int
    """The version number on the board (the newest one that played, else the newest)."""
    language: str
    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float | None
    mu: float
    sigma: float
    rating: float
    """The conservative rating (mu - 3 sigma) the board ranks by."""


@dataclass(frozen=True)
class VersionRow:
    id: int
    bot: str
    number: int
    language: str
    filename: str
    status: str
    reason: str | None
    build_log: str | None
    command: str | None
    mu: float
    sigma: float
    rating: float
    rated_games: int
    created: float
    owner: str


@dataclass(frozen=True)
class GameRow:
    id: int
    kind: str
    pair: int
    seed: int
    first: str
    second: str
    state: str
    winner: int | None
    result: str | None
    end_reason: str | None
    error_seat: int | None
    error_kind: str | None
    detail: str | None
    replay: str | None
    turns: int | None
    duration_s: float | None
    rated: bool
    queued_at: float
    finished_at: float | None


@dataclass(frozen=True)
class HeadToHead:
    opponent: str
    games: int
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True)
class BotPage:
    name: str
    owner: str
    status: str
    reason: str | None
    versions: list[VersionRow]
    head_to_head: list[HeadToHead]
    history: list[tuple[int, int, float, float]]
    """(version number, game id, mu, sigma) after each rated game, oldest first."""
    recent: list[GameRow]
    errors: dict[str, int]
    """How many games each error kind charged to this bot lost (all versions)."""


F = TypeVar("F", bound=Callable[..., Any])


def _locked(method: F) -> F:
    """One thread at a time in the store (the web thread and the scheduler share it)."""

    @functools.wraps(method)
    def wrapper(self: LadderStore, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


TOKEN_PREFIX = "ladder_"
"""Every token starts with it: a bare random token may start with "-", which a command line
such as ``locm ladder submit --token TOKEN`` then reads as an option (a secret scanner also
knows the tokens by it)."""


def new_secret() -> str:
    """A fresh participant's token: the prefix and 256 random bits."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(name: str, what: str) -> str:
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise LadderError(
            f"{what} name {str(name)[:50]!r}: use 1-40 letters, digits, '-', '_' and '.', "
            "starting with a letter or digit"
        )
    return name


_OPEN: weakref.WeakSet[LadderStore] = weakref.WeakSet()


def _close_locks_in_child() -> None:
    """After a fork (a game worker): drop the child's copy of the lock descriptor, so only
    the server process holds the lock."""
    for store in list(_OPEN):
        fd, store._lock_fd = store._lock_fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


os.register_at_fork(after_in_child=_close_locks_in_child)


def _rating_of(mu: float, sigma: float) -> Rating:
    return Rating(mu=float(mu), sigma=float(sigma))


class LadderStore:
    """The ladder's database; use as a context manager. Thread-safe (one lock)."""

    def __init__(
        self,
        path: str,
        *,
        create: bool = True,
        lock: bool = False,
        disable_rule: DisableRule = DisableRule(),
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Open (and with ``create``, make) the ladder database at ``path``.

        ``lock``: take ``PATH.lock`` (the server does); a second server on the same file is
        refused with :class:`LadderLocked`. Without it (``locm ladder user add`` while the
        server runs) the store writes short transactions beside the server (SQLite's own
        locking; a busy file is waited on up to 30 s).
        """
        check_place(path, create, "ladder")
        self.path = path
        self.disable_rule = disable_rule
        self._clock = clock
        self._lock = threading.RLock()
        self._changes = 0
        self._lock_fd: int | None = None
        self._db: sqlite3.Connection | None = None
        try:
            if lock:
                self._take_lock()
            if not os.path.exists(path):  # sqlite gives the -wal and -shm files its mode
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
            self._db = sqlite3.connect(
                path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            try:
                ours = self._check_schema()
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
                self.db.execute("PRAGMA foreign_keys=ON")
                if not ours:
                    with self.transaction():
                        for statement in _SCHEMA.strip().split(";"):
                            if statement.strip():
                                self.db.execute(statement)
                        self.db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
                else:
                    self._check_version()
            except sqlite3.DatabaseError as error:
                raise StoreError(f"{path} {describe(error, 'ladder', 'cannot be used')}") from None
        except BaseException:
            self.close()
            raise
        _OPEN.add(self)

    # --- the file ------------------------------------------------------------------

    def _take_lock(self) -> None:
        lock_path = f"{self.path}.lock"
        try:
            self._lock_fd = os.open(lock_path, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, FILE_MODE)
        except OSError as error:
            raise StoreError(f"cannot open the lock file {lock_path}: {error.strerror}") from None
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock_fd)
            self._lock_fd = None
            raise LadderLocked(
                f"{self.path} is in use by another ladder server (lock {lock_path})"
            ) from None

    def _check_schema(self) -> bool:
        """True if the file is a ladder database; False if empty; else StoreError."""
        tables = {
            row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if not tables:
            return False
        if not tables >= _OUR_TABLES and {"meta", "versions", "games"} <= tables:
            raise StoreError(
                f"{self.path} is a ladder database of another version of cardarena (schema "
                f"{SCHEMA_VERSION} has other tables)"
            )
        if not tables >= _OUR_TABLES:
            raise StoreError(
                f"{self.path} is not a ladder database (its tables: {', '.join(sorted(tables))})"
            )
        return True

    def _check_version(self) -> None:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None or row[0] != SCHEMA_VERSION:
            found = "none" if row is None else repr(row[0])[:20]
            raise StoreError(
                f"{self.path} is a ladder database of another version (schema {found}, "
                f"this version reads {SCHEMA_VERSION})"
            )

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"{self.path} is closed")
        return self._db

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
            self._changes += 1

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            if self._lock_fd is not None:
                os.close(self._lock_fd)  # releases the flock
                self._lock_fd = None

    def __enter__(self) -> LadderStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- meta and settings ------------------------------------------------------------

    @_locked
    def meta(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    @_locked
    def configure(self, **settings: str) -> None:
        """Record the ladder's fixed settings (the game, its version) or check them: a ladder
        never mixes games of another version into its ratings."""
        with self.transaction():
            stored = self.meta()
            for key, value in settings.items():
                if key in stored and stored[key] != value:
                    raise StoreError(
                        f"{self.path} holds a ladder with {key}={stored[key]}, not "
                        f"{key}={value}; use another --db"
                    )
                self.db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (key, value))

    @_locked
    def settings(self) -> dict[str, bool]:
        """The organiser's switches (:data:`SETTINGS`), False unless set."""
        stored = dict(self.db.execute("SELECT key, value FROM settings").fetchall())
        return {name: stored.get(name) == "1" for name in SETTINGS}

    @_locked
    def set_setting(self, name: str, on: bool) -> None:
        if name not in SETTINGS:
            raise LadderError(f"unknown setting {name!r}; known: {', '.join(SETTINGS)}")
        with self.transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO settings VALUES (?, ?)", (name, "1" if on else "0")
            )

    # --- users ------------------------------------------------------------------------

    @_locked
    def add_user(self, name: str, organiser: bool = False) -> str:
        """Add a participant; return their new token (shown once: only its hash is kept)."""
        check_name(name, "user")
        token = new_secret()
        with self.transaction():
            if self.db.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone():
                raise LadderError(f"there is already a user named {name!r}")
            self.db.execute(
                "INSERT INTO users (name, token_sha256, organiser, created) VALUES (?, ?, ?, ?)",
                (name, token_hash(token), int(organiser), self._clock()),
            )
        return token

    @_locked
    def new_token(self, name: str) -> str:
        """Replace a participant's token (a lost one); the old one stops working."""
        token = new_secret()
        with self.transaction():
            cursor = self.db.execute(
                "UPDATE users SET token_sha256 = ? WHERE name = ?", (token_hash(token), name)
            )
            if cursor.rowcount != 1:
                raise LadderError(f"no user named {name!r}")
        return token

    @_locked
    def user_for_token(self, token: str) -> User | None:
        """The participant with this token, or None. Only the hash is looked up, and it is
        compared again in constant time (the index lookup is not the check)."""
        if not isinstance(token, str) or not token or len(token) > 200:
            return None
        wanted = token_hash(token)
        row = self.db.execute(
            "SELECT id, name, organiser, token_sha256 FROM users WHERE token_sha256 = ?",
            (wanted,),
        ).fetchone()
        if row is None or not hmac.compare_digest(str(row[3]), wanted):
            return None
        return User(int(row[0]), str(row[1]), bool(row[2]))

    @_locked
    def users(self) -> list[User]:
        rows = self.db.execute("SELECT id, name, organiser FROM users ORDER BY id")
        return [User(int(i), str(n), bool(o)) for i, n, o in rows]

    # --- bots and versions --------------------------------------------------------------

    @_locked
    def submit(
        self,
        user: User,
        bot: str,
        language: str,
        filename: str,
        archive: bytes,
        *,
        new_bot: bool = False,
    ) -> int:
        """Record a submission (status ``building``); return its version id.

        ``new_bot``: create the bot (refused if the name is taken); otherwise add a version
        to one of the user's bots. Refused while submissions are frozen (organisers may
        still submit).
        """
        check_name(bot, "bot")
        if self.settings()["frozen"] and not user.organiser:
            raise LadderError("submissions are frozen by the organiser")
        now = self._clock()
        with self.transaction():
            row = self.db.execute("SELECT id, owner FROM bots WHERE name = ?", (bot,)).fetchone()
            if new_bot:
                if row is not None:
                    raise LadderError(f"there is already a bot named {bot!r}")
                cursor = self.db.execute(
                    "INSERT INTO bots (name, owner, status, created) VALUES (?, ?, 'building', ?)",
                    (bot, user.id, now),
                )
                bot_id, number, previous = int(cursor.lastrowid or 0), 1, None
            else:
                if row is None:
                    raise LadderError(f"no bot named {bot!r} (a first submission needs --new-bot)")
                if int(row[1]) != user.id:
                    raise LadderError(f"the bot {bot!r} belongs to another participant")
                bot_id = int(row[0])
                last = self.db.execute(
                    "SELECT MAX(number) FROM versions WHERE bot = ?", (bot_id,)
                ).fetchone()[0]
                number = int(last or 0) + 1
                previous = self.db.execute(
                    "SELECT mu, sigma FROM versions WHERE bot = ? AND rated_games > 0 "
                    "ORDER BY number DESC LIMIT 1",
                    (bot_id,),
                ).fetchone()
            rating = INITIAL if previous is None else new_version(_rating_of(*previous))
            cursor = self.db.execute(
                "INSERT INTO versions (bot, number, language, filename, archive, status, mu, "
                "sigma, created) VALUES (?, ?, ?, ?, ?, 'building', ?, ?, ?)",
                (bot_id, number, language, filename, archive, rating.mu, rating.sigma, now),
            )
            version = int(cursor.lastrowid or 0)
            if not new_bot:
                self._supersede_pending(bot_id, version, number)
            self._refresh_bot(bot_id)
        return version

    def _supersede_pending(self, bot: int, version: int, number: int) -> None:
        """A new version replaces the bot's versions still building or validating: they would
        never play (the newest to pass its validation retires the older ones), so they are
        neither built nor validated. Many versions sent at once cost one build and one
        validation, not one each ahead of everyone's rated games."""
        rows = self.db.execute(
            "SELECT id FROM versions WHERE bot = ? AND id != ? AND status IN ('building', "
            "'validating')",
            (bot, version),
        ).fetchall()
        for (old,) in rows:
            self.db.execute(
                "DELETE FROM games WHERE state = 'queued' AND kind = 'validation' AND "
                "(first = ? OR second = ?)",
                (old, old),
            )
            self._set_status(int(old), "retired", f"replaced by version {number} before it played")

    @_locked
    def waiting_builds(self) -> list[tuple[int, str, str, bytes]]:
        """(version id, language, filename, archive) of every version still to build,
        oldest first (after a restart: the builds the last run did not finish)."""
        rows = self.db.execute(
            "SELECT id, language, filename, archive FROM versions WHERE status = 'building' "
            "ORDER BY id"
        )
        return [(int(i), str(lang), str(f), bytes(a)) for i, lang, f, a in rows]

    @_locked
    def record_build(
        self, version: int, ok: bool, log: str, command: str | None, folder: str | None
    ) -> None:
        """A build finished: ``validating`` (it will play its validation games) or ``failed``."""
        with self.transaction():
            status, reason = ("validating", None) if ok else ("failed", "the build failed")
            if ok and not command:
                status, reason = "failed", "the build gave no command to run"
            self.db.execute(
                "UPDATE versions SET build_log = ?, command = ?, folder = ?, status = ?, "
                "reason = ? WHERE id = ? AND status = 'building'",
                (log, command, folder, status, reason, version),
            )
            self._refresh_bot(self._bot_of(version))

    @_locked
    def missing_builds(self) -> list[tuple[int, str, str, bytes]]:
        """(version id, language, filename, archive) of every built version that may still
        play and whose built folder is gone (a database restored from a backup, or moved):
        built again before any game, or each game would be a crash."""
        rows = self.db.execute(
            "SELECT id, language, filename, archive, folder FROM versions WHERE folder IS NOT "
            "NULL AND status IN ('validating', 'active', 'disabled') ORDER BY id"
        ).fetchall()
        return [
            (int(i), str(lang), str(f), bytes(a))
            for i, lang, f, a, folder in rows
            if not os.path.isdir(folder)
        ]

    @_locked
    def record_rebuild(
        self, version: int, ok: bool, log: str, command: str | None, folder: str | None
    ) -> None:
        """A missing build was made again: the version keeps its status and rating (only
        where it runs from changes); one that no longer builds is ``failed``."""
        with self.transaction():
            if ok and command:
                self.db.execute(
                    "UPDATE versions SET command = ?, folder = ? WHERE id = ?",
                    (command, folder, version),
                )
                return
            self.db.execute("UPDATE versions SET build_log = ? WHERE id = ?", (log, version))
            self._set_status(version, "failed", "its build was lost and it no longer builds")

    @_locked
    def set_status(self, version: int, status: str, reason: str | None = None) -> None:
        """Change a version's status (the organiser: disable, retire, enable again)."""
        if status not in BOT_STATUSES:
            raise LadderError(f"unknown status {status!r}; known: {', '.join(BOT_STATUSES)}")
        with self.transaction():
            self._set_status(version, status, reason)

    def _set_status(self, version: int, status: str, reason: str | None) -> None:
        self.db.execute(
            "UPDATE versions SET status = ?, reason = ? WHERE id = ?", (status, reason, version)
        )
        if status not in PLAYING:  # its queued games will not be played
            self.db.execute(
                "DELETE FROM games WHERE state = 'queued' AND kind != 'validation' "
                "AND (first = ? OR second = ?)",
                (version, version),
            )
        self._refresh_bot(self._bot_of(version))

    def _bot_of(self, version: int) -> int:
        row = self.db.execute("SELECT bot FROM versions WHERE id = ?", (version,)).fetchone()
        if row is None:
            raise LadderError(f"no version {version}")
        return int(row[0])

    def _board_version(self, bot: int) -> tuple[int, str, str | None] | None:
        """(id, status, reason) of the version a bot is shown by: the one that plays, else
        the newest."""
        row = self.db.execute(
            "SELECT id, status, reason FROM versions WHERE bot = ? "
            "ORDER BY status = 'active' DESC, number DESC LIMIT 1",
            (bot,),
        ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]), row[2])

    def _refresh_bot(self, bot: int) -> None:
        """Keep the bot's status and reason those of the version it is shown by."""
        shown = self._board_version(bot)
        if shown is not None:
            self.db.execute(
                "UPDATE bots SET status = ?, reason = ? WHERE id = ?", (shown[1], shown[2], bot)
            )

    def _activate(self, version: int) -> None:
        """A version passed its validation: it plays, and the bot's older versions retire."""
        bot = self._bot_of(version)
        older = self.db.execute(
            "SELECT id FROM versions WHERE bot = ? AND id != ? AND status IN ('active', "
            "'validating', 'building')",
            (bot, version),
        ).fetchall()
        for (old,) in older:
            if old < version:
                self._set_status(int(old), "retired", "replaced by a newer version")
        self._set_status(version, "active", None)

    @_locked
    def version(self, version: int) -> VersionRow | None:
        rows = self._version_rows("v.id = ?", (version,))
        return rows[0] if rows else None

    def _version_rows(self, where: str, args: Sequence[Any]) -> list[VersionRow]:
        query = (
            "SELECT v.id, b.name, v.number, v.language, v.filename, v.status, v.reason, "
            "v.build_log, v.command, v.mu, v.sigma, v.rated_games, v.created, u.name "
            "FROM versions v JOIN bots b ON b.id = v.bot JOIN users u ON u.id = b.owner "
            f"WHERE {where} ORDER BY v.id"
        )
        return [
            VersionRow(
                id=int(r[0]),
                bot=str(r[1]),
                number=int(r[2]),
                language=str(r[3]),
                filename=str(r[4]),
                status=str(r[5]),
                reason=r[6],
                build_log=r[7],
                command=r[8],
                mu=float(r[9]),
                sigma=float(r[10]),
                rating=conservative(_rating_of(r[9], r[10])),
                rated_games=int(r[11]),
                created=float(r[12]),
                owner=str(r[13]),
            )
            for r in self.db.execute(query, tuple(args))
        ]

    @_locked
    def versions(self, status: str | None = None) -> list[VersionRow]:
        if status is None:
            return self._version_rows("1", ())
        return self._version_rows("v.status = ?", (status,))

    @_locked
    def commands(self) -> list[str]:
        """Every built version's command (a bot may not read what the others name)."""
        rows = self.db.execute("SELECT command FROM versions WHERE command IS NOT NULL")
        return [str(r[0]) for r in rows]

    def _label(self, version: int | None, opponent: str | None) -> str:
        if version is None:
            return opponent or "?"
        row = self.db.execute(
            "SELECT b.name, v.number FROM versions v JOIN bots b ON b.id = v.bot WHERE v.id = ?",
            (version,),
        ).fetchone()
        return f"{row[0]}.v{row[1]}" if row else f"version {version}"

    # --- games: queue, lease, finish ------------------------------------------------------

    @_locked
    def queue_pair(
        self,
        kind: str,
        seed: int,
        first: int | None,
        second: int | None,
        *,
        opponent: str | None = None,
    ) -> int:
        """Queue two games with one seed, seats swapped; return the pair id.

        ``first``/``second`` are version ids; one may be None for a built-in ``opponent``
        (validation games).
        """
        if kind not in GAME_KINDS:
            raise LadderError(f"unknown game kind {kind!r}; known: {', '.join(GAME_KINDS)}")
        if (first is None or second is None) and not opponent:
            raise LadderError("a seat without a version needs a built-in opponent")
        priority = 0 if kind == "validation" else 1
        now = self._clock()
        with self.transaction():
            last = self.db.execute("SELECT MAX(pair) FROM games").fetchone()[0]
            pair = int(last or 0) + 1
            for a, b in ((first, second), (second, first)):
                self.db.execute(
                    "INSERT INTO games (kind, pair, seed, first, second, opponent, state, "
                    "priority, queued_at) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)",
                    (kind, pair, seed, a, b, opponent, priority, now),
                )
        return pair

    @_locked
    def in_flight(self) -> dict[int, int]:
        """Games queued or leased per version."""
        counts: dict[int, int] = {}
        for a, b in self.db.execute(
            "SELECT first, second FROM games WHERE state IN ('queued', 'leased')"
        ):
            for version in (a, b):
                if version is not None:
                    counts[int(version)] = counts.get(int(version), 0) + 1
        return counts

    @_locked
    def has_waiting(self) -> bool:
        """True if a game is queued (a lease would hand one out)."""
        row = self.db.execute("SELECT 1 FROM games WHERE state = 'queued' LIMIT 1").fetchone()
        return row is not None

    @_locked
    def entrants(self) -> list[Entrant]:
        """Every version that plays rated games, with what the matchmaker needs."""
        flying = self.in_flight()
        rows = self.db.execute(
            "SELECT v.id, b.owner, v.mu, v.sigma, v.rated_games, v.last_played "
            "FROM versions v JOIN bots b ON b.id = v.bot WHERE v.status = 'active' ORDER BY v.id"
        )
        return [
            Entrant(
                int(i),
                int(owner),
                _rating_of(mu, sigma),
                int(games),
                float(last),
                flying.get(int(i), 0),
            )
            for i, owner, mu, sigma, games, last in rows
        ]

    @_locked
    def lease(self, owner: str, lease_s: float = DEFAULT_LEASE_S) -> LeasedGame | None:
        """Hand the next queued game to ``owner`` until its lease expires (validation
        games first, then in queue order); None if nothing is queued."""
        now = self._clock()
        with self.transaction():
            row = self.db.execute(
                "SELECT id, kind, pair, seed, first, second, opponent FROM games "
                "WHERE state = 'queued' ORDER BY priority, id LIMIT 1"
            ).fetchone()
            if row is None:
                return None
            game, kind, pair, seed, first, second, opponent = row
            expires = now + lease_s
            self.db.execute(
                "UPDATE games SET state = 'leased', lease_owner = ?, lease_expires = ?, "
                "attempts = attempts + 1 WHERE id = ?",
                (owner, expires, game),
            )
            commands = []
            for version in (first, second):
                if version is None:
                    commands.append(str(opponent))
                    continue
                command = self.db.execute(
                    "SELECT command FROM versions WHERE id = ?", (version,)
                ).fetchone()[0]
                commands.append(str(command))
            return LeasedGame(
                id=int(game), kind=str(kind), pair=int(pair), seed=int(seed),
                first=self._label(first, opponent), second=self._label(second, opponent),
                commands=(commands[0], commands[1]),
                versions=(None if first is None else int(first),
                          None if second is None else int(second)),
                lease_owner=owner, lease_expires=expires,
            )  # fmt: skip

    @_locked
    def expire_leases(self, *, every: bool = False) -> int:
        """Queue again the leased games whose lease has expired (``every``: all of them, as
        the server does when it starts: nothing it leased before is still being played).
        Returns how many."""
        if not every:  # the scheduler asks before every game: no write lock for nothing
            expired = self.db.execute(
                "SELECT 1 FROM games WHERE state = 'leased' AND lease_expires < ? LIMIT 1",
                (self._clock(),),
            ).fetchone()
            if expired is None:
                return 0
        with self.transaction():
            if every:
                cursor = self.db.execute(
                    "UPDATE games SET state = 'queued', lease_owner = NULL, lease_expires = NULL "
                    "WHERE state = 'leased'"
                )
            else:
                cursor = self.db.execute(
                    "UPDATE games SET state = 'queued', lease_owner = NULL, lease_expires = NULL "
                    "WHERE state = 'leased' AND lease_expires < ?",
                    (self._clock(),),
                )
        return cursor.rowcount

    @_locked
    def finish(self, game: int, record: GameRecord) -> bool:
        """Record a game's result and move the ratings, in one transaction.

        Returns False (and changes nothing) if the game is already done: a result that
        comes twice counts once. A game that says nothing of the bots (the platform failed
        it: error kind ``referee``; or a bot timed out while the machine was measured starving
        it of CPU, ``overloaded``) is queued again, unrated, up to
        :data:`MAX_REFEREE_ATTEMPTS` times; after that it is kept, unrated.
        """
        now = self._clock()
        with self.transaction():
            row = self.db.execute(
                "SELECT kind, first, second, state, attempts FROM games WHERE id = ?", (game,)
            ).fetchone()
            if row is None:
                raise LadderError(f"no game {game}")
            kind, first, second, state, attempts = row
            if state == "done":
                return False
            not_the_bots = record.error_kind == REFEREE or (
                record.error_kind == TIMEOUT and record.overloaded is True
            )
            if not_the_bots and int(attempts) < MAX_REFEREE_ATTEMPTS:
                self.db.execute(
                    "UPDATE games SET state = 'queued', lease_owner = NULL, lease_expires = NULL, "
                    "detail = ? WHERE id = ?",
                    (record.detail, game),
                )
                return True
            rated = kind == "rated" and not not_the_bots and None not in (first, second)
            self.db.execute(
                "UPDATE games SET state = 'done', lease_owner = NULL, lease_expires = NULL, "
                "winner = ?, result = ?, end_reason = ?, error_seat = ?, error_kind = ?, "
                "detail = ?, log = ?, replay = ?, turns = ?, duration_s = ?, rated = ?, "
                "finished_at = ? WHERE id = ?",
                (
                    record.winner, record.result, record.end_reason, record.error_seat,
                    record.error_kind, record.detail, record.log, record.replay, record.turns,
                    record.duration_s, int(rated), now, game,
                ),
            )  # fmt: skip
            if rated:
                self._rate(game, int(first), int(second), record.winner, now)
                for version in (int(first), int(second)):
                    self._check_errors(version)
            elif kind == "validation":
                for version in (first, second):
                    if version is not None:
                        self._check_validation(int(version))
        return True

    def _rate(self, game: int, first: int, second: int, winner: int | None, now: float) -> None:
        (mu_a, sigma_a), (mu_b, sigma_b) = (
            self.db.execute("SELECT mu, sigma FROM versions WHERE id = ?", (v,)).fetchone()
            for v in (first, second)
        )
        score = 0.5 if winner is None else 1.0 if winner == 0 else 0.0
        new_a, new_b = after_game(_rating_of(mu_a, sigma_a), _rating_of(mu_b, sigma_b), score)
        for seat, version, rating in ((0, first, new_a), (1, second, new_b)):
            column = "draws" if winner is None else "wins" if winner == seat else "losses"
            self.db.execute(
                f"UPDATE versions SET mu = ?, sigma = ?, rated_games = rated_games + 1, "
                f"{column} = {column} + 1, last_played = ? WHERE id = ?",
                (rating.mu, rating.sigma, now, version),
            )
            self.db.execute(
                "INSERT INTO ratings (version, game, mu, sigma) VALUES (?, ?, ?, ?)",
                (version, game, rating.mu, rating.sigma),
            )
            opponent = second if seat == 0 else first
            self.db.execute(
                f"INSERT INTO results (version, opponent, {column}) VALUES (?, ?, 1) "
                f"ON CONFLICT DO UPDATE SET {column} = {column} + 1",
                (version, opponent),
            )

    def _charged(self, version: int, where: str, limit: int) -> list[str | None]:
        """The error kind charged to ``version`` in each of its last ``limit`` games matching
        ``where`` (None: no error of its own), newest first."""
        seats = [
            f"SELECT * FROM (SELECT id, CASE WHEN error_seat = {seat} THEN error_kind END "
            f"FROM games WHERE {column} = :version AND state = 'done' AND {where} "
            "ORDER BY id DESC LIMIT :limit)"
            for seat, column in enumerate(("first", "second"))
        ]
        query = f"{seats[0]} UNION ALL {seats[1]} ORDER BY 1 DESC LIMIT :limit"
        rows = self.db.execute(query, {"version": version, "limit": limit})
        return [None if r[1] is None else str(r[1]) for r in rows]

    def _check_errors(self, version: int) -> None:
        """Disable a playing version whose last rated games had too many errors of its own."""
        rule = self.disable_rule
        status = self.db.execute("SELECT status FROM versions WHERE id = ?", (version,)).fetchone()
        if status is None or status[0] != "active":
            return
        recent = self._charged(version, "rated = 1", rule.window)
        kinds = [kind for kind in recent if kind is not None]
        if len(kinds) < rule.limit:
            return
        counted: dict[str, int] = {}
        for kind in kinds:
            counted[kind] = counted.get(kind, 0) + 1
        what = ", ".join(f"{kind} {n}" for kind, n in sorted(counted.items()))
        self._set_status(
            version, "disabled",
            f"lost {len(kinds)} of its last {len(recent)} rated games by its own errors ({what})",
        )  # fmt: skip

    def _check_validation(self, version: int) -> None:
        """Once all of a version's validation games are done: active if it caused no error
        in any of them, failed otherwise (the first error is the reason)."""
        status = self.db.execute("SELECT status FROM versions WHERE id = ?", (version,)).fetchone()
        if status is None or status[0] != "validating":
            return
        left = self.db.execute(
            "SELECT COUNT(*) FROM games WHERE kind = 'validation' AND state IN ('queued', "
            "'leased') AND (first = ? OR second = ?)",
            (version, version),
        ).fetchone()[0]
        if left:
            return
        rows = self.db.execute(
            "SELECT id, error_kind, detail, result FROM games WHERE kind = 'validation' AND "
            "((first = ? AND error_seat = 0) OR (second = ? AND error_seat = 1)) ORDER BY id",
            (version, version),
        ).fetchall()
        if rows:
            game, kind, detail, _result = rows[0]
            why = f"validation game {game}: {kind}"
            if detail:
                why += f" ({str(detail)[:120]})"
            self._set_status(version, "failed", why)
            return
        self._activate(version)

    @_locked
    def validation_needed(self) -> list[int]:
        """Versions that are ``validating`` with no validation game yet."""
        rows = self.db.execute(
            "SELECT v.id FROM versions v WHERE v.status = 'validating' AND NOT EXISTS "
            "(SELECT 1 FROM games g WHERE g.kind = 'validation' AND (g.first = v.id OR "
            "g.second = v.id)) ORDER BY v.id"
        )
        return [int(r[0]) for r in rows]

    # --- reads for the pages ----------------------------------------------------------------

    _GAME_COLUMNS = (
        "id, kind, pair, seed, first, second, opponent, state, winner, result, end_reason, "
        "error_seat, error_kind, detail, replay, turns, duration_s, rated, queued_at, finished_at"
    )

    def _game_row(self, r: Sequence[Any]) -> GameRow:
        return GameRow(
            id=int(r[0]), kind=str(r[1]), pair=int(r[2]), seed=int(r[3]),
            first=self._label(r[4], r[6]), second=self._label(r[5], r[6]), state=str(r[7]),
            winner=r[8], result=r[9], end_reason=r[10], error_seat=r[11], error_kind=r[12],
            detail=r[13], replay=r[14], turns=r[15], duration_s=r[16], rated=bool(r[17]),
            queued_at=float(r[18]), finished_at=r[19],
        )  # fmt: skip

    @_locked
    def games(
        self, bot: str | None = None, limit: int = 50, offset: int = 0, *, done: bool = True
    ) -> list[GameRow]:
        """Games, newest first (``done``: finished ones only), of one bot if given."""
        # "+state": not through the state index, whose order is not the games' (newest
        # first comes from walking the ids backwards, stopping after ``limit``).
        done_only = "+state = 'done'" if done else "1"
        limit, offset = max(0, int(limit)), max(0, int(offset))
        if bot is None:
            query = (
                f"SELECT {self._GAME_COLUMNS} FROM games WHERE {done_only} "
                "ORDER BY id DESC LIMIT ? OFFSET ?"
            )
            rows = self.db.execute(query, (limit, offset))
            return [self._game_row(r) for r in rows.fetchall()]
        ids = [
            int(r[0])
            for r in self.db.execute(
                "SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot WHERE b.name = ?",
                (bot,),
            )
        ]
        if not ids:
            return []
        marks = ", ".join(str(version) for version in ids)  # whole numbers from the file
        seats = [  # each seat through its own index, newest first, enough for the page
            f"SELECT id FROM (SELECT id FROM games WHERE {column} IN ({marks}) AND "
            f"{done_only} ORDER BY id DESC LIMIT :wanted)"
            for column in ("first", "second")
        ]
        query = (
            f"SELECT {self._GAME_COLUMNS} FROM games WHERE id IN ({seats[0]} UNION ALL "
            f"{seats[1]}) ORDER BY id DESC LIMIT :limit OFFSET :offset"
        )
        rows = self.db.execute(query, {"wanted": limit + offset, "limit": limit, "offset": offset})
        return [self._game_row(r) for r in rows.fetchall()]

    @_locked
    def game(self, game: int) -> tuple[GameRow, dict[str, Any] | None] | None:
        """A game and its log (None until it is played, or if it has none); None if no such
        game."""
        row = self.db.execute(
            f"SELECT {self._GAME_COLUMNS}, log FROM games WHERE id = ?", (game,)
        ).fetchone()
        if row is None:
            return None
        log = None if row[-1] is None else decompress_log(row[-1], f"the log of game {game}")
        return self._game_row(row[:-1]), log

    @_locked
    def count_games(self, state: str = "done", kind: str | None = None) -> int:
        if kind is None:
            query, args = "SELECT COUNT(*) FROM games WHERE state = ?", (state,)
        else:
            query = "SELECT COUNT(*) FROM games WHERE state = ? AND kind = ?"
            args = (state, kind)
        return int(self.db.execute(query, args).fetchone()[0])

    def _score_table(self, versions: Sequence[int]) -> dict[int, tuple[int, int, int]]:
        """(wins, draws, losses) in rated games per opponent version, for these versions."""
        table: dict[int, tuple[int, int, int]] = {}
        marks = ", ".join("?" for _ in versions)
        query = (
            "SELECT opponent, SUM(wins), SUM(draws), SUM(losses) FROM results "
            f"WHERE version IN ({marks}) GROUP BY opponent"
        )
        for opponent, wins, draws, losses in self.db.execute(query, tuple(versions)):
            table[int(opponent)] = (int(wins), int(draws), int(losses))
        return table

    @_locked
    def leaderboard(self) -> list[BoardRow]:
        """One row per bot (its version that plays, else its newest), ranked by the
        conservative rating; bots that never played rank below by the same order."""
        rows = self.db.execute(
            "SELECT b.id, b.name, u.name, b.status, b.reason FROM bots b "
            "JOIN users u ON u.id = b.owner"
        ).fetchall()
        board: list[tuple[float, BoardRow]] = []
        for bot_id, name, owner, status, reason in rows:
            shown = self._board_version(int(bot_id))
            if shown is None:
                continue
            number, language, mu, sigma, games, wins, draws, losses = self.db.execute(
                "SELECT number, language, mu, sigma, rated_games, wins, draws, losses "
                "FROM versions WHERE id = ?",
                (shown[0],),
            ).fetchone()
            played = wins + draws + losses
            rating = conservative(_rating_of(mu, sigma))
            row = BoardRow(
                rank=0, name=str(name), owner=str(owner), status=str(status), reason=reason,
                version=int(number), language=str(language), games=int(games), wins=wins,
                draws=draws, losses=losses,
                win_rate=(wins + draws / 2) / played if played else None,
                mu=float(mu), sigma=float(sigma), rating=rating,
            )  # fmt: skip
            board.append((rating, row))
        order = {"active": 0, "disabled": 1, "validating": 2, "building": 2, "retired": 3}
        board.sort(key=lambda item: (order.get(item[1].status, 4), -item[0], item[1].name))
        return [
            BoardRow(**{**row.__dict__, "rank": rank}) for rank, (_r, row) in enumerate(board, 1)
        ]

    @_locked
    def rated_results(self) -> tuple[list[str], list[tuple[str, str, float]]]:
        """The bots on the board that played, and every rated game between the versions the
        board shows, as (a bot, another, the first one's score): what the Bradley–Terry fit of
        the board (``ratings.board_fit``) takes. Read from the head-to-head counts, not game by
        game (a large ladder's web page must not hold the store for a scan of every game); the
        seats are not told apart, as the fit does not."""
        shown = self._shown_versions()
        results: list[tuple[str, str, float]] = []
        for version, opponent, wins, draws, losses in self.db.execute(
            "SELECT version, opponent, wins, draws, losses FROM results WHERE version < opponent"
        ):
            if version in shown and opponent in shown:
                a, b = shown[version], shown[opponent]
                results += [(a, b, 1.0)] * wins + [(a, b, 0.5)] * draws + [(a, b, 0.0)] * losses
        names = sorted({name for a, b, _s in results for name in (a, b)})
        return names, results

    @_locked
    def rated_counts(self) -> tuple[list[str], list[tuple[str, str, float, int]]]:
        """:meth:`rated_results` counted by pair: (a bot, another, the first one's points,
        games), what ``ratings.board_fit_counts`` takes (a few hundred rows, not one per
        game)."""
        shown = self._shown_versions()
        counted: list[tuple[str, str, float, int]] = []
        for version, opponent, wins, draws, losses in self.db.execute(
            "SELECT version, opponent, wins, draws, losses FROM results WHERE version < opponent"
        ):
            if version in shown and opponent in shown and wins + draws + losses > 0:
                counted.append((shown[version], shown[opponent], wins + draws / 2,
                                wins + draws + losses))  # fmt: skip
        names = sorted({name for a, b, _p, _g in counted for name in (a, b)})
        return names, counted

    def _shown_versions(self) -> dict[int, str]:
        """The version each bot is shown by on the board -> the bot's name."""
        rows = self.db.execute(
            "SELECT v.id, b.name FROM bots b JOIN versions v ON v.id = (SELECT id FROM versions "
            "WHERE bot = b.id ORDER BY status = 'active' DESC, number DESC LIMIT 1)"
        )
        return {int(version): str(name) for version, name in rows}

    @_locked
    def owners(self) -> dict[str, str]:
        """Bot name -> its owner's name."""
        rows = self.db.execute("SELECT b.name, u.name FROM bots b JOIN users u ON u.id = b.owner")
        return {str(bot): str(owner) for bot, owner in rows}

    @_locked
    def change_mark(self) -> int:
        """A number that changes whenever this store wrote something (a game finished, a
        status changed): a page's cache of what it computed from the store (the board's fit)
        is still good while the mark is the same. One process's own count: it costs nothing."""
        return self._changes

    @_locked
    def set_bot_status(self, name: str, status: str, reason: str | None = None) -> None:
        """Change the status of the version a bot is shown by (the organiser's disable,
        retire or enable)."""
        row = self.db.execute("SELECT id FROM bots WHERE name = ?", (name,)).fetchone()
        shown = None if row is None else self._board_version(int(row[0]))
        if shown is None:
            raise LadderError(f"no bot named {name!r}")
        self.set_status(shown[0], status, reason)

    @_locked
    def bot(self, name: str) -> BotPage | None:
        """Everything the bot page shows; None if there is no such bot."""
        row = self.db.execute(
            "SELECT b.id, u.name, b.status, b.reason FROM bots b JOIN users u ON u.id = b.owner "
            "WHERE b.name = ?",
            (name,),
        ).fetchone()
        if row is None:
            return None
        bot_id, owner, status, reason = row
        versions = self._version_rows("v.bot = ?", (bot_id,))
        ids = [v.id for v in versions]
        per_bot: dict[str, list[int]] = {}
        for other, (w, d, lost) in self._score_table(ids).items():
            opponent = self.db.execute(
                "SELECT b.name FROM versions v JOIN bots b ON b.id = v.bot WHERE v.id = ?",
                (other,),
            ).fetchone()[0]
            counts = per_bot.setdefault(str(opponent), [0, 0, 0])
            counts[0], counts[1], counts[2] = counts[0] + w, counts[1] + d, counts[2] + lost
        head = [
            HeadToHead(opponent, sum(c), c[0], c[1], c[2])
            for opponent, c in sorted(per_bot.items())
        ]
        numbers = {v.id: v.number for v in versions}
        history: list[tuple[int, int, float, float]] = []
        errors: dict[str, int] = {}
        if ids:
            marks = ", ".join("?" for _ in ids)
            history = [
                (numbers[int(v)], int(g), float(mu), float(sigma))
                for v, g, mu, sigma in self.db.execute(
                    f"SELECT version, game, mu, sigma FROM ratings WHERE version IN ({marks}) "
                    "ORDER BY id",
                    ids,
                )
            ]
            query = (
                "SELECT error_kind, COUNT(*) FROM games INDEXED BY games_errors WHERE "
                f"error_kind IS NOT NULL AND ((first IN ({marks}) AND error_seat = 0) OR "
                f"(second IN ({marks}) AND error_seat = 1)) GROUP BY error_kind"
            )
            errors = {str(k): int(n) for k, n in self.db.execute(query, (*ids, *ids))}
        return BotPage(
            name=name, owner=str(owner), status=str(status), reason=reason, versions=versions,
            head_to_head=head, history=history, recent=self.games(name, limit=20), errors=errors,
        )  # fmt: skip


@contextlib.contextmanager
def reading(path: str) -> Iterator[LadderStore]:
    """The ladder at ``path`` opened for reading only, without the server's lock (an export
    while the server runs): SQLite's ``mode=ro`` follows the running server through its WAL
    and writes nothing; a file without a WAL (no server) is read ``immutable``. Its reads
    work as usual; any write fails. StoreError (one line) if it is not a ladder database."""
    from urllib.parse import quote

    check_place(path, False, "ladder")
    uri = f"file:{quote(os.path.abspath(path))}"
    tries = ("mode=ro", "mode=ro&immutable=1")
    if not os.path.exists(f"{path}-wal"):
        tries = tries[1:]
    connection: sqlite3.Connection | None = None
    last: sqlite3.Error | None = None
    for options in tries:
        try:
            connection = sqlite3.connect(f"{uri}?{options}", uri=True, isolation_level=None,
                                         timeout=30.0, check_same_thread=False)  # fmt: skip
            connection.execute("PRAGMA query_only = ON")
            connection.execute("SELECT name FROM sqlite_master").fetchall()
            break
        except sqlite3.DatabaseError as error:
            if connection is not None:
                connection.close()
                connection = None
            if "not a database" in str(error) or "malformed" in str(error):
                raise StoreError(f"{path} {describe(error, 'ladder', 'cannot be used')}") from None
            last = error
    if connection is None:
        raise StoreError(f"{path} cannot be read: {last}")
    store = LadderStore.__new__(LadderStore)
    store.path, store.disable_rule, store._clock = path, DisableRule(), time.time
    store._lock, store._changes, store._lock_fd, store._db = threading.RLock(), 0, None, connection
    try:
        if not store._check_schema():
            raise StoreError(f"{path} is an empty database, not a ladder")
        store._check_version()
        yield store
    except sqlite3.Error as error:
        raise StoreError(f"{path} cannot be read: {error}") from None
    finally:
        store.close()
