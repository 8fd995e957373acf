"""The bot sandbox against real hostile bots: each attack contained, each game scored.

Every hostile bot is a small Python script written into ``tmp_path``: it makes its
attack at its first input, writes what happened on its stderr (kept in the game
log), then answers PASS to everything, so that the in-process greedy agent (or a
greedy bot process) beats it in about a second.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardarena.locm.engine.state import EndReason
from cardarena.locm.referee import sandbox
from cardarena.locm.referee.game_loop import GameOutcome, TimeControl, play_game
from cardarena.tournaments.store import TournamentStore
from tests.locm.bots import BOTS, NEEDS_SANDBOX, new_tag, tagged_processes, wait_until_gone

pytestmark = NEEDS_SANDBOX

LOCM = [sys.executable, "-m", "cardarena.locm"]
ROOT = Path(__file__).resolve().parents[2]
GREEDY_PROCESS = f"{sys.executable} -m cardarena.locm bot greedy --seed 1 --time-scale 10"
SCALE = 10.0
"""Every time limit times this: the bots here are quick, but the machine may be busy."""

PASS_LOOP = """
import os, sys

def say(text):
    print(text, file=sys.stderr, flush=True)

def skip_rest_of_input():
    sys.stdin.readline()
    actions = int(sys.stdin.readline().split()[1])
    for _ in range(actions):
        sys.stdin.readline()
    for _ in range(int(sys.stdin.readline())):
        sys.stdin.readline()

def sandboxed():
    with open("/proc/1/cmdline", "rb") as file:  # our PID namespace's init
        return file.read().startswith(b"bwrap")

def main(guarded):
    first = True
    while sys.stdin.readline():
        skip_rest_of_input()
        if first:
            first = False
            if guarded and not sandboxed():  # never attack the machine running the tests
                say("NOT SANDBOXED: attack skipped")
            else:
                attack()
        print("PASS", flush=True)
"""


def hostile_bot(tmp_path: Path, attack: str, tag: str = "", guarded: bool = True) -> str:
    """The command of a PASS bot that runs ``attack`` (Python, body of ``attack()``) first,
    if ``guarded`` only where it is sandboxed: a test that lost its sandbox must fail, not
    kill every process of the machine."""
    body = "\n".join("    " + line for line in attack.strip().splitlines())
    script = tmp_path / "hostile_bot.py"
    script.write_text(f"{PASS_LOOP}\ndef attack():\n{body}\n\nmain({guarded})\n")
    return f"{sys.executable} {script} {tag}".rstrip()


def play(
    command: str, opponent: str = "builtin:greedy", bot_env: tuple[tuple[str, str], ...] = ()
) -> GameOutcome:
    """One short 1.5 game; limits scaled so that a busy machine cannot turn it into a timeout."""
    return play_game(
        command, opponent, version="1.5", params={"seed": 1}, time_control=TimeControl(SCALE),
        bot_env=bot_env,
    )  # fmt: skip


def stderr_of(outcome: GameOutcome, player: int = 0) -> str:
    return "".join(text or "" for text in outcome.log["errors"][str(player)])


def assert_normal_loss(outcome: GameOutcome) -> None:
    """The PASS bot lost on health to the honest greedy player: a real, scored game."""
    assert outcome.scores == (0, 1), stderr_of(outcome)
    assert outcome.end_reason == EndReason.HEALTH
    assert outcome.error_player is None


@pytest.fixture(autouse=True)
def readable_tmp_path(tmp_path: Path) -> None:
    """pytest makes ``tmp_path`` its owner's alone; as root the bot runs as another user,
    and bot files must be readable by all (as in a contest's checkout, umask 022)."""
    tmp_path.chmod(0o755)


@pytest.fixture
def tag() -> Iterator[str]:
    value = new_tag()
    yield value
    left = wait_until_gone(value)
    for pid, _state in left:  # never leave an escaped process on the machine
        os.kill(pid, signal.SIGKILL)
    assert left == [], "bot processes outlived the game"


@pytest.fixture
def system_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python3`` found outside /tmp: an interpreter environment under /tmp (say the test
    run's own venv) would be bound too, which other tests cover."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")


def shown_binds(argv: list[str]) -> list[str]:
    """The host paths a sandbox shows besides the system folders and its /etc."""
    return [
        argv[i + 2] for i, word in enumerate(argv)
        if word == "--ro-bind" and argv[i + 1] != "/dev/null"
        and not any(argv[i + 2] == r or argv[i + 2].startswith(r + "/")
                    for r in (*sandbox.SYSTEM_ROOTS, "/etc"))
    ]  # fmt: skip


@pytest.mark.usefixtures("system_python")
def test_wrap_shows_the_bot_files_under_the_host_tmp_in_an_empty_cwd(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("")
    argv = sandbox.wrap(f"python3 {tmp_path / 'bot.py'} --log=/tmp", cwd="/work")
    assert argv[argv.index("--chdir") + 1] == "/work"
    # Not all of the host's /tmp, nor the working directory: an empty folder stands there.
    assert shown_binds(argv) == [str(tmp_path)]
    pairs = list(itertools.pairwise(argv))
    assert pairs.index(("--tmpfs", "/work")) < pairs.index(("--remount-ro", "/work"))
    assert argv[-1] == f"python3 {tmp_path / 'bot.py'} --log=/tmp"


@pytest.mark.usefixtures("system_python")
def test_a_bot_file_right_in_tmp_is_bound_alone() -> None:
    argv = sandbox.wrap("python3 /tmp", cwd="/")
    assert shown_binds(argv) == []
    # Any existing file outside /tmp stands in (only its path matters): the standard
    # library's, not this test file, which a checkout under /tmp would put in /tmp (a link
    # into /tmp also shows the folder it points into, or the bot could not be found).
    target = Path(os.__file__).resolve()
    if Path("/tmp") in target.parents:
        pytest.skip("the standard library itself is under /tmp")
    link = Path("/tmp") / f"cardarena-test-{os.getpid()}.py"
    link.symlink_to(target)
    try:
        argv = sandbox.wrap(f"python3 {link}", cwd="/")
    finally:
        link.unlink()
    shown = shown_binds(argv)
    assert str(link) in shown and "/tmp" not in shown
    assert all(path == str(link) or Path(path) == target.parent for path in shown), shown


def test_pid_max_is_written_only_where_the_kernel_keeps_one_per_namespace() -> None:
    assert sandbox.per_namespace_pid_max("6.14.0")
    assert sandbox.per_namespace_pid_max("6.18.44-fc-v657")
    assert not sandbox.per_namespace_pid_max("6.1.0-18-amd64")  # Debian 12: global
    assert not sandbox.per_namespace_pid_max("5.15.0")
    assert not sandbox.per_namespace_pid_max("unknown")


def test_setsid_and_double_forked_children_die_with_the_game(tmp_path: Path, tag: str) -> None:
    sleeper = f"import time; time.sleep(600)  # {tag}"
    attack = f"""
import signal, subprocess
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])  # for sigwait below
subprocess.Popen([sys.executable, "-c", {sleeper!r}], start_new_session=True)
if os.fork() == 0:  # double fork: the grandchild is orphaned at once
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", {sleeper!r}])
    os._exit(0)
os.wait()
say("children started")
signal.sigwait([signal.SIGUSR1])  # the test has seen them
"""
    command = hostile_bot(tmp_path, attack, tag)
    result: list[GameOutcome] = []
    game = threading.Thread(target=lambda: result.append(play(command)), daemon=True)
    game.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        sleepers = [pid for pid, _ in tagged_processes(tag) if b"sleep" in _cmdline(pid)]
        if len(sleepers) == 2:
            break
        time.sleep(0.02)
    assert len(sleepers) == 2, "the bot's children never started"
    # The bot itself, not the bwrap processes whose argv holds its command line.
    bot = [pid for pid, _ in tagged_processes(tag) if _cmdline(pid).split(b"\0")[1:2]
           and _cmdline(pid).split(b"\0")[1].endswith(b"hostile_bot.py")]  # fmt: skip
    assert len(bot) == 1
    os.kill(bot[0], signal.SIGUSR1)
    game.join(60)
    assert result, "the game did not finish"
    assert_normal_loss(result[0])
    assert "children started" in stderr_of(result[0])
    # The tag fixture then checks that neither sleeper (nor the bot) is left.


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


KILL_EVERYTHING = """
import signal, subprocess
seen = [int(p) for p in os.listdir("/proc") if p.isdigit()]
for pid in seen + [os.getppid(), 1]:
    if pid != os.getpid():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError as error:
            say(f"kill {pid}: {error.strerror}")
referee = int(os.environ.get("CARDARENA_TEST_REFEREE", "0"))
if referee:
    try:
        os.kill(referee, signal.SIGKILL)
    except OSError as error:
        say(f"kill referee {referee}: {error.strerror}")
subprocess.run(["pkill", "-9", "-f", "locm bot"], check=False)
subprocess.run(["pkill", "-9", "-f", "greedy"], check=False)
say(f"visible pids: {sorted(seen)}")
say(f"my parent is {os.getppid()}")
"""


def test_a_bot_cannot_kill_its_opponent(tmp_path: Path, tag: str) -> None:
    outcome = play(hostile_bot(tmp_path, KILL_EVERYTHING, tag), GREEDY_PROCESS)
    assert_normal_loss(outcome)  # the greedy bot process played on and won
    assert "visible pids: [1, 2" in stderr_of(outcome)  # its own namespace only


def test_a_bot_cannot_kill_the_referee(tmp_path: Path, tag: str) -> None:
    command = hostile_bot(tmp_path, KILL_EVERYTHING, tag)
    referee = subprocess.Popen(
        [*LOCM, "play", "-p1", command, "-p2", "builtin:greedy", "-d", "seed=1",
         "--time-scale", "10", "-l", str(tmp_path / "game.json")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    out, err = referee.communicate(timeout=60)
    assert referee.returncode == 0, err
    assert out.splitlines()[:2] == ["0", "1"]
    log = json.loads((tmp_path / "game.json").read_text())
    assert log["cardarena"]["endReason"] == "HEALTH"
    errors = "".join(text or "" for text in log["errors"]["0"])
    assert "my parent is 1\n" in errors  # the sandbox's init, not the referee


def test_a_bot_cannot_kill_a_referee_whose_pid_it_knows(tmp_path: Path, tag: str) -> None:
    # The pid of this very process (the referee here) is handed to the bot.
    outcome = play(
        hostile_bot(tmp_path, KILL_EVERYTHING, tag),
        bot_env=(("CARDARENA_TEST_REFEREE", str(os.getpid())),),
    )
    assert_normal_loss(outcome)
    assert f"kill referee {os.getpid()}: No such process" in stderr_of(outcome)


def test_a_bot_cannot_write_outside_its_tmp(tmp_path: Path, tag: str) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("original")
    attack = f"""
for path in [{str(target)!r}, {str(tmp_path / "new.txt")!r}, {str(ROOT / "pwned")!r},
             {str(Path.home() / "pwned")!r}]:
    try:
        with open(path, "a") as file:
            file.write("pwned")
        say(f"WROTE {{path}}")
    except OSError as error:
        say(f"cannot write {{path}}: {{error.strerror}}")
for place in ("/tmp", os.environ["HOME"]):  # the private /tmp and HOME are writable
    with open(os.path.join(place, "scratch-" + sys.argv[1]), "w") as file:
        file.write("mine")
    say(f"{{place}} ok")
"""
    outcome = play(hostile_bot(tmp_path, attack, tag))
    assert_normal_loss(outcome)
    errors = stderr_of(outcome)
    assert "WROTE" not in errors and "/tmp ok" in errors and f"{sandbox.BOT_HOME} ok" in errors
    assert errors.count("Read-only file system") == 3
    # The referee's own HOME is not even there (a read-only root above it).
    assert f"cannot write {Path.home() / 'pwned'}: " in errors
    assert target.read_text() == "original"
    assert not (tmp_path / "new.txt").exists() and not (ROOT / "pwned").exists()
    assert not (Path.home() / "pwned").exists()
    assert not Path(f"/tmp/scratch-{tag}").exists()  # it was the bot's own /tmp


def test_the_bots_user_is_known_whatever_the_referees_umask(tmp_path: Path, tag: str) -> None:
    attack = """
import pwd
say(f"USER {pwd.getpwuid(os.getuid()).pw_name}")
say(f"MODE {oct(os.stat('/etc/passwd').st_mode & 0o777)}")
"""
    command = hostile_bot(tmp_path, attack, tag)
    old = os.umask(0o077)  # an organiser's strict umask: the referee's files are its own
    try:
        outcome = play(command)
    finally:
        os.umask(old)
    assert_normal_loss(outcome)
    errors = stderr_of(outcome)
    assert f"USER {sandbox.BOT_USER}" in errors and "MODE 0o644" in errors, errors


def test_a_tournament_bot_cannot_touch_the_database_or_the_worker(tmp_path: Path) -> None:
    db = tmp_path / "t.db"  # next to the bot's script: visible in its sandbox, read-only
    attack = (
        KILL_EVERYTHING
        + f"""
try:
    with open({str(db)!r}, "rb") as file:
        say(f"READ {{len(file.read())}} bytes")
except OSError as error:
    say(f"cannot read the database: {{error.strerror}}")
for path in [{str(db)!r}, {str(db)!r} + ".lock", {str(db.parent / "pwned")!r}]:
    try:
        with open(path, "ab") as file:
            file.write(b"PWNED")
        say(f"WROTE {{path}}")
    except OSError as error:
        say(f"cannot write {{path}}: {{error.strerror}}")
try:
    os.unlink({str(db)!r})
    say("DELETED")
except OSError as error:
    say(f"cannot delete: {{error.strerror}}")
"""
    )
    evil = hostile_bot(tmp_path, attack)
    done = subprocess.run(
        [*LOCM, "tournament", "--bot", f"evil={evil}", "--bot", "builtin:greedy", "--games", "1",
         "--workers", "1", "--db", str(db), "--quiet", "--version", "1.5", "--json",
         "--time-scale", "10"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "played 2 new games" in done.stderr
    assert b"PWNED" not in db.read_bytes()
    assert not (db.parent / "pwned").exists()
    with TournamentStore(str(db), lock=False, create=False) as store:
        records = store.records(with_logs=True)
        assert len(records) == 2 and all(r.result == "win" for r in records)
        assert all(r.error_kind is None for r in records)  # greedy won on health, no crash
        logs = [store.log(r.key) for r in records]
    errors = "".join(
        text or "" for log in logs if log for text in log["errors"]["0"] + log["errors"]["1"]
    )
    assert "WROTE" not in errors and "DELETED" not in errors and "READ" not in errors
    # Per game: 1 read (no peeking at the other games), 3 writes and 1 delete refused.
    assert errors.count("cannot read the database: Permission denied") == 2
    assert errors.count("cannot ") == 2 * 5


def test_a_fork_bomb_is_contained(tmp_path: Path, tag: str) -> None:
    attack = """
import signal
children = 0
for _ in range(2000):  # bounded, whatever happens
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        signal.pause()
        os._exit(0)
    children += 1
say(f"forked {children}")
"""
    outcome = play(hostile_bot(tmp_path, attack, tag))
    assert_normal_loss(outcome)
    forked = int(stderr_of(outcome).split("forked ")[1].split()[0])
    limit = sandbox.DEFAULT_LIMITS.tasks
    if sandbox.per_namespace_pid_max():
        assert limit <= forked < limit + sandbox.RESERVED_PIDS
    elif os.getuid() != 0:  # RLIMIT_NPROC, which the kernel does not apply to root
        assert forked < limit
    # The tag fixture then checks that none of the children is left.


def test_filling_tmp_is_limited(tmp_path: Path, tag: str) -> None:
    attack = """
for place in ("/tmp", "/dev/shm"):
    total = 0
    chunk = b"x" * (1 << 20)
    for index in range(1000):  # at most 1000 MiB, bounded
        try:
            with open(f"{place}/fill{index}", "wb") as file:
                for _ in range(8):
                    file.write(chunk)
                    file.flush()
                    total += 1
        except OSError as error:
            say(f"{place} full after {total} MiB: {error.strerror}")
            break
"""
    outcome = play(hostile_bot(tmp_path, attack, tag))
    assert_normal_loss(outcome)
    errors = stderr_of(outcome)
    limit_mib = sandbox.DEFAULT_LIMITS.tmp_bytes >> 20
    for place in ("/tmp", "/dev/shm"):
        used = int(errors.split(f"{place} full after ")[1].split()[0])
        assert limit_mib - 8 <= used <= limit_mib


def test_a_bot_has_no_network(tmp_path: Path, tag: str) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        attack = f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    say("CONNECTED")
except OSError as error:
    say(f"connect failed: {{error}}")
say(f"/run holds {{os.listdir('/run')}}")  # no host daemon's Unix socket either
"""
        outcome = play(hostile_bot(tmp_path, attack, tag))
        with pytest.raises(BlockingIOError):
            server.accept()
    assert_normal_loss(outcome)
    assert "connect failed" in stderr_of(outcome)
    assert "/run holds []" in stderr_of(outcome)


def test_no_sandbox_runs_bots_as_before(tmp_path: Path, tag: str) -> None:
    marker = tmp_path / "marker.txt"
    attack = f"""
try:
    with open({str(marker)!r}, "w") as file:
        file.write(str(os.getppid()))
except OSError as error:
    say(f"cannot write: {{error.strerror}}")
"""
    command = hostile_bot(tmp_path, attack, tag, guarded=False)  # a harmless attack
    args = [*LOCM, "play", "-p1", command, "-p2", "builtin:greedy", "-d", "seed=1"]
    args += ["--time-scale", "10"]
    sandboxed = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert sandboxed.stdout.splitlines()[:2] == ["0", "1"] and not marker.exists()
    plain = subprocess.run([*args, "--no-sandbox"], cwd=ROOT, capture_output=True, text=True,
                           timeout=60)  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.splitlines()[:2] == ["0", "1"] and plain.stderr == ""
    assert marker.read_text() != "1"  # a real parent pid: outside any PID namespace


def test_without_bwrap_one_warning_and_the_game_is_played(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "prlimit", "setpriv"):  # everything but bwrap
        os.symlink(f"/usr/bin/{tool}" if Path(f"/usr/bin/{tool}").exists() else f"/bin/{tool}",
                   bin_dir / tool)  # fmt: skip
    bot = str(BOTS / "pass_bot.sh")
    done = subprocess.run(
        [*LOCM, "play", "-p1", bot, "-p2", bot, "-d", "seed=1", "--time-scale", "10"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={**os.environ, "PATH": str(bin_dir)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) >= 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "warning: bots run without a sandbox (bwrap not found" in lines[0]


def test_killing_the_sandbox_init_kills_every_descendant(
    tag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    # The namespace alone (a bot cgroup would freeze the bot until its first input).
    monkeypatch.setenv("CARDARENA_CGROUPS", "off")

    from cardarena.locm.referee.players import ProcessPlayer, _only_child

    sleeper = f"{sys.executable} -c 'import time; time.sleep(600)' {tag}"

    def sleepers(tag: str) -> list[int]:
        script = [b"import time; time.sleep(600)"]
        return [
            pid for pid, _ in tagged_processes(tag) if _cmdline(pid).split(b"\0")[2:3] == script
        ]

    command = f"setsid {sleeper} & (setsid {sleeper} &) ; {sleeper}"

    async def scenario() -> None:
        player = ProcessPlayer(command, sandbox=True)
        await player.start()
        try:
            assert player.sandboxed
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 30
            while len(sleepers(tag)) < 3 and loop.time() < deadline:
                await asyncio.sleep(0.02)
            assert len(sleepers(tag)) == 3
            process = player._process
            assert process is not None
            init = _only_child(process.pid)
            assert init is not None
            os.kill(init, signal.SIGKILL)  # not bwrap, our child: the namespace's init
            await asyncio.wait_for(process.wait(), 10)
        finally:
            await player.close()

    asyncio.run(scenario())
    # The tag fixture checks that all three sleepers are gone.


VENV_BOT = """
import runpy, sys
import cardarena_marker  # installed only in the bot's virtual environment
print(f"marker from {cardarena_marker.__file__}", file=sys.stderr, flush=True)
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def make_venv(where: Path) -> Path:
    """A real virtual environment (no pip) with a marker module in its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True,
                   timeout=120)  # fmt: skip
    python = where / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    Path(site, "cardarena_marker.py").write_text("MARK = 1\n")
    return python


def venv_bot_folder(tmp_path: Path) -> Path:
    """The bot's own folder (the referee's working directory), apart from its venv."""
    work = tmp_path / "work"
    (work / "MyBot").mkdir(parents=True)
    (work / "MyBot" / "play.py").write_text(VENV_BOT)
    return work


def test_a_bot_sees_its_whole_virtual_environment_under_tmp(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venvs" / "bot")  # under /tmp, outside the bot's folder
    work = venv_bot_folder(tmp_path)
    bot = f"MyBot/play.py {ROOT / 'examples' / 'bots' / 'minimal_bot.py'}"
    activated = {**os.environ, "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}"}
    for command, env in ((f"{python} {bot}", None), (f"python {bot}", activated)):
        log = tmp_path / "game.json"
        done = subprocess.run(
            [*LOCM, "play", "-p1", command, "-p2", "builtin:pass", "--version", "1.5", "-d",
             "seed=1", "--time-scale", "10", "-l", str(log)],
            cwd=work, capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert done.stdout.splitlines()[:2] == ["1", "0"], done.stdout
        bot_stderr = "".join(text or "" for text in json.loads(log.read_text())["errors"]["0"])
        assert f"marker from {tmp_path / 'venvs' / 'bot' / 'lib'}" in bot_stderr, bot_stderr


def test_a_virtual_environment_the_sandbox_cannot_show_is_named(tmp_path: Path) -> None:
    if not Path("/dev/shm").is_dir() or not os.access("/dev/shm", os.W_OK):
        pytest.skip("no writable /dev/shm to put a virtual environment in")
    hidden = Path(f"/dev/shm/cardarena-test-venv-{os.getpid()}")
    try:
        python = make_venv(hidden)
        work = venv_bot_folder(tmp_path)
        command = f"{python} MyBot/play.py {ROOT / 'examples' / 'bots' / 'minimal_bot.py'}"
        for args in (
            ["play", "-p1", command, "-p2", "builtin:pass", "-d", "seed=1"],
            ["tournament", "--bot", f"mine={command}", "--bot", "builtin:pass", "--games", "1",
             "--db", str(tmp_path / "t.db"), "--quiet"],
        ):  # fmt: skip
            done = subprocess.run([*LOCM, *args], cwd=work, capture_output=True, text=True,
                                  timeout=120)  # fmt: skip
            assert done.returncode == 2, done.stderr
            assert done.stderr.startswith("locm: error: ") and done.stderr.count("\n") == 1
            assert f"needs {hidden}, which the sandbox cannot show" in done.stderr, done.stderr
        assert not (tmp_path / "t.db").exists()
    finally:
        subprocess.run(["rm", "-rf", str(hidden)], check=False)
