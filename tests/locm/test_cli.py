"""``locm play``, ``replay`` and ``generate`` as a user runs them: a separate process."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardarena.locm.engine.cards import generate_cards
from tests.locm.bots import new_tag, pass_bot, simple_bot, tagged_processes, wait_until_gone

LOCM = [sys.executable, "-m", "cardarena.locm"]
ROOT = Path(__file__).resolve().parents[2]


def locm(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LOCM, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False
    )


@pytest.fixture
def tag() -> Iterator[str]:
    value = new_tag()
    yield value
    assert wait_until_gone(value) == [], "bot processes left behind"


def test_play_prints_scores_then_parameters_that_replay_the_game(tmp_path: Path) -> None:
    first = locm(
        "play",
        "-p1",
        "builtin:random",
        "-p2",
        "builtin:random",
        "--version",
        "1.2",
        "-l",
        str(tmp_path / "a.json"),
    )
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert sorted(lines[:2]) == ["0", "1"]
    params = dict(line.split("=", 1) for line in lines[2:])
    assert set(params) == {"seed", "draftChoicesSeed", "shufflePlayer0Seed", "shufflePlayer1Seed"}
    again = locm(
        "play",
        "-p1",
        "builtin:random",
        "-p2",
        "builtin:random",
        "--version",
        "1.2",
        "-d",
        " ".join(lines[2:]),
        "-l",
        str(tmp_path / "b.json"),
    )
    assert again.stdout == first.stdout
    logs = [json.loads((tmp_path / name).read_text()) for name in ("a.json", "b.json")]
    assert logs[0]["outputs"] == logs[1]["outputs"]
    # Everything but the measured per-turn times is the same.
    timing = re.compile(r"^\$\d \d+ns at turn \d+\n", re.MULTILINE)
    assert [timing.sub("", text) for text in logs[0]["summaries"]] == [
        timing.sub("", text) for text in logs[1]["summaries"]
    ]


def test_play_with_process_bots_and_replay_the_log(tmp_path: Path, tag: str) -> None:
    log = tmp_path / "game.json"
    result = locm(
        "play",
        "-p1",
        simple_bot(tag=tag),
        "-p2",
        pass_bot(tag),
        "-d",
        "seed=42",
        "--time-scale",
        "10",
        "-l",
        str(log),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == ["1", "0"]
    data = json.loads(log.read_text())
    for key in ("errors", "outputs", "summaries", "scores", "gameParameters", "views", "agents"):
        assert key in data
    assert data["scores"] == {"0": 1, "1": 0}
    replay = locm("replay", str(log))
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout.startswith("LOCM 1.5: player 0 = ")
    assert "turn 1: player 0 plays" in replay.stdout
    assert replay.stdout.rstrip().splitlines()[-1].startswith("result: player 0 wins")


def test_generate_prints_the_card_table() -> None:
    result = locm("generate", "-n", "120", "--seed", "42")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "Id",
        "Type",
        "Cost",
        "Att",
        "Def",
        "Keywords",
        "MyHP",
        "OppHP",
        "Draw",
        "Area",
    ]
    assert lines[1] == "=" * 76
    cards = generate_cards(42, 120)
    assert len(lines) == 122
    first = cards[0]
    row = (first.base_id, first.type, first.cost, first.attack, first.defense)
    assert lines[2].split()[:5] == [str(value) for value in row]
    assert locm("generate", "-n", "5").stdout.count("\n") == 7


def test_demo_still_works() -> None:
    result = locm("demo", "--seed", "3")
    assert result.returncode == 0 and "reproduce with: locm demo" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p1", "no-such-bot-program", "-p2", "builtin:random"], "not found"),
        (["-p1", "./README.md", "-p2", "builtin:random"], "is not executable"),
        (["-p1", "/", "-p2", "builtin:random"], "is a directory"),
        (["-p1", "builtin:nobody", "-p2", "builtin:random"], "unknown built-in agent"),
        (["-p1", "builtin:random", "-p2", "builtin:random", "-d", "seed=x"], "seed"),
        (["-p1", "builtin:random", "-p2", "builtin:random", "-d", "seed=1 seed=2"], "twice"),
        (["-p1", "builtin:random", "-p2", "builtin:random", "-d", "cardGenSeed=x"], "cardGenSeed"),
        # a misspelt key would be printed back and play a random game
        (["-p1", "builtin:random", "-p2", "builtin:random", "-d", "sead=7"], "did you mean 'seed'"),
        (["-p1", "builtin:random", "-p2", "builtin:random", "-d", "Seed=7"], "did you mean 'seed'"),
        (
            ["-p1", "builtin:random", "-p2", "builtin:random", "--version", "1.0", "--league", "9"],
            "1-4",
        ),
        (["-p1", "builtin:random", "-p2", "builtin:random", "-d", "seed"], "key=value"),
        (["-p1", "builtin:random", "-p2", "builtin:random", "--version", "2.0"], "2.0"),
        (["-p1", "builtin:random", "-p2", "builtin:random", "--league", "1"], "--league"),
        (["-p1", "builtin:random", "-p2", "builtin:random", "--time-scale", "0"], "positive"),
        (["-p1", "builtin:random", "-p2", "builtin:random", "-l", "/no/such/dir/x.json"], "log"),
        (["-p1", "builtin:random", "-p2", "builtin:random", "-l", "/tmp"], "is a directory"),
        (["-p1", "builtin:random"], "-p2"),
    ],
)
def test_bad_input_is_one_line_and_exit_status_2(args: list[str], message: str) -> None:
    result = locm("play", *args, timeout=30)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_replay_of_a_missing_log_is_a_usage_error(tmp_path: Path) -> None:
    result = locm("replay", str(tmp_path / "nothing.json"))
    assert result.returncode == 2 and "cannot read" in result.stderr


def not_logs(directory: Path) -> dict[str, tuple[Path, str]]:
    """Files that are not game logs, each with what the one-line error must say."""
    database = directory / "t.db"
    with contextlib.closing(sqlite3.connect(database)) as connection:
        connection.execute("CREATE TABLE games (key TEXT)")
        connection.commit()
    binary = directory / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00\x01" + bytes(range(256)) * 4)
    garbage = directory / "garbage.json"
    garbage.write_text("{not json", encoding="utf-8")
    folder = directory / "folder.json"
    folder.mkdir()
    return {
        "database": (database, "is not a game log (a GameResult JSON file): it is an SQLite"),
        "binary": (binary, "is not a game log (a GameResult JSON file): it is binary"),
        "garbage": (garbage, "is not a game log (a GameResult JSON file): invalid JSON"),
        "directory": (folder, "Is a directory"),
    }


@pytest.mark.parametrize("command", ["replay", "view"])
@pytest.mark.parametrize("kind", ["database", "binary", "garbage", "directory"])
def test_a_file_that_is_not_a_log_is_one_line_naming_it(
    tmp_path: Path, command: str, kind: str
) -> None:
    path, message = not_logs(tmp_path)[kind]
    result = locm(command, str(path))
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("locm: error: ") and str(path) in result.stderr
    assert message in result.stderr, result.stderr
    assert "codec" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["t.db", "binary.json", "garbage.json", "folder.json"]
    )  # nothing written (no page for locm view)


def test_aborted_game_prints_null_scores(tmp_path: Path, tag: str) -> None:
    # 1.0/1.2: an empty answer line makes the official runner abort with no scores.
    # Ten times the limits: a Python bot starting on a busy machine must not time out
    # before its empty answer (a timeout scores -1, not null).
    result = locm(
        "play",
        "--version",
        "1.2",
        "-p1",
        simple_bot("empty", 0, tag),
        "-p2",
        "builtin:random",
        "-l",
        str(tmp_path / "log.json"),
        "--time-scale",
        "10",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == ["null", "null"], result.stderr
    assert json.loads((tmp_path / "log.json").read_text())["scores"] == {}


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupting_the_referee_leaves_no_process(signum: int, status: int, tag: str) -> None:
    # One bot is thinking forever, the other ignores SIGTERM and has a child that does too.
    referee = subprocess.Popen(
        [
            *LOCM,
            "play",
            "-p1",
            simple_bot("sleep", 0, tag),
            "-p2",
            simple_bot("noterm", 0, tag),
            "--no-time-limit",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while len(tagged_processes(tag)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        # At least the two bots and the child (a fork may briefly show one more).
        assert len(tagged_processes(tag)) >= 3, "the bots did not start"
        referee.send_signal(signum)
        _out, err = referee.communicate(timeout=30)
    finally:
        if referee.poll() is None:  # a failed assertion above must not leak the game
            referee.kill()
            referee.communicate()
    assert referee.returncode == status
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert tagged_processes(tag) == []


def test_locm_agents_lists_every_built_in_once_as_the_docs_show() -> None:
    from cardarena.locm.agents import AGENT_VERSIONS, BUILTIN_AGENTS, check_agent_version

    done = locm("agents")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert sorted(line.split()[0] for line in lines) == sorted(BUILTIN_AGENTS)
    for line in lines:  # the versions column is what the agent really accepts
        name, versions = line.split()[:2]
        assert versions.split("/") == list(AGENT_VERSIONS.get(name, ("1.0", "1.2", "1.5")))
        for version in ("1.0", "1.2", "1.5"):
            if version in versions.split("/"):
                check_agent_version(name, version)
            else:
                with pytest.raises(ValueError, match="plays LOCM"):
                    check_agent_version(name, version)
    doc = (Path(__file__).parents[2] / "docs" / "agents.md").read_text(encoding="utf-8")
    assert "\n".join(lines) in doc


def test_a_versioned_agent_plays_through_the_referee() -> None:
    done = locm("play", "-p1", "builtin:search-v1", "-p2", "builtin:greedy", "--version", "1.2",
                "-d", "seed=4", "--time-scale", "4")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()[:2]) == ["0", "1"]


SLOW_AGENT = """
import time
from cardarena.locm.agents import GreedyAgent


class Slow(GreedyAgent):
    # computes for 0.3 s of CPU at the start of one battle turn, its third or the next
    # (once: a game in time does not pay it every turn)
    def act(self, state):
        if state.phase.name == "BATTLE" and state.turn >= 4 and self.seen < 0:
            self.seen = state.turn
            end = time.process_time() + 0.3
            while time.process_time() < end:
                pass
        return super().act(state)


def make(seed):
    agent = Slow(seed)
    agent.seen = -1
    return agent
"""


def test_an_in_process_agent_over_the_limit_loses_on_time_like_a_bot(tmp_path: Path) -> None:
    """The official clock holds for built-in and python: agents too (the turn's thinking
    against the scaled limit); --time-scale and --no-time-limit apply."""
    (tmp_path / "slow_agent.py").write_text(SLOW_AGENT)
    agent = f"python:{tmp_path / 'slow_agent.py'}:make"
    log = tmp_path / "game.json"
    base = ["play", "-p1", agent, "-p2", "builtin:random", "--version", "1.2", "-d", "seed=1"]
    late = locm(*base, "-l", str(log))
    assert late.returncode == 0, late.stderr
    assert late.stdout.splitlines()[:2] == ["-1", "0"]  # as for a bot process that times out
    game = json.loads(log.read_text())
    assert any("$0 timeout!" in line for line in game["summaries"])
    assert any("over the 200 ms limit" in text for text in game["errors"]["0"] if text)
    # 0.3 s of CPU is over 200 ms of wall time however idle the machine; under a 50x
    # scale (10 s) it is in time however busy (it would need 33 other busy processes).
    for option in (["--time-scale", "50"], ["--no-time-limit"]):
        in_time = locm(*base, *option)
        assert in_time.returncode == 0, in_time.stderr
        assert in_time.stdout.splitlines()[0] != "-1", option
