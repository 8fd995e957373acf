"""The memory budget of a bot, against the real sandbox and real memory cgroups: three
hogs that each get past a per-process cap (memory in ``memfd`` files it never maps, in
forked children, in the sandbox's tmpfs folders) play a fat but legal opponent (150 MiB,
every page touched). The hog loses, out of memory; the opponent neither times out nor
crashes; the referee exits normally with its log; a tournament records every game and
counts the hog's losses. Small budgets (``--memory 192``) keep the tests cheap.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardarena.locm.referee import cgroups
from cardarena.tournaments.store import TournamentStore
from tests.locm.bots import BOTS, NEEDS_SANDBOX, new_tag, wait_until_gone

LOCM = [sys.executable, "-m", "cardarena.locm"]
ROOT = Path(__file__).resolve().parents[2]
BUDGET_MB = 192
"""Room for the fat bot (about 160 MiB with its interpreter), not for the tmpfs filler's
3 x 64 MiB nor for the other hogs."""
FAT = f"{sys.executable} {BOTS / 'memory_bot.py'} fat 150"
HOGS = {
    "memfd": "memfd 1000",  # 1000 MiB of memfd pages, never mapped
    "fork": "fork 1000",  # 8 children growing to 1000 MiB each
    "tmpfs": "tmpfs 64",  # /tmp, HOME and /dev/shm filled (64 MiB each, their limit)
}
MEMORY = cgroups.memory_support(cgroups.mode() if cgroups.mode() != "off" else "auto")

pytestmark = [
    NEEDS_SANDBOX,
    pytest.mark.skipif(
        not (cgroups.support("auto").ok and MEMORY.ok),
        reason=f"no memory cgroup here ({MEMORY.reason or cgroups.support('auto').reason}): "
        "run as root, or in a cgroup whose children have the memory controller",
    ),
]


def hog(mode: str, tag: str) -> str:
    return f"{sys.executable} {BOTS / 'memory_bot.py'} {HOGS[mode]} {tag}"


def leaked() -> set[str]:
    """Bot memory groups whose referee has exited (those of a live referee belong to a game
    still being played, perhaps by another test run)."""
    found = set()
    for name in os.listdir(MEMORY.parents[0]):
        owner = name.removeprefix(cgroups.NAME_PREFIX).split("-")[0]
        if name.startswith(cgroups.NAME_PREFIX) and not os.path.exists(f"/proc/{owner}"):
            found.add(name)
    return found


@pytest.fixture
def tag() -> Iterator[str]:
    value = new_tag()
    before = leaked()
    yield value
    left = wait_until_gone(value, 10.0)
    for pid, _state in left:  # never leave a hog on the machine
        os.kill(pid, 9)
    assert left == [], "bot processes outlived the game"
    # Another test's tournament whose worker was SIGKILLed has its groups reaped by its
    # main process a moment later: wait for that (bounded) before calling it a leak.
    deadline = time.monotonic() + 15.0
    while leaked() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leaked() - before == set(), "bot memory groups outlived their referee"


@pytest.fixture(autouse=True)
def readable_bots() -> None:
    """Run as root, a sandboxed bot is a user of its own: it must read its scripts."""
    if os.geteuid() == 0:
        for path in (BOTS, BOTS / "memory_bot.py", BOTS / "simple_bot.py"):
            path.chmod(path.stat().st_mode | 0o005)


@pytest.mark.parametrize(("mode", "seat"), [("memfd", 0), ("fork", 1), ("tmpfs", 1)])
def test_a_hog_loses_out_of_memory_and_nothing_else_is_touched(
    tmp_path: Path, tag: str, mode: str, seat: int
) -> None:
    players = [FAT, FAT]
    players[seat] = hog(mode, tag)
    log = tmp_path / "game.json"
    done = subprocess.run(
        [*LOCM, "play", "-p1", players[0], "-p2", players[1], "--version", "1.5",
         "-d", "seed=1", "--time-scale", "10", "--memory", str(BUDGET_MB), "-l", str(log)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr  # the referee lived, and says the result
    scores = done.stdout.splitlines()[:2]
    assert scores[seat] == "-1" and scores[1 - seat] == "0", done.stdout
    game = json.loads(log.read_text())["cardarena"]
    assert game["errorPlayer"] == seat and game["winner"] == 1 - seat
    assert game["outOfMemory"][seat] is True
    assert game["outOfMemory"][1 - seat] is False  # the opponent: no timeout, no crash
    assert game["memoryMB"] == [BUDGET_MB, BUDGET_MB]
    assert game["memoryPeakMB"][seat] >= BUDGET_MB - 1  # it reached its budget...
    assert game["memoryPeakMB"][1 - seat] >= 150  # ...and the fat opponent really held 150
    option = ("-p1", "-p2")[seat]
    [warning] = [line for line in done.stderr.splitlines() if option in line]
    assert "out of memory" in warning and f"its {BUDGET_MB} MB" in warning
    assert ("-p2", "-p1")[seat] not in done.stderr


def test_tmpfs_pages_count_in_the_budget(tmp_path: Path, tag: str) -> None:
    """Within a budget that holds them, the filler's 3 x 32 MiB of files show in its peak
    (they are charged to the bot that wrote them) and it plays on."""
    filler = f"{sys.executable} {BOTS / 'memory_bot.py'} tmpfs 32 {tag}"
    log = tmp_path / "game.json"
    done = subprocess.run(
        [*LOCM, "play", "-p1", filler, "-p2", "builtin:greedy", "--version", "1.5",
         "-d", "seed=1", "--time-scale", "10", "--memory", "400", "-l", str(log)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(log.read_text())
    wrote = "".join(e for e in result["errors"]["0"] if e)
    assert "'/tmp': 32" in wrote and "'/home/bot': 32" in wrote and "'/dev/shm': 32" in wrote
    game = result["cardarena"]
    assert game["outOfMemory"] == [False, False] and game["errorPlayer"] != 0
    assert game["memoryPeakMB"][0] >= 96  # the three files, whatever the interpreter holds
    assert game["memoryMB"] == [400, None]  # a built-in agent has no budget


def test_a_tournament_records_every_game_and_counts_the_hogs_losses(
    tmp_path: Path, tag: str
) -> None:
    db = tmp_path / "t.db"
    done = subprocess.run(
        [*LOCM, "tournament", "--bot", f"hog={hog('memfd', tag)}", "--bot", f"fat={FAT}",
         "--games", "1", "--workers", "2", "--db", str(db), "--quiet", "--version", "1.5",
         "--time-scale", "10", "--memory", str(BUDGET_MB), "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    with TournamentStore(str(db), lock=False, create=False) as store:
        records = store.records()
    assert len(records) == 2  # both seats, both recorded
    for record in records:
        hog_seat = 0 if record.first == "hog" else 1
        assert record.error_seat == hog_seat and record.winner == 1 - hog_seat
        assert record.error_kind == "memory"
        assert record.detail == f"out of memory (over its {BUDGET_MB} MB budget)"
        assert f"--memory {BUDGET_MB}" in record.replay
    bots = json.loads(done.stdout)["bots"]
    assert bots["hog"]["out_of_memory"] == 2 and bots["hog"]["wins"] == 0
    assert bots["fat"]["out_of_memory"] == 0 and bots["fat"]["timeouts"] == 0
    assert bots["fat"]["crashes"] == 0 and bots["fat"]["wins"] == 2


@pytest.mark.parametrize("value", ["0", "abc", "-5", "31", "1.5"])
@pytest.mark.parametrize("command", ["play", "tournament"])
def test_a_bad_budget_is_one_line_and_exit_2(command: str, value: str) -> None:
    if command == "play":
        argv = ["play", "-p1", "builtin:greedy", "-p2", "builtin:greedy"]
    else:
        argv = ["tournament", "--bot", "builtin:greedy", "--bot", "builtin:random"]
    done = subprocess.run([*LOCM, *argv, "--memory", value], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("locm: error: argument --memory: "), lines


@pytest.mark.skipif(MEMORY.kind != "v1", reason="makes a v1 memory cgroup around the referee")
def test_short_of_memory_around_the_referee_a_bot_dies_not_the_referee(
    tmp_path: Path, tag: str
) -> None:
    """Budgets that do not fit the memory around them: the referee in a 400 MB cgroup, a
    bot trying to hold 1000 MB of memfd pages, its default 768 MB budget not reached. The
    kernel kills a bot
    (``oom_score_adj``), never the referee, which writes its log; no bot reached its own
    budget, so none lost out of memory; the organiser was warned."""
    around = Path(MEMORY.parents[0]) / f"memory-test-{os.getpid()}-{tag[-8:]}"
    around.mkdir()
    try:
        for name in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"):
            if (around / name).exists():
                (around / name).write_text(str(400 << 20))
        log = tmp_path / "game.json"
        enter = 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"'
        done = subprocess.run(
            ["/bin/sh", "-c", enter, "enter", str(around), *LOCM, "play",
             "-p1", hog("memfd", tag), "-p2", f"{sys.executable} {BOTS / 'memory_bot.py'} fat 0",
             "--version", "1.5", "-d", "seed=1", "--time-scale", "10", "-l", str(log)],
            cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr  # the referee lived
        assert "2 bots at once × 768 MB budget is more than the 400 MB" in done.stderr
        game = json.loads(log.read_text())["cardarena"]
        assert game["outOfMemory"] == [False, False]  # a kill it did not earn is a crash
        assert game["errorPlayer"] in (0, 1)
        assert "exited with status 137" in done.stderr  # the kernel's SIGKILL, to a bot
    finally:
        wait_until_gone(tag, 10.0)
        left = (around / "cgroup.procs").read_text().split()
        for pid in left:
            os.kill(int(pid), 9)
        around.rmdir()


def test_where_the_memory_groups_are_found() -> None:
    """Apart from the freezer: the unified hierarchy's own cgroup, and the v1 ``memory``
    hierarchy's (hybrid machines have both; only a probe says which works)."""
    mountinfo = (
        "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
        "37 31 0:34 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
    )
    own = "6:freezer:/\n4:memory:/process_api/abc\n0::/\n"
    assert cgroups.memory_candidates(mountinfo, own) == {
        "v1": "/sys/fs/cgroup/memory/process_api/abc",
        "v2": "/sys/fs/cgroup/unified",
    }
    pure_v2 = "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n"
    assert cgroups.memory_candidates(pure_v2, "0::/system.slice/x.service\n") == {
        "v2": "/sys/fs/cgroup/system.slice/x.service"
    }
