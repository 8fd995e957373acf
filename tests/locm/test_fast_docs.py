"""docs/fast.md's examples run and print what the page says."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

pytest.importorskip("numba")

DOC = Path(__file__).resolve().parents[2] / "docs" / "fast.md"


def test_fast_doc_examples() -> None:
    result = doctest.testfile(
        str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted >= 20
    assert result.failed == 0
