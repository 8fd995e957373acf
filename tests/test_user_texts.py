"""What users read says what they need to know, in the project's own terms: no folder they
never have, no reference to our issue tracker's discussions as a default or a reason."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE_WORDS = ("../shared", "steering", "the issue", "issue's bars")
ISSUE_WORDS = ("the issue", "issue's bars")
TEXT_SUFFIXES = {".py", ".md", ".html", ".js", ".css", ".txt", ".c", ".sh"}


def _user_facing_files() -> list[Path]:
    """The documentation, and every text file of the package, the tests, the examples,
    the benchmarks and the scripts (this file, which names the words, aside)."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for folder in ("cardarena", "tests", "examples", "benchmarks", "scripts"):
        found = [p for p in (ROOT / folder).rglob("*") if "__pycache__" not in p.parts]
        files += sorted(p for p in found if p.suffix in TEXT_SUFFIXES)
    return [path for path in files if path != Path(__file__).resolve()]


def test_no_text_names_what_users_never_have() -> None:
    found = []
    for path in _user_facing_files():
        text = path.read_text(encoding="utf-8").lower()
        # Tests may check that a page never names ../shared; none speaks of the issue.
        words = ISSUE_WORDS if ROOT / "tests" in path.parents else OUTSIDE_WORDS
        found += [f"{path.relative_to(ROOT)}: {word}" for word in words if word in text]
        # Nor does any text point into the tracker by number ("issue 20.6", "issue_10").
        found += [f"{path.relative_to(ROOT)}: {m}" for m in re.findall(r"\bissues?[ _]\d+", text)]
    assert found == []


@pytest.mark.parametrize("script", sorted(p.name for p in (ROOT / "benchmarks").glob("*.py")))
def test_benchmark_help_is_self_explanatory(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--help"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = done.stdout.lower()
    assert not [word for word in OUTSIDE_WORDS if word in text], done.stdout
    if script == "agents.py":  # the default pairings are said, not referred to
        words = " ".join(text.split())
        assert "every pair of --agents" in words and "default: all of them" in words, words
