"""learned-v3's decks against the fitted deck, on seeds its training never evaluated on.

    python benchmarks/learned_decks.py                       # 4,000 games per version
    python benchmarks/learned_decks.py --version 1.5 --games 10000 --seed 70000000

For each version, the shipped deck network (``cardarena/locm/agents/learned_v3.npz``, or
``--weights``) builds one deck by its most likely picks, the other player the fitted deck
(what builtin:search-v3 builds); each seed is played twice with seats swapped, once with
learned-v2's compiled network battling on both sides and once with builtin:greedy's. It
is the training's evaluation (``scripts/train_learned_v3.py``) on fresh seeds: the kept
point of a training curve is the best of many evaluations on one set of seeds, and so
flatters its network; this does not. Compiled engine, one thread (the ``fast`` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for _name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = ("1.0", "1.2", "1.5")


def _training_script():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "train_learned_v3", ROOT / "scripts" / "train_learned_v3.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="append", choices=VERSIONS)
    parser.add_argument(
        "--games", type=int, default=4000, help="games per version and battle (even)"
    )
    parser.add_argument("--seed", type=int, default=50_000_000, help="first game seed")
    parser.add_argument("--weights", help="a learned_v3.npz (default: the shipped one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.games < 2 or args.games % 2:
        parser.error("--games must be even and at least 2")
    from cardarena.locm.agents.learned_v3 import load_weights
    from cardarena.locm.fast import FastEngineUnavailable, require_numba

    try:
        require_numba()
    except FastEngineUnavailable as error:
        print(f"learned_decks: {error}", file=sys.stderr)
        return 2
    try:
        weights = load_weights(args.weights) if args.weights else load_weights()
    except (OSError, ValueError, KeyError) as error:
        print(f"learned_decks: cannot read --weights {args.weights}: {error}", file=sys.stderr)
        return 2
    script = _training_script()
    results = []
    for version in args.version or VERSIONS:
        network = weights.networks.get(version)
        if network is None:
            print(f"learned_decks: the weights have no LOCM {version} network", file=sys.stderr)
            return 2
        options = script._arguments(["--dir", "unused", "--eval-games", str(args.games)])
        trainer = script.Trainer(version, options, Path("unused"))
        trainer.net = network
        started = time.perf_counter()
        rate, low, high, g_rate, g_low, g_high = trainer.evaluate(args.seed)
        results.append(
            {
                "version": version,
                "games": args.games,
                "first_seed": args.seed,
                "learned_v2_battles": [rate, low, high],
                "greedy_battles": [g_rate, g_low, g_high],
                "seconds": round(time.perf_counter() - started, 1),
                "load_average": os.getloadavg(),
            }
        )
        if not args.json:
            print(
                f"LOCM {version}: learned-v3's deck vs the fitted deck, {args.games} games each: "
                f"learned-v2 battles {rate:.1%} [{low:.1%}, {high:.1%}], "
                f"greedy battles {g_rate:.1%} [{g_low:.1%}, {g_high:.1%}] "
                f"({results[-1]['seconds']} s, load {os.getloadavg()[0]:.2f})"
            )
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
