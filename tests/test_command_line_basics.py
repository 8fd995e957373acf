"""What a newcomer tries first: ``--version``, ``--help`` that says what a command does,
and a bot command fed something that is not a referee's input."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cardarena

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
LOCM = [sys.executable, "-m", "cardarena.locm"]
SHARED_DECK = [sys.executable, "-m", "cardarena.shared_deck.cli"]


def run(command: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=ENV, check=False)  # fmt: skip


def test_the_package_version_is_the_projects() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'version = "{cardarena.__version__}"' in text


@pytest.mark.parametrize(("command", "name"), [(LOCM, "locm"), (SHARED_DECK, "shared-deck")])
def test_version(command: list[str], name: str) -> None:
    done = run([*command, "--version"])
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{name} {cardarena.__version__}\n"


def test_demo_prints_what_its_help_says() -> None:
    helped = run([*LOCM, "demo", "--help"])
    words = " ".join(helped.stdout.split())
    assert "who won" in words and "every game parameter" in words
    done = run([*LOCM, "demo", "--version", "1.2", "--seed", "7"])
    assert done.returncode == 0, done.stderr
    assert " wins (" in done.stdout or "no winner" in done.stdout
    assert "reproduce with: locm demo --version 1.2 --seed 7" in done.stdout
    assert "  seed=7" in done.stdout.splitlines()


@pytest.mark.parametrize(
    ("stdin", "said"),
    [
        ("garbage", "not a turn's input: line 1 should give the player's health first, got "
                    "'garbage'"),
        ("30 1 25 1\n", "the input ended in the middle of a turn, after 1 line(s)"),
        ("30 1 25 1\n30 1 25 1\n5 x\n", "line 3 should give the opponent's hand size"),
    ],
)  # fmt: skip
def test_a_bot_fed_garbage_says_so_in_one_line(stdin: str, said: str) -> None:
    done = run([*LOCM, "bot", "greedy"], stdin)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("locm: error: ") and done.stderr.count("\n") == 1
    assert said in done.stderr


def test_a_bot_whose_input_ends_between_turns_is_done() -> None:
    from cardarena.locm import State

    turn = State.new("1.5", {"seed": 3}).input_text(0)
    done = run([*LOCM, "bot", "greedy"], turn)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("CHOOSE ") and done.stdout.count("\n") == 1
    assert run([*LOCM, "bot", "greedy"], "").returncode == 0


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The help text of a parser and of each of its subcommands, by command line."""
    helps = {parser.prog: parser.format_help()}
    for action in parser._actions:  # argparse keeps subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                helps |= _helps(sub)
    return helps


def test_no_help_text_shows_source_markup() -> None:
    from cardarena.locm.cli.main import build_parser as locm_parser
    from cardarena.shared_deck.cli import build_parser as shared_deck_parser

    helps = _helps(locm_parser()) | _helps(shared_deck_parser())
    assert len(helps) > 15  # both programs and their subcommands
    marked = {prog: text for prog, text in helps.items() if "``" in text or ":func:" in text}
    assert marked == {}
