"""Each bot sees only its own files, and our own agents run as sandboxed bots.

A contest is laid out as the official LOCM contest folders are (every bot in a folder of
its own side by side under the contest folder, the referee run from it, commands such as
``python3 Bot1/bot.py``), or with two programs right in one folder. Every bot is a spy:
at its third turn it tries to read its rival's source and weights, the working
directory's other files and its rival's HOME, and writes on its stderr what it got
(stored in the game log and the tournament database, read back here). Every file holds
a canary naming its owner: a bot's stderr may hold only its own.

The editable-install tests make a real virtual environment with ``pip install -e`` (of a
tiny package, and of this project, the ``locm bot`` case) in pytest's own temporary
folder, which other users cannot enter, and play a game with it in the sandbox.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from cardarena.locm.referee import sandbox
from cardarena.tournaments.store import TournamentStore
from tests.locm.bots import NEEDS_SANDBOX

pytestmark = NEEDS_SANDBOX

LOCM = [sys.executable, "-m", "cardarena.locm"]
ROOT = Path(__file__).resolve().parents[2]

SPY = """
import os, sys

def say(text):
    print(text, file=sys.stderr, flush=True)

def spy():
    for path in TRIES:
        path = os.path.expanduser(path)
        try:
            if os.path.isdir(path):
                say(f"LISTED {path}: {sorted(os.listdir(path))}")
            else:
                with open(path, "rb") as file:
                    say(f"READ {path}: {file.read(200)!r}")
        except OSError as error:
            say(f"cannot read {path}: {error.strerror}")

turn = 0
while sys.stdin.readline():
    sys.stdin.readline()
    for _ in range(int(sys.stdin.readline().split()[1])):
        sys.stdin.readline()
    for _ in range(int(sys.stdin.readline())):
        sys.stdin.readline()
    turn += 1
    if turn == 1:  # something of its own in its HOME, for the other to look for
        with open(os.path.expanduser("~/note.txt"), "w") as file:
            file.write(HOME_NOTE)
    if turn == 3:
        spy()
    print("PASS", flush=True)
"""


class Contest:
    """A contest folder with two spy bots, each with a canary in every file of its own."""

    def __init__(self, tmp_path: Path) -> None:
        self.folder = tmp_path / "contest"
        self.folder.mkdir()
        self.run_id = uuid.uuid4().hex
        (self.folder / "secret.txt").write_text(self.canary("organiser"))
        (self.folder / "notes").mkdir()
        (self.folder / "notes" / "plan.txt").write_text(self.canary("organiser"))

    def canary(self, owner: str) -> str:
        return f"canary-{owner}-{self.run_id}"

    def spy(self, script: Path, owner: str, tries: list[str]) -> None:
        """A spy bot at ``script`` (its weights beside it hold its canary too)."""
        script.parent.mkdir(parents=True, exist_ok=True)
        header = f"#!{sys.executable}\n# {self.canary(owner)}\n"
        body = f"TRIES = {tries!r}\nHOME_NOTE = {self.canary(owner) + ' home'!r}\n{SPY}"
        script.write_text(header + body)
        script.chmod(0o755)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*LOCM, *args, "--version", "1.5", "--time-scale", "10"], cwd=self.folder,
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip

    def check(self, stderr: str, owner: str, rival: str, own_files: list[str]) -> None:
        """A spy's stderr: it spied, read its own files and nothing of anyone else's."""
        assert stderr.count("cannot read") + stderr.count("READ") > 0, stderr
        assert self.canary(rival) not in stderr, stderr
        assert self.canary("organiser") not in stderr, stderr
        for path in own_files:  # relative paths in its folder work
            assert f"READ {path}: b'{self.canary(owner)}" in stderr, stderr
        assert f"READ {sandbox.BOT_HOME}/note.txt: b'{self.canary(owner)} home'" in stderr


def official_tries(contest: Path, rival: str) -> list[str]:
    """What a bot of the official layout tries: its rival's folder (by relative and
    absolute paths), the working directory and its other files, its rival's HOME."""
    return [
        f"{rival}/bot.py", f"{rival}/weights.txt", f"{rival}", str(contest / rival / "bot.py"),
        str(contest / rival / "weights.txt"), ".", str(contest), "secret.txt", "notes",
        str(contest / "notes" / "plan.txt"), "~", "~/note.txt", "/home", "results.db",
    ]  # fmt: skip


def test_bots_side_by_side_in_a_tournament_read_nothing_of_each_other(tmp_path: Path) -> None:
    contest = Contest(tmp_path)
    for me, rival in (("Alice", "Bob"), ("Bob", "Alice")):
        contest.spy(contest.folder / me / "bot.py", me, [
            f"{me}/weights.txt", *official_tries(contest.folder, rival),
        ])  # fmt: skip
        (contest.folder / me / "weights.txt").write_text(contest.canary(me))
    done = contest.run(
        "tournament", "--bot", f"alice={sys.executable} Alice/bot.py",
        "--bot", f"bob={sys.executable} Bob/bot.py", "--games", "1", "--workers", "1",
        "--db", "results.db", "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with TournamentStore(str(contest.folder / "results.db"), lock=False, create=False) as store:
        records = store.records(with_logs=True)
        logs = [store.log(r.key) for r in records]
    assert len(records) == 2 and all(r.error_kind is None for r in records), records
    for log in logs:
        assert log is not None
        for seat, name in enumerate(log["cardarena"]["players"]):
            stderr = "".join(text or "" for text in log["errors"][str(seat)])
            me, rival = ("Alice", "Bob") if "Alice" in name else ("Bob", "Alice")
            contest.check(stderr, me, rival, [f"{me}/weights.txt"])
            # The working directory is there (relative paths work) but holds only its own.
            assert f"LISTED .: ['{me}']" in stderr, stderr
            assert f"LISTED {contest.folder}: ['{me}']" in stderr, stderr
            assert f"cannot read {rival}/weights.txt: No such file" in stderr, stderr


def test_a_contest_inside_a_system_folder_still_hides_each_bot_from_the_other() -> None:
    """Under /opt, shown whole with the system's programs, the contest's other files are
    visible (docs/security.md says so), but never the other bot's."""
    if not os.access("/opt", os.W_OK):
        pytest.skip("cannot write in /opt here")
    base = Path(tempfile.mkdtemp(prefix="cardarena-test-", dir="/opt"))
    try:
        base.chmod(0o755)  # shown as it is on the host, with its permissions
        contest = Contest(base)
        for me, rival in (("Alice", "Bob"), ("Bob", "Alice")):
            contest.spy(contest.folder / me / "bot.py", me, [
                f"{me}/weights.txt", f"{rival}/bot.py", f"{rival}/weights.txt", rival,
                str(contest.folder / rival / "weights.txt"), "~/note.txt",
            ])  # fmt: skip
            (contest.folder / me / "weights.txt").write_text(contest.canary(me))
        done = contest.run("play", "-p1", f"{sys.executable} Alice/bot.py", "-p2",
                           f"{sys.executable} Bob/bot.py", "-d", "seed=1", "-l",
                           str(base / "game.json"))  # fmt: skip
        assert done.returncode == 0 and done.stderr == "", done.stderr
        log = json.loads((base / "game.json").read_text())
        for seat, (me, rival) in enumerate((("Alice", "Bob"), ("Bob", "Alice"))):
            stderr = "".join(text or "" for text in log["errors"][str(seat)])
            contest.check(stderr, me, rival, [f"{me}/weights.txt"])
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_two_programs_in_one_folder_see_only_their_own_files(tmp_path: Path) -> None:
    """``./bots/a`` against ``./bots/b``: showing the folder would show the rival, so each
    bot gets only what its command names (here, its program and its weights)."""
    contest = Contest(tmp_path)
    bots = contest.folder / "bots"
    for me, rival in (("a", "b"), ("b", "a")):
        contest.spy(bots / me, me, [
            f"bots/{me}.weights", f"bots/{rival}", f"bots/{rival}.weights", "bots",
            str(bots / rival), "secret.txt", ".", "~/note.txt",
        ])  # fmt: skip
        (bots / f"{me}.weights").write_text(contest.canary(me))
    done = contest.run("play", "-p1", "./bots/a bots/a.weights", "-p2", "./bots/b bots/b.weights",
                       "-d", "seed=1", "-l", "../game.json")  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    log = json.loads((tmp_path / "game.json").read_text())
    for seat, (me, rival) in enumerate((("a", "b"), ("b", "a"))):
        stderr = "".join(text or "" for text in log["errors"][str(seat)])
        contest.check(stderr, me, rival, [f"bots/{me}.weights"])
        assert f"LISTED bots: ['{me}', '{me}.weights']" in stderr, stderr


def test_what_another_bot_names_is_covered_even_in_a_folder_a_bot_names(tmp_path: Path) -> None:
    """A command may name the whole working directory (``.``): the other bots' folders
    in it are still covered; and a lone bot of a run is shown only its own folder."""
    contest = Contest(tmp_path)
    for name in ("Alice", "Bob"):
        (contest.folder / name).mkdir()
        (contest.folder / name / "bot.py").write_text("")
    folder = str(contest.folder)
    argv = sandbox.wrap("PYTHONPATH=. python3 Alice/bot.py", cwd=folder,
                        rivals=["python3 Bob/bot.py"])  # fmt: skip
    binds = [argv[i + 2] for i, word in enumerate(argv) if word == "--ro-bind"]
    covers = [argv[i + 1] for i, word in enumerate(argv) if word == "--tmpfs"]
    assert folder in binds and f"{folder}/Bob" in covers and f"{folder}/Alice" not in covers
    argv = sandbox.wrap("python3 Alice/bot.py", cwd=folder)
    binds = [argv[i + 2] for i, word in enumerate(argv) if word == "--ro-bind"]
    assert f"{folder}/Alice" in binds and folder not in binds and f"{folder}/Bob" not in binds


TINY_BOT = """
import runpy, sys
import tinypkg  # installed editable in the bot's virtual environment, from elsewhere
print(f"tiny from {tinypkg.__file__}", file=sys.stderr, flush=True)
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def editable_venv(where: Path, source: Path) -> Path:
    """A real virtual environment with ``source`` installed editable (``pip install -e``),
    its build backend taken from this interpreter's packages (no network)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(where)], check=True, timeout=120)  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(where / "bin" / "python"), "install",
         "--no-deps", "--no-build-isolation", "--no-index", "--quiet", "-e", str(source)],
        check=True, timeout=300, capture_output=True,
    )  # fmt: skip
    return where / "bin"


def test_an_editable_install_in_a_private_folder_is_seen_by_its_bot(tmp_path: Path) -> None:
    assert not os.stat(tmp_path.parent).st_mode & 0o007  # pytest's: other users cannot enter
    source = tmp_path / "src" / "tiny"
    (source / "tinypkg").mkdir(parents=True)
    (source / "tinypkg" / "__init__.py").write_text("")
    (source / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"'
        '\n[project]\nname = "tinypkg"\nversion = "0.1"\n'
    )
    bin_dir = editable_venv(tmp_path / "venv", source)
    (tmp_path / "work" / "MyBot").mkdir(parents=True)
    (tmp_path / "work" / "MyBot" / "play.py").write_text(TINY_BOT)
    command = f"{bin_dir / 'python'} MyBot/play.py {ROOT / 'examples' / 'bots' / 'minimal_bot.py'}"
    done = subprocess.run(
        [*LOCM, "play", "-p1", command, "-p2", "builtin:pass", "--version", "1.5", "-d",
         "seed=1", "--time-scale", "10", "-l", str(tmp_path / "game.json")],
        cwd=tmp_path / "work", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    log = json.loads((tmp_path / "game.json").read_text())
    stderr = "".join(text or "" for text in log["errors"]["0"])
    assert f"tiny from {source / 'tinypkg' / '__init__.py'}" in stderr, stderr
    assert log["cardarena"]["winner"] == 0


def test_locm_bot_from_an_editable_install_plays_in_the_sandbox(tmp_path: Path) -> None:
    """``locm bot greedy`` from a venv with this project installed editable, from a copy
    in a folder other users cannot enter: it plays a whole game and wins."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, clone / name)
    for name in ("cardarena", "cardarena_entry"):
        shutil.copytree(ROOT / name, clone / name, ignore=shutil.ignore_patterns("__pycache__"))
    bin_dir = editable_venv(tmp_path / "venv", clone)
    done = subprocess.run(
        [*LOCM, "play", "-p1", f"{bin_dir / 'locm'} bot greedy", "-p2", "builtin:pass",
         "--version", "1.5", "-d", "seed=1", "--time-scale", "10", "-l",
         str(tmp_path / "game.json")],
        cwd=tmp_path, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    log = json.loads((tmp_path / "game.json").read_text())
    assert log["cardarena"]["winner"] == 0 and log["cardarena"]["errorPlayer"] is None, log


def test_pth_path_entries_and_editable_finders_are_followed_and_nothing_else(
    tmp_path: Path,
) -> None:
    """What a ``.pth`` file adds to Python's path (a path line, relative or absolute; an
    editable finder's mapping) is shown; other start-up code and missing paths are not."""
    site = tmp_path / "prefix" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    for name in ("src", "lib", "mapped", "other"):
        (tmp_path / name).mkdir()
    (site / "paths.pth").write_text(
        f"# a comment\n{tmp_path / 'src'}\n../../../../lib\n{tmp_path / 'missing'}\n"
        f"import os; os.environ.setdefault('X', {str(tmp_path / 'other')!r})\n"
    )
    (site / "__editable__.pkg.pth").write_text("import __editable___pkg_finder; x.install()\n")
    (site / "__editable___pkg_finder.py").write_text(
        f"MAPPING = {{'pkg': {str(tmp_path / 'mapped')!r}}}\nNAMESPACES = {{}}\n"
    )
    found = sandbox.pth_targets(str(tmp_path / "prefix"))
    assert sorted(found) == sorted(str(tmp_path / n) for n in ("src", "lib", "mapped"))
