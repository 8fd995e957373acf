"""A bot keeps none of the organiser's secrets: environment, HOME, /root, /etc/shadow,
the tournament's database (also through a symlinked ``--db``) and the other databases
and report folders of the working directory.

The hostile bot tries everything at its first turn and writes what it got on its stderr,
which the referee stores: in the ``-l`` game log (``locm play``) and in the tournament
database (``locm tournament``), both read back here. Every secret is a unique canary
string; none may appear there, while what the organiser passes with ``--bot-env`` must.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from cardarena.locm.referee import botenv, sandbox
from cardarena.tournaments.store import TournamentStore
from tests.locm.bots import NEEDS_SANDBOX

pytestmark = NEEDS_SANDBOX

LOCM = [sys.executable, "-m", "cardarena.locm"]
ROOT = Path(__file__).resolve().parents[2]

HOSTILE = """
import json, os, sys

def say(text):
    print(text, file=sys.stderr, flush=True)

def sandboxed():
    with open("/proc/1/cmdline", "rb") as file:  # our PID namespace's init
        return file.read().startswith(b"bwrap")

def attack():
    say("ENV " + json.dumps(dict(os.environ)))
    say(f"UID {os.getuid()} GID {os.getgid()} GROUPS {os.getgroups()}")
    if not sandboxed():  # never dump the machine running the tests into a log
        say("NOT SANDBOXED")
        return
    for folder in FOLDERS:
        try:
            say(f"LISTED {folder}: {sorted(os.listdir(os.path.expanduser(folder)))}")
        except OSError as error:
            say(f"cannot list {folder}: {error.strerror}")
    for path in FILES:
        try:
            with open(path, "rb") as file:
                say(f"OPENED {path}: {file.read(4096)!r}")
        except OSError as error:
            say(f"cannot open {path}: {error.strerror}")

first = True
while sys.stdin.readline():
    sys.stdin.readline()
    for _ in range(int(sys.stdin.readline().split()[1])):
        sys.stdin.readline()
    for _ in range(int(sys.stdin.readline())):
        sys.stdin.readline()
    if first:
        first = False
        attack()
    print("PASS", flush=True)
"""


INTERPRETER = [
    f"LISTED /root: {[Path(real).relative_to('/root').parts[0]]}"
    for real in {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}
    if real.startswith("/root/")
]
"""The bot is this test run's Python: the sandbox shows its installation, wherever it is."""


class Scene:
    """An organiser's machine in miniature, every secret on it a canary."""

    def __init__(self, tmp_path: Path) -> None:
        tmp_path.chmod(0o755)  # a contest checkout is readable by all; pytest's is not
        self.canary = f"canary-{uuid.uuid4().hex}"
        self.contest = tmp_path / "contest"  # the referee's working directory
        self.contest.mkdir()
        self.home = tmp_path / "home"  # the organiser's HOME
        (self.home / ".ssh").mkdir(parents=True)
        (self.home / ".ssh" / "id_ed25519").write_text(f"KEY {self.canary}\n")
        (self.home / ".npmrc").write_text(f"//registry/:_authToken={self.canary}\n")
        self.home.chmod(0o755)  # even readable by all, it is not there
        # Another contest's database, one with no telling name, and two report folders.
        for name in ("other.db", "notes"):
            with sqlite3.connect(self.contest / name) as db:
                db.execute("CREATE TABLE t (x)")
                db.execute("INSERT INTO t VALUES (?)", (f"{name} {self.canary}",))
            db.close()
        (self.contest / "old-report").mkdir()
        (self.contest / "old-report" / "report.json").write_text(json.dumps(self.canary))
        (self.contest / "site" / "games").mkdir(parents=True)
        (self.contest / "site" / "index.html").write_text(self.canary)
        self.secret_env = {"ORGANISER_API_TOKEN": f"env-{self.canary}"}
        self.passed = f"passed-{uuid.uuid4().hex}"
        self.literal = f"literal-{uuid.uuid4().hex}"

    def bot(self, databases: list[Path]) -> str:
        db_files = [f"{db}{end}" for db in databases for end in sandbox.DB_COMPANIONS]
        folders = ["~", "/root", "/home", str(self.home), str(self.home / ".ssh"),
                   str(self.contest / "old-report"), str(self.contest / "site")]  # fmt: skip
        files = [
            "/etc/shadow", "/etc/gshadow", "/etc/passwd", str(self.home / ".npmrc"),
            str(self.home / ".ssh" / "id_ed25519"), str(self.contest / "other.db"),
            str(self.contest / "notes"), str(self.contest / "old-report" / "report.json"),
            str(self.contest / "site" / "index.html"), *db_files,
        ]  # fmt: skip
        script = self.contest / "hostile_bot.py"
        script.write_text(f"FOLDERS = {folders!r}\nFILES = {files!r}\n{HOSTILE}")
        return f"{sys.executable} {script.name}"

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **self.secret_env, "HOME": str(self.home)}
        env["PASSED_TOKEN"] = self.passed
        bot_env = ["--bot-env", "PASSED_TOKEN", "--bot-env", f"LITERAL={self.literal}"]
        return subprocess.run(
            [*LOCM, *args, "--version", "1.5", "--time-scale", "10", *bot_env],
            cwd=self.contest, env=env, capture_output=True, text=True, timeout=300,
            check=False,
        )  # fmt: skip

    def check(self, stderr: str, games: int) -> None:
        """The bot's stderr of ``games`` games: it ran, got only what it may, and no secret."""
        assert stderr.count("ENV ") == games and "NOT SANDBOXED" not in stderr, stderr
        assert self.canary not in stderr, stderr
        shadow = Path("/etc/shadow")
        if os.access(shadow, os.R_OK):  # its root line, whatever the canaries missed
            assert shadow.read_text().splitlines()[0] not in stderr
        for line in stderr.splitlines():
            if line.startswith("ENV "):
                env = json.loads(line[4:])
                assert env["PASSED_TOKEN"] == self.passed and env["LITERAL"] == self.literal
                assert env["HOME"] == sandbox.BOT_HOME and env["USER"] == sandbox.BOT_USER
                extra = {n for n in env if not botenv.allowed(n)}
                assert extra <= {"HOME", "USER", "LOGNAME", "TMPDIR", "PWD", "PASSED_TOKEN",
                                 "LITERAL"}, extra  # fmt: skip
            if line.startswith("UID ") and sandbox.switches_user():
                uid = int(line.split()[1])
                assert uid >= sandbox.BOT_UIDS[0] and "GROUPS [0]" not in line, line
            if line.startswith("OPENED "):  # only the synthesized passwd opens
                assert line.startswith("OPENED /etc/passwd: "), line
            if line.startswith("LISTED "):  # only the bot's own, empty HOME and /home,
                # and the way to this interpreter's installation if it is under /root
                assert line in ("LISTED ~: []", "LISTED /home: ['bot']", *INTERPRETER), line
        passwd = next(line for line in stderr.splitlines() if line.startswith("OPENED /etc/passwd"))
        assert "root:x:0:0" in passwd and f"{sandbox.BOT_USER}:x:" in passwd
        assert passwd.count("\\n") == 3  # root, the bot, nobody: no user list of the machine


def bot_stderr(log: dict, seat: int) -> str:  # type: ignore[type-arg]
    return "".join(text or "" for text in log["errors"][str(seat)])


def test_locm_play_keeps_the_organisers_secrets(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    command = scene.bot([])
    done = scene.run("play", "-p1", command, "-p2", "builtin:greedy", "-d", "seed=1",
                     "-l", "../game.json")  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.splitlines()[:2] == ["0", "1"]  # a whole game, lost on health
    log = json.loads((tmp_path / "game.json").read_text())
    scene.check(bot_stderr(log, 0), games=1)
    assert "cannot open /etc/shadow: No such file or directory" in bot_stderr(log, 0)


def tournament_stderr(db: Path) -> tuple[str, list[object]]:
    with TournamentStore(str(db), lock=False, create=False) as store:
        records = store.records(with_logs=True)
        logs = [store.log(r.key) for r in records]
    text = "".join(bot_stderr(log, seat) for log in logs if log for seat in (0, 1))
    return text, records


def test_locm_tournament_keeps_the_organisers_secrets_and_its_database(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    # --db through a symlink from another folder: the real file, in the working
    # directory, is what must be hidden (and its journal files), not the link's name.
    (scene.contest / "data").mkdir()
    real = scene.contest / "data" / "t.db"
    (tmp_path / "links").mkdir()
    link = tmp_path / "links" / "t.db"
    link.symlink_to(real)
    # The command names the working directory ("."), so the sandbox shows it whole: what
    # must stay hidden there is covered, not merely left out.
    command = scene.bot([real, link]) + " ."
    done = scene.run(
        "tournament",
        "--bot",
        f"evil={command}",
        "--bot",
        "builtin:greedy",
        "--games",
        "1",
        "--workers",
        "1",
        "--db",
        str(link),
        "--quiet",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert "played 2 new games" in done.stderr
    stderr, records = tournament_stderr(real)
    assert len(records) == 2 and all(r.error_kind is None for r in records)
    scene.check(stderr, games=2)
    for path in (real, Path(f"{real}-wal"), scene.contest / "other.db", scene.contest / "notes"):
        assert f"cannot open {path}: Permission denied" in stderr
    assert f"cannot list {scene.contest / 'old-report'}: Permission denied" in stderr
    # The stored replay command names the variables passed, never their values.
    with TournamentStore(str(real), lock=False, create=False) as store:
        text = json.dumps([r.replay for r in store.records()])
    assert "--bot-env PASSED_TOKEN" in text and scene.literal not in text


def test_a_db_symlinked_into_a_hidden_place_costs_no_game(tmp_path: Path) -> None:
    """A --db link from the working directory into a folder the sandbox does not show (the
    host's /tmp, here): nothing to hide there, and every bot still starts."""
    scene = Scene(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    real = tmp_path / "elsewhere" / "t.db"
    link = scene.contest / "t.db"
    link.symlink_to(real)
    command = scene.bot([link, real])
    done = scene.run(
        "tournament",
        "--bot",
        f"evil={command}",
        "--bot",
        "builtin:greedy",
        "--games",
        "1",
        "--workers",
        "1",
        "--db",
        "t.db",
        "--quiet",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    stderr, records = tournament_stderr(real)
    assert len(records) == 2 and all(r.error_kind is None for r in records), stderr
    scene.check(stderr, games=2)


def test_without_the_sandbox_the_environment_is_still_the_allow_list(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    command = scene.bot([])
    done = scene.run("play", "-p1", command, "-p2", "builtin:greedy", "-d", "seed=1",
                     "-l", "../game.json", "--no-sandbox")  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    stderr = bot_stderr(json.loads((tmp_path / "game.json").read_text()), 0)
    env = json.loads(next(line for line in stderr.splitlines() if line.startswith("ENV "))[4:])
    assert scene.canary not in json.dumps(env)
    assert env["PASSED_TOKEN"] == scene.passed and env["LITERAL"] == scene.literal
    assert env["HOME"] == str(scene.home)  # its files are the organiser's anyway
    assert {n for n in env if not botenv.allowed(n)} <= {
        "HOME",
        "USER",
        "LOGNAME",
        "TMPDIR",
        "PWD",
        "PASSED_TOKEN",
        "LITERAL",
    }


def test_bot_env_usage_errors(tmp_path: Path) -> None:
    for words, message in (
        (["--bot-env", "NOT_SET_ANYWHERE_X"], "--bot-env NOT_SET_ANYWHERE_X: NOT_SET_ANYWHERE_X "
         "is not set in this environment"),
        (["--bot-env", "1BAD=x"], "--bot-env '1BAD=x': expected NAME or NAME=VALUE"),
    ):  # fmt: skip
        for command in (["play", "-p1", "builtin:pass", "-p2", "builtin:pass"],
                        ["tournament", "--bot", "builtin:pass", "--bot", "builtin:random",
                         "--db", str(tmp_path / "t.db")]):  # fmt: skip
            done = subprocess.run([*LOCM, *command, *words], capture_output=True, text=True,
                                  timeout=120, check=False, cwd=ROOT)  # fmt: skip
            assert done.returncode == 2 and done.stderr == f"locm: error: {message}\n"
    assert not (tmp_path / "t.db").exists()


def test_unreadable_bot_files_are_named_before_the_first_game(tmp_path: Path) -> None:
    if not sandbox.switches_user():
        pytest.skip("only as root does the bot run as a user of its own")
    private = tmp_path / "private"  # pytest's own mode: the owner's alone
    private.mkdir(mode=0o700)
    (private / "bot.py").write_text("")
    tmp_path.chmod(0o755)
    done = subprocess.run(
        [*LOCM, "play", "-p1", f"{sys.executable} {private / 'bot.py'}", "-p2", "builtin:pass"],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"needs {private}, which the sandbox's unprivileged user cannot read" in done.stderr


def test_parse_bot_env() -> None:
    environ = {"A": "1", "B": "x=y"}
    assert botenv.parse_bot_env(["A", "B", "C=3", "A=2"], environ) == (
        ("A", "2"), ("B", "x=y"), ("C", "3"),
    )  # fmt: skip
    env = botenv.bot_environment(
        (("EXTRA", "e"),), sandboxed=True,
        environ={"PATH": "/p", "LC_ALL": "C", "AWS_SECRET_ACCESS_KEY": "s", "HOME": "/root"},
    )  # fmt: skip
    assert env == {"PATH": "/p", "LC_ALL": "C", "HOME": sandbox.BOT_HOME, "USER": "bot",
                   "LOGNAME": "bot", "TMPDIR": "/tmp", "EXTRA": "e"}  # fmt: skip
    assert botenv.bot_environment(sandboxed=False, environ={})["PATH"] == botenv.DEFAULT_PATH


def test_the_sandbox_privileged_steps_run_no_program_of_the_bots(tmp_path: Path) -> None:
    """A ``PATH`` (or library path) the organiser passes may name a bot's folder: the
    sandbox's privileged steps still run the system's ``mount`` and ``chown``, and the bot
    gets its variables back once it runs as its own user."""
    scene = Scene(tmp_path)
    tools = scene.contest / "tools"  # named by the command: shown to the bot
    tools.mkdir()
    for name in ("mount", "chown", "prlimit", "setpriv"):
        (tools / name).write_text(f"#!/bin/sh\necho FAKE {name} as $(id -u) >&2\n")
        (tools / name).chmod(0o755)
    command = scene.bot([]) + " tools"
    done = scene.run("play", "-p1", command, "-p2", "builtin:greedy", "-d", "seed=1",
                     "-l", "../game.json", "--bot-env", f"PATH={tools}:/usr/bin:/bin",
                     "--bot-env", f"LD_LIBRARY_PATH={tools}")  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    stderr = bot_stderr(json.loads((tmp_path / "game.json").read_text()), 0)
    assert "FAKE" not in stderr
    env = json.loads(next(line for line in stderr.splitlines() if line.startswith("ENV "))[4:])
    assert env["PATH"] == f"{tools}:/usr/bin:/bin" and env["LD_LIBRARY_PATH"] == str(tools)
    assert not any(name.startswith(sandbox.CARRIED) for name in env)
    scene.check(stderr, games=1)


def test_run_from_the_organisers_home_its_dotfiles_stay_hidden(tmp_path: Path) -> None:
    """Run from a home folder, only what the command names there (the bot's folder) is
    shown, not the keys and tokens beside it, even when the command names the working
    directory."""
    scene = Scene(tmp_path)
    (scene.home / "bots").mkdir()
    scene.contest = scene.home  # the organiser runs the referee from their HOME
    command = scene.bot([])
    script = scene.home / "hostile_bot.py"
    script.rename(scene.home / "bots" / script.name)
    command = command.replace(script.name, f"bots/{script.name}") + " ."
    done = scene.run("play", "-p1", command, "-p2", "builtin:greedy", "-d", "seed=1",
                     "-l", str(tmp_path / "game.json"))  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    stderr = bot_stderr(json.loads((tmp_path / "game.json").read_text()), 0)
    assert "ENV " in stderr and scene.canary not in stderr, stderr
    assert f"cannot open {scene.home / '.ssh' / 'id_ed25519'}: No such file" in stderr
    assert f"LISTED {scene.home}: ['bots']" in stderr  # its own folder, nothing else
