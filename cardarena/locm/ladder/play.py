"""A person against a ladder's bot, in the browser: the human seat of ``locm play``
(:mod:`cardarena.locm.play`), served by the ladder's own server under ``/play/KEY/``.

Why here and not in a process of its own: the page then has the ladder's origin, so the
ladder's login cookie, its cross-site refusals and its Host check apply to every request of
the game. Only the participant who started a game may play it (the random key in the address
*and* their session); at most ``limit`` games run at once (each holds a bot process); a game
whose page has asked nothing for ``idle_s`` is stopped, and its bot with it. The bot is the
version the ladder plays now, at the official limits, in the sandbox, seeing neither the
ladder's files nor the other bots'. These games are not rated and not stored: the page offers
the game's log, which ``locm view`` replays.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ...ladder.store import LadderStore
from ..engine.params import resolve_parameters
from ..engine.rules import FULL_POOL_LEAGUE
from ..play import HUMAN
from ..play.server import ASSET_NAMES, MAX_MOVE_BYTES, Keys, game_handlers
from ..play.session import GameSession
from ..referee.cgroups import DEFAULT_MEMORY_MB
from ..referee.game_loop import in_process

if TYPE_CHECKING:
    from aiohttp import web

DEFAULT_LIMIT = 2
"""Games against a person at once: each runs a bot beside the ladder's own games."""
IDLE_S = 300.0
"""A game whose page asked nothing for this long is stopped (its page sends a request at
least every 20 s while it is open)."""
KEEP_S = 600.0
"""A game that ended (or was stopped) is forgotten this long after its page's last request."""
KEPT = 16
"""Games kept at most (those running, and ended ones whose page may still be open)."""
SWEEP_S = 5.0
SEATS = {"first": 0, "second": 1}
"""The person's seat as the form says it; anything else: either, by chance."""


class GamesRefused(ValueError):
    """A game that cannot start: ``status`` and a one-line reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


@dataclass
class HumanGame:
    key: str
    user: str
    bot: str
    seat: int
    session: GameSession
    handlers: dict[str, Any]
    task: asyncio.Task[Any] | None = None
    seen: float = field(default_factory=time.monotonic)


def active_command(store: LadderStore, bot: str) -> str | None:
    """The command of the version of ``bot`` that plays now, None if none is active."""
    page = store.bot(bot)
    if page is None:
        return None
    active = [v for v in page.versions if v.status == "active" and v.command]
    return active[-1].command if active else None


class HumanGames:
    """The games of people against the ladder's bots, in the web server's event loop."""

    def __init__(
        self,
        version: str,
        command_of: Callable[[str], str | None],
        *,
        rivals: Callable[[], Sequence[str]] = tuple,
        hidden: Sequence[str] = (),
        sandbox: bool = True,
        memory_mb: int | None = DEFAULT_MEMORY_MB,
        limit: int = DEFAULT_LIMIT,
        idle_s: float = IDLE_S,
        keep_s: float = KEEP_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``command_of(bot)``: the command of the bot's active version (None: not active);
        ``rivals()``: every built bot's command (files the bot may not open)."""
        self.version = version
        self.command_of = command_of
        self.rivals = rivals
        self.hidden = tuple(hidden)
        self.sandbox = sandbox
        self.memory_mb = memory_mb
        self.limit = limit
        self.idle_s = idle_s
        self.keep_s = keep_s
        self.clock = clock
        self.games: list[HumanGame] = []
        self._sweeper: asyncio.Task[None] | None = None

    def running(self) -> int:
        """Games whose bot is still playing."""
        return sum(1 for game in self.games if game.task is not None and not game.task.done())

    async def start(self, user: str, bot: str, seat: str = "") -> str:
        """Start a game of ``user`` against ``bot``; its key (the address is
        ``/play/KEY/``). GamesRefused (one line) when the bot is not active or the
        ladder plays as many games against people as it may."""
        await self.sweep()
        if self.limit <= 0:
            raise GamesRefused(404, "this ladder plays no games against people")
        command = self.command_of(bot)
        if command is None:
            raise GamesRefused(409, f"{bot} is not active: only an active bot can be played")
        if self.running() >= self.limit:
            raise GamesRefused(503, f"{self.running()} game(s) against people are being "
                               "played now, the most this ladder allows: try again in a few "
                               "minutes")  # fmt: skip
        human = SEATS.get(seat, secrets.randbelow(2))
        specs = [HUMAN, command] if human == 0 else [command, HUMAN]
        params = resolve_parameters(self.version, {"seed": secrets.randbelow(1 << 31)})
        rivals = tuple(dict.fromkeys(c for c in self.rivals() if not in_process(c)))
        try:
            session = GameSession(specs, params, league=FULL_POOL_LEAGUE, sandbox=self.sandbox,
                                  memory_mb=self.memory_mb, hidden=self.hidden,
                                  rivals=rivals)  # fmt: skip
        except ValueError as error:  # an unknown built-in: the ladder's data is wrong
            raise GamesRefused(409, f"{bot} cannot be played: {error}") from None
        session.names[human] = user  # names on the ladder, not "human" and a command line
        session.names[1 - human] = bot
        keys = Keys()
        back = (f"/bots/{quote(bot, safe='')}", "← ladder")
        handlers = game_handlers(session, keys, 1, backlink=back)
        game = HumanGame(keys.play, user, bot, human, session, handlers)
        game.seen = self.clock()
        game.task = asyncio.create_task(self._play(session))
        self.games.append(game)
        ended = [g for g in self.games if g.task is None or g.task.done()]
        for old in ended[: max(0, len(self.games) - KEPT)]:  # the oldest ended ones first
            self.games.remove(old)
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.create_task(self._sweep_often())
        return game.key

    @staticmethod
    async def _play(session: GameSession) -> None:
        with contextlib.suppress(Exception):  # the page says why (session.error)
            await session.run()

    async def _sweep_often(self) -> None:
        while self.games:
            await asyncio.sleep(SWEEP_S)
            await self.sweep()

    async def sweep(self) -> None:
        """Stop the games nobody plays any more; forget those ended long ago."""
        now = self.clock()
        for game in list(self.games):
            idle = now - game.seen
            if game.task is not None and not game.task.done() and idle > self.idle_s:
                await self._stop(game, f"stopped: nobody played it for {self.idle_s:.0f} s")
            elif idle > self.keep_s:
                self.games.remove(game)

    async def _stop(self, game: HumanGame, why: str) -> None:
        task = game.task
        # Cancel until it takes: a cancellation can race with the bot's answer (as in
        # locm play's server).
        while task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=1.0)
        session = game.session
        if session.outcome is None and session.error is None:
            session.error = why
        session.closing = True
        session.wake()

    async def close(self) -> None:
        """Stop every game (the server stops)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        for game in self.games:
            await self._stop(game, "stopped: the ladder's server stopped")
        self.games.clear()

    def find(self, key: str) -> HumanGame | None:
        """The game of address key ``key`` (compared in constant time with every key)."""
        found = None
        for game in self.games:
            if secrets.compare_digest(key.encode("utf-8", "surrogatepass"), game.key.encode()):
                found = game
        return found

    def app(self, who: Callable[[web.Request], str | None]) -> web.Application:
        """The games' pages, to be mounted under ``/play`` by the ladder's server;
        ``who(request)`` names the logged-in participant of a request (None: nobody)."""
        from aiohttp import web

        async def dispatch(name: str, request: web.Request) -> web.StreamResponse:
            game = self.find(request.match_info["token"])
            if game is None:
                raise web.HTTPNotFound(text="no such game (it ended a while ago?): start one "
                                       "from a bot's page\n")  # fmt: skip
            if who(request) != game.user:
                raise web.HTTPForbidden(text="this game is another participant's, or this "
                                        "browser is not logged in to the ladder\n")  # fmt: skip
            if name == "move":
                if request.content_length is None or request.content_length > MAX_MOVE_BYTES:
                    raise web.HTTPRequestEntityTooLarge(MAX_MOVE_BYTES,
                                                        request.content_length or 0)  # fmt: skip
                if request.content_type != "application/json":
                    raise web.HTTPUnsupportedMediaType(text="send application/json\n")
            game.seen = self.clock()
            handler: Callable[[web.Request], Any] = game.handlers[name]
            return await handler(request)

        async def not_found(_request: web.Request) -> web.Response:
            raise web.HTTPNotFound(text="no such game\n")

        async def stop_all(_app: web.Application) -> None:
            await self.close()

        app = web.Application()
        app.router.add_get("/{token}/", partial(dispatch, "page"))
        app.router.add_get(f"/{{token}}/{{name:{ASSET_NAMES}}}", partial(dispatch, "asset"))
        app.router.add_get("/{token}/state", partial(dispatch, "state"))
        app.router.add_post("/{token}/move", partial(dispatch, "move"))
        app.router.add_get("/{token}/log.json", partial(dispatch, "log"))
        app.router.add_route("*", "/{tail:.*}", not_found)
        app.on_shutdown.append(stop_all)
        return app
