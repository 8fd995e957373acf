"""Load benchmark for the Shared Deck server, on 127.0.0.1 only; it stops by itself.

A ``shared-deck serve`` subprocess gets ``--bots`` logged-in bots (default 100) that send
commands as fast as they can, each waiting for an answer before its next command, for
``--turns`` turns. A separate observer process WAITs turn after turn and measures how far
each turn's start strays from the turn length (the tick jitter a bot sees).

Prints commands/s, p50/p99 command latency and p99 tick jitter; with ``--json`` one JSON
object with the keys commands_per_s, latency_p50_ms, latency_p99_ms, tick_jitter_p99_ms (and,
for context, the CPU shares of bots and server and the server's own tick lateness: on two
cores the observer's jitter also contains the OS's scheduling delays of the observer).

    python benchmarks/shared_deck_load.py [--bots 100] [--turns 10] [--watchers 20] [--json]
        [--attack none|wrong-secret|idle|prelogin|nonreader]

``--watchers N`` also starts the server's web dashboard (``--http-port 0``) and, in another
process, N browser-like clients that load the dashboard page and its files, then read the live
stream (``/events``) for the whole run; it adds watcher_events_per_s (per watcher) and
watcher_gap_p99_ms (the longest usual wait between two snapshots) to the report.

With ``--attack NAME`` a separate process attacks the same server from 127.0.0.2 (still
loopback) while the bots play, bounded in connections and in time (see ATTACKS), and a
``latecomer`` player logs in afresh every turn: its login times are reported too.

The bots are asyncio Protocols rather than the library's stream client, so that the load
generator spends as little of the shared CPU as possible; it frames answers with the same
protocol functions as the library.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import multiprocessing
import os
import re
import resource
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from cardarena.machine import machine, run_script
from cardarena.shared_deck.client import Client
from cardarena.shared_deck.protocol import counted_data_lines, fixed_data_lines
from cardarena.shared_deck.store import Store

HOST = "127.0.0.1"
PORT = [0]  # the server's port, once known


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class LoadBot:
    """Logs in, learns its matches, then keeps exactly one command in flight while running.

    Its commands cycle over its matches: turn info, hands, board, limits, then actions
    (draw, play what it drew, attack), so the server does real game work, not only reads.
    """

    def __init__(self, name: str, secret: str) -> None:
        self.name, self.secret = name, secret
        self.sock = socket.create_connection((HOST, PORT[0]))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.buffer = b""
        self.logged_in = False
        self.matches: list[int] = []
        self.pending: list[str] = []  # answer lines so far for the command in flight
        self.command = ""
        self.in_flight = False
        self.sent_at = 0.0
        self.latencies: list[float] = []
        self.running = False
        self.plan: Iterator[str] = iter(())
        self.drawn: list[str] = []  # the last card drawn, as its fields
        self.active: list[str] = []  # ids of own active creatures in the last board seen

    def readable(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError(f"{self.name}: the server closed the connection")
        *lines, self.buffer = (self.buffer + data).split(b"\n")
        for raw in lines:
            self._line(raw.decode())

    def _line(self, line: str) -> None:
        if not self.logged_in:
            if line == "LOGIN":
                self.sock.send(f"{self.name}\n".encode())
            elif line == "PASSWORD":
                self.sock.send(f"{self.secret}\n".encode())
            elif line == "OK":
                self.logged_in = True
            else:
                raise RuntimeError(f"{self.name}: login refused: {line}")
            return
        self.pending.append(line)
        if not self._answer_complete():
            return
        self.in_flight = False
        if self.running:
            self.latencies.append(time.perf_counter() - self.sent_at)
        answer, self.pending = self.pending, []
        self._learn(answer)
        if self.running:
            self.send(next(self.plan))

    def _answer_complete(self) -> bool:
        if self.pending[0] != "OK":
            return True
        count = fixed_data_lines(self.command)
        if count is not None:
            return len(self.pending) == 1 + count
        if len(self.pending) < 2:
            return False
        return len(self.pending) == 2 + counted_data_lines(self.command, self.pending[1])

    def _learn(self, answer: list[str]) -> None:
        if answer[0] != "OK":
            return
        if self.command == "GET_MY_MATCHES":
            self.matches = [int(word) for word in answer[2].split()]
        elif self.command == "DRAW_CARD":
            self.drawn = answer[1].split()
        elif self.command == "GET_BOARD":
            mine = int(answer[1].split()[0])
            self.active = [line.split()[0] for line in answer[2 : 2 + mine] if line[-1] == "1"]

    def _commands(self) -> Iterator[str]:
        while True:
            for match_id in self.matches:
                self.drawn, self.active = [], []
                yield f"GET_TURN_INFO {match_id}"
                yield f"GET_HANDS {match_id}"
                yield f"GET_BOARD {match_id}"
                yield f"GET_CARD_LIMITS {match_id}"
                yield f"DRAW_CARD {match_id}"
                if self.drawn:
                    card_id, card_type = self.drawn[0], self.drawn[1]
                    target = {"C": -1, "D": -6, "H": -5, "T": -5}.get(card_type)
                    if target is not None:
                        yield f"PLAY_CARD {match_id} {card_id} {target}"
                for creature in self.active[:2]:
                    yield f"ATTACK {match_id} {creature}"

    def send(self, command: str) -> None:
        self.command = command.split(" ", 1)[0]
        self.in_flight = True
        self.sent_at = time.perf_counter()
        data = (command + "\n").encode()
        if self.sock.send(data) != len(data):  # a short command always fits an idle socket
            raise RuntimeError("short send")

    def start(self) -> None:
        self.plan = self._commands()
        self.running = True
        if not self.in_flight:
            self.send(next(self.plan))


def observe(port: int, name: str, secret: str, turns: int, results: multiprocessing.Queue) -> None:
    """In its own process: WAIT for ``turns`` turns and report the gaps between turn starts."""
    with Client.connect(HOST, port, name, secret) as client:
        while not client.get_my_matches():  # the load starts with the tournament
            client.wait()
        starts = []
        for _ in range(turns + 1):
            client.wait()
            starts.append(time.perf_counter())
    results.put([later - earlier for earlier, later in itertools.pairwise(starts)])


def register(db: Path, names: list[str]) -> dict[str, str]:
    """Register players; scrypt runs in threads (it releases the GIL)."""
    with contextlib.closing(Store(db)):
        pass  # create the schema once before the threads race for it

    def add(name: str) -> tuple[str, str]:
        with contextlib.closing(Store(db)) as store:
            return name, store.add_player(name)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(pool.map(add, names))


def start_server(
    db: Path, args: argparse.Namespace, players: int, log: Path, extra: Sequence[str] = ()
) -> tuple[subprocess.Popen, int]:
    server = subprocess.Popen(
        [sys.executable, "-m", "cardarena.shared_deck.cli", "serve", "--host", HOST,
         "--port", "0", "--db", str(db), "--turn-seconds", str(args.turn_seconds),
         "--turns-per-match", str(args.turns_per_match), "--seed", "1",
         "--start-after-logins", str(players), *extra],
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
        start_new_session=True,  # Ctrl-C reaches the benchmark, which stops the server last
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    if not line.startswith("shared-deck listening on"):
        server.kill()
        raise RuntimeError(f"the server did not start: {line!r}")
    return server, int(line.rsplit(":", 1)[1])


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc (Linux); NaN elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_bots(
    secrets: dict[str, str],
    args: argparse.Namespace,
    server_pid: int,
    before_measuring: Callable[[], None] | None = None,
) -> dict:
    """Drive every bot from one selector loop: less overhead per answer than asyncio."""
    selector = selectors.DefaultSelector()
    bots = [LoadBot(name, secret) for name, secret in secrets.items()]
    for bot in bots:
        selector.register(bot.sock, selectors.EVENT_READ, bot)

    def pump(seconds: float) -> None:
        deadline = time.perf_counter() + seconds
        while (left := deadline - time.perf_counter()) > 0:
            for key, _ in selector.select(left):
                key.data.readable()

    while not all(bot.logged_in for bot in bots):
        pump(0.05)
    # The tournament starts at the first tick after every player has logged in.
    while not all(bot.matches for bot in bots):
        for bot in bots:
            if not bot.in_flight:
                bot.send("GET_MY_MATCHES")
        pump(args.turn_seconds / 5)
    if before_measuring is not None:
        before_measuring()
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    server_cpu_before = process_cpu_seconds(server_pid)
    started = time.perf_counter()
    for bot in bots:
        bot.start()
    pump(args.turns * args.turn_seconds)
    elapsed = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    server_cpu = process_cpu_seconds(server_pid) - server_cpu_before
    for bot in bots:
        bot.running = False
        bot.sock.close()
    latencies = [latency for bot in bots for latency in bot.latencies]
    client_cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (
        cpu_before.ru_utime + cpu_before.ru_stime
    )
    return {
        "commands": len(latencies),
        "seconds": elapsed,
        "commands_per_s": len(latencies) / elapsed,
        "latency_p50_ms": 1000 * percentile(latencies, 0.50),
        "latency_p99_ms": 1000 * percentile(latencies, 0.99),
        "bots_cpu_share": client_cpu / elapsed,
        "server_cpu_share": server_cpu / elapsed,
        "server_cpu_us_per_command": 1e6 * server_cpu / max(1, len(latencies)),
    }


# ------------------------------------------------------------------ adversarial load
ATTACK_SOURCE = "127.0.0.2"
"""The attackers' address: another loopback address, so the server can tell them apart."""
ATTACKS: dict[str, int] = {
    "none": 0,
    "wrong-secret": 200,  # connections at a time, each: a name, a wrong secret, close, again
    "idle": 2000,  # connections that never send a byte (reopened when the server closes one)
    "prelogin": 4,  # connections that send command lines before login as fast as they can
    "nonreader": 4,  # logged-in players that ask for answers and never read them
}
"""Each attack and its number of simultaneous connections (``--attack-connections``)."""
NONREADER_NAMES = [f"nonreader{i}" for i in range(ATTACKS["nonreader"])]
ATTACK_RATE = 200
"""New attacking connections per second after the first wave (``--attack-rate``): refused
connections come back at once, and on two shared cores an unpaced loop of reconnections
measures the attacker's CPU more than the server's defences."""


class Pace:
    """Spaces reconnections ``1 / rate`` seconds apart (the first wave is not paced)."""

    def __init__(self, rate: float) -> None:
        self.interval = 1 / rate if rate > 0 else 0.0
        self.next_slot = 0.0

    async def wait(self) -> None:
        now = asyncio.get_running_loop().time()
        self.next_slot = max(now, self.next_slot + self.interval)
        if self.next_slot > now:
            await asyncio.sleep(self.next_slot - now)


async def _attacker(kind: str, number: int, port: int, secrets: dict[str, str], counts: dict,
                    deadline: float, pace: Pace) -> None:  # fmt: skip
    """One attacking connection after another until the deadline; counts what happened."""
    loop = asyncio.get_running_loop()
    first = True
    while loop.time() < deadline:
        if not first:
            await pace.wait()
        first = False
        try:
            reader, writer = await asyncio.open_connection(
                HOST, port, local_addr=(ATTACK_SOURCE, 0), limit=4096
            )
        except OSError:
            counts["failed_connects"] += 1
            await asyncio.sleep(0.05)
            continue
        counts["connections"] += 1
        try:
            await asyncio.wait_for(
                _attack_once(kind, number, reader, writer, secrets, counts),
                max(0.01, deadline - loop.time()),
            )
        except (OSError, asyncio.IncompleteReadError) as error:
            counts["closed_by_server" if isinstance(error, ConnectionError) else "errors"] += 1
        except TimeoutError:
            pass
        finally:
            writer.transport.abort()


async def _attack_once(kind: str, number: int, reader: asyncio.StreamReader,
                       writer: asyncio.StreamWriter, secrets: dict[str, str],
                       counts: dict) -> None:  # fmt: skip
    if kind == "wrong-secret":
        # Half aim at a real player (one check per name at a time), half at unknown names.
        name = "bot000" if number % 2 else f"intruder{counts['connections']}"
        writer.write(f"{name}\nnot-the-secret\n".encode())
        answer = await reader.read()
        counts["checked" if b"ERR 940" in answer else "closed_unchecked"] += 1
    elif kind == "idle":
        await reader.read()  # until the server closes it (login timeout or connection cap)
        counts["closed_by_server"] += 1
    elif kind == "prelogin":
        closed = asyncio.ensure_future(reader.read())  # the server's answers, up to its close
        try:
            while not closed.done():
                writer.write(b"GET_MY_MATCHES\n" * 100)
                await writer.drain()
                await asyncio.sleep(0)
            counts["closed_by_server"] += 1
        finally:
            closed.cancel()
    elif kind == "nonreader":
        name = NONREADER_NAMES[number % len(NONREADER_NAMES)]
        writer.transport.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_RCVBUF, 4096
        )
        writer.write(f"{name}\n{secrets[name]}\n".encode())
        if await reader.readline() != b"LOGIN\n" or await reader.readline() != b"PASSWORD\n":
            return
        if await reader.readline() != b"OK\n":
            return
        while True:  # never reads its answers: the server must cut it off (drain then fails)
            writer.write(b"GET_MY_MATCHES\n" * 1000)
            await writer.drain()
            counts["lines_written"] += 1000  # written to the socket, not read by the server


def attack(kind: str, port: int, connections: int, rate: float, seconds: float,
           secrets: dict[str, str], ready: multiprocessing.Event, stop: multiprocessing.Event,
           report: multiprocessing.Queue) -> None:  # fmt: skip
    """In its own process: ``connections`` attackers until ``stop``, at most ``seconds``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, connections + 256)), hard))
    keys = "connections failed_connects checked closed_unchecked closed_by_server errors"
    keys += " lines_written"
    counts = dict.fromkeys(keys.split(), 0)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        pace = Pace(rate)
        tasks = [
            asyncio.ensure_future(_attacker(kind, n, port, secrets, counts, deadline, pace))
            for n in range(connections)
        ]
        # Ready once every attacker has had a first connection (or after 10 s at most).
        ramp_up = loop.time() + 10
        while counts["connections"] + counts["failed_connects"] < connections:
            if loop.time() > ramp_up:
                break
            await asyncio.sleep(0.05)
        ready.set()
        while not stop.is_set() and loop.time() < deadline:
            await asyncio.sleep(0.1)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(run())
    report.put({f"attack_{key}": value for key, value in counts.items() if value})


def latecomer(port: int, secret: str, logins: int, results: multiprocessing.Queue) -> None:
    """In its own process: an honest player logging in afresh once a turn, timed."""
    times = []
    for _ in range(logins):
        started = time.perf_counter()
        with Client.connect(HOST, port, "latecomer", secret, timeout=60) as client:
            times.append(time.perf_counter() - started)
            client.wait()
    results.put(times)


@contextlib.contextmanager
def attacking(args: argparse.Namespace, port: int, secrets: dict[str, str],
              report: dict) -> Iterator[Callable[[], None]]:  # fmt: skip
    """Yields the function that starts the attack (and the latecomer) just before the
    measurement; on exit, stops them and adds their figures to ``report``."""
    processes: list[multiprocessing.Process] = []
    stop = multiprocessing.Event()
    attack_results: multiprocessing.Queue = multiprocessing.Queue()
    login_results: multiprocessing.Queue = multiprocessing.Queue()
    seconds = (args.turns + 3) * args.turn_seconds

    def start() -> None:
        if args.attack != "none":
            ready = multiprocessing.Event()
            attacker_secrets = {n: secrets[n] for n in NONREADER_NAMES if n in secrets}
            process = multiprocessing.Process(
                target=attack,
                args=(args.attack, port, args.attack_connections, args.attack_rate, seconds + 30,
                      attacker_secrets, ready, stop, attack_results),
            )  # fmt: skip
            process.start()
            processes.append(process)
            ready.wait(60)
        process = multiprocessing.Process(
            target=latecomer, args=(port, secrets["latecomer"], args.turns, login_results)
        )
        process.start()
        processes.append(process)

    try:
        yield start
        stop.set()
        if processes:
            logins = login_results.get(timeout=seconds + 120)
            report["honest_login_p50_ms"] = 1000 * percentile(logins, 0.5)
            report["honest_login_max_ms"] = 1000 * max(logins)
        if args.attack != "none" and processes:
            report.update(attack_results.get(timeout=seconds + 120))
    finally:
        stop.set()
        for process in processes:
            process.join(seconds + 60)
            if process.is_alive():
                process.kill()


def print_attack(report: dict) -> None:
    if "honest_login_p50_ms" in report:
        print(
            f"honest login        p50 {report['honest_login_p50_ms']:.0f} ms, max "
            f"{report['honest_login_max_ms']:.0f} ms (a latecomer, once a turn)"
        )
    if report["attack"] != "none":
        counts = ", ".join(
            f"{key[len('attack_') :]} {value:,}"
            for key, value in report.items()
            if key.startswith("attack_")
        )
        print(f"attack {report['attack']:<12} {counts or 'nothing happened'}")


# ------------------------------------------------------------------ dashboard watchers
WATCHER_PAGES = ("/", "/static/dashboard.js", "/static/dashboard.css", "/api/leaderboard")


def dashboard_url(server: subprocess.Popen) -> str:
    """The address ``serve --http-port`` prints on the line after the game's."""
    assert server.stdout is not None
    line = server.stdout.readline()
    found = re.fullmatch(r"shared-deck dashboard on (http://\S+)\n", line)
    if found is None:
        raise RuntimeError(f"the server did not start its dashboard: {line!r}")
    return found[1]


def _http_get(host: str, port: int, path: str) -> None:
    """One plain GET, as a browser loading the page does (answers are read and dropped)."""
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        while sock.recv(65536):
            pass


def watch(
    address: str,
    count: int,
    stop: Any,
    results: multiprocessing.Queue,
    ready: Any,
) -> None:
    """In its own process: ``count`` watchers load the page, then read ``/events`` until
    ``stop`` is set; reports each watcher's snapshot arrival times and how long it watched."""
    host, port = address.removeprefix("http://").rstrip("/").rsplit(":", 1)
    for path in WATCHER_PAGES:
        _http_get(host, int(port), path)
    selector = selectors.DefaultSelector()
    arrivals: list[list[float]] = [[] for _ in range(count)]
    buffers = [bytearray() for _ in range(count)]
    for index in range(count):
        sock = socket.create_connection((host, int(port)), timeout=30)
        sock.sendall(f"GET /events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, index)
    ready.set()
    started = time.perf_counter()
    while not stop.is_set():
        for key, _ in selector.select(0.1):
            index = key.data
            data = key.fileobj.recv(1 << 20)  # type: ignore[union-attr]
            if not data:
                raise ConnectionError("the dashboard closed a live stream")
            buffer = buffers[index]
            buffer += data
            now = time.perf_counter()
            while (end := buffer.find(b"\n\n")) >= 0:  # one server-sent event per block
                if b"data: " in buffer[:end]:
                    arrivals[index].append(now)
                del buffer[: end + 2]
    results.put((arrivals, time.perf_counter() - started))


def watcher_report(arrivals: list[list[float]], seconds: float) -> dict:
    """Snapshots per second per watcher, and the gaps between snapshots a watcher saw."""
    gaps = [later - earlier for times in arrivals for earlier, later in itertools.pairwise(times)]
    counts = sorted(len(times) for times in arrivals)
    return {
        "watchers": len(arrivals),
        "watcher_events_per_s": counts[len(counts) // 2] / seconds if counts else 0.0,
        "watcher_events_min": counts[0] if counts else 0,
        "watcher_gap_p99_ms": 1000 * percentile(gaps, 0.99),
    }


Watchers = tuple[multiprocessing.Process, Any, multiprocessing.Queue]


def start_watchers(server: subprocess.Popen, count: int) -> Watchers | None:
    """Start the watcher process once the dashboard answers; None without ``--watchers``."""
    if not count:
        return None
    address = dashboard_url(server)
    stop, ready = multiprocessing.Event(), multiprocessing.Event()
    results: multiprocessing.Queue = multiprocessing.Queue()
    process = multiprocessing.Process(target=watch, args=(address, count, stop, results, ready))
    process.start()
    if not ready.wait(60):
        process.kill()
        raise RuntimeError("the watchers could not connect to the dashboard")
    return process, stop, results


def stop_watchers(watchers: Watchers) -> dict:
    process, stop, results = watchers
    stop.set()
    arrivals, seconds = results.get(timeout=60)
    process.join(10)
    return watcher_report(arrivals, seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--turns", type=int, default=10, help="turns of load to measure")
    parser.add_argument("--turn-seconds", type=float, default=1.0)
    parser.add_argument("--turns-per-match", type=int, default=60)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--attack",
        choices=sorted(ATTACKS),
        default="none",
        help="adversarial load from another process while the bots play",
    )
    parser.add_argument(
        "--attack-connections",
        type=int,
        help="the attack's simultaneous connections (default: per attack)",
    )
    parser.add_argument(
        "--attack-rate",
        type=float,
        default=ATTACK_RATE,
        help="new attacking connections per second after the first wave (0: unpaced)",
    )
    parser.add_argument(
        "--watchers", type=int, default=0, help="dashboard watchers reading the live stream"
    )
    args = parser.parse_args()
    if args.attack_connections is None:
        args.attack_connections = ATTACKS[args.attack]

    with tempfile.TemporaryDirectory(prefix="shared-deck-bench-") as directory:
        db = Path(directory) / "bench.db"
        names = [f"bot{i:03d}" for i in range(args.bots)] + ["observer"]
        extra_names = ["latecomer"] + (NONREADER_NAMES if args.attack == "nonreader" else [])
        secrets = register(db, names + extra_names)
        observer_secret = secrets.pop("observer")
        extra_secrets = {name: secrets.pop(name) for name in extra_names}
        extra_options = ["--http-port", "0"] if args.watchers else []
        server_log = Path(directory) / "server.log"
        server, port = start_server(db, args, len(names), server_log, extra_options)
        watchers = start_watchers(server, args.watchers)
        attack_report: dict = {}
        results: multiprocessing.Queue = multiprocessing.Queue()
        observer = multiprocessing.Process(
            target=observe, args=(port, "observer", observer_secret, args.turns, results)
        )
        try:
            observer.start()
            PORT[0] = port
            with attacking(args, port, extra_secrets, attack_report) as start_attack:
                report = run_bots(secrets, args, server.pid, start_attack)
                gaps = results.get(timeout=args.turns * args.turn_seconds + 60)
                observer.join(10)
            if watchers is not None:
                report.update(stop_watchers(watchers))
        finally:
            if observer.is_alive():
                observer.kill()
            if watchers is not None and watchers[0].is_alive():
                watchers[0].kill()
            server.send_signal(signal.SIGINT)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
        lateness = re.search(r"lateness p50 [\d.]+ ms, p99 ([\d.]+) ms", server_log.read_text())
    jitter = [abs(gap - args.turn_seconds) for gap in gaps]
    report["tick_jitter_p99_ms"] = 1000 * percentile(jitter, 0.99)
    # The server's own view: how late its tick callbacks ran (whole run, start-up included).
    report["server_tick_lateness_p99_ms"] = float(lateness[1]) if lateness else float("nan")
    report["bots"] = args.bots
    report["turn_seconds"] = args.turn_seconds
    report["attack"] = args.attack
    report.update(attack_report)
    report["machine"] = machine()
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{args.bots} bots, {report['commands']} commands in {report['seconds']:.1f} s")
        print(f"commands/s          {report['commands_per_s']:,.0f}")
        print(f"latency p50         {report['latency_p50_ms']:.2f} ms")
        print(f"latency p99         {report['latency_p99_ms']:.2f} ms")
        print(f"tick jitter p99     {report['tick_jitter_p99_ms']:.2f} ms (seen by a client)")
        print(f"tick lateness p99   {report['server_tick_lateness_p99_ms']:.2f} ms (in the server)")
        if args.watchers:
            print(
                f"dashboard watchers  {report['watchers']}: {report['watcher_events_per_s']:.2f}"
                f" snapshots/s each (fewest {report['watcher_events_min']}),"
                f" gap p99 {report['watcher_gap_p99_ms']:.0f} ms"
            )
        print(
            f"CPU: bots {report['bots_cpu_share']:.0%} of a core, server "
            f"{report['server_cpu_share']:.0%} ({report['server_cpu_us_per_command']:.0f} us"
            " per command)"
        )
        print_attack(report)
    return 0


if __name__ == "__main__":
    run_script(main, "benchmarks/shared_deck_load.py")
