"""One ladder web server for a test module: a real store on a real SQLite file, filled through
the store's own API (users, submissions, builds, rated games with real LOCM logs), served on a
real port of loopback by :func:`cardarena.ladder.server.start` from a thread of its own."""

from __future__ import annotations

import asyncio
import dataclasses
import http.client
import json
import threading
import urllib.parse
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardarena.ladder.api import StoreData
from cardarena.ladder.server import LadderHooks, start
from cardarena.ladder.store import LadderStore, User
from cardarena.locm.engine.params import resolve_parameters
from cardarena.locm.ladder.web import locm_hooks
from cardarena.locm.tournament import LocmGameTask, play_scheduled_game
from cardarena.tournaments.schedule import GameSpec
from cardarena.tournaments.store import compress_log

TIMEOUT_S = 60.0
"""Generous: the machine is busy; a correct server answers at once."""
MAX_UPLOAD = 4096
"""The fixture's upload cap: small, so that going over it is cheap."""
SECRET_STDERR = "alpha thinks: go face <b>now</b>"
BUILD_LOG = "compiling alpha... <script>alert('build')</script> ok"


@dataclass
class Ladder:
    """The running server and what the tests need to talk to it."""

    base: str
    store: LadderStore
    tokens: dict[str, str]
    users: dict[str, User]
    versions: dict[str, int]
    games: list[int] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(urllib.parse.urlsplit(self.base).port or 0)


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.body)

    def cookies(self) -> dict[str, str]:
        found = {}
        for header in self.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            found[name.strip()] = rest.split(";", 1)[0]
        return found


def request(ladder: Ladder, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> Answer:  # fmt: skip
    """One HTTP request on a connection of its own (no redirect followed)."""
    connection = http.client.HTTPConnection("127.0.0.1", ladder.port, timeout=TIMEOUT_S)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return Answer(answer.status, answer.headers, answer.read())
    finally:
        connection.close()


def bearer(ladder: Ladder, user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {ladder.tokens[user]}"}


def _played_log(seed: int) -> dict[str, Any]:
    """The log of a real LOCM 1.5 game between two built-in agents."""
    spec = GameSpec("greedy", "random", 0, seed)
    task = LocmGameTask(spec, ("builtin:greedy", "builtin:random"),
                        resolve_parameters("1.5", {"seed": str(seed)}), 4, 1.0)  # fmt: skip
    record = play_scheduled_game(task)
    assert record.log is not None
    return dict(json.loads(zlib.decompress(record.log)))


def _with_stderr(log: dict[str, Any], seat: int) -> bytes:
    """``log`` compressed, with a line of stderr from ``seat`` (the built-ins print none)."""
    errors = {**log["errors"], str(seat): list(log["errors"][str(seat)])}
    errors[str(seat)][1] = SECRET_STDERR
    return compress_log({**log, "errors": errors})


def fill(store: LadderStore) -> Ladder:
    """Three people (one organiser), two active bots and two pairs of rated games (alpha
    wins each, and prints a line on stderr)."""
    tokens = {name: store.add_user(name, name == "olga") for name in ("alice", "bob", "olga")}
    users = {name: store.user_for_token(token) for name, token in tokens.items()}
    versions = {}
    for owner, bot, command in (("alice", "alpha", "builtin:greedy"),
                                ("bob", "beta", "builtin:random")):  # fmt: skip
        user = users[owner]
        assert user is not None
        version = store.submit(user, bot, "python", "bot.py", b"print('x')", new_bot=True)
        store.record_build(version, True, BUILD_LOG if bot == "alpha" else "ok", command, None)
        store.set_status(version, "active")
        versions[bot] = version
    log = _played_log(11)
    games = []
    for seed in (11, 12):
        store.queue_pair("rated", seed, versions["alpha"], versions["beta"])
        for _seat in range(2):
            leased = store.lease("test")
            assert leased is not None
            alpha = 0 if leased.first.startswith("alpha.") else 1
            record = a_record(leased.id, seed, winner=alpha)
            store.finish(leased.id, dataclasses.replace(record, log=_with_stderr(log, alpha)))
            games.append(leased.id)
    return Ladder("", store, tokens, {k: v for k, v in users.items() if v}, versions, games)


def a_record(game: int, seed: int, winner: int) -> Any:
    from cardarena.tournaments.store import GameRecord

    return GameRecord(
        key=str(game), first="a", second="b", round=0, seed=seed, winner=winner, result="win",
        end_reason="HEALTH", error_seat=None, error_kind=None, detail=None, turns=10,
        first_turns=5, first_mean_ms=1.0, first_max_ms=2.0, second_turns=5,
        second_mean_ms=1.0, second_max_ms=2.0, duration_s=0.5,
        replay=f"locm play -p1 builtin:greedy -p2 builtin:random --version 1.5 -d seed={seed}",
    )  # fmt: skip


async def _stop_all(stop: Any) -> None:
    """Stop the server, then end what is left of its connections (as asyncio.run would)."""
    await stop()
    left = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in left:
        task.cancel()
    await asyncio.gather(*left, return_exceptions=True)


def serve(
    tmp: Path, hooks_for: Callable[[LadderStore], LadderHooks] | None = None
) -> Iterator[Ladder]:
    """Fill a store in ``tmp`` and serve it until the generator is closed, with the hooks
    ``hooks_for(store)`` gives (default: LOCM 1.5's, python and c, the test's upload cap)."""
    store = LadderStore(str(tmp / "ladder.db"), lock=True)
    ladder = fill(store)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="ladder-server", daemon=True)
    thread.start()
    if hooks_for is None:
        hooks = locm_hooks("1.5", ("python", "c"), max_upload_bytes=MAX_UPLOAD)
    else:
        hooks = hooks_for(store)
    started = asyncio.run_coroutine_threadsafe(start(StoreData(store), hooks, "127.0.0.1", 0), loop)
    ladder.base, stop = started.result(TIMEOUT_S)
    try:
        yield ladder
    finally:
        asyncio.run_coroutine_threadsafe(_stop_all(stop), loop).result(TIMEOUT_S)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(TIMEOUT_S)
        loop.close()
        store.close()
