"""Games of people against a ladder's bots (cardarena.locm.ladder.play), without a browser:
the cap on games at once, a bot that is not active, idle games stopped, and who may reach a
game's pages (its starter only, moves as small JSON only). Built-in bots: no processes."""

from __future__ import annotations

import asyncio
import json
import re
from functools import partial
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from cardarena.ladder.store import LadderStore
from cardarena.locm.ladder.play import GamesRefused, HumanGames, active_command


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def games(clock: Clock, limit: int = 2) -> HumanGames:
    commands = {"greedy": "builtin:greedy", "random": "builtin:random"}
    return HumanGames("1.5", commands.get, limit=limit, idle_s=60, keep_s=120, clock=clock)


def test_the_cap_the_active_bots_and_idle_games() -> None:
    async def run() -> None:
        clock = Clock()
        humans = games(clock)
        first = await humans.start("alice", "greedy", "first")
        await humans.start("bob", "random", "second")
        assert humans.running() == 2
        with pytest.raises(GamesRefused) as full:
            await humans.start("carol", "greedy")
        assert full.value.status == 503 and "try again" in str(full.value)
        with pytest.raises(GamesRefused) as inactive:
            await humans.start("carol", "retired-bot")
        assert inactive.value.status == 409
        game = humans.find(first)
        assert game is not None and game.user == "alice" and game.seat == 0
        assert game.session.names == ["alice", "greedy"]  # ladder names, not the command
        assert humans.find(first[:-1] + "x") is None

        clock.now += 61  # nobody asked for either page for a minute: both stopped
        await humans.sweep()
        assert humans.running() == 0
        assert game.session.error is not None and "nobody played it" in game.session.error
        await humans.start("carol", "greedy")  # room again
        clock.now += 121
        await humans.sweep()  # the stopped ones are forgotten, the new one stopped
        assert humans.find(first) is None and len(humans.games) == 1
        await humans.close()
        assert humans.running() == 0 and humans.games == []

    asyncio.run(run())


def test_only_its_starter_reaches_a_game() -> None:
    from aiohttp import web
    from aiohttp.test_utils import TestClient, TestServer

    async def run() -> None:
        humans = games(Clock(), limit=1)
        key = await humans.start("alice", "greedy", "first")
        root = web.Application()
        root.add_subapp("/play", humans.app(lambda request: request.headers.get("X-Who")))
        async with TestClient(TestServer(root)) as client:
            alice = {"X-Who": "alice"}
            page = await client.get(f"/play/{key}/", headers=alice)
            text = await page.text()
            assert page.status == 200 and "play.js" in text and 'href="/bots/greedy"' in text
            assert (await client.get(f"/play/{key}/", headers={"X-Who": "bob"})).status == 403
            assert (await client.get(f"/play/{key}/")).status == 403
            assert (await client.get("/play/nokey/", headers=alice)).status == 404
            state = await client.get(f"/play/{key}/state?after=-1", headers=alice)
            view = await state.json()
            assert (
                view["players"] == ["alice", "greedy"] and view["decision"]["kind"] == "construct"
            )
            plain = await client.post(f"/play/{key}/move", data="{}", headers=alice)
            assert plain.status == 415
            big = json.dumps({"id": 1, "action": "x" * 5000})
            headers = {**alice, "Content-Type": "application/json"}
            assert (await client.post(f"/play/{key}/move", data=big, headers=headers)).status == 413
            move = {"id": view["decision"]["id"], "auto": True}
            played = await client.post(f"/play/{key}/move", json=move, headers=alice)
            assert played.status == 200, await played.text()
        assert humans.games == []  # the server's shutdown stopped the game

    asyncio.run(run())


def test_a_bots_page_offers_a_game_to_a_logged_in_participant(tmp_path: Path) -> None:
    """The ladder's own pages: the button for a participant only, the form's CSRF field,
    the cap said on a page, an unknown bot."""
    from aiohttp.test_utils import TestClient, TestServer

    from cardarena.ladder.api import StoreData
    from cardarena.ladder.server import make_app
    from cardarena.locm.ladder.web import locm_hooks

    store = LadderStore(str(tmp_path / "ladder.db"))
    store.configure(game="locm", version="1.5")
    token = store.add_user("alice")
    olga = store.user_for_token(store.add_user("olga"))
    assert olga is not None
    version = store.submit(olga, "greedy", "python", "bot.py", b"#", new_bot=True)
    store.record_build(version, True, "built", "builtin:greedy", None)
    store.set_status(version, "active")
    csrf = re.compile(r'name="csrf" value="([^"]+)"')

    async def run() -> None:
        humans = HumanGames("1.5", partial(active_command, store), rivals=store.commands,
                            limit=1)  # fmt: skip
        app = make_app(StoreData(store), locm_hooks("1.5", play=humans))
        async with TestClient(TestServer(app)) as client:
            page = await (await client.get("/bots/greedy")).text()
            assert 'id="play-login"' in page and 'id="play-form"' not in page
            login = csrf.findall(await (await client.get("/me")).text())[0]
            logged = await client.post("/login", data={"csrf": login, "token": token})
            assert logged.status == 200  # followed to /me
            page = await (await client.get("/bots/greedy")).text()
            assert 'id="play-form"' in page
            secret = csrf.findall(page)[0]
            stale = await client.post("/bots/greedy/play", data={"csrf": "x"},
                                      allow_redirects=False)  # fmt: skip
            assert stale.status == 403 and humans.running() == 0
            form = {"csrf": secret, "seat": "second"}
            started = await client.post("/bots/greedy/play", data=form, allow_redirects=False)
            assert started.status == 303
            where = started.headers["Location"]
            assert where.startswith("/play/") and (await client.get(where)).status == 200
            assert humans.games[0].seat == 1 and humans.games[0].user == "alice"
            full = await client.post("/bots/greedy/play", data=form, allow_redirects=False)
            assert full.status == 503 and "try again" in await full.text()
            missing = await client.post("/bots/nobody/play", data=form, allow_redirects=False)
            assert missing.status == 404
        assert humans.games == []

    try:
        asyncio.run(run())
    finally:
        store.close()
