"""``locm serve`` against crafted and idle clients: real processes, real sockets on loopback.

Every client binds a loopback address (127.0.0.1 for the honest one, 127.0.0.2 ... 127.0.0.17
for the others: Linux routes all of 127.0.0.0/8 locally). Waits are on conditions with
generous timeouts; nothing here measures speed (benchmarks/servers_under_flood.py does).
"""

from __future__ import annotations

import http.client
import os
import re
import resource
import select
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

LOCM = [sys.executable, "-m", "cardarena.locm"]
SOURCES = [f"127.0.0.{n}" for n in range(2, 18)]


def tournament(db: Path, seed: int) -> None:
    result = subprocess.run(
        [*LOCM, "tournament", "--bot", "builtin:random", "--bot", "builtin:greedy", "--games",
         "1", "--db", str(db), "--quiet", "--no-sandbox", "--workers", "1", "--seed", str(seed)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def databases(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two finished tournaments of two games each (different seeds)."""
    directory = tmp_path_factory.mktemp("serve")
    first, second = directory / "a.db", directory / "b.db"
    tournament(first, 1)
    tournament(second, 2)
    return first, second


class Served:
    """A ``locm serve`` process (descriptor limit ``nofile``) and its address."""

    def __init__(self, db: Path, *options: str, nofile: int | None = None) -> None:
        def limit() -> None:
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.process = subprocess.Popen(
            [*LOCM, "serve", "--db", str(db), "--port", "0", *options],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limit,
        )  # fmt: skip
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert " at http://" in line, self.process.stderr.read()  # type: ignore[union-attr]
        self.url = line.split(" at ", 1)[1].split()[0]
        self.port = int(self.url.rstrip("/").rsplit(":", 1)[1])
        self.stderr = ""

    def get(self, path: str, host: str | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(self.url + path)
        if host is not None:
            request.add_header("Host", host)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def connect(self, source: str) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(30)
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", self.port))
        return sock

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        _, self.stderr = self.process.communicate(timeout=60)
        assert "Traceback" not in self.stderr, self.stderr
        return self.stderr


@pytest.fixture
def serve() -> Iterator[type[Served]]:
    started: list[Served] = []

    class Tracked(Served):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            started.append(self)

    yield Tracked
    for server in started:
        if server.process.poll() is None:
            server.process.kill()
            server.process.communicate()


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed this connection (waits up to the socket's timeout)."""
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except OSError:
        return True
    return True


def test_idle_connections_from_16_addresses_do_not_starve_requests(
    databases: tuple[Path, Path], serve: type[Served]
) -> None:
    """With 64 descriptors, 160 idle connections (10 from each of 16 addresses, more than
    the descriptors) leave every request of an honest client answered: at the cap the
    oldest idle connection is closed, never the process out of descriptors."""
    server = serve(databases[0], "--idle-timeout", "120", nofile=64)
    idle = [server.connect(source) for source in SOURCES for _ in range(10)]
    for _ in range(20):
        status, body = server.get("status.json")
        assert status == 200 and b'"stored": 2' in body
        status, body = server.get("games/1.html")
        assert status == 200 and b"game-data" in body
    idle[0].settimeout(30)
    assert closed_by_server(idle[0])  # the oldest ones made room
    for sock in idle:
        sock.close()
    stderr = server.stop()
    assert "out of system resource" not in stderr and "Too many open files" not in stderr


def test_idle_keepalive_and_slow_headers_are_closed(
    databases: tuple[Path, Path], serve: type[Served]
) -> None:
    server = serve(databases[0], "--idle-timeout", "0.5", "--header-timeout", "1")
    silent = server.connect("127.0.0.2")
    assert closed_by_server(silent)
    kept = server.connect("127.0.0.3")  # one whole request, then nothing: keep-alive ends
    kept.sendall(f"GET /status.json HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
    assert kept.recv(4096).startswith(b"HTTP/1.1 200")
    assert closed_by_server(kept)
    slow = server.connect("127.0.0.4")  # a byte every 0.1 s, never the end of the head
    head = f"GET /status.json HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n" + "X: y\r\n" * 100
    closed_after = None
    for sent, byte in enumerate(head.encode()):  # bounded: at most the head, about 70 s
        try:
            slow.send(bytes([byte]))
            if select.select([slow], [], [], 0.1)[0] and slow.recv(4096) == b"":
                closed_after = sent
        except OSError:  # reset by the server
            closed_after = sent
        if closed_after is not None:
            break
    assert closed_after is not None  # closed before the head could end, though bytes kept coming
    for sock in (silent, kept, slow):
        sock.close()
    server.stop()


@pytest.mark.parametrize(
    "number", ["9" * 5000, "99999999999999999999", "-1", "1e3", "0x10", "1.5", "", "1%00"]
)
def test_game_numbers_out_of_range_or_malformed_are_404(
    databases: tuple[Path, Path], serve: type[Served], number: str
) -> None:
    server = serve(databases[0])
    status, _ = server.get(f"games/{number}.html")
    assert status == 404
    assert server.get("status.json")[0] == 200  # the server is still there
    server.stop()


def test_the_host_header_is_checked(databases: tuple[Path, Path], serve: type[Served]) -> None:
    server = serve(databases[0])
    port = server.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}"):
        assert server.get("status.json", host)[0] == 200, host
    for host in (f"evil.example:{port}", "attacker.test", f"127.0.0.2:{port}", "localhost.evil"):
        status, body = server.get("status.json", host)
        assert status == 421 and b"--allow-host" in body, host
    no_host = server.connect("127.0.0.1")  # HTTP/1.0 without a Host header
    no_host.sendall(b"GET /status.json HTTP/1.0\r\n\r\n")
    assert no_host.recv(4096).split(b"\r\n", 1)[0].endswith(b" 421 Misdirected Request")
    no_host.close()
    server.stop()
    allowing = serve(databases[0], "--allow-host", "evil.example")
    assert allowing.get("status.json", "evil.example")[0] == 200
    assert allowing.get("status.json", "other.example")[0] == 421
    allowing.stop()


def test_a_leftover_wal_is_read_and_left_byte_for_byte(
    databases: tuple[Path, Path], serve: type[Served], tmp_path: Path
) -> None:
    """A tournament killed before its WAL was checkpointed: serve shows the game that is only
    in the WAL, and the database and WAL are byte-identical afterwards."""
    db = tmp_path / "left.db"
    shutil.copy(databases[0], db)
    pid = os.fork()
    if pid == 0:  # a writer that dies without closing (no checkpoint, no cleanup)
        try:
            writer = sqlite3.connect(db, isolation_level=None)
            writer.execute("PRAGMA journal_mode=WAL")
            writer.execute("PRAGMA wal_autocheckpoint=0")
            columns = [row[1] for row in writer.execute("PRAGMA table_info(games)")]
            chosen = ", ".join("key || '-again'" if c == "key" else c for c in columns)
            writer.execute(f"INSERT INTO games ({', '.join(columns)}) "
                           f"SELECT {chosen} FROM games WHERE rowid = 1")  # fmt: skip
        finally:
            os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
    wal = Path(f"{db}-wal")
    assert wal.exists() and wal.stat().st_size > 0
    before = db.read_bytes(), wal.read_bytes()
    server = serve(db)
    status, body = server.get("status.json")
    assert status == 200 and b'"stored": 3' in body  # the game in the WAL is seen
    assert server.get("games/3.html")[0] == 200
    assert server.get("")[0] == 200
    server.stop()
    assert (db.read_bytes(), wal.read_bytes()) == before


def test_a_clean_database_gets_no_new_files(
    databases: tuple[Path, Path], serve: type[Served], tmp_path: Path
) -> None:
    db = tmp_path / "clean.db"
    shutil.copy(databases[0], db)
    before = sorted(os.listdir(tmp_path)), db.read_bytes()
    server = serve(db)
    assert server.get("games/1.html")[0] == 200
    status, index = server.get("")
    assert status == 200 and b'<a class="cause" href="games/1/end">' in index
    # A game's cause links to its page at the frame it ended on, through a redirect.
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    connection.request("GET", "/games/1/end")
    answer = connection.getresponse()
    assert answer.status == 302
    assert re.fullmatch(r"\.\./1\.html#frame=[1-9]\d*", answer.getheader("Location") or "")
    connection.close()
    assert server.get("games/999/end")[0] == 404
    server.stop()
    assert (sorted(os.listdir(tmp_path)), db.read_bytes()) == before


def test_pages_follow_a_replaced_or_updated_database(
    databases: tuple[Path, Path], serve: type[Served], tmp_path: Path
) -> None:
    first, second = databases
    db = tmp_path / "live.db"
    shutil.copy(first, db)
    server = serve(db)
    status, page_a = server.get("games/1.html")
    assert status == 200
    assert server.get("games/1.html")[1] == page_a  # cached, unchanged
    replacement = tmp_path / "replacement.db"
    shutil.copy(second, replacement)
    os.replace(replacement, db)  # another tournament under the same name
    status, page_b = server.get("games/1.html")
    assert status == 200 and page_b != page_a
    # Updated in place: game 1 gets the first tournament's log back.
    with sqlite3.connect(db, isolation_level=None) as writer:
        (log,) = sqlite3.connect(first).execute("SELECT log FROM games WHERE rowid = 1").fetchone()
        writer.execute("UPDATE games SET log = ? WHERE rowid = 1", (log,))
    writer.close()
    assert server.get("games/1.html")[1] == page_a
    server.stop()


def test_the_docs_state_the_limits_of_the_code() -> None:
    from cardarena.httpguard import MIN_CONNECTIONS, HttpLimits
    from cardarena.locm.viewer.serve import descriptor_reserve

    text = (Path(__file__).resolve().parents[2] / "docs" / "viewer.md").read_text()
    reserve = descriptor_reserve()
    assert f"keeps {reserve} descriptors" in text
    assert f"with `ulimit -n 64` it serves {64 - reserve} connections" in text
    assert f"a limit below {reserve + MIN_CONNECTIONS} is refused" in text
    limits = HttpLimits()
    assert f"| `--max-connections` | {limits.max_connections}, fewer" in text
    assert f"| `--idle-timeout` | {limits.idle_seconds:.0f} s |" in text
    assert f"| `--header-timeout` | {limits.head_seconds:.0f} s |" in text
