"""docs/envs.md's examples run and print what the page says."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

DOC = Path(__file__).resolve().parents[2] / "docs" / "envs.md"


def test_envs_doc_examples() -> None:
    result = doctest.testfile(
        str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted >= 15
    assert result.failed == 0
