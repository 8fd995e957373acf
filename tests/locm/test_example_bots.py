"""The example bots of examples/bots play whole games against the engine, as real processes.

docs/protocol.md points bot writers at these bots, so each one must read every
version's input correctly and never send an action the referee rejects: a
rejected action shows up as a ``[Warning] $n`` summary line (or, for a syntax
error, as an error that ends the game), which is what these tests look for.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "examples" / "bots"
PY_BOT = f"{shlex.quote(sys.executable)} examples/bots/minimal_bot.py"
PYTHON = shlex.quote(sys.executable)
LOCM = [sys.executable, "-m", "cardarena.locm"]
OPPONENT = f"{PYTHON} -m cardarena.locm bot random --seed 1"
SEEDS = {"1.0": 11, "1.2": 12, "1.5": 15}
TIME_SCALE = "10"
"""Generous limits: the machine may be busy, and a timeout is not what is tested here."""


def play(bot: str, version: str, seed: int, log: Path, seat: int = 0) -> dict:
    """One ``locm play`` game; returns the JSON log after checking the printed scores."""
    players = [bot, OPPONENT] if seat == 0 else [OPPONENT, bot]
    result = subprocess.run(
        [*LOCM, "play", "-p1", players[0], "-p2", players[1], "--version", version,
         "-d", f"seed={seed}", "-l", str(log), "--time-scale", TIME_SCALE],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    printed = result.stdout.splitlines()
    assert sorted(printed[:2]) == ["0", "1"], result.stdout
    assert f"seed={seed}" in printed[2:]
    return json.loads(log.read_text())


def check_clean_game(log: dict, seat: int, version: str) -> None:
    """A finished game with a winner, no error, no rejected action, and real play by the bot."""
    info = log["cardarena"]
    assert info["version"] == version
    assert info["errorPlayer"] is None, log["summaries"]
    assert info["endReason"] in ("HEALTH", "DECK_OUT"), info
    assert sorted(log["scores"].values()) == [0, 1]
    summaries = "".join(log["summaries"])
    lines = summaries.splitlines()
    assert f"[Warning] ${seat}" not in summaries
    assert f"${seat} timeout" not in summaries
    assert f"Player ${seat} performed action: SUMMON" in summaries
    assert f"Player ${seat} performed action: ATTACK" in summaries
    if version == "1.5":  # the constructed answer: 15 creatures, two copies each
        chosen = next(line for line in lines if line.startswith(f"Player ${seat} chose"))
        assert chosen.count("x2") == 15, chosen
    else:
        picks = [line for line in lines if line.startswith(f"Player ${seat} chose card")]
        assert len(picks) == 30


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The C bot compiled with exactly the command its header and the docs give."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed: the C example bot cannot be built")
    folder = tmp_path_factory.mktemp("cbot")
    folder.chmod(0o755)  # as root the sandboxed bot is another user: readable by all
    binary = folder / "minimal_bot"
    build = subprocess.run(
        [gcc, "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(binary), str(BOTS / "minimal_bot.c")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    return shlex.quote(str(binary))


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_python_bot_plays_clean_games_in_both_seats(version: str, tmp_path: Path) -> None:
    bot = PY_BOT
    for seat in (0, 1):
        log = play(bot, version, SEEDS[version], tmp_path / f"{seat}.json", seat)
        check_clean_game(log, seat, version)


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_c_bot_plays_clean_games_in_both_seats(version: str, c_bot: str, tmp_path: Path) -> None:
    for seat in (0, 1):
        log = play(c_bot, version, SEEDS[version], tmp_path / f"{seat}.json", seat)
        check_clean_game(log, seat, version)


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_python_and_c_bots_make_the_same_moves(version: str, c_bot: str, tmp_path: Path) -> None:
    """The two bots are the same algorithm: against each other's twin the game is identical."""
    logs = []
    for name, bot in (("py", PY_BOT), ("c", c_bot)):
        log = play(bot, version, SEEDS[version], tmp_path / f"{name}.json")
        lines = "".join(log["summaries"]).splitlines()
        logs.append([line for line in lines if "ns at turn" not in line])
    assert logs[0] == logs[1]


def test_python_bot_beats_a_random_bot_most_of_the_time(tmp_path: Path) -> None:
    """Sensible play, not just legal play: it attacks and fills the board, random does not."""
    bot = PY_BOT
    logs = [play(bot, "1.2", seed, tmp_path / f"{seed}.json") for seed in range(1, 6)]
    wins = sum(log["scores"]["0"] for log in logs)
    assert wins >= 4
