"""Logins and page loads while idle connections and wrong-secret floods run (loopback only).

    python benchmarks/servers_under_flood.py shared-deck   # the game server and its dashboard
    python benchmarks/servers_under_flood.py locm          # locm serve

``shared-deck``: a real ``shared-deck serve --http-port 0`` with its descriptor limit lowered
(``--nofile``, default 1024); 16 source addresses (127.0.0.2 ... 127.0.0.17) hammer the
player's name with wrong secrets and keep idle connections open to the dashboard, 16 others
(127.0.1.2 ... 127.0.1.17) keep idle connections open to the game port (all reopened as soon as
the server closes them); meanwhile the player logs in from
127.0.0.1 ``--tries`` times (a fresh connection each time) and the dashboard's
``/api/live`` is fetched as often. ``locm``: a real ``locm serve`` (``--nofile`` 64) with idle
connections and clients that trickle their headers from the 16 addresses, and the report's
``status.json`` and a game page fetched ``--tries`` times. Every try has a 2 s bar; the
script prints how many made it and the median, 95th percentile and worst time.

Linux routes all of 127.0.0.0/8 to the loopback interface, so nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from cardarena.machine import describe, machine, run_script

BAR_SECONDS = 2.0
SOURCES = [f"127.0.0.{n}" for n in range(2, 18)]
IDLE_SOURCES = [f"127.0.1.{n}" for n in range(2, 18)]
"""Idle connections to the game port come from 16 other addresses: from the same ones, at the
cap they would close those addresses' own logins waiting for their check (the oldest
not-logged-in connection of the address with the most goes), and few wrong secrets would be
checked at all."""
BIN = Path(sys.executable).parent


def connect(source: str, port: int, timeout: float = 5.0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


class Flood:
    """Threads that attack until stopped (and at most ``seconds``)."""

    def __init__(self, seconds: float) -> None:
        self.stop = threading.Event()
        self.deadline = time.monotonic() + seconds
        self.threads: list[threading.Thread] = []
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def running(self) -> bool:
        return not self.stop.is_set() and time.monotonic() < self.deadline

    def count(self, what: str) -> None:
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1

    def start(self, target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self.threads.append(thread)

    def idle(self, source: str, port: int, keep: int, request: bytes = b"") -> None:
        """Keep ``keep`` connections open from ``source``, reopening those the server closes;
        ``request`` (a partial HTTP head) is sent one byte per second."""
        with selectors.DefaultSelector() as selector:
            open_count = 0
            sent: dict[socket.socket, int] = {}
            while self.running():
                while open_count < keep and self.running():
                    try:
                        sock = connect(source, port)
                    except OSError:
                        self.count("idle connect failed")
                        break
                    selector.register(sock, selectors.EVENT_READ)
                    sent[sock] = 0
                    open_count += 1
                    self.count("idle opened")
                for key, _ in selector.select(0.2 if not request else 1.0):
                    sock = key.fileobj  # type: ignore[assignment]
                    try:
                        data = sock.recv(4096)  # type: ignore[attr-defined]
                    except OSError:
                        data = b""
                    if not data:
                        selector.unregister(sock)
                        sent.pop(sock, None)  # type: ignore[call-overload]
                        sock.close()  # type: ignore[attr-defined]
                        open_count -= 1
                        self.count("idle closed by the server")
                if request:
                    for sock, done in list(sent.items()):
                        if done < len(request) - 2:  # never the end of the head
                            with contextlib.suppress(OSError):
                                sock.send(request[done : done + 1])
                                sent[sock] = done + 1
            for key in list(selector.get_map().values()):
                key.fileobj.close()  # type: ignore[union-attr]

    def wrong_secrets(self, source: str, port: int, name: str) -> None:
        """Log in as ``name`` with a wrong secret, again and again."""
        while self.running():
            try:
                with connect(source, port) as sock:
                    sock.sendall(f"{name}\nnot-the-secret\n".encode())
                    data = b""
                    while chunk := sock.recv(4096):
                        data += chunk
                answered = b"ERR 940" in data
                self.count("wrong secret answered" if answered else "wrong secret refused")
            except OSError:
                self.count("wrong secret connection failed")
                time.sleep(0.05)

    def end(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(30)


def login_once(
    port: int, name: str, secret: str, source: str = "127.0.0.1", bar: float = BAR_SECONDS
) -> float | None:
    """Seconds to log in (LOGIN, name, PASSWORD, secret, OK), or None past the bar."""
    started = time.monotonic()
    try:
        with connect(source, port, timeout=bar) as sock:
            reader = sock.makefile("rb")
            if reader.readline() != b"LOGIN\n":
                return None
            sock.sendall(f"{name}\n".encode())
            if reader.readline() != b"PASSWORD\n":
                return None
            sock.sendall(f"{secret}\n".encode())
            if reader.readline() != b"OK\n":
                return None
    except OSError:
        return None
    took = time.monotonic() - started
    return took if took <= bar else None


def fetch_once(url: str) -> float | None:
    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=BAR_SECONDS) as answer:
            answer.read()
    except (OSError, urllib.error.URLError):
        return None
    took = time.monotonic() - started
    return took if took <= BAR_SECONDS else None


def report(what: str, times: list[float | None]) -> None:
    made = sorted(t for t in times if t is not None)
    line = f"{what}: {len(made)} of {len(times)} within {BAR_SECONDS:.0f} s"
    if made:
        p95 = made[min(len(made) - 1, int(0.95 * len(times)))] if len(made) == len(times) else None
        line += f"; median {1000 * statistics.median(made):.0f} ms, worst {1000 * made[-1]:.0f} ms"
        if p95 is not None:
            line += f", p95 {1000 * p95:.0f} ms"
    print(line, flush=True)


def start(command: list[str], nofile: int, cwd: str) -> tuple[subprocess.Popen[str], list[str]]:
    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    # Its own session: Ctrl-C reaches this script alone, which stops the server (finally).
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=low_limit, cwd=cwd, start_new_session=True)  # fmt: skip
    assert process.stdout is not None
    lines = [process.stdout.readline() for _ in range(2 if "--http-port" in command else 1)]
    if not all(lines):
        raise SystemExit(f"the server did not start: {process.stderr.read()}")  # type: ignore[union-attr]
    return process, lines


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        _, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    tail = [line for line in stderr.splitlines() if "Traceback" in line or "Error" in line]
    print(f"server exit status {process.returncode}; error lines in its log: {len(tail)}")


def shared_deck(args: argparse.Namespace, directory: str) -> None:
    db = os.path.join(directory, "flood.db")
    added = subprocess.run([str(BIN / "shared-deck"), "add-player", "--db", db, "alice"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    secret = added.stdout.split()[-1]
    added = subprocess.run([str(BIN / "shared-deck"), "add-player", "--db", db, "bob"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    bob_secret = added.stdout.split()[-1]
    command = [str(BIN / "shared-deck"), "serve", "--db", db, "--port", "0", "--http-port", "0",
               "--turn-seconds", "0.5"]  # fmt: skip
    process, lines = start(command, args.nofile, directory)
    port = int(lines[0].rsplit(":", 1)[1])
    dashboard = lines[1].split(" on ", 1)[1].strip()
    http_port = int(dashboard.rstrip("/").rsplit(":", 1)[1])
    if login_once(port, "alice", secret, bar=60.0) is None:
        raise SystemExit("alice could not log in before the floods")
    flood = Flood(args.seconds)
    try:
        for source, idle_source in zip(SOURCES, IDLE_SOURCES, strict=True):
            flood.start(flood.idle, idle_source, port, args.idle)
            flood.start(flood.idle, source, http_port, args.idle)
            flood.start(flood.wrong_secrets, source, port, "alice")
        time.sleep(1.0)  # let the floods fill the caps before the first try
        logins, pages = [], []
        for _ in range(args.tries):
            logins.append(login_once(port, "alice", secret))
            pages.append(fetch_once(dashboard + "api/live"))
        first_login = login_once(port, "bob", bob_secret, "127.0.0.100", bar=120.0)
    finally:
        flood.end()
        stop(process)
    print(
        f"descriptor limit {args.nofile}; {len(SOURCES)} sources with wrong secrets for alice"
        f" without pause and {args.idle} idle connections each to the dashboard,"
        f" {len(IDLE_SOURCES)} with {args.idle} idle connections each to the game port"
    )
    print("attack:", ", ".join(f"{k} {v}" for k, v in sorted(flood.counts.items())))
    report("player logins", logins)
    report("dashboard /api/live", pages)
    shown = "over 120 s" if first_login is None else f"{first_login:.1f} s"
    print(f"a first login from a new address during the floods: {shown}")


def locm(args: argparse.Namespace, directory: str) -> None:
    db = os.path.join(directory, "t.db")
    subprocess.run([str(BIN / "locm"), "tournament", "--bot", "builtin:random", "--bot",
                    "builtin:greedy", "--games", "1", "--db", db, "--quiet", "--no-sandbox",
                    "--workers", "1"], check=True, capture_output=True)  # fmt: skip
    command = [str(BIN / "locm"), "serve", "--db", db, "--port", "0"]
    process, lines = start(command, args.nofile, directory)
    url = lines[0].split(" at ", 1)[1].split()[0]
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    head = f"GET /status.json HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: 1\r\n\r\n".encode()
    flood = Flood(args.seconds)
    try:
        for source in SOURCES:
            flood.start(flood.idle, source, port, args.idle)
            flood.start(flood.idle, source, port, 2, head)
        time.sleep(1.0)
        status, games = [], []
        for _ in range(args.tries):
            status.append(fetch_once(url + "status.json"))
            games.append(fetch_once(url + "games/1.html"))
    finally:
        flood.end()
        stop(process)
    print(
        f"descriptor limit {args.nofile}; {len(SOURCES)} sources, each {args.idle} idle "
        "connections and 2 trickling their headers"
    )
    print("attack:", ", ".join(f"{k} {v}" for k, v in sorted(flood.counts.items())))
    report("status.json", status)
    report("games/1.html", games)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("server", choices=("shared-deck", "locm"))
    parser.add_argument("--tries", type=int, default=40)
    parser.add_argument("--idle", type=int, default=None, help="idle connections per source")
    parser.add_argument("--nofile", type=int, default=None, help="the server's descriptor limit")
    parser.add_argument("--seconds", type=float, default=300.0, help="the floods stop by then")
    args = parser.parse_args()
    if args.idle is None:
        args.idle = 40 if args.server == "shared-deck" else 8
    if args.nofile is None:
        args.nofile = 1024 if args.server == "shared-deck" else 64
    print(f"{describe(machine())}; {shutil.which('python3')}")
    directory = tempfile.mkdtemp(prefix="flood-")
    try:
        (shared_deck if args.server == "shared-deck" else locm)(args, directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    run_script(main, "benchmarks/servers_under_flood.py")
