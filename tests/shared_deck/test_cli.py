"""The ``shared-deck`` command as a user runs it: real processes, a real database, SIGKILL."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cardarena.shared_deck import cli
from cardarena.shared_deck.arena import tournament_seed
from cardarena.shared_deck.store import Store, StoredTournament

CLI = [sys.executable, "-m", "cardarena.shared_deck.cli"]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, check=False)


def start_serve(db: Path, log: Path, *options: str) -> tuple[subprocess.Popen[str], int]:
    server = subprocess.Popen(
        [
            *CLI,
            "serve",
            "--port",
            "0",
            "--db",
            str(db),
            # Long enough for a bot process to answer on a loaded machine: with 0.05 s, a busy
            # machine's bots missed every turn and no tournament had a point.
            "--turn-seconds",
            "0.2",
            "--turns-per-match",
            "10",
            "--seed",
            "7",
            *options,
        ],
        stdout=subprocess.PIPE,
        stderr=log.open("a"),
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    assert line.startswith("shared-deck listening on 127.0.0.1:"), line
    return server, int(line.rsplit(":", 1)[1])


def start_bot(name: str, secret: str, strategy: str, port: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "bot", "--name", name, "--strategy", strategy, "--port", str(port)],
        env={**os.environ, "SHARED_DECK_SECRET": secret},
        stderr=subprocess.DEVNULL,
    )


def finished(db: Path) -> list[int]:
    with contextlib.closing(Store(db)) as store:
        return store.finished_tournaments()


def wait_finished(db: Path, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(finished(db)) < count:
        assert time.monotonic() < deadline, "tournaments did not finish in time"
        time.sleep(0.05)


def snapshot(db: Path) -> tuple[dict[int, StoredTournament], dict[str, float], list[int]]:
    """Finished tournaments, leaderboard, and the numbers of tournaments left 'running'."""
    with contextlib.closing(Store(db)) as store:
        tournaments = {n: store.tournament(n) for n in store.finished_tournaments()}
        board = {row.player: row.points for row in store.leaderboard()}
        running = [
            row[0]
            for row in store.connection.execute(
                "SELECT number FROM tournaments WHERE status = 'running'"
            )
        ]
    return tournaments, board, running


def test_add_player_prints_only_the_secret_and_refuses_duplicates(tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    added = run_cli("add-player", "alice", "--db", db)
    assert added.returncode == 0
    lines = added.stdout.splitlines()
    assert len(lines) == 1 and len(lines[0]) >= 32
    again = run_cli("add-player", "alice", "--db", db)
    assert again.returncode == 1 and "already exists" in again.stderr and again.stdout == ""
    # a name no player may have is refused before a database is made
    for bad in ("", ".x", "a b", "WAIT"):
        other = tmp_path / "other.db"
        refused = run_cli("add-player", bad, "--db", str(other))
        assert refused.returncode == 2 and refused.stdout == "", refused.stderr
        assert refused.stderr.startswith("shared-deck add-player: invalid player name")
        assert not other.exists()
    odd = run_cli("serve", "--db", db, "--init-hp", "21")
    assert odd.returncode == 2 and "even" in odd.stderr


def test_killed_server_keeps_finished_tournaments_and_replays_the_unfinished_one(
    tmp_path: Path,
) -> None:
    db, log = tmp_path / "league.db", tmp_path / "server.log"
    secrets = {}
    for name in ("alice", "bob", "carol"):
        secrets[name] = run_cli("add-player", name, "--db", str(db)).stdout.strip()
    server, port = start_serve(db, log, "--start-after-logins", "2")
    bots = [
        start_bot("alice", secrets["alice"], "greedy", port),
        start_bot("bob", secrets["bob"], "random", port),
    ]
    try:
        wait_finished(db, 3)
        server.send_signal(signal.SIGKILL)
        server.wait(10)
    finally:
        for process in [server, *bots]:
            process.kill()
            process.wait(10)
    before, board_before, running = snapshot(db)
    assert sorted(before) == list(range(1, len(before) + 1))
    assert all(len(tournament.matches) == 6 for tournament in before.values())
    assert sum(sum(t.points.values()) for t in before.values()) > 0  # the bots really played
    for name, points in board_before.items():
        assert points == pytest.approx(sum(t.points.get(name, 0.0) for t in before.values()))
    assert running in ([], [len(before) + 1])  # at most the tournament that was under way

    server, port = start_serve(db, log)
    bots = [
        start_bot("alice", secrets["alice"], "greedy", port),
        start_bot("bob", secrets["bob"], "random", port),
    ]
    try:
        wait_finished(db, len(before) + 1)
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(30) == 0
        for bot in bots:
            bot.kill()
            bot.wait(10)
    after, board_after, running_after = snapshot(db)
    assert running_after == []  # a clean stop drops the tournament under way
    for number, tournament in before.items():
        assert after[number] == tournament
    replayed = after[len(before) + 1]
    assert replayed.seed == tournament_seed(7, replayed.number)
    first_id = 6 * len(before) + 1
    assert [m.match_id for m in replayed.matches] == list(range(first_id, first_id + 6))
    for name, points in board_after.items():
        assert points == pytest.approx(board_before[name] + replayed.points[name])
    assert "discarded unfinished tournament" in log.read_text() or running == []

    results = run_cli("results", "--db", str(db))
    assert results.returncode == 0
    assert f"Leaderboard after {len(after)} tournament(s)" in results.stdout
    assert f"Tournament {max(after)}: deck seed {replayed.seed}" in results.stdout
    for name in ("alice", "bob", "carol"):
        assert name in results.stdout


def test_demo_runs_bots_and_prints_the_leaderboard() -> None:
    demo = subprocess.run(
        [*CLI, "demo", "--tournaments", "1", "--turn-seconds", "0.05", "--turns-per-match", "8"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert demo.returncode == 0, demo.stderr
    assert "Leaderboard after 1 tournament(s)" in demo.stdout
    for name in ("greedy-1", "greedy-2", "random-1", "random-2"):
        assert name in demo.stdout
    # The demo says that it deletes its database, and does.
    first, *_, last = demo.stdout.splitlines()
    db = first.rsplit(", database ", 1)[1]
    assert last.startswith(f"demo database {db} deleted ")
    assert not Path(db).exists()


def test_a_database_that_cannot_be_opened_is_a_one_line_error(tmp_path: Path) -> None:
    missing = tmp_path / "no such folder" / "x.db"
    result = run_cli("add-player", "alice", "--db", str(missing))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"shared-deck add-player: database {missing} cannot be created: No such file or directory"
    ]


# Every command refuses a file that is not its own, untouched.
def locm_database(path: Path) -> None:
    """A real LOCM tournament database (cardarena.tournaments), copied as ``cp t.db c1.db``."""
    from cardarena.tournaments.store import TournamentStore

    made = path.parent.parent / "made-by-locm" / "t.db"
    made.parent.mkdir()
    with TournamentStore(str(made)):
        pass
    path.write_bytes(made.read_bytes())


def other_application_database(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        connection.execute("INSERT INTO notes (text) VALUES ('mine')")
        connection.commit()


def text_file(path: Path) -> None:
    path.write_text("name,points\nalice,3\n")


FOREIGN_COMMANDS = [
    ["add-player", "zed"],
    ["rotate-secret", "zed"],
    ["remove-player", "zed"],
    ["results"],
    ["results", "--json"],
    ["results", "--tournament", "1", "--csv"],
    ["match", "1"],
    ["serve", "--port", "0"],
    ["serve", "--port", "0", "--create", "--http-port", "0"],
]


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (
            locm_database,
            "is a LOCM tournament database, not a shared-deck one; nothing was changed",
        ),
        (
            other_application_database,
            "is another application's SQLite database (tables: notes), not a shared-deck one;"
            " nothing was changed",
        ),
        (text_file, "is not a SQLite database; nothing was changed"),
    ],
)
def test_every_command_refuses_a_file_that_is_not_its_own_and_leaves_it_untouched(
    tmp_path: Path, make: Callable[[Path], None], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every command through its own process for a text file; for the two databases, the
    servers so, the others through the command's ``main`` in this process (the same check,
    made first for every command, without 14 interpreters)."""
    work = tmp_path / "work"
    work.mkdir()
    db = work / "c1.db"
    make(db)
    os.utime(db, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    content, before = db.read_bytes(), db.stat().st_mtime_ns
    for command in FOREIGN_COMMANDS:
        if make is text_file or command[0] == "serve":
            result = run_cli(*command, "--db", str(db))
            code, out, err = result.returncode, result.stdout, result.stderr
        else:
            code = cli.main([*command, "--db", str(db)])
            out, err = capsys.readouterr()
        assert (code, out) == (2, ""), (command, err)
        assert err.splitlines() == [f"shared-deck {command[0]}: database {db} {says}"]
        assert db.read_bytes() == content and db.stat().st_mtime_ns == before, command
        assert [p.name for p in work.iterdir()] == ["c1.db"], command  # no lock, no -wal


@pytest.mark.parametrize("live", [True, False], ids=["open-elsewhere", "log-without-index"])
def test_a_foreign_database_with_a_write_ahead_log_gets_no_side_file(
    tmp_path: Path, live: bool
) -> None:
    """A LOCM tournament's database in WAL mode, in use by its tournament (log and index
    beside it), or copied with its log alone: refused, and nothing appears beside it."""
    origin = tmp_path / "origin.db"
    writer = sqlite3.connect(origin)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    writer.execute("CREATE TABLE games (key TEXT PRIMARY KEY)")
    writer.commit()  # the tables are in the log only: the main file alone shows none
    work = tmp_path / "work"
    work.mkdir()
    db = work / "c1.db"
    try:
        if live:
            db, work = origin, tmp_path
        else:
            db.write_bytes(origin.read_bytes())
            Path(f"{db}-wal").write_bytes(Path(f"{origin}-wal").read_bytes())
        files = sorted(p.name for p in work.iterdir())
        content = {name: (work / name).read_bytes() for name in files if name.endswith(".db")}
        for command in (["results"], ["serve", "--port", "0"]):
            result = run_cli(*command, "--db", str(db))
            assert result.returncode == 2, result.stderr
            assert "is a LOCM tournament database" in result.stderr
            assert sorted(p.name for p in work.iterdir()) == files, command
            assert {name: (work / name).read_bytes() for name in content} == content
    finally:
        writer.close()


@pytest.mark.parametrize(
    "command", [["results"], ["add-player", "zed"], ["match", "1"], ["serve", "--port", "0"]]
)
def test_a_folder_given_as_the_database_is_one_clear_line(
    tmp_path: Path, command: list[str]
) -> None:
    folder = tmp_path / "somedir"
    folder.mkdir()
    result = run_cli(*command, "--db", str(folder))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        f"shared-deck {command[0]}: database {folder} is a directory, not a database file"
    ]
    assert list(folder.iterdir()) == [] and [p.name for p in tmp_path.iterdir()] == ["somedir"]


def test_an_empty_file_is_still_made_into_a_database(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    db.touch()
    added = run_cli("add-player", "alice", "--db", str(db))
    assert added.returncode == 0, added.stderr
    board = run_cli("results", "--db", str(db), "--csv")
    assert board.returncode == 0 and "alice" in board.stdout


@pytest.mark.parametrize(
    ("command", "creator"),
    [
        (["results"], "add-player"),
        (["results", "--json"], "add-player"),
        (["match", "1"], "add-player"),
        (["rotate-secret", "alice"], "add-player"),
        (["remove-player", "alice"], "add-player"),
        (["serve", "--port", "0"], "serve --create"),
    ],
)
def test_a_database_that_does_not_exist_is_not_created(
    tmp_path: Path, command: list[str], creator: str
) -> None:
    missing = tmp_path / "typo.db"
    result = run_cli(*command, "--db", str(missing))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"shared-deck {command[0]}: database {missing} does not exist (it is made by {creator})"
    ]
    assert list(tmp_path.iterdir()) == []


DEMO_STOPPED_WITHIN_S = 15.0
"""A Ctrl-C'd demo must be gone within this (it takes well under a second on a quiet
machine: bots get SIGTERM, then SIGKILL after 5 s; the slack is for a loaded one)."""


@pytest.mark.parametrize(
    "moment",
    ["base seed", "demo server on", "tournament 1 started", "tournament 1 stored",
     "tournament 2 started"],
)  # fmt: skip
def test_ctrl_c_at_any_moment_of_the_demo_stops_it_and_its_bots(moment: str) -> None:
    # Once a SIGINT a few seconds in left the demo running for minutes, its bots unreaped.
    demo = subprocess.Popen(
        [*CLI, "demo", "--tournaments", "3", "--turn-seconds", "0.05", "--turns-per-match", "8"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    assert demo.stdout is not None
    seen: list[str] = []
    for line in demo.stdout:  # the moment: as soon as the demo says it got there
        seen.append(line)
        if moment in line:
            break
    assert moment in seen[-1], "".join(seen)
    port = next((line.split(":")[-1].split(",")[0] for line in seen if "demo server on" in line),
                None)  # fmt: skip
    os.killpg(demo.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    began = time.monotonic()
    rest = demo.communicate(timeout=120)[0]
    took = time.monotonic() - began
    assert took < DEMO_STOPPED_WITHIN_S, f"{took:.1f} s"
    assert demo.returncode == 130, "".join(seen) + rest
    assert rest.splitlines()[-1].startswith("shared-deck demo: interrupted; its bots were stopped")
    if port is not None:  # no bot of this demo left
        left = subprocess.run(["pgrep", "-f", f"shared_deck.cli bot .*--port {port} "],
                              capture_output=True, text=True, check=False)  # fmt: skip
        assert left.stdout == "", left.stdout
