"""docs/architecture.md keeps up with the code: every package and every module of the
layers it details is on the floor plan, and every import-linter contract in
pyproject.toml is explained in its table."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "cardarena"
DETAILED = ["locm", "locm/engine", "locm/referee", "locm/cli", "tournaments", "shared_deck"]
"""Folders whose modules the floor plan names one by one."""


def test_every_package_is_on_the_floor_plan() -> None:
    packages = sorted(
        str(init.parent.relative_to(PACKAGE)) for init in PACKAGE.rglob("__init__.py")
    )
    missing = [name for name in packages if name != "." and f"{Path(name).name}/" not in DOC]
    assert missing == []


def test_every_module_of_the_detailed_folders_is_named() -> None:
    missing = []
    for folder in DETAILED:
        for module in sorted((PACKAGE / folder).glob("*.py")):
            if module.stem in ("__init__", "__main__"):
                continue
            if not re.search(rf"\b{re.escape(module.stem)}\b", DOC):
                missing.append(f"{folder}/{module.name}")
    assert missing == []


def test_every_contract_is_explained() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    assert len(contracts) >= 3
    table = DOC[DOC.index("| contract | what it forbids |") :]
    lines = table.splitlines()
    rows = lines[2 : next(i for i, line in enumerate(lines) if not line.startswith("|"))]
    assert len(rows) == len(contracts), "one row per contract in pyproject.toml"
