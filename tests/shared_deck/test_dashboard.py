"""The web dashboard of ``shared-deck serve --http-port``, checked in a real headless Chromium
against a real server with real bots: what a person sees must equal the rules engine's state
and the store's numbers. ``CARDARENA_SCREENSHOTS=docs/img`` also saves the docs' pictures."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from cardarena.httpguard import HttpLimits
from cardarena.shared_deck.bots import run_bot
from cardarena.shared_deck.errors import GameError
from cardarena.shared_deck.match import ACTIONS, Action
from cardarena.shared_deck.rules import Card, MatchState, RuleSet
from cardarena.shared_deck.store import Store

from .conftest import RunningServer

StartServer = Callable[..., RunningServer]
TIMEOUT_MS = 20_000
"""Playwright waits: generous, the machine is shared."""
SCREENSHOTS = os.environ.get("CARDARENA_SCREENSHOTS")


class Bots:
    """Built-in bots playing on a real server from their own event loop thread."""

    def __init__(self, server: RunningServer, strategies: dict[str, str]) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.futures: list[Future[None]] = [
            asyncio.run_coroutine_threadsafe(
                run_bot(server.host, server.port, name, server.secrets[name], strategy, seed=i),
                self.loop,
            )
            for i, (name, strategy) in enumerate(strategies.items())
        ]

    def stop(self) -> None:
        """Cancel the bots and wait until their tasks have ended and their connections closed."""
        for future in self.futures:
            future.cancel()
        for future in self.futures:
            with contextlib.suppress(BaseException):
                future.result(10)

        async def settle() -> None:  # let the cancelled tasks run their finally blocks
            pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            await asyncio.wait(pending, timeout=10) if pending else None

        asyncio.run_coroutine_threadsafe(settle(), self.loop).result(15)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def url(server: RunningServer, path: str = "/") -> str:
    assert server.dashboard is not None
    host, port = server.dashboard.address
    return f"http://{host}:{port}{path}"


def fetch(address: str) -> tuple[int, str, str]:
    """(status, content type, body) of a GET, errors included."""
    try:
        with urllib.request.urlopen(address, timeout=30) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode()


def engine_state(
    deck: tuple[Card, ...], rules: RuleSet, actions: list[Action], turn: int, steps: int = 0
) -> MatchState:
    """The rules engine's state at the start of match turn ``turn`` and after ``steps`` of
    that turn's actions: the log played again from the start."""
    state = MatchState(deck, rules)
    before = [a for a in actions if a.turn < turn]
    for action in before + [a for a in actions if a.turn == turn][:steps]:
        state.advance_to(action.turn)
        with contextlib.suppress(GameError):
            ACTIONS[action.command](state, action.args)
    state.advance_to(turn)
    return state


def shown_match(page: Any, root: str) -> dict[str, Any]:
    """What a match board under ``root`` shows, read in one go (between two redraws)."""
    return page.evaluate(
        """(root) => {
          const base = document.querySelector(root);
          const side = (s) => {
            const el = base.querySelector(`section.side[data-side="${s}"]`);
            const lines = (sel) => [...el.querySelectorAll(sel + " [data-card]")]
              .map((c) => c.dataset.line);
            return {hp: Number(el.querySelector(".hp-value").textContent),
                    hand: lines(".hand"), board: lines(".board"),
                    current: el.classList.contains("current")};
          };
          const fact = (name) => base.querySelector(`[data-fact="${name}"] b`).textContent;
          return {turn: base.dataset.turn, step: base.dataset.step, sides: [side(0), side(1)],
                  mana: fact("mana"), deck: fact("deck"), draws: fact("draws left"),
                  highlighted: [...base.querySelectorAll(".card.highlight")]
                    .map((c) => Number(c.dataset.card))};
        }""",
        root,
    )


def expected_view(state: MatchState) -> dict[str, Any]:
    def side(s: int) -> dict[str, Any]:
        hand = [state.hands[s][i].line for i in sorted(state.hands[s])]
        board = [f"{state.boards[s][i].line} {int(state.boards[s][i].active)}"
                 for i in sorted(state.boards[s])]
        return {"hp": state.hp[s], "hand": hand, "board": board,
                "current": not state.ended and state.current == s}

    return {"sides": [side(0), side(1)], "mana": str(state.mana),
            "deck": str(len(state.deck) - state.deck_position), "draws": str(state.draws_left)}


def shoot(page: Any, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / name), full_page=False)


# ------------------------------------------------------------------ a finished league
@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """Two stored tournaments of three bots; the server (and dashboard) keeps running."""
    db = tmp_path_factory.mktemp("league") / "league.db"
    server = RunningServer(
        db, ["alice", "bob", "carol"], http_port=0, turn_seconds=0.1, seed=5,
        rules=RuleSet(turns_per_match=14), start_after_logins=3, max_tournaments=2,
    )  # fmt: skip
    bots = Bots(server, {"alice": "greedy", "bob": "greedy", "carol": "random"})
    try:
        server.wait_saved(2, timeout=60)
    finally:
        bots.stop()
    yield server
    server.stop()


def stored(server: RunningServer) -> Store:
    return Store(server.server.config.db_path, read_only=True)


def test_leaderboard_page_equals_the_store(league: RunningServer, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(url(league, "/leaderboard"))
    rows = page.locator("#leaderboard tbody tr")
    with contextlib.closing(stored(league)) as store:
        board = store.leaderboard()
        points = {n: store.tournament(n).points for n in store.finished_tournaments()}
    expect(rows).to_have_count(len(board), timeout=TIMEOUT_MS)
    shown = page.evaluate(
        """() => [...document.querySelectorAll('#leaderboard tbody tr')].map(
             (tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))"""
    )
    for rank, (row, cells) in enumerate(zip(board, shown, strict=True), start=1):
        assert cells[:4] == [str(rank), row.player, f"{row.points:.2f}", str(row.tournaments)]
        assert cells[4:] == [f"{points[n][row.player]:.2f}" for n in (2, 1)]  # newest first
    shoot(page, "shared-deck-leaderboard.png")


def test_tournament_and_player_pages_show_the_stored_numbers(
    league: RunningServer, page: Any
) -> None:
    from playwright.sync_api import expect

    with contextlib.closing(stored(league)) as store:
        tournament = store.tournament(1)
        total = {row.player: row for row in store.leaderboard()}
    page.goto(url(league, "/tournament/1"))
    expect(page.locator("#tournament-matches tbody tr")).to_have_count(
        len(tournament.matches), timeout=TIMEOUT_MS
    )
    for match in tournament.matches:
        row = page.locator(f'#tournament-matches tr[data-match="{match.match_id}"]')
        expect(row).to_contain_text(f"{match.first_hp}–{match.second_hp}")
        expect(row).to_contain_text(f"{match.first_score} : {match.second_score}")
    for name, value in tournament.points.items():
        expect(page.locator(f'#tournament-players tr[data-player="{name}"] .points')).to_have_text(
            f"{value:.2f}"
        )
    page.click('#tournament-players a[href="/player/alice"]')
    expect(page).to_have_url(url(league, "/player/alice"))
    expect(page.locator("#player-points b")).to_have_text(f"{total['alice'].points:.2f}",
                                                          timeout=TIMEOUT_MS)
    expect(page.locator("#player-tournaments-table tbody tr")).to_have_count(2)
    expect(page.locator("#player-matches tbody tr")).to_have_count(8)  # 4 per tournament
    shoot(page, "shared-deck-player.png")
    page.goto(url(league, "/tournaments"))
    expect(page.locator("#tournaments tbody tr")).to_have_count(2, timeout=TIMEOUT_MS)


def test_pages_show_the_exact_64_bit_deck_seeds(league: RunningServer, page: Any) -> None:
    """Deck seeds are 63-bit integers; JSON.parse made 7149912976826791605 into
    7149912976826792000 on the tournament pages. The page must show the stored number."""
    from playwright.sync_api import expect

    with contextlib.closing(stored(league)) as store:
        seeds = {n: store.tournament(n).seed for n in store.finished_tournaments()}
    assert any(int(float(seed)) != seed for seed in seeds.values())  # beyond a double's 53 bits
    page.goto(url(league, "/tournaments"))
    expect(page.locator("#tournaments tbody tr")).to_have_count(2, timeout=TIMEOUT_MS)
    shown = page.evaluate(
        """() => [...document.querySelectorAll('#tournaments tbody tr')].map(
             (tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))"""
    )
    assert {int(cells[0].lstrip("#")): cells[-1] for cells in shown} == {
        n: str(seed) for n, seed in seeds.items()
    }
    for number, seed in seeds.items():
        page.goto(url(league, f"/tournament/{number}"))
        expect(page.locator("#app")).to_contain_text(f"deck seed {seed} ", timeout=TIMEOUT_MS)
    # The page's JSON reading keeps every other value as JSON.parse reads it.
    parsed = page.evaluate(
        """() => parseJSON('{"a":"x 12345678901234567890 \\\\" 9007199254740993","b":'
             + '0.30000000000000004,"c":-9007199254740993,"d":[9007199254740991,2.5e300,'
             + '-1e-7,1.0],"e":123456789012345678901234567890}')"""
    )
    assert parsed == {
        "a": 'x 12345678901234567890 " 9007199254740993', "b": 0.30000000000000004,
        "c": "-9007199254740993", "d": [9007199254740991, 2.5e300, -1e-7, 1],
        "e": "123456789012345678901234567890",
    }  # fmt: skip


def test_match_viewer_shows_the_rules_engines_state_at_any_turn(
    league: RunningServer, page: Any
) -> None:
    from playwright.sync_api import expect

    with contextlib.closing(stored(league)) as store:
        tournament = store.tournament(2)
    match = max(tournament.matches, key=lambda m: len(m.actions()))
    actions = list(match.actions())
    acting_turns = sorted({a.turn for a in actions})
    turn = acting_turns[len(acting_turns) // 2]
    page.goto(url(league, f"/match/{match.match_id}#turn={turn + 1}&step=0"))
    viewer = page.locator("#viewer")
    expect(viewer).to_have_attribute("data-turn", str(turn), timeout=TIMEOUT_MS)
    shown = shown_match(page, "#viewer")
    assert shown["step"] == "0"
    state = engine_state(tournament.deck, tournament.rules, actions, turn)
    assert {k: shown[k] for k in ("sides", "mana", "deck", "draws")} == expected_view(state)

    # Step through the turn's actions with the keyboard: each frame is the engine's state.
    of_turn = [a for a in actions if a.turn == turn]
    for step, action in enumerate(of_turn, start=1):
        page.keyboard.press("ArrowRight")
        expect(viewer).to_have_attribute("data-step", str(step))
        shown = shown_match(page, "#viewer")
        state = engine_state(tournament.deck, tournament.rules, actions, turn, step)
        assert {k: shown[k] for k in ("sides", "mana", "deck", "draws")} == expected_view(state)
        named = {x for x in action.args if x > 0}  # the cards the action names, if still there
        if action.command == "DRAW_CARD" and action.code == 0:  # and the card drawn
            named.add(state.deck[state.deck_position - 1].id)
        assert sorted(shown["highlighted"]) == sorted(named & _ids_on_screen(state))
        expect(page.locator(f'#action-log li[data-step="{step}"]')).to_have_class("now")
        expect(page).to_have_url(re.compile(rf"#turn={turn + 1}&step={step}$"))
        if step == 2:
            shoot(page, "shared-deck-match.png")
    page.keyboard.press("ArrowDown")  # the next turn's start
    expect(viewer).to_have_attribute("data-step", "0")
    assert int(viewer.get_attribute("data-turn") or -1) > turn


def _ids_on_screen(state: MatchState) -> set[int]:
    return {i for part in (*state.hands, *state.boards) for i in part}


def test_every_page_is_read_only_and_holds_no_secret(league: RunningServer) -> None:
    with contextlib.closing(stored(league)) as store:
        first = store.tournament(1).matches[0].match_id
        hashes = [store.secret_hash(name) for name in league.secrets]
    paths = [
        "/", "/leaderboard", "/tournaments", "/tournament/1", f"/match/{first}", "/player/bob",
        "/static/dashboard.js", "/static/dashboard.css", "/api/live", "/api/leaderboard",
        "/api/tournaments", "/api/tournament/1", f"/api/match/{first}", "/api/player/bob",
    ]  # fmt: skip
    for path in paths:
        status, _, body = fetch(url(league, path))
        assert status == 200, path
        for secret in [*league.secrets.values(), *hashes]:
            assert secret is not None and secret not in body, path
        assert "scrypt$" not in body and "secret" not in body.lower(), path
    request = urllib.request.Request(url(league, "/api/leaderboard"), data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 405


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/tournament/99", "no tournament 99"),
        ("/match/424242", "no match 424242"),
        ("/match/99999999999999999999", "nothing at"),
        ("/player/nobody", "no player nobody"),
        ("/player/%2E%2E%2Fetc", "no player"),
        ("/static/../store.py", "nothing at"),
        ("/static/server.py", "no file server.py"),
        ("/no/such/page", "nothing at /no/such/page"),
    ],
)
def test_unknown_things_get_a_404_page(
    league: RunningServer, page: Any, path: str, says: str
) -> None:
    response = page.goto(url(league, path))
    assert response is not None and response.status == 404
    assert "404" in page.title()
    assert says in page.locator("#error-message").text_content()
    assert "Traceback" not in page.content()


def test_unknown_things_get_a_404_json_under_api(league: RunningServer) -> None:
    for path, says in [("/api/match/424242", "no match 424242"),
                       ("/api/tournament/77", "no tournament 77"),
                       ("/api/player/zed", "no player zed"), ("/api/nothing", "nothing at")]:
        status, kind, body = fetch(url(league, path))
        assert (status, kind.split(";")[0]) == (404, "application/json"), path
        assert says in json.loads(body)["error"]


# ------------------------------------------------------------------ live
def test_dashboard_shows_a_match_being_played_and_follows_the_clock(
    start_server: StartServer, page: Any
) -> None:
    from playwright.sync_api import expect

    server = start_server(
        ["greedy", "randomer"], http_port=0, turn_seconds=0.4, seed=3,
        # Long matches with much health: the tournament is still running when the test looks.
        rules=RuleSet(turns_per_match=400, init_hp=200), start_after_logins=2,
    )  # fmt: skip
    bots = Bots(server, {"greedy": "greedy", "randomer": "random"})
    try:
        page.goto(url(server))
        expect(page.locator("[data-match]").first).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.locator("#connection")).to_have_class(re.compile(r"\bon\b"))
        # Something was played and is on screen: wait for a creature on a board.
        page.wait_for_function(
            "document.querySelectorAll('.live-match .board [data-card]').length > 0",
            timeout=TIMEOUT_MS,
        )
        # The page follows the server's clock: it catches up with the turn the server is at.
        now = server.call(lambda: server.server.arena.turn)  # type: ignore[union-attr]
        page.wait_for_function(
            f"Number(document.getElementById('turn').textContent) >= {now + 1}", timeout=TIMEOUT_MS
        )
        if SCREENSHOTS:  # a moment with more on the boards
            page.wait_for_function(
                f"Number(document.getElementById('turn').textContent) >= {now + 20}",
                timeout=TIMEOUT_MS * 3,
            )
        shoot(page, "shared-deck-dashboard.png")
    finally:
        bots.stop()
    # With the bots gone only the clock moves the matches: the page shows, for a turn it
    # reached after they left, exactly the state the rules engine gives at that turn.
    after = server.call(lambda: server.server.arena.turn)  # type: ignore[union-attr]
    page.wait_for_function(
        f"Number(document.getElementById('turn').textContent) >= {after + 1}", timeout=TIMEOUT_MS
    )
    tournament = server.call(lambda: server.server.arena.current)  # type: ignore[union-attr]
    assert tournament is not None
    for match_id in (tournament.first_match_id, tournament.first_match_id + 1):
        shown = shown_match(page, f'.live-match[data-match="{match_id}"]')
        log = server.call(lambda i=match_id: list(tournament.match(i).log))  # type: ignore[union-attr]
        assert any(a.command == "PLAY_CARD" and a.code == 0 for a in log)
        state = engine_state(tournament.deck, tournament.rules, log, int(shown["turn"]))
        assert {k: shown[k] for k in ("sides", "mana", "deck", "draws")} == expected_view(state)
    # A live match has its own page, which follows the clock as well.
    page.goto(url(server, f"/match/{tournament.first_match_id}"))
    expect(page.locator('#viewer[data-live="1"]')).to_be_visible(timeout=TIMEOUT_MS)
    shown_turn = int(page.locator("#viewer").get_attribute("data-turn") or 0)
    page.wait_for_function(
        f"Number(document.querySelector('#viewer').dataset.turn) > {shown_turn}"
        " || document.querySelector('.pill').textContent === 'ended'",
        timeout=TIMEOUT_MS,
    )


def test_the_game_server_answers_while_many_watchers_are_connected(
    start_server: StartServer,
) -> None:
    """200 live streams, half of which never read: commands and WAITs are still answered."""
    server = start_server(
        ["alice", "bob"], http_port=0, turn_seconds=0.1, start_after_logins=2,
        http_limits=HttpLimits(max_connections=300),
    )  # fmt: skip
    assert server.dashboard is not None
    host, port = server.dashboard.address
    streams = []
    request = f"GET /events HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n"
    for _ in range(200):
        sock = socket.create_connection((host, port), timeout=30)
        sock.sendall(request.encode())
        streams.append(sock)
    readers = streams[:100]
    try:
        with server.client("alice") as alice, server.client("bob") as bob:
            deadline = time.monotonic() + 30
            while server.call(lambda: len(server.dashboard.watchers)) < 200:  # type: ignore[union-attr]
                assert time.monotonic() < deadline, "the watchers were not all accepted"
                alice.wait()
            first = server.call(lambda: server.server.arena.turn)  # type: ignore[union-attr]
            for _ in range(5):
                alice.wait()
                assert alice.get_my_matches() and bob.get_my_matches()
                for sock in readers:  # those that read get a snapshot each turn
                    assert sock.recv(65536)
            assert server.call(lambda: server.server.arena.turn) >= first + 5  # type: ignore[union-attr]
            assert server.server.failed_ticks == 0
    finally:
        for sock in streams:
            sock.close()
    deadline = time.monotonic() + 30
    while server.call(lambda: len(server.dashboard.watchers)):  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "closed streams were not dropped"
        time.sleep(0.05)


# ------------------------------------------------------------------ the command line
def test_serve_with_http_port_prints_the_dashboards_address(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    with contextlib.closing(Store(db)) as store:
        store.add_player("alice")
    server = subprocess.Popen(
        [sys.executable, "-m", "cardarena.shared_deck.cli", "serve", "--db", str(db), "--port",
         "0", "--http-port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        assert server.stdout.readline().startswith("shared-deck listening on 127.0.0.1:")
        line = server.stdout.readline()
        match = re.fullmatch(r"shared-deck dashboard on (http://127\.0\.0\.1:\d+/)\n", line)
        assert match, line
        status, _, body = fetch(match[1] + "api/leaderboard")
        assert status == 200 and json.loads(body)["leaderboard"][0]["player"] == "alice"
    finally:
        server.send_signal(signal.SIGINT)
        _, stderr = server.communicate(timeout=30)
    assert server.returncode == 0, stderr


def test_a_taken_http_port_is_one_line_and_touches_no_file(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        db = tmp_path / "new.db"
        result = subprocess.run(
            [sys.executable, "-m", "cardarena.shared_deck.cli", "serve", "--db", str(db),
             "--create", "--port", "0", "--http-port", str(port)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert result.returncode == 1
    # said as `locm serve` says it, not as asyncio's "[Errno 98] error while attempting..."
    assert result.stderr.splitlines()[-1] == (
        f"shared-deck serve: cannot listen on 127.0.0.1:{port}: Address already in use"
    )
    assert "Traceback" not in result.stderr
    assert not db.exists()
    usage = subprocess.run(
        [sys.executable, "-m", "cardarena.shared_deck.cli", "serve", "--db", str(db),
         "--http-port", "70000"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert usage.returncode == 2 and usage.stderr.count("\n") == 1, usage.stderr


def test_a_watcher_that_does_not_read_keeps_only_the_newest_snapshot() -> None:
    """The per-watcher queue holds one snapshot: a slow browser skips, the game never waits."""
    from cardarena.shared_deck.dashboard import _offer

    queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=1)
    for turn in range(5):
        _offer(queue, f"data: {turn}\n\n".encode())  # never blocks, never raises QueueFull
    assert queue.qsize() == 1 and queue.get_nowait() == b"data: 4\n\n"
    _offer(queue, b"data: 5\n\n")
    _offer(queue, None)  # the server stops: the end replaces what was not sent
    assert queue.get_nowait() is None
