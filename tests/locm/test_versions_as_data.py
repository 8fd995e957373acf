"""What differs between LOCM versions is data (a RuleSet field), not a comparison of
version strings scattered through the code: only engine/rules.py names versions in a test."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import cardarena

VERSION = re.compile(r"^1\.[0-9]$")
ALLOWED = {Path("locm/engine/rules.py")}


def _version_constants(node: ast.AST) -> list[str]:
    """Version strings compared in ``node``: ``x == "1.5"``, ``"1.0" != x``, ``x in ("1.0",)``."""
    found = []
    if isinstance(node, ast.Compare):
        for value in [node.left, *node.comparators]:
            items = value.elts if isinstance(value, ast.Tuple | ast.List | ast.Set) else [value]
            for item in items:
                constant = isinstance(item, ast.Constant) and isinstance(item.value, str)
                if constant and VERSION.match(item.value):
                    found.append(item.value)
    return found


def test_no_version_string_comparison_outside_the_rules() -> None:
    root = Path(cardarena.__file__).resolve().parent
    offences = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative in ALLOWED:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for version in _version_constants(node):
                offences.append(f"{relative}:{node.lineno}: compares with {version!r}")
    assert not offences, "\n".join(offences)


def test_the_check_sees_a_comparison() -> None:
    tree = ast.parse('if rules.version == "1.5" or v in ("1.0", "1.2") or "1.2" != w: pass')
    found = [v for node in ast.walk(tree) for v in _version_constants(node)]
    assert sorted(found) == ["1.0", "1.2", "1.2", "1.5"]
