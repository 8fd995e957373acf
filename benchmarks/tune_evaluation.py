"""Tune the evaluation's weights by self-play with CMA-ES (the `cma` package from PyPI).

    python benchmarks/tune_evaluation.py --version 1.5 --generations 20 --games 200

Why greedy: a game between two one-step greedy agents takes ~20 ms, so a candidate set
of weights can be judged on hundreds of games; the search agents use the same
evaluation, so weights that make greedy choose better make the search choose better too
(checked afterwards with benchmarks/agents.py at the official limits).

A candidate is the reference weights (``--start``, default ``TUNED``) times
``exp(x_i)`` per feature (own and opponent health stay 1: the unit). Its fitness is its
greedy agent's score against the reference's greedy agent, both with the search
agent's deck policy, over ``--games`` games (half in each seat, the same seeds for every
candidate of a generation). Prints each generation's best and the final mean as a
``Weights(...)`` line to paste into ``cardarena/locm/agents/evaluation.py``.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from dataclasses import asdict, fields, replace

from cardarena.locm.agents import evaluation
from cardarena.locm.agents.cardscore import AGGRO_DECK
from cardarena.locm.agents.evaluation import Weights
from cardarena.locm.agents.greedy import GreedyAgent
from cardarena.locm.engine.state import State
from cardarena.machine import run_script

TUNED_FEATURES = tuple(
    f.name for f in fields(Weights) if f.name not in ("my_health", "opp_health", "low_health_below")
)


def weights_from(start: Weights, x: list[float]) -> Weights:
    """The start weights, each tuned feature multiplied by exp(x_i)."""
    values = asdict(start)
    for name, step in zip(TUNED_FEATURES, x, strict=True):
        values[name] = values[name] * math.exp(step)
    return replace(start, **{name: values[name] for name in TUNED_FEATURES})


def score(candidate: Weights, reference: Weights, version: str, seeds: list[int]) -> float:
    """The candidate's greedy score against the reference's (wins + draws / 2, per game)."""
    points = 0.0
    for index, seed in enumerate(seeds):
        for seat in (0, 1):
            state = State.new(version, {"seed": seed})
            agents = [
                GreedyAgent(2 * index + 1, reference, AGGRO_DECK),
                GreedyAgent(2 * index + 2, reference, AGGRO_DECK),
            ]
            agents[seat] = GreedyAgent(2 * index + 1 + seat, candidate, AGGRO_DECK)
            while not state.is_terminal:
                state.apply(agents[state.current_player].act(state))
            if state.winner is None:
                points += 0.5
            elif state.winner == seat:
                points += 1.0
    return points / (2 * len(seeds))


def format_weights(weights: Weights) -> str:
    args = ", ".join(f"{k}={round(v, 3)!r}" for k, v in asdict(weights).items())
    return f"Weights({args})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="1.5")
    parser.add_argument("--generations", type=int, default=20)
    parser.add_argument("--games", type=int, default=200, help="games per candidate (even)")
    parser.add_argument("--sigma", type=float, default=0.4, help="initial step, log scale")
    parser.add_argument("--popsize", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", default="TUNED", help="weights in evaluation.py to start from")
    args = parser.parse_args()
    try:
        import cma  # a tuning-time tool only: the tuned weights are committed as numbers
    except ImportError:
        raise SystemExit("tune_evaluation: needs the cma package: pip install cma") from None
    start: Weights = getattr(evaluation, args.start)
    reference = start
    rng = random.Random(args.seed)
    es = cma.CMAEvolutionStrategy(
        [0.0] * len(TUNED_FEATURES),
        args.sigma,
        {"popsize": args.popsize, "seed": args.seed, "verbose": -9},
    )
    for generation in range(args.generations):
        started = time.perf_counter()
        seeds = [rng.randrange(2**31) for _ in range(args.games // 2)]
        candidates = es.ask()
        fitness = [
            -score(weights_from(start, list(x)), reference, args.version, seeds) for x in candidates
        ]
        es.tell(candidates, fitness)
        best = min(range(len(fitness)), key=fitness.__getitem__)
        mean = weights_from(start, list(es.mean))
        print(
            f"generation {generation}: best {-fitness[best]:.3f}, "
            f"mean of scores {-sum(fitness) / len(fitness):.3f}, "
            f"{time.perf_counter() - started:.0f} s\n  mean: {format_weights(mean)}",
            flush=True,
        )
    final = weights_from(start, list(es.mean))
    seeds = [rng.randrange(2**31) for _ in range(500)]
    print(
        f"final mean vs start, 1000 fresh games: {score(final, reference, args.version, seeds):.3f}"
    )
    print(format_weights(final))


if __name__ == "__main__":
    run_script(main, "benchmarks/tune_evaluation.py")
