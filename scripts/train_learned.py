"""Train ``builtin:learned`` (learned-v2) by self-play in the compiled engine.

    python scripts/train_learned.py --out /tmp/learned_v2.npz      # 1.0, 1.2 and 1.5
    python scripts/train_learned.py --version 1.2 --iterations 5 --games 500 --out /tmp/w.npz

The defaults are the settings of the shipped weights (docs/agents.md has the command).

Per version: a warm-up round of builtin:greedy against itself, whose positions and
winners give the network its first fit; then ``--iterations`` rounds, each of
``--games`` games of the network (exploring with probability ``--epsilon``) against a
league — its present self, its past snapshots, builtin:greedy and random play — after
which the network is fitted (numpy Adam, cross-entropy) to the TD(lambda) returns of
the positions its seats chose, over a window of recent rounds. Every round ends with
``--eval-games`` games of the network (no exploration) against compiled builtin:greedy
(the network with the fitted deck; greedy with its scored cards, no curve), a line of
the learning curve (``--curve``, CSV). The networks go to ``--out`` (numpy .npz, the
format of ``cardarena.locm.agents.learned_v2``).

One process, one thread (it sets NUMBA_NUM_THREADS and the BLAS threads to 1 unless
set); needs numba (the ``fast`` extra). Seeded: the same command gives the same weights.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import shlex
import sys
import time
from pathlib import Path

for _name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # one thread, set before numpy and numba load

import numpy as np  # noqa: E402

from cardarena.locm.agents.learned_v2 import fit_network  # noqa: E402

VERSIONS = ("1.0", "1.2", "1.5")
DECK_KINDS = ("fitted", "scored", "random")


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--version",
        action="append",
        choices=VERSIONS,
        help="LOCM version to train (repeat for several; default all three)",
    )
    parser.add_argument("--out", required=True, help="where to write the .npz weights")
    parser.add_argument("--curve", help="CSV file for the learning curve")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--games", type=int, default=2000, help="self-play games per iteration")
    parser.add_argument("--warmup-games", type=int, default=4000)
    parser.add_argument("--eval-games", type=int, default=1000)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--epsilon", type=float, default=0.03)
    parser.add_argument("--lam", type=float, default=0.8, help="TD(lambda) parameter")
    parser.add_argument("--window", type=int, default=4, help="rounds of positions fitted")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    for name in ("iterations", "games", "warmup_games", "eval_games", "hidden", "window",
                 "epochs"):  # fmt: skip
        minimum = 0 if name in ("iterations", "eval_games") else 1
        if getattr(args, name) < minimum:
            parser.error(f"--{name.replace('_', '-')} must be at least {minimum}")
    if not 0.0 <= args.epsilon <= 1.0 or not 0.0 <= args.lam <= 1.0:
        parser.error("--epsilon and --lam must be between 0 and 1")
    if args.learning_rate <= 0:
        parser.error("--learning-rate must be positive")
    for option, path in (("--out", args.out), ("--curve", args.curve)):
        if path is None:
            continue
        if Path(path).is_dir():
            parser.error(f"{option}: {path!r} is a folder; give a file name")
        if not Path(path).resolve().parent.is_dir():
            parser.error(f"{option}: no folder {str(Path(path).resolve().parent)!r}")
    args.version = list(dict.fromkeys(args.version or VERSIONS))
    return args


class Trainer:
    """One version's network, its league and its data window."""

    def __init__(self, version: str, args: argparse.Namespace) -> None:
        from cardarena.locm.engine.rules import ruleset
        from cardarena.locm.fast import playouts, selfplay

        self.version = version
        self.rules = ruleset(version)
        self.args = args
        self.S = selfplay
        self.w = playouts.GREEDY_WEIGHTS.copy()
        self.hidden = args.hidden
        self.rng = np.random.default_rng(args.seed + 1000 * VERSIONS.index(version))
        self.net = self._initial()
        self.league: list[np.ndarray] = []
        self.window: list[tuple[np.ndarray, np.ndarray]] = []
        self.adam = [np.zeros_like(self.net), np.zeros_like(self.net), 0]
        self.games = 0
        self.positions = 0
        self._card_cache: dict[tuple[int, ...], tuple[float, float]] = {}

    def _initial(self) -> np.ndarray:
        """Small random weights (Glorot-scaled), the output near 0.5."""
        params = []
        for shape in self.S.shapes(self.hidden):
            if len(shape) == 2:
                params.append(self.rng.normal(0.0, 1.0 / math.sqrt(shape[0]), shape))
            elif shape == (self.hidden,) and params and params[-1].ndim == 1:
                params.append(self.rng.normal(0.0, 1.0 / math.sqrt(self.hidden), shape))
            else:
                params.append(np.zeros(shape))
        return self.S.pack(params)

    # --- games ----------------------------------------------------------------------

    def _deck_values(self, batch, kinds: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
        """[N, 2, MAX_CARDS] card values per seat: fitted, scored (greedy's card scores,
        no curve) or NaN (random picks)."""
        from cardarena.locm.agents.cardscore import DEFAULT_DECK, card_surplus
        from cardarena.locm.agents.cardvalues import fitted_value
        from cardarena.locm.fast.convert import card_from_values

        n = len(batch)
        values = np.full((n, 2, batch.cards.shape[1]), np.nan)
        rows = int(batch.state[0, 6])  # CARD_COUNT
        for g in range(n):
            table = batch.cards[g]
            pair = np.empty((rows, 2))
            for c in range(rows):
                key = tuple(int(v) for v in table[c])
                cached = self._card_cache.get(key)
                if cached is None:
                    card = card_from_values(key)
                    cached = (fitted_value(card, self.rules),
                              card_surplus(card, self.rules, DEFAULT_DECK))  # fmt: skip
                    self._card_cache[key] = cached
                pair[c] = cached
            for seat in (0, 1):
                kind = kinds[g, seat]
                if kind < 2:
                    values[g, seat, :rows] = pair[:, kind]
                    values[g, seat, rows:] = -1e9
        return values

    def play(self, seats: np.ndarray, nets: np.ndarray, decks: np.ndarray, record: np.ndarray,
             epsilon: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """Play len(seats) new games: (winners, features, game, seat of each position)."""
        from cardarena.locm.fast.batch import Batch

        n = len(seats)
        batch = Batch.new(self.version, n, seed=int(self.rng.integers(1 << 62)))
        values = self._deck_values(batch, decks)
        rng = self.rng.integers(0, 1 << 63, n, dtype=np.int64).view(np.uint64)
        limit = int(record.sum()) * 160 + 16
        out_x = np.empty((limit, self.S.FEATURES))
        out_game = np.empty(limit, np.int32)
        out_player = np.empty(limit, np.int8)
        stored = self.S.play_league(batch.state, batch.cards, seats.astype(np.int64),
                                    nets, self.hidden, self.w, values, rng, epsilon,
                                    record.astype(np.bool_), out_x, out_game,
                                    out_player)  # fmt: skip
        return batch.winners, out_x[:stored], out_game[:stored], out_player[:stored]

    def evaluate(self, games: int, same_deck: bool = False) -> float:
        """The network's win rate against compiled greedy (seats alternate); greedy builds
        its deck from its card scores, or with ``same_deck`` from the fitted values too."""
        seats = np.full((games, 2), self.S.GREEDY, np.int64)
        decks = np.full((games, 2), 0 if same_deck else 1, np.int64)
        learner = np.arange(games) % 2
        seats[np.arange(games), learner] = 0
        decks[np.arange(games), learner] = 0  # the network: fitted cards
        winners, *_ = self.play(seats, self.net[None, :], decks, np.zeros((games, 2), bool), 0.0)
        return float(np.mean(winners == learner))

    # --- learning -------------------------------------------------------------------

    def targets(self, winners: np.ndarray, x: np.ndarray, game: np.ndarray,
                seat: np.ndarray) -> np.ndarray:  # fmt: skip
        """TD(lambda) returns of each recorded position (1 won, 0 otherwise at the end)."""
        lam = self.args.lam
        values = self.values(x)
        out = np.empty(len(x))
        order = np.lexsort((np.arange(len(x)), seat, game))  # by game, seat, then time
        next_return = 0.0
        for i in range(len(order) - 1, -1, -1):
            k = order[i]
            after = order[i + 1] if i + 1 < len(order) else -1
            if after < 0 or game[after] != game[k] or seat[after] != seat[k]:  # its last
                next_return = 1.0 if winners[game[k]] == seat[k] else 0.0
                out[k] = next_return
            else:
                next_return = (1 - lam) * values[after] + lam * next_return
                out[k] = next_return
        return out

    def values(self, x: np.ndarray) -> np.ndarray:
        w1, b1, w2, b2, w3, b3 = self.S.unpack(self.net, self.hidden)
        h = np.tanh(np.tanh(x @ w1 + b1) @ w2 + b2)
        return 1.0 / (1.0 + np.exp(-(h @ w3 + b3[0])))

    def fit(self) -> float:
        """Adam epochs over the window's positions; returns the last epoch's mean loss."""
        x = np.concatenate([item[0] for item in self.window])
        y = np.concatenate([item[1] for item in self.window])
        return fit_network(self.net, self.hidden, x, y, self.adam, self.args.learning_rate,
                           self.args.epochs, self.rng)  # fmt: skip

    def add(self, winners: np.ndarray, x: np.ndarray, game: np.ndarray, seat: np.ndarray) -> None:
        self.window.append((x, self.targets(winners, x, game, seat)))
        del self.window[: -self.args.window]
        self.positions += len(x)

    # --- rounds ---------------------------------------------------------------------

    def warmup(self) -> None:
        """builtin:greedy against itself, decks of every kind: the network's first fit."""
        n = self.args.warmup_games
        seats = np.full((n, 2), self.S.GREEDY, np.int64)
        decks = self.rng.integers(0, len(DECK_KINDS), (n, 2))
        winners, x, game, seat = self.play(seats, self.net[None, :], decks,
                                           np.ones((n, 2), bool), 0.0)  # fmt: skip
        self.games += n
        lam = self.args.lam
        self.args.lam = 1.0  # no network yet: returns are the outcomes
        self.add(winners, x, game, seat)
        self.args.lam = lam
        self.fit()
        self.league.append(self.net.copy())

    def iteration(self) -> None:
        """League games, recorded for the network's seats, then a fit."""
        n = self.args.games
        league = self.league[-10:]
        nets = np.stack([self.net, *league])
        seats = np.zeros((n, 2), np.int64)
        learner = self.rng.integers(0, 2, n)
        kind = self.rng.random(n)
        # 40% itself, 30% a past self, 25% greedy, 5% random
        past = 1 + self.rng.integers(0, len(league), n)
        scripted = np.where(kind < 0.95, self.S.GREEDY, self.S.RANDOM)
        other = np.where(kind < 0.4, 0, np.where(kind < 0.7, past, scripted))
        seats[np.arange(n), 1 - learner] = other
        record = np.zeros((n, 2), bool)
        record[np.arange(n), learner] = True
        record[np.arange(n), 1 - learner] = other == 0
        decks = np.zeros((n, 2), np.int64)
        decks[np.arange(n), learner] = np.where(self.rng.random(n) < 0.8, 0, 2)
        decks[np.arange(n), 1 - learner] = self.rng.integers(0, len(DECK_KINDS), n)
        winners, x, game, seat = self.play(seats, nets, decks, record, self.args.epsilon)
        self.games += n
        self.add(winners, x, game, seat)
        self.fit()
        self.league.append(self.net.copy())


def _wilson(wins: float, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p, z = wins / n, 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    try:
        from cardarena.locm.fast import require_numba

        require_numba()
    except ImportError as error:
        print(f"train_learned: {error}", file=sys.stderr)
        return 1
    from cardarena.locm.agents.learned_v2 import save_weights

    given = sys.argv[1:] if argv is None else argv
    command = "python scripts/train_learned.py " + shlex.join(given)
    curve_rows = [
        "version,iteration,games,positions,wall_s,win_vs_greedy,ci_low,ci_high,"
        "win_same_deck,same_ci_low,same_ci_high"
    ]
    networks: dict[str, tuple[np.ndarray, int]] = {}
    meta: dict[str, object] = {"command": command, "versions": {}}
    started = time.time()
    for version in args.version:
        t0 = time.time()
        trainer = Trainer(version, args)
        trainer.warmup()
        for it in range(args.iterations + 1):
            if it > 0:
                trainer.iteration()
            line = (f"{version} iteration {it:3d}: {trainer.games} games, "
                    f"{trainer.positions} positions, {time.time() - t0:.0f} s")  # fmt: skip
            if args.eval_games:
                rate = trainer.evaluate(args.eval_games)
                low, high = _wilson(rate * args.eval_games, args.eval_games)
                same = trainer.evaluate(args.eval_games, same_deck=True)
                same_low, same_high = _wilson(same * args.eval_games, args.eval_games)
                line += (f", vs greedy {100 * rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
                         f", same deck {100 * same:.1f}% [{100 * same_low:.1f}, "
                         f"{100 * same_high:.1f}]")  # fmt: skip
                curve_rows.append(f"{version},{it},{trainer.games},{trainer.positions},"
                                  f"{time.time() - t0:.0f},{rate:.4f},{low:.4f},{high:.4f},"
                                  f"{same:.4f},{same_low:.4f},{same_high:.4f}")  # fmt: skip
            print(line, flush=True)
        networks[version] = (trainer.net.copy(), args.hidden)
        meta["versions"][version] = {  # type: ignore[index]
            "iterations": args.iterations, "games": trainer.games,
            "positions": trainer.positions, "wall_s": round(time.time() - t0),
        }  # fmt: skip
    meta["date"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    meta["wall_s"] = round(time.time() - started)
    meta["load_average"] = [round(x, 2) for x in os.getloadavg()]
    save_weights(args.out, networks, meta)
    if args.curve:
        Path(args.curve).write_text("\n".join(curve_rows) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({meta['wall_s']} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
