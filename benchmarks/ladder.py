"""How fast the ladder's board finds the true order, and whether its intervals are honest.

    python benchmarks/ladder.py                 # human-readable
    python benchmarks/ladder.py --seeds 20 --json

Simulated bots of known strength play the ladder's loop: ``choose_pairing`` picks each
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
import itertools
import json
import random
import statistics
import time
from dataclasses import dataclass, field, replace
from statistics import NormalDist

from cardarena.ladder.matchmaking import Entrant, choose_pairing
from cardarena.ladder.ratings import DRIFT, INITIAL, after_game, conservative, fit_games
from cardarena.ladder.ratings import new_version as ratings_new_version
from cardarena.machine import describe, load_average, machine, run_script

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=12)
    parser.add_argument("--spread", type=float, default=600.0, help="Elo, best minus worst")
    parser.add_argument("--games", type=int, default=1000, help="games per bot in each run")
    parser.add_argument("--workers", type=int, default=4, help="pairs in flight at once")
    parser.add_argument("--seat", type=float, default=30.0, help="the first seat's worth, Elo")
    parser.add_argument("--tau", type=float, default=DRIFT, help="the online ratings' drift")
    parser.add_argument("--fit-every", type=int, default=5, help="games per bot between fits")
    parser.add_argument("--settle", type=int, default=200,
                        help="games per bot before the new version arrives")  # fmt: skip
    parser.add_argument("--horizon", type=int, default=300, help="the new version's games")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.bots < 2 or args.games < 1 or args.workers < 1 or args.seeds < 1:
        parser.error("--bots is at least 2; --games, --workers and --seeds at least 1")
    setting = Setting(args.bots, args.spread, args.games, args.workers, args.seat, args.tau,
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
    if args.json:
        print(json.dumps(result))
        return
    gap = args.spread / (args.bots - 1)
    print(f"{args.bots} bots, true Elo 0 to {args.spread:g} ({gap:.1f} apart), {args.games} "
          f"games per bot, {args.workers} pairs in flight, tau {args.tau:.4g}, "
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
        f"{load_before[0] if load_before else 'unknown'} at the start)"
    )


if __name__ == "__main__":
    run_script(main, "benchmarks/ladder.py")
