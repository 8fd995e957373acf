"""docs/protocol.md against the engine: its example inputs and field lists are what bots really get.

Every example block in the page is marked with the game that produced it; the
test plays that game again through ``locm play`` with the minimal example bot,
which copies each input block it receives into a file (MINIMAL_BOT_LOG), and
compares. The field tables are checked against every line of those real games.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "protocol.md"
PYTHON = sys.executable
EXAMPLE = re.compile(
    r"<!-- input version=(\S+) seed=(\d+) block=(\d+) -->\n```text\n(.*?)```", re.S
)
FIELD_ROW = re.compile(r"^\| (1\.[025]) \| (\w+) \| `([^`]+)` \|$", re.M)
ELISION = "…"


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def examples() -> list[tuple[str, int, int, str]]:
    return [(v, int(s), int(b), text) for v, s, b, text in EXAMPLE.findall(doc_text())]


def field_lists() -> dict[tuple[str, str], list[str]]:
    rows = FIELD_ROW.findall(doc_text())
    return {(version, kind): fields.split() for version, kind, fields in rows}


_GAMES: dict[tuple[str, int], list[list[str]]] = {}


def inputs_of_game(version: str, seed: int, tmp_path: Path) -> list[list[str]]:
    """Player 0's input blocks in the game the doc's command plays (minimal bot vs random)."""
    if (version, seed) not in _GAMES:
        log = tmp_path / f"inputs-{version}-{seed}.txt"
        result = subprocess.run(
            [PYTHON, "-m", "cardarena.locm", "play",
             "-p1", f"{PYTHON} examples/bots/minimal_bot.py",
             "-p2", f"{PYTHON} -m cardarena.locm bot random --seed 1",
             "--version", version, "-d", f"seed={seed}", "--time-scale", "10",
             "--no-sandbox",  # the bot writes its log outside a sandbox's private /tmp
             "--bot-env", "MINIMAL_BOT_LOG"],
            capture_output=True, text=True, timeout=300, cwd=ROOT, check=False,
            env={**os.environ, "MINIMAL_BOT_LOG": str(log)},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        blocks = log.read_text(encoding="utf-8").split("\n\n")
        _GAMES[version, seed] = [block.split("\n") for block in blocks if block]
    return _GAMES[version, seed]


def test_the_page_has_an_example_of_every_phase_and_version() -> None:
    found = {(version, block == 0) for version, _, block, _ in examples()}
    assert {("1.2", True), ("1.5", True)} <= found  # draft and constructed inputs
    assert {("1.0", False), ("1.2", False), ("1.5", False)} <= found  # battle inputs


@pytest.mark.parametrize("example", examples(), ids=lambda e: f"{e[0]}-seed{e[1]}-block{e[2]}")
def test_example_block_is_what_the_engine_sends(
    example: tuple[str, int, int, str], tmp_path: Path
) -> None:
    version, seed, block, text = example
    real = inputs_of_game(version, seed, tmp_path)[block]
    shown = text.rstrip("\n").split("\n")
    if ELISION in shown:  # a long block: the lines before and after "…" are checked
        cut = shown.index(ELISION)
        head, tail = shown[:cut], shown[cut + 1 :]
        assert real[: len(head)] == head
        assert real[len(real) - len(tail) :] == tail
    else:
        assert real == shown


def parse_block(lines: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Split a real input block into its player lines, opponent action lines and card lines."""
    actions = int(lines[2].split()[1])
    count = int(lines[3 + actions])
    cards = lines[4 + actions :]
    assert len(cards) == count
    return lines[:2], lines[3 : 3 + actions], cards


ALLOWED = {
    "location": {"0", "1", "-1"},
    "type": {"0", "1", "2", "3"},
    "area": {"0", "1", "2"},
    "lane": {"-1", "0", "1"},
}


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.5"])
def test_field_lists_match_every_line_of_a_real_game(version: str, tmp_path: Path) -> None:
    fields = field_lists()
    kinds = {kind for v, kind in fields if v == version}
    assert kinds == {"player", "card", "SUMMON", "ATTACK", "USE"}
    seen: set[str] = set()
    for lines in inputs_of_game(version, 42, tmp_path):
        players, actions, cards = parse_block(lines)
        for line in players:
            assert len(line.split()) == len(fields[version, "player"]), line
        for line in actions:
            words = line.split()
            names = fields[version, words[1]]
            assert len(words) == len(names) and names[1] == words[1], line
            seen.add(words[1])
        for line in cards:
            values = dict(zip(fields[version, "card"], line.split(), strict=True))
            assert re.fullmatch(r"[B-][C-][D-][G-][L-][W-]", values["abilities"]), line
            for name, allowed in ALLOWED.items():
                if name in values:
                    assert values[name] in allowed, (name, line)
            if values["location"] == "0" and "lane" in values:
                assert values["lane"] == "-1", line
    assert {"SUMMON", "ATTACK"} <= seen  # the opponent's action lines really were checked


def test_docs_and_readme_do_not_link_outside_the_project() -> None:
    """The docs must stand alone: no link may leave the repository."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    # docs/shared-deck.md is being rewritten on another branch; it is checked once merged.
    pages = [page for page in pages if page.name != "shared-deck.md"]
    for page in pages:
        targets = re.findall(r"\]\(([^)\s]+)", page.read_text(encoding="utf-8"))
        assert [t for t in targets if "shared/spec" in t or t.startswith("../../")] == [], page


def test_the_doc_names_every_built_in_agent() -> None:
    from cardarena.locm.agents import BUILTIN_AGENTS

    named = re.search(r"`builtin:([a-z0-9|-]+)`", " ".join(doc_text().split()))
    assert named is not None
    assert sorted(named.group(1).split("|")) == sorted(BUILTIN_AGENTS)


def test_version_phase_and_seat_follow_from_the_input_as_the_doc_says() -> None:
    """The rules of "Telling the version, the phase and your seat", checked on every input
    of every recorded official game, and against the detection ``locm bot`` uses."""
    from cardarena.locm.engine.text import detect_version
    from tests.conftest import conformance_games

    text = " ".join(doc_text().split())
    assert "### Telling the version, the phase and your seat from the input" in text
    for phrase in ("1.5 player lines have 4", "1.0 card lines have 11", "1.2 ones 12",
                   "1.5 ones 13", "is `0` in every deck-building block",
                   "every card of a deck-building block has instance id `-1`",
                   "`1` if you are player 0"):  # fmt: skip
        assert phrase in text, phrase
    for version in ("1.0", "1.2", "1.5"):
        card_fields = {"1.0": 11, "1.2": 12, "1.5": 13}[version]
        building = 2 if version == "1.5" else 60
        for game in conformance_games(version):
            first_mana: dict[int, int] = {}
            for index, turn in enumerate(game["turns"]):
                lines = turn["input"].rstrip("\n").split("\n")
                me = lines[0].split()
                actions = int(lines[2].split()[1])
                cards = lines[4 + actions :]
                assert len(me) == (4 if version == "1.5" else 5)
                assert all(len(card.split()) == card_fields for card in cards)
                ids = {card.split()[1] for card in cards}
                assert detect_version(lines) == version
                deck_building = index < building
                assert (me[1] == "0") == deck_building
                assert (ids == {"-1"}) == deck_building
                if deck_building:
                    assert len(cards) == (120 if version == "1.5" else 3)
                else:
                    first_mana.setdefault(turn["player"], int(me[1]))
            assert all(mana == player + 1 for player, mana in first_mana.items())
