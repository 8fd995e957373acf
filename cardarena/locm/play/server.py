"""The web server of a human game: one page, its data, its moves; aiohttp, imported here only.

Every address carries a random token: ``/<token>/`` plays, ``/<spectator token>/`` only
watches, anything else is refused (403). The page is static (its text is filled in by its
script with ``textContent``, never HTML), served with a Content-Security-Policy that lets
only its own script run. The page long-polls ``state`` (the game as its seat may see it)
and posts ``move`` (a move on the decision it was shown, refused with a message if stale or
illegal); ``log.json`` is the GameResult log once the game is over.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
import signal
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any, TextIO

from ...pages import render
from ..referee.game_loop import GameOutcome, RefereeTerminated
from .session import GameSession, MoveRefused

POLL_S = 20.0
"""How long a page's request for news waits before answering 'nothing new'."""
MAX_MOVE_BYTES = 4096
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


class ServeError(ValueError):
    """The server cannot start (the port is taken, aiohttp is missing): a usage error."""


@cache
def _asset(package: str, name: str) -> str:
    return files(f"cardarena.locm.{package}").joinpath(name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Addresses:
    play: str
    watch: str


def make_app(session: GameSession, play_token: str, watch_token: str) -> Any:
    """The aiohttp application of one game: ``/<play_token>/`` plays, ``/<watch_token>/``
    watches."""
    from aiohttp import web

    def role(request: web.Request) -> str:
        token = request.match_info.get("token", "")
        if hmac.compare_digest(token.encode(), play_token.encode()):
            return "play"
        if hmac.compare_digest(token.encode(), watch_token.encode()):
            return "watch"
        raise web.HTTPForbidden(text="this address is not the game's: use the address that "
                                "locm play printed (it carries the game's token)\n")  # fmt: skip

    def seat_of(request: web.Request) -> int | None:
        return session.humans[0] if role(request) == "play" else None

    def json_response(data: Any, status: int = 200) -> web.Response:
        return web.Response(text=json.dumps(data, ensure_ascii=False), status=status,
                            content_type="application/json", headers=HEADERS)  # fmt: skip

    async def page(request: web.Request) -> web.Response:
        text = render("cardarena.locm.play", "play.html", role=role(request))
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
        await session.wait_change(after, POLL_S)
        return json_response(session.view(seat, have))

    async def move(request: web.Request) -> web.Response:
        if role(request) != "play":
            return json_response({"error": "this is a spectator's address: it cannot play"}, 403)
        body = await request.content.read(MAX_MOVE_BYTES + 1)
        try:
            data = json.loads(body) if len(body) <= MAX_MOVE_BYTES else None
        except ValueError:
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

    async def refuse(_request: web.Request) -> web.Response:
        raise web.HTTPForbidden(text="this address is not the game's: use the address that "
                                "locm play printed (it carries the game's token)\n")  # fmt: skip

    app = web.Application()
    app.router.add_get("/{token}/", page)
    app.router.add_get("/{token}/{name:(board|play)\\.js|(viewer|play)\\.css}", asset)
    app.router.add_get("/{token}/state", state)
    app.router.add_post("/{token}/move", move)
    app.router.add_get("/{token}/log.json", log)
    app.router.add_route("*", "/{tail:.*}", refuse)
    return app


async def play_session(
    session: GameSession,
    host: str,
    port: int,
    out: TextIO,
    err: TextIO,
    on_end: Callable[[GameOutcome], None],
    open_browser: bool = False,
    stay: bool = True,
) -> GameOutcome:
    """Serve ``session``'s pages and play it; print the play address as the first line of
    ``out``. After the game (``on_end`` is called with its outcome) the pages stay up until
    Ctrl-C or SIGTERM if ``stay``. Ctrl-C during the game raises KeyboardInterrupt and
    SIGTERM RefereeTerminated, once the bots are stopped."""
    from aiohttp import web

    play_token, watch_token = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    runner = web.AppRunner(make_app(session, play_token, watch_token), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        raise ServeError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    bound = runner.addresses[0][1]
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else shown}:{bound}"
    addresses = Addresses(f"{base}/{play_token}/", f"{base}/{watch_token}/")
    print(addresses.play, file=out, flush=True)
    print(f"locm: play at {addresses.play} ; spectators: {addresses.watch} (Ctrl-C stops)",
          file=err, flush=True)  # fmt: skip
    if open_browser and not webbrowser.open(addresses.play):
        print("locm: warning: no web browser found; open the address yourself", file=err)
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
        await runner.cleanup()
