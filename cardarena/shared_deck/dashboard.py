"""The read-only web dashboard of ``shared-deck serve --http-port N`` (aiohttp, same event loop).

Why this shape: the game server owns one asyncio loop and must never wait for a browser. So
the live view is one JSON snapshot built once per tick (at most every ``MIN_SNAPSHOT_SECONDS``)
and only while somebody watches; it is encoded once and handed to every watcher through a
one-slot queue that drops the older snapshot, so a slow browser only ever misses snapshots.
Stored results are read through a read-only SQLite connection in a thread of its own; the
pages are static HTML/CSS/JS shipped with the package, which fetch JSON from ``/api/...``.
No secret, hash or seed of the server's is in any answer (deck seeds are public: they are
printed in the results too).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import sqlite3
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..httpguard import (
    BASE_DESCRIPTORS,
    ConnectionGuard,
    HostCheck,
    HttpLimits,
    accept_reserve,
    raise_descriptor_limit,
)
from ..pages import content_policy, render
from .errors import ErrorCode, GameError, NetworkError
from .match import ACTIONS, Action
from .results import player_rows  # the same table as ``shared-deck results --tournament``
from .rules import Card, Creature, MatchState
from .store import NAME_PATTERN, Store, StoredMatch

if TYPE_CHECKING:
    from .arena import Tournament
    from .server import ServerView

log = logging.getLogger("cardarena.shared_deck.dashboard")

MIN_SNAPSHOT_SECONDS = 0.2
"""Live snapshots are built at most this often, however short the turns."""
LIVE_MATCHES = 12
"""Matches of the running tournament whose boards are in every snapshot (the first ones by id;
any other one is on its own page)."""
MAX_WATCHERS = 500
"""Open live streams; one more is answered 503 (at most 3/4 of the connection cap)."""
DESCRIPTOR_SHARE = 8
"""The dashboard's connections take at most 1/8 of the process's descriptor limit."""
HEARTBEAT_SECONDS = 15.0
"""A comment line on an idle stream, so that proxies and browsers keep it open."""
WRITE_TIMEOUT_SECONDS = 30.0
"""A watcher whose socket accepts nothing for this long is dropped."""
PLAYER_MATCHES = 100
"""Stored matches listed on a player's page, newest first."""
CACHED_ANSWERS = 32
"""Encoded JSON answers kept (replayed matches, tournaments, the leaderboard): what is stored
never changes, so each is encoded once; the leaderboard's key changes with every tournament."""
LEADERBOARD_COLUMNS = 10
"""Per-tournament point columns on the leaderboard (the latest tournaments)."""

_STATIC = resources.files("cardarena.shared_deck") / "web"
_STATIC_TYPES = {
    "dashboard.js": "text/javascript",
    "dashboard.css": "text/css",
    "index.html": "text/html",
}
_NUMBER = r"{number:[0-9]{1,15}}"


# ------------------------------------------------------------------ JSON views
def card_json(card: Card) -> list[Any]:
    """``[id, type, attack, hp, hp_max, cost, mana]``: the protocol's card fields, in order."""
    return [card.id, card.type, card.attack, card.hp, card.hp_max, card.cost, card.mana]


def creature_json(creature: Creature) -> list[Any]:
    """A card's fields with the current stats, then 1 if the creature is active."""
    return [
        creature.id, "C", creature.attack, creature.hp, creature.hp_max, creature.cost,
        creature.mana, int(creature.active),
    ]  # fmt: skip


def state_json(state: MatchState) -> dict[str, Any]:
    """Everything a spectator sees of a match (both players see all of it too)."""
    return {
        "turn": state.turn_index,
        "current": state.current,
        "ended": state.ended,
        "hp": list(state.hp),
        "mana": state.mana,
        "draws_left": state.draws_left,
        "burns_left": state.burns_left,
        "deck": len(state.deck) - state.deck_position,
        "blocking": state.blocking,
        "attackers": sorted(state.attackers) if not state.ended else [],
        "hands": [[card_json(hand[i]) for i in sorted(hand)] for hand in state.hands],
        "boards": [[creature_json(board[i]) for i in sorted(board)] for board in state.boards],
        "scores": [state.score(0), state.score(1)] if state.ended else None,
    }


def match_frames(stored: StoredMatch) -> list[dict[str, Any]]:
    """The match as frames for the viewer: the state at the start of every turn (step 0), then
    after each of that turn's actions (step 1, 2, ...), re-simulated by the rules engine from
    the stored log; the answer shown is the one stored (what the player was told)."""
    result = stored.result
    state = MatchState(stored.deck, stored.rules)
    actions = result.actions()
    by_turn: dict[int, list[Action]] = {}
    for action in actions:
        by_turn.setdefault(action.turn, []).append(action)
    last_turn = min(max(result.turns_played, 0), stored.rules.turns_per_match - 1)
    frames: list[dict[str, Any]] = []
    for turn in range(last_turn + 1):
        state.advance_to(turn)
        if state.turn_index != turn:  # the match ended (a player's health reached 0)
            break
        frames.append({"turn": turn, "step": 0, "action": None, "state": state_json(state)})
        for step, action in enumerate(by_turn.get(turn, ()), start=1):
            code = 0
            try:
                drawn = ACTIONS[action.command](state, action.args)
                answer = "OK" if drawn is None else f"OK {drawn.line}"
            except GameError as error:
                code, answer = error.code.value, f"ERR {error.code.value} {error.code.name}"
            text = " ".join(map(str, (action.command, *action.args)))
            shown: dict[str, Any] = {"side": action.side, "text": text}
            if action.code != code:  # the server is the rules engine: if they ever differ, say so
                shown["engine"] = answer
            if action.code != 0:
                answer = f"ERR {action.code} {ErrorCode(action.code).name}"
            frames.append(
                {
                    "turn": turn,
                    "step": step,
                    "action": {**shown, "answer": answer},
                    "state": state_json(state),
                }
            )
        if state.ended:
            break
    state.advance_to(stored.rules.turns_per_match)
    frames.append(
        {"turn": state.turn_index, "step": 0, "action": None, "end": True,
         "state": state_json(state)}
    )  # fmt: skip
    return frames


def _match_head(match_id: int, tournament: int, players: tuple[str, str]) -> dict[str, Any]:
    return {"id": match_id, "tournament": tournament, "players": list(players)}


class NotFound(Exception):
    """Nothing under this address; the message says what was asked for."""


# ------------------------------------------------------------------ dashboard
class Dashboard:
    """The HTTP side of a game server: ``await start()``, then ``await stop()``.

    It reads the server only through its :class:`~.server.ServerView`, and is told of each
    tick by the server's tick listeners::

        dashboard = Dashboard(server.view, host, port)
        await dashboard.start()  # before server.start(): a taken port touches no file
        server.add_tick_listener(dashboard.tick)
    """

    def __init__(
        self, view: ServerView, host: str | None = None, port: int = 0,
        limits: HttpLimits | None = None, allowed_hosts: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        self.view = view
        self.host = view.host if host is None else host
        self.port = port
        self.limits = limits or HttpLimits()
        self.allowed_hosts = allowed_hosts
        self.max_connections = self.limits.max_connections
        self.max_watchers = MAX_WATCHERS
        self.guard: ConnectionGuard | None = None
        self.watchers: set[asyncio.Queue[bytes | None]] = set()
        self.address: tuple[str, int] = ("", 0)
        self._runner: web.AppRunner | None = None
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shared-deck-web")
        self._store: Store | None = None
        self._event: bytes = b""
        self._event_turn = -1
        self._event_time = float("-inf")
        self._event_stored = 0
        self._pushed_at = float("-inf")
        self._leaderboard: tuple[int, dict[str, Any]] | None = None
        self._answers: OrderedDict[str, bytes] = OrderedDict()

    # ------------------------------------------------------------ lifecycle
    @property
    def descriptors(self) -> int:
        """Descriptors the dashboard may hold at most: its connections, sockets accepted but
        not yet counted, its database reader and static files (the game server keeps them
        out of the players' connection cap)."""
        return self.max_connections + accept_reserve() + BASE_DESCRIPTORS // 2

    async def start(self) -> tuple[str, int]:
        """Bind the HTTP port (a taken port raises OSError here) and start answering."""
        limit = raise_descriptor_limit()
        self.max_connections = max(1, min(self.limits.max_connections, limit // DESCRIPTOR_SHARE))
        self.max_watchers = max(1, min(MAX_WATCHERS, self.max_connections * 3 // 4))
        self.guard = ConnectionGuard(
            self.limits, HostCheck(self.host, self.allowed_hosts), self.max_connections
        )
        app = web.Application(middlewares=[self.guard.middleware(), self._errors])
        app.add_routes(
            [
                web.get("/", self._page),
                web.get("/leaderboard", self._page),
                web.get("/tournaments", self._page),
                web.get(f"/tournament/{_NUMBER}", self._page_tournament),
                web.get(f"/match/{_NUMBER}", self._page_match),
                web.get("/player/{name}", self._page_player),
                web.get("/static/{file}", self._static),
                web.get("/events", self._events, allow_head=False),
                web.get("/api/live", self._api_live),
                web.get("/api/leaderboard", self._api_leaderboard),
                web.get("/api/tournaments", self._api_tournaments),
                web.get(f"/api/tournament/{_NUMBER}", self._api_tournament),
                web.get(f"/api/match/{_NUMBER}", self._api_match),
                web.get("/api/player/{name}", self._api_player),
            ]
        )
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False,
                                     shutdown_timeout=1.0,
                                     keepalive_timeout=self.limits.idle_seconds)  # fmt: skip
        await self._runner.setup()
        site = self.guard.site(self._runner, self.host, self.port)
        try:
            await site.start()
        except BaseException as error:  # the owner still calls stop(): it ends the reader
            await self._runner.cleanup()
            self._runner = None
            if isinstance(error, OSError):
                raise NetworkError.about("listen on", self.host, self.port, error) from None
            raise
        address = self._runner.addresses[0]
        self.address = (address[0], address[1])
        return self.address

    async def stop(self) -> None:
        """End every live stream, then the HTTP server, then the reading thread."""
        for queue in list(self.watchers):
            _offer(queue, None)
        if self.guard is not None:
            self.guard.stop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._reader, self._close_store)
        self._reader.shutdown(wait=True)

    def _close_store(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    # ---------------------------------------------------------- game hooks
    @property
    def stored(self) -> int:
        """Tournaments stored since the server started: the version of every stored view."""
        return self.view.stored

    def tick(self) -> None:
        """Called by the server after each tick: push a fresh snapshot if anyone watches.

        Never raises: a dashboard bug is logged and must not touch the game's clock.
        """
        if not self.watchers:
            return
        loop = asyncio.get_running_loop()
        if (
            loop.time() - self._pushed_at < MIN_SNAPSHOT_SECONDS
            and self.stored == self._event_stored
        ):
            return
        try:
            event = self._snapshot_event(force=True)
        except Exception:
            log.exception("dashboard: the live snapshot failed")
            return
        self._pushed_at = loop.time()
        for queue in self.watchers:
            _offer(queue, event)

    # ------------------------------------------------------------ snapshot
    def _snapshot_event(self, force: bool = False) -> bytes:
        """The live snapshot as one server-sent event; a new watcher gets the last one unless
        it is from an earlier turn or older than MIN_SNAPSHOT_SECONDS."""
        loop = asyncio.get_running_loop()
        turn = self.view.turn
        turn = -1 if turn is None else turn
        if (
            force
            or turn != self._event_turn
            or loop.time() - self._event_time >= MIN_SNAPSHOT_SECONDS
        ):
            data = json.dumps(self.snapshot(), separators=(",", ":"))
            self._event = f"data: {data}\n\n".encode()
            self._event_turn, self._event_time = turn, loop.time()
            self._event_stored = self.stored
        return self._event

    def snapshot(self) -> dict[str, Any]:
        """The live state: clock, running tournament, and the boards of its first matches."""
        view = self.view
        next_tick = view.seconds_to_next_tick()
        tournament = view.running
        return {
            "status": view.status,
            "turn": view.turn or 0,
            "turn_seconds": view.turn_seconds,
            "next_tick_in": None if next_tick is None else round(next_tick, 3),
            "online": view.online,
            "stored": self.stored,
            "tournament": None if tournament is None else self._tournament_live(tournament),
            "live": [] if tournament is None else self._live_matches(tournament),
        }

    def _tournament_live(self, tournament: Tournament) -> dict[str, Any]:
        turns = tournament.rules.turns_per_match
        return {
            "number": tournament.number,
            "start_turn": tournament.start_turn,
            "match_turn": min((self.view.turn or 0) - tournament.start_turn, turns),
            "turns_per_match": turns,
            "matches": len(tournament.pairs),
            "ended": len(tournament.ended_ids),
            "players": sorted(tournament.matches_of),
        }

    def _live_matches(self, tournament: Tournament) -> list[dict[str, Any]]:
        count = min(LIVE_MATCHES, len(tournament.pairs))
        ids = range(tournament.first_match_id, tournament.first_match_id + count)
        return [self._live_match(tournament, match_id) for match_id in ids]

    def _live_match(self, tournament: Tournament, match_id: int) -> dict[str, Any]:
        """A match being played, brought up to the clock as a player's next command would."""
        match = tournament.match(match_id)
        assert match is not None
        state = match.sync(self.view.turn or 0)
        return {
            **_match_head(match_id, tournament.number, match.players),
            "init_hp": tournament.rules.init_hp,
            "turns_per_match": tournament.rules.turns_per_match,
            "actions": len(match.log),
            "last_action": None if not match.log else _action_text(match.log[-1], match.players),
            "state": state_json(state),
        }

    # --------------------------------------------------------- stored data
    async def _read(self, function: Callable[[Store], Any]) -> Any:
        """Run a read on the dashboard's own read-only connection, off the game loop."""

        def call() -> Any:
            if self._store is None:
                self._store = Store(self.view.db_path, read_only=True)
            return function(self._store)

        return await asyncio.get_running_loop().run_in_executor(self._reader, call)

    async def leaderboard(self) -> dict[str, Any]:
        cached, stored = self._leaderboard, self.stored
        if cached is not None and cached[0] == stored:
            return cached[1]
        data = await self._read(_leaderboard_json)
        self._leaderboard = (stored, data)
        return data

    async def tournaments(self) -> dict[str, Any]:
        rows = await self._read(lambda store: store.tournament_summaries())
        return {
            "tournaments": [
                {
                    "number": row.number,
                    "deck_seed": row.seed,
                    "started_at": row.started_at,
                    "finished_at": row.finished_at,
                    "matches": row.matches,
                    "players": row.players,
                    "best": row.best,
                }
                for row in rows
            ]
        }

    async def tournament(self, number: int) -> dict[str, Any]:
        running = self.view.running
        if running is not None and running.number == number:
            return _unscored_tournament(running)
        try:
            return await self._read(lambda store: _tournament_json(store, number))
        except KeyError:
            ended = self.view.ended
            if ended is not None and ended.number == number:  # ended, being stored
                return {**_unscored_tournament(ended), "live": True}  # not to be kept
            raise NotFound(f"no tournament {number}") from None

    async def match(self, match_id: int) -> dict[str, Any]:
        found = self.view.match(match_id)
        if found is not None and found[1] is self.view.running:  # playing
            return {**self._live_match(found[1], match_id), "live": True}
        try:
            stored = await self._read(lambda store: store.match(match_id))
        except KeyError:
            if found is not None:  # finished, being stored
                return {**self._live_match(found[1], match_id), "live": True}
            raise NotFound(f"no match {match_id}") from None
        loop = asyncio.get_running_loop()
        frames = await loop.run_in_executor(self._reader, match_frames, stored)
        result = stored.result
        return {
            **_match_head(result.match_id, stored.tournament, (result.first, result.second)),
            "live": False,
            "deck_seed": stored.seed,
            "rules": _rules_json(stored),
            "hp": [result.first_hp, result.second_hp],
            "scores": [result.first_score, result.second_score],
            "turns_played": result.turns_played,
            "frames": frames,
        }

    async def _answer(
        self, key: str, make: Callable[[], Awaitable[dict[str, Any]]], keep: bool = True
    ) -> bytes:
        """The JSON for ``key``, encoded once in the reading thread and kept if ``keep``."""
        body = self._answers.get(key)
        if body is not None:
            self._answers.move_to_end(key)
            return body
        data = await make()
        loop = asyncio.get_running_loop()
        body = await loop.run_in_executor(self._reader, _encode, data)
        if keep and not data.get("live"):
            self._answers[key] = body
            if len(self._answers) > CACHED_ANSWERS:
                self._answers.popitem(last=False)
        return body

    async def tournament_answer(self, number: int) -> bytes:
        current = self.view.running
        running = current is not None and current.number == number
        key = f"{'running' if running else 'stored'} tournament {number}"
        return await self._answer(key, lambda: self.tournament(number))

    async def match_answer(self, match_id: int) -> bytes:
        return await self._answer(f"match {match_id}", lambda: self.match(match_id))

    async def player(self, name: str) -> dict[str, Any]:
        if NAME_PATTERN.fullmatch(name) is None:
            raise NotFound(f"no player {name}")
        board = await self.leaderboard()
        rows = [row for row in board["leaderboard"] if row["player"] == name]
        if not rows:
            raise NotFound(f"no player {name}")
        points, matches = await self._read(
            lambda store: (
                store.points_by_tournament(name),
                store.player_matches(name, PLAYER_MATCHES),
            )
        )
        running = self.view.running
        live: list[dict[str, Any]] = []
        if running is not None:
            for match_id in running.matches_of.get(name, []):
                pair = running.pairs[match_id - running.first_match_id]
                live.append(_match_head(match_id, running.number, pair))
        return {
            **rows[0],
            "online": self.view.is_online(name),
            "per_tournament": [
                {"number": number, "points": table[name]}
                for number, table in sorted(points.items(), reverse=True)
            ],
            "matches": [_player_match(name, number, match) for number, match in matches],
            "live": live,
        }

    # ------------------------------------------------------------ handlers
    @web.middleware
    async def _errors(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """A 404 page (or JSON under /api/) for what does not exist, never a traceback."""
        api = request.path.startswith("/api/")
        try:
            return await handler(request)
        except NotFound as error:
            message = str(error)
        except web.HTTPNotFound:
            message = f"nothing at {request.path}"
        except (sqlite3.Error, OSError) as error:
            log.warning("dashboard: %s failed: %s", request.path, error)
            if api:
                return web.json_response({"error": "database unavailable"}, status=503)
            return web.Response(text=_error_page(503, "database unavailable"),
                                content_type="text/html", status=503)  # fmt: skip
        if api:
            return web.json_response({"error": message}, status=404)
        return web.Response(text=_error_page(404, message), content_type="text/html", status=404)

    async def _shell(self) -> web.Response:
        return _file_response("index.html")

    async def _page(self, request: web.Request) -> web.Response:
        return await self._shell()

    async def _page_tournament(self, request: web.Request) -> web.Response:
        await self.tournament_answer(int(request.match_info["number"]))  # 404 if none
        return await self._shell()

    async def _page_match(self, request: web.Request) -> web.Response:
        await self.match_answer(int(request.match_info["number"]))  # 404 if none
        return await self._shell()

    async def _page_player(self, request: web.Request) -> web.Response:
        await self.player(request.match_info["name"])
        return await self._shell()

    async def _static(self, request: web.Request) -> web.Response:
        name = request.match_info["file"]
        if name not in _STATIC_TYPES:
            raise NotFound(f"no file {name}")
        return _file_response(name)

    async def _api_live(self, request: web.Request) -> web.Response:
        return web.json_response(self.snapshot())

    async def _api_leaderboard(self, request: web.Request) -> web.Response:
        return _json(await self._answer(f"leaderboard {self.stored}", self.leaderboard))

    async def _api_tournaments(self, request: web.Request) -> web.Response:
        return _json(await self._answer(f"tournaments {self.stored}", self.tournaments))

    async def _api_tournament(self, request: web.Request) -> web.Response:
        return _json(await self.tournament_answer(int(request.match_info["number"])))

    async def _api_match(self, request: web.Request) -> web.Response:
        return _json(await self.match_answer(int(request.match_info["number"])))

    async def _api_player(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        return _json(await self._answer(f"player {name}", lambda: self.player(name), False))

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events: the current snapshot at once, then one per tick."""
        if len(self.watchers) >= self.max_watchers:
            raise web.HTTPServiceUnavailable(text="too many watchers\n")
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=1)
        queue.put_nowait(b"retry: 2000\n" + self._snapshot_event())
        self.watchers.add(queue)
        try:
            while True:
                try:
                    data = await asyncio.wait_for(queue.get(), HEARTBEAT_SECONDS)
                except TimeoutError:
                    data = b": still here\n\n"
                if data is None:
                    break
                await asyncio.wait_for(response.write(data), WRITE_TIMEOUT_SECONDS)
        except (ConnectionError, TimeoutError):
            pass  # the browser went away or stopped reading
        finally:
            self.watchers.discard(queue)
        with contextlib.suppress(ConnectionError):
            await response.write_eof()
        return response


@functools.cache
def _file(name: str) -> bytes:
    """A file of the front end, read once."""
    return (_STATIC / name).read_bytes()


def _file_response(name: str) -> web.Response:
    return web.Response(
        body=_file(name),
        content_type=_STATIC_TYPES[name],
        charset="utf-8",
        headers={"Cache-Control": "no-cache"},
    )


def _offer(queue: asyncio.Queue[bytes | None], item: bytes | None) -> None:
    """Put ``item`` in a one-slot queue, replacing what the watcher has not taken yet."""
    if queue.full():
        with contextlib.suppress(asyncio.QueueEmpty):
            queue.get_nowait()
    queue.put_nowait(item)


def _encode(data: dict[str, Any]) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


def _json(body: bytes) -> web.Response:
    return web.Response(body=body, content_type="application/json")


def _action_text(action: Action, players: tuple[str, str]) -> str:
    words = " ".join(map(str, (action.command, *action.args)))
    outcome = "OK" if action.code == 0 else f"ERR {action.code} {ErrorCode(action.code).name}"
    return f"{players[action.side]}: {words} → {outcome}"


def _rules_json(stored: StoredMatch) -> dict[str, int]:
    rules = stored.rules
    return {
        "init_hp": rules.init_hp,
        "deck_size": rules.deck_size,
        "turns_per_match": rules.turns_per_match,
        "draws_per_turn": rules.draws_per_turn,
        "burns_per_turn": rules.burns_per_turn,
        "hand_limit": rules.hand_limit,
    }


def _leaderboard_json(store: Store) -> dict[str, Any]:
    """Total points (sum of R(S)^1.5 over tournaments) and the latest tournaments' points."""
    finished = store.finished_tournaments()
    columns = finished[-LEADERBOARD_COLUMNS:][::-1]
    table = store.points_by_tournament()
    rows = []
    for rank, row in enumerate(store.leaderboard(), start=1):
        rows.append(
            {
                "rank": rank,
                "player": row.player,
                "points": row.points,
                "tournaments": row.tournaments,
                "removed": row.removed,
                "recent": [table.get(number, {}).get(row.player) for number in columns],
            }
        )
    return {"tournaments": len(finished), "columns": columns, "leaderboard": rows}


def _unscored_tournament(tournament: Tournament) -> dict[str, Any]:
    """A tournament not stored yet: who plays which match."""
    first, number = tournament.first_match_id, tournament.number
    return {
        "number": number,
        "running": True,
        "deck_seed": tournament.seed,
        "matches": [
            _match_head(first + index, number, pair) for index, pair in enumerate(tournament.pairs)
        ],
    }


def _tournament_json(store: Store, number: int) -> dict[str, Any]:
    tournament = store.tournament(number)
    header, *rows = player_rows(tournament)
    return {
        "number": number,
        "running": False,
        "deck_seed": tournament.seed,
        "turns_per_match": tournament.rules.turns_per_match,
        "players": [dict(zip(header, row, strict=True)) for row in rows],
        "matches": [
            {
                **_match_head(m.match_id, number, (m.first, m.second)),
                "hp": [m.first_hp, m.second_hp],
                "scores": [m.first_score, m.second_score],
                "turns_played": m.turns_played,
            }
            for m in tournament.matches
        ],
    }


def _player_match(name: str, number: int, match: Any) -> dict[str, Any]:
    first = match.first == name
    return {
        "id": match.match_id,
        "tournament": number,
        "opponent": match.second if first else match.first,
        "moved_first": first,
        "hp": [match.first_hp, match.second_hp] if first else [match.second_hp, match.first_hp],
        "scores": (
            [match.first_score, match.second_score]
            if first
            else [match.second_score, match.first_score]
        ),
    }


def _error_page(status: int, message: str) -> str:
    """The page of a 404 or 503; ``message`` (it may quote the request's path) is escaped
    by the template (:func:`cardarena.pages.render`), and the page runs no script."""
    title = {404: "Not found", 503: "Unavailable"}.get(status, "Error")
    return render(__package__, "web/error.html", status=status, title=title, message=message,
                  policy=content_policy())  # fmt: skip
