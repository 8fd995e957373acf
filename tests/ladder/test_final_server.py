"""One real final on a real ladder server (``locm ladder serve``, real referee games): three
built-ins of clearly different strength, started by an organiser from the command line,
followed through ``GET /api/final`` and the page until their ranks are separated; submissions
frozen, rated play held; the organiser's other commands refuse a participant in one line."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cardarena.ladder.store import LadderStore
from cardarena.locm.cli.main import main

from .test_service import rows, start, wait_for

BOTS = ("builtin:greedy", "builtin:random", "builtin:pass")
"""Clearly ordered: greedy beats random, which beats a bot that only passes."""


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def in_process(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``locm ladder ARGS`` run by this process's ``locm`` (no interpreter start per call)."""

    def locm(*args: str) -> Ran:
        status = main(["ladder", *args])
        said = capsys.readouterr()
        return Ran(status, said.out, said.err)

    return locm


def get(address: str, path: str) -> Any:
    with urllib.request.urlopen(f"{address}{path}", timeout=30) as answer:
        body = answer.read().decode("utf-8")
    return json.loads(body) if path.startswith("api/") else body


def test_a_real_final_separates_three_builtins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locm = in_process(capsys)
    db = tmp_path / "ladder.db"
    with LadderStore(str(db)) as store:
        organiser = store.add_user("olga", organiser=True)
        store.configure(game="locm", version="1.5")
        tokens = []
        for index, command in enumerate(BOTS):
            tokens.append(store.add_user(f"owner{index}"))
            user = store.user_for_token(tokens[-1])
            assert user is not None
            version = store.submit(user, command.split(":")[1], "python", "bot.py", b"#",
                                   new_bot=True)  # fmt: skip
            store.record_build(version, True, "built", command, None)
            store.set_status(version, "active")
        store.set_setting("paused", True)  # no rated game before the final
    server, address = start(db)
    try:
        assert get(address, "api/final")["final"] is None
        refused = locm("final", "start", "--server", address, "--token", tokens[0])
        assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
        assert "only an organiser" in refused.stderr
        refused = locm("admin", "freeze", "--server", address, "--token", tokens[0])
        assert refused.returncode == 1 and "only an organiser" in refused.stderr

        started = locm("final", "start", "--top", "3", "--confidence", "0.9", "--budget",
                       "48", "--server", address, "--token", organiser)  # fmt: skip
        assert started.returncode == 0, started.stderr
        assert started.stdout.startswith("final 1: running")
        resumed = locm("admin", "resume", "--server", address, "--token", organiser)
        assert resumed.returncode == 0, resumed.stderr
        assert resumed.stdout.strip() == "paused: no, submissions frozen: yes"

        final = wait_for(lambda: (f := get(address, "api/final")["final"])["state"] == "done"
                         and f, "the final to end", timeout=120)  # fmt: skip
        assert final["end_reason"] == "separated", final
        assert final["separated"] and final["games_in_play"] == 0
        assert [row["name"] for row in final["standings"]] == ["greedy", "random", "pass"]
        assert final["games_played"] <= 48 and final["games_played"] % 6 == 0
        assert {p["pairs"] for p in final["pairs"]} == {final["games_played"] // 6}
        # rated play was held during the final (it comes back once the final is over)
        [(first_rated, ended)] = rows(
            db,
            "SELECT (SELECT MIN(queued_at) FROM games WHERE "
            "kind = 'rated'), (SELECT ended FROM finals)",
        )
        assert first_rated is None or first_rated >= ended

        page = get(address, "final")
        assert 'data-state="done"' in page and 'data-separated="yes"' in page
        status = locm("final", "status", "--server", address)
        assert status.returncode == 0 and "  1. greedy" in status.stdout, status.stdout

        # the organiser's other commands; text from the server is made harmless on a terminal
        server_at = ("--server", address, "--token", organiser)
        disabled = locm("admin", "disable", "pass", "--reason", "bad \x1b[2J bot", *server_at)
        assert disabled.returncode == 0, disabled.stderr
        assert disabled.stdout == "pass: disabled (bad \\x1b[2J bot)\n"
        again = locm("admin", "disable", "pass", *server_at)
        assert again.returncode == 1 and again.stderr.count("\n") == 1
        assert "disabled already" in again.stderr
        enabled = locm("admin", "enable", "pass", *server_at)
        assert enabled.returncode == 0 and enabled.stdout == "pass: active\n"
        usage = locm("admin", "pause", "pass", *server_at)
        assert usage.returncode == 2 and "takes no bot name" in usage.stderr
    finally:
        server.kill()
        server.wait(30)
