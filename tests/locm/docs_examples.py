"""Running a Python example of docs/agents.md (shared by the agents' tests)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

AGENTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"


def run_agents_doc_example(marker: str) -> list[str]:
    """The lines printed by the ```python block of docs/agents.md that holds ``marker``."""
    doc = AGENTS_DOC.read_text(encoding="utf-8")
    at = doc.index(marker)
    start = doc.rindex("```python\n", 0, at) + len("```python\n")
    code = doc[start : doc.index("```", at)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/agents.md", "exec"), {})
    return out.getvalue().splitlines()
