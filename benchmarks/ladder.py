"""The ladder's figures: convergence, throughput, scheduling cost, pages under watchers.

    python benchmarks/ladder.py                          # every section, human-readable
    python benchmarks/ladder.py --only throughput        # one section (repeatable)
    python benchmarks/ladder.py --only pages --json      # {"pages": {...}}

Each section prints its figures with the CPU and the load average (the medians of
``--runs`` runs where it measures time):

* ``throughput``: 20 active bots (10 built-in agents, 10 process bots in the sandbox), a
  real ``locm ladder serve`` and a real ``locm tournament`` of the same bots on the same
  ``--workers``, at the official limits; each is timed from its ``--warm-up``-th finished
  game for ``--measured`` games (runs alternate, so the machine's load hits both alike).
  Bar: the ladder plays at least 90% of the tournament's games per second.
* ``scheduling``: a ladder database filled with ``--stored`` finished games; the server's
  bookkeeping per game (choose and queue a pair, lease, store the result with its rating
  change). Bar: 5 ms per game.
* ``pages``: a real server over the same database; ``--watchers`` clients each poll the
  leaderboard page and ``GET /api/leaderboard`` every ``--poll`` s, with the ladder paused
  and while it plays. Bar: p99 50 ms.
* ``convergence`` (below): simulated bots, pure Python.

Convergence. Simulated bots of known strength play the ladder's loop: ``choose_pairing`` picks each
pair (two games, seats swapped; the first seat is worth ``--seat`` Elo, 5% of games are
drawn), ``--workers`` pairs are in flight at once and finish in random order, and the
online ratings (``after_game``) are updated as games finish. The bots' true Elo are
spaced evenly from 0 to ``--spread`` (12 bots, 0 to 600 by default: 54.5 Elo between
neighbours); bots 1-2, 6-7 and 11-12 share an owner, so they never meet. Per seed:

* the games per bot until the board (ranked by the conservative ``mu - 3 sigma``) is in
  the true order for the first time, and from when on it stays in it until the end;
* the board's Kendall tau against the true order after 10, 20, 50, 100, ... games per bot;
* at the end, how often ``board_fit``'s 95% intervals cover the truth: each bot's
  interval its true Elo (centred like the fit's), and the interval of each difference
  between neighbours in the true order that difference.

And a new version: after ``--settle`` games per bot, the weakest bot submits a new
version (``new_version``: its mu kept, its sigma reset, a newcomer again) that truly sits
halfway between the 3rd and the 4th best; the figures are its games until its place on
each board is right the first time, and for good (until it has played ``--horizon``).

The figures are the median (order, places) and the mean (coverage) over ``--seeds``
seeds; a run that never got there counts as later than every other.
Pure Python, one core; the CPU and load are printed with them.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import itertools
import json
import math
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import Any

import tournament as tournament_benchmark  # benchmarks/tournament.py, beside this script

import cardarena
from cardarena.ladder.matchmaking import Entrant, choose_pairing
from cardarena.ladder.ratings import DRIFT, INITIAL, after_game, conservative, fit_games
from cardarena.ladder.ratings import new_version as ratings_new_version
from cardarena.ladder.scheduler import Scheduler, random_seed
from cardarena.ladder.store import LadderStore
from cardarena.locm.ladder.service import default_workers
from cardarena.machine import describe, load_average, machine, run_script
from cardarena.tournaments.store import GameRecord, compress_log

CHECKPOINTS = (10, 20, 50, 100, 200, 500, 1000)
"""Games per bot at which the board's Kendall tau is taken."""
SHARED_OWNERS = ((0, 1), (5, 6), (10, 11))
"""Bots (0-based) that share an owner."""
DRAWS = 0.05


@dataclass
class Board:
    """How one board's order followed the true order during a run."""

    first_exact: float | None = None
    """Games per bot when the board first was in the true order (None: never)."""
    exact_since: float | None = None
    """Games per bot from when on it stayed in the true order to the end (None: it was not
    in order at the end)."""
    kendall: dict[int, float] = field(default_factory=dict)

    def look(self, order: list[int], truth: list[int], per_bot: float) -> None:
        if order == truth:
            self.first_exact = per_bot if self.first_exact is None else self.first_exact
            self.exact_since = per_bot if self.exact_since is None else self.exact_since
        else:
            self.exact_since = None


@dataclass
class Run:
    """One seed's figures: the online board (``mu - 3 sigma``), the fitted board
    (``board_fit``), and the fitted intervals' coverage at the end."""

    online: Board
    fitted: Board
    bot_coverage: float
    neighbour_coverage: float


def kendall_tau(order: list[int], truth: list[int]) -> float:
    """Kendall's tau between two orders of the same items: 1 equal, -1 reversed."""
    place = {item: i for i, item in enumerate(order)}
    ranks = [place[item] for item in truth]
    concordant = discordant = 0
    for i in range(len(ranks)):
        for j in range(i + 1, len(ranks)):
            if ranks[i] < ranks[j]:
                concordant += 1
            else:
                discordant += 1
    return (concordant - discordant) / (concordant + discordant)


def game(rng: random.Random, elo_first: float, elo_second: float, seat: float) -> float:
    """The first seat's score in one game: its expected score is the logistic Elo one
    (with the seat's worth), draws taken half from wins, half from losses."""
    p = 1 / (1 + 10 ** ((elo_second - elo_first - seat) / 400))
    u = rng.random()
    low, high = max(p - DRAWS / 2, 0.0), min(p + DRAWS / 2, 1.0)
    return 1.0 if u < low else 0.5 if u < high else 0.0


@dataclass(frozen=True)
class Setting:
    bots: int
    spread: float
    games_per_bot: int
    workers: int
    seat: float
    tau: float
    fit_every: int


class Ladder:
    """The ladder's loop over simulated bots: matchmaking, games, online ratings."""

    def __init__(self, seed: int, setting: Setting) -> None:
        self.rng = random.Random(seed)
        self.setting = setting
        bots = setting.bots
        self.truth_elo = [setting.spread * i / (bots - 1) for i in range(bots)]
        owner = list(range(bots))
        for a, b in SHARED_OWNERS:
            if b < bots:
                owner[b] = owner[a]
        self.entrants = {i: Entrant(i, owner[i], INITIAL, 0, 0.0, 0) for i in range(bots)}
        self.names = [str(i) for i in range(bots)]
        """Each bot's current version's name in :attr:`results`."""
        self.retired: list[str] = []
        self.in_flight: list[tuple[int, int]] = []
        self.results: list[tuple[str, str, float]] = []
        self.played = 0
        """Games times bots: two per game."""

    def truth(self) -> list[int]:
        return sorted(self.entrants, key=lambda i: -self.truth_elo[i])

    def play_pair(self) -> None:
        """Fill the workers, then finish one pair (a random one of those in flight)."""
        entrants = self.entrants
        while len(self.in_flight) < self.setting.workers:
            pair = choose_pairing(list(entrants.values()), self.rng)
            if pair is None:
                break
            self.in_flight.append(pair)
            for bot in pair:
                entrants[bot] = replace(entrants[bot], in_flight=entrants[bot].in_flight + 2)
        a, b = self.in_flight.pop(self.rng.randrange(len(self.in_flight)))
        for first, second in ((a, b), (b, a)):  # one seed, seats swapped
            score = game(self.rng, self.truth_elo[first], self.truth_elo[second],
                         self.setting.seat)  # fmt: skip
            new_first, new_second = after_game(
                entrants[first].rating, entrants[second].rating, score, tau=self.setting.tau
            )
            entrants[first] = replace(entrants[first], rating=new_first)
            entrants[second] = replace(entrants[second], rating=new_second)
            self.results.append((self.names[first], self.names[second], score))
        self.played += 4
        for bot in (a, b):
            e = entrants[bot]
            entrants[bot] = replace(e, games=e.games + 2, in_flight=e.in_flight - 2,
                                    last_played=self.played)  # fmt: skip

    def online_order(self) -> list[int]:
        return sorted(self.entrants, key=lambda i: -conservative(self.entrants[i].rating))

    def fitted_order(self) -> list[int]:
        """The fit over every game, retired versions' too; the current versions' order."""
        bot_of = {name: i for i, name in enumerate(self.names)}
        order = fit_games(self.names + self.retired, self.results).order
        return [bot_of[name] for name in order if name in bot_of]

    def new_version(self, bot: int, elo: float) -> None:
        """``bot`` submits a new version of true Elo ``elo`` (its games in flight finish as
        the old version's, here: as the new one's, a simplification)."""
        self.retired.append(self.names[bot])
        self.names[bot] = f"{bot}v{len(self.retired) + 1}"
        self.truth_elo[bot] = elo
        e = self.entrants[bot]
        self.entrants[bot] = replace(e, rating=ratings_new_version(e.rating), games=0)


def simulate(seed: int, setting: Setting) -> Run:
    ladder = Ladder(seed, setting)
    bots = setting.bots
    truth = ladder.truth()
    online, fitted = Board(), Board()
    while ladder.played < setting.games_per_bot * bots:
        before = ladder.played
        ladder.play_pair()
        played = ladder.played
        per_bot = played / bots
        board = ladder.online_order()
        online.look(board, truth, per_bot)
        fit_now = before // (setting.fit_every * bots) < played // (setting.fit_every * bots)
        checkpoints = [c for c in CHECKPOINTS if before < c * bots <= played]
        fit_order: list[int] = []
        if fit_now or checkpoints or played >= setting.games_per_bot * bots:
            fit_order = ladder.fitted_order()
            fitted.look(fit_order, truth, per_bot)
        for checkpoint in checkpoints:
            online.kendall[checkpoint] = kendall_tau(board, truth)
            fitted.kendall[checkpoint] = kendall_tau(fit_order, truth)
    bot_coverage, neighbour_coverage = coverage(ladder.results, ladder.truth_elo, truth)
    return Run(online, fitted, bot_coverage, neighbour_coverage)


PLACEMENTS = ("online exact", "online within 1", "fitted exact", "fitted within 1")
"""A board, and how far from its true place the new version may be."""


def placement(seed: int, setting: Setting, settle: int, horizon: int) -> dict[str, Board]:
    """The weakest bot, after ``settle`` games per bot, submits a new version that truly
    sits halfway between the 3rd and the 4th best bots: for each of :data:`PLACEMENTS`,
    the new version's games until its place (how many bots are above it) is right, and
    from when on it stays right until it has played ``horizon`` games."""
    ladder = Ladder(seed, setting)
    bots = setting.bots
    while ladder.played < settle * bots:
        ladder.play_pair()
    gap = setting.spread / (bots - 1)
    ladder.new_version(0, setting.spread - 2.5 * gap)
    truth_place = ladder.truth().index(0)
    found = {name: Board() for name in PLACEMENTS}
    games = 0
    while games < horizon:
        ladder.play_pair()
        if ladder.entrants[0].games == games:
            continue
        games = ladder.entrants[0].games
        orders = {"online": ladder.online_order(), "fitted": ladder.fitted_order()}
        for name in PLACEMENTS:
            board, tolerance = name.split(" ", 1)
            off = abs(orders[board].index(0) - truth_place)
            right = off == 0 if tolerance == "exact" else off <= 1
            # Board.look compares orders: give it one that matches exactly when right.
            found[name].look([0] if right else [], [0], games)
    return found


def coverage(
    results: list[tuple[str, str, float]], truth_elo: list[float], truth: list[int]
) -> tuple[float, float]:
    """The share of bots whose 95% interval holds its true (centred) Elo, and of true
    neighbours whose difference's 95% interval holds the true difference."""
    names = [str(i) for i in range(len(truth_elo))]
    fitted = fit_games(names, results)
    mean = statistics.fmean(truth_elo)
    z = NormalDist().inv_cdf(0.975)
    bots = sum(
        abs(fitted.elo[str(i)] - (elo - mean)) <= z * fitted.sigma[str(i)]
        for i, elo in enumerate(truth_elo)
    )
    neighbours = 0
    for upper, lower in itertools.pairwise(truth):
        measured = fitted.elo[str(upper)] - fitted.elo[str(lower)]
        true = truth_elo[upper] - truth_elo[lower]
        neighbours += abs(measured - true) <= z * fitted.difference_sigma(str(upper), str(lower))
    return bots / len(truth_elo), neighbours / (len(truth) - 1)


def _median(values: list[float | None]) -> float | None:
    """The median, a run that never got there counting as later than every other one."""
    ordered = sorted(values, key=lambda v: (v is None, v or 0.0))
    middle = ordered[len(ordered) // 2]
    return None if middle is None else round(middle)


def summary(runs: list[Run], board: str) -> dict[str, object]:
    boards: list[Board] = [getattr(run, board) for run in runs]
    return {
        "first_exact_games_per_bot": _median([b.first_exact for b in boards]),
        "exact_for_good_games_per_bot": _median([b.exact_since for b in boards]),
        "exact_at_end": round(sum(b.exact_since is not None for b in boards) / len(boards), 3),
        "kendall_tau": {
            str(c): round(statistics.median(b.kendall[c] for b in boards), 3)
            for c in CHECKPOINTS
            if all(c in b.kendall for b in boards)
        },
    }


def convergence(args: argparse.Namespace) -> dict[str, object]:
    """The convergence figures (simulated bots, pure Python)."""
    setting = Setting(args.bots, args.spread, args.games, args.pairs_in_flight, args.seat, args.tau,
                      max(args.fit_every, 1))  # fmt: skip
    load_before = load_average()
    started = time.process_time()
    runs = [simulate(seed, setting) for seed in range(1, args.seeds + 1)]
    placements = [placement(seed, setting, args.settle, args.horizon)
                  for seed in range(1, args.seeds + 1)]  # fmt: skip
    seconds = time.process_time() - started
    result = {
        "bots": args.bots,
        "spread_elo": args.spread,
        "games_per_bot": args.games,
        "tau": args.tau,
        "seeds": args.seeds,
        "online_board": summary(runs, "online"),
        "fitted_board": summary(runs, "fitted"),
        "bot_interval_coverage": round(statistics.fmean(r.bot_coverage for r in runs), 3),
        "neighbour_interval_coverage": round(
            statistics.fmean(r.neighbour_coverage for r in runs), 3
        ),
        "new_version": {
            name: {
                "first": _median([p[name].first_exact for p in placements]),
                "for_good": _median([p[name].exact_since for p in placements]),
            }
            for name in PLACEMENTS
        },
        "new_version_settle_games_per_bot": args.settle,
        "new_version_horizon_games": args.horizon,
        "cpu_seconds": round(seconds, 1),
        "machine": machine(load_before),
    }
    return result


def show_convergence(result: dict[str, object], args: argparse.Namespace) -> None:
    gap = args.spread / (args.bots - 1)
    print(f"{args.bots} bots, true Elo 0 to {args.spread:g} ({gap:.1f} apart), {args.games} "
          f"games per bot, {args.pairs_in_flight} pairs in flight, tau {args.tau:.4g}, "
          f"{args.seeds} seeds; medians over the seeds")  # fmt: skip
    for key, title in (("online_board", "online board (mu - 3 sigma)"),
                       ("fitted_board", "fitted board (Bradley-Terry, all games)")):  # fmt: skip
        board: dict = result[key]  # type: ignore[assignment]
        print(f"{title}:")
        print(f"  in the true order first after {board['first_exact_games_per_bot']} games "
              f"per bot, for good after {board['exact_for_good_games_per_bot']} "
              f"(in order at the end in {board['exact_at_end']:.0%} of runs)")  # fmt: skip
        taus = ", ".join(f"{c}: {t:.3f}" for c, t in board["kendall_tau"].items())
        print(f"  Kendall tau after N games per bot: {taus}")
    placed: dict = result["new_version"]  # type: ignore[assignment]
    print(f"a new version of the weakest bot, truly between the 3rd and the 4th, after "
          f"{args.settle} games per bot: its games until its place is right")  # fmt: skip
    for name, games in placed.items():
        print(f"  {name:<16}: first after {games['first']}, for good (to {args.horizon}) "
              f"after {games['for_good']}")  # fmt: skip
    print("board_fit's 95% intervals at the end, share covering the truth (nominal 0.95):")
    print(f"  each bot's Elo {result['bot_interval_coverage']:.3f}, "
          f"differences of neighbours {result['neighbour_interval_coverage']:.3f}")  # fmt: skip
    print(
        f"({result['cpu_seconds']} s CPU; {describe(result['machine'])}, "  # type: ignore[arg-type]
        f"{result['machine'].get('load_average_before', ['unknown'])[0]} at the start)"
    )


# ----------------------------------------------------------------------------------------
# The real ladder: throughput, scheduling cost, pages under watchers.

SECTIONS = ("convergence", "throughput", "scheduling", "pages")
FIELD = 20
"""Active bots in the throughput, scheduling and pages sections."""
BUILTINS = ("greedy", "random", "pass")
"""The built-in agents of the field (the quick ones: the official limits bind no one)."""
PASS_BOT = tournament_benchmark.PASS_BOT
"""The process bots' program: a separate python3 process per game and seat, in the
sandbox, that answers PASS at once (so the figure is the ladder's, not a bot's)."""
SCHEDULING_BAR_MS = 5.0
PAGES_BAR_MS = 50.0
THROUGHPUT_BAR = 0.90
START_S = 120.0
"""How long a server or a tournament may take to play its first games."""


def field_bots(directory: str, kind: str = "even", bots: int = FIELD) -> list[tuple[str, str]]:
    """(name, command) of ``bots`` bots: every other one a built-in agent, the others a
    process bot (:data:`PASS_BOT`), each in a folder of its own (the sandbox shows a bot its
    own folder only). ``even``: the built-ins are ``pass`` too, so every pairing plays the
    same kind of game (whom matchmaking picks does not change the games' length); ``mixed``:
    the built-ins are greedy, random and pass (matchmaking then pairs the passers together
    more often than a round robin does, and their games are the longest)."""
    agents = ("pass",) if kind == "even" else BUILTINS
    lineup = []
    for index in range(bots):
        if index % 2 == 0:
            lineup.append((f"bot{index}", f"builtin:{agents[(index // 2) % len(agents)]}"))
            continue
        folder = os.path.join(directory, "bots", f"bot{index}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "bot.py"), "w", encoding="utf-8") as program:
            program.write(PASS_BOT)
        lineup.append((f"bot{index}", f"python3 {folder}/bot.py"))
    return lineup


def add_field(store: LadderStore, lineup: list[tuple[str, str]]) -> list[int]:
    """The bots of ``lineup`` as active versions of as many owners; their version ids."""
    versions = []
    for name, command in lineup:
        user = store.user_for_token(store.add_user(f"{name}-owner"))
        assert user is not None
        version = store.submit(user, name, "python", "bot.py", b"#", new_bot=True)
        store.record_build(version, True, "built by the benchmark", command, None)
        store.set_status(version, "active")
        versions.append(version)
    return versions


def synthetic_log(rng: random.Random) -> bytes:
    """About 2 KB compressed: the order of a short LOCM log."""
    turns = [[rng.randrange(1000) for _ in range(30)] for _ in range(40)]
    return compress_log({"turns": turns})


def fill_games(store: LadderStore, versions: list[int], games: int, rng: random.Random) -> None:
    """``games`` finished rated games among ``versions`` (each with its two rating-history
    rows, its head-to-head counts and a 2 KB compressed log), written directly."""
    log = synthetic_log(rng)
    counts = {v: [0, 0, 0] for v in versions}  # wins, draws, losses
    meetings: dict[tuple[int, int], list[int]] = {}  # (version, opponent): the same
    now = time.time() - games
    with store.transaction() as db:
        for game in range(1, games + 1):
            first, second = rng.sample(versions, 2)
            winner = rng.choice((0, 1, 1, 0, None))
            for seat, version in enumerate((first, second)):
                column = 1 if winner is None else 0 if winner == seat else 2
                counts[version][column] += 1
                opponent = second if seat == 0 else first
                meetings.setdefault((version, opponent), [0, 0, 0])[column] += 1
            db.execute(
                "INSERT INTO games (id, kind, pair, seed, first, second, state, priority, "
                "attempts, winner, result, end_reason, turns, duration_s, rated, log, replay, "
                "queued_at, finished_at) VALUES (?, 'rated', ?, ?, ?, ?, 'done', 1, 1, ?, ?, "
                "'HEALTH', 40, 0.5, 1, ?, 'locm play ...', ?, ?)",
                (game, (game + 1) // 2, random_seed(rng), first, second, winner,
                 "draw" if winner is None else "win", log, now + game, now + game),
            )  # fmt: skip
            for version in (first, second):
                db.execute(
                    "INSERT INTO ratings (version, game, mu, sigma) VALUES (?, ?, ?, ?)",
                    (version, game, rng.gauss(25, 3), 1.0 + rng.random()),
                )
        for (version, opponent), (wins, draws, losses) in meetings.items():
            db.execute(
                "INSERT INTO results (version, opponent, wins, draws, losses) "
                "VALUES (?, ?, ?, ?, ?)",
                (version, opponent, wins, draws, losses),
            )
        for version, (wins, draws, losses) in counts.items():
            db.execute(
                "UPDATE versions SET mu = ?, sigma = ?, rated_games = ?, wins = ?, draws = ?, "
                "losses = ?, last_played = ? WHERE id = ?",
                (rng.gauss(INITIAL.mu, 3), 1.0 + rng.random(), wins + draws + losses, wins,
                 draws, losses, now + games, version),
            )  # fmt: skip


def big_ladder(directory: str, stored: int, seed: int) -> tuple[str, float]:
    """A ladder database of :data:`FIELD` active bots (the throughput lineup, so a server on
    it can play) and ``stored`` finished games; its path and the seconds the fill took."""
    db = os.path.join(directory, "big.db")
    started = time.perf_counter()
    with LadderStore(db, lock=True) as store:
        versions = add_field(store, field_bots(directory))
        fill_games(store, versions, stored, random.Random(seed))
    return db, time.perf_counter() - started


def copy_ladder(db: str, to: str) -> str:
    """A copy of the (closed) ladder database ``db`` at ``to``."""
    shutil.copyfile(db, to)
    return to


def child_env() -> dict[str, str]:
    """The environment of the servers and tournaments started here: the same cardarena."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(cardarena.__file__)))
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}


def count_rows(db: str, query: str) -> int:
    """One count from a database another process writes (0 while it does not exist)."""
    return int(count_float(db, query))


def count_float(db: str, query: str) -> float:
    """One number from a database another process writes (0 while it does not exist)."""
    try:
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    except sqlite3.Error:
        return 0
    try:
        return float(connection.execute(query).fetchone()[0])
    except sqlite3.Error:
        return 0.0
    finally:
        connection.close()


def steady_rate(db: str, query: str, warm_up: int, measured: int,
                process: subprocess.Popen[bytes], workers: int) -> dict[str, float]:  # fmt: skip
    """Games per second of the process writing ``db``: the time from its ``warm_up``-th
    finished game to ``measured`` games later (``query`` counts finished games, then their
    turns), and ``busy``: the share of the workers' time spent in those games (the sum of
    their durations, as the referee measured them, over workers x time)."""
    count_query, turns_query = query, query.replace("COUNT(*)", "COALESCE(SUM(turns), 0)")
    busy_query = query.replace("COUNT(*)", "COALESCE(SUM(duration_s), 0)")
    deadline = time.monotonic() + START_S
    while (done := count_rows(db, count_query)) < warm_up:
        if process.poll() is not None:
            raise RuntimeError(f"it stopped (exit status {process.returncode}) before the "
                               "warm-up games")  # fmt: skip
        if time.monotonic() > deadline:
            raise RuntimeError(f"no {warm_up} games in {START_S:.0f} s")
        time.sleep(0.05)
    started, first, first_turns = time.perf_counter(), done, count_rows(db, turns_query)
    first_busy = count_float(db, busy_query)
    deadline = time.monotonic() + START_S + measured * 5.0
    while (done := count_rows(db, count_query)) < first + measured:
        if process.poll() is not None:
            raise RuntimeError(f"it stopped (exit status {process.returncode}) while measured")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{measured} games took too long")
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    turns = count_rows(db, turns_query) - first_turns
    busy = (count_float(db, busy_query) - first_busy) / (seconds * workers)
    return {"games_per_s": (done - first) / seconds, "turns_per_s": turns / seconds,
            "busy": busy}  # fmt: skip


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, as an organiser would stop it; SIGKILL if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


LADDER_DONE = "SELECT COUNT(*) FROM games WHERE state = 'done' AND kind = 'rated'"
TOURNAMENT_DONE = "SELECT COUNT(*) FROM games"


def ladder_rate(directory: str, lineup: list[tuple[str, str]], workers: int, warm_up: int,
                measured: int, run: int) -> dict[str, float]:  # fmt: skip
    """A real ``locm ladder serve`` (web included) over a fresh ladder of ``lineup``."""
    db = os.path.join(directory, f"ladder-{run}.db")
    with LadderStore(db, lock=True) as store:
        add_field(store, lineup)
    command = [sys.executable, "-m", "cardarena.locm", "ladder", "serve", "--db", db,
               "--port", "0", "--workers", str(workers), "--version", "1.5"]  # fmt: skip
    server = subprocess.Popen(command, env=child_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, cwd=directory)  # fmt: skip
    try:
        return steady_rate(db, LADDER_DONE, warm_up, measured, server, workers)
    finally:
        stop(server)


def tournament_rate(directory: str, lineup: list[tuple[str, str]], workers: int, warm_up: int,
                    measured: int, run: int) -> dict[str, float]:  # fmt: skip
    """A real ``locm tournament`` of the same bots on as many workers (every ordered pair
    plays enough games; it is stopped once measured)."""
    db = os.path.join(directory, f"tournament-{run}.db")
    pairs = len(lineup) * (len(lineup) - 1)
    games = max(1, -(-(warm_up + measured) * 2 // pairs))
    command = [sys.executable, "-m", "cardarena.locm", "tournament", "--version", "1.5",
               "--games", str(games), "--workers", str(workers), "--db", db, "--quiet",
               "--seed", str(run), "--out", os.path.join(directory, f"report-{run}")]  # fmt: skip
    for name, bot in lineup:
        command += ["--bot", f"{name}={bot}"]
    runner = subprocess.Popen(command, env=child_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, cwd=directory)  # fmt: skip
    try:
        return steady_rate(db, TOURNAMENT_DONE, warm_up, measured, runner, workers)
    finally:
        stop(runner)


def throughput(args: argparse.Namespace) -> dict[str, object]:
    """The ladder's games per second against ``locm tournament``'s, same bots and workers."""
    before = load_average()
    ladder, tournament = [], []
    with tempfile.TemporaryDirectory() as directory:
        lineup = field_bots(directory, args.field)
        for run in range(1, args.runs + 1):  # alternated: the machine's load hits both alike
            tournament.append(tournament_rate(directory, lineup, args.workers, args.warm_up,
                                              args.measured, run))  # fmt: skip
            ladder.append(ladder_rate(directory, lineup, args.workers, args.warm_up,
                                      args.measured, run))  # fmt: skip
    ladder_rate_ = statistics.median(r["games_per_s"] for r in ladder)
    tournament_rate_ = statistics.median(r["games_per_s"] for r in tournament)
    ladder_turns = statistics.median(r["turns_per_s"] for r in ladder)
    tournament_turns = statistics.median(r["turns_per_s"] for r in tournament)
    ladder_busy = statistics.median(r["busy"] for r in ladder)
    tournament_busy = statistics.median(r["busy"] for r in tournament)
    return {
        "bots": len(lineup),
        "field": args.field,
        "process_bots": sum(1 for _, command in lineup if not command.startswith("builtin:")),
        "workers": args.workers,
        "measured_games": args.measured,
        "runs": args.runs,
        "ladder_games_per_s": round(ladder_rate_, 3),
        "tournament_games_per_s": round(tournament_rate_, 3),
        "ratio": round(ladder_rate_ / tournament_rate_, 3),
        "ladder_turns_per_s": round(ladder_turns, 1),
        "tournament_turns_per_s": round(tournament_turns, 1),
        "turns_ratio": round(ladder_turns / tournament_turns, 3),
        "ladder_workers_busy": round(ladder_busy, 3),
        "tournament_workers_busy": round(tournament_busy, 3),
        "ladder_runs": [round(r["games_per_s"], 3) for r in ladder],
        "tournament_runs": [round(r["games_per_s"], 3) for r in tournament],
        "bar": THROUGHPUT_BAR,
        "machine": machine(before),
    }


def show_throughput(result: dict[str, Any]) -> None:
    print(f"throughput: {result['bots']} active bots, {result['field']} field "
          f"({result['process_bots']} process bots in the sandbox, the rest built-ins), "
          f"{result['workers']} workers, LOCM 1.5, "
          f"{result['measured_games']} games timed after a warm-up, median of "
          f"{result['runs']} runs")  # fmt: skip
    print(
        f"  ladder (locm ladder serve): {result['ladder_games_per_s']:.2f} games/s "
        f"({result['ladder_turns_per_s']:.0f} turns/s); runs {result['ladder_runs']}"
    )
    print(
        f"  locm tournament:            {result['tournament_games_per_s']:.2f} games/s "
        f"({result['tournament_turns_per_s']:.0f} turns/s); runs {result['tournament_runs']}"
    )
    print(f"  ladder / tournament: {result['ratio']:.0%} of the games/s (bar "
          f"{result['bar']:.0%}), {result['turns_ratio']:.0%} of the turns/s")  # fmt: skip
    print(f"  workers busy playing: ladder {result['ladder_workers_busy']:.0%}, tournament "
          f"{result['tournament_workers_busy']:.0%} (the rest: between games)")  # fmt: skip
    print(
        f"  ({describe(result['machine'])}; "
        f"{result['machine']['load_average_before'][0]} at the start)"
    )


def result_of(rng: random.Random, log: bytes) -> GameRecord:
    winner = rng.choice((0, 1))
    return GameRecord(
        key="", first="", second="", round=0, seed=0, winner=winner, result="win",
        end_reason="HEALTH", error_seat=None, error_kind=None, detail=None, turns=40,
        first_turns=20, first_mean_ms=1.0, first_max_ms=2.0, second_turns=20,
        second_mean_ms=1.0, second_max_ms=2.0, duration_s=0.5, replay="locm play ...", log=log,
    )  # fmt: skip


def schedule_run(scheduler: Scheduler, games: int, rng: random.Random, log: bytes) -> float:
    """Milliseconds per game: choose, queue, lease, then finish each game."""
    started = time.perf_counter()
    for _ in range(games):
        game = scheduler.next_game()
        assert game is not None, "the scheduler found no game"
        scheduler.record(game.id, result_of(rng, log))
    return (time.perf_counter() - started) * 1000 / games


def timed_ms(action: Callable[[], object], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def scheduling(args: argparse.Namespace, big: str, directory: str) -> dict[str, object]:
    """What the server's bookkeeping costs per game with ``--stored`` games in the file: the
    scheduler chooses and queues a pair and leases a game (:meth:`Scheduler.next_game`),
    then the result is written with its rating change and the disable check
    (:meth:`Scheduler.record`). No game is played: this is what the server's one thread
    spends between games. The page reads are timed too (the web thread holds the store
    while it reads, and the scheduler waits meanwhile)."""
    before = load_average()
    rng = random.Random(args.seed)
    db = copy_ladder(big, os.path.join(directory, "scheduling.db"))
    with LadderStore(db, lock=True) as store:
        scheduler = Scheduler(
            store, validation_opponent="builtin:greedy", rng=random.Random(args.seed),
            max_in_flight=2 * FIELD,  # the cap never stops this sequential run
        )  # fmt: skip
        log = synthetic_log(rng)
        runs = [schedule_run(scheduler, args.scheduled, rng, log) for _ in range(args.runs)]
        board_ms = timed_ms(store.leaderboard)
        bot_ms = timed_ms(lambda: store.bot("bot0"))
        results_ms = timed_ms(store.rated_counts)
    size_mb = os.path.getsize(db) / 1e6
    os.remove(db)
    return {
        "ms_per_game": round(statistics.median(runs), 3),
        "runs_ms": [round(r, 3) for r in runs],
        "bar_ms": SCHEDULING_BAR_MS,
        "stored_games": args.stored,
        "bots": FIELD,
        "scheduled_per_run": args.scheduled,
        "database_mb": round(size_mb, 1),
        "leaderboard_ms": round(board_ms, 2),
        "bot_page_ms": round(bot_ms, 2),
        "board_results_ms": round(results_ms, 2),
        "machine": machine(before),
    }


def show_scheduling(result: dict[str, Any]) -> None:
    print(f"scheduling: {result['stored_games']:,} games stored, {result['bots']} active bots "
          f"({result['database_mb']:.0f} MB)")  # fmt: skip
    print(f"  schedule one game (choose + queue + lease + finish): {result['ms_per_game']:.2f} "
          f"ms, median of {len(result['runs_ms'])} runs of {result['scheduled_per_run']} (bar "
          f"{result['bar_ms']:.0f} ms)")  # fmt: skip
    print(f"  store reads: leaderboard {result['leaderboard_ms']:.1f} ms, one bot's page "
          f"{result['bot_page_ms']:.1f} ms, the board fit's input (head-to-head counts) "
          f"{result['board_results_ms']:.1f} ms")  # fmt: skip
    print(
        f"  ({describe(result['machine'])}; "
        f"{result['machine']['load_average_before'][0]} at the start)"
    )


PAGES = ("/", "/api/leaderboard")
"""What a watcher polls: the leaderboard page and the API its script refreshes from."""


def watch(host: str, port: int, until: float, poll_s: float, rng: random.Random,
          times: dict[str, list[float]], failures: list[str]) -> None:  # fmt: skip
    """One watcher: its own keep-alive connection; every ``poll_s`` (from a random phase)
    the page and the API, each timed from the request to the last byte."""
    connection = http.client.HTTPConnection(host, port, timeout=60)
    next_poll = time.monotonic() + rng.uniform(0, poll_s)
    try:
        while True:
            pause = next_poll - time.monotonic()
            if next_poll >= until:
                return
            if pause > 0:
                time.sleep(pause)
            next_poll += poll_s
            for path in PAGES:
                started = time.perf_counter()
                try:
                    connection.request("GET", path, headers={"Accept": "*/*"})
                    answer = connection.getresponse()
                    answer.read()
                except (OSError, http.client.HTTPException) as error:
                    failures.append(f"{path}: {error}")
                    connection.close()
                    connection = http.client.HTTPConnection(host, port, timeout=60)
                    continue
                elapsed = (time.perf_counter() - started) * 1000
                if answer.status != 200:
                    failures.append(f"{path}: HTTP {answer.status}")
                times[path].append(elapsed)
    finally:
        connection.close()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def pages_run(db: str, directory: str, watchers: int, seconds: float, poll_s: float,
              workers: int, seed: int) -> dict[str, dict[str, float]]:  # fmt: skip
    """One real server over ``db`` (playing on ``workers`` workers, or paused if 0) and
    ``watchers`` watcher threads for ``seconds``; p50/p99/max per path, in ms."""
    if workers == 0:
        with LadderStore(db) as store:
            store.set_setting("paused", True)
    command = [sys.executable, "-m", "cardarena.locm", "ladder", "serve", "--db", db,
               "--port", "0", "--workers", str(max(workers, 1)), "--version", "1.5"]  # fmt: skip
    server = subprocess.Popen(command, env=child_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, cwd=directory)  # fmt: skip
    try:
        assert server.stdout is not None
        base = urllib.parse.urlsplit(server.stdout.readline().decode().strip())
        if not base.hostname or not base.port:
            raise RuntimeError(f"the server did not start (exit status {server.poll()})")
        times: dict[str, list[float]] = {path: [] for path in PAGES}
        failures: list[str] = []
        warm_up = http.client.HTTPConnection(base.hostname, base.port, timeout=60)
        for path in PAGES:  # the first answer of each (the board's fit) is not a watcher's
            warm_up.request("GET", path)
            warm_up.getresponse().read()
        warm_up.close()
        rng = random.Random(seed)
        until = time.monotonic() + seconds
        threads = [
            threading.Thread(target=watch, args=(base.hostname, base.port, until, poll_s,
                                                 random.Random(rng.random()), times, failures))
            for _ in range(watchers)
        ]  # fmt: skip
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if failures:
            raise RuntimeError(f"{len(failures)} request(s) failed, e.g. {failures[0]}")
        played = count_rows(db, LADDER_DONE)
    finally:
        stop(server)
    figures = {
        path: {"p50_ms": percentile(values, 0.5), "p99_ms": percentile(values, 0.99),
               "max_ms": max(values), "requests": len(values)}
        for path, values in times.items()
    }  # fmt: skip
    figures["games_done"] = {"count": played}  # type: ignore[dict-item]
    return figures


def pages(args: argparse.Namespace, big: str, directory: str) -> dict[str, object]:
    """The leaderboard page and ``GET /api/leaderboard`` of a real ``locm ladder serve`` over
    ``--stored`` games, with ``--watchers`` clients polling both every ``--poll`` s: once
    with the ladder paused (the pages alone), once while it plays on ``--page-workers``
    (default: as many as the server's default, the cores minus one)."""
    before = load_average()
    modes: dict[str, object] = {}
    playing_workers = args.page_workers or default_workers()
    for mode, workers in (("paused", 0), ("playing", playing_workers)):
        runs = []
        for run in range(args.runs):
            db = copy_ladder(big, os.path.join(directory, "pages.db"))
            runs.append(pages_run(db, directory, args.watchers, args.watch_seconds,
                                  args.poll, workers, args.seed + run))  # fmt: skip
            for suffix in ("", "-wal", "-shm", ".lock"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(db + suffix)
        modes[mode] = {
            path: {
                key: round(statistics.median(r[path][key] for r in runs), 2)
                for key in ("p50_ms", "p99_ms", "max_ms", "requests")
            }
            for path in PAGES
        }
        modes[mode]["p99_runs_ms"] = {  # type: ignore[index]
            path: [round(r[path]["p99_ms"], 2) for r in runs] for path in PAGES
        }
    return {
        "stored_games": args.stored,
        "bots": FIELD,
        "watchers": args.watchers,
        "poll_s": args.poll,
        "seconds_per_run": args.watch_seconds,
        "runs": args.runs,
        "workers_playing": playing_workers,
        **modes,
        "bar_p99_ms": PAGES_BAR_MS,
        "machine": machine(before),
    }


def show_pages(result: dict[str, Any]) -> None:
    print(f"pages: {result['stored_games']:,} games stored, {result['bots']} bots, "
          f"{result['watchers']} watchers each polling the leaderboard page and "
          f"/api/leaderboard every {result['poll_s']:g} s for {result['seconds_per_run']:g} s, "
          f"median of {result['runs']} runs (bar: p99 {result['bar_p99_ms']:.0f} ms)")  # fmt: skip
    playing = f"while it plays on {result['workers_playing']} worker(s)"
    for mode, title in (("paused", "ladder paused"), ("playing", playing)):
        print(f"  {title}:")
        for path in PAGES:
            f = result[mode][path]
            print(f"    GET {path:<17} p50 {f['p50_ms']:.1f} ms, p99 {f['p99_ms']:.1f} ms, max "
                  f"{f['max_ms']:.1f} ms ({f['requests']:.0f} requests a run)")  # fmt: skip
    print(
        f"  ({describe(result['machine'])}; "
        f"{result['machine']['load_average_before'][0]} at the start)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=SECTIONS, action="append",
                        help="run this section only (repeatable; default: all)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="one JSON object, by section")
    simulated = parser.add_argument_group("convergence (simulated bots)")
    simulated.add_argument("--bots", type=int, default=12)
    simulated.add_argument("--spread", type=float, default=600.0, help="Elo, best minus worst")
    simulated.add_argument("--games", type=int, default=1000, help="games per bot in each run")
    simulated.add_argument("--pairs-in-flight", type=int, default=4,
                           help="pairs in flight at once")  # fmt: skip
    simulated.add_argument("--seat", type=float, default=30.0,
                           help="the first seat's worth, Elo")  # fmt: skip
    simulated.add_argument("--tau", type=float, default=DRIFT, help="the online ratings' drift")
    simulated.add_argument("--fit-every", type=int, default=5,
                           help="games per bot between fits")  # fmt: skip
    simulated.add_argument("--settle", type=int, default=200,
                           help="games per bot before the new version arrives")  # fmt: skip
    simulated.add_argument("--horizon", type=int, default=300, help="the new version's games")
    simulated.add_argument("--seeds", type=int, default=20)
    real = parser.add_argument_group("throughput, scheduling, pages (a real ladder)")
    real.add_argument("--workers", type=int, default=2, help="workers playing games")
    real.add_argument("--field", choices=("even", "mixed"), default="even",
                      help="throughput: built-ins that pass like the process bots (even), or "
                      "greedy, random and pass (mixed)")  # fmt: skip
    real.add_argument("--runs", type=int, default=3, help="runs of each measure (the median)")
    real.add_argument("--warm-up", type=int, default=20, help="games before the clock starts")
    real.add_argument("--measured", type=int, default=200, help="games timed per run")
    real.add_argument("--stored", type=int, default=100_000, help="games in the database")
    real.add_argument("--scheduled", type=int, default=500, help="games scheduled per run")
    real.add_argument("--watchers", type=int, default=20, help="clients polling the board")
    real.add_argument("--poll", type=float, default=1.0, help="seconds between a watcher's polls")
    real.add_argument("--watch-seconds", type=float, default=30.0, help="seconds per run")
    real.add_argument(
        "--page-workers",
        type=int,
        help="pages: workers while it plays (default: the server's, cores - 1)",
    )
    real.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.bots < 2 or args.games < 1 or args.pairs_in_flight < 1 or args.seeds < 1:
        parser.error("--bots is at least 2; --games, --pairs-in-flight and --seeds at least 1")
    if min(args.workers, args.runs, args.measured, args.scheduled, args.watchers) < 1:
        parser.error("--workers, --runs, --measured, --scheduled and --watchers: at least 1")
    if args.stored < 1 or args.warm_up < 0 or args.poll <= 0 or args.watch_seconds <= 0:
        parser.error("--stored at least 1, --warm-up at least 0, --poll and --watch-seconds > 0")
    chosen = [s for s in SECTIONS if s in (args.only or SECTIONS)]
    results: dict[str, object] = {}
    shows = {"convergence": lambda r: show_convergence(r, args), "throughput": show_throughput,
             "scheduling": show_scheduling, "pages": show_pages}  # fmt: skip
    with tempfile.TemporaryDirectory() as directory:
        big = None
        for section in chosen:
            if section == "convergence":
                results[section] = convergence(args)
            elif section == "throughput":
                results[section] = throughput(args)
            else:
                if big is None:
                    big, fill_s = big_ladder(directory, args.stored, args.seed)
                    if not args.json:
                        print(f"(filled a ladder with {args.stored:,} games in {fill_s:.0f} s)")
                run = scheduling if section == "scheduling" else pages
                results[section] = run(args, big, directory)
            if not args.json:
                shows[section](results[section])
                sys.stdout.flush()
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    run_script(main, "benchmarks/ladder.py")
