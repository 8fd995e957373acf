"""Every performance figure in README.md and docs/*.md says how it was measured.

A figure (games/s, steps/s, µs, ms, a speed-up such as 5.3× or "twice as fast") must
have, nearby, the benchmark command that produces it (``python benchmarks/….py``, a
``python -m timeit`` line, or the ``locm tournament`` run it comes from), the CPU it ran
on (its model: the same figure differs by 2x between machines) and the machine's load.
Time limits (the official 100/200/1000/4000 ms and the budgets
derived from them) are rules, not measurements, and are left alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NUMBER = r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:\s*[–-]\s*\d[\d,]*(?:\.\d+)?)?"
FIGURE = re.compile(
    rf"{NUMBER}\s*k?\s*(?:games|steps|actions|commands|pages)/s\b"
    rf"|{NUMBER}\s*(?:µs|us|ms)\b"
    rf"|{NUMBER}[×x](?!\w)"
    r"|\bper second\b|\btwice as fast\b|\bdoubles (?:the|its) (?:engine's )?speed\b"
    r"|\btimes (?:as fast|faster)\b|\ba few (?:µs|microseconds)\b"
)
COMMAND = re.compile(
    r"`(?:python3? (?:benchmarks/\w+\.py|-m timeit|examples/rl/train_battle\.py)"
    r"|locm tournament)[^`]*`"
)
CPU = re.compile(r"\b(?:AMD|Intel|EPYC|Xeon|Ryzen|Core i\d|Apple M\d|Graviton|CPU model)\b")
"""A CPU model named (the benchmarks print it: ``cpu`` in their JSON)."""
LIMITS_MS = {60, 100, 120, 200, 600, 1000, 4000}
"""The official time limits and the search agent's budgets derived from them."""
RULE_WORDS = ("limit", "budget", "turn")
NEARBY_LINES = 15


def _is_rule(figure: str, line: str) -> bool:
    """A time limit quoted as a rule (``1000 ms for the first draft turn``)."""
    if not figure.endswith("ms"):
        return "the limit" in line[line.find(figure) :][: len(figure) + 12]
    numbers = {int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", figure)}
    return numbers <= LIMITS_MS and any(word in line.lower() for word in RULE_WORDS)


def figures(page: Path) -> list[tuple[int, str]]:
    """(line number, figure) of every performance figure quoted in a page."""
    found = []
    in_code = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = re.sub(r"`[^`]*`", lambda code: " " * len(code.group(0)), line)  # inline code
        for match in FIGURE.finditer(line):
            if not _is_rule(match.group(0), line):
                found.append((number, match.group(0)))
    return found


def uncited(page: Path) -> list[str]:
    lines = page.read_text(encoding="utf-8").splitlines()
    problems = []
    for number, figure in figures(page):
        window = "\n".join(lines[max(0, number - 1 - NEARBY_LINES) : number + NEARBY_LINES])
        missing = [what for what, ok in (("benchmark command", COMMAND.search(window)),
                                         ("CPU model", CPU.search(window)),
                                         ("load", "load" in window)) if not ok]  # fmt: skip
        if missing:
            problems.append(f"{page.name}:{number}: {figure!r} without {' or '.join(missing)}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_every_figure_cites_its_benchmark_command_and_load(page: Path) -> None:
    assert uncited(page) == []


def test_the_figure_finder_finds_figures_and_skips_rules(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "about 550 games/s in 1.2\n"  # 1
        "cloning takes 4–11 µs\n"  # 2
        "roughly doubles the engine's speed\n"  # 3
        "| 1.2, pure Python | 35,079 | 6,602 | 5.3× |\n"  # 4
        "in 1.5 it does not (0.8–1.2x)\n"  # 5
        "| 1.2 | 1000 ms for the first draft turn, 100 ms for the others |\n"  # 6
        "a board slot is its position plus 3 × 7\n"  # 7
        "```sh\nlocm play --time-scale 2   # 5 ms\n```\n"  # 8-10
        "its slowest turn took 604 ms\n",  # 11
        encoding="utf-8",
    )
    assert [n for n, _figure in figures(page)] == [1, 2, 3, 4, 5, 11]
    page.write_text(
        page.read_text(encoding="utf-8")
        + "\nMeasured with `python benchmarks/engine.py` at load 1.2 on 2 cores.\n",
        encoding="utf-8",
    )
    assert uncited(page) != []  # no CPU named
    page.write_text(
        page.read_text(encoding="utf-8") + "(a 2-core AMD EPYC virtual machine)\n",
        encoding="utf-8",
    )
    assert uncited(page) == []
