"""Each bot in a cgroup of its own, against real cgroups (v2 and v1, where this machine has
them): background children frozen outside their bot's turns, CPU time counted, nothing
left behind.

The hostile bot here starts 16 children that leave its session (``setsid``) and its
process tree (a double fork) and spin; the well-behaved bot spends about 60 ms of CPU on
every answer. Without cgroups the spinners run through the well-behaved bot's turns and
time it out on a small machine; with them it never times out.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cardarena.locm.engine.state import EndReason
from cardarena.locm.referee import cgroups, sandbox
from cardarena.locm.referee.game_loop import GameOutcome, TimeControl, play_game
from cardarena.locm.referee.players import ProcessPlayer
from cardarena.tournaments.store import TournamentStore
from tests.locm.bots import BOTS, new_tag, tagged_processes, wait_until_gone

LOCM = [sys.executable, "-m", "cardarena.locm"]
ROOT = Path(__file__).resolve().parents[2]
KINDS = [kind for kind in ("v2", "v1") if cgroups.support(kind).ok]
SCALE = 10.0
"""Every time limit times this: on a busy machine, 60 ms of CPU can take several times as
long (16 spinning children timed the well-behaved bot out at 4 times the limits here)."""
CHILDREN = 16
SPIN_LIMIT_S = 120
"""A spinner gives up by itself after this long, so that a failing test leaves none."""

pytestmark = pytest.mark.skipif(
    not KINDS,
    reason="no usable cgroup here (v2: "
    f"{cgroups.support('v2').reason}; v1: {cgroups.support('v1').reason}): "
    "run as root, or in a delegated cgroup v2",
)

SPINNERS = f"""
import os, sys, time

def spin_detached():
    # setsid, then a double fork: out of the bot's session and process tree.
    child = os.fork()
    if child:
        os.waitpid(child, 0)
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    deadline = time.monotonic() + {SPIN_LIMIT_S}
    while time.monotonic() < deadline:
        pass
    os._exit(0)
"""

HOSTILE = (
    SPINNERS
    + f"""
started = False
while line := sys.stdin.readline():
    sys.stdin.readline()
    actions = int(sys.stdin.readline().split()[1])
    for _ in range(actions):
        sys.stdin.readline()
    for _ in range(int(sys.stdin.readline())):
        sys.stdin.readline()
    if not started:
        started = True
        for _ in range({CHILDREN}):
            spin_detached()
        print("started {CHILDREN} spinners", file=sys.stderr, flush=True)
    print("PASS", flush=True)
"""
)

WELL_BEHAVED = f"""
import sys, time
sys.path.insert(0, {str(BOTS)!r})
from simple_bot import answer, read_turn

while (block := read_turn(sys.stdin)) is not None:
    until = time.process_time() + 0.060  # 60 ms of CPU on every answer
    while time.process_time() < until:
        pass
    print(answer(*block), flush=True)
"""


def bot(tmp_path: Path, name: str, source: str, tag: str = "") -> str:
    """A bot script in ``tmp_path``, which is made readable by all: pytest makes it its
    owner's alone, and a sandboxed bot of a root referee runs as a user of its own. The
    command names the test bots' folder, which the sandbox then shows (``simple_bot``)."""
    tmp_path.chmod(0o755)
    script = tmp_path / f"{name}.py"
    script.write_text(source)
    return f"{sys.executable} {script} {BOTS} {tag}".rstrip()


def ours() -> set[str]:
    """This process's bot cgroups that exist now, in every hierarchy a kind could use."""
    prefix = f"{cgroups.NAME_PREFIX}{os.getpid()}-"
    found = set()
    for kind in KINDS:
        for parent in cgroups.support(kind).parents:
            found |= {os.path.join(parent, n) for n in os.listdir(parent) if n.startswith(prefix)}
    return found


def every_bot_cgroup() -> set[str]:
    found = set()
    for kind in KINDS:
        for parent in cgroups.support(kind).parents:
            found |= {os.path.join(parent, n) for n in os.listdir(parent)
                      if n.startswith(cgroups.NAME_PREFIX)}  # fmt: skip
    return found


def wait_for_value(
    read: Callable[[], set[str]], wanted: set[str], within_s: float = 15.0
) -> set[str]:
    """``read()`` once it gives ``wanted``, or its last value after ``within_s``."""
    deadline = time.monotonic() + within_s
    value = read()
    while value != wanted and time.monotonic() < deadline:
        time.sleep(0.05)
        value = read()
    return value


def leaked_since(before: set[str]) -> set[str]:
    """Bot cgroups made since ``before`` whose referee has exited (a leak): those of a live
    referee belong to a game still being played, e.g. by another test on another worker."""
    leaked = set()
    for path in every_bot_cgroup() - before:
        owner = os.path.basename(path).removeprefix(cgroups.NAME_PREFIX).split("-")[0]
        if not (owner.isdigit() and os.path.exists(f"/proc/{owner}")):
            leaked.add(path)
    return leaked


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test once per kind of cgroup this machine has; none of ours left afterwards."""
    monkeypatch.setenv(cgroups.MODE_VARIABLE, request.param)
    yield request.param
    assert ours() == set(), "bot cgroups outlived the test"


@pytest.fixture
def tag() -> Iterator[str]:
    value = new_tag()
    yield value
    left = wait_until_gone(value, 10.0)
    for pid, _state in left:  # never leave a spinner on the machine
        os.kill(pid, 9)
    assert left == [], "bot processes outlived the game"


def wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def stderr_of(outcome: GameOutcome, player: int) -> str:
    return "".join(text or "" for text in outcome.log["errors"][str(player)])


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
def test_background_children_take_no_cpu_from_the_opponent(
    tmp_path: Path, kind: str, tag: str, sandboxed: bool
) -> None:
    if sandboxed and not sandbox.support().ok:
        pytest.skip(f"no bubblewrap sandbox here: {sandbox.support().reason}")
    hostile = bot(tmp_path, "hostile", HOSTILE, tag)
    honest = bot(tmp_path, "honest", WELL_BEHAVED)
    for seats, seed in (((hostile, honest), 1), ((honest, hostile), 2)):
        outcome = play_game(*seats, version="1.5", params={"seed": seed},
                            time_control=TimeControl(SCALE), sandbox=sandboxed)  # fmt: skip
        hostile_seat = seats.index(hostile)
        honest_seat = 1 - hostile_seat
        assert f"started {CHILDREN} spinners" in stderr_of(outcome, hostile_seat)
        # The well-behaved bot beat the PASS bot on health: it never timed out.
        assert outcome.error_player is None, stderr_of(outcome, honest_seat)
        assert outcome.end_reason == EndReason.HEALTH
        assert outcome.winner == honest_seat
        cpu_ms = outcome.log["cardarena"]["cpuMs"]
        turns = sum(1 for out in outcome.log["outputs"][str(honest_seat)] if out)
        assert cpu_ms[honest_seat] >= 60 * turns  # its own CPU, counted from its cgroup
        assert cpu_ms[hostile_seat] > 0
        assert tagged_processes(tag) == []  # every spinner died with the game
        assert ours() == set()


def test_a_frozen_bots_children_make_no_cpu_progress(tmp_path: Path, kind: str, tag: str) -> None:
    hostile = bot(tmp_path, "hostile", HOSTILE, tag)
    control = subprocess.Popen([sys.executable, "-c", SPINNERS + "\nspin_detached()\n# " + tag])
    control.wait()  # its detached grandchild spins, unfrozen: the clock of this test
    spinner = [pid for pid, _ in tagged_processes(tag)]
    assert len(spinner) == 1

    def control_cpu_ns() -> int:
        fields = Path(f"/proc/{spinner[0]}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 10**9 // os.sysconf("SC_CLK_TCK")

    async def scenario() -> None:
        player = ProcessPlayer(hostile, sandbox=False)
        await player.start()
        group = player._cgroup
        try:
            assert group is not None and group.kind == kind and player.isolated
            wait_for(group.frozen, "the bot is frozen before its first input")
            await player.send("30 0 0 0 0\n30 0 0 0 0\n0 0\n0\n", None, 0)  # type: ignore[arg-type]
            assert await player.receive(60.0) == "PASS"
            # The answer froze the bot: its 16 spinners with it.
            wait_for(group.frozen, "the frozen state is reached")
            assert len(group.pids()) == 1 + CHILDREN
            before = group.cpu_ns()
            assert before is not None
            start = control_cpu_ns()
            wait_for(lambda: control_cpu_ns() - start >= 300_000_000,
                     "an unfrozen spinner has had 300 ms of CPU")  # fmt: skip
            after = group.cpu_ns()
            assert after is not None and after - before < 5_000_000, (before, after)
            # Its next turn thaws it: the spinners run again.
            await player.send("30 0 0 0 0\n30 0 0 0 0\n0 0\n0\n", None, 0)  # type: ignore[arg-type]
            wait_for(lambda: (group.cpu_ns() or 0) - after >= 100_000_000, "the spinners run")
        finally:
            await player.close()
        assert player.cpu_ns is not None and player.cpu_ns >= after + 100_000_000
        assert group.removed and not any(os.path.exists(d) for d in group.directories)

    try:
        asyncio.run(scenario())
    finally:
        os.kill(spinner[0], 9)


def test_a_bot_out_of_time_is_frozen_too(tmp_path: Path, kind: str, tag: str) -> None:
    """Deck building asks the players one after the other: a bot that ran out of time must
    not go on thinking (or spinning) through the other player's deck-building turn."""
    answer = '    print("PASS", flush=True)\n'
    silent = bot(tmp_path, "silent", HOSTILE.replace(answer, "    sys.stdin.read()\n"), tag)

    async def scenario() -> None:
        player = ProcessPlayer(silent, sandbox=False)
        await player.start()
        group = player._cgroup
        try:
            assert group is not None
            await player.send("30 0 0 0 0\n30 0 0 0 0\n0 0\n0\n", None, 0)  # type: ignore[arg-type]
            wait_for(lambda: len(group.pids()) == 1 + CHILDREN, "the spinners have started")
            assert await player.receive(0.01) is None  # no answer: out of time
            wait_for(group.frozen, "the bot is frozen")
        finally:
            await player.close()

    asyncio.run(scenario())


class Exploding:
    """A player whose third answer raises: a bug in the referee's side of the game."""

    name = "exploding"

    def __init__(self) -> None:
        self.asked = 0

    async def start(self) -> None:
        return None

    async def send(self, text: str, state: object, player: int) -> None:
        self.asked += 1

    async def receive(self, timeout_s: float | None) -> str | None:
        if self.asked >= 3:
            raise RuntimeError("the referee failed")
        return "PASS"

    def take_stderr(self) -> str | None:
        return None

    async def close(self) -> None:
        return None


@pytest.mark.parametrize("ending", ["timeout", "crash", "referee exception"])
def test_everything_in_the_cgroup_dies_however_the_game_ends(
    tmp_path: Path, kind: str, tag: str, ending: str
) -> None:
    """Unsandboxed, so that only the cgroup can reach the detached spinners."""
    then = {"timeout": "import time; time.sleep(600)", "crash": "os._exit(3)",
            "referee exception": "pass"}[ending]  # fmt: skip
    answer = '    print("PASS", flush=True)\n'
    source = HOSTILE.replace(answer, f"{answer}    {then}\n")
    hostile = bot(tmp_path, "hostile", source, tag)
    opponent: object = Exploding() if ending == "referee exception" else "builtin:greedy"
    if ending == "referee exception":
        with pytest.raises(RuntimeError, match="the referee failed"):
            play_game(hostile, opponent, version="1.5", params={"seed": 1},  # type: ignore[arg-type]
                      time_control=TimeControl(SCALE), sandbox=False)  # fmt: skip
    else:
        outcome = play_game(hostile, opponent, version="1.5", params={"seed": 1},  # type: ignore[arg-type]
                            time_control=TimeControl(0.5), sandbox=False)  # fmt: skip
        assert outcome.error_player == 0 and f"started {CHILDREN}" in stderr_of(outcome, 0)
    # Gone at once, not after a wait: the referee returned only once the cgroup was empty.
    assert tagged_processes(tag) == []
    assert ours() == set()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_stopped_referee_leaves_no_process_and_no_cgroup(
    tmp_path: Path, kind: str, tag: str, signum: int
) -> None:
    """``locm play`` stopped while the hostile bot's spinners are frozen (its opponent
    never answers): they are killed all the same, and the cgroup removed."""
    hostile = bot(tmp_path, "hostile", HOSTILE, tag)
    referee = subprocess.Popen(
        [*LOCM, "play", "-p1", hostile, "-p2", "sleep 600", "--no-time-limit", "--no-sandbox"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, CARDARENA_CGROUPS=kind),
    )  # fmt: skip
    try:
        wait_for(lambda: len(tagged_processes(tag)) >= 1 + CHILDREN, "the spinners run")
        prefix = f"{cgroups.NAME_PREFIX}{referee.pid}-"
        parents = cgroups.support(kind).parents
        groups = [
            os.path.join(p, n) for p in parents for n in os.listdir(p) if n.startswith(prefix)
        ]
        assert len(groups) == 2 * len(parents)  # one per bot, in each hierarchy
        referee.send_signal(signum)
        _, stderr = referee.communicate(timeout=60)
    finally:
        referee.kill()
    assert referee.returncode == (143 if signum == signal.SIGTERM else 130), stderr
    assert tagged_processes(tag) == []
    assert not any(os.path.exists(group) for group in groups)


def test_a_sandboxed_bot_cannot_leave_its_cgroup(tmp_path: Path, kind: str, tag: str) -> None:
    if not sandbox.support().ok:
        pytest.skip(f"no bubblewrap sandbox here: {sandbox.support().reason}")
    escape = bot(tmp_path, "escape", f"""
import os, sys
for path in sorted(set({list(cgroups.support(kind).parents)!r})):
    try:
        with open(os.path.join(path, "cgroup.procs"), "w") as file:
            file.write(str(os.getpid()))
        print("LEFT via", path, file=sys.stderr, flush=True)
    except OSError as error:
        print("stayed:", error.strerror, file=sys.stderr, flush=True)
while sys.stdin.readline():
    print("PASS", flush=True)
""", tag)  # fmt: skip
    outcome = play_game(escape, "builtin:greedy", version="1.5", params={"seed": 1},
                        time_control=TimeControl(10.0))  # fmt: skip
    assert "LEFT" not in stderr_of(outcome, 0) and "stayed:" in stderr_of(outcome, 0)
    assert outcome.winner == 1 and outcome.error_player is None


def test_a_tournament_gives_every_bot_its_own_cgroup(tmp_path: Path, tag: str) -> None:
    before = every_bot_cgroup()
    hostile = bot(tmp_path, "hostile", HOSTILE, tag)
    honest = bot(tmp_path, "honest", WELL_BEHAVED)
    db = tmp_path / "t.db"
    done = subprocess.run(
        [*LOCM, "tournament", "--bot", f"hostile={hostile}", "--bot", f"honest={honest}",
         "--games", "2", "--workers", "2", "--db", str(db), "--quiet", "--version", "1.5",
         "--time-scale", str(SCALE)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    with TournamentStore(str(db), lock=False, create=False) as store:
        records = store.records(with_logs=True)
        logs = [store.log(r.key) for r in records]
    assert len(records) == 4
    # No timeout, no crash: the PASS bot lost on health, or a long game hit the turn limit.
    assert all(r.error_seat is None and r.error_kind is None for r in records)
    assert all(r.end_reason in ("HEALTH", "TURN_LIMIT") for r in records)
    for record, log in zip(records, logs, strict=True):
        assert log is not None
        if record.end_reason == "HEALTH":
            assert log["cardarena"]["players"][record.winner] == honest
        assert all(ms is not None and ms > 0 for ms in log["cardarena"]["cpuMs"])
    # A tournament killed elsewhere (another test's worker SIGKILLed) has its cgroups
    # reaped by its main process a moment later: wait for that, bounded, before calling
    # what is left a leak.
    assert wait_for_value(lambda: leaked_since(before), set()) == set()


def readable_by_nobody(folder: Path) -> tuple[str, dict[str, str]]:
    """(the pass bot's command, the environment) for a referee run as nobody from
    ``folder``: a copy of the package, the pass bot and the seccomp binding in a folder
    anyone can read, so the test passes wherever it is cloned (a clone in root's home or a
    0700 temporary folder cannot be entered by nobody) and whatever Python runs it."""
    import pyseccomp

    folder.chmod(0o755)
    shutil.copytree(ROOT / "cardarena", folder / "cardarena",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))  # fmt: skip
    shutil.copy(pyseccomp.__file__, folder / "pyseccomp.py")
    shutil.copy(BOTS / "pass_bot.sh", folder / "pass_bot.sh")
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    env = {"HOME": "/", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(folder)}
    return f"/bin/sh {folder / 'pass_bot.sh'}", env


def test_off_and_unavailable_fall_back_with_one_warning(tmp_path: Path) -> None:
    passer = f"/bin/sh {BOTS / 'pass_bot.sh'}"  # any user can run it
    base = [*LOCM, "play", "-p1", passer, "-p2", "builtin:greedy", "--no-sandbox",
            "--time-scale", "10"]  # fmt: skip
    env = dict(os.environ, CARDARENA_CGROUPS="off")
    done = subprocess.run([*base, "-l", "/dev/stdout"], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert '"cpuMs"' not in done.stdout and '"memoryMB"' not in done.stdout  # nothing measured
    # An unprivileged user with no delegated cgroup: one warning line, the game is played.
    if os.geteuid() != 0:
        pytest.skip("needs root to run the referee as another user")
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    shared = Path(tempfile.mkdtemp(prefix="cardarena-nobody-", dir="/tmp"))
    try:
        passer, readable = readable_by_nobody(shared)
        base[base.index("-p1") + 1] = passer
        env = dict(os.environ, CARDARENA_CGROUPS="auto", **readable)
        done = subprocess.run([*nobody, *base], cwd=shared, capture_output=True, text=True,
                              env=env, timeout=120)  # fmt: skip
    finally:
        shutil.rmtree(shared)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "background processes can take CPU" in lines[0], lines
    assert done.stdout.splitlines()[:2] == ["0", "1"]  # the PASS bot lost a played game


def test_an_unknown_mode_is_one_line_and_exit_2() -> None:
    env = dict(os.environ, CARDARENA_CGROUPS="sometimes")
    done = subprocess.run(
        [*LOCM, "play", "-p1", "true", "-p2", "builtin:greedy", "--no-sandbox"],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "locm: error: CARDARENA_CGROUPS='sometimes': use one of auto, v2, v1, off"
    ]


def test_where_the_referee_cgroups_are_found() -> None:
    mountinfo = (
        "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
        "33 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
        "37 31 0:34 /docker/abc /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
    )
    own = "6:freezer:/docker/abc/x\n2:cpu,cpuacct:/a b\n0::/user.slice/s.scope\n"
    assert cgroups.candidates(mountinfo, own) == {
        "v2": ("/sys/fs/cgroup/unified/user.slice/s.scope",),
        "v1": ("/sys/fs/cgroup/freezer/x", "/sys/fs/cgroup/cpu,cpuacct/a b"),
    }
    pure_v2 = "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n"
    assert cgroups.candidates(pure_v2, "0::/\n") == {"v2": ("/sys/fs/cgroup",)}
    # A hierarchy whose mounted root does not hold our cgroup is no use.
    elsewhere = "37 31 0:34 /other /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n"
    assert cgroups.candidates(elsewhere, "6:freezer:/docker/abc\n") == {}


def test_empty_cgroups_of_a_referee_that_is_gone_are_removed(kind: str) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    pid = int(dead.stdout)
    assert not Path(f"/proc/{pid}").exists()
    parents = cgroups.support(kind).parents
    stale = [os.path.join(parent, f"{cgroups.NAME_PREFIX}{pid}-test") for parent in parents]
    live = [os.path.join(parent, f"{cgroups.NAME_PREFIX}{os.getpid()}-test") for parent in parents]
    try:
        for directory in stale + live:
            os.mkdir(directory)
        removed = cgroups.remove_stale(parents)
        assert sorted(removed) == sorted(stale)
        assert all(os.path.isdir(directory) for directory in live)  # ours: alive, kept
    finally:
        for directory in stale + live:
            if os.path.isdir(directory):
                os.rmdir(directory)


@pytest.mark.skipif("v2" not in KINDS, reason="no cgroup v2 here")
def test_a_delegated_cgroup_v2_serves_an_unprivileged_referee() -> None:
    """What a user gets from ``systemd-run --user --scope -p Delegate=yes``: their own
    cgroup v2, which they may write; the referee makes its bot cgroups inside it."""
    if os.geteuid() != 0:
        pytest.skip("needs root to delegate a cgroup to another user")
    delegated = Path(cgroups.support("v2").parents[0]) / f"delegated-test-{os.getpid()}"
    folder = Path(tempfile.mkdtemp(prefix="cardarena-delegated-", dir="/tmp"))
    try:
        delegated.mkdir()
        for name in ("", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"):
            os.chown(delegated / name, 65534, 65534)
        passer, readable = readable_by_nobody(folder)
        folder.chmod(0o777)  # nobody writes the log here
        log = folder / "game.json"
        enter = f'echo $$ > "{delegated}/cgroup.procs" && exec "$@"'
        done = subprocess.run(
            ["/bin/sh", "-c", enter, "enter", "setpriv", "--reuid=65534", "--regid=65534",
             "--clear-groups", "--", *LOCM, "play", "-p1", passer, "-p2", "builtin:greedy",
             "--time-scale", "10", "-l", str(log)],
            cwd=folder, capture_output=True, text=True, timeout=120, check=False,
            env=dict(os.environ, CARDARENA_CGROUPS="v2", **readable),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        # Frozen and measured; but the memory controller is not handed down to the delegated
        # cgroup's children, nor is the v1 memory hierarchy nobody's: one warning, and each
        # bot process keeps only its address space cap.
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and "bots have no memory budget" in lines[0], lines
        assert "background processes" not in done.stderr
        game = json.loads(log.read_text())["cardarena"]
        cpu_ms = game["cpuMs"]
        assert cpu_ms[0] is not None and cpu_ms[0] > 0 and cpu_ms[1] is None
        assert "memoryMB" not in game  # no budget, none claimed
        assert not [p for p in delegated.iterdir() if p.is_dir()]  # its bot cgroup is gone
    finally:
        for pid in (delegated / "cgroup.procs").read_text().split() if delegated.exists() else []:
            os.kill(int(pid), 9)
        wait_for(lambda: not delegated.exists() or not (delegated / "cgroup.procs").read_text(),
                 "the delegated cgroup is empty")  # fmt: skip
        if delegated.exists():
            delegated.rmdir()
        shutil.rmtree(folder)
