"""The rules layer compiled with mypyc (CARDARENA_COMPILE=1) plays exactly like the source.

Builds the compiled modules from the unchanged sources into a temporary copy of the
package (at the C compiler's -O0, which builds in a third of the time of the installed
-O3), then, in a subprocess that imports that copy, checks that the modules really are
compiled, that random games end in the very same states as with the pure-Python engine,
and that every recorded official game replays identically.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cardarena

ROOT = Path(__file__).resolve().parents[2]

CHECK = textwrap.dedent(
    """
    import json, sys
    import cardarena.locm.engine.state as state_module
    from tests.locm.test_compiled import random_game_states
    assert state_module.__file__.endswith(".so"), state_module.__file__
    print(json.dumps(random_game_states()))
    if len(sys.argv) > 1:
        from tests.locm.test_conformance import GAMES, replay
        failures = [g["game"] for _v, g in GAMES if replay(g, "params") is not None]
        assert len(GAMES) == 700 and not failures, failures
    """
)


def random_game_states() -> list[dict]:
    """Final states of random games in every version, with whichever engine is imported."""
    from cardarena.locm import State
    from cardarena.locm.agents import RandomAgent

    out = []
    for version in ("1.0", "1.2", "1.5"):
        for seed in range(5):
            state, agent = State.new(version, {"seed": seed}), RandomAgent(seed)
            while not state.is_terminal:
                state.apply(agent.act(state))
            out.append(state.to_dict())
    return out


@pytest.mark.skipif(
    shutil.which("cc") is None, reason="no C compiler: the compiled build is optional"
)
def test_compiled_engine_plays_exactly_like_the_source(tmp_path: Path) -> None:
    pytest.importorskip("mypyc", reason="mypyc (from mypy) builds the compiled engine")
    package = Path(cardarena.__file__).parent
    shutil.copytree(
        package, tmp_path / "cardarena", ignore=shutil.ignore_patterns("__pycache__", "*.so")
    )
    shutil.copy(ROOT / "setup.py", tmp_path / "setup.py")
    build = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"],
        cwd=tmp_path,
        # The C compiler's -O0: the same compiled semantics in a third of the build time.
        env={**os.environ, "CARDARENA_COMPILE": "1", "CARDARENA_COMPILE_OPT": "0"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    assert len(list((tmp_path / "cardarena" / "locm" / "engine").glob("state*.so"))) == 1
    args = [sys.executable, "-c", CHECK, "conformance"]
    check = subprocess.run(
        args,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert check.returncode == 0, check.stderr[-2000:]
    assert json.loads(check.stdout) == random_game_states()
