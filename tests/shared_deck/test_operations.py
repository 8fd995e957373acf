"""Running a server as an operator does: real ``shared-deck`` processes on loopback, a real
database, a real full file system. One server per database, writes that fail, validated
options, the commands around the server (results, match logs, secrets, removal)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardarena.shared_deck.store import Store

from .conftest import RawConnection

CLI = [sys.executable, "-m", "cardarena.shared_deck.cli"]
TIMEOUT = 60.0


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, check=False)


def add_players(db: Path, *names: str) -> dict[str, str]:
    secrets = {}
    for name in names:
        added = run_cli("add-player", name, "--db", str(db))
        assert added.returncode == 0, added.stderr
        secrets[name] = added.stdout.strip()
    return secrets


class Serve:
    """``shared-deck serve`` in a subprocess; its log in a file."""

    def __init__(self, db: Path, log: Path, *options: str) -> None:
        self.log = log
        self.process = subprocess.Popen(
            [*CLI, "serve", "--port", "0", "--db", str(db), "--turn-seconds", "0.05",
             "--turns-per-match", "3", "--seed", "7", *options],
            stdout=subprocess.PIPE,
            stderr=log.open("a"),
            text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("shared-deck listening on 127.0.0.1:"), log.read_text()
        self.port = int(line.rsplit(":", 1)[1])

    def player(self, name: str, secret: str) -> RawConnection:
        connection = RawConnection("127.0.0.1", self.port)
        connection.login(name, secret)
        return connection

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        return self.process.wait(30)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)


def wait_until(condition: object, what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def finished(db: Path) -> list[int]:
    with contextlib.closing(Store(db, read_only=True)) as store:
        return store.finished_tournaments()


def turn(*players: RawConnection) -> None:
    """One global turn: WAIT on every connection until its second OK."""
    for player in players:
        player.send("WAIT\n")
    for player in players:
        assert [player.line(), player.line()] == ["OK", "OK"]


def my_matches(player: RawConnection) -> list[int]:
    ok, count, ids = player.ask("GET_MY_MATCHES", 3)
    assert ok == "OK" and int(count) == len(ids.split())
    return [int(word) for word in ids.split()]


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs that tests can fill; skipped where mounting is not allowed."""
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(directory: Path) -> Path:
    """Write a file until the file system is full; returns it (delete it to free space)."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return filler


# --------------------------------------------------------------- one server per database
def test_a_second_server_on_the_same_database_is_refused_and_changes_nothing(
    tmp_path: Path,
) -> None:
    db, log = tmp_path / "league.db", tmp_path / "first.log"
    secrets = add_players(db, "alice", "bob")
    first = Serve(db, log, "--turn-seconds", "0.2")
    try:
        alice, bob = first.player("alice", secrets["alice"]), first.player("bob", secrets["bob"])
        while not finished(db):
            turn(alice, bob)
        running: list[tuple[int, str]] = []

        def tournament_running() -> bool:
            with contextlib.closing(Store(db, read_only=True)) as store:
                running[:] = store.connection.execute(
                    "SELECT number, started_at FROM tournaments WHERE status = 'running'"
                ).fetchall()
            return bool(running)

        wait_until(tournament_running, "the running tournament's row")
        second = subprocess.run(
            [*CLI, "serve", "--port", "0", "--db", str(db)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert second.returncode == 1 and second.stdout == ""
        assert second.stderr.strip().splitlines() == [
            f"shared-deck serve: database {db} is already served by another shared-deck serve"
            f" (process {first.process.pid}); lock file {db}.lock"
        ]
        # The refused server leaves the first one's lock file as it was.
        assert Path(f"{db}.lock").read_text() == f"{first.process.pid}\n"
        with contextlib.closing(Store(db, read_only=True)) as store:
            still = store.connection.execute(
                "SELECT number, started_at FROM tournaments WHERE number = ?", (running[0][0],)
            ).fetchall()
        assert still == running  # the running tournament was not discarded by the second
        count = len(finished(db))
        while len(finished(db)) < count + 2:  # and the first goes on storing tournaments
            turn(alice, bob)
    finally:
        assert first.stop() == 0
    assert finished(db) == list(range(1, len(finished(db)) + 1))
    assert "discarded" not in log.read_text()
    assert not Path(f"{db}.lock").exists()  # a server removes its lock file as it stops
    # Once the first has stopped, its lock is free again.
    again = Serve(db, tmp_path / "again.log")
    assert Path(f"{db}.lock").read_text() == f"{again.process.pid}\n"
    assert again.stop() == 0
    assert not Path(f"{db}.lock").exists()


def test_a_port_in_use_fails_before_any_file_is_made(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        db = tmp_path / "new.db"
        result = run_cli("serve", "--create", "--db", str(db), "--port", str(port))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"shared-deck serve: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]
    assert list(tmp_path.iterdir()) == []


def test_a_bot_that_cannot_reach_its_server_says_where_and_why() -> None:
    with socket.socket() as closed:  # a port nobody listens on: bound, never listening
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        result = run_cli("bot", "--name", "alice", "--secret", "s", "--host", "127.0.0.1",
                         "--port", str(port), "--reconnect-attempts", "0")  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"shared-deck bot: cannot connect to 127.0.0.1:{port}: Connection refused"
    ]


def test_database_and_its_side_files_are_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "private.db"
    secrets = add_players(db, "alice", "bob")
    server = Serve(db, tmp_path / "server.log")
    try:
        server.player("alice", secrets["alice"]).close()
        files = {path.name: stat.S_IMODE(path.stat().st_mode) for path in tmp_path.iterdir()}
    finally:
        assert server.stop() == 0
    for name in ("private.db", "private.db-wal", "private.db-shm", "private.db.lock"):
        assert files[name] == 0o600, (name, oct(files[name]))


# ------------------------------------------------------------------------- failing writes
def start_on_small_fs(
    small_fs: Path, tmp_path: Path, *options: str
) -> tuple[Path, dict[str, str], Serve, RawConnection, RawConnection]:
    """A server whose database is on the small file system, after its first tournament."""
    db = small_fs / "league.db"
    secrets = add_players(db, "alice", "bob")
    server = Serve(db, tmp_path / "server.log", *options)
    alice, bob = server.player("alice", secrets["alice"]), server.player("bob", secrets["bob"])
    while not finished(db):
        turn(alice, bob)
    return db, secrets, server, alice, bob


def test_a_full_disk_holds_the_next_tournament_until_the_write_succeeds(
    small_fs: Path, tmp_path: Path
) -> None:
    db, _, server, alice, bob = start_on_small_fs(small_fs, tmp_path, "--write-attempts", "12")
    try:
        filler = fill(small_fs)
        stored = len(finished(db))
        seen: set[int] = set()
        # Play until a write has failed; meanwhile no tournament starts after the one whose
        # write fails: at most one more tournament (2 matches) appears.
        while "database write" not in server.log.read_text():
            turn(alice, bob)
            seen.update(my_matches(alice))
        assert max(seen, default=0) <= 2 * (stored + 1)
        assert finished(db) == list(range(1, stored + 1))
        filler.unlink()  # space again: the retry stores it and tournaments go on
        while len(finished(db)) < stored + 2:
            turn(alice, bob)
        assert server.process.poll() is None
    finally:
        assert server.stop() == 0
    tournaments = finished(db)
    assert tournaments == list(range(1, len(tournaments) + 1))
    with contextlib.closing(Store(db, read_only=True)) as store:
        for number in tournaments:
            assert len(store.tournament(number).matches) == 2


def test_a_disk_that_stays_full_stops_the_server_loudly_and_keeps_what_was_stored(
    small_fs: Path, tmp_path: Path
) -> None:
    db, secrets, server, alice, bob = start_on_small_fs(small_fs, tmp_path, "--write-attempts", "3")
    try:
        stored = len(finished(db))
        with contextlib.closing(Store(db, read_only=True)) as store:
            before = [store.tournament(number) for number in range(1, stored + 1)]
        filler = fill(small_fs)
        seen: set[int] = set()
        with contextlib.suppress(AssertionError, OSError):  # until the server closes them
            while True:
                turn(alice, bob)
                seen.update(my_matches(alice))
        assert server.process.wait(30) == 1
    finally:
        server.kill()
    text = server.log.read_text()
    assert "stopping: " in text
    assert "shared-deck serve: stopped: " in text.splitlines()[-1]
    assert "Traceback" in text  # the failing write is logged with its cause
    assert max(seen, default=0) <= 2 * (stored + 1)  # nothing started after the failed one
    filler.unlink()
    with contextlib.closing(Store(db, read_only=True)) as store:
        assert [store.tournament(n) for n in store.finished_tournaments()] == before
    # With space again, the next start plays the lost tournament again under its number.
    again = Serve(db, tmp_path / "again.log")
    try:
        alice, bob = again.player("alice", secrets["alice"]), again.player("bob", secrets["bob"])
        while len(finished(db)) < stored + 1:
            turn(alice, bob)
    finally:
        assert again.stop() == 0
    assert finished(db)[: stored + 1] == list(range(1, stored + 2))


# ------------------------------------------------------------------------ option checking
@pytest.fixture(scope="module")
def league_of_one(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with one player, made once by the command (each option test gets a copy)."""
    db = tmp_path_factory.mktemp("league") / "league.db"
    add_players(db, "alice")
    assert sorted(path.name for path in db.parent.iterdir()) == ["league.db"]
    return db


@pytest.mark.parametrize(
    "options",
    [
        ["--turn-seconds", "nan"],
        ["--turn-seconds", "inf"],
        ["--turn-seconds", "0"],
        ["--turn-seconds", "-1"],
        ["--turn-seconds", "fast"],
        ["--login-timeout", "0"],
        ["--login-timeout", "-1"],
        ["--login-timeout", "nan"],
        ["--port", "70000"],
        ["--port", "99999"],
        ["--port", "-1"],
        ["--deck-size", "1001"],
        ["--deck-size", "0"],
        ["--turns-per-match", "0"],
        ["--command-budget", "0"],
        ["--min-players", "-1"],
        ["--tournaments", "0"],
        ["--write-attempts", "0"],
        ["--init-hp", "21"],
        ["--max-connections", "0"],
        ["--login-threads", "0"],
        ["--login-checks-per-address", "0"],
        ["--max-unread-bytes", "0"],
        ["--unread-timeout", "0"],
        ["--unread-timeout", "nan"],
    ],
)
def test_bad_serve_options_are_one_line_and_exit_2(
    tmp_path: Path, league_of_one: Path, options: list[str]
) -> None:
    db = tmp_path / "league.db"
    shutil.copy2(league_of_one, db)
    before = sorted(path.name for path in tmp_path.iterdir())
    result = run_cli("serve", "--db", str(db), "--port", "0", *options)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shared-deck serve: "), lines
    assert "Traceback" not in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == before  # no lock file either


@pytest.mark.parametrize(
    "args",
    [
        ["bot", "--name", "x", "--secret", "s", "--port", "70000"],
        ["bot", "--name", "x", "--secret", "s", "--turns", "0"],
        ["demo", "--turn-seconds", "nan"],
        ["results", "--tournament", "0"],
        ["match", "x"],
    ],
)
def test_bad_options_of_other_commands_are_one_line(tmp_path: Path, args: list[str]) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


# ------------------------------------------------------- min players, --tournaments N, results
def test_tournaments_need_two_players_and_serve_stops_after_n(tmp_path: Path) -> None:
    db, log = tmp_path / "league.db", tmp_path / "server.log"
    secrets = add_players(db, "alice", "bob", "carol")
    server = Serve(db, log, "--tournaments", "2")
    try:
        alice = server.player("alice", secrets["alice"])
        for _ in range(10):  # ten turns alone: no tournament starts
            turn(alice)
            assert my_matches(alice) == []
        assert finished(db) == []
        bob = server.player("bob", secrets["bob"])  # carol stays away but still plays
        while not my_matches(alice):
            turn(alice, bob)
        assert len(my_matches(alice)) == 4  # two against bob, two against carol
        with contextlib.suppress(AssertionError, OSError):  # the server closes them when done
            while True:
                turn(alice, bob)
        assert server.process.wait(30) == 0
    finally:
        server.kill()
    assert finished(db) == [1, 2]
    assert "2 tournament(s) stored: done" in log.read_text()


def test_results_in_every_form_from_a_read_only_database(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    secrets = add_players(db, "alice", "bob")
    server = Serve(db, tmp_path / "server.log", "--tournaments", "1", "--turn-seconds", "1")
    alice, bob = server.player("alice", secrets["alice"]), server.player("bob", secrets["bob"])
    while not my_matches(alice):
        turn(alice, bob)
    first_match = my_matches(alice)[0]
    assert alice.ask(f"DRAW_CARD {first_match}", 2)[0] == "OK"
    assert alice.ask(f"ADD_MANA {first_match} 4242") == ["ERR 900 NoCardWithSuchId"]
    with contextlib.suppress(AssertionError, OSError):
        while True:
            turn(alice, bob)
    assert server.process.wait(30) == 0
    removed = run_cli("remove-player", "bob", "--db", str(db))
    assert removed.returncode == 0 and removed.stdout == ""
    db.chmod(0o400)
    content = db.read_bytes()

    text = run_cli("results", "--db", str(db), "--json").stdout
    board = json.loads(text)
    assert board["tournaments"] == [1]
    assert '\n "tournaments": [1],\n' in text  # a list of numbers on one line
    points = [row["points"] for row in board["leaderboard"]]
    assert points == sorted(points, reverse=True) and [r["rank"] for r in board["leaderboard"]] == [
        1, 2
    ]  # fmt: skip
    assert {row["player"]: row["removed"] for row in board["leaderboard"]} == {
        "alice": False,
        "bob": True,
    }
    rows = list(csv.reader(io.StringIO(run_cli("results", "--db", str(db), "--csv").stdout)))
    assert rows[0] == ["rank", "player", "points", "tournaments", "removed"]
    assert sorted(row[1] for row in rows[1:]) == ["alice", "bob"]
    text = run_cli("results", "--db", str(db)).stdout
    assert "bob (removed)" in text and "Tournament 1: deck seed" in text

    one = json.loads(run_cli("results", "--db", str(db), "--tournament", "1", "--json").stdout)
    assert one["number"] == 1 and len(one["matches"]) == 2
    assert {row["player"] for row in one["players"]} == {"alice", "bob"}
    table = run_cli("results", "--db", str(db), "--tournament", "1").stdout
    assert str(first_match) in table.split("match", 1)[1]
    per_player = run_cli("results", "--db", str(db), "--tournament", "1", "--csv").stdout
    assert per_player.splitlines()[0] == "player,points,matches,won,lost,total_score"

    log = run_cli("match", str(first_match), "--db", str(db))
    assert log.returncode == 0, log.stderr
    assert log.stdout.startswith(f"Match {first_match}, tournament 1 (deck seed ")
    assert "DRAW_CARD" in log.stdout and "OK " in log.stdout
    assert "ADD_MANA 4242" in log.stdout and "ERR 900 NoCardWithSuchId" in log.stdout
    same = run_cli("results", "--db", str(db), "--match", str(first_match), "--json")
    actions = json.loads(same.stdout)["actions"]
    assert [a["command"] for a in actions] == ["DRAW_CARD", "ADD_MANA 4242"]
    assert actions[1]["answer"] == "ERR 900 NoCardWithSuchId"

    for missing in (["results", "--tournament", "9"], ["match", "99"]):
        result = run_cli(*missing, "--db", str(db))
        assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1
    assert db.read_bytes() == content  # nothing was written


def test_results_on_a_read_only_file_system(small_fs: Path, tmp_path: Path) -> None:
    db = small_fs / "league.db"
    add_players(db, "alice", "bob")
    remount = subprocess.run(
        ["mount", "-o", "remount,ro", str(small_fs)], capture_output=True, check=False
    )
    if remount.returncode != 0:
        pytest.skip("cannot remount read-only")
    result = run_cli("results", "--db", str(db), "--csv")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1:] == ["1,alice,0.0,0,0", "2,bob,0.0,0,0"]


# ------------------------------------------------------------- secret rotation and removal
def test_rotate_secret_and_remove_player_against_a_running_server(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    secrets = add_players(db, "alice", "bob", "carol")
    server = Serve(db, tmp_path / "server.log")
    try:
        rotated = run_cli("rotate-secret", "alice", "--db", str(db))
        assert rotated.returncode == 0
        new_secret = rotated.stdout.strip()
        assert len(rotated.stdout.splitlines()) == 1 and new_secret != secrets["alice"]
        old = RawConnection("127.0.0.1", server.port)
        assert old.line() == "LOGIN"
        old.send(f"alice\n{secrets['alice']}\n")
        assert [old.line(), old.line(), old.line()] == [
            "PASSWORD", "ERR 940 AuthenticationFailed", ""
        ]  # fmt: skip
        alice = server.player("alice", new_secret)

        assert run_cli("remove-player", "carol", "--db", str(db)).returncode == 0
        gone = RawConnection("127.0.0.1", server.port)
        assert gone.line() == "LOGIN"
        gone.send(f"carol\n{secrets['carol']}\n")
        assert [gone.line(), gone.line()] == ["PASSWORD", "ERR 940 AuthenticationFailed"]
        bob = server.player("bob", secrets["bob"])
        while not my_matches(alice):
            turn(alice, bob)
        assert len(my_matches(alice)) == 2  # carol no longer plays
        for command in (["rotate-secret", "carol"], ["remove-player", "carol"]):
            refused = run_cli(*command, "--db", str(db))
            assert refused.returncode == 1
            assert refused.stderr.strip() == f"shared-deck {command[0]}: no player 'carol'"
        again = run_cli("add-player", "carol", "--db", str(db))
        assert again.returncode == 1 and "already exists" in again.stderr
    finally:
        assert server.stop() == 0
    board = json.loads(run_cli("results", "--db", str(db), "--json").stdout)["leaderboard"]
    assert {row["player"]: row["removed"] for row in board} == {
        "alice": False, "bob": False, "carol": True
    }  # fmt: skip
