"""Submissions are built in the bot sandbox, for real, and the built bots play.

One bot per language is uploaded the way a participant would (a single file, a zip of a
folder, a .tar.gz), built once per module, and plays one real game against the built-in
greedy agent in the referee's sandbox. Hostile builds (an endless one, one that reaches
for the network, for the server's files or for a symlink to /) fail with the reason in
their log. A toolchain that is not installed skips its test with the package to install.
"""

from __future__ import annotations

import io
import shutil
import socket
import tarfile
import zipfile
from pathlib import Path

import pytest

from cardarena.ladder.languages import LANGUAGES, Language
from cardarena.ladder.uploads import unpack
from cardarena.locm.engine.state import EndReason
from cardarena.locm.ladder import build as building
from cardarena.locm.ladder.build import BuildLimits, BuildResult, BuildUnavailable, build
from cardarena.locm.referee import cgroups, sandbox
from cardarena.locm.referee.game_loop import TimeControl, play_game
from tests.locm.bots import BOTS, NEEDS_SANDBOX

pytestmark = NEEDS_SANDBOX

ROOT = Path(__file__).resolve().parents[2]
SOURCES = BOTS / "languages"
EXAMPLES = ROOT / "examples" / "bots"
SCALE = 10.0
QUICK = BuildLimits(cpu_s=20, wall_s=60)

C_MAIN = b"""#include <stdio.h>
#include "answer.h"
int main(void) {
    char line[4096];
    int first = 1;
    while (fgets(line, sizeof line, stdin)) {  /* player 0 */
        int hand, actions, cards;
        fgets(line, sizeof line, stdin);          /* player 1 */
        if (scanf("%d %d\\n", &hand, &actions) != 2) return 1;
        for (int i = 0; i < actions; i++) fgets(line, sizeof line, stdin);
        if (scanf("%d\\n", &cards) != 1) return 1;
        for (int i = 0; i < cards; i++) fgets(line, sizeof line, stdin);
        if (first) { first = 0; fprintf(stderr, "c bot running\\n"); }
        puts(answer());
        fflush(stdout);
    }
    return 0;
}
"""
RUST_BOT = b"""use std::io::{self, BufRead, Write};
fn main() {
    let stdin = io::stdin();
    let mut lines = stdin.lock().lines();
    let mut first = true;
    while let Some(Ok(_)) = lines.next() {
        lines.next();
        let counts = lines.next().unwrap().unwrap();
        let actions: usize = counts.split_whitespace().nth(1).unwrap().parse().unwrap();
        for _ in 0..actions { lines.next(); }
        let cards: usize = lines.next().unwrap().unwrap().trim().parse().unwrap();
        for _ in 0..cards { lines.next(); }
        if first { first = false; eprintln!("rust bot running"); }
        println!("PASS");
        io::stdout().flush().unwrap();
    }
}
"""


def need(*tools: str) -> None:
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed here")


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def tarred(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def submit(
    folder: Path, data: bytes, filename: str, language: Language, limits: BuildLimits = QUICK
) -> tuple[BuildResult, Path]:
    """Unpack and build one upload as the ladder does: (the result, its output folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    unpack(data, filename, folder / "src")
    return build(folder / "src", language, folder / "out", limits), folder / "out"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("builds")


def play(command: str) -> str:
    """One game of the built bot against greedy in the referee's sandbox: it must play the
    whole game with no error of its own. Its stderr."""
    outcome = play_game(command, "builtin:greedy", version="1.5", params={"seed": 1},
                        time_control=TimeControl(SCALE))  # fmt: skip
    stderr = "".join(text or "" for text in outcome.log["errors"]["0"])
    assert outcome.error_player is None, stderr
    assert outcome.end_reason == EndReason.HEALTH, stderr
    assert outcome.scores is not None, stderr
    return stderr


def test_a_python_bot_uploaded_as_one_file(work: Path) -> None:
    data = (EXAMPLES / "minimal_bot.py").read_bytes()
    result, out = submit(work / "python", data, "my_bot.py", LANGUAGES["python"])
    assert result.ok, result.log
    assert result.command == f"python3 {out}/bot.py"
    assert (out / "bot.py").read_bytes() == data
    play(result.command)


def test_a_c_bot_uploaded_as_a_zip_of_a_folder_compiles_every_c_file(work: Path) -> None:
    need("gcc")
    # A file named like an option is still a file to the compiler.
    data = zipped({"bot/main.c": C_MAIN, "bot/answer.h": b"const char *answer(void);\n",
                   "bot/-answer.c": b'const char *answer(void) { return "PASS"; }\n'})  # fmt: skip
    result, out = submit(work / "c", data, "bot.zip", LANGUAGES["c"])
    assert result.ok, result.log
    assert result.command == f"{out}/bot"
    assert sorted(p.name for p in out.iterdir()) == ["bot"]
    assert "c bot running" in play(result.command)


def test_a_cpp_bot(work: Path) -> None:
    need("g++")
    data = (SOURCES / "pass_bot.cpp").read_bytes()
    result, _out = submit(work / "cpp", data, "pass_bot.cpp", LANGUAGES["cpp"])
    assert result.ok, result.log
    assert "cpp bot running" in play(result.command or "")


def test_a_java_bot_uploaded_as_a_tar_gz(work: Path) -> None:
    need("javac", "java")
    source = (SOURCES / "PassBot.java").read_bytes().replace(b"class PassBot", b"class Main")
    data = tarred({"Main.java": source, "README.txt": b"not built\n"})
    result, out = submit(work / "java", data, "bot.tar.gz", LANGUAGES["java"])
    assert result.ok, result.log
    assert result.command == f"java -cp {out} Main"
    stderr = play(result.command)
    user = sandbox.BOT_USER if sandbox.switches_user() else ""
    assert f"java bot running as {user}" in stderr


def test_a_csharp_bot(work: Path) -> None:
    need("mcs", "mono")
    data = (SOURCES / "PassBot.cs").read_bytes()
    result, _out = submit(work / "csharp", data, "PassBot.cs", LANGUAGES["csharp"])
    assert result.ok, result.log
    assert "csharp bot running" in play(result.command or "")


def test_a_rust_bot(work: Path) -> None:
    need("rustc")
    result, _out = submit(work / "rust", RUST_BOT, "main.rs", LANGUAGES["rust"])
    assert result.ok, result.log
    assert "rust bot running" in play(result.command or "")


def test_a_compile_error_is_a_failed_build_with_the_compilers_words(work: Path) -> None:
    need("gcc")
    data = b"int main(void) { return undeclared_thing; }\n"
    result, out = submit(work / "broken", data, "main.c", LANGUAGES["c"])
    assert not result.ok and result.command is None
    assert "undeclared_thing" in result.log and "error" in result.log
    assert result.log.endswith("[build failed: exit status 1]\n")
    assert not out.exists()


def test_a_python_syntax_error_fails_the_build(work: Path) -> None:
    data = zipped({"bot.py": b"import helper\n", "helper.py": b"def broken(:\n"})
    result, _out = submit(work / "python-broken", data, "bot.zip", LANGUAGES["python"])
    assert not result.ok
    assert "helper.py" in result.log and "SyntaxError" in result.log, result.log


def test_a_build_over_its_memory_budget_is_stopped(work: Path) -> None:
    memory = cgroups.memory_support()
    if not memory.ok:
        pytest.skip(f"no memory controller for the build's cgroup here: {memory.reason}")
    hog = Language("hog", "main.sh", ("python3", "-c", "x = bytearray(300 << 20)"), ("{out}/bot",))
    limits = BuildLimits(cpu_s=20, wall_s=60, memory_mb=100)
    result, _out = submit(work / "hog", b"#\n", "main.sh", hog, limits)
    assert not result.ok
    assert "[build stopped: out of memory (over its 100 MB budget)]" in result.log, result.log


def test_an_archive_without_its_entry_file_fails(work: Path) -> None:
    data = zipped({"a/helper.py": b"x = 1\n", "b/other.py": b"y = 2\n"})
    result, _out = submit(work / "noentry", data, "bot.zip", LANGUAGES["python"])
    assert not result.ok
    assert "needs its entry file bot.py" in result.log


def shell(name: str, script: str) -> Language:
    """A language whose build is a shell script: stands for a hostile compiler."""
    return Language(name, "main.sh", ("sh", "-c", script), ("{out}/bot",))


def test_an_endless_build_is_killed_at_the_wall_clock_limit(work: Path) -> None:
    endless = shell("endless", "sleep 987.654 & setsid sleep 987.654 & sleep 987.654")
    limits = BuildLimits(cpu_s=60, wall_s=1.5)
    result, _out = submit(work / "endless", b"#\n", "main.sh", endless, limits)
    assert not result.ok
    assert "[build stopped: over the 1.5 s wall-clock limit]" in result.log
    assert result.seconds < 20
    assert not [pid for pid in Path("/proc").iterdir() if b"987.654" in command_line(pid)]


def command_line(process: Path) -> bytes:
    try:
        return (process / "cmdline").read_bytes()
    except OSError:  # not a process, or one that has just ended
        return b""


def test_a_build_spinning_the_cpu_is_killed_at_the_cpu_limit(work: Path) -> None:
    spinner = shell("spinner", "while :; do :; done")
    limits = BuildLimits(cpu_s=1, wall_s=60)
    result, _out = submit(work / "spinner", b"#\n", "main.sh", spinner, limits)
    assert not result.ok
    assert "CPU-time limit" in result.log, result.log


REACH = """
import os, socket, sys
for path in FILES:
    try:
        open(path, "rb").close()
        print("READ", path)
    except OSError as error:
        print("refused", path, error.strerror)
for path in FOLDERS:
    try:
        print("listed", path, sorted(os.listdir(path)))
    except OSError as error:
        print("refused", path, error.strerror)
try:
    open("written_into_the_source", "w").close()
    print("WROTE the source folder")
except OSError:
    pass
print("uid", os.getuid(), "secret", os.environ.get("LADDER_TEST_SECRET"))
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=5).close()
    print("CONNECTED")
except OSError as error:
    print("no network:", error)
open(os.path.join(sys.argv[1], "bot"), "w").close()
"""


def test_a_build_sees_neither_the_network_nor_the_servers_files(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = work / "server"
    server.mkdir()
    database = server / "ladder.db"
    database.write_bytes(b"SQLite format 3\x00 tokens")
    monkeypatch.setenv("LADDER_TEST_SECRET", "hunter2")
    files = [database, ROOT / "pyproject.toml", Path("/etc/shadow"), Path.home() / ".profile",
             work / "python" / "src" / "my_bot.py"]  # fmt: skip
    folders = [server, ROOT, Path.home()]
    snoop = Language("snoop", "main.py", ("python3", "{main}", "{out}"), ("{out}/bot",))
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        script = (REACH.replace("PORT", str(listener.getsockname()[1]))
                  .replace("FILES", repr([str(p) for p in files]))
                  .replace("FOLDERS", repr([str(p) for p in folders])))  # fmt: skip
        result, out = submit(server / "submission", script.encode(), "main.py", snoop)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing reached the host's loopback
    assert result.ok, result.log
    assert "READ" not in result.log and "WROTE" not in result.log, result.log
    assert "ladder.db" not in result.log.replace(str(database), ""), result.log
    assert "pyproject.toml" not in result.log.replace(str(files[1]), ""), result.log
    assert "CONNECTED" not in result.log and "no network:" in result.log
    assert "secret None" in result.log
    if sandbox.switches_user():
        assert "uid 0 " not in result.log
    assert (out / "bot").is_file()


def test_a_symlink_in_the_output_is_refused(work: Path) -> None:
    linker = shell("linker", "ln -s / {out}/root && echo > {out}/bot")
    result, out = submit(work / "linker", b"#\n", "main.sh", linker)
    assert not result.ok
    assert "[build refused: archive member 'root' is a symlink]" in result.log
    assert not out.exists()


def test_an_output_over_its_cap_fails(work: Path) -> None:
    filler = shell("filler", "head -c 3000000 /dev/zero > {out}/bot")
    limits = BuildLimits(cpu_s=20, wall_s=60, output_bytes=1 << 20)
    result, out = submit(work / "filler", b"#\n", "main.sh", filler, limits)
    assert not result.ok
    assert "[build " in result.log
    assert not out.exists()


def test_no_build_runs_without_the_sandbox_unless_allowed(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(building, "sandbox_problem", lambda: "bwrap not found")
    folder = work / "unsandboxed"
    folder.mkdir()
    unpack(b"print('hi')\n", "bot.py", folder / "src")
    with pytest.raises(BuildUnavailable) as refused:
        build(folder / "src", LANGUAGES["python"], folder / "out")
    assert "bwrap not found" in str(refused.value) and "\n" not in str(refused.value)
    assert not (folder / "out").exists()
    result = build(folder / "src", LANGUAGES["python"], folder / "out", allow_unsandboxed=True)
    assert result.ok, result.log
    assert (folder / "out" / "bot.py").read_text() == "print('hi')\n"


def test_the_build_log_is_capped(work: Path) -> None:
    chatty = shell("chatty", 'yes "a long compiler message" | head -c 100000; echo > {out}/bot')
    limits = BuildLimits(cpu_s=20, wall_s=60, log_bytes=1000)
    result, _out = submit(work / "chatty", b"#\n", "main.sh", chatty, limits)
    assert result.ok
    assert result.log.endswith("[log cut: over its size limit]\n")
    assert len(result.log) < 1100
