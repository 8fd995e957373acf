"""A first use of cardarena.locm.fast that compiles says so on stderr at once; a warm cache
says nothing (cardarena/locm/fast/notice.py)."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("numba")
pytest.importorskip("gymnasium")

from cardarena.locm.fast import notice

ROOT = Path(__file__).resolve().parents[2]
MAKE_VEC = (
    "import gymnasium as gym, cardarena.locm.envs\n"
    "envs = gym.make_vec('cardarena/LOCM-battle-v0', num_envs=2, version='1.2',"
    " vectorization_mode='vector_entry_point')\n"
    "envs.reset(seed=1)\n"
    "envs.step(envs.action_space.sample())\n"
    "print('stepped', flush=True)\n"
)
"""docs/envs.md's make_vec example, shortened to one step."""
DEADLINE_S = 120.0


def _environment(cache: Path | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(notice.QUIET_ENV, None)  # the suite silences the notice (tests/conftest.py)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    return env


def test_the_first_make_vec_says_what_it_compiles_before_compiling_it(tmp_path: Path) -> None:
    """On an empty cache, the line comes while the env is still compiling (the process is
    stopped then: the compile itself is what the line is about, not what is tested)."""
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-c", MAKE_VEC], env=_environment(tmp_path / "cache"), cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert child.stderr is not None
        with selectors.DefaultSelector() as selector:
            selector.register(child.stderr, selectors.EVENT_READ)
            assert selector.select(DEADLINE_S), "nothing on stderr"
        line = child.stderr.readline().decode()
        waited = time.monotonic() - started
        assert child.poll() is None, f"it finished before it said anything: {line!r}"
    finally:
        child.kill()
        child.wait()
    assert child.stdout is not None and b"stepped" not in child.stdout.read()
    assert line.startswith("cardarena: numba is compiling "), line
    named = [short for short in notice.ENTRY_POINTS if f"({short})" in line]
    assert named and "s of CPU" in line, line
    assert notice.WARM_UP_COMMAND in line and f"{notice.QUIET_ENV}=1" in line, line
    assert waited < DEADLINE_S


def test_a_warm_cache_prints_nothing() -> None:
    """The suite's cache (warmed by tests/fast_warmup.py; else the first run fills it)."""
    quiet = {**_environment(), notice.QUIET_ENV: "1"}
    run = [sys.executable, "-c", MAKE_VEC]
    subprocess.run(run, env=quiet, capture_output=True, check=True, timeout=600)
    again = subprocess.run(run, env=_environment(), capture_output=True, text=True, timeout=600)
    assert (again.returncode, again.stdout, again.stderr) == (0, "stepped\n", "")


def play_games() -> None:
    """Stands for the compiled function of that name in a compile event."""


play_games.__module__ = "cardarena.locm.fast.vector"


class _Event:
    data = {"dispatcher": type("Dispatcher", (), {"py_func": staticmethod(play_games)})()}  # noqa: RUF012


def test_the_notice_names_the_entry_point_and_can_be_silenced(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    listener = notice._Listener()
    monkeypatch.delenv(notice.QUIET_ENV, raising=False)
    listener.on_start(_Event())
    listener.on_start(_Event())  # a nested compile: no second line
    listener.on_end(_Event())
    listener.on_end(_Event())
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the vector env's step" in err and "(vector.play_games)" in err
    monkeypatch.setenv(notice.QUIET_ENV, "1")
    listener.on_start(_Event())
    listener.on_end(_Event())
    monkeypatch.setenv(notice.QUIET_ENV, "0")
    notice.set_quiet(True)
    try:
        listener.on_start(_Event())
        listener.on_end(_Event())
    finally:
        notice.set_quiet(False)
    assert capsys.readouterr().err == ""
