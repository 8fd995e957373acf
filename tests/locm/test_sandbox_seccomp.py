"""The sandbox's seccomp filter against a real bot: no namespace, no rarely needed kernel
interface, through any system call table; the bot still plays its game.

The probing bot makes every attempt at its first input, writes one line per attempt on
its stderr (``NAME: ok`` or the error's name), then answers PASS. Without the filter,
``unshare -Ur``, a NETLINK_NETFILTER socket, keyctl, ptrace, io_uring and an i386
``unshare`` all succeed in the sandbox; with it each fails as the rules say. The contest
languages under the filter: ``tests/locm/test_sandbox_languages.py``.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardarena.locm.referee import sandbox, seccomp
from tests.locm.bots import NEEDS_SANDBOX

pytestmark = NEEDS_SANDBOX
NEEDS_FILTER = pytest.mark.skipif(
    not sandbox.support().seccomp,
    reason=f"no seccomp filter here: {sandbox.support().seccomp_reason}",
)
X86_64 = pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64 system call numbers")

LOCM = [sys.executable, "-m", "cardarena.locm"]
ROOT = Path(__file__).resolve().parents[2]
BOT_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
"""The probing bot's interpreter: the system's where there is one, which nobody can run."""

PROBE = r'''
import ctypes, errno, mmap, os, socket, subprocess, sys

libc = ctypes.CDLL(None, use_errno=True)


def say(name, result):
    print(f"{name}: {result}", file=sys.stderr, flush=True)


def name_of(number):
    return errno.errorcode.get(number, str(number))


def call(number, *args):
    """A raw x86_64 system call: "ok" or the error's name; a cloned child exits at once."""
    result = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    if result == 0 and number in (56, 435):  # clone, clone3: the child
        os._exit(0)
    return "ok" if result >= 0 else name_of(ctypes.get_errno())


def in_child(number, *args):
    """``call`` in a child process, so that what it changes (a namespace it entered) cannot
    change the next attempts' results."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(write, call(number, *args).encode())
        os._exit(0)
    os.close(write)
    result = os.read(read, 100).decode()
    os.waitpid(pid, 0)
    return result


def run(*argv):
    done = subprocess.run(argv, capture_output=True, text=True)
    return "ok" if done.returncode == 0 else f"exit {done.returncode} {done.stderr.strip()}"


def open_socket(family, kind, protocol=0):
    try:
        socket.socket(family, kind, protocol).close()
    except OSError as error:
        return name_of(error.errno)
    return "ok"


def i386_unshare():
    """unshare(CLONE_NEWUSER) through the i386 table (int 0x80), in a child process."""
    code = (b"\xb8\x36\x01\x00\x00"  # mov eax, 310 (unshare)
            b"\xbb\x00\x00\x00\x10"  # mov ebx, CLONE_NEWUSER
            b"\xcd\x80\xc3")  # int 0x80; ret
    source = (
        "import ctypes, errno, mmap\n"
        "page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
        f"page.write({code!r})\n"
        "address = ctypes.addressof(ctypes.c_char.from_buffer(page))\n"
        "result = ctypes.CFUNCTYPE(ctypes.c_int)(address)()\n"
        "print('ok' if result == 0 else errno.errorcode.get(-result, result))\n"
    )
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    return done.stdout.strip() or f"exit {done.returncode}"


buffer = ctypes.create_string_buffer(256)
address = ctypes.addressof(buffer)
say("unshare -Ur", run("unshare", "-Ur", "true"))
say("unshare -Urm mount tmpfs", run("unshare", "-Urm", "mount", "-t", "tmpfs", "none", "/tmp"))
say("unshare CLONE_NEWUSER", in_child(272, 0x10000000))
say("unshare CLONE_NEWNET", in_child(272, 0x40000000))
say("setns", in_child(308, os.open("/proc/self/ns/net", os.O_RDONLY), 0))
say("clone CLONE_NEWUSER", in_child(56, 0x10000000 | 17, 0, 0, 0, 0))
say("clone3", in_child(435, address, 88))
say("clone", in_child(56, 17, 0, 0, 0, 0))  # a plain fork still works
say("i386 unshare", i386_unshare())
words = {word: ctypes.create_string_buffer(word) for word in (b"none", b"/tmp", b"tmpfs")}
pointer = {word: ctypes.addressof(text) for word, text in words.items()}
say("mount tmpfs", call(165, pointer[b"none"], pointer[b"/tmp"], pointer[b"tmpfs"], 0, 0))
say("umount2", call(166, pointer[b"/tmp"], 2))
say("netlink netfilter", open_socket(socket.AF_NETLINK, socket.SOCK_RAW, 12))
say("netlink route", open_socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
say("af_alg", open_socket(38, socket.SOCK_SEQPACKET))
say("af_vsock", open_socket(40, socket.SOCK_STREAM))
say("inet6", open_socket(socket.AF_INET6, socket.SOCK_STREAM))
say("unix pair", "ok" if socket.socketpair() else "?")
say("keyctl", call(250, 0, -3, 1))  # KEYCTL_GET_KEYRING_ID of the session keyring
say("add_key", call(248, address, address, 0, 0, -3))
say("bpf", call(321, 0, address, 128))
say("perf_event_open", call(298, address, 0, -1, -1, 0))
say("userfaultfd", call(323, 0))
say("io_uring_setup", call(425, 1, address))
say("ptrace TRACEME", call(101, 0, 0, 0, 0))
say("process_vm_readv", call(310, os.getpid(), address, 1, address, 1, 0))
say("open_by_handle_at", call(304, -100, address, 0))
say("finit_module", call(313, 0, address, 0))
say("kexec_load", call(246, 0, 0, 0, 0))
'''

REFUSED = {
    "unshare CLONE_NEWUSER": "EPERM", "unshare CLONE_NEWNET": "EPERM", "setns": "EPERM",
    "clone CLONE_NEWUSER": "EPERM", "clone3": "ENOSYS", "mount tmpfs": "EPERM",
    "umount2": "EPERM", "netlink netfilter": "EPERM", "af_alg": "EPERM", "af_vsock": "EPERM",
    "keyctl": "EPERM", "add_key": "EPERM", "bpf": "EPERM", "perf_event_open": "EPERM",
    "userfaultfd": "EPERM", "io_uring_setup": "EPERM", "ptrace TRACEME": "EPERM",
    "process_vm_readv": "EPERM", "open_by_handle_at": "EPERM", "finit_module": "EPERM",
    "kexec_load": "EPERM",
}  # fmt: skip
"""What each attempt gets from the filter."""
ALLOWED = ("clone", "netlink route", "inet6", "unix pair")
"""What a runtime may need, still there."""


@pytest.fixture
def probe_dir() -> Iterator[Path]:
    """A folder for the probing bot that any user can read (the bot runs as another user
    under root, and the referee as nobody in the unprivileged test)."""
    folder = Path(tempfile.mkdtemp(prefix="cardarena-seccomp-"))
    folder.chmod(0o755)
    (folder / "probe_bot.py").write_text(PROBE + PASS_AFTER)
    (folder / "probe_bot.py").chmod(0o644)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


PASS_AFTER = """
while sys.stdin.readline():
    sys.stdin.readline()
    for _ in range(int(sys.stdin.readline().split()[1])):
        sys.stdin.readline()
    for _ in range(int(sys.stdin.readline())):
        sys.stdin.readline()
    print("PASS", flush=True)
"""
"""After probing, the bot answers PASS to every turn (reading each whole input)."""


def play_probe(
    folder: Path, prefix: tuple[str, ...] = (), extra_env: dict[str, str] | None = None
) -> dict[str, str]:
    """Play the probing bot against greedy with ``locm play`` (run under ``prefix``); check
    that it played a whole game (a loss on health) and return its attempts' results."""
    log = folder / "game.json"
    env = dict(os.environ, HOME="/", PYTHONDONTWRITEBYTECODE="1", **(extra_env or {}))
    done = subprocess.run(
        [*prefix, *LOCM, "play", "-p1", f"{BOT_PYTHON} {folder / 'probe_bot.py'}",
         "-p2", "builtin:greedy", "--version", "1.5", "-d", "seed=1", "--time-scale", "10",
         "-l", str(log)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    game = json.loads(log.read_text())
    stderr = "".join(text or "" for text in game["errors"]["0"])
    assert game["cardarena"]["endReason"] == "HEALTH", stderr
    assert game["cardarena"]["errorPlayer"] is None, stderr
    return dict(re.findall(r"^([^:\n]+): (.*)$", stderr, re.MULTILINE))


def assert_refused(results: dict[str, str]) -> None:
    assert results["unshare -Ur"].startswith("exit 1 unshare: unshare failed"), results
    assert "Operation not permitted" in results["unshare -Ur"], results
    assert results["unshare -Urm mount tmpfs"].startswith("exit 1"), results
    assert {name: results.get(name) for name in REFUSED} == REFUSED
    assert {name: results.get(name) for name in ALLOWED} == dict.fromkeys(ALLOWED, "ok")
    # The i386 table is refused whole (ENOSYS); a kernel without i386 emulation kills the
    # child before any filter: never "ok" either way.
    assert results["i386 unshare"] in ("ENOSYS", "exit -11"), results


@NEEDS_FILTER
@X86_64
def test_a_bot_creates_no_namespace_and_reaches_no_refused_interface(probe_dir: Path) -> None:
    assert_refused(play_probe(probe_dir))


@NEEDS_FILTER
@X86_64
def test_an_unprivileged_referee_gets_the_same_filter(probe_dir: Path) -> None:
    if os.geteuid() != 0:
        assert_refused(play_probe(probe_dir))
        return
    probe_dir.chmod(0o777)  # the game log is written there by nobody
    # The binding where nobody can import it (a root-only interpreter's site-packages is
    # not), and no cgroup warning (nobody has no delegated cgroup here).
    import pyseccomp

    lib = probe_dir / "lib"
    lib.mkdir(mode=0o755)
    shutil.copy(pyseccomp.__file__, lib / "pyseccomp.py")
    env = {"PYTHONPATH": os.pathsep.join((str(lib), str(ROOT))), "CARDARENA_CGROUPS": "off"}
    nobody = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--")
    assert_refused(play_probe(probe_dir, nobody, env))


@NEEDS_FILTER
def test_the_filter_is_built_once_and_reads_from_a_fresh_descriptor() -> None:
    code = seccomp.program()
    assert code is not None and code is seccomp.program()
    assert len(code) % 8 == 0  # whole classic BPF instructions
    first, second = seccomp.open_program(), seccomp.open_program()
    assert first is not None and second is not None
    try:
        assert os.read(first, len(code) + 1) == code  # each from its start
        assert os.read(second, len(code) + 1) == code
    finally:
        os.close(first)
        os.close(second)
    argv = sandbox.wrap("true", "/", seccomp_fd=7)
    assert argv[argv.index("--seccomp") + 1] == "7"
    assert argv.index("--seccomp") < argv.index("--", argv.index("--seccomp"))


WITHOUT_BINDING = """
import runpy, sys
sys.modules["pyseccomp"] = None  # the binding (or libseccomp under it) cannot be imported
sys.argv = ["locm", *sys.argv[1:]]
runpy.run_module("cardarena.locm", run_name="__main__")
"""


def test_without_libseccomp_one_warning_and_the_game_is_played(probe_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_BINDING, "play", "-p1",
         f"{BOT_PYTHON} {probe_dir / 'probe_bot.py'}", "-p2", "builtin:greedy",
         "--version", "1.5", "-d", "seed=1", "--time-scale", "10"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == ["0", "1"]  # the probing bot played and lost
    assert done.stderr.splitlines() == [
        "locm: warning: the bot sandbox runs without its seccomp filter (the pyseccomp "
        "package is not installed: pip install pyseccomp)"
    ]


@NEEDS_FILTER
def test_a_filter_the_sandbox_cannot_start_with_is_dropped_with_its_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A filter that refused the start-up's own read-only bind mounts (as one would with a
    ``mount(8)`` moved to the new mount API): the sandbox still works, without it."""
    import pyseccomp

    strict = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    strict.add_rule(pyseccomp.ERRNO(1), "mount")
    with tempfile.TemporaryFile() as file:
        strict.export_bpf(file)
        file.seek(0)
        code = file.read()
    monkeypatch.setattr(seccomp, "program", lambda: code)
    sandbox.support.cache_clear()
    try:
        found = sandbox.support()
    finally:
        sandbox.support.cache_clear()
    assert found.ok and not found.seccomp
    assert found.seccomp_reason.startswith("bwrap does not work here"), found
