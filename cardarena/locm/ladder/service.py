"""``locm ladder serve``: the one server process of a LOCM ladder.

It opens the database (and holds its lock: one server per file), queues again the games a
previous run had leased and not finished, then runs three things side by side:

- the games, in the main thread: the tournament runner's worker pool
  (:func:`cardarena.tournaments.runner.run_tasks`, processes or a Ray cluster), fed lazily
  by the scheduler: it is asked for a game only when a worker is free, and every result is
  written here, by this process (SQLite has one writer);
- the builds, in a background thread: each new submission is unpacked and built in the
  sandbox (:mod:`cardarena.locm.ladder.build`), into ``DB.builds/VERSION/bot``; its
  validation games are then queued by the scheduler;
- the web server (:mod:`cardarena.ladder.server`: pages and the JSON API), in a thread with
  its own event loop, behind the connection guard; its first line on stdout is the address.

Ctrl-C or SIGTERM stop it: the games that finished are kept, the ones still being played are
``leased`` in the file and are played again at the next start. A ``kill -9`` loses nothing
more (each result is committed as it comes, with its rating change).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import os
import shutil
import sqlite3
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...ladder.abtests import AbSettings, AbTests
from ...ladder.languages import LANGUAGES, Language, available
from ...ladder.limits import RateLimits
from ...ladder.scheduler import Scheduler
from ...ladder.store import DEFAULT_LEASE_S, LadderStore
from ...terminal import shown
from ...tournaments.runner import BACKENDS, Interrupted, run_tasks
from ...tournaments.store import GameRecord
from ..engine.rules import DEFAULT_VERSION, VERSIONS
from ..play.server import DESCRIPTORS_PER_BOT
from ..referee.cgroups import DEFAULT_MEMORY_MB, reap
from ..referee.sandbox import available as sandbox_available
from ..referee.sandbox import private_paths
from .games import VALIDATION_OPPONENT, LadderGameTask, lost, make_task, play
from .play import DEFAULT_LIMIT as HUMAN_GAMES
from .play import HumanGames, active_command

if TYPE_CHECKING:
    from ...httpguard import HttpLimits

RESERVED_DESCRIPTORS = 64
DESCRIPTORS_PER_WORKER = 4
BUILD_POLL_S = 2.0
"""How often the builder looks for waiting submissions when nobody woke it."""
STOP_WAIT_S = 10.0
FIT_REFRESH_S = 2.0
"""The board's Bradley–Terry fit is at most this much older than the last game (it is
computed in the background: see :class:`cardarena.ladder.api.StoreData`)."""


def builds_folder(db: str) -> Path:
    """Where the built bots of the ladder ``db`` live: ``DB.builds`` beside it."""
    return Path(os.path.abspath(db) + ".builds")


def default_workers() -> int:
    """Games at once by default: one core is left to the server, the web and the builds."""
    return max(1, (os.cpu_count() or 1) - 1)


def offered_languages(languages: Mapping[str, Language]) -> dict[str, Language]:
    """The languages of the table whose compiler and runtime are installed here: the only
    ones the pages and ``GET /api/languages`` offer and an upload may name."""
    return {name: language for name, language in languages.items() if available(language)}


def add_user(db: str, name: str, organiser: bool = False) -> str:
    """Add a participant to the ladder ``db`` (the server may be running); their token."""
    with LadderStore(db) as store:
        return store.add_user(name, organiser)


class Builder:
    """Builds the waiting submissions one at a time, in a background thread."""

    def __init__(
        self,
        store: LadderStore,
        folder: Path,
        languages: Mapping[str, Language],
        *,
        allow_unsandboxed: bool = False,
    ) -> None:
        self.store = store
        self.folder = folder
        self.languages = dict(languages)
        self.allow_unsandboxed = allow_unsandboxed
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ladder-builder", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wake(self, *_info: Any) -> None:
        """A submission arrived: look now (a web hook, any arguments)."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.ident is not None:  # started
            self._thread.join(STOP_WAIT_S)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            for version, language, filename, archive in self.store.waiting_builds():
                if self._stop.is_set():
                    return
                current = self.store.version(version)
                if current is None or current.status != "building":
                    continue  # replaced by a newer version while it waited
                try:
                    self.build_one(version, language, filename, archive)
                except Exception as error:  # the server keeps going; the version says why
                    why = f"the server could not build it: {type(error).__name__}: {error}"
                    print(f"locm: ladder: version {version}: {shown(why)}", file=sys.stderr)
                    with contextlib.suppress(Exception):
                        self.store.record_build(version, False, why + "\n", None, None)
            self._wake.wait(BUILD_POLL_S)

    def rebuild_missing(self) -> int:
        """Build again, now, every version whose built folder is gone (a restored backup: the
        database holds every submission); how many."""
        missing = self.store.missing_builds()
        if missing:
            print(f"locm: ladder: building again {len(missing)} bot version(s) whose built "
                  f"folder is missing from {self.folder}", file=sys.stderr, flush=True)  # fmt: skip
        for version, language, filename, archive in missing:
            self.build_one(version, language, filename, archive, again=True)
        return len(missing)

    def build_one(
        self, version: int, language_name: str, filename: str, archive: bytes, again: bool = False
    ) -> None:
        """Unpack and build one submission; record its result (``validating`` or ``failed``;
        ``again``: a lost build made again, the version keeps its status)."""
        record = self.store.record_rebuild if again else self.store.record_build
        from ...ladder.uploads import UploadError, unpack
        from .build import build

        language = self.languages.get(language_name)
        if language is None:
            known = ", ".join(sorted(self.languages))
            log = f"this ladder builds no language {language_name!r} (it builds: {known})\n"
            record(version, False, log, None, None)
            return
        place = self.folder / str(version)
        shutil.rmtree(place, ignore_errors=True)  # a build a stopped server left half done
        place.mkdir(parents=True, mode=0o755)
        source, out = place / "src", place / "bot"
        try:
            unpack(archive, filename, source)
        except UploadError as error:
            record(version, False, f"{error}\n", None, None)
            return
        try:
            result = build(source, language, out, allow_unsandboxed=self.allow_unsandboxed)
        finally:
            shutil.rmtree(source, ignore_errors=True)  # the archive stays in the database
        record(version, result.ok, result.log, result.command, str(out))


Stop = Callable[[], Awaitable[None]]


class WebThread:
    """The ladder's web server in a thread of its own (its own event loop)."""

    def __init__(self, begin: Callable[[], Awaitable[tuple[str, Stop]]], where: str) -> None:
        """``begin``: starts serving in the running loop; (base address, stop)."""
        self._begin = begin
        self._where = where
        self._started: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="ladder-web", daemon=True)

    def start(self) -> str:
        """Start listening; the base address. ValueError (one line) if it cannot listen."""
        self._thread.start()
        return self._started.result()

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread.ident is not None:
            self._thread.join(STOP_WAIT_S)

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as error:  # told to the starting thread if it still waits
            if not self._started.done():
                self._started.set_exception(error)

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            address, stop = await self._begin()
        except OSError as error:
            why = error.strerror or str(error)
            raise ValueError(f"cannot listen on {self._where}: {why}") from None
        self._started.set_result(address)
        try:
            await self._stop.wait()
        finally:
            await stop()


def serve(
    db: str,
    version: str = DEFAULT_VERSION,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int | None = None,
    backend: str = "process",
    address: str | None = None,
    limits: HttpLimits | None = None,
    allowed_hosts: tuple[str, ...] = (),
    *,
    web: bool = True,
    sandbox: bool = True,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    validation_opponent: str = VALIDATION_OPPONENT,
    languages: Mapping[str, Language] | None = None,
    max_in_flight: int = 2,
    lease_s: float = DEFAULT_LEASE_S,
    allow_unsandboxed_builds: bool = False,
    human_games: int = HUMAN_GAMES,
    rate_limits: RateLimits | None = None,
    ab_settings: AbSettings | None = None,
) -> int:
    """Run the ladder over ``db`` until Ctrl-C or SIGTERM; the exit status (0).

    Bad input (a foreign database, one in use by another server, a port taken, an unknown
    version or backend) is a ValueError with a one-line reason, raised before any game.
    ``web`` False runs the games and the builds only (tests, a headless ladder).
    ``human_games``: games of people against the bots in the browser at once (0: none).
    ``rate_limits``: per participant (organisers exempt); ``ab_settings``: the A/B tests'
    budget, share of the workers and tests at once (None: the defaults).
    """
    if version not in VERSIONS:
        raise ValueError(f"unknown LOCM version {version!r}; known: {', '.join(VERSIONS)}")
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    workers = workers or default_workers()
    languages = dict(LANGUAGES if languages is None else languages)
    # Before the store opens: this looks into every file beside the database, and a process
    # that closes any descriptor of a SQLite file loses its locks on it (POSIX), after which
    # another reader could reset the shared-memory file under this process's map (SIGBUS).
    hidden = private_paths([os.getcwd(), os.path.dirname(os.path.abspath(db))], db)
    store = LadderStore(db, lock=True)
    web_thread: WebThread | None = None
    builder: Builder | None = None
    try:
        store.configure(game="locm", version=version)
        ab_tests = AbTests(store, ab_settings or AbSettings(), workers)
        scheduler = Scheduler(
            store,
            validation_opponent=validation_opponent,
            max_in_flight=max_in_flight,
            lease_s=lease_s,
            ab=ab_tests,
        )
        recovered = scheduler.recover()
        from ...ladder.final import FinalProgramme, ensure_tables

        ensure_tables(store)
        scheduler.programmes.append(FinalProgramme())
        if sandbox:
            sandbox = sandbox_available()
        builder = Builder(
            store, builds_folder(db), languages, allow_unsandboxed=allow_unsandboxed_builds
        )
        if web:
            humans = HumanGames(version, partial(active_command, store), rivals=store.commands,
                              hidden=hidden, sandbox=sandbox, memory_mb=memory_mb,
                              limit=human_games)  # fmt: skip
            ab_web = (ab_tests, rate_limits or RateLimits())
            web_thread = _web(store, version, languages, builder, host, port, limits,
                              allowed_hosts, workers, humans, ab=ab_web)  # fmt: skip
            print(web_thread.start(), flush=True)
        missing = sorted(set(languages) - set(offered_languages(languages)))
        if missing:
            print(f"locm: ladder: not offered, their tools are not installed here: "
                  f"{', '.join(missing)}", file=sys.stderr, flush=True)  # fmt: skip
        builder.rebuild_missing()  # before any game: each would be a crash
        builder.start()
        print(
            f"locm: ladder {db}: LOCM {version}, {workers} worker(s); {recovered} game(s) the "
            "last run left unfinished are queued again (Ctrl-C to stop)",
            file=sys.stderr,
            flush=True,
        )

        def tasks() -> Iterator[LadderGameTask | None]:
            while True:
                try:
                    game = scheduler.next_game()
                    rivals = store.commands() if game is not None else []
                except sqlite3.Error as error:  # a full disk, a file locked for long: wait
                    print(f"locm: ladder: cannot schedule a game now: {error}", file=sys.stderr)
                    game = None
                if game is None:
                    yield None
                    continue
                yield make_task(
                    game, version, rivals=rivals, hidden=hidden, sandbox=sandbox,
                    memory_mb=memory_mb,
                )  # fmt: skip

        def record(result: tuple[int, GameRecord]) -> None:
            game, played = result
            try:
                scheduler.record(game, played)
            except sqlite3.Error as error:  # still leased: played again when its lease ends
                print(f"locm: ladder: cannot store game {game} now ({error}); it will be "
                      "played again", file=sys.stderr)  # fmt: skip

        try:
            run_tasks(
                play, tasks(), record, workers=workers, backend=backend, address=address,
                lost=lost, worker_died=reap,
            )  # fmt: skip
        except Interrupted as stopped:
            print(f"locm: ladder stopped ({stopped}); games in play are played again at the "
                  "next start", file=sys.stderr)  # fmt: skip
        return 0
    finally:
        if builder is not None:
            builder.stop()
        if web_thread is not None:
            web_thread.stop()
        store.close()


def _web(
    store: LadderStore,
    version: str,
    languages: Mapping[str, Language],
    builder: Builder,
    host: str,
    port: int,
    limits: HttpLimits | None,
    allowed_hosts: tuple[str, ...],
    workers: int,
    humans: HumanGames | None = None,
    ab: tuple[AbTests, RateLimits] | None = None,
) -> WebThread:
    """The web server of the ladder: ladweb's application over the store, LOCM's hooks."""
    from ...ladder.abweb import AbWeb
    from ...ladder.api import StoreData
    from ...ladder.server import start
    from ...ladder.uploads import UploadLimits
    from .web import locm_hooks

    data = StoreData(store, refresh_s=FIT_REFRESH_S)
    offered = offered_languages(languages)
    hooks = locm_hooks(
        version,
        languages=tuple(sorted(offered)),
        entries={name: language.source_name for name, language in offered.items()},
        max_upload_bytes=UploadLimits().upload_bytes,
        submitted=builder.wake,
        play=humans,
    )
    from ...ladder.final_web import final_routes

    hooks = dataclasses.replace(hooks, extra_routes=(*hooks.extra_routes, final_routes(store)))
    # Descriptors the connection cap leaves to the rest of the process: the database's,
    # each worker's pipe and sentinel, a build's pipes.
    reserve = RESERVED_DESCRIPTORS + DESCRIPTORS_PER_WORKER * workers
    if humans is not None:  # each game against a person runs a bot in this process
        reserve += DESCRIPTORS_PER_BOT * humans.limit
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    ab_web = None if ab is None else AbWeb(*ab)
    return WebThread(
        lambda: start(data, hooks, host, port, limits, allowed_hosts, reserve=reserve, ab=ab_web),
        where,
    )
