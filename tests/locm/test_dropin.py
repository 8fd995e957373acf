"""``locm play`` in place of the official jar inside contest run and analysis scripts.

Everything runs as a separate process, as a run script runs it. The expected
parameter lines and the timing-line format are facts read from logs the official
jars wrote (the gym-locm consistency datasets of 1.2 and 1.5).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardarena.locm.referee.gameresult import java_properties_order
from tests.locm.bots import new_tag, simple_bot, tagged_processes, wait_until_gone

LOCM = [sys.executable, "-m", "cardarena.locm"]
ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# What the contest analysis scripts match: one run-script line per game, made of the
# date, the two commands, the `-l /dev/stdout` log, the scores and the parameters.
GAME_LINE = re.compile(
    r"^(?P<json>\{.*\}) (?P<score0>-?\d) (?P<score1>-?\d)(?P<params>(?: \S+=\S*)*)\s*$"
)
TIMING = re.compile(r'"\$(\d) (\d+)ns at turn (\d+)\\n"')
"""A summary entry that is exactly one timing line, as the scripts' regex requires."""
TIMING_LINE = re.compile(r"^\$(\d) (\d+)ns at turn (\d+)$")


@pytest.fixture
def tag() -> Iterator[str]:
    value = new_tag()
    yield value
    assert wait_until_gone(value) == [], "bot processes left behind"


def locm(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LOCM, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=ENV,
        check=False,
    )  # fmt: skip


def run_script_line(version: str, p1: str, p2: str, params: str) -> str:
    """One game as the contest run.sh runs the jar: ``-l /dev/stdout | awk 1 ORS=' '``
    (with ten times the limits: what is checked is the output, and a loaded machine once
    made a Python bot time out at the official 100 ms)."""
    result = locm("play", "--version", version, "-p1", p1, "-p2", p2, "-l", "/dev/stdout",
                  "-d", params, "--time-scale", "10")  # fmt: skip
    assert result.returncode == 0, result.stderr
    return " ".join(result.stdout.split("\n"))


@pytest.mark.parametrize(
    ("version", "given", "printed"),
    [
        # The 1.5 contest script passes one key list to every version; the jar keeps the
        # keys it does not read and prints everything in its Properties order.
        (
            "1.5",
            "cardGenSeed=4047 constructedChoicesSeed=4047 draftChoicesSeed=4047 seed=28554 "
            "shufflePlayer0Seed=28554 shufflePlayer1Seed=28554",
            "constructedChoicesSeed=4047 draftChoicesSeed=4047 shufflePlayer0Seed=28554 "
            "seed=28554 cardGenSeed=4047 shufflePlayer1Seed=28554",
        ),
        (
            "1.2",
            "draftChoicesSeed=1 seed=1 shufflePlayer0Seed=1 shufflePlayer1Seed=1",
            "draftChoicesSeed=1 shufflePlayer0Seed=1 seed=1 shufflePlayer1Seed=1",
        ),
    ],
)
def test_parameters_are_printed_back_like_the_jar(version: str, given: str, printed: str) -> None:
    result = locm("play", "--version", version, "-p1", "builtin:greedy", "-p2",
                  "builtin:random", "-d", given)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert " ".join(result.stdout.splitlines()[2:]) == printed


def test_unknown_keys_are_kept_and_replay_the_same_game() -> None:
    first = locm("play", "-p1", "builtin:greedy", "-p2", "builtin:random",
                 "-d", "seed=9 myTag=night-run predefinedDraftIds=1_2_3")  # fmt: skip
    assert first.returncode == 0, first.stderr
    params = dict(line.split("=", 1) for line in first.stdout.splitlines()[2:])
    assert params["myTag"] == "night-run" and params["predefinedDraftIds"] == "1_2_3"
    # a key no version reads is kept, with one note (a misspelt one is refused: test_cli.py)
    assert first.stderr.splitlines() == [
        "locm: note: no LOCM version reads 'myTag'; kept and printed back"
    ]
    plain = locm("play", "-p1", "builtin:greedy", "-p2", "builtin:random", "-d", "seed=9")
    assert first.stdout.splitlines()[:2] == plain.stdout.splitlines()[:2]
    again = locm("play", "-p1", "builtin:greedy", "-p2", "builtin:random",
                 "-d", " ".join(first.stdout.splitlines()[2:]))  # fmt: skip
    assert again.stdout == first.stdout


def test_a_key_repeated_across_d_options_is_a_usage_error() -> None:
    # `-d seed=1 -d seed=2` once kept the last value silently: a different game than meant.
    result = locm("play", "-p1", "builtin:random", "-p2", "builtin:random",
                  "-d", "seed=1", "-d", "seed=2")  # fmt: skip
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "'seed' given twice" in result.stderr
    split = locm("play", "-p1", "builtin:random", "-p2", "builtin:random",
                 "-d", "seed=1", "-d", "draftChoicesSeed=4")  # fmt: skip
    joined = locm("play", "-p1", "builtin:random", "-p2", "builtin:random",
                  "-d", "seed=1 draftChoicesSeed=4")  # fmt: skip
    assert split.returncode == 0 and split.stdout == joined.stdout


def test_predefined_constructed_ids_play_a_1_5_game(tmp_path: Path) -> None:
    ids = ",".join(str(i) for i in reversed(range(120)))
    log = tmp_path / "game.json"
    result = locm("play", "-p1", "builtin:greedy", "-p2", "builtin:random", "-d",
                  f"seed=4 predefinedConstructedIds={ids}", "-l", str(log))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"predefinedConstructedIds={ids}" in result.stdout.splitlines()
    data = json.loads(log.read_text())
    assert data["scores"] in ({"0": 1, "1": 0}, {"0": 0, "1": 1})


def test_properties_order_matches_a_jdk_17_with_many_keys() -> None:
    # Orders printed by OpenJDK 17.0.15 for these insertions (more than 12 keys: the
    # table doubles and bins split); our model agreed on 60 random key sets too.
    assert java_properties_order([f"k{i}" for i in range(14)]) == [
        "k0", "k1", "k2", "k3", "k4", "k5", "k11", "k6", "k10", "k7", "k13", "k8", "k12", "k9",
    ]  # fmt: skip
    given = "a b c d e f g h i j seed xyz predefinedDraftIds"
    added = ("draftChoicesSeed shufflePlayer0Seed shufflePlayer1Seed foo bar baz qux quux "
             "corge grault garply waldo fred plugh")  # fmt: skip
    jdk = (
        "corge seed foo plugh predefinedDraftIds grault shufflePlayer0Seed bar qux waldo xyz "
        "baz fred a draftChoicesSeed b c d e f g h i j garply shufflePlayer1Seed quux"
    )
    assert java_properties_order(given.split(), added.split()) == jdk.split()


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_timing_lines_parse_like_the_contest_analysis_scripts(version: str, tag: str) -> None:
    line = run_script_line(version, simple_bot(tag=tag), simple_bot(tag=tag),
                           "seed=77 draftChoicesSeed=5 cardGenSeed=5")  # fmt: skip
    match = GAME_LINE.match(line)
    assert match is not None, line[-300:]
    assert {match["score0"], match["score1"]} == {"0", "1"}
    log = json.loads(match["json"])
    timings = [(int(p), int(ns), int(turn)) for p, ns, turn in TIMING.findall(match["json"])]
    # Every battle turn has exactly one line, numbered from 0, players alternating.
    every = [
        TIMING_LINE.match(text)
        for entry in log["summaries"]
        for text in entry.splitlines()
        if "ns at turn" in text
    ]
    assert all(every)
    lines = [(int(m[1]), int(m[2]), int(m[3])) for m in every if m]
    deck = lines[:2] if version == "1.5" else []
    battle = lines[len(deck) :]
    assert [(p, turn) for p, _ns, turn in deck] == ([(0, 0), (1, 0)] if deck else [])
    answers = sum(1 for entry in log["outputs"]["0"] + log["outputs"]["1"] if entry)
    deck_answers = 2 if version == "1.5" else 60
    assert len(battle) == answers - deck_answers
    assert [turn for _p, _ns, turn in battle] == list(range(len(battle)))
    assert [p for p, _ns, _turn in battle] == [turn % 2 for turn in range(len(battle))]
    assert all(0 < ns < 5_000_000_000 for _p, ns, _turn in lines)
    # Most battle entries are a timing line alone, which the scripts' regex needs.
    assert len(timings) >= len(battle) // 2


def test_a_bot_that_crashes_at_once_loses_and_the_result_is_printed(tmp_path: Path) -> None:
    log = tmp_path / "game.json"
    result = locm("play", "-p1", f"{sys.executable} /no/such/bot.py", "-p2", "builtin:random",
                  "-d", "seed=5", "-l", str(log))  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == ["-1", "0"]
    assert "seed=5" in lines[2:]
    assert result.stderr.startswith("locm: warning: -p1 ") and "exited with status 2" in (
        result.stderr
    )
    data = json.loads(log.read_text())
    assert data["scores"] == {"0": -1, "1": 0}
    assert any("¤RED¤$0 timeout!§RED§" in entry for entry in data["summaries"])


def test_a_bot_that_crashes_mid_game_loses(tmp_path: Path, tag: str) -> None:
    # Ten times the limits: on a busy machine the Python bot must reach its crash (its
    # 36th answer, after 30 draft turns of 100 ms) without timing out first.
    log = tmp_path / "game.json"
    result = locm("play", "--version", "1.2", "-p1", "builtin:greedy", "-p2",
                  simple_bot("crash", 35, tag), "-d", "seed=5", "-l", str(log),
                  "--time-scale", "10")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] in (["0", "-1"], ["1", "-1"])
    # It did play (no start-up failure): a loss, said in one line.
    assert result.stderr.splitlines() == [
        f"locm: warning: -p2 {simple_bot('crash', 35, tag)!r}: exited during the game "
        f"(a crash?): lost; see each turn with: locm view {log}"
    ]
    # As in the 1.5 jar's source: the red error line, then the turn's timing line.
    last = [entry for entry in json.loads(log.read_text())["summaries"] if entry][-1]
    first_line, second_line = last.splitlines()[:2]
    assert first_line == "¤RED¤$1 timeout!§RED§"
    assert TIMING_LINE.match(second_line) and second_line.startswith("$1 ")


def test_a_command_that_cannot_run_is_a_usage_error_and_writes_nothing(tmp_path: Path) -> None:
    log = tmp_path / "game.json"
    result = locm("play", "-p1", "./no-such-bot", "-p2", "builtin:random", "-l", str(log))
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and "not found" in result.stderr
    assert not log.exists()


def test_an_unwritable_log_still_prints_the_result() -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    result = locm("play", "-p1", "builtin:random", "-p2", "builtin:random", "-d", "seed=5",
                  "-l", "/dev/full")  # fmt: skip
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert sorted(lines[:2]) == ["0", "1"] and "seed=5" in lines
    assert result.stderr.strip().splitlines() == [
        "locm: error: cannot write the log /dev/full: No space left on device"
    ]


def test_the_log_is_replaced_whole_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    log = tmp_path / "game.json"
    log.write_text("old\n")
    result = locm("play", "-p1", "builtin:random", "-p2", "builtin:random", "-l", str(log))
    assert result.returncode == 0, result.stderr
    assert json.loads(log.read_text())["scores"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.json"]


def _bots(tag: str, referee: int) -> list[int]:
    """The tagged processes but the referee (its own command line holds the tag too)."""
    return [pid for pid, _state in tagged_processes(tag) if pid != referee]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_game_interrupted_before_any_move_leaves_no_log(
    tmp_path: Path, tag: str, signum: int
) -> None:
    # (One interrupted after moves writes what was played: tests/test_interrupts.py.)
    fresh, kept = tmp_path / "fresh.json", tmp_path / "kept.json"
    kept.write_text("previous result\n")
    for log in (fresh, kept):
        referee = subprocess.Popen(
            [*LOCM, "play", "-p1", simple_bot("sleep", 0, tag), "-p2", "builtin:random",
             "--no-time-limit", "-l", str(log)],
            cwd=ROOT, env={**ENV, "PYTHONFAULTHANDLER": "1"}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            # Generous: a loaded machine can take many seconds to start a referee and a bot.
            deadline = time.monotonic() + 120
            while not _bots(tag, referee.pid) and time.monotonic() < deadline:
                assert referee.poll() is None, referee.communicate()
                time.sleep(0.05)
            if not _bots(tag, referee.pid):  # once in a loaded full run: say where it hangs
                ps = ["ps", "-o", "pid,stat,wchan:20,comm", "--ppid", str(referee.pid)]
                children = subprocess.run(ps, capture_output=True, text=True, check=False)
                referee.send_signal(signal.SIGABRT)  # faulthandler: every thread's stack
                _out, err = referee.communicate(timeout=30)
                raise AssertionError(f"the bot did not start in 120 s; the referee's children:"
                                     f"\n{children.stdout}\nits stacks:\n{err}")  # fmt: skip
            referee.send_signal(signum)
            out, _err = referee.communicate(timeout=30)
        finally:
            if referee.poll() is None:
                referee.kill()
                referee.communicate()
        assert referee.returncode in (130, 143) and out == ""
        assert wait_until_gone(tag) == []
    assert not fresh.exists()
    assert kept.read_text() == "previous result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json"]


def test_search_bot_regression_game_with_a_health_costing_card(tmp_path: Path) -> None:
    # 3 crashes in 4 runs under load before the fix ("the game has ended; cannot apply
    # PASS"); the faulty path itself is unit-tested in test_agents. Two budgets here,
    # so that the search reaches different depths.
    for scale in ("0.3", "1"):
        log = tmp_path / f"search-{scale}.json"
        bot = f"{sys.executable} -m cardarena.locm bot"
        result = locm("play", "-p1", f"{bot} search --seed 2 --time-scale {scale}",
                      "-p2", f"{bot} greedy --seed 1", "--version", "1.2",
                      "-d", "seed=-105101808054076406", "--time-scale", "4",
                      "-l", str(log))  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert "-1" not in result.stdout.splitlines()[:2], result.stdout
        stderr = "".join(entry for entry in json.loads(log.read_text())["errors"]["0"] if entry)
        assert "Traceback" not in stderr and "cannot apply" not in stderr


def test_log_to_dev_stdout_redirected_to_a_file_comes_before_the_scores(tmp_path: Path) -> None:
    # Through a pipe (run_script_line above) and into a file: the same bytes, in order.
    out = tmp_path / "out.txt"
    with out.open("w") as stdout:
        result = subprocess.run(
            [*LOCM, "play", "-p1", "builtin:greedy", "-p2", "builtin:random", "-d", "seed=8",
             "-l", "/dev/stdout"],
            stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=ENV, timeout=120,
            check=False,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    first, *rest = out.read_text().split("\n")
    assert json.loads(first)["scores"] in ({"0": 1, "1": 0}, {"0": 0, "1": 1})
    assert sorted(rest[:2]) == ["0", "1"] and "seed=8" in rest
    assert Path("/dev/stdout").is_symlink() or not Path("/dev/stdout").is_file()


def test_replay_reads_jar_logs_whatever_keys_the_script_passed() -> None:
    from cardarena.locm.referee.replay import log_setup

    # A 1.2 jar (SDK 2) log: parameters in "uinput"; a contest script passed 1.5 keys too.
    jar_1_2 = {
        "outputs": {},
        "uinput": ["cardGenSeed=4 draftChoicesSeed=1\nseed=1\n".replace(" ", "\n")],
        "summaries": ["", "Player $0 chose Coppershell Tortoise (#64) creature COST:2\n"],
    }
    assert log_setup(jar_1_2)[:2] == ("1.2", {"cardGenSeed": "4", "draftChoicesSeed": "1",
                                              "seed": "1"})  # fmt: skip
    jar_1_5 = {
        "outputs": {},
        "gameParameters": ["draftChoicesSeed=4", "seed=1"],
        "summaries": ["", "Player $0 chose cards 0x2, 1x2.\n$0 146513100ns at turn 0\n"],
    }
    assert log_setup(jar_1_5)[0] == "1.5"


def test_a_full_standard_output_is_one_line_not_a_traceback() -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [*LOCM, "play", "-p1", "builtin:random", "-p2", "builtin:random"],
            stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=ENV, timeout=120,
            check=False,
        )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.splitlines() == ["locm: error: No space left on device"]
