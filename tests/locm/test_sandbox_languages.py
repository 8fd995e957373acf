"""Contest bots of every language still play in the sandbox, run the way organisers run them.

Each bot (``tests/locm/bots/languages``) answers PASS to every turn and names itself on
stderr once; it loses on health to the in-process greedy agent after playing every
turn, which shows that its runtime started, read every input and answered in time
inside the sandbox: as an unprivileged user of its own when the tests run as root, with
a private HOME, a reduced /etc and only its own folder of the host's files. A toolchain
that is not installed skips its test with the package to install.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cardarena.locm.referee import sandbox
from tests.locm.bots import BOTS, NEEDS_SANDBOX

pytestmark = NEEDS_SANDBOX

LOCM = [sys.executable, "-m", "cardarena.locm"]
ROOT = Path(__file__).resolve().parents[2]
SOURCES = BOTS / "languages"


def need(tool: str, package: str) -> str:
    found = shutil.which(tool)
    if found is None:
        pytest.skip(f"{tool} is not installed (apt-get install {package})")
    return found


@pytest.fixture
def contest(tmp_path: Path) -> Path:
    """An organiser's contest folder (the referee's working directory), readable by all
    as a checkout made with the usual umask is; pytest makes ``tmp_path`` private."""
    tmp_path.chmod(0o755)
    folder = tmp_path / "contest"
    folder.mkdir()
    return folder


def play(command: str, cwd: Path) -> str:
    """Play the bot against greedy in the sandbox; return its stderr, after checking that it
    played the whole game (a loss on health, no error of its own)."""
    log = cwd.parent / "game.json"
    done = subprocess.run(
        [*LOCM, "play", "-p1", command, "-p2", "builtin:greedy", "--version", "1.5",
         "-d", "seed=1", "--time-scale", "10", "-l", str(log)],
        cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    game = json.loads(log.read_text())
    stderr = "".join(text or "" for text in game["errors"]["0"])
    assert done.stdout.splitlines()[:2] == ["0", "1"], stderr
    assert game["cardarena"]["endReason"] == "HEALTH", stderr
    assert game["cardarena"]["errorPlayer"] is None, stderr
    return stderr


def test_a_cpp_bot(contest: Path) -> None:
    compiler = need("g++", "g++")
    (contest / "cpp").mkdir()
    binary = contest / "cpp" / "bot"
    subprocess.run([compiler, "-O2", "-o", str(binary), str(SOURCES / "pass_bot.cpp")],
                   check=True, timeout=300)  # fmt: skip
    assert "cpp bot running" in play("cpp/bot", contest)
    assert "cpp bot running" in play(str(binary), contest.parent)


def test_a_java_bot(contest: Path) -> None:
    javac = need("javac", "default-jdk-headless")
    need("java", "default-jre-headless")
    (contest / "java").mkdir()
    subprocess.run([javac, "-d", str(contest / "java"), str(SOURCES / "PassBot.java")],
                   check=True, timeout=300)  # fmt: skip
    stderr = play("java -cp java PassBot", contest)
    user = sandbox.BOT_USER if sandbox.switches_user() else None
    assert f"java bot running as {user or ''}" in stderr and f"in {sandbox.BOT_HOME}" in stderr


def test_a_csharp_bot_under_mono(contest: Path) -> None:
    mcs = need("mcs", "mono-mcs")
    need("mono", "mono-runtime")
    (contest / "cs").mkdir()
    exe = contest / "cs" / "PassBot.exe"
    subprocess.run([mcs, f"-out:{exe}", str(SOURCES / "PassBot.cs")], check=True,
                   timeout=300, capture_output=True)  # fmt: skip
    stderr = play("mono cs/PassBot.exe", contest)
    assert "csharp bot running as" in stderr


VENV_BOT = """
import runpy, sys
import cardarena_marker  # installed only in the bot's virtual environment
print(f"marker from {cardarena_marker.__file__}", file=sys.stderr, flush=True)
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def test_a_python_bot_with_a_virtual_environment_in_its_folder(contest: Path) -> None:
    folder = contest / "py"
    folder.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder / ".venv")],
                   check=True, timeout=120)  # fmt: skip
    python = folder / ".venv" / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    Path(site, "cardarena_marker.py").write_text("MARK = 1\n")
    (folder / "bot.py").write_text(VENV_BOT)
    shutil.copy(SOURCES / "pass_bot.py", folder / "pass_bot.py")
    stderr = play("py/.venv/bin/python py/bot.py py/pass_bot.py", contest)
    assert f"marker from {folder / '.venv' / 'lib'}" in stderr, stderr
    assert f"python bot running on {folder / '.venv'}" in stderr, stderr
