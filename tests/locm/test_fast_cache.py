"""Cached machine code compiled from other sources is dropped, not run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("numba")

import cardarena.locm.fast as fast


def test_code_cached_from_other_sources_is_deleted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fast, "_cache_folders", lambda: [str(tmp_path), str(tmp_path / "none")])
    stale = [
        tmp_path / "kernels.step_games-10.py311.nbi",
        tmp_path / "kernels.step_games-10.py311.1.nbc",
    ]
    for path in stale:
        path.write_bytes(b"compiled with an older layout")
    (tmp_path / fast.FINGERPRINT_FILE).write_text("an older fingerprint", encoding="ascii")
    other = tmp_path / "unrelated.txt"
    other.write_text("kept", encoding="ascii")

    fast.drop_stale_compiled_code("0.68.1")
    assert not any(path.exists() for path in stale) and other.exists()
    stamp = (tmp_path / fast.FINGERPRINT_FILE).read_text(encoding="ascii")
    assert stamp == fast.sources_fingerprint("0.68.1")
    assert not (tmp_path / "none").exists()

    fresh = tmp_path / "kernels.step_games-10.py311.nbi"
    fresh.write_bytes(b"compiled from these sources")
    fast.drop_stale_compiled_code("0.68.1")  # same sources: the cache stays
    assert fresh.exists()
    fast.drop_stale_compiled_code("0.69.0")  # another numba: compiled again
    assert not fresh.exists()


def test_the_fingerprint_follows_the_layout(tmp_path: Path) -> None:
    locm = Path(fast.__file__).resolve().parent.parent
    for name in ("fast", "engine", "encoding"):
        shutil.copytree(locm / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "agents").mkdir()
    shutil.copy(locm / "agents" / "evaluation.py", tmp_path / "agents")
    assert fast.sources_fingerprint("0.68.1", str(tmp_path)) == fast.sources_fingerprint("0.68.1")
    with (tmp_path / "fast" / "layout.py").open("a", encoding="utf-8") as layout:
        layout.write("\nP_HEALTH = 1  # a moved field\n")
    assert fast.sources_fingerprint("0.68.1", str(tmp_path)) != fast.sources_fingerprint("0.68.1")
