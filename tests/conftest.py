"""Shared test fixtures: the recorded official LOCM games, and the conformance summary."""

from __future__ import annotations

import compileall
import fcntl
import functools
import json
import lzma
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fast_warmup import LOCK_ENV, USES_COMPILED_CODE, wait_for_warm_up

# A suite started in the background (`cmd &`, nohup) inherits Ctrl-C ignored, and so would
# every referee it starts, which could then not be interrupted: the tests that send SIGINT
# need the default back (a handler, unlike "ignored", is not inherited across exec).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

DATA = Path(__file__).resolve().parent / "data"
CONFORMANCE = DATA / "conformance"
"""The games recorded from the official referees, part of the repository (see its README)."""
CONFORMANCE_GAMES = {"1.0": 100, "1.2": 300, "1.5": 300}
"""How many recorded games each version has."""

SPEC_ENV = "CARDARENA_LOCM_SPEC"
"""A folder holding the LOCM specification texts (e.g. locm-randomness.md), which are not
distributed with cardarena; the few checks against them run only when it is set."""

CONFORMANCE_COUNTS: dict[str, list[int]] = {}
"""version -> [passed, total], filled by tests/locm/test_conformance.py."""


def conformance_file(version: str) -> Path:
    """The compressed JSON Lines file of the games recorded for ``version``."""
    return CONFORMANCE / f"locm-{version}.jsonl.xz"


@functools.cache
def _conformance_games(version: str) -> tuple[dict[str, Any], ...]:
    with lzma.open(conformance_file(version), "rt", encoding="utf-8") as lines:
        return tuple(json.loads(line) for line in lines)


def conformance_games(version: str) -> list[dict[str, Any]]:
    """Every recorded game of ``version`` (fresh dicts: a test may change its copy)."""
    return json.loads(json.dumps(_conformance_games(version)))


def spec_path(name: str) -> Path:
    """A specification text, or skip the test saying how to run it."""
    folder = os.environ.get(SPEC_ENV)
    if folder and (Path(folder) / name).is_file():
        return Path(folder) / name
    pytest.skip(
        f"this check compares with the LOCM specification text {name}, which is not part of "
        f"cardarena: set {SPEC_ENV} to a folder holding it to run it"
    )


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the package once, before any test: the suite starts hundreds of Python
    processes (bots, CLIs, servers), and where PYTHONDONTWRITEBYTECODE is set (as on CI
    machines) each of them would otherwise compile every module it imports again."""
    # No compile notice in the tests' output (cardarena/locm/fast/notice.py): a test that
    # compiles would otherwise get a line on stderr that depends on the cache's state.
    # Inherited by the workers and every process they start; test_fast_first_use unsets it.
    os.environ["CARDARENA_QUIET_COMPILE"] = "1"
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        compileall.compile_dir(Path(__file__).resolve().parents[1] / "cardarena", quiet=1)
        if _runs_the_whole_suite(config):
            _start_warm_up(config)
            if config.getoption("dist", "no") != "no":
                _rewrite_test_modules_once(config)


def _rewrite_test_modules_once(config: pytest.Config) -> None:
    """Write pytest's assertion-rewritten test modules to their cache before the xdist
    workers start: each worker collects every test module, and on a fresh clone (or where
    PYTHONDONTWRITEBYTECODE is set, as on CI machines) each would rewrite and compile all of
    them again, about 8 CPU seconds apiece on 2 cores; with the cache they read them. The
    warm-up compiles on the other core meanwhile. Uses pytest's own functions: where they
    are not there (another pytest), the workers rewrite as before."""
    tests = Path(__file__).resolve().parent
    compileall.compile_dir(tests, quiet=1, rx=_REWRITTEN)  # their helpers, as plain modules
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        for source in sorted(tests.rglob("*.py")):
            if not _REWRITTEN.search(str(source)):
                continue
            pyc = rewrite.get_cache_dir(source) / (source.stem + rewrite.PYC_TAIL)
            if rewrite._read_pyc(source, pyc) is not None:
                continue
            stat, code = rewrite._rewrite_test(source, config)
            if rewrite.try_makedirs(pyc.parent):
                rewrite._write_pyc(state, code, stat, pyc)
    except (ImportError, AttributeError, KeyError, TypeError, OSError, SyntaxError):
        return


_REWRITTEN = re.compile(r"/(test_[^/]*|conftest|browser)\.py$")
"""The modules pytest rewrites here: test modules, conftest files and the browser plugin."""


def _runs_the_whole_suite(config: pytest.Config) -> bool:
    """No test file, folder or -k named: the README's command (or the tests folder)."""
    args = [arg for arg in config.invocation_params.args if not str(arg).startswith("-")]
    named = [arg for arg in args if Path(str(arg).split("::")[0]).exists()]
    return all(Path(arg).resolve() == Path(__file__).resolve().parent for arg in named) and (
        "-k" not in config.invocation_params.args
    )


def _start_warm_up(config: pytest.Config) -> None:
    """Compile the fast engine once, in the background, while the first tests run
    (tests/fast_warmup.py says why): the warm-up inherits a lock taken here, so a worker that
    reaches compiled code first cannot slip in before it starts."""
    folder = Path(tempfile.mkdtemp(prefix="cardarena-warm-"))
    lock_path = folder / "warm.lock"
    with open(lock_path, "wb") as lock, open(folder / "warm.log", "wb") as log:
        fcntl.flock(lock, fcntl.LOCK_EX)
        root = Path(__file__).resolve().parents[1]
        process = subprocess.Popen(
            [sys.executable, str(root / "tests" / "fast_warmup.py")], cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)}, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, pass_fds=(lock.fileno(),),
        )  # fmt: skip
    os.environ[LOCK_ENV] = str(lock_path)  # inherited by the xdist workers started next
    # Reaped the moment it exits: in a run without xdist the tests share this process, and
    # the referee tests check that it has no zombie child left.
    reaper = threading.Thread(target=process.wait, name="warm-up reaper", daemon=True)
    reaper.start()
    config.stash[_WARM_UP] = (process, folder, reaper)


_WARM_UP = pytest.StashKey[tuple[subprocess.Popen[bytes], Path, threading.Thread]]()


def pytest_unconfigure(config: pytest.Config) -> None:
    """A run that ends before the warm-up (a failing -x run) does not leave it behind."""
    started = config.stash.get(_WARM_UP, None)
    if started is not None:
        process, folder, reaper = started
        if process.poll() is None:
            process.kill()
        reaper.join()
        shutil.rmtree(folder, ignore_errors=True)


@functools.cache
def _uses_compiled_code(path: Path) -> bool:
    try:
        return USES_COMPILED_CODE.search(path.read_text(encoding="utf-8")) is not None
    except OSError:
        return False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that may run compiled code go after the others (in their own order), so
    that the workers play games, servers and browsers while the warm-up compiles, instead
    of waiting for it."""
    items.sort(key=lambda item: _uses_compiled_code(Path(item.path)))


_WARM_UP_AWAITED: list[bool] = []


@pytest.fixture(autouse=True)
def _compiled_code_ready(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that may run compiled code first waits for the warm-up (once per worker)."""
    if not _WARM_UP_AWAITED and _uses_compiled_code(Path(request.node.path)):
        wait_for_warm_up()
        _WARM_UP_AWAITED.append(True)
    yield


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` starts one worker per usable core (the cores this process may use), and
    one more: many tests wait on bots, servers and browsers, and the extra worker keeps
    the cores busy meanwhile. On 2 cores with an empty numba cache, the same code: 296 s
    with 3 workers against 320-331 s with 2 (the cores idle a fifth of the time); 4 or 6
    workers gave 337-338 s (each collects the whole suite again, and the compiling warm-up
    gets less of the CPU)."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under pytest-xdist, a worker hands its conformance counts to the controller."""
    worker_output = getattr(session.config, "workeroutput", None)
    if worker_output is not None:
        worker_output["conformance_counts"] = json.dumps(CONFORMANCE_COUNTS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """The controller adds up the counts of its workers (pytest-xdist's hook)."""
    counts = json.loads(getattr(node, "workeroutput", {}).get("conformance_counts", "{}"))
    for version, (passed, total) in counts.items():
        mine = CONFORMANCE_COUNTS.setdefault(version, [0, 0])
        mine[0] += passed
        mine[1] += total


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if CONFORMANCE_COUNTS:
        parts = [
            f"{version}: {passed}/{total} games"
            for version, (passed, total) in sorted(CONFORMANCE_COUNTS.items())
        ]
        terminalreporter.write_line("LOCM conformance replays passed: " + ", ".join(parts))


pytest_plugins = ["tests.browser"]
