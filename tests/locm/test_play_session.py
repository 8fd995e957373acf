"""The human seat's game session, without a browser: a scripted person plays whole games
through the same calls the page makes, and the session's rules are checked one by one."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from cardarena.locm.engine.params import resolve_parameters
from cardarena.locm.play.session import GameSession, MoveRefused
from cardarena.locm.referee.game_loop import GameOutcome
from cardarena.locm.viewer.frames import build_frames

Chooser = Callable[[GameSession, dict[str, Any]], Awaitable[None]]


async def first_move(session: GameSession, decision: dict[str, Any]) -> None:
    """The first offered move; in battle the last one (a move rather than PASS)."""
    actions = decision["actions"]
    action = actions[-1] if decision["kind"] == "battle" else actions[0]
    await session.move(decision["seat"], decision["id"], action)


async def play(session: GameSession, choose: Chooser = first_move) -> GameOutcome:
    """Play ``session`` to its end, answering each of its human decisions with ``choose``."""
    task = asyncio.create_task(session.run())
    seen = -1
    while not task.done():
        await session.wait_change(seen, 30)
        seen = session.seq
        for seat in session.humans[:1] if len(session.humans) > 1 else session.humans:
            decision = session.view(seat)["decision"]
            if decision is not None and decision["actions"]:
                await choose(session, decision)
        await asyncio.sleep(0)
    return task.result()


def new_session(version: str, specs: tuple[str, str] = ("human", "builtin:random"),
                **options: Any) -> GameSession:  # fmt: skip
    return GameSession(specs, resolve_parameters(version, {"seed": "11"}), **options)


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_a_whole_game_logs_a_game_result_that_replays(version: str) -> None:
    async def main() -> tuple[GameOutcome, GameSession]:
        session = new_session(version)
        return await play(session), session

    outcome, session = asyncio.run(main())
    assert outcome.winner in (0, 1)
    assert outcome.log["cardarena"]["players"] == ["human", "builtin:random"]
    replayed = build_frames(json.loads(json.dumps(outcome.log)))
    assert replayed["frames"][-1]["winner"] == outcome.winner
    human_lines = [line for line in outcome.log["outputs"]["0"] if line]
    assert len(human_lines) > 1
    # The page saw the battle frame by frame, as the viewer shows it, and the end.
    view = session.view(0)
    assert view["over"] and view["end"]["winner"] == outcome.winner
    assert view["frames"][-1]["kind"] == "end"
    assert sum(frame["kind"] == "action" for frame in view["frames"]) > 0


def test_a_researchers_agent_by_reference_plays_against_a_person(tmp_path: Any) -> None:
    agent = tmp_path / "my_agent.py"
    agent.write_text(
        "class First:\n"
        "    name = 'first'\n"
        "    def act(self, state):\n"
        "        return state.legal_actions()[0]\n"
        "def make_agent(seed):\n"
        "    return First()\n",
        encoding="utf-8",
    )
    outcome = asyncio.run(play(new_session("1.2", ("human", f"python:{agent}:make_agent"))))
    assert outcome.log["cardarena"]["players"][1] == f"python:{agent}:make_agent"
    assert outcome.winner in (0, 1) and outcome.error_player is None


def test_the_page_never_sees_the_bot_hand() -> None:
    hands: list[tuple[int, list[list[int]]]] = []

    async def watch_hands(session: GameSession, decision: dict[str, Any]) -> None:
        for frame in session.view(0)["frames"]:
            if "hand" in frame:
                hands.append((frame["handOf"], frame["hand"]))
        await first_move(session, decision)

    async def main() -> GameSession:
        session = new_session("1.5")
        await play(session, watch_hands)
        return session

    session = asyncio.run(main())
    mine = {inst for frame in session.frames if "hands" in frame for inst, _ in frame["hands"][0]}
    theirs = {inst for frame in session.frames if "hands" in frame for inst, _ in frame["hands"][1]}
    assert hands and all(seat == 0 for seat, _ in hands)
    shown = {inst for _, hand in hands for inst, _ in hand}
    assert shown <= mine and not shown & theirs
    spectator = session.view(None)
    assert all(frame.get("hand", []) == [] for frame in spectator["frames"])
    # Nor its deck: the referee's deck-building lines ("chose cards ...") are not shown.
    events = [line for frame in session.view(0)["frames"] for line in frame["events"]]
    assert events and not [line for line in events if "chose" in line]


def test_stale_and_illegal_moves_are_refused_and_change_nothing() -> None:
    async def main() -> None:
        session = new_session("1.2", ("builtin:random", "human"))
        task = asyncio.create_task(session.run())
        while (decision := session.view(1)["decision"]) is None or decision["kind"] != "battle":
            if decision is not None:
                await session.move(1, decision["id"], "PICK 1")
            await session.wait_change(session.seq, 30)
        before = json.dumps(session.view(1)["decision"])
        with pytest.raises(MoveRefused, match="not a legal move"):
            await session.move(1, decision["id"], "ATTACK 999 -1")
        with pytest.raises(MoveRefused, match="not a legal move"):
            await session.move(1, decision["id"], "PICK 0")
        with pytest.raises(MoveRefused, match="old view"):
            await session.move(1, decision["id"] - 1, "PASS")
        with pytest.raises(MoveRefused, match="only a constructed deck"):
            await session.move(1, decision["id"], remove=3)
        assert json.dumps(session.view(1)["decision"]) == before
        await session.move(1, decision["id"], "PASS")
        with pytest.raises(MoveRefused):  # the same click again: a double click
            await session.move(1, decision["id"], "PASS")
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(main())


def test_constructed_cards_can_be_taken_back_and_an_agent_finishes_the_deck() -> None:
    async def main() -> GameOutcome:
        session = new_session("1.5")
        task = asyncio.create_task(session.run())
        while (decision := session.view(0)["decision"]) is None:
            await session.wait_change(session.seq, 30)
        pool = decision["pool"]
        for base_id in (pool[0], pool[0], pool[5]):
            decision = session.view(0)["decision"]
            await session.move(0, decision["id"], f"CHOOSE {base_id}")
        decision = session.view(0)["decision"]
        assert decision["moves"] == [f"CHOOSE {pool[0]}"] * 2 + [f"CHOOSE {pool[5]}"]
        assert f"CHOOSE {pool[0]}" not in decision["actions"]  # two copies at most
        await session.move(0, decision["id"], remove=pool[0])
        decision = session.view(0)["decision"]
        assert decision["moves"] == [f"CHOOSE {pool[0]}", f"CHOOSE {pool[5]}"]
        assert f"CHOOSE {pool[0]}" in decision["actions"]
        await session.move(0, decision["id"], auto=True)
        while (decision := session.view(0)["decision"]) is None or decision["kind"] != "battle":
            await session.wait_change(session.seq, 30)
        deck = decision["deck"]
        assert len(deck) == 30 and deck.count(pool[0]) >= 1 and pool[5] in deck
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return await play(new_session("1.0"), auto_then_first)

    async def auto_then_first(session: GameSession, decision: dict[str, Any]) -> None:
        if decision["kind"] == "draft":
            await session.move(decision["seat"], decision["id"], auto=True)
        else:
            await first_move(session, decision)

    outcome = asyncio.run(main())
    assert len(outcome.log["outputs"]["0"]) > 30  # every draft pick answered (by the agent)


def test_the_human_clock_runs_out_as_a_timeout() -> None:
    async def main() -> GameOutcome:
        session = new_session("1.2", human_time=0.2)
        session.page_opened()  # the person's page is open (the clock runs from then)...
        return await session.run()  # ...and nobody plays

    outcome = asyncio.run(main())
    assert outcome.winner == 1 and outcome.end_reason.name == "TIMEOUT"
    assert outcome.scores == (-1, 0)


def test_hot_seat_two_people_take_turns_on_one_page() -> None:
    async def both(session: GameSession, decision: dict[str, Any]) -> None:
        assert session.view(session.humans[0])["seat"] == decision["seat"]
        actions = decision["actions"]
        action = actions[-1] if decision["kind"] == "battle" else actions[0]
        await session.move(None, decision["id"], action)

    outcome = asyncio.run(play(new_session("1.2", ("human", "human")), both))
    assert outcome.log["cardarena"]["players"] == ["human 1", "human 2"]
    assert outcome.winner in (0, 1)


def test_the_end_says_a_crashed_bot_crashed() -> None:
    # The official log says TIMEOUT for a bot whose process ended: the page says "crashed".
    import sys
    from pathlib import Path

    crasher = f"{sys.executable} {Path(__file__).parent / 'bots' / 'simple_bot.py'} crash 3"

    async def main() -> tuple[GameOutcome, GameSession]:
        session = new_session("1.2", ("human", crasher), sandbox=False)
        return await play(session), session

    outcome, session = asyncio.run(main())
    assert outcome.winner == 0 and outcome.log["cardarena"]["endReason"] == "TIMEOUT"
    end = session.view(0)["end"]
    assert end["cause"] == "player 1 crashed (its process ended without answering)"
    assert session.view(0)["frames"][-1]["cause"] == end["cause"]


def test_the_persons_clock_starts_when_the_page_first_asks() -> None:
    # `--human-time 5` once lost the game before the page was open: the clock ran from start.
    human_time = 1.0

    async def main() -> None:
        session = new_session("1.2", human_time=human_time)
        task = asyncio.create_task(session.run())
        while session.view(0)["decision"] is None:  # the person is asked (the draft)
            await session.wait_change(session.seq, 30)
        decision = session.decisions[0]
        assert decision.deadline is None  # no page yet: no clock
        await asyncio.sleep(human_time * 1.5)  # longer than the person's time, page closed
        assert not task.done() and not decision.answer.done()
        began = asyncio.get_running_loop().time()
        session.page_opened()
        while decision.deadline is None:
            await session.wait_change(session.seq, 30)
        assert began <= decision.deadline - human_time <= began + 5.0  # counted from the page
        await first_move(session, session.view(0)["decision"])
        while session.decisions.get(0) is decision:
            await session.wait_change(session.seq, 30)
        assert decision.answer.result() is not None  # answered in time, not a timeout
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(main())
