"""How the ladder's final behaves: how often it stops "separated", in the true order, after
how many games; with simulated bots of known strength.

    python benchmarks/ladder_final.py          # human-readable
    python benchmarks/ladder_final.py --json   # one object per scenario

Each final runs the real code on a real (temporary) ladder database: the finalists are
started by :func:`cardarena.ladder.final.start_final`, the games are handed out by the
server's scheduler with the final's programme (:class:`cardarena.ladder.final.FinalProgramme`)
and recorded by the store, one at a time; only the game itself is simulated: the first seat
wins with the Elo model's probability for the two bots' true strengths (no draws). The
scenarios: two equal bots (a final that should not separate them: how often it does by
chance, checking after every round), and bots 100 Elo apart.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time

from cardarena.ladder.final import FinalProgramme, final_json, start_final
from cardarena.ladder.scheduler import Scheduler
from cardarena.ladder.store import LadderStore
from cardarena.machine import describe, load_average, machine, run_script
from cardarena.tournaments.store import GameRecord

SCENARIOS = (
    ("two equal bots", (0.0, 0.0), 100, 0.95),
    ("two equal bots", (0.0, 0.0), 100, 0.99),
    ("three bots 100 Elo apart", (200.0, 100.0, 0.0), 600, 0.95),
)


def _record(game: int, winner: int) -> GameRecord:
    return GameRecord(
        key=str(game), first="a", second="b", round=0, seed=0, winner=winner, result="win",
        end_reason="HEALTH", error_seat=None, error_kind=None, detail=None, turns=1,
        first_turns=1, first_mean_ms=0.0, first_max_ms=0.0, second_turns=1,
        second_mean_ms=0.0, second_max_ms=0.0, duration_s=0.0, replay="",
    )  # fmt: skip


def one_final(folder: str, elo: tuple[float, ...], budget: int, confidence: float,
              rng: random.Random) -> dict[str, object]:  # fmt: skip
    """Play one final among bots of true strength ``elo`` (best first on the board)."""
    path = os.path.join(folder, f"final-{rng.getrandbits(32)}.db")
    with LadderStore(path) as store:
        strength = {}
        for index, value in enumerate(elo):
            user = store.user_for_token(store.add_user(f"owner{index}"))
            assert user is not None
            version = store.submit(user, f"bot{index}", "python", "bot.py", b"#", new_bot=True)
            store.record_build(version, True, "ok", f"builtin:bot{index}", None)
            store.set_status(version, "active")
            store.db.execute("UPDATE versions SET mu = ? WHERE id = ?", (50 - index, version))
            strength[f"bot{index}"] = value
        start_final(store, len(elo), confidence, budget)
        scheduler = Scheduler(store, validation_opponent="builtin:greedy", rng=rng)
        scheduler.programmes.append(FinalProgramme())
        while (game := scheduler.next_game()) is not None and game.kind == "final":
            first, second = (label.split(".v")[0] for label in (game.first, game.second))
            p_first = 1 / (1 + 10 ** ((strength[second] - strength[first]) / 400))
            scheduler.record(game.id, _record(game.id, 0 if rng.random() < p_first else 1))
        final = final_json(store.db)
    os.unlink(path)
    assert final is not None and final["state"] == "done"
    order = [row["name"] for row in final["standings"]]
    truth = sorted(strength, key=lambda name: -strength[name])
    distinct = len(set(elo)) == len(elo)
    return {
        "separated": final["end_reason"] == "separated",
        "right_order": distinct and order == truth,
        "games": final["games_played"],
    }


def scenario(name: str, elo: tuple[float, ...], budget: int, confidence: float, finals: int,
             seed: int) -> dict[str, object]:  # fmt: skip
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="ladder-final-") as folder:
        results = [one_final(folder, elo, budget, confidence, rng) for _ in range(finals)]
    separated = [r for r in results if r["separated"]]
    return {
        "scenario": name,
        "elo": list(elo),
        "budget": budget,
        "confidence": confidence,
        "finals": finals,
        "separated": len(separated) / finals,
        "separated_in_true_order": sum(bool(r["right_order"]) for r in separated) / finals,
        "median_games": statistics.median(int(str(r["games"])) for r in results),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--finals", type=int, default=100, help="finals per scenario")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    started, load_before = time.perf_counter(), load_average()
    rows = [scenario(name, elo, budget, confidence, args.finals, args.seed + index)
            for index, (name, elo, budget, confidence) in enumerate(SCENARIOS)]  # fmt: skip
    facts = machine(load_before)
    machine_text = describe(facts)
    if args.json:
        for row in rows:
            print(json.dumps({**row, **facts}))
        return
    for row in rows:
        print(f"{row['scenario']} (Elo {row['elo']}), budget {row['budget']} games, "
              f"confidence {row['confidence']}: separated in {row['separated']:.0%} of "
              f"{row['finals']} finals ({row['separated_in_true_order']:.0%} in the true "
              f"order), median {row['median_games']} games")  # fmt: skip
    print(f"{time.perf_counter() - started:.1f} s; {machine_text}")


if __name__ == "__main__":
    run_script(main, "ladder_final")
