"""benchmarks/agents.py: every pair of built-ins, per version, with intervals and clocks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cardarena.locm.agents.cardscore import AGGRO_DECK, DEFAULT_DECK, FITTED_DECK
from tests.locm.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "agents.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--games", "2", "--workers", "1", "--json", *args],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip


def test_every_pair_of_the_named_agents_plays_in_every_version() -> None:
    done = _run("--agents", "random,pass,greedy", "--version", "1.0", "--version", "1.5")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    pairs = [(r["version"], r["pair"]) for r in results]
    assert pairs == [
        (version, pair)
        for version in ("1.0", "1.5")
        for pair in ("random vs pass", "random vs greedy", "pass vs greedy")
    ]
    for result in results:
        assert result["wins"] + result["losses"] + result["draws"] == result["games"] == 2
        low, high = result["ci95"]
        assert 0 <= low <= result["win_rate"] <= high <= 1
        assert set(result["turns_over_limit"]) == set(result["pair"].split(" vs "))
    greedy_vs_pass = {r["version"]: r for r in results if r["pair"] == "pass vs greedy"}
    assert all(r["losses"] == 2 for r in greedy_vs_pass.values())  # pass never attacks


def test_an_agent_that_does_not_play_a_version_sits_it_out() -> None:
    done = _run("--agents", "random,learned-v1", "--version", "1.0")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_an_unknown_agent_is_one_usage_line() -> None:
    done = _run("--agents", "random,nobody")
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "unknown built-in agent 'nobody'; known: "
            + ", ".join(_builtin_names())
            + " (or python:MODULE:FACTORY)"
        )
    )
    assert "Traceback" not in done.stderr


def test_an_agent_by_python_reference_plays_too() -> None:
    reference = "python:cardarena.locm.agents.greedy:GreedyAgent"
    done = _run("--pair", f"{reference},pass", "--version", "1.2")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)[0]
    assert result["pair"] == f"{reference} vs pass" and result["wins"] == 2


def _builtin_names() -> list[str]:
    from cardarena.locm.agents import BUILTIN_AGENTS

    return list(BUILTIN_AGENTS)


def test_one_deck_policy_for_every_agent_leaves_only_battle_play_different() -> None:
    benchmark = load_script(SCRIPT, "agents_benchmark")
    own = benchmark.make_players("search-v1", "greedy", 1, 1.0, None)
    assert own[0].deck_policy is AGGRO_DECK and own[1].deck_policy is DEFAULT_DECK
    same = benchmark.make_players("search-v1", "greedy", 1, 1.0, "fitted")
    assert same[0].deck_policy is same[1].deck_policy is FITTED_DECK
    done = _run("--pair", "greedy,pass", "--deck", "fitted", "--version", "1.2")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["deck"] == "fitted"
