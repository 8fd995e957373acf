"""Bots used by the referee tests, run as real processes, and helpers to run them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from cardarena.locm.referee import sandbox

BOTS = Path(__file__).resolve().parent
NEEDS_SANDBOX = pytest.mark.skipif(
    not sandbox.support().ok,
    reason=f"no working bubblewrap sandbox here ({sandbox.support().reason}): "
    "apt-get install bubblewrap",
)
"""For the tests that run bots in the real bubblewrap sandbox: ``pytestmark = NEEDS_SANDBOX``."""
PYTHON = sys.executable


def simple_bot(mode: str = "play", at: int = 0, tag: str = "") -> str:
    """The command of simple_bot.py misbehaving (``mode``) at its ``at``-th answer."""
    return f"{PYTHON} {BOTS / 'simple_bot.py'} {mode} {at} {tag}".rstrip()


def pass_bot(tag: str = "", *, ignore_term: bool = False) -> str:
    """The POSIX shell bot that answers PASS to everything."""
    return f"{BOTS / 'pass_bot.sh'} {'noterm' if ignore_term else '-'} {tag}".rstrip()


def new_tag() -> str:
    """A word unique to one test, put on its bots' command lines to find them in /proc."""
    return f"cardarena-test-{uuid.uuid4().hex}"


def compile_c_bot(directory: Path) -> Path:
    """Compile flood_bot.c with the system C compiler (the caller skips if there is none)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler is not None
    # pytest's folders are their owner's alone; run as root, a sandboxed bot is another
    # user, who must be able to read its program (as in a checkout made with umask 022).
    directory.chmod(0o755)
    binary = directory / "flood_bot"
    subprocess.run([compiler, "-O2", "-o", str(binary), str(BOTS / "flood_bot.c")], check=True)
    return binary


def tagged_processes(tag: str) -> list[tuple[int, str]]:
    """(pid, state) of every live process whose command line holds ``tag``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag.encode() in cmdline and state != "Z":
            found.append((int(entry.name), state))
    return found


def zombie_children() -> list[int]:
    """Zombies whose parent is this process: children the referee failed to reap."""
    zombies = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == os.getpid():
            zombies.append(int(entry.name))
    return zombies


REAP_WAIT_S = 30.0
"""How long the tests wait for a game's bot processes to be gone: a condition, over as soon
as they are, with room for a busy machine (5 s once failed at load 8)."""


def wait_until_gone(tag: str, timeout_s: float = REAP_WAIT_S) -> list[tuple[int, str]]:
    """Processes still carrying ``tag`` after waiting up to ``timeout_s`` for them to go."""
    deadline = time.monotonic() + timeout_s
    while (left := tagged_processes(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))
