"""Hostile participants against a real ``locm ladder serve`` on a real port (one server for the
module): uploads over HTTP (path traversal, links, devices, archive bombs, oversize, chunked
and slow bodies, malformed multipart), names that would run as script or reorder a terminal,
another participant's stderr, build log and token, a spy bot that looks for the database and
the other bots' files, cross-site form posts, a foreign Host, a connection flood, a bot that
keeps crashing, and a participant who sends many versions at once."""

from __future__ import annotations

import http.client
import json
import re
import socket
import sqlite3
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aiohttp")

from cardarena.ladder.server import Sessions
from cardarena.ladder.store import LadderStore, User
from cardarena.locm.cli.ladder import multipart
from cardarena.locm.referee import sandbox
from tests.ladder.test_uploads import make_tgz, make_zip, member

TIMEOUT_S = 60.0
"""Generous: the machine is busy; a correct server answers at once."""
HEAD_S = 1.0
"""The server's --header-timeout: a form's body must arrive within it, an upload's within 3x."""
MAX_CONNECTIONS = 16
SIMPLE_BOT = Path(__file__).resolve().parents[1] / "locm" / "bots" / "simple_bot.py"
ALICE_STDERR = "ALICE-STDERR-SECRET"
ALICE_BUILD_LOG = "ALICE-BUILD-LOG-SECRET"
CAROL_STDERR = "CAROL-STDERR-SECRET"

SPY = """
import os, sys
for path in {paths!r}:
    try:
        found = ("listed " + ",".join(os.listdir(path)) if os.path.isdir(path)
                 else "read %d bytes" % len(open(path, "rb").read()))
    except OSError as error:
        found = "denied " + type(error).__name__
    print("SPY", path, found, file=sys.stderr)
print({secret!r}, file=sys.stderr, flush=True)
sys.argv = ["simple", "play"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simple
simple.main()
"""
"""Alice's bot: says on stderr what it could read of the server's files, then plays."""


@dataclass
class Ladder:
    base: str
    port: int
    db: Path
    folder: Path
    tokens: dict[str, str]
    server: subprocess.Popen[str]
    stderr: Path

    def rows(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10) as connection:
            return connection.execute(query, args).fetchall()


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


def wait_for(condition: Callable[[], Any], what: str, timeout: float = TIMEOUT_S) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return value


def request(ladder: Ladder, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None, user: str | None = None) -> Answer:  # fmt: skip
    connection = http.client.HTTPConnection("127.0.0.1", ladder.port, timeout=TIMEOUT_S)
    try:
        headers = dict(headers or {})
        if user is not None:
            headers["Authorization"] = f"Bearer {ladder.tokens[user]}"
        connection.request(method, path, body=body, headers=headers)
        answer = connection.getresponse()
        return Answer(answer.status, answer.headers, answer.read().decode("utf-8", "replace"))
    finally:
        connection.close()


def upload(ladder: Ladder, user: str, name: str, filename: str, data: bytes,
           language: str = "python", new_bot: bool = True) -> Answer:  # fmt: skip
    fields = {"name": name, "language": language, "new_bot": "1" if new_bot else ""}
    body, kind = multipart(fields, "file", filename, data)
    return request(ladder, "POST", "/api/submissions", body, {"Content-Type": kind}, user)


def raw_exchange(ladder: Ladder, head: bytes, body: Iterator[bytes]) -> tuple[bytes, int, float]:
    """Send ``head`` then ``body`` (until the server stops reading); (the server's answer,
    the bytes of the body sent, the seconds it took)."""
    started = time.monotonic()
    sent = 0
    answer: list[bytes] = []
    answered = threading.Event()

    def read() -> None:  # at once: the answer may come (and the socket close) mid-body
        try:
            while chunk := raw.recv(65536):
                answer.append(chunk)
                if b"\r\n\r\n" in b"".join(answer):
                    answered.set()
        except OSError:
            pass
        answered.set()

    with socket.create_connection(("127.0.0.1", ladder.port), timeout=TIMEOUT_S) as raw:
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        raw.sendall(head)
        try:
            for chunk in body:
                if answered.is_set():
                    break
                raw.sendall(chunk)
                sent += len(chunk)
        except OSError:  # the server answered and closed: it read no more
            pass
        answered.wait(TIMEOUT_S)
        seconds = time.monotonic() - started
        raw.shutdown(socket.SHUT_RDWR)
        reader.join(TIMEOUT_S)
    return b"".join(answer), sent, seconds


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ladder]:
    """Four participants: org (organiser, builtin:greedy), bob (builtin:random), alice (a spy
    bot in its own folder) and carol (a bot that crashes at once)."""
    folder = tmp_path_factory.mktemp("hostile")
    folder.chmod(0o755)  # as root, bots run as a user of their own
    db = folder / "ladder.db"
    for name in ("spy", "crasher"):
        (folder / name).mkdir(mode=0o755)
    secrets_of_others = [str(db), f"{db}.builds", str(folder / "crasher" / "bot.py"),
                         str(folder), "/etc/shadow"]  # fmt: skip
    (folder / "spy" / "simple.py").write_bytes(SIMPLE_BOT.read_bytes())
    (folder / "spy" / "bot.py").write_text(SPY.format(paths=secrets_of_others, secret=ALICE_STDERR))
    (folder / "crasher" / "bot.py").write_text(
        f"import sys\nprint({CAROL_STDERR!r}, file=sys.stderr)\nsys.exit(1)\n"
    )
    for path in folder.rglob("*.py"):
        path.chmod(0o644)
    tokens: dict[str, str] = {}
    with LadderStore(str(db)) as store:
        store.configure(game="locm", version="1.5")
        for user in ("alice", "bob", "carol", "org"):
            tokens[user] = store.add_user(user, organiser=user == "org")
        bots = {
            "org": ("greedy", "builtin:greedy", "built"),
            "bob": ("rnd", "builtin:random", "built"),
            "alice": ("spy", f"python3 {folder}/spy/bot.py", ALICE_BUILD_LOG),
            "carol": ("crasher", f"python3 {folder}/crasher/bot.py", "built"),
        }
        for user, (name, command, log) in bots.items():
            owner = store.user_for_token(tokens[user])
            assert owner is not None
            version = store.submit(owner, name, "python", "bot.py", b"#\n", new_bot=True)
            store.record_build(version, True, log, command, None)
            store.set_status(version, "active")
    stderr = folder / "server.err"
    with stderr.open("w") as errors:
        server = subprocess.Popen(
            [sys.executable, "-m", "cardarena.locm", "ladder", "serve", "--db", str(db),
             "--version", "1.5", "--port", "0", "--workers", "2", "--header-timeout",
             str(HEAD_S), "--max-connections", str(MAX_CONNECTIONS)],
            stdout=subprocess.PIPE, stderr=errors, text=True,
        )  # fmt: skip
    try:
        assert server.stdout is not None
        base = server.stdout.readline().strip()
        assert base.startswith("http://127.0.0.1:"), (base, stderr.read_text())
        port = int(base.rstrip("/").rsplit(":", 1)[1])
        yield Ladder(base, port, db, folder, tokens, server, stderr)
    finally:
        server.terminate()
        server.wait(timeout=TIMEOUT_S)
    errors_text = stderr.read_text()
    assert "Traceback" not in errors_text, errors_text[-3000:]
    for token in tokens.values():  # no access log, no address, no message holds a token
        assert token not in errors_text


# ------------------------------------------------------------------ uploads


HOSTILE_UPLOADS = {
    "traversal": (lambda: make_zip({"../../evil.py": b"x"}), "bot.zip", "outside the upload"),
    "absolute": (lambda: make_tgz((member("/etc/cron.d/x"), b"x")), "bot.tgz", "absolute path"),
    "symlink": (
        lambda: make_tgz((member("bot.py", tarfile.SYMTYPE, linkname="/etc/passwd"), b"")),
        "bot.tar.gz",
        "symlink",
    ),
    "hard link": (
        lambda: make_tgz((member("bot.py", tarfile.LNKTYPE, linkname="/etc/shadow"), b"")),
        "bot.tgz",
        "hard link",
    ),
    "device": (lambda: make_tgz((member("sda", tarfile.BLKTYPE), b"")), "bot.tgz", "device"),
    "zip bomb": (lambda: make_zip({"bot.py": b"\0" * (30 << 20)}), "bot.zip", "limit"),
    "tar.gz bomb": (
        lambda: make_tgz(*((member(f"f{i}.py"), b"\0" * (9 << 20)) for i in range(3))),
        "bot.tgz",
        "more than",
    ),
    "control characters in the file's name": (lambda: b"print(1)\n", "bot\u202egnp.py", "control"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_UPLOADS))
def test_a_hostile_upload_is_refused_over_http_with_one_line(ladder: Ladder, case: str) -> None:
    make, filename, expected = HOSTILE_UPLOADS[case]
    data = make()
    assert len(data) < 1 << 20  # the bombs are small as sent
    name = f"hostile{sorted(HOSTILE_UPLOADS).index(case)}"
    answer = upload(ladder, "bob", name, filename, data)
    assert answer.status == 400, answer.text
    reason = answer.json()["error"]
    assert expected in reason and "\n" not in reason, reason
    assert ladder.rows("SELECT COUNT(*) FROM bots WHERE name = ?", name) == [(0,)]


def test_names_and_languages_that_do_not_belong_are_refused(ladder: Ladder) -> None:
    for name in ("<script>alert(1)</script>", "bob\u202egnp", "a\x1b[2Jb", "../x"):
        answer = upload(ladder, "bob", name, "bot.py", b"print(1)\n")
        assert answer.status == 400 and "bot name" in answer.json()["error"], answer.text
    answer = upload(ladder, "bob", "cobolbot", "bot.cob", b"DISPLAY 'HI'.\n", language="cobol")
    assert answer.status == 400 and "unknown language 'cobol'" in answer.json()["error"]
    # The command line shows the server's refusal with the name's characters escaped.
    shown = subprocess.run(
        [sys.executable, "-m", "cardarena.locm", "ladder", "submit", "--server", ladder.base,
         "--token", ladder.tokens["bob"], "--name", "evil\x1b]0;owned\x07\u202e", "--language",
         "python", "--new-bot", str(SIMPLE_BOT)],
        capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    assert shown.returncode == 1 and "refused (400)" in shown.stderr, shown.stderr
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u202e]", shown.stderr), repr(shown.stderr)


def test_oversize_bodies_are_refused_before_they_are_read(ladder: Ladder) -> None:
    pid = ladder.server.pid
    before = rss_kb(pid)
    head = (f"POST /api/submissions HTTP/1.1\r\nHost: 127.0.0.1:{ladder.port}\r\n"
            f"Authorization: Bearer {ladder.tokens['bob']}\r\n"
            "Content-Type: multipart/form-data; boundary=XyZ\r\n")  # fmt: skip
    # A declared length of 1 GB: refused on the head alone.
    answer, _sent, _seconds = raw_exchange(
        ladder, f"{head}Content-Length: 1000000000\r\n\r\n".encode(), iter(())
    )
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]

    # No length declared (chunked): 64 MB offered, refused once the cap is passed.
    def chunked(parts: Iterator[bytes]) -> Iterator[bytes]:
        for part in parts:
            yield b"%x\r\n%s\r\n" % (len(part), part)
        yield b"0\r\n\r\n"

    def big_file() -> Iterator[bytes]:
        yield b'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="bot.py"\r\n\r\n'
        for _ in range(1024):
            yield b"#" * 65536

    answer, _sent, _seconds = raw_exchange(
        ladder, f"{head}Transfer-Encoding: chunked\r\n\r\n".encode(), chunked(big_file())
    )
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]

    # Many small fields of one name (each under the field cap): refused at the part cap.
    def many_fields() -> Iterator[bytes]:
        for _ in range(5000):
            yield (
                b'--XyZ\r\nContent-Disposition: form-data; name="x"\r\n\r\n' + b"y" * 1000 + b"\r\n"
            )
        yield b"--XyZ--\r\n"

    answer, _sent, _seconds = raw_exchange(
        ladder, f"{head}Transfer-Encoding: chunked\r\n\r\n".encode(), chunked(many_fields())
    )
    assert answer.startswith(b"HTTP/1.1 400") and b"too many parts" in answer, answer[:300]

    # A part whose header line is 13 MB: a 400 with one line (it was a 500 and a traceback).
    def huge_part_header() -> Iterator[bytes]:
        yield b'--XyZ\r\nContent-Disposition: form-data; name="x"\r\nX-Pad: '
        for _ in range(200):
            yield b"a" * 65536
        yield b"\r\n\r\nv\r\n--XyZ--\r\n"

    answer, _sent, _seconds = raw_exchange(
        ladder, f"{head}Transfer-Encoding: chunked\r\n\r\n".encode(), chunked(huge_part_header())
    )
    assert answer.startswith(b"HTTP/1.1 400") and b"malformed" in answer, answer[:300]
    # Malformed requests: a 400 each, and one line on the server's terminal, not a traceback.
    many_headers = b"".join(b"X-H%d: %s\r\n" % (i, b"a" * 100) for i in range(500))
    for malformed in (b"GARBAGE\x1b[2J\r\n\r\n", b"GET / HTTP/1.1\r\n" + many_headers + b"\r\n"):
        answer, _sent, _seconds = raw_exchange(ladder, malformed, iter(()))
        assert answer.startswith((b"HTTP/1.0 400", b"HTTP/1.1 400")), answer[:300]
    assert rss_kb(pid) - before < 40_000  # nothing of the refused bodies was kept


def test_slow_bodies_are_cut_and_a_flood_of_connections_leaves_room(ladder: Ladder) -> None:
    """A body sent a byte at a time kept its connection (and its place under the cap) for
    ever: the guard never times a request being answered. Now 408 after the deadline."""
    results: dict[str, tuple[bytes, float]] = {}
    heads_sent = threading.Semaphore(0)

    def trickle(path: str, content_type: str, length: int, user: str | None) -> None:
        head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{ladder.port}\r\n"
                f"Content-Type: {content_type}\r\nContent-Length: {length}\r\n")  # fmt: skip
        if user:
            head += f"Authorization: Bearer {ladder.tokens[user]}\r\n"
        stop = threading.Event()

        def body() -> Iterator[bytes]:
            while not stop.wait(0.2):
                yield b"a"

        started = time.monotonic()

        def feed() -> None:
            try:
                for byte in body():
                    raw.sendall(byte)
            except OSError:  # closed by the server
                pass

        try:
            with socket.create_connection(("127.0.0.1", ladder.port), timeout=TIMEOUT_S) as raw:
                raw.sendall((head + "\r\n").encode())
                heads_sent.release()
                feeder = threading.Thread(target=feed, daemon=True)
                feeder.start()
                answer = raw.recv(4096)
                results[path] = (answer, time.monotonic() - started)
                stop.set()
                feeder.join(TIMEOUT_S)
        except OSError as error:  # said by the assertion below
            results[path] = (repr(error).encode(), time.monotonic() - started)
            heads_sent.release()

    form, upload_kind = "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"
    slow = [
        threading.Thread(target=trickle, args=("/login", form, 1000, None)),
        threading.Thread(target=trickle, args=("/api/submissions", upload_kind, 100_000, "bob")),
    ]
    for thread in slow:
        thread.start()
    for _thread in slow:  # their heads are in: the connections are not idle ones
        assert heads_sent.acquire(timeout=TIMEOUT_S)
    # Meanwhile: twice the cap of idle connections; a reader is still answered.
    idle = [
        socket.create_connection(("127.0.0.1", ladder.port)) for _ in range(2 * MAX_CONNECTIONS)
    ]
    try:
        assert request(ladder, "GET", "/api/leaderboard").status == 200
    finally:
        for connection in idle:
            connection.close()
    for thread in slow:
        thread.join(TIMEOUT_S)
    login, seconds = results["/login"]
    assert login.startswith(b"HTTP/1.1 408"), login[:200]
    assert seconds < HEAD_S + 10
    submission, seconds = results["/api/submissions"]
    assert submission.startswith(b"HTTP/1.1 408"), submission[:200]
    assert seconds < 3 * HEAD_S + 10


# ------------------------------------------------------------------ who sees what


def spy_games(ladder: Ladder) -> list[int]:
    rows = ladder.rows(
        "SELECT g.id FROM games g JOIN versions v ON v.id IN (g.first, g.second) JOIN bots b "
        "ON b.id = v.bot WHERE b.name = 'spy' AND g.state = 'done' AND g.rated = 1 "
        "AND g.error_kind IS NULL ORDER BY g.id"
    )
    return [int(r[0]) for r in rows]


def log_in(ladder: Ladder, user: str) -> str:
    """Log in through the form; the session cookie header."""
    page = request(ladder, "GET", "/me")
    login_cookie = page.headers["Set-Cookie"].split(";", 1)[0]
    csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    answer = request(ladder, "POST", "/login", f"csrf={csrf}&token={ladder.tokens[user]}".encode(),
                     {"Content-Type": "application/x-www-form-urlencoded",
                      "Cookie": login_cookie, "Origin": ladder.base.rstrip("/")})  # fmt: skip
    assert answer.status == 303, answer.text
    cookie = answer.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    return cookie.split(";", 1)[0]


def test_only_its_owner_sees_a_bots_stderr_and_build_log(ladder: Ladder) -> None:
    game = wait_for(lambda: spy_games(ladder), "a rated game of the spy")[0]
    alice = log_in(ladder, "alice")
    bob = log_in(ladder, "bob")
    for path in (f"/api/games/{game}", f"/games/{game}", "/api/bots/spy", "/bots/spy",
                 "/api/games?bot=spy", "/api/leaderboard", "/", "/users/alice"):  # fmt: skip
        for who in ({}, {"Cookie": bob}):
            shown = request(ladder, "GET", path, headers=who)
            assert shown.status == 200, (path, shown.text[:200])
            for secret in (ALICE_STDERR, ALICE_BUILD_LOG, *ladder.tokens.values()):
                assert secret not in shown.text, (path, who, secret)
        shown = request(ladder, "GET", path, user="bob")
        assert ALICE_STDERR not in shown.text and ALICE_BUILD_LOG not in shown.text
    assert ALICE_STDERR in request(ladder, "GET", f"/api/games/{game}", user="alice").text
    assert ALICE_STDERR in request(ladder, "GET", f"/games/{game}", headers={"Cookie": alice}).text
    assert ALICE_BUILD_LOG in request(ladder, "GET", "/bots/spy", headers={"Cookie": alice}).text
    for own in (request(ladder, "GET", "/me", headers={"Cookie": alice}),
                request(ladder, "GET", "/api/me", user="alice")):  # fmt: skip
        assert own.status == 200 and ladder.tokens["alice"] not in own.text


def test_a_bot_reads_neither_the_database_nor_other_bots_files(ladder: Ladder) -> None:
    if not sandbox.available():
        pytest.skip("no bubblewrap sandbox here: bots see every file")
    game = wait_for(lambda: spy_games(ladder), "a rated game of the spy")[0]
    log = request(ladder, "GET", f"/api/games/{game}", user="alice").text
    found = dict(re.findall(r"SPY (\S+) (\w+)", log.replace("\\n", "\n")))
    assert str(ladder.db) in found, log[:2000]
    assert found[str(ladder.db)] == "denied"
    assert found[f"{ladder.db}.builds"] == "denied"
    assert found[str(ladder.folder / "crasher" / "bot.py")] == "denied"
    assert found["/etc/shadow"] == "denied"
    text = log.replace("\\n", "\n")
    listed = re.search(rf"SPY {re.escape(str(ladder.folder))} listed (\S*)", text)
    assert listed is not None and listed.group(1).split(",") == ["spy"]  # its own folder only


def test_tokens_are_stored_hashed_and_sessions_end_at_logout(ladder: Ladder) -> None:
    wal = Path(f"{ladder.db}-wal")
    stored = ladder.db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    for token in ladder.tokens.values():
        assert token.encode() not in stored
    assert request(ladder, "GET", "/api/me", user="bob").json()["name"] == "bob"
    wrong = {"Authorization": "Bearer " + "x" * 43}
    assert request(ladder, "GET", "/api/me", headers=wrong).status == 401
    cookie = log_in(ladder, "bob")
    me = request(ladder, "GET", "/me", headers={"Cookie": cookie})
    csrf = me.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    form = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie}
    # Bob's own valid session, secret and origin still cannot retire Alice's bot.
    status = "SELECT v.status FROM versions v JOIN bots b ON b.id = v.bot WHERE b.name = 'spy'"
    before = ladder.rows(status)
    retire = request(ladder, "POST", "/bots/spy/retire", f"csrf={csrf}".encode(), form)
    assert retire.status == 403 and ladder.rows(status) == before != [("retired",)]
    # The stolen cookie used from another site's page, or without the page's secret: refused.
    elsewhere = request(ladder, "POST", "/logout", f"csrf={csrf}".encode(),
                        {**form, "Origin": "http://evil.example"})  # fmt: skip
    assert elsewhere.status == 403
    assert request(ladder, "POST", "/logout", b"csrf=wrong", form).status == 403
    assert request(ladder, "POST", "/logout", b"", form).status == 403
    assert request(ladder, "POST", "/logout", f"csrf={csrf}".encode(), form).status == 303
    after = request(ladder, "GET", "/me", headers={"Cookie": cookie})
    assert 'id="login"' in after.text  # the old cookie no longer opens the session


def test_every_form_post_needs_the_session_its_secret_and_this_origin(ladder: Ladder) -> None:
    cookie = log_in(ladder, "org")
    me = request(ladder, "GET", "/me", headers={"Cookie": cookie})
    csrf = me.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    kind = {"Content-Type": "application/x-www-form-urlencoded"}
    for path in ("/ladder/pause", "/ladder/freeze", "/bots/rnd/disable", "/bots/rnd/retire",
                 "/me/submit", "/login", "/logout"):  # fmt: skip
        for headers, body in (
            ({**kind, "Cookie": cookie, "Origin": "http://evil.example"}, f"csrf={csrf}"),
            ({**kind, "Cookie": cookie, "Sec-Fetch-Site": "cross-site"}, f"csrf={csrf}"),
            ({**kind, "Cookie": cookie}, "csrf=wrong"),
            ({**kind, "Cookie": cookie}, ""),
            ({**kind}, f"csrf={csrf}"),
        ):
            answer = request(ladder, "POST", path, body.encode(), headers)
            assert answer.status in (400, 401, 403), (path, headers, answer.status)
    assert request(ladder, "GET", "/api/leaderboard").json()["paused"] is False
    rows = ladder.rows("SELECT status FROM bots WHERE name = 'rnd'")
    assert rows == [("active",)]
    # DNS rebinding: a page of another name that resolves here reads nothing.
    rebound = request(ladder, "GET", "/api/leaderboard", headers={"Host": "evil.example"})
    assert rebound.status == 421


# ------------------------------------------------------------------ games and builds


def test_a_crashing_bot_is_disabled_and_its_errors_are_its_losses(ladder: Ladder) -> None:
    def disabled() -> Any:
        bot = request(ladder, "GET", "/api/bots/crasher").json()
        return bot if bot["status"] == "disabled" else None

    bot = wait_for(disabled, "the crashing bot disabled")
    assert "by its own errors" in bot["reason"] and CAROL_STDERR not in json.dumps(bot)
    rows = ladder.rows(
        "SELECT g.winner, g.error_seat, g.error_kind, g.first = v.id, g.rated FROM games g "
        "JOIN versions v ON v.id IN (g.first, g.second) JOIN bots b ON b.id = v.bot "
        "WHERE b.name = 'crasher' AND g.state = 'done' AND g.error_kind IS NOT NULL"
    )
    assert len(rows) >= 6
    for winner, error_seat, _kind, crasher_first, rated in rows:
        crasher_seat = 0 if crasher_first else 1
        assert error_seat == crasher_seat and winner == 1 - crasher_seat and rated == 1
    assert ladder.rows("SELECT COUNT(*) FROM games g JOIN versions v ON v.id IN (g.first, "
                       "g.second) JOIN bots b ON b.id = v.bot WHERE b.name = 'crasher' "
                       "AND g.state = 'queued'") == [(0,)]  # fmt: skip


def test_many_versions_at_once_cost_one_build_and_games_go_on(ladder: Ladder) -> None:
    source = SIMPLE_BOT.read_bytes()
    rated_before = ladder.rows("SELECT COUNT(*) FROM games WHERE rated = 1 AND state = 'done'")
    answers = [upload(ladder, "bob", "flood", "bot.py", source, new_bot=index == 0)
               for index in range(6)]  # fmt: skip
    assert [a.status for a in answers] == [201] * 6, [a.text for a in answers]
    last = answers[-1].json()["submission"]

    def settled() -> list[tuple[Any, ...]] | None:
        rows = ladder.rows("SELECT v.id, v.status, v.reason FROM versions v JOIN bots b ON "
                           "b.id = v.bot WHERE b.name = 'flood' ORDER BY v.id")  # fmt: skip
        return rows if rows[-1][1] not in ("building", "validating") else None

    rows = wait_for(settled, "the last version built and validated")
    assert rows[-1][:2] == (last, "active"), rows
    for _id, status, reason in rows[:-1]:
        assert status == "retired" and reason.startswith("replaced by version"), rows
    validations = ladder.rows("SELECT first, COUNT(*) FROM games WHERE kind = 'validation' AND "
                              "first IN (SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot "
                              "WHERE b.name = 'flood') GROUP BY first")  # fmt: skip
    # The last one is validated; at most the first besides (it may have been built already).
    assert validations[-1][0] == last and len(validations) <= 2, validations
    built = ladder.rows("SELECT COUNT(*) FROM versions v JOIN bots b ON b.id = v.bot WHERE "
                        "b.name = 'flood' AND v.build_log IS NOT NULL")  # fmt: skip
    assert built[0][0] <= 2, built
    rated_after = ladder.rows("SELECT COUNT(*) FROM games WHERE rated = 1 AND state = 'done'")
    assert rated_after[0][0] > rated_before[0][0]  # rated games went on meanwhile


def test_one_participant_logging_in_again_and_again_logs_nobody_else_out() -> None:
    sessions = Sessions(limit=100, per_user=4)
    alice, mallory = User(1, "alice", False), User(2, "mallory", False)
    kept, _csrf = sessions.open(alice)
    for _ in range(1000):
        sessions.open(mallory)
    session = sessions.get(kept)
    assert session is not None and session.user == alice
    assert len(sessions.known) == 5
