"""The tournament report's data model: win-rate matrix, ratings, timings, errors.

Renderers draw it: :mod:`.text`, :mod:`.files` (CSV, JSON), :mod:`.png`, :mod:`.html`.

Conventions (also in docs/tournaments.md):

* A game with an error charged to a seat (``error_seat``: a timeout, crash, invalid or
  over-long answer, an empty line that made the official runner abort, or any other
  kind) is that seat's loss and the other's win, whatever else is stored; each bot's
  errors are counted by kind. Misbehaving never pays.
* A game without a winner and with no one charged (a draw, a run the official runner
  aborts for no bot's doing) counts half a win for each side; games the referee itself
  failed are left out.
* Win rates carry Wilson score 95% intervals.
* Why each game ended is the game's own words, stored with it (``cause``); each loss is
  also counted under one word (:func:`loss_kind`: the error kind charged, else the end
  reason: ``health``, ``deck out``), so a bot's losses read ``lost 12: health 9,
  timeout 2, crash 1``.
* A timeout is also counted apart as *overloaded* when the bot was measured starved of
  CPU by the machine in that turn (stored with the game): the machine's fault rather
  than the bot's, and what ``--retry-errors`` plays again.
* Ratings: the Bradley-Terry model on the Elo scale, fitted to all games at once by
  maximum likelihood (:mod:`.ratings`), so they do not depend on the order the games
  finished in; the interval is ``rating ± 1.96 sigma``. Equal ratings are ordered by
  the tied bots' games against each other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from statistics import NormalDist
from typing import Any

from ..store import REFEREE, GameRecord
from . import ratings

Z95 = NormalDist().inv_cdf(0.975)


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (sound even at 0% or 100%)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return (low, high)


@dataclass
class PairStats:
    """One bot's results against one opponent, both seats together."""

    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def score(self) -> float:
        return self.wins + self.draws / 2

    @property
    def rate(self) -> float | None:
        return self.score / self.games if self.games else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.score, self.games)


@dataclass
class BotStats:
    name: str
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    rating: float = 0.0
    rating_low: float = 0.0
    rating_high: float = 0.0
    rating_sigma: float = 0.0
    turns: int = 0
    mean_turn_ms: float = 0.0
    max_turn_ms: float = 0.0
    timeouts: int = 0
    crashes: int = 0
    invalid_outputs: int = 0
    out_of_memory: int = 0
    """Games lost by going over the bot's memory budget (error kind ``memory``)."""
    overloaded_timeouts: int = 0
    """Of the timeouts, those measured while the machine starved the bot of CPU."""
    errors: dict[str, int] = field(default_factory=dict)
    """Every error charged to the bot (each one a lost game), by kind."""
    lost_by: dict[str, int] = field(default_factory=dict)
    """Every loss, by :func:`loss_kind`: the error kind charged, else the end reason."""

    @property
    def rate(self) -> float | None:
        return (self.wins + self.draws / 2) / self.games if self.games else None

    @property
    def losses_text(self) -> str:
        """``lost 12: health 9, timeout 2, crash 1`` (most frequent first), or ``lost 0``."""
        if not self.lost_by:
            return f"lost {self.losses}"
        kinds = sorted(self.lost_by.items(), key=lambda item: (-item[1], item[0]))
        return f"lost {self.losses}: " + ", ".join(f"{kind} {n}" for kind, n in kinds)


@dataclass(frozen=True)
class GameLine:
    """One stored game as the report lists it: who won and why it ended."""

    key: str
    number: int | None
    """The game's number in the database (None where the report was built without them)."""
    first: str
    second: str
    round: int
    """Counted from 0, as stored (the report, the CSV and the JSON count from 1)."""
    winner: str | None
    """The bot the game counts as won by (:func:`scored_winner`); None: half each."""
    loser: str | None
    kind: str
    """The loss's (or the ending's) one word: :func:`loss_kind`."""
    cause: str
    """Why it ended, in the game's words (:attr:`GameRecord.cause`)."""
    turns: int
    counted: bool
    """False for a game the referee failed (left out of every number)."""
    charged: bool
    """True if the loser was charged with an error (a crash, a timeout, bad output...)."""

    @property
    def why(self) -> str:
        """The cause as a sentence: ``crasher crashed at turn 6: …`` (the loser named)."""
        return f"{self.loser} {self.cause}" if self.loser else self.cause


@dataclass
class Report:
    games: int
    bots: list[BotStats]
    matrix: dict[str, dict[str, PairStats]]
    referee_errors: int = 0
    settings: dict[str, str] = field(default_factory=dict)
    game_lines: list[GameLine] = field(default_factory=list)
    """Every stored game with its cause, newest first (referee failures included)."""

    def to_json(self) -> dict[str, Any]:
        def pair(stats: PairStats) -> dict[str, Any]:
            low, high = stats.interval
            return {
                "games": stats.games,
                "wins": stats.wins,
                "losses": stats.losses,
                "draws": stats.draws,
                "win_rate": stats.rate,
                "ci95": [low, high],
            }

        bots = {}
        for bot in self.bots:
            entry = asdict(bot)
            entry.pop("name")
            entry["win_rate"] = bot.rate
            entry["rating_ci95"] = [bot.rating_low, bot.rating_high]
            if not math.isfinite(bot.rating_sigma):  # no games yet: JSON has no infinity
                entry["rating_sigma"] = None
                entry["rating_low"] = entry["rating_high"] = None
                entry["rating_ci95"] = [None, None]
            bots[bot.name] = entry
        return {
            "games": self.games,
            "referee_errors": self.referee_errors,
            "settings": self.settings,
            "rating_model": RATING_MODEL,
            "bots": bots,
            "matrix": {
                a: {b: pair(stats) for b, stats in row.items()} for a, row in self.matrix.items()
            },
            "game_list": [
                {"number": g.number, "first": g.first, "second": g.second, "round": g.round + 1,
                 "winner": g.winner, "loser": g.loser, "kind": g.kind, "cause": g.cause,
                 "why": g.why, "turns": g.turns, "counted": g.counted, "error": g.charged}
                for g in self.game_lines
            ],
        }  # fmt: skip


RATING_MODEL = f"{ratings.MODEL}; interval: rating ± 1.96 sigma"
"""What the report says about its ratings (text, JSON, page and picture)."""


def scored_winner(record: GameRecord) -> int | None:
    """The seat a game counts as won by: the opponent of a seat charged with an error
    (whatever its kind, whatever else is stored), else the stored winner; None: half each.
    The one scoring rule of every report, rating and ladder."""
    return record.winner if record.error_seat is None else 1 - record.error_seat


def loss_kind(record: GameRecord) -> str:
    """The one word a loss is counted under: the error kind charged (``crash``,
    ``timeout``...), else the end reason in lower case (``health``, ``deck out``)."""
    if record.error_kind:
        return record.error_kind
    return record.end_reason.lower().replace("_", " ")


def fallback_cause(record: GameRecord) -> str:
    """Words for a game stored without a cause, from its other columns (a game that
    gives no better words for its older databases, see :func:`with_causes`)."""
    if record.result == "error" or record.error_kind == REFEREE:
        return f"the referee failed: {record.detail}" if record.detail else "the referee failed"
    words = f"{loss_kind(record)} after {record.turns} turns"
    return f"{words}: {record.detail}" if record.detail else words


Describe = Callable[[GameRecord], str]
"""A game's words for a stored game without a cause (its older databases)."""


def with_causes(records: Sequence[GameRecord], describe: Describe | None) -> list[GameRecord]:
    """``records``, each stored without a cause given one by ``describe`` (the game's
    words; :func:`fallback_cause` without it): a database from before the cause column
    still reports why every game ended."""
    describe = describe or fallback_cause
    return [r if r.cause else replace(r, cause=describe(r)) for r in records]


def game_lines(records: Sequence[GameRecord], numbers: Mapping[str, int]) -> list[GameLine]:
    """Every game with its cause, newest first (by number, else the schedule reversed)."""
    lines = []
    for index, record in enumerate(records):
        seats = (record.first, record.second)
        counted = record.result != "error" and record.error_kind != REFEREE
        winner = scored_winner(record) if counted else None
        lines.append((numbers.get(record.key, index), GameLine(
            key=record.key, number=numbers.get(record.key), first=record.first,
            second=record.second, round=record.round,
            winner=None if winner is None else seats[winner],
            loser=None if winner is None else seats[1 - winner], kind=loss_kind(record),
            cause=record.cause or fallback_cause(record), turns=record.turns, counted=counted,
            charged=counted and record.error_seat is not None,
        )))  # fmt: skip
    return [line for _order, line in sorted(lines, key=lambda item: -item[0])]


def build_report(
    bots: Sequence[str],
    records: Sequence[GameRecord],
    settings: Mapping[str, str] | None = None,
    numbers: Mapping[str, int] | None = None,
) -> Report:
    """The report of ``records`` (in schedule order) among ``bots`` (in display order);
    ``numbers``: each game's number in the database (:meth:`TournamentStore.game_numbers`)."""
    names = list(bots)
    for record in records:
        for name in (record.first, record.second):
            if name not in names:
                names.append(name)
    stats = {name: BotStats(name) for name in names}
    matrix = {a: {b: PairStats() for b in names if b != a} for a in names}
    turn_ms_total = dict.fromkeys(names, 0.0)
    counted = [r for r in records if r.result != "error" and r.error_kind != REFEREE]
    for record in counted:
        seats = (record.first, record.second)
        winner = scored_winner(record)
        for seat, name in enumerate(seats):
            other = seats[1 - seat]
            bot, pair = stats[name], matrix[name][other]
            bot.games += 1
            pair.games += 1
            if winner is None:
                bot.draws += 1
                pair.draws += 1
            elif winner == seat:
                bot.wins += 1
                pair.wins += 1
            else:
                bot.losses += 1
                pair.losses += 1
                kind = loss_kind(record)
                bot.lost_by[kind] = bot.lost_by.get(kind, 0) + 1
            turns = record.first_turns if seat == 0 else record.second_turns
            mean_ms = record.first_mean_ms if seat == 0 else record.second_mean_ms
            max_ms = record.first_max_ms if seat == 0 else record.second_max_ms
            bot.turns += turns
            turn_ms_total[name] += mean_ms * turns
            bot.max_turn_ms = max(bot.max_turn_ms, max_ms)
            if record.error_seat == seat:
                kind = record.error_kind or "error"
                bot.errors[kind] = bot.errors.get(kind, 0) + 1
                if record.error_kind == "timeout":
                    bot.timeouts += 1
                    if record.overloaded:
                        bot.overloaded_timeouts += 1
                elif record.error_kind == "crash":
                    bot.crashes += 1
                elif record.error_kind == "invalid":
                    bot.invalid_outputs += 1
                elif record.error_kind == "memory":
                    bot.out_of_memory += 1
    for name, bot in stats.items():
        bot.mean_turn_ms = turn_ms_total[name] / bot.turns if bot.turns else 0.0
    head_to_head = {(a, b): (pair.score, pair.games)
                    for a, row in matrix.items() for b, pair in row.items()}  # fmt: skip
    once = {(a, b): v for (a, b), v in head_to_head.items() if names.index(a) < names.index(b)}
    for name, (rating, sigma) in ratings.fit(names, once).items():
        bot = stats[name]
        bot.rating, bot.rating_sigma = rating, sigma
        bot.rating_low, bot.rating_high = rating - Z95 * sigma, rating + Z95 * sigma
    by_rating = {name: bot.rating for name, bot in stats.items()}
    ranked = [stats[name] for name in ratings.rank(names, by_rating, head_to_head)]
    # A bot without games yet has no rating (its 0 is a placeholder): listed last.
    ordered = sorted(ranked, key=lambda bot: not math.isfinite(bot.rating_sigma))
    return Report(
        games=len(counted),
        bots=ordered,
        matrix=matrix,
        referee_errors=len(records) - len(counted),
        settings=dict(settings or {}),
        game_lines=game_lines(records, numbers or {}),
    )
