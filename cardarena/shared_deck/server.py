"""The asyncio TCP server: logins, commands, the global turn clock and persistence.

One event loop does everything that touches game state, so no lock is needed. Connections are
:class:`asyncio.Protocol` objects (not streams): a burst of pipelined commands is parsed from
one buffer and answered with one write. Slow work runs off the loop: scrypt for logins in a
small rationed pool (:mod:`.logins`), and tournament writes in a single writer thread (so they
stay in order). Every client's share is bounded: connections, lines before login, secret
checks, command cost per turn, and output it leaves unread.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import math
import resource
import sqlite3
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .arena import Arena, DeckFactory, Tournament
from .deck import generate_deck
from .errors import ErrorCode, GameError, NetworkError
from .logins import Check, SecretChecker, source_of
from .match import Match
from .protocol import ARGUMENT_COUNTS, MAX_LINE_BYTES, execute, parse_command
from .rules import MAX_CARD_ID, RuleSet
from .store import ServerLock, Store, check_database

log = logging.getLogger("cardarena.shared_deck.server")

MIN_TURN_SECONDS = 0.05
MAX_BUFFERED_BYTES = 64 * 1024
"""Unprocessed input kept per connection (while it WAITs or floods) before reading pauses."""

FINISH_SLICE = 200
"""Matches scored per event-loop iteration when a tournament ends."""

MAX_TOURNAMENT_ATTEMPTS = 3
"""A tournament whose tick or scoring raises is played again; after this many tries of the
same tournament the server stops (a bug that repeats is not worth a silent endless loop)."""
MAX_FAILED_TICKS = 10
"""Consecutive ticks that raise before the server stops."""

COST_UNIT_BYTES = 256
"""A command costs one unit of the per-turn budget plus one per this many bytes of its answer
(``GET_DECK`` on a 1,000-card deck costs 64): the budget bounds work and output."""
DEFAULT_MAX_CONNECTIONS = 4096
ACCEPT_BACKLOG = 100
"""The listen backlog, and how many sockets asyncio accepts at once before any is counted."""
RESERVED_DESCRIPTORS = 32 + 3 * ACCEPT_BACKLOG
"""Descriptors kept free below the limit: the database, its journal, logs and the loop, and
sockets accepted but not yet counted or closed but not yet released (a few event-loop rounds
of accepts). The cap is also at most half the limit."""
REFUSED_PER_TURN = 100
"""Commands answered ``ERR 953`` in one turn before the server stops reading that client until
the next turn (its further lines are answered then): a flood cannot keep the loop busy."""
LOOP_ERROR_REPEAT_SECONDS = 60.0
"""An asyncio error (e.g. accept() out of descriptors) is logged once per this many seconds."""

_ERROR_LINES = {code: f"ERR {code.value} {code.name}\n" for code in ErrorCode}
_COMMAND_WORDS = frozenset(name.encode() for name in ARGUMENT_COUNTS)


@dataclass
class ServerConfig:
    """Everything ``shared-deck serve`` can set; every number of the game is here."""

    db_path: Path = Path("shared-deck.db")
    host: str = "127.0.0.1"
    port: int = 7000
    turn_seconds: float = 1.0
    rules: RuleSet = field(default_factory=RuleSet)
    seed: int | None = None
    command_budget: int = 1000
    """Cost units per player per turn before ``ERR 953 TooManyCommands`` (WAIT is free);
    a command costs 1 plus 1 per COST_UNIT_BYTES of its answer."""
    max_connections: int | None = None
    """Open connections at most; None: DEFAULT_MAX_CONNECTIONS, lowered to fit below the
    descriptor limit. Over it the oldest not-logged-in connection of the source (IPv4 address,
    IPv6 /64) with the most of them is closed, or the new one."""
    login_threads: int = 1
    """Threads checking secrets (scrypt), apart from the default pool."""
    login_checks_per_address: int = 128
    """Secret checks waiting or running per client source (IPv4 address, IPv6 /64); one more
    is refused at once, as is a second one for the same name from the same source."""
    max_unread_bytes: int = 1 << 20
    """Answers a client leaves unread (in the server's buffer) before it is disconnected."""
    unread_seconds: float = 10.0
    """Seconds a client may leave 64 KiB or more unread before it is disconnected."""
    login_timeout: float = 30.0
    """Seconds a connection may take to log in before it is closed."""
    prelogin_lines: int = 8
    """Lines a connection may send before it is logged in; one more and it is closed."""
    start_after_logins: int = 0
    """Hold the first tournament until this many players are logged in (demos and tests)."""
    deck_factory: DeckFactory = generate_deck
    min_players: int = 2
    """A tournament starts only while at least this many of its players are logged in
    (0: it starts whoever is connected, the behaviour before this limit existed)."""
    max_tournaments: int | None = None
    """Stop starting tournaments once this many have been stored (``serve --tournaments``)."""
    create: bool = True
    """Create the database if it does not exist (``serve --create``; the CLI defaults to no)."""
    write_attempts: int = 6
    """Tries of a database write before the server gives up and stops."""
    write_retry_seconds: float = 0.1
    """First pause between tries; it doubles each time (0.1 s: 3.1 s over six tries)."""

    def __post_init__(self) -> None:
        if not math.isfinite(self.turn_seconds) or self.turn_seconds < MIN_TURN_SECONDS:
            raise ValueError(f"turn_seconds must be a number of at least {MIN_TURN_SECONDS}")
        if not math.isfinite(self.login_timeout) or self.login_timeout <= 0:
            raise ValueError("login_timeout must be a positive number of seconds")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be in 0..65535, got {self.port}")
        if self.command_budget < 1:
            raise ValueError("command_budget must be at least 1")
        if self.min_players < 0:
            raise ValueError("min_players must not be negative")
        if self.start_after_logins < 0:
            raise ValueError("start_after_logins must not be negative")
        if self.max_tournaments is not None and self.max_tournaments < 1:
            raise ValueError("max_tournaments must be at least 1")
        if self.write_attempts < 1:
            raise ValueError("write_attempts must be at least 1")
        if not math.isfinite(self.write_retry_seconds) or self.write_retry_seconds < 0:
            raise ValueError("write_retry_seconds must be a non-negative number")
        if self.rules.deck_size > MAX_CARD_ID:
            # Card ids are unique in a deck and at most MAX_CARD_ID: a larger deck cannot be
            # made, whatever the number of players (found only at the first tournament before).
            raise ValueError(f"deck_size must be at most {MAX_CARD_ID}, got {self.rules.deck_size}")
        if self.prelogin_lines < 2:
            raise ValueError("prelogin_lines must be at least 2 (a name and a secret)")
        if self.max_connections is not None and self.max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        if self.login_threads < 1 or self.login_checks_per_address < 1:
            raise ValueError("login_threads and login_checks_per_address must be at least 1")
        if self.max_unread_bytes < 1:
            raise ValueError("max_unread_bytes must be at least 1")
        if not math.isfinite(self.unread_seconds) or self.unread_seconds <= 0:
            raise ValueError("unread_seconds must be a positive number of seconds")


def raise_descriptor_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit (as far as allowed); returns the soft one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft == resource.RLIM_INFINITY or soft >= target:
        return soft if soft != resource.RLIM_INFINITY else target
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):
        return soft
    return target


def connection_cap(configured: int | None, descriptors: int, others: int = 0) -> int:
    """The connection cap: the configured one or the default, below the descriptor limit
    less ``others`` (descriptors another part of the process may take: the dashboard)."""
    fits = max(1, descriptors - others - max(RESERVED_DESCRIPTORS, descriptors // 2))
    wanted = DEFAULT_MAX_CONNECTIONS if configured is None else configured
    if wanted > fits:
        log.warning(
            "max_connections %d lowered to %d (descriptor limit %d)", wanted, fits, descriptors
        )
    return min(wanted, fits)


class _Budget:
    """What a player's commands have cost during one turn, and how many were refused."""

    __slots__ = ("refused", "turn", "used")

    def __init__(self) -> None:
        self.turn = -1
        self.used = 0
        self.refused = 0


class _Prelogin:
    """Connections not logged in yet, per source, oldest first. At the cap the first to go is
    the oldest one of the source that has the most (found in O(1): sources are kept in
    buckets by their count), so connections from some sources, however many, never close a
    player's login from another source."""

    def __init__(self) -> None:
        self.by_source: dict[str, dict[Connection, None]] = {}
        self.by_size: dict[int, dict[str, None]] = {}
        self.largest = 0

    def __len__(self) -> int:
        return sum(len(connections) for connections in self.by_source.values())

    def _resize(self, source: str, old: int, new: int) -> None:
        if old:
            bucket = self.by_size[old]
            del bucket[source]
            if not bucket:
                del self.by_size[old]
        if new:
            self.by_size.setdefault(new, {})[source] = None
        if new > self.largest:
            self.largest = new
        while self.largest and self.largest not in self.by_size:
            self.largest -= 1

    def add(self, connection: Connection) -> None:
        connections = self.by_source.setdefault(connection.source, {})
        connections[connection] = None
        self._resize(connection.source, len(connections) - 1, len(connections))

    def remove(self, connection: Connection) -> None:
        connections = self.by_source.get(connection.source)
        if connections is None or connection not in connections:
            return
        del connections[connection]
        self._resize(connection.source, len(connections) + 1, len(connections))
        if not connections:
            del self.by_source[connection.source]

    def victim(self) -> Connection | None:
        """The oldest connection of the source with the most; None if there is none."""
        if not self.largest:
            return None
        source = next(iter(self.by_size[self.largest]))
        return next(iter(self.by_source[source]))


class GameServer:
    """A Shared Deck server: ``await start()``, then ``await stop()``.

    ``done`` is set when the server has finished on its own: after ``max_tournaments``, or
    when it cannot go on (``failure`` then says why); the owner should then call ``stop()``.
    """

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.loop: asyncio.AbstractEventLoop | None = None
        self.store: Store | None = None
        self.arena: Arena | None = None
        self.sessions: dict[str, Connection] = {}
        self.budgets: dict[str, _Budget] = {}
        self.waiting: list[Connection] = []
        self.throttled: list[Connection] = []
        """Connections over REFUSED_PER_TURN, not read from until the next turn."""
        self.connections: set[Connection] = set()
        self.saved_tournaments: list[int] = []
        self.internal_errors = 0
        self.tick_lateness: deque[float] = deque(maxlen=100_000)
        """Seconds each tick ran after its scheduled time, for diagnostics."""
        self.failed_ticks = 0
        """Ticks that raised (each logged with its traceback, then handled)."""
        self.failure: str | None = None
        """Why the server stopped on its own (a write that kept failing, a repeating bug)."""
        self.done = asyncio.Event()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shared-deck-db")
        self._writer_store: Store | None = None
        self._finishing: set[asyncio.Future[None]] = set()
        self._pending: Tournament | None = None
        """The tournament that has ended but is not yet stored: the next one waits for it."""
        self._attempts: dict[int, int] = {}
        self._failed_in_a_row = 0
        self._last_tick_error = ""
        self._listener: asyncio.Server | None = None
        self._lock: ServerLock | None = None
        self._tick_handle: asyncio.TimerHandle | None = None
        self._ticks = 0
        self._clock_origin = 0.0
        self._saved_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self.address: tuple[str, int] = (config.host, config.port)
        self._holding_first = config.start_after_logins > 0
        self.max_connections = config.max_connections or DEFAULT_MAX_CONNECTIONS
        self.prelogin = _Prelogin()
        """Connections not logged in yet (the first to go when the cap is hit)."""
        self.other_descriptors = 0
        """Descriptors another part of the process may take (the dashboard's connections):
        kept out of the connection cap, so that they are never the players'."""
        self.refused_connections = 0
        """Connections closed at once because of the cap (new ones, or old ones not logged in)."""
        self.dropped_nonreaders = 0
        self.checker: SecretChecker | None = None
        self._loop_errors: dict[str, tuple[float, int]] = {}
        self._cap_reported = -math.inf
        self._tick_listeners: list[Callable[[], None]] = []
        self.view = ServerView(self)
        """What an observer (the web dashboard) may read of this server: see :class:`ServerView`."""

    # -------------------------------------------------------------- lifecycle
    async def start(self) -> tuple[str, int]:
        """Bind the port, lock and open the database, then start the clock and the listener.

        In that order: a port in use fails before any file is touched, and a second server on
        the same database fails on the lock before it reads or writes anything.
        """
        self.loop = asyncio.get_running_loop()
        self.max_connections = connection_cap(
            self.config.max_connections, raise_descriptor_limit(), self.other_descriptors
        )
        try:
            self._listener = await self.loop.create_server(
                lambda: Connection(self),
                self.config.host,
                self.config.port,
                backlog=ACCEPT_BACKLOG,
                start_serving=False,
            )
        except OSError as error:
            where = (self.config.host, self.config.port)
            raise NetworkError.about("listen on", *where, error) from None
        self.loop.set_exception_handler(self._loop_error)
        self.checker = SecretChecker(
            self.loop, self.config.login_threads, self.config.login_checks_per_address
        )
        try:
            check_database(self.config.db_path)  # another application's file: no lock made
            self._lock = ServerLock(self.config.db_path)
            self.store = Store(self.config.db_path, create=self.config.create)
            self._writer_store = await self.loop.run_in_executor(
                self._writer, Store, self.config.db_path
            )
            discarded = self.store.discard_unfinished()
            if discarded:
                log.warning("discarded unfinished tournament(s) %s; playing again", discarded)
            base_seed = self.store.base_seed(self.config.seed)
            next_tournament, next_match_id = self.store.next_numbers()
        except BaseException:
            self._listener.close()
            self.checker.close()
            self.loop.set_exception_handler(None)
            await self.loop.run_in_executor(self._writer, self._close_writer)
            self._writer.shutdown(wait=True)
            if self.store is not None:
                self.store.close()
            if self._lock is not None:
                self._lock.release()
            raise
        self.arena = Arena(
            self.config.rules, base_seed, next_tournament, next_match_id, self.config.deck_factory
        )
        log.info("base seed %d, next tournament %d", base_seed, next_tournament)
        self._start_tournament()
        await self._listener.start_serving()
        host, port = self._listener.sockets[0].getsockname()[:2]
        self.address = (host, port)
        self._clock_origin = self.loop.time()
        self._schedule_tick()
        return self.address

    async def stop(self) -> None:
        """Stop the clock and the listener, close every connection, drop the running tournament."""
        if self.tick_lateness:
            lateness = sorted(self.tick_lateness)
            log.info(
                "%d ticks, lateness p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                len(lateness),
                1000 * lateness[len(lateness) // 2],
                1000 * lateness[min(len(lateness) - 1, int(0.99 * len(lateness)))],
                1000 * lateness[-1],
            )
        if self._tick_handle is not None:
            self._tick_handle.cancel()
        if self._listener is not None:
            self._listener.close()
        for connection in list(self.connections):
            connection.close()
        if self._listener is not None:
            await self._listener.wait_closed()
        if self._finishing:  # a tournament that has ended is still saved
            await asyncio.gather(*self._finishing)
        assert self.loop is not None
        if self.checker is not None:
            self.checker.close()
            await self.loop.run_in_executor(None, self.checker.shutdown)
        self.loop.set_exception_handler(None)
        await self.loop.run_in_executor(self._writer, self._close_writer)
        self._writer.shutdown(wait=True)
        if self.store is not None:
            try:
                self.store.discard_unfinished()
            except sqlite3.Error as error:  # e.g. the disk is still full: the next start does it
                log.warning("could not drop the unfinished tournament now: %s", error)
            self.store.close()
        if self._lock is not None:
            self._lock.release()
        gc.unfreeze()  # hand the heap back to the collector (matters when embedded, as in tests)

    def _close_writer(self) -> None:
        if self._writer_store is not None:
            self._writer_store.close()

    def add_tick_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` on the server's loop once per tick, after the tick's game work
        and before the commands held by WAIT are answered. It must be quick; an exception is
        logged and does not touch the clock. (The web dashboard pushes its snapshot here.)"""
        self._tick_listeners.append(listener)

    def remove_tick_listener(self, listener: Callable[[], None]) -> None:
        with contextlib.suppress(ValueError):
            self._tick_listeners.remove(listener)

    async def wait_for_saved_tournaments(self, count: int) -> None:
        """Return once ``count`` tournaments have been committed since this server started."""
        assert self.loop is not None
        if len(self.saved_tournaments) >= count:
            return
        waiter = self.loop.create_future()
        self._saved_waiters.append((count, waiter))
        await waiter

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        """asyncio's own errors (e.g. accept() out of descriptors, retried every second by the
        loop): logged with their traceback once per LOOP_ERROR_REPEAT_SECONDS, then counted."""
        key = f"{context.get('message')}: {type(context.get('exception')).__name__}"
        now = time.monotonic()
        logged_at, repeats = self._loop_errors.get(key, (-math.inf, 0))
        if now - logged_at < LOOP_ERROR_REPEAT_SECONDS:
            self._loop_errors[key] = (logged_at, repeats + 1)
            return
        self._loop_errors[key] = (now, 0)
        if repeats:
            context = {**context, "message": f"{context.get('message')} ({repeats} more since)"}
        loop.default_exception_handler(context)

    def admit(self, connection: Connection) -> bool:
        """A new connection counts against the cap: over it, the oldest connection that has not
        logged in, of the source with the most such connections, is closed to make room, or
        else the new one is refused (False)."""
        self.connections.add(connection)
        if len(self.connections) <= self.max_connections:
            self.prelogin.add(connection)
            return True
        self.refused_connections += 1
        now = time.monotonic()
        if now - self._cap_reported >= LOOP_ERROR_REPEAT_SECONDS:
            self._cap_reported = now
            log.warning(
                "connection cap %d reached (%d closed so far); see --max-connections",
                self.max_connections, self.refused_connections,
            )  # fmt: skip
        oldest = self.prelogin.victim()
        if oldest is not None:
            oldest.abort()
            self.prelogin.add(connection)
            return True
        self.connections.discard(connection)
        return False

    @property
    def storing(self) -> bool:
        """A tournament has ended and is being scored and stored (the next one waits)."""
        return self._pending is not None

    def seconds_to_next_tick(self) -> float | None:
        """How long until the clock ticks again; None once it has stopped."""
        if self._tick_handle is None or self.loop is None:
            return None
        now = self.loop.time()
        due = self._clock_origin + self._ticks * self.config.turn_seconds
        if due <= now:  # asked during a tick, before the next one is scheduled
            due += self.config.turn_seconds
        return max(0.0, due - now)

    def _halt(self, reason: str) -> None:
        """Fail loudly: stop the clock (so no tournament starts) and tell the owner to stop."""
        if self.failure is None:
            self.failure = reason
            log.critical("stopping: %s", reason)
        if self._tick_handle is not None:
            self._tick_handle.cancel()
            self._tick_handle = None
        self.done.set()

    # ------------------------------------------------------------------ clock
    def _schedule_tick(self) -> None:
        """The next tick at its place on the clock (ticks that are late run back to back)."""
        assert self.loop is not None
        if self.failure is not None:
            return
        self._ticks += 1
        due = self._clock_origin + self._ticks * self.config.turn_seconds
        self._tick_handle = self.loop.call_at(due, self._tick, due)

    def _tick(self, due: float) -> None:
        """A global turn passes: a finished tournament is handed over to be scored and stored,
        the next one starts once the last is stored, then WAITs get their OK and the commands
        they held are answered. An exception is logged and handled: the clock goes on."""
        assert self.loop is not None
        self.tick_lateness.append(self.loop.time() - due)
        waiting, self.waiting = self.waiting, []
        try:
            self._advance()
            self._failed_in_a_row = 0
        except Exception as error:
            self._tick_failed(error)
        for listener in self._tick_listeners:  # the state at the tick, before the new commands
            try:
                listener()
            except Exception:
                log.exception("a tick listener failed; the clock goes on")
        for connection in waiting:
            connection.announce_turn()
        for connection in waiting:
            try:
                connection.resume()
            except Exception:
                self.internal_errors += 1
                log.exception("internal error answering the commands held by WAIT")
                connection.close()
        throttled, self.throttled = self.throttled, []
        for connection in throttled:  # one callback each: the loop serves others in between
            self.loop.call_soon(connection.resume)
        self._schedule_tick()
        # What survived a turn is long-lived (matches, logs): keep it out of the cyclic
        # collector's scans, which otherwise stall the loop for tens of milliseconds.
        gc.freeze()

    def _advance(self) -> None:
        assert self.arena is not None
        finished = self.arena.tick()
        if finished is not None:
            self._pending = finished
            task = asyncio.ensure_future(self._finish(finished, self.arena.turn))
            self._finishing.add(task)
            task.add_done_callback(self._finishing.discard)
        self._start_tournament()

    def _tick_failed(self, error: Exception) -> None:
        """Log the traceback once per distinct error, and play the running tournament again
        from its start (same number and deck): its state can no longer be trusted."""
        self.failed_ticks += 1
        self._failed_in_a_row += 1
        signature = f"{type(error).__name__}: {error}"
        if signature != self._last_tick_error:
            log.error("turn %d failed; the clock goes on", self._ticks, exc_info=error)
            self._last_tick_error = signature
        else:
            log.error("turn %d failed again: %s", self._ticks, signature)
        assert self.arena is not None
        running = self.arena.current
        if running is not None:
            self.arena.current = None
            self._replay(running, "its turn failed")
        if self._failed_in_a_row >= MAX_FAILED_TICKS:
            self._halt(f"{self._failed_in_a_row} turns in a row failed; last: {signature}")

    def _replay(self, tournament: Tournament, why: str) -> None:
        """Forget a tournament and play it again next: same number, seed, deck, match ids."""
        assert self.arena is not None
        attempts = self._attempts.get(tournament.number, 0) + 1
        self._attempts[tournament.number] = attempts
        if attempts >= MAX_TOURNAMENT_ATTEMPTS:
            self._halt(f"tournament {tournament.number} failed {attempts} times ({why})")
            return
        log.warning("tournament %d abandoned (%s); it will be played again", tournament.number, why)
        self.arena.next_tournament = tournament.number
        self.arena.next_match_id = tournament.first_match_id
        if self.arena.previous is tournament:
            self.arena.previous = None
        self._submit(Store.discard_unfinished)

    def _start_tournament(self) -> None:
        """Start the next tournament if none is running or waiting to be stored, the limit
        is not reached, and enough of its players are logged in."""
        assert self.arena is not None and self.store is not None
        if self.arena.current is not None or self._pending is not None or self.failure:
            return
        limit = self.config.max_tournaments
        if limit is not None and len(self.saved_tournaments) >= limit:
            return
        needed = self.config.min_players
        if self._holding_first:
            needed = max(needed, self.config.start_after_logins)
        if len(self.sessions) < needed:
            return
        players = self.store.player_names()
        if sum(name in self.sessions for name in players) < needed:
            return
        self._holding_first = False
        tournament = self.arena.start_tournament(players)
        if tournament is None:
            return
        log.info(
            "tournament %d started at turn %d: %d players, %d matches, deck seed %d",
            tournament.number,
            tournament.start_turn,
            len(tournament.matches_of),
            len(tournament.pairs),
            tournament.seed,
        )
        number, seed = tournament.number, tournament.seed
        self._submit(Store.begin_tournament, number, seed, tournament.rules, tournament.deck)

    async def _finish(self, tournament: Tournament, turn: int) -> None:
        """Score a finished tournament a slice at a time, so that the clock and the commands
        are not held up, then store it; only then may the next tournament start."""
        try:
            results = []
            for result in tournament.match_results(turn):
                results.append(result)
                if len(results) % FINISH_SLICE == 0:
                    await asyncio.sleep(0)
            summary = tournament.summarize(results)
        except Exception as error:
            self.internal_errors += 1
            log.error("scoring tournament %d failed", tournament.number, exc_info=error)
            self._pending = None
            self._replay(tournament, "its scoring failed")
            return
        finally:
            # Once per tournament, let the collector see everything again (frozen cyclic
            # garbage would otherwise never be freed): one full collection, at a known time.
            gc.unfreeze()
            gc.collect()
        try:
            await asyncio.wrap_future(self._submit(Store.finish_tournament, summary))
        except Exception as error:
            self._halt(f"tournament {summary.number} could not be stored: {error}")
            return
        log.info(
            "tournament %d stored: %s",
            summary.number,
            ", ".join(f"{name} {points:.2f}" for name, points in sorted(summary.points.items())),
        )
        self._pending = None
        self._on_saved(summary.number)

    def _submit(self, write: Callable[..., object], *args: object) -> Future[None]:
        """Run ``write(store, *args)``, a :class:`Store` method such as
        ``Store.finish_tournament``, on the writer thread's store (in submission order),
        retrying a failed write with a doubling pause; a write that still fails stops the
        server. The method is named, not spelled as a string: renaming it breaks here loudly."""
        attempts, pause = self.config.write_attempts, self.config.write_retry_seconds
        method = write.__name__

        def call() -> None:
            assert self._writer_store is not None
            delay = pause
            for attempt in range(1, attempts + 1):
                try:
                    write(self._writer_store, *args)
                    return
                except (sqlite3.Error, OSError) as error:
                    if attempt == attempts:
                        log.error(
                            "database write %s failed %d times", method, attempts, exc_info=error
                        )
                        raise
                    log.warning(
                        "database write %s failed (%s); try %d of %d in %.1f s",
                        method, error, attempt + 1, attempts, delay,
                    )  # fmt: skip
                    time.sleep(delay)
                    delay *= 2

        if write is Store.finish_tournament:
            what = f"storing tournament {getattr(args[0], 'number', '?')}"
        elif write is Store.begin_tournament:
            what = f"recording the start of tournament {args[0]}"
        else:
            what = f"database write {method}"

        def check(done: Future[None]) -> None:
            error = done.exception()
            if error is not None and self.loop is not None:
                with contextlib.suppress(RuntimeError):  # the loop may already be closed
                    self.loop.call_soon_threadsafe(
                        self._halt, f"{what} failed {attempts} time(s): {error}"
                    )

        future = self._writer.submit(call)
        future.add_done_callback(check)
        return future

    def _on_saved(self, number: int) -> None:
        """A tournament is committed: wake whoever waits for it; stop after the last one."""
        self.saved_tournaments.append(number)
        still_waiting = []
        for count, waiter in self._saved_waiters:
            if len(self.saved_tournaments) >= count:
                if not waiter.done():
                    waiter.set_result(None)
            else:
                still_waiting.append((count, waiter))
        self._saved_waiters = still_waiting
        limit = self.config.max_tournaments
        if limit is not None and len(self.saved_tournaments) >= limit:
            log.info("%d tournament(s) stored: done", len(self.saved_tournaments))
            self.done.set()

    # ---------------------------------------------------------------- players
    def logged_in(self, name: str, connection: Connection) -> _Budget:
        """Make ``connection`` the player's only one, closing an older login."""
        older = self.sessions.get(name)
        if older is not None and older is not connection:
            older.close(_ERROR_LINES[ErrorCode.LoggedInElsewhere])
        self.sessions[name] = connection
        return self.budgets.setdefault(name, _Budget())

    def answer(self, player: str, budget: _Budget, line: bytes | bytearray) -> str:
        """The answer to one command line of a logged-in player (WAIT is handled by the caller)."""
        assert self.arena is not None
        turn = self.arena.turn
        if budget.turn != turn:
            budget.turn = turn
            budget.used = 0
            budget.refused = 0
        if budget.used >= self.config.command_budget:
            budget.refused += 1
            return _ERROR_LINES[ErrorCode.TooManyCommands]
        try:
            command, args = parse_command(line)
            answer = execute(self.arena, player, command, args)
        except GameError as error:
            budget.used += 1
            return _ERROR_LINES[error.code]
        except Exception:
            budget.used += 1
            self.internal_errors += 1
            log.exception("internal error answering %r for %s", line[:100], player)
            return _ERROR_LINES[ErrorCode.WrongArguments]
        # Charged after the answer is known: the last command of a turn may overdraw a little.
        budget.used += 1 + len(answer) // COST_UNIT_BYTES
        return answer


class ServerView:
    """A read-only view of a :class:`GameServer` for observers (the web dashboard): the clock,
    who is online, the running tournament and its matches, and a few facts of the
    configuration. Read it on the server's loop (in a tick listener or a handler running on
    that loop). The running :class:`~.arena.Tournament` and its matches are handed out to be
    read; an observer may bring a match up to the clock (:meth:`~.match.Match.sync`), as the
    player's next command would, and changes nothing else."""

    __slots__ = ("_server",)

    def __init__(self, server: GameServer) -> None:
        self._server = server

    @property
    def db_path(self) -> Path:
        return self._server.config.db_path

    @property
    def host(self) -> str:
        """Where the game listens (the dashboard's default address)."""
        return self._server.config.host

    @property
    def turn_seconds(self) -> float:
        return self._server.config.turn_seconds

    @property
    def turn(self) -> int | None:
        """The global turn; None before the server has started."""
        arena = self._server.arena
        return None if arena is None else arena.turn

    def seconds_to_next_tick(self) -> float | None:
        """How long until the clock ticks again; None once it has stopped (or not started)."""
        return self._server.seconds_to_next_tick()

    @property
    def status(self) -> str:
        """``stopped`` (it failed), ``playing``, ``storing`` (a tournament ended and is being
        stored; the next one waits for it) or ``waiting`` (for players)."""
        if self._server.failure is not None:
            return "stopped"
        if self.running is not None:
            return "playing"
        return "storing" if self._server.storing else "waiting"

    @property
    def online(self) -> list[str]:
        """The names of the players logged in now, sorted."""
        return sorted(self._server.sessions)

    def is_online(self, name: str) -> bool:
        return name in self._server.sessions

    @property
    def stored(self) -> int:
        """Tournaments stored since the server started (the version of every stored view)."""
        return len(self._server.saved_tournaments)

    @property
    def running(self) -> Tournament | None:
        """The tournament being played now."""
        arena = self._server.arena
        return None if arena is None else arena.current

    @property
    def ended(self) -> Tournament | None:
        """The tournament played before the running one (it may still be being stored)."""
        arena = self._server.arena
        return None if arena is None else arena.previous

    def match(self, match_id: int) -> tuple[Match, Tournament] | None:
        """A match of the running or the previous tournament, with its tournament."""
        arena = self._server.arena
        return None if arena is None else arena.match(match_id)


_NAME, _SECRET, _CHECKING, _READY, _CLOSED = range(5)


class Connection(asyncio.Protocol):
    """One client: the login handshake, then one answer per command line, in order."""

    def __init__(self, server: GameServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.stage = _NAME
        self.player = ""
        self.budget: _Budget | None = None
        self.held = False
        """True while an answer is pending (WAIT, or the secret being checked): lines wait."""
        self.discarding = False
        """True while the rest of an over-long line is being dropped."""
        self.eof = False
        self.reading_paused = False
        self.writing_paused = False
        self.login_timer: asyncio.TimerHandle | None = None
        self.login_check: Check | None = None
        self.unread_timer: asyncio.TimerHandle | None = None
        """Runs while 64 KiB or more of answers are unread; disconnects at unread_seconds."""
        self.continuing = False
        """True while the rest of a long buffer is scheduled to be answered (in slices)."""
        self.prelogin_used = 0
        """Lines received before login; past ServerConfig.prelogin_lines the client is closed."""
        self.address = ""
        self.source = ""
        """The client's address and its source (IPv4 address, IPv6 /64: logins.source_of)."""

    # ------------------------------------------------------------- transport
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.address = str(peer[0]) if isinstance(peer, tuple) else str(peer)
        self.source = source_of(self.address)
        if not self.server.admit(self):
            self.abort()  # over the cap: closed before a byte is sent, nothing logged
            return
        transport.write(b"LOGIN\n")
        assert self.server.loop is not None
        self.login_timer = self.server.loop.call_later(
            self.server.config.login_timeout, self._login_timed_out
        )

    def data_received(self, data: bytes) -> None:
        if (
            not self.buffer
            and not self.held
            and not self.discarding
            and self.stage == _READY
            and not self.writing_paused
            and data.find(b"\n") == len(data) - 1
            and len(data) <= MAX_LINE_BYTES
        ):
            # The usual case, one whole short command: answer it without buffering.
            assert self.transport is not None
            line = data[:-2] if data.endswith(b"\r\n") else data[:-1]
            self._write(self._answer(line).encode())
            if self.budget is not None and self.budget.refused >= REFUSED_PER_TURN:
                self._throttle()
            return
        self.buffer += data
        if not self.held:
            self._process()
        if len(self.buffer) > MAX_BUFFERED_BYTES:
            self._update_reading()

    def eof_received(self) -> bool:
        """A half-closed socket: answer what was received, then close."""
        self.eof = True
        if not self.held:
            self._process()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self.stage = _CLOSED
        self.server.connections.discard(self)
        self.server.prelogin.remove(self)
        self.buffer = bytearray()
        if self.login_timer is not None:
            self.login_timer.cancel()
        if self.unread_timer is not None:
            self.unread_timer.cancel()
        if self.login_check is not None and self.server.checker is not None:
            self.server.checker.cancel(self.login_check)  # not run if it has not started
        if self.server.sessions.get(self.player) is self:
            del self.server.sessions[self.player]
        with contextlib.suppress(ValueError):
            self.server.waiting.remove(self)
        with contextlib.suppress(ValueError):
            self.server.throttled.remove(self)

    def pause_writing(self) -> None:
        """The client does not read its answers: stop reading its commands meanwhile, and
        disconnect it if it leaves them unread for too long."""
        self.writing_paused = True
        assert self.server.loop is not None
        if self.unread_timer is None:
            self.unread_timer = self.server.loop.call_later(
                self.server.config.unread_seconds, self._drop_nonreader
            )
        self._update_reading()

    def resume_writing(self) -> None:
        """The client has read enough: answer the lines held meanwhile, then read again."""
        self.writing_paused = False
        if self.unread_timer is not None:
            self.unread_timer.cancel()
            self.unread_timer = None
        if self.buffer and not self.held:
            self._process()
        self._update_reading()

    def _write(self, data: bytes) -> None:
        """Send answers; a client with too much output unread is disconnected."""
        assert self.transport is not None
        self.transport.write(data)
        if self.transport.get_write_buffer_size() > self.server.config.max_unread_bytes:
            self._drop_nonreader()

    def _drop_nonreader(self) -> None:
        if self.stage != _CLOSED:
            self.server.dropped_nonreaders += 1
            log.info("disconnected %s: it left its answers unread", self.player or "a client")
        self.abort()

    def abort(self) -> None:
        """Close at once, dropping the output not yet sent and the input not yet answered."""
        self.stage = _CLOSED
        self.server.connections.discard(self)
        self.server.prelogin.remove(self)
        self.buffer = bytearray()
        if self.transport is not None:
            self.transport.abort()

    def close(self, last_line: str = "") -> None:
        """Close after the answers already written and ``last_line`` (which says why)."""
        if self.transport is not None and self.stage != _CLOSED:
            self.stage = _CLOSED
            if last_line:
                self.transport.write(last_line.encode())
            self.transport.close()

    def _update_reading(self) -> None:
        if self.transport is None or self.stage == _CLOSED:
            return
        should_pause = self.writing_paused or len(self.buffer) > MAX_BUFFERED_BYTES
        if should_pause and not self.reading_paused:
            self.transport.pause_reading()
        elif not should_pause and self.reading_paused:
            self.transport.resume_reading()
        self.reading_paused = should_pause

    def _login_timed_out(self) -> None:
        # The timeout is the client's time to send its name and secret. A secret already sent
        # is waiting for the (rationed, bounded) check: the server's slowness must not cost
        # an honest player its login.
        if self.stage in (_NAME, _SECRET):
            self.close()

    # ----------------------------------------------------------------- lines
    def _process(self) -> None:
        """Answer every complete line in the buffer until one must wait, or until the client
        has not read enough of its answers (the rest is answered once it has)."""
        if self.transport is None or self.stage == _CLOSED:
            return
        buffer = self.buffer
        answers: list[str] = []
        size = 0
        start = 0
        stalled = False
        while not self.held and self.stage != _CLOSED:
            if self.writing_paused:  # the client is behind: hold the rest of its lines
                stalled = True
                break
            if start > MAX_BUFFERED_BYTES:  # a long burst: answer the rest in a later callback
                stalled = True
                if not self.continuing:
                    self.continuing = True
                    assert self.server.loop is not None
                    self.server.loop.call_soon(self._continue)
                break
            end = buffer.find(b"\n", start)
            if end < 0:
                break
            line = buffer[start:end]
            start = end + 1
            if self.discarding:
                self.discarding = False
                continue
            if line.endswith(b"\r"):
                line = line[:-1]
            answer = (
                _ERROR_LINES[ErrorCode.LineTooLong]
                if len(line) > MAX_LINE_BYTES
                else self._answer(line)
            )
            answers.append(answer)
            size += len(answer)
            if self.budget is not None and self.budget.refused >= REFUSED_PER_TURN:
                self._throttle()  # sets held: the loop ends here
            if size > MAX_BUFFERED_BYTES and self.stage != _CLOSED:
                self._write("".join(answers).encode())  # may pause writing: seen above
                answers, size = [], 0
        del buffer[:start]
        if not self.held and not stalled and len(buffer) > MAX_LINE_BYTES + 1:
            # An unfinished line is already too long: refuse it now and drop it as it arrives.
            if not self.discarding:
                answers.append(_ERROR_LINES[ErrorCode.LineTooLong])
                self.discarding = True
            buffer.clear()
        if answers and self.stage != _CLOSED:
            self._write("".join(answers).encode())
        if self.eof and not self.held and not stalled:
            self.close()
        elif self.reading_paused:
            self._update_reading()

    def _continue(self) -> None:
        self.continuing = False
        if not self.held:
            self._process()

    def _throttle(self) -> None:
        """Refused too often this turn: hold the client's lines until the next turn."""
        if not self.held and self.stage == _READY:
            self.held = True
            self.server.throttled.append(self)

    def _answer(self, line: bytes | bytearray) -> str:
        if self.stage == _READY:
            assert self.budget is not None
            if line.strip() == b"WAIT":
                self.held = True
                self.server.waiting.append(self)
                return "OK\n"
            return self.server.answer(self.player, self.budget, line)
        self.prelogin_used += 1
        if self.prelogin_used > self.server.config.prelogin_lines:
            # A flood before login costs the server nothing more: close without an answer.
            self.close()
            return ""
        if self.stage == _NAME:
            words = line.split()
            if words and bytes(words[0]) in _COMMAND_WORDS:
                return _ERROR_LINES[ErrorCode.NotLoggedIn]
            self.player = line.decode("ascii", errors="replace").strip()
            self.stage = _SECRET
            return "PASSWORD\n"
        # _SECRET: check it off the loop; further lines wait until then.
        self.stage = _CHECKING
        self.held = True
        server = self.server
        assert server.store is not None and server.checker is not None
        assert server.loop is not None and self.transport is not None
        self.login_check = server.checker.submit(
            self.address,
            self.player,
            line.decode("utf-8", errors="replace"),
            server.store.secret_hash(self.player),
            self._secret_checked,
        )
        if self.login_check is None:
            # Too many checks for this address or name: closed at once, without an answer
            # (not ERR 940: the secret was not checked, and a client may try again later).
            server.loop.call_soon(self.close)  # after this batch's answers are written
        return ""

    def _secret_checked(self, accepted: bool | None) -> None:
        self.login_check = None
        if self.stage == _CLOSED or self.transport is None:
            return
        if accepted is None:  # replaced unrun by a newer login for the name from this source
            self.close()
            return
        if not accepted:
            self.transport.write(_ERROR_LINES[ErrorCode.AuthenticationFailed].encode())
            self.close()
            return
        if self.login_timer is not None:
            self.login_timer.cancel()
        self.server.prelogin.remove(self)
        self.budget = self.server.logged_in(self.player, self)
        self.stage = _READY
        self.transport.write(b"OK\n")
        self.held = False
        self._process()

    def announce_turn(self) -> None:
        """The clock ticked while this connection WAITed: the second OK."""
        if self.transport is not None and self.stage != _CLOSED:
            self.transport.write(b"OK\n")

    def resume(self) -> None:
        """A new turn: answer the commands that arrived during the WAIT (or the throttle)."""
        if self.transport is not None and self.stage != _CLOSED:
            self.held = False
            self._process()
