"""The README's Python examples run and print what it says (python-chess style)."""

from __future__ import annotations

import doctest
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples() -> None:
    result = doctest.testfile(
        str(README), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted > 10
    assert result.failed == 0


def test_package_docstring_examples() -> None:
    import cardarena.locm

    result = doctest.testmod(cardarena.locm, verbose=False)
    assert result.attempted >= 1 and result.failed == 0
