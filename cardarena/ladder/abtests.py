"""A/B tests on the ladder: "is my new version better?" answered by paired, unrated games.

A participant names two versions, A (one of theirs) and B (another of theirs, or any other
participant's active bot). The scheduler then plays them against each other in *pairs*
(one seed, seats swapped), alongside the rated games but in a bounded share of the workers,
until the sequential probability ratio test (:class:`cardarena.ladder.sprt.Sprt`, fishtest's
GSPRT over the pairs' pentanomial) accepts or rejects "A is ``elo1`` stronger rather than
``elo0``", or the test's budget of pairs runs out, or its owner stops it. The games are of
kind ``ab``: the store never rates them, so a test never moves anyone's rating.

The tests live in two tables of the ladder's database, created beside the store's own:
``ab_tests`` (who, which versions, the bounds, the state and the counts) and ``ab_pairs``
(each pair of games, and once both are done, A's two scores and the order in which the pair
finished: the SPRT's overshoot correction depends on that order, so a restart replays the
pairs in it). Everything is written by the server process, as the store's other tables.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .api import iso_time
from .sprt import ALPHA, BETA, DEFAULT_ELO0, DEFAULT_ELO1, Sprt
from .store import LadderError, LadderStore, User

__all__ = ["AB_STATES", "SUGGESTED_ELO1", "AbSettings", "AbTests"]

AB_STATES = ("running", "accepted", "rejected", "stopped", "budget")
"""``running`` until a verdict (``accepted``: A is better by ``elo1``; ``rejected``: it is not
better by ``elo0``), the budget of pairs ran out (``budget``) or its owner or the ladder
stopped it (``stopped``, with a reason)."""
SUGGESTED_ELO1 = 20.0
"""The upper bound the form suggests: bots differ by far more than chess engines, and
fishtest's ``elo1 = 2`` needs tens of thousands of pairs (docs/ladder.md)."""
TESTABLE_OWN = ("active", "retired")
"""A participant's own versions that may be tested: they passed validation."""
TESTABLE_OTHERS = ("active",)
"""Another participant's versions that may be tested against: their playing one only."""
MOST_ELO_BOUND = 1000.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ab_tests (
    id INTEGER PRIMARY KEY,
    owner INTEGER NOT NULL REFERENCES users(id),
    a INTEGER NOT NULL REFERENCES versions(id),
    b INTEGER NOT NULL REFERENCES versions(id),
    elo0 REAL NOT NULL,
    elo1 REAL NOT NULL,
    alpha REAL NOT NULL,
    beta REAL NOT NULL,
    max_pairs INTEGER NOT NULL,
    state TEXT NOT NULL,
    reason TEXT,
    counts TEXT NOT NULL DEFAULT '0 0 0 0 0',
    llr REAL NOT NULL DEFAULT 0,
    lower REAL NOT NULL,
    upper REAL NOT NULL,
    created REAL NOT NULL,
    finished REAL
);
CREATE INDEX IF NOT EXISTS ab_tests_owner ON ab_tests(owner, created);
CREATE INDEX IF NOT EXISTS ab_tests_state ON ab_tests(state);
CREATE TABLE IF NOT EXISTS ab_pairs (
    pair INTEGER PRIMARY KEY,
    test INTEGER NOT NULL REFERENCES ab_tests(id),
    a_first INTEGER NOT NULL,
    b_first INTEGER NOT NULL,
    finished_order INTEGER,
    score_first REAL,
    score_second REAL
);
CREATE INDEX IF NOT EXISTS ab_pairs_test ON ab_pairs(test, finished_order);
CREATE INDEX IF NOT EXISTS ab_pairs_open ON ab_pairs(test) WHERE finished_order IS NULL;
"""
LABEL = re.compile(r"(?P<bot>.+)\.v(?P<number>[0-9]{1,9})")


@dataclass(frozen=True)
class AbSettings:
    """The organiser's limits on A/B tests (``locm ladder serve`` options)."""

    max_pairs: int = 2000
    """A test's budget of pairs at most (a test may ask for fewer)."""
    running_per_participant: int = 2
    """Tests of one participant running at once at most (organisers are exempt)."""
    share: float = 0.5
    """The share of the workers that A/B games may take at most (at least one pair)."""
    pairs_in_flight_per_test: int = 2
    """Pairs of one test queued or in play at once: a verdict wastes at most these."""


def _counts_text(counts: list[int]) -> str:
    return " ".join(str(int(c)) for c in counts)


def _counts_of(text: str) -> list[int]:
    return [int(c) for c in str(text).split()]


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


class AbTests:
    """The A/B tests of one ladder: create, read and stop them (the web thread), schedule
    their pairs and count finished ones (the scheduler's thread). Thread-safe through the
    store's lock and transactions."""

    def __init__(
        self, store: LadderStore, settings: AbSettings = AbSettings(), workers: int = 1
    ) -> None:
        self.store = store
        self.settings = settings
        self.slots = max(2, 2 * int(workers * settings.share // 2))
        """A/B games queued or in play at once at most: the share of the workers, in pairs."""
        self._sprts: dict[int, Sprt] = {}
        self._last_turn_ab = False
        with store.transaction() as db:
            for statement in _SCHEMA.strip().split(";"):
                if statement.strip():
                    db.execute(statement)

    # --- asking for a test ------------------------------------------------------------

    def _version_named(self, text: str) -> tuple[int, int, str, str, str | None]:
        """(version id, owner id, label, status, folder) of ``NAME`` (the bot's playing
        version, else its newest) or ``NAME.vN``."""
        db = self.store.db
        text = str(text).strip()
        query = (
            "SELECT v.id, b.owner, b.name || '.v' || v.number, v.status, v.folder, v.command "
            "FROM versions v JOIN bots b ON b.id = v.bot WHERE b.name = ? "
        )
        row = db.execute(
            query + "ORDER BY v.status = 'active' DESC, v.number DESC LIMIT 1", (text,)
        ).fetchone()
        if row is None and (found := LABEL.fullmatch(text)):
            row = db.execute(
                query + "AND v.number = ?", (found["bot"], int(found["number"]))
            ).fetchone()
        if row is None:
            raise LadderError(f"no bot or version {text[:60]!r} (a bot's name, or NAME.vN)")
        if row[5] is None:
            raise LadderError(f"{row[2]} has no build to play")
        return int(row[0]), int(row[1]), str(row[2]), str(row[3]), row[4]

    def create(
        self,
        user: User,
        a: str,
        b: str,
        elo0: float = DEFAULT_ELO0,
        elo1: float = DEFAULT_ELO1,
        max_pairs: int | None = None,
    ) -> int:
        """Start a test of ``a`` (one of ``user``'s versions) against ``b``; its id.
        LadderError (one line) for a version one may not test, bad bounds or a budget out
        of range."""
        if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in (elo0, elo1)):
            raise LadderError("elo0 and elo1 are numbers")
        if not -MOST_ELO_BOUND <= elo0 < elo1 <= MOST_ELO_BOUND:
            raise LadderError(
                f"the bounds need elo0 < elo1, both within ±{MOST_ELO_BOUND:.0f} Elo "
                f"(given {elo0:g}, {elo1:g})"
            )
        most = self.settings.max_pairs
        pairs = most if max_pairs is None else int(max_pairs)
        if not 1 <= pairs <= most:
            raise LadderError(f"max_pairs is 1..{most} on this ladder (given {pairs})")
        with self.store.transaction() as db:
            va, owner_a, label_a, status_a, folder_a = self._version_named(a)
            vb, owner_b, label_b, status_b, folder_b = self._version_named(b)
            if owner_a != user.id and not user.organiser:
                raise LadderError(f"{label_a} is not yours: A is one of your own versions")
            if va == vb:
                raise LadderError(f"A and B are the same version ({label_a})")
            if status_a not in TESTABLE_OWN:
                raise LadderError(f"{label_a} is {status_a}: test a version that passed "
                                  "validation (active or retired)")  # fmt: skip
            mine_b = owner_b == user.id or user.organiser
            if status_b not in (TESTABLE_OWN if mine_b else TESTABLE_OTHERS):
                what = "active or retired" if mine_b else "another participant's active one"
                raise LadderError(f"{label_b} is {status_b}: B is {what}")
            for label, folder in ((label_a, folder_a), (label_b, folder_b)):
                if folder is not None and not os.path.isdir(folder):
                    raise LadderError(f"the build of {label} is gone from the server")
            sprt = Sprt(elo0, elo1, ALPHA, BETA)
            cursor = db.execute(
                "INSERT INTO ab_tests (owner, a, b, elo0, elo1, alpha, beta, max_pairs, state, "
                "lower, upper, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                (user.id, va, vb, elo0, elo1, ALPHA, BETA, pairs, *sprt.corrected_bounds(),
                 self.store._clock()),
            )  # fmt: skip
            test = int(cursor.lastrowid or 0)
        self._sprts[test] = sprt
        return test

    def running_count(self, user: User) -> int:
        with self.store._lock:
            row = self.store.db.execute(
                "SELECT COUNT(*) FROM ab_tests WHERE owner = ? AND state = 'running'", (user.id,)
            ).fetchone()
        return int(row[0])

    def created_since(self, user: User, since: float) -> list[float]:
        """When ``user`` created each test since ``since`` (oldest first)."""
        with self.store._lock:
            rows = self.store.db.execute(
                "SELECT created FROM ab_tests WHERE owner = ? AND created >= ? ORDER BY created",
                (user.id, since),
            ).fetchall()
        return [float(r[0]) for r in rows]

    # --- reading and stopping ---------------------------------------------------------------

    def get(self, test: int, user: User | None) -> dict[str, Any] | None:
        """The test as the API shows it; None if there is none that ``user`` may read (its
        owner's, or any for an organiser)."""
        with self.store._lock:
            row = self.store.db.execute(
                "SELECT t.id, t.owner, u.name, t.a, t.b, t.elo0, t.elo1, t.alpha, t.beta, "
                "t.max_pairs, t.state, t.reason, t.counts, t.llr, t.lower, t.upper, t.created, "
                "t.finished FROM ab_tests t JOIN users u ON u.id = t.owner WHERE t.id = ?",
                (test,),
            ).fetchone()
            if row is None or user is None or (int(row[1]) != user.id and not user.organiser):
                return None
            in_flight = self.store.db.execute(
                "SELECT COUNT(*) FROM ab_pairs WHERE test = ? AND finished_order IS NULL",
                (test,),
            ).fetchone()[0]
            labels = [self.store._label(int(v), None) for v in (row[3], row[4])]
        counts = _counts_of(row[12])
        sprt = Sprt(float(row[5]), float(row[6]), float(row[7]), float(row[8]))
        sprt.counts = counts
        elo, low, high = sprt.elo_estimate()
        return {
            "id": int(row[0]),
            "owner": str(row[2]),
            "a": labels[0],
            "b": labels[1],
            "elo0": float(row[5]),
            "elo1": float(row[6]),
            "alpha": float(row[7]),
            "beta": float(row[8]),
            "max_pairs": int(row[9]),
            "state": str(row[10]),
            "reason": row[11],
            "pairs": sum(counts),
            "pairs_in_flight": int(in_flight),
            "pentanomial": counts,
            "llr": round(float(row[13]), 4),
            "bounds": [round(float(row[14]), 4), round(float(row[15]), 4)],
            "elo": {"value": round(elo, 1), "low": round(low, 1), "high": round(high, 1)},
            "score": None if not sum(counts) else round(
                sum(c * s for c, s in zip(counts, (0, 0.5, 1, 1.5, 2), strict=True))
                / (2 * sum(counts)), 4),
            "created": iso_time(row[16]),
            "finished": iso_time(row[17]),
        }  # fmt: skip

    def mine(self, user: User, limit: int = 50) -> list[dict[str, Any]]:
        """``user``'s tests, newest first."""
        with self.store._lock:
            ids = [
                int(r[0])
                for r in self.store.db.execute(
                    "SELECT id FROM ab_tests WHERE owner = ? ORDER BY id DESC LIMIT ?",
                    (user.id, limit),
                )
            ]
        return [t for t in (self.get(test, user) for test in ids) if t is not None]

    def stop(self, test: int, user: User, reason: str = "stopped by its owner") -> bool:
        """Stop a running test (its owner or an organiser); its queued games are dropped,
        games in play still count. False if it had already ended; LadderError if ``user``
        may not see it."""
        with self.store.transaction() as db:
            row = db.execute("SELECT owner, state FROM ab_tests WHERE id = ?", (test,)).fetchone()
            if row is None or (int(row[0]) != user.id and not user.organiser):
                raise LadderError(f"no A/B test {test} of yours")
            if row[1] != "running":
                return False
            self._end(test, "stopped", reason)
        return True

    def _end(self, test: int, state: str, reason: str | None) -> None:
        """In a transaction: the test's verdict; its queued games will not be played."""
        db = self.store.db
        db.execute(
            "UPDATE ab_tests SET state = ?, reason = ?, finished = ? WHERE id = ?",
            (state, reason, self.store._clock(), test),
        )
        db.execute(
            "DELETE FROM games WHERE kind = 'ab' AND state = 'queued' AND pair IN "
            "(SELECT pair FROM ab_pairs WHERE test = ? AND finished_order IS NULL)",
            (test,),
        )
        db.execute(  # pairs none of whose games are left (their ids may be used again)
            "DELETE FROM ab_pairs WHERE test = ? AND finished_order IS NULL AND NOT EXISTS "
            "(SELECT 1 FROM games g WHERE g.pair = ab_pairs.pair AND g.kind = 'ab')",
            (test,),
        )

    # --- the scheduler's side ------------------------------------------------------------------

    def _sprt(self, test: int, row: Mapping[str, Any] | tuple[Any, ...]) -> Sprt:
        """The test's SPRT, replayed from its finished pairs in their order (after a
        restart), then kept in memory."""
        sprt = self._sprts.get(test)
        if sprt is None:
            sprt = Sprt(float(row[0]), float(row[1]), float(row[2]), float(row[3]))
            for first, second in self.store.db.execute(
                "SELECT score_first, score_second FROM ab_pairs WHERE test = ? AND "
                "finished_order IS NOT NULL ORDER BY finished_order",
                (test,),
            ).fetchall():
                sprt.add_pair(float(first), float(second))
            self._sprts[test] = sprt
        return sprt

    def _finished_pairs(self) -> list[tuple[int, int, tuple[float, float] | None]]:
        """(pair, test, A's two scores) of every open pair whose games are both done, in
        the order of the pairs; scores None for a pair to drop: its games are gone (a version
        withdrawn) or the platform failed one."""
        db = self.store.db
        found: list[tuple[int, int, tuple[float, float] | None]] = []
        open_pairs = db.execute(
            "SELECT p.pair, p.test, p.a_first FROM ab_pairs p INDEXED BY ab_pairs_open "
            "WHERE p.finished_order IS NULL ORDER BY p.pair"
        ).fetchall()
        for pair, test, a_first in open_pairs:
            games = db.execute(
                "SELECT first, state, winner, error_kind FROM games WHERE pair = ? "
                "AND kind = 'ab' ORDER BY id",
                (pair,),
            ).fetchall()
            if len(games) == 2 and any(state != "done" for _f, state, _w, _e in games):
                continue
            if len(games) < 2 or any(error == "referee" for _f, _s, _w, error in games):
                found.append((int(pair), int(test), None))
                continue
            first, second = (  # A's seat: 0 where it was the first seat's version
                0.5 if winner is None else 1.0 if winner == (0 if at_0 == a_first else 1) else 0.0
                for at_0, _state, winner, _error in games
            )
            found.append((int(pair), int(test), (first, second)))
        return found

    def collect(self) -> int:
        """Count every pair of A/B games whose two games are done, in the order they are
        seen finished (a write only when there is one: the scheduler asks often); drop
        pairs that count for nothing. Decides the tests. Returns how many pairs counted."""
        with self.store._lock:
            if not self._finished_pairs():
                return 0
            counted = 0
            try:
                with self.store.transaction() as db:
                    for pair, test, scores in self._finished_pairs():
                        if scores is None:
                            db.execute("DELETE FROM ab_pairs WHERE pair = ?", (pair,))
                            continue
                        self._count(test, pair, *scores)
                        counted += 1
            except BaseException:
                self._sprts.clear()  # replayed from the file when next needed
                raise
        return counted

    def _count(self, test: int, pair: int, first: float, second: float) -> None:
        db = self.store.db
        row = db.execute(
            "SELECT elo0, elo1, alpha, beta, state, max_pairs FROM ab_tests WHERE id = ?",
            (test,),
        ).fetchone()
        order = db.execute("SELECT COALESCE(MAX(finished_order), 0) + 1 FROM ab_pairs").fetchone()
        sprt = self._sprt(test, row)
        db.execute(
            "UPDATE ab_pairs SET finished_order = ?, score_first = ?, score_second = ? "
            "WHERE pair = ?",
            (int(order[0]), first, second, pair),
        )
        before = sprt.state
        sprt.add_pair(first, second)
        lower, upper = sprt.corrected_bounds()
        db.execute(
            "UPDATE ab_tests SET counts = ?, llr = ?, lower = ?, upper = ? WHERE id = ?",
            (_counts_text(sprt.counts), sprt.llr, lower, upper, test),
        )
        if row[4] != "running":
            return
        if before == "running" and sprt.state != "running":
            self._end(test, sprt.state, None)
        elif sprt.pairs >= int(row[5]):
            self._end(test, "budget", f"no verdict within its budget of {row[5]} pairs")

    def rated_turn(self) -> None:
        """The scheduler queued a rated pair: the next new pair may be an A/B one."""
        self._last_turn_ab = False

    def take_turn(self, seed: Callable[[], int], *, alone: bool = False) -> bool:
        """Queue the next pair of a running test if it is A/B's turn (every other new pair;
        ``alone``: no rated pair can be made now) and the A/B share of the workers has room;
        ``seed`` gives the pair's seed. True if a pair was queued."""
        if self._last_turn_ab and not alone:
            return False
        self.collect()
        with self.store._lock:  # one thread decides and queues (queue_pair: its own transaction)
            db = self.store.db
            flying = db.execute(
                "SELECT COUNT(*) FROM games WHERE kind = 'ab' AND state IN ('queued', 'leased')"
            ).fetchone()[0]
            if int(flying) + 2 > self.slots:
                return False
            tests = db.execute(
                "SELECT t.id, t.a, t.b, t.max_pairs, va.status, vb.status, va.command, "
                "vb.command, (SELECT COUNT(*) FROM ab_pairs p WHERE p.test = t.id) AS pairs, "
                "(SELECT COUNT(*) FROM ab_pairs p WHERE p.test = t.id AND p.finished_order "
                "IS NULL) AS open FROM ab_tests t JOIN versions va ON va.id = t.a "
                "JOIN versions vb ON vb.id = t.b WHERE t.state = 'running' ORDER BY open, t.id"
            ).fetchall()
            for test, a, b, budget, status_a, status_b, cmd_a, cmd_b, pairs, open_ in tests:
                gone = [s for s in (status_a, status_b) if s not in TESTABLE_OWN]
                if gone or not cmd_a or not cmd_b:
                    why = f"a version became {gone[0]}" if gone else "a version has no build"
                    with self.store.transaction():
                        self._end(int(test), "stopped", why)
                    continue
                if int(open_) >= self.settings.pairs_in_flight_per_test:
                    continue
                if int(pairs) >= int(budget):
                    continue  # its last pairs are in play
                # A crash between these two writes leaves two unrated games counted nowhere.
                pair = self.store.queue_pair("ab", seed(), int(a), int(b))
                with self.store.transaction():
                    db.execute(
                        "INSERT OR REPLACE INTO ab_pairs (pair, test, a_first, b_first) "
                        "VALUES (?, ?, ?, ?)",
                        (pair, int(test), int(a), int(b)),
                    )
                self._last_turn_ab = True
                return True
        return False
