"""``locm serve``: a tournament's HTML report and game viewers, live, over HTTP.

aiohttp (imported here only) serves the pages that ``locm report --html`` writes,
built on request from the database opened read-only each time (SQLite ``mode=ro``:
a leftover WAL is read, never checkpointed), so a running tournament is followed as
its games finish: the report page polls ``status.json`` and reloads itself when a
game was added. Nothing is ever written: no lock is taken, and the database may
belong to a tournament still running.

Pages are cached while the database file and its WAL keep their identity, size and
modification time: a replaced or updated file drops every cached page. Database and
matplotlib work runs in a few worker threads, so a slow picture never stalls the
other requests. Connections are counted and timed by :mod:`cardarena.httpguard`.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ...tournaments.report.html import read_change_mark, read_snapshot, report_page
from ...tournaments.report.png import write_pictures
from ...tournaments.store import StoreError, reading
from ..referee.causes import stored_cause
from ..referee.replay import ReplayError
from .tournament_pages import GAME, end_link, game_page

if TYPE_CHECKING:
    from ...httpguard import HttpLimits

GAME_CACHE_SIZE = 256
WORKERS = 4
"""Threads reading the database and drawing pictures."""
DESCRIPTORS_PER_WORKER = 3
"""A read-only connection holds the database, its WAL and its shared-memory index."""
GAME_NUMBER = "[0-9]{1,18}"
"""A game number in an address: more digits are no game (a 404 from the router)."""


def file_signature(db: str) -> tuple[object, ...]:
    """What changes when the database is replaced or written: the identity, size and
    modification time of the file and of its WAL."""
    signature: list[object] = []
    for path in (db, f"{db}-wal"):
        try:
            info = os.stat(path)
        except OSError:
            signature.append(None)
            continue
        signature.append((info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(signature)


class _Pages:
    """The pages of one database, rebuilt when its games change."""

    def __init__(self, db: str) -> None:
        self.db = db
        self.signature: tuple[object, ...] | None = None
        self.games: dict[int, tuple[str, int]] = {}
        """Game number -> (its page, its end frame)."""
        self.pictures: dict[str, bytes] = {}
        self.pictures_key: tuple[int, int] | None = None
        self.report: tuple[tuple[int, int], str] | None = None
        self.lock = threading.Lock()
        """matplotlib is not thread-safe: one picture rebuild at a time."""

    def _check_file(self) -> None:
        """Forget every page if the file was replaced or written since they were built."""
        signature = file_signature(self.db)
        if signature != self.signature:
            self.games = {}
            self.report = None
            self.pictures_key = None
            self.signature = signature

    def status(self) -> dict[str, Any]:
        stored, last = read_change_mark(self.db)
        return {"stored": stored, "version": f"{stored}-{last}"}

    def index(self) -> str:
        self._check_file()
        mark = read_change_mark(self.db)
        if self.report is None or self.report[0] != mark:
            snapshot = read_snapshot(self.db, stored_cause)
            page = report_page(snapshot, game=GAME, live=True, cause_link=end_redirect)
            self.report = (snapshot.version_key, page)
        return self.report[1]

    def picture(self, name: str) -> bytes | None:
        with self.lock:
            self._check_file()
            mark = read_change_mark(self.db)
            if self.pictures_key != mark:
                snapshot = read_snapshot(self.db, stored_cause)
                self.pictures = {}
                if snapshot.report.games:
                    with tempfile.TemporaryDirectory() as directory:
                        for path in write_pictures(snapshot.report, directory):
                            with open(path, "rb") as picture:
                                self.pictures[os.path.basename(path)] = picture.read()
                self.pictures_key = snapshot.version_key
            return self.pictures.get(name)

    def game(self, number: int) -> tuple[str, int]:
        """Game ``number``'s page and its end frame."""
        self._check_file()
        built = self.games.get(number)
        if built is None:
            built = game_page(self.db, number)
            if len(self.games) >= GAME_CACHE_SIZE:
                self.games.pop(next(iter(self.games)))
            self.games[number] = built
        return built


def end_redirect(number: int) -> str:
    """Where the report's cause of game ``number`` links to: an address that redirects to
    the game's page at its end frame (known once the page is built)."""
    return f"games/{number}/end"


def make_app(db: str, middlewares: tuple[Any, ...] = (),
             workers: ThreadPoolExecutor | None = None) -> Any:  # fmt: skip
    """The aiohttp application serving ``db`` (read-only); ``middlewares`` run first."""
    from aiohttp import web

    pages = _Pages(db)

    async def in_thread(function: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(workers, function, *args)

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

    async def built(number: int) -> tuple[str, int]:
        try:
            return await in_thread(pages.game, number)  # type: ignore[no-any-return]
        except (StoreError, ReplayError, ValueError) as error:
            raise web.HTTPNotFound(text=f"game {number}: {error}") from None

    async def game(request: web.Request) -> web.Response:
        text, _end = await built(int(request.match_info["number"]))
        return page(text)

    async def game_end(request: web.Request) -> web.Response:
        number = int(request.match_info["number"])
        _text, end = await built(number)
        # relative: the report may be served under a prefix (a reverse proxy)
        raise web.HTTPFound(f"../{end_link(number, end).removeprefix('games/')}")

    @web.middleware
    async def unreadable_database(request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            return await handler(request)  # type: ignore[no-any-return]
        except StoreError as error:  # e.g. deleted while serving: say so, keep serving
            return web.Response(status=503, text=f"{error}\n")

    app = web.Application(middlewares=[*middlewares, unreadable_database])
    app.router.add_get("/", index)
    app.router.add_get("/index.html", index)
    app.router.add_get("/status.json", status)
    app.router.add_get("/{name:(matrix|ratings)\\.png}", picture)
    app.router.add_get(f"/games/{{number:{GAME_NUMBER}}}.html", game)
    app.router.add_get(f"/games/{{number:{GAME_NUMBER}}}/end", game_end)
    return app


def descriptor_reserve() -> int:
    """Descriptors kept out of the connection cap: the process's own, the workers' database
    files, a picture's temporary files, and sockets accepted but not yet counted."""
    from ...httpguard import BASE_DESCRIPTORS, accept_reserve

    return BASE_DESCRIPTORS + DESCRIPTORS_PER_WORKER * WORKERS + 4 + accept_reserve()


async def _serve(db: str, host: str, port: int, limits: HttpLimits,
                 allowed_hosts: tuple[str, ...]) -> None:  # fmt: skip
    from aiohttp import web

    from ...httpguard import ConnectionGuard, HostCheck, fitted_cap, raise_descriptor_limit

    try:
        cap = fitted_cap(limits.max_connections, raise_descriptor_limit(), descriptor_reserve(),
                         "locm serve")  # fmt: skip
    except ValueError as error:
        raise StoreError(str(error)) from None
    guard = ConnectionGuard(limits, HostCheck(host, allowed_hosts), cap)
    workers = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="locm-serve")
    runner = web.AppRunner(make_app(db, (guard.middleware(),), workers), access_log=None,
                           keepalive_timeout=limits.idle_seconds)  # fmt: skip
    await runner.setup()
    site = guard.site(runner, host, port)
    try:
        await site.start()
    except OSError as error:
        guard.stop()
        await runner.cleanup()
        workers.shutdown(wait=False, cancel_futures=True)
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
        guard.stop()
        await runner.cleanup()
        workers.shutdown(wait=False, cancel_futures=True)


def serve(db: str, host: str, port: int, limits: HttpLimits | None = None,
          allowed_hosts: tuple[str, ...] = ()) -> int:  # fmt: skip
    """Run the server until Ctrl-C or SIGTERM; bad database or port: StoreError (exit 2)."""
    with reading(db):
        pass  # refuse a missing or foreign file now, with the store's one-line reason
    try:
        from ...httpguard import HttpLimits
    except ImportError:
        raise StoreError("locm serve needs aiohttp: pip install 'aiohttp>=3.9,<4'") from None
    asyncio.run(_serve(db, host, port, limits or HttpLimits(), allowed_hosts))
    print("locm: server stopped", file=sys.stderr)
    return 0
