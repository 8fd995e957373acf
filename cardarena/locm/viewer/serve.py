"""``locm serve``: a tournament's HTML report and game viewers, live, over HTTP.

aiohttp (imported here only) serves the pages that ``locm report --html`` writes,
built on request from the database opened read-only each time, so a running
tournament is followed as its games finish: the report page polls ``status.json``
and reloads itself when a game was added. Nothing is ever written: no lock is
taken, and the database may belong to a tournament still running.

Pages of finished games never change and are cached; the report and its pictures
are rebuilt only when the game count changes. Database and matplotlib work runs in
a worker thread, so a slow picture never stalls the other requests.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import tempfile
import threading
from typing import Any

from ...tournaments.report.html import read_change_mark, read_snapshot, report_page
from ...tournaments.report.png import write_pictures
from ...tournaments.store import StoreError, reading
from ..referee.replay import ReplayError
from .tournament_pages import GAME, game_page

GAME_CACHE_SIZE = 256


class _Pages:
    """The pages of one database, rebuilt when its games change."""

    def __init__(self, db: str) -> None:
        self.db = db
        self.games: dict[int, str] = {}
        self.pictures: dict[str, bytes] = {}
        self.pictures_key: tuple[int, int] | None = None
        self.report: tuple[tuple[int, int], str] | None = None
        self.lock = threading.Lock()
        """matplotlib is not thread-safe: one picture rebuild at a time."""

    def status(self) -> dict[str, Any]:
        stored, last = read_change_mark(self.db)
        return {"stored": stored, "version": f"{stored}-{last}"}

    def index(self) -> str:
        mark = read_change_mark(self.db)
        if self.report is None or self.report[0] != mark:
            snapshot = read_snapshot(self.db)
            self.report = (snapshot.version_key, report_page(snapshot, game=GAME, live=True))
        return self.report[1]

    def picture(self, name: str) -> bytes | None:
        with self.lock:
            mark = read_change_mark(self.db)
            if self.pictures_key != mark:
                snapshot = read_snapshot(self.db)
                self.pictures = {}
                if snapshot.report.games:
                    with tempfile.TemporaryDirectory() as directory:
                        for path in write_pictures(snapshot.report, directory):
                            with open(path, "rb") as picture:
                                self.pictures[os.path.basename(path)] = picture.read()
                self.pictures_key = snapshot.version_key
            return self.pictures.get(name)

    def game(self, number: int) -> str:
        page = self.games.get(number)
        if page is None:
            page = game_page(self.db, number)
            if len(self.games) >= GAME_CACHE_SIZE:
                self.games.pop(next(iter(self.games)))
            self.games[number] = page
        return page


def make_app(db: str) -> Any:
    """The aiohttp application serving ``db`` (read-only)."""
    from aiohttp import web

    pages = _Pages(db)

    async def in_thread(function: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, function, *args)

    def page(text: str) -> web.Response:
        return web.Response(text=text, content_type="text/html", charset="utf-8",
                            headers={"Cache-Control": "no-cache"})  # fmt: skip

    async def index(_request: web.Request) -> web.Response:
        return page(await in_thread(pages.index))

    async def status(_request: web.Request) -> web.Response:
        return web.Response(text=json.dumps(await in_thread(pages.status)),
                            content_type="application/json",
                            headers={"Cache-Control": "no-store"})  # fmt: skip

    async def picture(request: web.Request) -> web.Response:
        data = await in_thread(pages.picture, request.match_info["name"])
        if data is None:
            raise web.HTTPNotFound(text="no such picture (no games yet?)")
        return web.Response(body=data, content_type="image/png",
                            headers={"Cache-Control": "no-cache"})  # fmt: skip

    async def game(request: web.Request) -> web.Response:
        number = int(request.match_info["number"])
        try:
            return page(await in_thread(pages.game, number))
        except (StoreError, ReplayError, ValueError) as error:
            raise web.HTTPNotFound(text=f"game {number}: {error}") from None

    @web.middleware
    async def unreadable_database(request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            return await handler(request)  # type: ignore[no-any-return]
        except StoreError as error:  # e.g. deleted while serving: say so, keep serving
            return web.Response(status=503, text=f"{error}\n")

    app = web.Application(middlewares=[unreadable_database])
    app.router.add_get("/", index)
    app.router.add_get("/index.html", index)
    app.router.add_get("/status.json", status)
    app.router.add_get("/{name:(matrix|ratings)\\.png}", picture)
    app.router.add_get("/games/{number:\\d+}.html", game)
    return app


async def _serve(db: str, host: str, port: int) -> None:
    from aiohttp import web

    runner = web.AppRunner(make_app(db), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        raise StoreError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    bound = runner.addresses[0][1]
    shown = f"[{host}]" if ":" in host else host
    print(f"serving {db} at http://{shown}:{bound}/ (read-only; Ctrl-C to stop)", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def serve(db: str, host: str, port: int) -> int:
    """Run the server until Ctrl-C or SIGTERM; bad database or port: StoreError (exit 2)."""
    with reading(db):
        pass  # refuse a missing or foreign file now, with the store's one-line reason
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        raise StoreError("locm serve needs aiohttp: pip install 'aiohttp>=3.9,<4'") from None
    asyncio.run(_serve(db, host, port))
    print("locm: server stopped", file=sys.stderr)
    return 0
