"""Shared test fixtures: where ../shared is, and the conformance counts summary."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
"""The steering repository's shared/ folder, read in place (never copied)."""

CONFORMANCE_COUNTS: dict[str, list[int]] = {}
"""version -> [passed, total], filled by tests/locm/test_conformance.py."""


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the test with a clear message when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: this check needs the steering repo's shared/ folder")
    return path


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if CONFORMANCE_COUNTS:
        parts = [
            f"{version}: {passed}/{total} games"
            for version, (passed, total) in sorted(CONFORMANCE_COUNTS.items())
        ]
        terminalreporter.write_line("LOCM conformance replays passed: " + ", ".join(parts))
    elif not SHARED.exists():
        terminalreporter.write_line(f"LOCM conformance skipped: {SHARED} is absent")


pytest_plugins = ["tests.browser"]
