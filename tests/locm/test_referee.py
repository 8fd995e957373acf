"""The referee with real bot processes: whole games, every way a bot can fail, cleanup.

Bots that must answer in time run with a generous ``time_scale``; bots that must
time out sleep far beyond any limit, so nothing here depends on the machine's speed.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardarena.locm import EndReason
from cardarena.locm.agents import RandomAgent
from cardarena.locm.referee.game_loop import GameOutcome, TimeControl, play_game
from cardarena.locm.referee.gameresult import (
    answers_from_log,
    java_properties_order,
    parameter_lines,
)
from cardarena.locm.referee.players import InProcessPlayer, LineSplitter, ProcessPlayer
from cardarena.locm.referee.protocol_game import ProtocolGame
from cardarena.locm.referee.replay import replay_lines
from tests.locm.bots import (
    compile_c_bot,
    new_tag,
    open_fds,
    pass_bot,
    simple_bot,
    tagged_processes,
    wait_until_gone,
    zombie_children,
)

RELAXED = TimeControl(scale=10.0)
"""Ten times the official limits: honest bots never time out, even on a loaded machine."""


@pytest.fixture
def tag() -> Iterator[str]:
    """A unique tag for the test's bots; afterwards none of them may be left running."""
    value = new_tag()
    yield value
    assert wait_until_gone(value) == [], "bot processes left behind"
    assert zombie_children() == []


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler on this machine")
    return compile_c_bot(tmp_path_factory.mktemp("cbot"))


def check_log(outcome: GameOutcome) -> None:
    """The GameResult log is self-consistent and replays to the same result."""
    log = json.loads(json.dumps(outcome.log))
    rounds = len(log["views"])
    assert len(log["errors"]["referee"]) == rounds
    for key in ("0", "1"):
        assert len(log["outputs"][key]) == len(log["errors"][key])
        assert all(e is None or len(e.encode()) <= 4096 * 4 for e in log["errors"][key])
    assert log["gameParameters"] == outcome.parameter_lines
    if outcome.scores is None:
        assert log["scores"] == {} and "failCause" in log
    else:
        assert log["scores"] == {"0": outcome.scores[0], "1": outcome.scores[1]}
        assert len(log["summaries"]) == rounds == len(log["outputs"]["referee"])
    last = list(replay_lines(log))[-1]
    assert "differs" not in last
    if outcome.winner is not None:
        assert last.startswith(f"result: player {outcome.winner} wins")


# --- whole games -------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_full_game_python_bot_against_c_bot(version: str, c_bot: Path, tag: str) -> None:
    outcome = play_game(
        simple_bot(tag=tag),
        f"{c_bot} - {tag}",
        version=version,
        params={"seed": 5},
        time_control=RELAXED,
    )
    assert outcome.scores in ((1, 0), (0, 1))
    assert outcome.end_reason in (EndReason.HEALTH, EndReason.DECK_OUT, EndReason.TURN_LIMIT)
    check_log(outcome)
    # The C bot writes 256 KiB of stderr per turn: the log keeps a bounded part of it.
    stderr = [entry for entry in outcome.log["errors"]["1"] if entry]
    assert stderr and all(len(entry) == 4096 for entry in stderr)


def test_full_game_shell_bot_against_builtin_random(tag: str) -> None:
    outcome = play_game(
        pass_bot(tag), "builtin:random", version="1.5", params={"seed": 8}, time_control=RELAXED
    )
    assert outcome.scores in ((1, 0), (0, 1))
    answers = answers_from_log(outcome.log)
    assert set(answers[0]) == {"PASS"}
    assert answers[1][0].count("CHOOSE") == 30
    check_log(outcome)


def test_builtin_agents_replay_from_printed_parameters() -> None:
    first = play_game("builtin:random", "builtin:random", version="1.2")
    again = play_game("builtin:random", "builtin:random", version="1.2", params=first.parameters)
    assert again.log["outputs"] == first.log["outputs"]
    assert again.summaries == first.summaries


# --- bots that fail ----------------------------------------------------------------


def test_timeout_on_the_first_turn(tag: str) -> None:
    outcome = play_game(
        simple_bot("sleep", 0, tag), simple_bot(tag=tag), version="1.2", params={"seed": 1}
    )
    assert outcome.scores == (-1, 0)
    assert outcome.end_reason == EndReason.TIMEOUT
    assert outcome.summaries[-1] == "$0 timeout!"
    assert outcome.log["outputs"]["0"][-1] is None
    assert outcome.log["summaries"][-1] == "¤RED¤$0 timeout!§RED§\n"
    check_log(outcome)


def test_timeout_later_in_the_battle(tag: str) -> None:
    outcome = play_game(
        simple_bot(tag=tag),
        simple_bot("sleep", 4, tag),
        version="1.5",
        params={"seed": 2},
        time_control=TimeControl(scale=3.0),
    )
    assert outcome.scores == (0, -1)
    assert outcome.end_reason == EndReason.TIMEOUT
    assert len(answers_from_log(outcome.log)[1]) == 4
    check_log(outcome)


def test_crash_mid_game_loses_at_once_and_logs_stderr(tag: str) -> None:
    outcome = play_game(
        simple_bot("crash", 3, tag),
        simple_bot(tag=tag),
        version="1.5",
        params={"seed": 3},
        time_control=TimeControl(enabled=False),
    )
    assert outcome.scores == (-1, 0)
    assert outcome.end_reason == EndReason.TIMEOUT
    assert any("crashing on purpose" in (e or "") for e in outcome.log["errors"]["0"])
    check_log(outcome)


def test_garbage_is_a_hard_error(tag: str) -> None:
    outcome = play_game(
        simple_bot("garbage", 2, tag),
        simple_bot(tag=tag),
        version="1.5",
        params={"seed": 4},
        time_control=RELAXED,
    )
    assert outcome.scores == (-1, 0)
    assert outcome.end_reason == EndReason.INVALID_OUTPUT
    assert (
        outcome.summaries[-1] == "$0: Invalid action name. Should be SUMMON, ATTACK,  USE or PASS."
    )


def test_empty_line_passes_the_turn_in_1_5(tag: str) -> None:
    outcome = play_game(
        simple_bot(tag=tag),
        simple_bot("empty", 1, tag),
        version="1.5",
        params={"seed": 5},
        time_control=RELAXED,
    )
    assert outcome.scores in ((1, 0), (0, 1))
    assert answers_from_log(outcome.log)[1][1] == ""


def test_empty_line_aborts_1_2_with_no_result(tag: str) -> None:
    outcome = play_game(
        simple_bot("empty", 3, tag),
        simple_bot(tag=tag),
        version="1.2",
        params={"seed": 5},
        time_control=RELAXED,
    )
    assert outcome.scores is None
    assert outcome.end_reason == EndReason.ABORTED_EMPTY_LINE
    check_log(outcome)


def test_two_lines_at_once_the_second_answers_the_next_turn(tag: str) -> None:
    outcome = play_game(
        simple_bot("two", 1, tag),
        pass_bot(tag),
        version="1.5",
        params={"seed": 6},
        time_control=RELAXED,
    )
    assert outcome.end_reason != EndReason.TIMEOUT
    answers = answers_from_log(outcome.log)[0]
    assert answers[2] == "PASS"  # the extra line, read as the next turn's answer
    assert answers[3] != "PASS"  # and from then on one answer behind


def test_line_of_20000_bytes_is_a_timeout(tag: str) -> None:
    outcome = play_game(
        simple_bot(tag=tag),
        simple_bot("long", 2, tag),
        version="1.5",
        params={"seed": 7},
        time_control=TimeControl(enabled=False),
    )
    assert outcome.scores == (0, -1)
    assert outcome.end_reason == EndReason.TIMEOUT
    assert outcome.summaries[-1] == "$1 timeout!"


def test_cr_lf_split_across_writes_is_one_line_end(tag: str) -> None:
    # In 1.2 a stray empty line would abort the game: none may appear.
    outcome = play_game(
        simple_bot("cr", 0, tag),
        simple_bot(tag=tag),
        version="1.2",
        params={"seed": 9},
        time_control=RELAXED,
    )
    assert outcome.scores in ((1, 0), (0, 1))


def test_bot_that_ignores_sigterm_is_killed_with_its_children(tag: str) -> None:
    outcome = play_game(
        simple_bot(tag=tag), simple_bot("noterm", 1, tag), version="1.5", params={"seed": 1}
    )
    assert outcome.scores == (0, -1)
    assert wait_until_gone(tag, 10.0) == []


def test_shell_bot_that_ignores_sigterm(tag: str) -> None:
    outcome = play_game(
        pass_bot(tag, ignore_term=True),
        simple_bot(tag=tag),
        version="1.5",
        params={"seed": 1},
        time_control=RELAXED,
    )
    assert outcome.scores == (0, 1)


def test_flooding_bot_cannot_block_the_referee(c_bot: Path, tag: str) -> None:
    # 1 MiB of extra stdout lines after its first answer: they answer later turns (PASS).
    outcome = play_game(
        f"{c_bot} flood {tag}",
        simple_bot(tag=tag),
        version="1.5",
        params={"seed": 10},
        time_control=RELAXED,
    )
    assert outcome.scores == (0, 1)
    assert all(answer.startswith("PASS ") for answer in answers_from_log(outcome.log)[0][1:])


def test_no_file_descriptor_leaks(tag: str) -> None:
    before = open_fds()
    for seed in range(3):
        play_game(
            simple_bot(tag=tag),
            pass_bot(tag),
            version="1.5",
            params={"seed": seed},
            time_control=RELAXED,
        )
    assert open_fds() == before


def test_cleanup_when_the_game_is_cancelled(tag: str) -> None:
    """Cancelling the referee's task (what Ctrl-C does) terminates both bots."""
    from cardarena.locm.referee.game_loop import run_game

    async def scenario() -> None:
        players = [ProcessPlayer(simple_bot("sleep", 0, tag)), ProcessPlayer(pass_bot(tag))]
        task = asyncio.create_task(run_game(players, "1.5"))
        while len(tagged_processes(tag)) < 2:
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert tagged_processes(tag) == []


# --- pieces ------------------------------------------------------------------------


def test_line_splitter_follows_the_sdk() -> None:
    lines = LineSplitter()
    lines.feed(b"A\r")
    assert lines.pop_line() == b"A"
    assert lines.pop_line() is None
    lines.feed(b"\nB\r\nC\nD")  # the \n after \r is swallowed, even in a later read
    assert [lines.pop_line(), lines.pop_line(), lines.pop_line()] == [b"B", b"C", None]
    lines.feed(b"\n\n")
    assert [lines.pop_line(), lines.pop_line()] == [b"D", b""]
    lines.feed(b"x" * 9_999 + b"\n")
    assert lines.pop_line() == b"x" * 9_999
    lines.feed(b"y" * 10_000 + b"\n")
    assert lines.pop_line() is None and lines.overflowed


@pytest.mark.parametrize(("version", "expected"), [("1.2", r"PICK \d"), ("1.5", "CHOOSE")])
def test_in_process_player_answers_deck_building_for_either_player(
    version: str, expected: str
) -> None:
    game = ProtocolGame(version, {"seed": 1})
    requests = game.requests()

    async def answers() -> list[str | None]:
        players = [InProcessPlayer(RandomAgent(p)) for p in (0, 1)]
        for request, player in zip(requests, players, strict=True):
            await player.send(request.input, game.state, request.player)
        return [await player.receive(None) for player in players]

    lines = asyncio.run(answers())
    game.answer(lines)
    assert game.error_player is None and not game.over
    for line in lines:
        assert line is not None
        assert len(line.split(";")) == (30 if version == "1.5" else 1)
        assert __import__("re").match(expected, line)


def test_parameters_print_in_the_official_order() -> None:
    assert java_properties_order(
        ["seed", "draftChoicesSeed", "shufflePlayer0Seed", "shufflePlayer1Seed"]
    ) == ["draftChoicesSeed", "shufflePlayer0Seed", "seed", "shufflePlayer1Seed"]
    used = {
        "seed": "1",
        "cardGenSeed": "2",
        "constructedChoicesSeed": "3",
        "shufflePlayer0Seed": "4",
        "shufflePlayer1Seed": "5",
    }
    assert [line.split("=")[0] for line in parameter_lines(used)] == [
        "constructedChoicesSeed",
        "shufflePlayer0Seed",
        "seed",
        "cardGenSeed",
        "shufflePlayer1Seed",
    ]


def test_builtin_search_is_told_the_time_scale() -> None:
    from cardarena.locm.referee.game_loop import make_player

    player = make_player("builtin:search", seed=1, time_scale=2.5)
    assert player.agent.time_scale == 2.5  # type: ignore[attr-defined]
    assert make_player("builtin:search", seed=1).agent.time_scale == 1.0  # type: ignore[attr-defined]
