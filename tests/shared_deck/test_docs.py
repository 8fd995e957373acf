"""docs/shared-deck.md says only what the code does: every error and command it names exists
(and every one that exists is documented), its transcripts replay against a real server, and
its scoring example adds up."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

from cardarena.shared_deck.arena import tournament_points
from cardarena.shared_deck.errors import ErrorCode
from cardarena.shared_deck.protocol import ARGUMENT_COUNTS
from cardarena.shared_deck.rules import RuleSet, match_score

from .conftest import RunningServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "shared-deck.md"


def doc() -> str:
    return DOC.read_text(encoding="utf-8")


def section(title: str) -> str:
    text = doc()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def transcripts() -> list[list[str]]:
    """The fenced blocks of the Transcripts part that are client/server exchanges."""
    part = section("The protocol")
    blocks = re.findall(r"```\n(.*?)```", part, flags=re.S)
    return [b.splitlines() for b in blocks if b.startswith(("< ", "> "))]


def test_the_doc_stands_alone() -> None:
    text = doc()
    assert "../shared" not in text and "shared/spec" not in text
    assert "## Running a server" in text
    for anchor in ("#limits", "#the-game", "#the-protocol", "#the-client-library", "#decisions"):
        assert f"]({anchor})" in text, anchor


def test_every_error_is_documented_and_every_documented_error_exists() -> None:
    text = doc()
    for code in ErrorCode:
        assert f"`ERR {code.value} {code.name}`" in text, code
    for number, name in re.findall(r"\b(9[0-9]{2}) ([A-Z][A-Za-z]+)\b", text):
        assert ErrorCode(int(number)).name == name, (number, name)
    for number in re.findall(r"`(9[0-9]{2})`", text):
        assert int(number) in {code.value for code in ErrorCode}, number


def test_every_command_is_documented_and_every_documented_command_exists() -> None:
    part = section("The protocol")
    table = re.findall(r"^\| (`.*?) \|", part, flags=re.M)
    documented: dict[str, int] = {}
    for cell in table:
        for usage in re.findall(r"`([A-Z_]+(?: [a-z_]+)*)`", cell):
            command, *args = usage.split()
            documented[command] = len(args)
    assert documented == ARGUMENT_COUNTS
    for lines in transcripts():
        for line in lines:
            if line.startswith("> ") and line[2:].split()[0].isupper():
                word = line[2:].split()[0]
                assert word in ARGUMENT_COUNTS or word in ("HELLO",), line


def replay(server: RunningServer, lines: list[str], before_wait: Callable[[], None]) -> None:
    """Send every ``>`` line, check every ``<`` line; ``before_wait`` runs before the first
    WAIT (to log the second player in)."""
    connection = server.raw()
    waited = False
    try:
        for number, line in enumerate(lines):
            if line.startswith(">"):
                text = line[2:].replace("<alice's secret>", server.secrets["alice"])
                if text == "WAIT" and not waited:
                    before_wait()
                    waited = True
                connection.send(text + "\n")
            else:
                assert connection.line() == line[2:], f"line {number + 1}: {line}"
    finally:
        connection.close()


def test_the_turn_transcript_replays(start_server: Callable[..., RunningServer]) -> None:
    rules = RuleSet(deck_size=8, turns_per_match=6)
    server = start_server(
        ["alice", "bob"], rules=rules, seed=1, start_after_logins=2, turn_seconds=1.0
    )
    bob = server.raw()
    turn = next(lines for lines in transcripts() if "> DRAW_CARD 1" in lines)
    try:
        replay(server, turn, lambda: bob.login("bob", server.secrets["bob"]))
    finally:
        bob.close()


def test_the_refused_login_replays(start_server: Callable[..., RunningServer]) -> None:
    server = start_server(["alice", "bob"], turn_seconds=60.0)  # the WAIT below never ends
    refused = next(lines for lines in transcripts() if "> not-the-secret" in lines)
    replay(server, refused, lambda: None)
    connection = server.raw()
    connection.login("alice", server.secrets["alice"])
    connection.send("WAIT\n")
    assert connection.line() == "OK"
    other = server.raw()
    other.login("alice", server.secrets["alice"])
    taken = next(lines for lines in transcripts() if "< ERR 942 LoggedInElsewhere" in lines)
    assert taken == ["> WAIT", "< OK", "< ERR 942 LoggedInElsewhere"]
    assert connection.line() == "ERR 942 LoggedInElsewhere"
    assert connection.line() == ""
    other.close()
    connection.close()


def test_the_scoring_example_adds_up() -> None:
    text = section("The game")
    alice = [match_score(12, 0, 20), match_score(5, 9, 20)]
    bob = [match_score(0, 12, 20), match_score(9, 5, 20)]
    assert (alice, bob) == ([72, 26], [-12, 34])
    points = tournament_points({"alice": alice, "bob": bob})
    assert math.isclose(points["alice"], 3**1.5 + 1) and f"{points['alice']:.3f}" in text
    assert math.isclose(points["bob"], 2**1.5) and f"{points['bob']:.3f}" in text
