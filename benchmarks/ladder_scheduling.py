"""What scheduling one ladder game costs the server, with a large database.

    python benchmarks/ladder_scheduling.py          # human-readable
    python benchmarks/ladder_scheduling.py --json   # {"ms_per_game": …, …}

A ladder database is filled synthetically: 20 active bots of 20 owners and 100,000 finished
rated games (each with its two rating-history rows and a 2 KB compressed log). Then, for
``--games`` games per run, the server's own sequence is timed: the scheduler chooses and
queues a pair, leases a game (:meth:`Scheduler.next_game`), and the result is written with
its rating change and the disable check (:meth:`Scheduler.record`). No game is played: this
is the server's bookkeeping per game, which its one thread spends between games.
Bar: ≤ 5 ms per game (median of ``--runs`` runs). The page reads (the leaderboard, one
bot's page, the rated results the board's fit reads) are timed too, for information: the
web thread holds the store while it reads, and the scheduler waits meanwhile. The load
average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time

from cardarena.ladder.ratings import INITIAL
from cardarena.ladder.scheduler import Scheduler, random_seed
from cardarena.ladder.store import LadderStore
from cardarena.machine import describe, load_average, machine, run_script
from cardarena.tournaments.store import GameRecord, compress_log

BOTS = 20
BAR_MS = 5.0


def synthetic_log(rng: random.Random) -> bytes:
    """About 2 KB compressed: the order of a short LOCM log."""
    turns = [[rng.randrange(1000) for _ in range(30)] for _ in range(40)]
    return compress_log({"turns": turns})


def fill(store: LadderStore, games: int, rng: random.Random) -> list[int]:
    """20 active versions of 20 owners and ``games`` finished rated games; the version ids."""
    versions = []
    for index in range(BOTS):
        user = store.user_for_token(store.add_user(f"owner{index}"))
        assert user is not None
        version = store.submit(user, f"bot{index}", "python", "bot.py", b"#", new_bot=True)
        store.record_build(version, True, "built", f"python3 /bots/{index}/bot.py", None)
        store.set_status(version, "active")
        versions.append(version)
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
    return versions


def result(rng: random.Random, log: bytes) -> GameRecord:
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
        scheduler.record(game.id, result(rng, log))
    return (time.perf_counter() - started) * 1000 / games


def timed_ms(action: object, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()  # type: ignore[operator]
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stored", type=int, default=100_000, help="games in the database")
    parser.add_argument("--games", type=int, default=500, help="games scheduled per run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    before = load_average()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as directory:
        db = os.path.join(directory, "ladder.db")
        with LadderStore(db, lock=True) as store:
            started = time.perf_counter()
            fill(store, args.stored, rng)
            fill_s = time.perf_counter() - started
            scheduler = Scheduler(
                store, validation_opponent="builtin:greedy", rng=random.Random(args.seed),
                max_in_flight=2 * BOTS,  # the cap never stops this sequential run
            )  # fmt: skip
            log = synthetic_log(rng)
            runs = [schedule_run(scheduler, args.games, rng, log) for _ in range(args.runs)]
            board_ms = timed_ms(store.leaderboard)
            bot_ms = timed_ms(lambda: store.bot("bot0"))
            results_ms = timed_ms(store.rated_results)
            size_mb = os.path.getsize(db) / 1e6
    ms = statistics.median(runs)
    figures = {
        "ms_per_game": round(ms, 3),
        "runs_ms": [round(r, 3) for r in runs],
        "bar_ms": BAR_MS,
        "stored_games": args.stored,
        "bots": BOTS,
        "fill_s": round(fill_s, 1),
        "database_mb": round(size_mb, 1),
        "leaderboard_ms": round(board_ms, 2),
        "bot_page_ms": round(bot_ms, 2),
        "board_results_ms": round(results_ms, 2),
        "machine": machine(before),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"ladder database: {args.stored:,} games, {BOTS} active bots ({size_mb:.0f} MB, "
          f"filled in {fill_s:.1f} s)")  # fmt: skip
    print(f"  schedule one game (choose + queue + lease + finish): {ms:.2f} ms median of "
          f"{args.runs} runs of {args.games} (bar {BAR_MS:.0f} ms)")  # fmt: skip
    print(f"  leaderboard: {board_ms:.1f} ms; one bot's page: {bot_ms:.1f} ms; the board fit's "
          f"input (every rated game): {results_ms:.1f} ms")  # fmt: skip
    print(describe(figures["machine"]))  # type: ignore[arg-type]


if __name__ == "__main__":
    run_script(main, "benchmarks/ladder_scheduling.py")
