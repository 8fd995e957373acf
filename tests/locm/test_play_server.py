"""The server of ``locm play -p1 human`` against other people's clients: real ``locm play``
processes, real sockets on loopback, a real Chromium.

Whatever anyone else sends, the person's game goes on: connections are capped below the
descriptor limit (the referee's and the bot's descriptors kept apart) and timed, the Host
header is checked, a POST is taken only as JSON from the page's own origin, a move's JSON is
parsed within bounds, and ``--open`` gives the browser a one-time address, never the token.
Waits are on conditions with generous bounds; nothing here measures speed.
"""

from __future__ import annotations

import http.server
import json
import os
import resource
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiohttp")

from tests.locm.test_play_browser import Game
from tests.locm.test_viewer_serve import closed_by_server

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 60.0
"""Generous: the machine is busy; a correct server is much faster than this."""
NOFILE = 256
"""The game's descriptor limit: room for its cap of 64 connections and its reserve (64 with
one bot), far below the flood."""
FLOOD = 300
"""Idle connections opened at once, twice: each time more than the descriptor limit (as 1,100
were at the usual ``ulimit -n`` of 1024 in the report of the attack)."""
BOT = "python3 examples/bots/minimal_bot.py"
"""A bot process, sandboxed as in any locm play: the referee needs descriptors for it."""
BROKEN = ("Too many open files", "out of system resource", "Traceback")


class Played(Game):
    """``locm play`` with a human seat, running (as in the browser tests), with a descriptor
    limit and more environment variables, and the page's HTTP requests."""

    def __init__(self, *args: str, nofile: int | None = None,
                 env: dict[str, str] | None = None) -> None:  # fmt: skip
        def limit() -> None:
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        super().__init__(list(args), preexec_fn=limit,
                         env=None if env is None else {**os.environ, **env})  # fmt: skip
        self.origin = self.url.rsplit("/", 2)[0]
        self.token = self.url.rstrip("/").rsplit("/", 1)[1]
        self.port = int(self.origin.rsplit(":", 1)[1])
        self.seq = -1

    def request(self, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, bytes]:  # fmt: skip
        """One request on a new connection, as a client without cookies sends it."""
        request = urllib.request.Request(self.url + path, body, headers or {})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def view(self) -> dict[str, Any]:
        """The next state of the game the page would get (waits for a change)."""
        status, body = self.request(f"state?after={self.seq}")
        assert status == 200, body
        view: dict[str, Any] = json.loads(body)
        self.seq = view["seq"]
        return view

    def view_now(self) -> dict[str, Any]:
        """The game as it is (no wait)."""
        status, body = self.request("state?after=-1")
        assert status == 200, body
        return json.loads(body)  # type: ignore[no-any-return]

    def decision(self) -> dict[str, Any]:
        """The person's decision now (waits for one)."""
        while True:
            view = self.view()
            assert not view["over"] and view["error"] is None, view
            if view["decision"] is not None:
                return view["decision"]  # type: ignore[no-any-return]

    def move(self, body: dict[str, Any], **headers: str) -> tuple[int, bytes]:
        return self.request("move", json.dumps(body).encode(),
                            {"Content-Type": "application/json", **headers})  # fmt: skip

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT_S)


@pytest.fixture()
def play() -> Iterator[type[Played]]:
    started: list[Played] = []

    class Tracked(Played):
        def __init__(self, *args: str, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            started.append(self)

    yield Tracked
    for game in started:
        game.stop_or_kill()


def idle_connections(game: Played, count: int) -> list[socket.socket]:
    """``count`` connections that send nothing: the reported attack (each one a
    descriptor of the server, were it to keep them all)."""
    return [game.connect() for _ in range(count)]


def test_more_idle_connections_than_descriptors_leave_the_persons_game_whole(
    play: type[Played], tmp_path: Path
) -> None:
    """Before: the server took every descriptor (accept failing with "Too many open files"),
    and no request of the person was answered for minutes. Now every move lands, the bot
    keeps playing and the game ends normally, its log written."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 2 * FLOOD + 64
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"this test opens {2 * FLOOD} sockets: the hard descriptor limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    log = tmp_path / "game.json"
    # --idle-timeout 600: the flood stays until the cap makes room, not until a timer.
    game = play("-p1", "human", "-p2", BOT, "--version", "1.2", "-d", "seed=3", "--time-scale",
                "10", "-l", str(log), "--idle-timeout", "600", nofile=NOFILE)  # fmt: skip
    flood = idle_connections(game, FLOOD)
    try:
        moves = 0
        while True:
            view = game.view()
            assert view["error"] is None, view["error"]
            if view["over"]:
                break
            decision = view["decision"]
            if decision is None:
                continue
            if decision["kind"] == "draft":
                body = {"id": decision["id"], "auto": True}
            else:  # the first move offered: a summon, an attack, or the end of the turn
                body = {"id": decision["id"], "action": decision["actions"][0]}
                if moves == 1:  # and again, in the battle
                    flood += idle_connections(game, FLOOD)
            status, answer = game.move(body)
            assert status == 200, answer
            moves += 1
        assert moves > 2
        assert view["end"]["reason"] in ("health", "deck"), view["end"]  # played to its end
        scores = [game.line(), game.line()]
        assert sorted(scores) == ["0", "1"]
        players = json.loads(log.read_text(encoding="utf-8"))["cardarena"]["players"]
        assert players == ["human", BOT]
        flood[0].settimeout(TIMEOUT_S)
        assert closed_by_server(flood[0])  # the oldest idle ones made room
    finally:
        for sock in flood:
            sock.close()
    assert game.stop() == 0
    stderr = "".join(game.stderr)
    assert not any(sign in stderr for sign in BROKEN), stderr
    assert "connection cap 64 reached" in stderr


def test_spectators_waiting_for_news_leave_the_person_room(play: type[Played]) -> None:
    """A spectator's request for news waits (up to 20 s) and is never closed for a newcomer;
    before, spectators' requests could hold every connection and the person's move got a
    503. Now half the places at most wait for spectators; the others are answered 503 at
    once (the page tries again in 2 s), and the person's move lands."""
    game = play("-p1", "human", "-p2", "builtin:random", "--version", "1.2", "-d", "seed=9",
                "--max-connections", "8")  # fmt: skip
    decision = game.decision()
    path = game.watch_url[len(game.origin) :] + f"state?after={game.view_now()['seq']}"
    head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{game.port}\r\n\r\n".encode()
    spectators = [game.connect() for _ in range(8)]
    for sock in spectators:
        sock.sendall(head)
    answered: dict[socket.socket, bytes] = {}
    deadline = TIMEOUT_S
    while len(answered) < 4:  # those beyond the spectators' places, at once
        ready, _, _ = select.select([s for s in spectators if s not in answered], [], [], deadline)
        assert ready, f"only {len(answered)} spectators answered"
        for sock in ready:
            answered[sock] = sock.recv(4096)
    assert all(answer.startswith(b"HTTP/1.1 503") for answer in answered.values()), answered
    status, body = game.move({"id": decision["id"], "auto": True})
    assert status == 200, body
    for sock in spectators:  # the waiting ones hear of the move
        if sock not in answered:
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        sock.close()


def test_a_wrong_host_is_421_and_the_right_ones_play(play: type[Played]) -> None:
    game = play("-p1", "human", "-p2", "builtin:random", "--version", "1.2")
    for host in (f"evil.example:{game.port}", "attacker.test", f"127.0.0.2:{game.port}"):
        status, body = game.request("state", headers={"Host": host})
        assert status == 421 and b"--allow-host" in body, host
    for host in (f"127.0.0.1:{game.port}", f"localhost:{game.port}"):
        status, body = game.request("state?after=-1", headers={"Host": host})
        assert status == 200 and json.loads(body)["format"] == "cardarena.locm.play/1", host
    allowing = play("-p1", "human", "-p2", "builtin:random", "--allow-host", "arena.example")
    assert allowing.request("state?after=-1", headers={"Host": "arena.example"})[0] == 200
    assert allowing.request("state", headers={"Host": "other.example"})[0] == 421


def test_posts_from_elsewhere_or_not_json_are_refused_and_change_nothing(
    play: type[Played],
) -> None:
    """Before: a ``text/plain`` POST from another origin (what any page can make a browser
    send, without a preflight) was played. Now only JSON from the page's origin is."""
    game = play("-p1", "human", "-p2", "builtin:random", "--version", "1.2", "-d", "seed=9")
    decision = game.decision()
    move = json.dumps({"id": decision["id"], "action": decision["actions"][0]}).encode()
    refused = [
        ({"Content-Type": "text/plain", "Origin": "http://evil.example"}, 403),
        ({"Content-Type": "application/json", "Origin": "http://evil.example"}, 403),
        ({"Content-Type": "application/json", "Origin": "null"}, 403),
        ({"Content-Type": "application/json", "Origin": "http://127.0.0.1:1"}, 403),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403),
        ({"Content-Type": "text/plain", "Origin": game.origin}, 415),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
        ({"Content-Type": "multipart/form-data; boundary=x"}, 415),
    ]
    for headers, expected in refused:
        status, _ = game.request("move", move, headers)
        assert status == expected, headers
    view = game.view_now()
    assert view["decision"]["id"] == decision["id"] and view["decision"]["moves"] == []
    status, body = game.move({"id": decision["id"], "action": decision["actions"][0]},
                             Origin=game.origin, **{"Sec-Fetch-Site": "same-origin"})  # fmt: skip
    assert status == 200, body  # what the page sends


class Drafting(Played):
    """One game for the crafted moves: each is sent at a decision of its draft, then a
    real move, so the next one meets the next decision of the same game."""

    def __init__(self) -> None:
        super().__init__("-p1", "human", "-p2", "builtin:random", "--version", "1.2",
                         "-d", "seed=9")  # fmt: skip
        self.answered: set[int] = set()

    def next_decision(self) -> dict[str, Any]:
        """A decision no earlier test answered (the news of a move shows the old one)."""
        while (decision := self.decision())["id"] in self.answered:
            pass
        self.answered.add(decision["id"])
        return decision


@pytest.fixture(scope="module")
def drafting() -> Iterator[Drafting]:
    game = Drafting()
    yield game
    game.stop_or_kill()


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"[" * 3000, 400),  # nested too deeply for json.loads: a 500 before
        (b'{"id": ' + b"[" * 20 + b"]" * 20 + b"}", 400),
        (b'{"id": 1, "action": "PASS"' + b', "x": 1' * 20 + b"}", 400),
        (b"[1, 2]", 400),
        (b'"PASS"', 400),
        (b"\xff\xfe{}", 400),
        (b"{", 400),
        (b'{"id": 1, "action": "' + b"A" * 5000 + b'"}', 413),
    ],
)
def test_a_crafted_move_is_a_4xx_and_the_game_goes_on(
    drafting: Drafting, body: bytes, status: int
) -> None:
    game = drafting
    decision = game.next_decision()
    answer = game.request("move", body, {"Content-Type": "application/json"})
    assert answer[0] == status, answer
    if status == 400:
        assert json.loads(answer[1]) == {"error": "a move is a small JSON object"}
    status, _ = game.move({"id": decision["id"], "action": decision["actions"][0]})
    assert status == 200
    assert "Traceback" not in "".join(game.stderr)


def test_idle_and_half_sent_requests_are_closed(play: type[Played]) -> None:
    """Before: both stayed open for minutes (the socket timeout of 120 s ran out first)."""
    game = play("-p1", "human", "-p2", "builtin:random", "--idle-timeout", "1",
                "--header-timeout", "1")  # fmt: skip
    silent = game.connect()
    half = game.connect()
    half.sendall(f"GET /{game.token}/state HTTP/1.1\r\nHost: 127.0.0.1:{game.port}\r\n".encode())
    kept = game.connect()  # one whole request, then nothing: the keep-alive ends
    kept.sendall(f"GET /{game.token}/state?after=-1 HTTP/1.1\r\n"
                 f"Host: 127.0.0.1:{game.port}\r\n\r\n".encode())  # fmt: skip
    assert kept.recv(4096).startswith(b"HTTP/1.1 200")
    for sock in (silent, half, kept):
        assert closed_by_server(sock)  # within the socket's 60 s, not minutes
        sock.close()
    assert game.view()["format"] == "cardarena.locm.play/1"  # still serving


def test_a_descriptor_limit_too_low_is_one_line() -> None:
    process = subprocess.run(
        [sys.executable, "-m", "cardarena.locm", "play", "-p1", "human", "-p2", BOT],
        cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)),
    )  # fmt: skip
    assert process.returncode == 2 and process.stdout == ""
    assert process.stderr.count("\n") == 1 and "descriptor limit (64) is too low" in process.stderr


STUB_BROWSER = """#!/bin/sh
# What a browser started by locm play --open is given: its whole command line, as ps shows it.
tr '\\0' '\\n' < /proc/$$/cmdline > "{record}.tmp"
mv "{record}.tmp" "{record}"
"""


class Elsewhere:
    """A page on another port of 127.0.0.1: another origin, the same site (a browser sends
    SameSite=Strict cookies from it)."""

    def __init__(self) -> None:
        class Page(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = b"<!doctype html><title>elsewhere</title>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_open_gives_the_browser_a_one_time_address_and_never_the_token(
    play: type[Played], browser: Any, tmp_path: Path
) -> None:
    """Before: the browser's command line held the play address, token and all (``ps``
    shows it to every user). Now it holds a one-time address: its first visit lets this
    browser in with an HttpOnly, SameSite=Strict cookie; a second visit is refused."""
    record = tmp_path / "argv"
    stub = tmp_path / "browser"
    stub.write_text(STUB_BROWSER.format(record=record), encoding="utf-8")
    stub.chmod(0o755)
    game = play("-p1", "human", "-p2", "builtin:random", "--version", "1.2", "-d", "seed=9",
                "--open", env={"BROWSER": str(stub)})  # fmt: skip
    deadline = time.monotonic() + TIMEOUT_S
    while not record.exists():  # the opener runs beside the server: wait for its record
        assert game.process.poll() is None, "".join(game.stderr)
        assert time.monotonic() < deadline, "the browser command was not run"
        time.sleep(0.02)  # a condition's poll (asking for news would wait 20 s for none)
    argv = record.read_text(encoding="utf-8").splitlines()
    assert argv[:2] == ["/bin/sh", str(stub)]  # the script, run by its #! line
    assert game.token not in "".join(argv)
    (address,) = (word for word in argv if word.startswith(game.origin))
    assert address.startswith(f"{game.origin}/open/")

    context = browser.new_context(bypass_csp=True)
    elsewhere = Elsewhere()
    try:
        page = context.new_page()
        page.goto(address + "#delay=0")
        assert page.url.startswith(f"{game.origin}/play/")  # the token is in no address
        page.wait_for_selector("#offered [data-action]", timeout=TIMEOUT_S * 1000)
        (cookie,) = context.cookies(f"{game.origin}/play/")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert cookie["path"] == "/play/" and game.token not in cookie["value"]
        old = page.get_attribute("body", "data-decision")
        page.locator("#offered [data-action]").first.click()  # the move lands
        page.wait_for_selector(f'body[data-decision]:not([data-decision="{old}"])',
                               timeout=TIMEOUT_S * 1000)  # fmt: skip
        decision = game.decision()
        assert decision["id"] == int(page.get_attribute("body", "data-decision"))

        # A page elsewhere on this host: the browser sends it the cookie, but its POSTs are
        # refused (text/plain needs no preflight; JSON from elsewhere needs one, never granted).
        other = context.new_page()
        other.goto(elsewhere.url)
        for mode, kind in (("no-cors", "text/plain"), ("cors", "application/json")):
            other.evaluate(
                """([url, body, mode, kind]) => fetch(url, {method: 'POST', mode,
                    credentials: 'include', headers: {'Content-Type': kind}, body})
                    .catch(() => null)""",
                [f"{game.origin}/play/move",
                 json.dumps({"id": decision["id"], "action": decision["actions"][0]}),
                 mode, kind],
            )  # fmt: skip
        after = game.view_now()["decision"]
        assert after["id"] == decision["id"] and after["moves"] == []

        # The one-time address is spent; without the cookie /play/ is refused.
        second = browser.new_context()
        try:
            answer = second.new_page().goto(address)
            assert answer is not None and answer.status == 403
            assert b"used already" in answer.body()
            answer = second.new_page().goto(f"{game.origin}/play/")
            assert answer is not None and answer.status == 403
        finally:
            second.close()
    finally:
        context.close()
        elsewhere.close()


def test_the_docs_state_the_limits_of_the_code() -> None:
    from cardarena.httpguard import MIN_CONNECTIONS
    from cardarena.locm.play.server import MAX_MOVE_BYTES, MAX_MOVE_ITEMS, descriptor_reserve

    security, guide = (" ".join((REPO / "docs" / name).read_text(encoding="utf-8").split())
                       for name in ("security.md", "play.md"))  # fmt: skip
    reserve = descriptor_reserve(1)
    assert f"({reserve} with one bot)" in security and f"({reserve} with one bot)" in guide
    assert f"`locm play` (below {reserve + MIN_CONNECTIONS} with one bot)" in security
    assert f"at most {MAX_MOVE_BYTES:,} bytes (`413`) and {MAX_MOVE_ITEMS} JSON items" in security
    assert f"413 past {MAX_MOVE_BYTES:,} bytes" in guide
