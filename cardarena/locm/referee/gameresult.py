"""The GameResult JSON log, in the format of the official referee's ``-l`` option.

The CodinGame SDK runner records one *round* per execution of a bot (a frame in
which two bots run has two rounds), plus a last round carrying the scores.
Per round it appends one entry to ``summaries``, ``views``,
``outputs["referee"]``, ``errors["referee"]`` and, for each player, to
``outputs[i]`` and ``errors[i]``: the executed player gets its output line
(terminator included, ``""`` when it was run without being asked for a line,
``null`` on a timeout) and its stderr, the others ``null``. Each player's lists
start with one extra entry for the bootstrap. A frame's game summary appears in
the first round of the *next* frame (the last one in the final round), at most
800 characters per frame. A run the SDK aborts (total-time quota, 1.0/1.2 empty
line) has no scores and a ``failCause``.

We add one key of our own, ``"cardarena"`` (version, league, commands, end
reason), which official tools ignore and which :mod:`replay` uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.state import EndReason

SUMMARY_PER_FRAME_LIMIT = 800
"""The SDK stops adding lines to a frame's summary once it holds this many characters."""
LOG_FORMAT = "cardarena.locm.gameresult/1"


@dataclass(frozen=True)
class Execution:
    """One round: a player run by the SDK, asked for a line or not."""

    player: int
    output: str | None
    """``line + "\\n"`` if it answered, ``""`` if no line was expected, None on a timeout."""
    stderr: str | None = None


@dataclass
class Frame:
    executions: list[Execution]
    summary: list[str] = field(default_factory=list)


def success_message(text: str) -> str:
    """The SDK's green summary line (``formatSuccessMessage``)."""
    return f"¤GREEN¤{text}§GREEN§"


def error_message(text: str) -> str:
    """The SDK's red summary line (``formatErrorMessage``)."""
    return f"¤RED¤{text}§RED§"


def _java_string_hash(text: str) -> int:
    data = text.encode("utf-16-be")  # Java hashes UTF-16 code units
    value = 0
    for i in range(0, len(data), 2):
        value = (31 * value + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return value


class _JavaPropertiesOrder:
    """The iteration order of a JDK 17 ``Properties`` (a ``ConcurrentHashMap``).

    16 bins to start with (``new ConcurrentHashMap<>(8)``), iterated by bin (spread
    hash & size-1) and by insertion order within a bin. At 12 keys the table doubles
    (then at 24, ...): each bin splits in two, and the nodes before its last run of
    same-destination nodes are re-linked in reverse, as ``transfer`` does.
    """

    def __init__(self) -> None:
        self.table: list[list[tuple[int, str]]] = [[] for _ in range(16)]
        self.count = 0
        self.size_ctl = 12

    def put(self, key: str) -> None:
        h = _java_string_hash(key)
        spread = (h ^ (h >> 16)) & 0x7FFFFFFF
        bin_ = self.table[spread & (len(self.table) - 1)]
        if any(existing == key for _, existing in bin_):
            return  # a new value for a known key keeps its place
        bin_.append((spread, key))
        self.count += 1
        if self.count >= self.size_ctl:
            self._resize()

    def _resize(self) -> None:
        n = len(self.table)
        new: list[list[tuple[int, str]]] = [[] for _ in range(2 * n)]
        for index, nodes in enumerate(self.table):
            if not nodes:
                continue
            run_bit, last_run = nodes[0][0] & n, 0
            for position in range(1, len(nodes)):
                if nodes[position][0] & n != run_bit:
                    run_bit, last_run = nodes[position][0] & n, position
            low = list(nodes[last_run:]) if run_bit == 0 else []
            high = list(nodes[last_run:]) if run_bit else []
            for node in nodes[:last_run]:
                if node[0] & n:
                    high.insert(0, node)
                else:
                    low.insert(0, node)
            new[index], new[index + n] = low, high
        self.table = new
        self.size_ctl = 2 * n - n // 2

    def keys(self) -> list[str]:
        return [key for nodes in self.table for _, key in nodes]


def java_properties_order(keys: Sequence[str], added: Sequence[str] = ()) -> list[str]:
    """The order in which the official command line prints the final parameters.

    ``keys`` (the ``-d`` keys, in order) fill the runner's ``Properties``; the referee
    process loads them in that map's order into its own, then adds ``added`` (the
    derived ``seed`` and sub-seeds). Both maps follow :class:`_JavaPropertiesOrder`.
    """
    runner = _JavaPropertiesOrder()
    for key in keys:
        runner.put(key)
    referee = _JavaPropertiesOrder()
    for key in [*runner.keys(), *added]:
        referee.put(key)
    return referee.keys()


def parameter_lines(used: Mapping[str, str], given: Sequence[str] = ()) -> list[str]:
    """The final game parameters as ``key=value`` lines, in the official printing order.

    Given parameters were put into the ``Properties`` first, then the referee added
    the derived ones.
    """
    first = [key for key in given if key in used]
    added = [key for key in used if key not in first]
    return [f"{key}={used[key]}" for key in java_properties_order(first, added)]


class GameResultRecorder:
    """Collects the frames of one game and writes them out as a GameResult."""

    def __init__(self, bootstrap_stderr: Sequence[str | None] = (None, None)) -> None:
        self.bootstrap_stderr = list(bootstrap_stderr)
        self.frames: list[Frame] = []

    def add_frame(self, executions: Sequence[Execution], summary: Sequence[str] = ()) -> None:
        self.frames.append(Frame(list(executions), list(summary)))

    def to_json(
        self,
        scores: tuple[int, int] | None,
        parameters: Sequence[str],
        *,
        fail_cause: str | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The GameResult object; ``scores`` None means the SDK aborted the game."""
        players = ("0", "1")
        outputs: dict[str, list[str | None]] = {"referee": []}
        errors: dict[str, list[str | None]] = {"referee": []}
        for key, stderr in zip(players, self.bootstrap_stderr, strict=True):
            outputs[key] = [None]
            errors[key] = [stderr]
        summaries: list[str] = []
        views: list[None] = []
        previous: list[str] = []  # the init frame has no summary lines
        for frame in self.frames:
            for index, execution in enumerate(frame.executions):
                summaries.append(_summary_text(previous) if index == 0 else "")
                outputs["referee"].append("")
                for key in players:
                    mine = int(key) == execution.player
                    outputs[key].append(execution.output if mine else None)
                    errors[key].append(execution.stderr if mine else None)
                errors["referee"].append("")
                views.append(None)
            previous = frame.summary
        if scores is None:
            # The SDK's failing round: no summary, no output, just the referee's error.
            errors["referee"].append("")
            views.append(None)
        else:
            summaries.append(_summary_text(previous))
            outputs["referee"].append("")
            errors["referee"].append("")
            views.append(None)
        result: dict[str, Any] = {
            "errors": errors,
            "outputs": outputs,
            "summaries": summaries,
            "views": views,
            "scores": {} if scores is None else {"0": scores[0], "1": scores[1]},
            "gameParameters": list(parameters),
            "metadata": "{}",
            "tooltips": [],
            "agents": [{"index": i, "name": f"Player {i}"} for i in range(2)],
        }
        if fail_cause is not None:
            result["failCause"] = fail_cause
        if extra is not None:
            result["cardarena"] = {"format": LOG_FORMAT, **extra}
        return result


def _summary_text(lines: Sequence[str]) -> str:
    """A frame's summary as the runner stores it: each kept line followed by a newline."""
    kept: list[str] = []
    total = 0
    for line in lines:
        if total >= SUMMARY_PER_FRAME_LIMIT:
            break
        kept.append(line)
        total += len(line)
    return "".join(line + "\n" for line in kept)


FAIL_CAUSES: dict[EndReason, str] = {
    EndReason.ABORTED_TIME_QUOTA: "java.lang.RuntimeException: Total game duration too long",
    EndReason.ABORTED_EMPTY_LINE: (
        "java.lang.IndexOutOfBoundsException: the referee read the first output line "
        "of an empty answer"
    ),
}
"""What we write as ``failCause`` where the official runner would have crashed."""


def answers_from_log(result: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """Each player's answer lines, in order, from a GameResult (ours or the jar's).

    An asked round holds the line with its terminator; rounds without a request
    hold ``""`` or ``null`` (a ``null`` where a line was asked is a timeout: the
    game ended there, so it is simply the end of the list).
    """
    answers: list[list[str]] = []
    for key in ("0", "1"):
        lines = result.get("outputs", {}).get(key, [])
        answers.append([entry[:-1] if entry.endswith("\n") else entry for entry in lines if entry])
    return answers[0], answers[1]


def end_cause(
    reason: EndReason,
    error_player: int | None,
    *,
    exited: Sequence[bool] = (False, False),
    out_of_memory: Sequence[bool] = (False, False),
) -> str:
    """Why a game ended, in words a person reads on an end banner. The official log calls
    a crash a timeout (the runner got no line in time); ``exited`` and ``out_of_memory``
    (the log's ``cardarena`` entries) say what really happened to the bot."""
    who = f"player {error_player}"
    if reason == EndReason.TIMEOUT and error_player is not None:
        if out_of_memory[error_player]:
            return f"{who} ran out of memory (over its budget) and was stopped"
        if exited[error_player]:
            return f"{who} crashed (its process ended without answering)"
        return f"{who} timed out (no answer in time)"
    texts = {
        EndReason.HEALTH: "health reached 0",
        EndReason.DECK_OUT: "deck out: the loser drew from an empty deck",
        EndReason.TURN_LIMIT: "turn limit: the loser drew after turn 50",
        EndReason.INVALID_OUTPUT: f"{who} sent an invalid output",
        EndReason.ABORTED_TIME_QUOTA: f"{who} used up its 30 s time quota: no result",
        EndReason.ABORTED_EMPTY_LINE: f"{who} answered an empty line: the official runner "
        "aborts the game, no result",
        EndReason.FRAME_LIMIT: "the 1,400-frame limit: no winner",
    }
    return texts.get(reason, reason.name.lower().replace("_", " "))


def flags_of(entry: object) -> tuple[bool, bool]:
    """A per-player pair of flags from a log (``exited``, ``outOfMemory``), read leniently:
    anything but two booleans (an older or crafted log) reads as (False, False)."""
    if isinstance(entry, list) and len(entry) == 2 and all(isinstance(f, bool) for f in entry):
        return entry[0], entry[1]
    return False, False
