"""pip installs that follow each other leave a working ``locm``: numba caches the fast
engine's machine code in the user's cache folder, never inside the installed package
(where ``pip uninstall`` would leave it behind), and a leftover folder that shadows the
package is named in one line instead of a traceback."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("cardarena", "cardarena_entry", "pyproject.toml", "setup.py", "README.md")

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("wheel") is None or importlib.util.find_spec("setuptools") is None,
    reason="building cardarena offline needs setuptools and wheel (the test extra has them)",
)


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def _pip(python: Path, env: dict[str, str], cwd: Path, *args: str) -> None:
    # Offline and quick: the venv sees this interpreter's packages (numba, the build backend).
    done = _run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                 "--no-build-isolation", *args], env, cwd)  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.fixture
def venv(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A fresh venv over this interpreter's packages, a copy of the sources, and an
    environment whose user cache folder is private to the test."""
    source = tmp_path / "src"
    source.mkdir()
    for name in SOURCES:
        origin = ROOT / name
        if origin.is_dir():
            skip = shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info")
            shutil.copytree(origin, source / name, ignore=skip)
        else:
            shutil.copy(origin, source / name)
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(env_dir)], check=True, timeout=120)  # fmt: skip
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR", "VIRTUAL_ENV")}  # fmt: skip
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return env_dir, source, env


def _site_packages(python: Path, env: dict[str, str], cwd: Path) -> Path:
    done = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                env, cwd)  # fmt: skip
    return Path(done.stdout.strip())


def test_install_fast_run_then_editable_install_leaves_a_working_locm(
    venv: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    pytest.importorskip("numba")
    env_dir, source, env = venv
    python = env_dir / "bin" / "python"
    elsewhere = tmp_path  # not the sources: only the installed package can be imported
    _pip(python, env, elsewhere, f"{source}[fast]")
    site = _site_packages(python, env, elsewhere)
    assert (site / "cardarena" / "__init__.py").is_file()

    # A compiled function of the fast engine, cached on disk (the smallest one: quick).
    run = _run([str(python), "-c", "import cardarena.locm.fast.javarandom as j; "
                "print(j.next_bits(j.scramble(7), 10)[1])"], env, elsewhere)  # fmt: skip
    assert run.returncode == 0, run.stderr
    cached = list((tmp_path / "cache" / "cardarena" / "numba").rglob("*.nbi"))
    assert cached, "numba cached nothing in the user cache folder"
    in_package = [p for p in (site / "cardarena").rglob("*") if p.suffix in (".nbi", ".nbc")]
    assert in_package == []

    _pip(python, env, elsewhere, "-e", str(source))
    assert not (site / "cardarena").exists(), "the uninstall left files behind"
    agents = _run([str(env_dir / "bin" / "locm"), "agents"], env, elsewhere)
    assert agents.returncode == 0, agents.stderr
    assert "greedy" in agents.stdout
    where = "import cardarena; print(cardarena.__file__)"
    origin = _run([str(python), "-c", where], env, elsewhere)
    assert Path(origin.stdout.strip()) == source / "cardarena" / "__init__.py"

    # A leftover folder in site-packages (an older install's cache files) is named.
    leftover = site / "cardarena" / "locm" / "fast" / "__pycache__"
    leftover.mkdir(parents=True)
    (leftover / "kernels.step_games-10.py311.nbi").write_bytes(b"left behind")
    for command in ("locm", "shared-deck"):
        broken = _run([str(env_dir / "bin" / command), "--help"], env, elsewhere)
        assert broken.returncode == 1
        assert broken.stderr.count("\n") == 1, broken.stderr
        assert f"{site / 'cardarena'} is a leftover" in broken.stderr
        assert "delete that folder" in broken.stderr

    # A whole stale copy (an older install's files, without its record) is named too.
    shutil.rmtree(site / "cardarena")
    shutil.copytree(source / "cardarena", site / "cardarena")
    stale = _run([str(env_dir / "bin" / "locm"), "agents"], env, elsewhere)
    assert stale.returncode == 1 and stale.stdout == ""
    assert stale.stderr == (
        f"locm: error: {site / 'cardarena'} is a stale copy of cardarena that shadows the "
        f"editable install from {source}: delete {site / 'cardarena'} and run again\n"
    )
