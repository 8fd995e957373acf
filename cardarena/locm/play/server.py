"""The web server of a human game: one page, its data, its moves; aiohttp, imported here only.

Every address carries a random token: ``/<token>/`` plays, ``/<spectator token>/`` only
watches, anything else is refused (403). ``--open`` gives the browser no token on its command
line (where ``ps`` shows it to every user of the machine) but a one-time address,
``/open/<code>``: its first visit sets an HttpOnly, SameSite=Strict cookie and goes to
``/play/``, which plays with that cookie; a second visit is refused. The page is static (its
text is filled in by its script with ``textContent``, never HTML), served with a
Content-Security-Policy that lets only its own script run. The page long-polls ``state`` (the
game as its seat may see it) and posts ``move`` (a move on the decision it was shown, refused
with a message if stale or illegal); ``log.json`` is the GameResult log once the game is over.

Connections go through :mod:`cardarena.httpguard` as for the other servers: counted against a
cap that leaves the referee and its bots their descriptors, timed, the Host header checked,
POSTs taken only as JSON from the page's own origin, and a move's body parsed within bounds
(:func:`cardarena.untrusted.load_json`): whatever anyone else sends, the person's game goes on.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import resource
import secrets
import signal
import threading
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any, TextIO

from ...pages import render
from ...untrusted import load_json
from ..referee.game_loop import GameOutcome, RefereeTerminated
from .session import GameSession, MoveRefused

if TYPE_CHECKING:
    from ...httpguard import HttpLimits

POLL_S = 20.0
"""How long a page's request for news waits before answering 'nothing new'."""
MAX_MOVE_BYTES = 4096
MAX_MOVE_ITEMS = 16
"""Arrays, objects and elements in a move's JSON at most (a move has three or four)."""
COOKIE_PLACE = "play"
"""``/play/``: the page of a browser let in by a one-time address (with its cookie)."""
DESCRIPTORS_PER_BOT = 16
"""A bot process holds 4 (its three pipes and its pidfd); the rest is room for its sandbox's
and its cgroup's files, opened while it starts and at each turn."""
SPARE_DESCRIPTORS = 8
"""The browser opener's pipes, the log file, a module read late."""
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
ASSETS = {
    "board.js": ("viewer", "board.js", "text/javascript"),
    "viewer.css": ("viewer", "viewer.css", "text/css"),
    "play.js": ("play", "play.js", "text/javascript"),
    "play.css": ("play", "play.css", "text/css"),
}
ASSET_NAMES = "(board|play)\\.js|(viewer|play)\\.css"
"""The files a game's page loads, beside it (a pattern of aiohttp's routes)."""


class ServeError(ValueError):
    """The server cannot start (the port is taken, aiohttp is missing): a usage error."""


@cache
def _asset(package: str, name: str) -> str:
    return files(f"cardarena.locm.{package}").joinpath(name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Addresses:
    play: str
    watch: str


def _same(text: str, secret: str) -> bool:
    """In constant time; an address may hold any text, lone surrogates included."""
    return hmac.compare_digest(text.encode("utf-8", "surrogatepass"), secret.encode())


@dataclass
class Keys:
    """The game's secrets: the tokens of the play and watch addresses, the cookie that a
    one-time address sets, and the one-time codes not used yet."""

    play: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    watch: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    cookie: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    codes: set[str] = field(default_factory=set)

    def one_time_code(self) -> str:
        code = secrets.token_urlsafe(18)
        self.codes.add(code)
        return code

    def use(self, code: str) -> bool:
        """Whether ``code`` is a one-time code not used yet; it is used from now on."""
        for known in list(self.codes):
            if _same(code, known):
                self.codes.discard(known)
                return True
        return False


def descriptor_reserve(bots: int) -> int:
    """Descriptors kept out of the connection cap: the process's own, each bot's, spares,
    and sockets accepted but not yet counted."""
    from ...httpguard import BASE_DESCRIPTORS, accept_reserve

    return BASE_DESCRIPTORS + DESCRIPTORS_PER_BOT * bots + SPARE_DESCRIPTORS + accept_reserve()


def _cookie_name(request: Any) -> str:
    """Per port: browsers send a host's cookies to all its ports, and two games may run."""
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    return f"locm-play-{sockname[1] if sockname else 0}"


def make_app(session: GameSession, keys: Keys, middlewares: tuple[Any, ...] = (),
             spectators: int = 32) -> Any:  # fmt: skip
    """The aiohttp application of one game: ``/<keys.play>/`` plays, ``/<keys.watch>/``
    watches, ``/open/<one-time code>`` lets a browser in to ``/play/``; ``middlewares`` run
    first. At most ``spectators`` requests of spectators wait for news at once (a waiting
    request is never closed for a newcomer: the person's requests need the other places)."""
    from aiohttp import web

    handlers = game_handlers(session, keys, spectators)
    # A larger body is refused (413) before it is read.
    app = web.Application(middlewares=middlewares, client_max_size=MAX_MOVE_BYTES)
    app.router.add_get("/open/{code}", handlers["let_in"])
    app.router.add_get("/{token}/", handlers["page"])
    app.router.add_get(f"/{{token}}/{{name:{ASSET_NAMES}}}", handlers["asset"])
    app.router.add_get("/{token}/state", handlers["state"])
    app.router.add_post("/{token}/move", handlers["move"])
    app.router.add_get("/{token}/log.json", handlers["log"])
    app.router.add_route("*", "/{tail:.*}", handlers["refuse"])
    return app


def game_handlers(session: GameSession, keys: Keys, spectators: int = 32,
                  backlink: tuple[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    """The request handlers of one game by name (``page``, ``asset``, ``state``, ``move``,
    ``log``, ``let_in``, ``refuse``), for :func:`make_app` and for servers that serve several
    games (the ladder's games against a person); each reads ``token`` (and ``name`` or
    ``code``) from the request's ``match_info``. ``backlink``: (href, text) of a link on the
    page back to where the game was started."""
    from aiohttp import web

    waiting = [0]

    def role(request: web.Request) -> str:
        token = request.match_info.get("token", "")
        if token == COOKIE_PLACE:
            if _same(request.cookies.get(_cookie_name(request), ""), keys.cookie):
                return "play"
            raise web.HTTPForbidden(text="this browser was not let in to the game: use the "
                                    "address that locm play printed\n")  # fmt: skip
        if _same(token, keys.play):
            return "play"
        if _same(token, keys.watch):
            return "watch"
        raise web.HTTPForbidden(text="this address is not the game's: use the address that "
                                "locm play printed (it carries the game's token)\n")  # fmt: skip

    def seat_of(request: web.Request) -> int | None:
        return session.humans[0] if role(request) == "play" else None

    def json_response(data: Any, status: int = 200) -> web.Response:
        return web.Response(text=json.dumps(data, ensure_ascii=False), status=status,
                            content_type="application/json", headers=HEADERS)  # fmt: skip

    async def page(request: web.Request) -> web.Response:
        text = render("cardarena.locm.play", "play.html", role=role(request), backlink=backlink)
        return web.Response(text=text, content_type="text/html", charset="utf-8",
                            headers=HEADERS)  # fmt: skip

    async def asset(request: web.Request) -> web.Response:
        role(request)
        package, name, content_type = ASSETS[request.match_info["name"]]
        return web.Response(text=_asset(package, name), content_type=content_type,
                            charset="utf-8", headers=HEADERS)  # fmt: skip

    async def state(request: web.Request) -> web.Response:
        seat = seat_of(request)
        try:
            after = int(request.query.get("after", "-1"))
            have = max(0, int(request.query.get("have", "0")))
        except ValueError:
            raise web.HTTPBadRequest(text="after and have are numbers\n") from None
        if seat is not None:
            session.page_opened()  # the person's clock (--human-time) starts now
            await session.wait_change(after, POLL_S)
        elif waiting[0] < spectators:
            waiting[0] += 1
            try:
                await session.wait_change(after, POLL_S)
            finally:
                waiting[0] -= 1
        elif session.seq <= after:  # the page tries again in 2 s
            return web.Response(status=503, text="too many spectators: try again later\n",
                                headers={"Retry-After": "2"})  # fmt: skip
        return json_response(session.view(seat, have))

    async def move(request: web.Request) -> web.Response:
        if role(request) != "play":
            return json_response({"error": "this is a spectator's address: it cannot play"}, 403)
        try:
            data = load_json(await request.read(), MAX_MOVE_BYTES, MAX_MOVE_ITEMS)
        except ValueError:  # too large, too many items, nested too deeply, not JSON
            data = None
        if not isinstance(data, dict):
            return json_response({"error": "a move is a small JSON object"}, 400)
        seat = session.humans[0] if len(session.humans) == 1 else None
        try:
            auto = data.get("auto") is True
            await session.move(seat, data.get("id"), data.get("action"), data.get("remove"), auto)
        except MoveRefused as refused:
            return json_response({"error": str(refused), "seq": session.seq}, 409)
        return json_response({"ok": True, "seq": session.seq})

    async def log(request: web.Request) -> web.Response:
        role(request)
        if session.outcome is None:
            return json_response({"error": "the log is ready when the game is over"}, 409)
        headers = dict(HEADERS, **{"Content-Disposition": 'attachment; filename="game.json"'})
        return web.Response(text=json.dumps(session.outcome.log, ensure_ascii=False),
                            content_type="application/json", headers=headers)  # fmt: skip

    async def let_in(request: web.Request) -> web.Response:
        if not keys.use(request.match_info["code"]):
            raise web.HTTPForbidden(text="this one-time address was used already: use the "
                                    "address that locm play printed\n")  # fmt: skip
        answer = web.Response(status=303, headers=dict(HEADERS, Location=f"/{COOKIE_PLACE}/"))
        answer.set_cookie(_cookie_name(request), keys.cookie, path=f"/{COOKIE_PLACE}/",
                          httponly=True, samesite="Strict")  # fmt: skip
        return answer

    async def refuse(_request: web.Request) -> web.Response:
        raise web.HTTPForbidden(text="this address is not the game's: use the address that "
                                "locm play printed (it carries the game's token)\n")  # fmt: skip

    return {"page": page, "asset": asset, "state": state, "move": move, "log": log,
            "let_in": let_in, "refuse": refuse}  # fmt: skip


async def play_session(
    session: GameSession,
    host: str,
    port: int,
    out: TextIO,
    err: TextIO,
    on_end: Callable[[GameOutcome], None],
    open_browser: bool = False,
    stay: bool = True,
    limits: HttpLimits | None = None,
    allowed_hosts: tuple[str, ...] = (),
) -> GameOutcome:
    """Serve ``session``'s pages and play it; print the play address as the first line of
    ``out``. After the game (``on_end`` is called with its outcome) the pages stay up until
    Ctrl-C or SIGTERM if ``stay``. Ctrl-C during the game raises KeyboardInterrupt and
    SIGTERM RefereeTerminated, once the bots are stopped."""
    from aiohttp import web

    from ... import httpguard

    limits = limits or httpguard.HttpLimits()
    bots = len(session.specs) - len(session.humans)
    # The limit is not raised, as locm serve raises it: the bots inherit it, and some
    # runtimes close every descriptor up to it when they start.
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    descriptors = 1 << 20 if soft == resource.RLIM_INFINITY else soft
    try:
        cap = httpguard.fitted_cap(limits.max_connections, descriptors,
                                   descriptor_reserve(bots), "locm play")  # fmt: skip
    except ValueError as error:
        raise ServeError(str(error)) from None
    guard = httpguard.ConnectionGuard(limits, httpguard.HostCheck(host, allowed_hosts), cap)
    keys = Keys()
    middlewares = (guard.middleware(), httpguard.same_origin_json_posts())
    app = make_app(session, keys, middlewares, spectators=max(1, cap // 2))
    runner = web.AppRunner(app, access_log=None, keepalive_timeout=limits.idle_seconds)
    await runner.setup()
    try:
        await guard.site(runner, host, port).start()
    except OSError as error:
        guard.stop()
        await runner.cleanup()
        raise ServeError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    bound = runner.addresses[0][1]
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else shown}:{bound}"
    addresses = Addresses(f"{base}/{keys.play}/", f"{base}/{keys.watch}/")
    print(addresses.play, file=out, flush=True)
    print(f"locm: play at {addresses.play} ; spectators: {addresses.watch} (Ctrl-C stops)",
          file=err, flush=True)  # fmt: skip
    if open_browser:
        _open_browser(f"{base}/open/{keys.one_time_code()}", keys, err)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    why: list[int] = []

    def on_signal(signum: int) -> None:
        why.append(signum)
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, on_signal, signum)
    game = asyncio.create_task(session.run())
    stopper = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({game, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if not game.done():
            # Cancel until it takes: before Python 3.12, asyncio.wait_for can swallow a
            # cancellation that races with its result (a bot answering at that moment),
            # and the game would then wait for the person for ever.
            while not game.done():
                game.cancel()
                await asyncio.wait({game}, timeout=1.0)
            await asyncio.gather(game, return_exceptions=True)
            if why and why[0] == signal.SIGTERM:
                raise RefereeTerminated("terminated by SIGTERM")
            raise KeyboardInterrupt
        outcome = game.result()
        on_end(outcome)
        if stay:
            print("locm: the game is over; its page stays up until Ctrl-C", file=err, flush=True)
            await stopper
        return outcome
    finally:
        session.closing = True
        session.wake()  # the pages' pending requests answer now: the server stops at once
        stopper.cancel()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        guard.stop()
        await runner.cleanup()


def _open_browser(address: str, keys: Keys, err: TextIO) -> None:
    """Open the one-time ``address`` in the web browser, from a thread of its own: a browser
    command that runs until the browser is closed (``BROWSER=chromium``) must not stop the
    server that is to answer it, nor keep ``locm play`` from exiting. Where no browser
    opens, the code is withdrawn."""
    code = address.rsplit("/", 1)[1]

    def run() -> None:
        if not webbrowser.open(address):
            keys.codes.discard(code)
            print("locm: warning: no web browser found; open the address yourself", file=err)

    threading.Thread(target=run, name="locm-open-browser", daemon=True).start()
