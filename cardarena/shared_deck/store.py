"""SQLite persistence: players (with hashed secrets), tournaments, matches, the leaderboard.

A tournament is written twice: a ``running`` row when it starts (its number, seed and deck),
then everything else in one transaction when it finishes. A crash leaves at most a ``running``
row, which :meth:`Store.discard_unfinished` removes at the next start; the tournament is then
played again under the same number, seed and deck.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import re
import secrets
import sqlite3
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from .deck import deck_from_text, deck_to_text
from .protocol import ARGUMENT_COUNTS
from .rules import Card, RuleSet
from .tournament import MatchResult, TournamentResult

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
    created_at TEXT NOT NULL
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


@dataclass(frozen=True, slots=True)
class StandingRow:
    """One line of the leaderboard."""

    player: str
    points: float
    tournaments: int


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


class Store:
    """One connection to the database; use one Store per thread."""

    def __init__(self, path: str | Path) -> None:
        self.connection = sqlite3.connect(
            str(path), isolation_level=None, check_same_thread=False, timeout=30.0
        )
        self.connection.execute("PRAGMA journal_mode = WAL")
        self.connection.execute("PRAGMA synchronous = FULL")
        self.connection.execute("PRAGMA foreign_keys = ON")
        self.connection.executescript(SCHEMA)  # idempotent: every statement is IF NOT EXISTS

    def close(self) -> None:
        self.connection.close()

    def _transaction(self) -> _Transaction:
        """``with store._transaction():`` runs a block as one IMMEDIATE transaction."""
        return _Transaction(self.connection)

    # ----------------------------------------------------------------- players
    def add_player(self, name: str) -> str:
        """Register a player and return its new secret; only its hash is stored."""
        if not valid_player_name(name):
            raise ValueError(
                f"invalid player name {name!r}: use 1-32 letters, digits, '_', '.', '-' "
                "(starting with a letter or digit), and not a command name"
            )
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

    def player_names(self) -> list[str]:
        return [row[0] for row in self.connection.execute("SELECT name FROM players ORDER BY name")]

    def secret_hash(self, name: str) -> str | None:
        row = self.connection.execute(
            "SELECT secret_hash FROM players WHERE name = ?", (name,)
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
            "SELECT p.name, COALESCE(l.points, 0.0), COALESCE(l.tournaments, 0)"
            " FROM players p LEFT JOIN leaderboard l ON l.player = p.id"
            " ORDER BY 2 DESC, p.name"
        )
        return [StandingRow(name, points, count) for name, points, count in rows]

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


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on an exception."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def __enter__(self) -> sqlite3.Connection:
        self.connection.execute("BEGIN IMMEDIATE")
        return self.connection

    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None:
        self.connection.execute("ROLLBACK" if exc_type is not None else "COMMIT")
