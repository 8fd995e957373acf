"""What users read says what they need to know, in the project's own terms: no folder they
never have, no reference to our issue tracker's discussions as a default or a reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE_WORDS = ("../shared", "steering", "the issue's", "issue's bars")


def _user_facing_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    files += sorted((ROOT / "benchmarks").glob("*.py"))
    files += [ROOT / "tests" / "conftest.py", *sorted((ROOT / "tests" / "locm").glob("*.py"))]
    files += sorted((ROOT / "tests" / "data").rglob("README.md"))
    return files


def test_no_text_names_what_users_never_have() -> None:
    found = []
    for path in _user_facing_files():
        text = path.read_text(encoding="utf-8").lower()
        found += [f"{path.relative_to(ROOT)}: {word}" for word in OUTSIDE_WORDS if word in text]
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
