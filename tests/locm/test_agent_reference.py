"""Researchers' agents by reference (python:MODULE:FACTORY) in locm play, tournament and bot."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cardarena.locm.agents.reference import (
    AgentReferenceError,
    PolicyAgent,
    make_reference_agent,
    split_reference,
)

LOCM = [sys.executable, "-m", "cardarena.locm"]

AGENT_MODULE = textwrap.dedent(
    """
    import random

    from cardarena.locm.agents import GreedyAgent

    SEEDS = []

    class FirstLegal:
        '''Always the first legal action: deterministic, and never illegal.'''

        name = "first"

        def act(self, state):
            return state.legal_actions()[0]

    def make_agent(seed):
        SEEDS.append(seed)
        return GreedyAgent(seed)

    def make_first(seed):
        return FirstLegal()

    def make_policy(seed):
        rng = random.Random(seed)

        def policy(observation, action_mask):
            assert observation.dtype.name == "float32"
            return rng.choice(action_mask.nonzero()[0].tolist())

        return policy

    def make_crashing(seed):
        class Crashing:
            name = "crashing"

            def act(self, state):
                if state.phase.name == "BATTLE":
                    raise RuntimeError("my bug")
                return state.legal_actions()[0]

        return Crashing()

    def broken(seed):
        raise RuntimeError("no weights found")

    def returns_number(seed):
        return 3

    NOT_CALLABLE = 3
    """
)


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    (tmp_path / "my_agent.py").write_text(AGENT_MODULE)
    (tmp_path / "syntax_error.py").write_text("def make_agent(seed):\n  return (\n")
    return tmp_path


def locm(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LOCM, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def scores(stdout: str) -> tuple[int, int]:
    lines = stdout.splitlines()
    return int(lines[0]), int(lines[1])


def test_split_reference() -> None:
    assert split_reference("python:pkg.mod:make") == ("pkg.mod", "make")
    assert split_reference("python:pkg.mod") == ("pkg.mod", "make_agent")
    assert split_reference("python:dir/agent.py:make") == ("dir/agent.py", "make")
    assert split_reference("python:dir/agent.py") == ("dir/agent.py", "make_agent")
    with pytest.raises(AgentReferenceError, match="want python:MODULE:FACTORY"):
        split_reference("python:")


def test_play_accepts_module_and_file_references(agent_dir: Path) -> None:
    done = locm(["play", "-p1", "python:my_agent:make_agent", "-p2", "builtin:random",
                 "--version", "1.2", "-d", "seed=5"], agent_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(scores(done.stdout)) == [0, 1]
    # A file path (relative to the current directory, then absolute), a policy callable.
    done = locm(["play", "-p1", "python:./my_agent.py:make_policy",
                 "-p2", f"python:{agent_dir / 'my_agent.py'}:make_first",
                 "--version", "1.5", "-d", "seed=5"], agent_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert -1 not in scores(done.stdout)


def test_reference_agents_play_like_the_builtin_they_wrap(agent_dir: Path) -> None:
    """In-process with the same per-game seed as a built-in: GreedyAgent(seed) by reference
    plays exactly the game builtin:greedy plays."""
    logs = []
    for p1 in ("python:my_agent:make_agent", "builtin:greedy"):
        log = agent_dir / f"{p1.replace(':', '_')}.json"
        done = locm(["play", "-p1", p1, "-p2", "builtin:random", "--version", "1.2",
                     "-d", "seed=11", "-l", str(log)], agent_dir)  # fmt: skip
        assert done.returncode == 0, done.stderr
        logs.append(json.loads(log.read_text())["outputs"])
    assert logs[0] == logs[1]


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("python:no_such_module:make_agent", "no module named 'no_such_module'"),
        ("python:my_agent:nope", "my_agent has no attribute 'nope'"),
        ("python:my_agent:NOT_CALLABLE", "NOT_CALLABLE is not callable"),
        ("python:my_agent:broken", "broken(None) raised RuntimeError: no weights found"),
        ("python:my_agent:returns_number", "the factory returned a int object"),
        ("python:missing.py:make_agent", "no such file missing.py"),
        ("python:/:make_agent", "/ is a directory, not a Python file"),
        ("python:syntax_error.py", "loading syntax_error.py failed: SyntaxError"),
        ("python:my_agent:1x", "'1x' is not a Python name"),
    ],
)
def test_play_refuses_a_bad_reference_in_one_line(
    agent_dir: Path, reference: str, message: str
) -> None:
    log = agent_dir / "log.json"
    done = locm(["play", "-p1", "builtin:random", "-p2", reference, "-l", str(log)], agent_dir)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("locm: error: -p2: ")
    assert message in done.stderr
    assert not log.exists()


def test_an_agent_that_raises_mid_game_loses_that_game_only(agent_dir: Path) -> None:
    log = agent_dir / "log.json"
    done = locm(["play", "-p1", "python:my_agent:make_crashing", "-p2", "builtin:random",
                 "--version", "1.2", "-d", "seed=3", "-l", str(log)], agent_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert scores(done.stdout) == (-1, 0)  # as the official referee scores a crash
    errors = json.loads(log.read_text())["errors"]["0"]
    assert any(text and "RuntimeError: my bug" in text for text in errors)


def test_tournament_with_references(agent_dir: Path) -> None:
    db = agent_dir / "t.db"
    done = locm(["tournament", "--bot", "python:my_agent:make_first",
                 "--bot", "pol=python:./my_agent.py:make_policy", "--bot", "builtin:random",
                 "--version", "1.2", "--games", "1", "--workers", "1", "--db", str(db),
                 "--quiet", "--json"], agent_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    bots = report["bots"]
    assert set(bots) == {"my_agent", "pol", "random"}
    assert all(bot["games"] == 4 and bot["crashes"] == 0 for bot in bots.values())
    assert report["games"] == 6 and report["referee_errors"] == 0


def test_tournament_refuses_a_bad_reference_before_storing(agent_dir: Path) -> None:
    db = agent_dir / "t.db"
    done = locm(["tournament", "--bot", "python:my_agent:broken", "--bot", "builtin:random",
                 "--db", str(db), "--quiet"], agent_dir)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "locm: error: 'python:my_agent:broken': broken(None) raised RuntimeError: no weights found"
    ]
    assert not db.exists()


@pytest.mark.parametrize("version", ["1.2", "1.5"])
def test_locm_bot_runs_a_reference_through_the_referee(agent_dir: Path, version: str) -> None:
    bot = f"{sys.executable} -m cardarena.locm bot python:my_agent:make_policy --seed 3"
    done = locm(["play", "-p1", bot, "-p2", "builtin:random", "--version", version,
                 "-d", "seed=7", "--no-sandbox", "--no-time-limit"], agent_dir)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert -1 not in scores(done.stdout), "the bot crashed, timed out or played illegally"


def test_locm_bot_refuses_a_bad_reference(agent_dir: Path) -> None:
    done = locm(["bot", "python:my_agent:nope"], agent_dir)
    assert done.returncode == 2
    assert done.stderr == "locm: error: 'python:my_agent:nope': my_agent has no attribute 'nope'\n"


def test_a_policy_callable_becomes_an_agent() -> None:
    pytest.importorskip("numpy")
    from cardarena.locm.engine.params import resolve_parameters
    from cardarena.locm.engine.rules import ruleset
    from cardarena.locm.engine.state import State

    agent = PolicyAgent(lambda observation, mask: int(mask.nonzero()[0][-1]), "last")
    rules = ruleset("1.5")
    state = State.new(rules, resolve_parameters(rules, {"seed": 1}), 4)
    while not state.is_terminal:
        state.apply(agent.act(state))  # State.apply refuses anything illegal
    assert state.winner in (0, 1, None)


def test_make_reference_agent_names_an_unnamed_agent(agent_dir: Path, monkeypatch) -> None:
    monkeypatch.chdir(agent_dir)
    monkeypatch.syspath_prepend(str(agent_dir))
    agent = make_reference_agent(f"python:{agent_dir / 'my_agent.py'}:make_policy", 1)
    assert isinstance(agent, PolicyAgent) and agent.name == "my_agent"
