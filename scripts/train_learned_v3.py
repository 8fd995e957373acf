"""Train learned-v3's deck building by self-play in the compiled engine.

    python scripts/train_learned_v3.py --dir runs/learned-v3                 # 1.0, 1.2, 1.5
    python scripts/train_learned_v3.py --dir runs/v3 --version 1.5 --minutes 30

Each iteration plays ``--games`` whole games in the compiled engine. In each, the
network builds one player's deck, sampling every pick from its softmax; the other
player builds the fitted deck (what builtin:search-v3 builds) or, in ``--league`` of the
games, the deck of a past snapshot of the network; then learned-v2's compiled network
plays both battles. The winner is the reward: a policy-gradient step (REINFORCE, the
mean reward against each kind of opponent as baseline, an entropy bonus, Adam) moves
the network toward the picks of won games. Every ``--eval-every`` iterations the
network's own deck (its most likely picks) plays ``--eval-games`` games against the
fitted deck, each seed twice with seats swapped, with learned-v2's battles on both
sides and with builtin:greedy's: a point of the learning curves (``curve.csv`` and
``curve.png``).

It stops after ``--iterations`` or ``--minutes`` per version. After every iteration
the state (network, optimiser, random generator, curve) is saved to
``DIR/<version>/checkpoint.npz``, atomically: after Ctrl-C or a kill, the same command
resumes from the last finished iteration. The weights of every version trained so far
go to ``DIR/learned_v3.npz`` (the format of ``cardarena.locm.agents.learned_v3``; copy
it over the shipped file to play with it): for each version, the network of its best
evaluation against the fitted deck (learned-v2's battles), which its ``meta`` names.

One process, one thread; needs numba (the ``fast`` extra). Seeded: the same command
gives the same weights, whatever stops and resumes happened on the way.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import signal
import sys
import time
from pathlib import Path

for _name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # one thread, set before numpy and numba load

import numpy as np  # noqa: E402

VERSIONS = ("1.0", "1.2", "1.5")
FITTED, SNAPSHOT = 0, 1
EVAL_SEED = 10_000_000
"""The evaluations' first game seed (the same seeds at every point of a curve)."""
CURVE_COLUMNS = (
    "version",
    "iteration",
    "games",
    "cpu_seconds",
    "train_win_rate",
    "entropy",
    "win_rate_learned_v2",
    "low_learned_v2",
    "high_learned_v2",
    "win_rate_greedy",
    "low_greedy",
    "high_greedy",
)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, help="folder for checkpoints, weights and curves")
    parser.add_argument(
        "--version",
        action="append",
        choices=VERSIONS,
        help="LOCM version to train (repeat for several; default all three)",
    )
    parser.add_argument("--iterations", type=int, default=400, help="per version")
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="stop a version after this much CPU time (minutes), whichever first",
    )
    parser.add_argument("--games", type=int, default=1000, help="self-play games per iteration")
    parser.add_argument("--eval-every", type=int, default=10)
    parser.add_argument("--eval-games", type=int, default=1000, help="per evaluation (even)")
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.003)
    parser.add_argument("--entropy", type=float, default=0.003, help="entropy bonus")
    parser.add_argument(
        "--league",
        type=float,
        default=0.3,
        help="share of games against past snapshots (the rest: the fitted deck)",
    )
    parser.add_argument("--snapshot-every", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fresh", action="store_true", help="ignore checkpoints in --dir")
    args = parser.parse_args(argv)
    if args.games < 2 or args.eval_games < 2 or args.eval_games % 2:
        parser.error("--games must be at least 2 and --eval-games even and at least 2")
    if args.iterations < 1 or args.hidden < 1 or args.eval_every < 1 or args.snapshot_every < 1:
        parser.error("--iterations, --hidden, --eval-every and --snapshot-every must be positive")
    if not 0.0 <= args.league <= 1.0:
        parser.error("--league is a share between 0 and 1")
    return args


def _save_atomically(path: Path, arrays: dict[str, np.ndarray]) -> None:
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as handle:
        np.savez(handle, **arrays)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)


class Trainer:
    """One version's deck network, its optimiser, snapshots and curve."""

    def __init__(self, version: str, args: argparse.Namespace, folder: Path) -> None:
        from cardarena.locm.agents import learned_v2, learned_v3
        from cardarena.locm.encoding.encoder import action_layout
        from cardarena.locm.fast import playouts, selfplay

        self.version = version
        self.args = args
        self.L = learned_v3
        self.S = selfplay
        self.layout = action_layout(version)
        self.w = playouts.GREEDY_WEIGHTS.copy()
        battle = learned_v2.load_weights().networks[version]
        self.battle_net, self.battle_hidden = battle.flat[None, :].copy(), battle.hidden
        self.folder = folder
        self.checkpoint = folder / "checkpoint.npz"
        self.rng = np.random.default_rng(args.seed + 1000 * VERSIONS.index(version))
        self.net = learned_v3.DeckNetwork.initial(args.hidden, self.rng, 0.0)
        self.adam_m = {k: np.zeros_like(v) for k, v in self.net.params.items()}
        self.adam_v = {k: np.zeros_like(v) for k, v in self.net.params.items()}
        self.adam_t = 0
        self.snapshots: list[dict[str, np.ndarray]] = []
        self.iteration = 0
        self.games = 0
        self.cpu = 0.0
        self.curve: list[list[float]] = []
        self.last_train = (math.nan, math.nan)
        self.best: tuple[float, int, dict[str, np.ndarray]] | None = None
        """(evaluation win rate, iteration, parameters) of the best evaluation so far."""

    # --- checkpoints -------------------------------------------------------------------

    def save(self) -> None:
        arrays: dict[str, np.ndarray] = {
            "meta": np.array(
                json.dumps(
                    {
                        "iteration": self.iteration,
                        "games": self.games,
                        "cpu": self.cpu,
                        "adam_t": self.adam_t,
                        "snapshots": len(self.snapshots),
                        "rng": self.rng.bit_generator.state,
                        "best": None if self.best is None else list(self.best[:2]),
                    }
                )
            ),
            "curve": np.array(self.curve, np.float64).reshape(-1, len(CURVE_COLUMNS) - 1),
        }
        for name, value in self.net.params.items():
            arrays[f"net/{name}"] = value
            arrays[f"m/{name}"] = self.adam_m[name]
            arrays[f"v/{name}"] = self.adam_v[name]
        if self.best is not None:
            for name, value in self.best[2].items():
                arrays[f"best/{name}"] = value
        for k, snapshot in enumerate(self.snapshots):
            for name, value in snapshot.items():
                arrays[f"snapshot{k}/{name}"] = value
        _save_atomically(self.checkpoint, arrays)

    def load(self) -> bool:
        if not self.checkpoint.exists():
            return False
        with np.load(self.checkpoint, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            for name in self.net.params:
                self.net.params[name] = data[f"net/{name}"].copy()
                self.adam_m[name] = data[f"m/{name}"].copy()
                self.adam_v[name] = data[f"v/{name}"].copy()
            self.snapshots = [
                {name: data[f"snapshot{k}/{name}"].copy() for name in self.net.params}
                for k in range(meta["snapshots"])
            ]
            self.curve = [list(row) for row in data["curve"]]
            if meta.get("best"):
                rate, iteration = meta["best"]
                params = {name: data[f"best/{name}"].copy() for name in self.net.params}
                self.best = (rate, iteration, params)
        self.iteration, self.games, self.cpu = meta["iteration"], meta["games"], meta["cpu"]
        self.adam_t = meta["adam_t"]
        self.rng.bit_generator.state = meta["rng"]
        return True

    # --- games -------------------------------------------------------------------------

    def _new_batch(self, n: int, seeds: np.ndarray | None = None):  # type: ignore[no-untyped-def]
        from cardarena.locm.fast.batch import Batch

        if seeds is not None:
            return Batch.new(self.version, seeds=seeds)
        return Batch.new(self.version, n, seed=int(self.rng.integers(1 << 62)))

    def build_decks(self, batch, learner: np.ndarray, opponent: list, sample: bool):  # type: ignore[no-untyped-def]
        """Deck building of every game: seat ``learner[g]`` by the network (sampled or
        its most likely pick), the other by ``opponent[g]`` (None: the fitted deck, or
        a network's parameters: its most likely pick). Returns the learner's steps:
        (game, cards, context, legal, chosen) arrays."""
        L = self.L
        n = len(batch)
        deck, size = self.layout.deck, self.layout.deck_actions
        steps: list[tuple[np.ndarray, ...]] = []
        nets: dict[int, tuple[object, np.ndarray]] = {}
        for g, params in enumerate(opponent):
            if params is not None:
                key = id(params)
                if key not in nets:
                    nets[key] = (L.DeckNetwork(params), [])
                nets[key][1].append(g)
        net_games = [(net, np.array(games)) for net, games in nets.values()]
        actions = np.zeros(n, np.int64)
        while True:
            observations = batch.observe()
            building = observations[:, 0] > 0.5
            if not building.any():
                break
            masks = batch.masks()[:, deck : deck + size]
            cards, context = L.deck_inputs(observations, self.version)
            player = batch.current_player
            actions[:] = 0
            mine = building & (player == learner)
            theirs = building & ~mine
            idx = np.flatnonzero(mine)
            if idx.size:
                scores, _ = self.net.forward(cards[idx], context[idx])
                if sample:
                    probs = L.masked_softmax(scores, masks[idx])
                    u = self.rng.random((len(idx), 1))
                    chosen = np.minimum((probs.cumsum(axis=1) < u).sum(axis=1), size - 1)
                    chosen = np.where(masks[idx, chosen], chosen, np.argmax(probs, axis=1))
                else:
                    chosen = np.argmax(np.where(masks[idx], scores, -np.inf), axis=1)
                actions[idx] = deck + chosen
                steps.append((idx, cards[idx].astype(np.float32), context[idx], masks[idx], chosen))
            best = np.argmax(np.where(masks, cards[..., -1], -np.inf), axis=1)  # fitted
            actions[theirs] = deck + best[theirs]
            for net, games in net_games:
                sel = games[theirs[games]]
                if sel.size:
                    scores, _ = net.forward(cards[sel], context[sel])
                    actions[sel] = deck + np.argmax(np.where(masks[sel], scores, -np.inf), axis=1)
            batch.step(actions)
        return steps

    def battle(self, batch, greedy: bool = False) -> np.ndarray:  # type: ignore[no-untyped-def]
        """Play every game's battle (learned-v2's network on both sides, or greedy's);
        the winners."""
        n = len(batch)
        seats = np.full((n, 2), self.S.GREEDY if greedy else 0, np.int64)
        values = np.full((n, 2, batch.cards.shape[1]), np.nan)
        rng = self.rng.integers(0, 1 << 63, n, dtype=np.int64).view(np.uint64)
        record = np.zeros((n, 2), np.bool_)
        out_x = np.empty((1, self.S.FEATURES))
        self.S.play_league(
            batch.state,
            batch.cards,
            seats,
            self.battle_net,
            self.battle_hidden,
            self.w,
            values,
            rng,
            0.0,
            record,
            out_x,
            np.empty(1, np.int32),
            np.empty(1, np.int8),
        )
        return batch.winners.copy()

    # --- learning ----------------------------------------------------------------------

    def step(self) -> None:
        """One iteration: games with sampled decks, then one policy-gradient step."""
        args = self.args
        n = args.games
        batch = self._new_batch(n)
        learner = self.rng.integers(0, 2, n)
        kinds = np.where(self.rng.random(n) < args.league, SNAPSHOT, FITTED)
        if not self.snapshots:
            kinds[:] = FITTED
        opponent: list = [None] * n
        for g in np.flatnonzero(kinds == SNAPSHOT):
            opponent[g] = self.snapshots[int(self.rng.integers(len(self.snapshots)))]
        steps = self.build_decks(batch, learner, opponent, sample=True)
        winners = self.battle(batch)
        reward = np.where(winners == learner, 1.0, np.where(winners < 0, 0.5, 0.0))
        advantage = np.zeros(n)
        for kind in (FITTED, SNAPSHOT):
            sel = kinds == kind
            if sel.any():
                advantage[sel] = reward[sel] - reward[sel].mean()
        grads = {k: np.zeros_like(v) for k, v in self.net.params.items()}
        entropy_sum = 0.0
        count = 0
        for games, cards, context, legal, chosen in steps:
            for a in range(0, len(games), 256):
                sl = slice(a, a + 256)
                scores, cache = self.net.forward(cards[sl].astype(np.float64), context[sl])
                probs = self.L.masked_softmax(scores, legal[sl])
                logp = np.log(np.where(legal[sl], probs, 1.0))
                entropy = -(probs * logp).sum(axis=1)
                onehot = np.zeros_like(probs)
                onehot[np.arange(len(probs)), chosen[sl]] = 1.0
                adv = advantage[games[sl]][:, None]
                # d(loss)/d(scores): -A (onehot - p) / n for the policy, and the entropy
                # bonus's gradient beta * p (log p + H) per step.
                grad = -adv * (onehot - probs) / n
                grad += args.entropy * probs * (logp + entropy[:, None]) / (n * 30)
                for k, value in self.net.backward(cache, grad).items():
                    grads[k] += value
                entropy_sum += float(entropy.sum())
                count += len(probs)
        self._adam(grads)
        self.games += n
        self.iteration += 1
        self.last_train = (float(reward[kinds == FITTED].mean()), entropy_sum / max(count, 1))
        if self.iteration % args.snapshot_every == 0:
            self.snapshots.append({k: v.copy() for k, v in self.net.params.items()})
            del self.snapshots[:-10]

    def _adam(self, grads: dict[str, np.ndarray]) -> None:
        self.adam_t += 1
        b1, b2, lr = 0.9, 0.999, self.args.learning_rate
        for k, g in grads.items():
            self.adam_m[k] = b1 * self.adam_m[k] + (1 - b1) * g
            self.adam_v[k] = b2 * self.adam_v[k] + (1 - b2) * g * g
            m_hat = self.adam_m[k] / (1 - b1**self.adam_t)
            v_hat = self.adam_v[k] / (1 - b2**self.adam_t)
            self.net.params[k] -= lr * m_hat / (np.sqrt(v_hat) + 1e-8)

    def evaluate(self, first_seed: int = EVAL_SEED) -> list[float]:
        """The network's most likely deck against the fitted deck, paired seeds from
        ``first_seed``, with learned-v2's battles and with greedy's: (rate, low, high) each."""
        from cardarena.tournaments.report.model import wilson_interval

        out: list[float] = []
        half = self.args.eval_games // 2
        seeds = np.repeat(first_seed + np.arange(half, dtype=np.int64), 2)
        learner = np.tile([0, 1], half)
        for greedy in (False, True):
            batch = self._new_batch(len(seeds), seeds)
            self.build_decks(batch, learner, [None] * len(seeds), sample=False)
            winners = self.battle(batch, greedy=greedy)
            wins = float(np.sum(winners == learner) + 0.5 * np.sum(winners < 0))
            out += [wins / len(seeds), *wilson_interval(wins, len(seeds))]
        return out

    def curve_row(self) -> list[float]:
        """Evaluate; keep the parameters if they won more than any earlier evaluation."""
        evaluation = self.evaluate()
        if self.best is None or evaluation[0] > self.best[0]:
            params = {k: v.copy() for k, v in self.net.params.items()}
            self.best = (evaluation[0], self.iteration, params)
        return [
            float(self.iteration),
            float(self.games),
            self.cpu,
            *self.last_train,
            *evaluation,
        ]


def _initial_fitted_weight(trainer: Trainer) -> float:
    """The weight of the fitted value that makes the first policy's scores spread by
    about 2 (a softmax close to, not equal to, the fitted deck's choices)."""
    batch = trainer._new_batch(50)
    cards, _ = trainer.L.deck_inputs(batch.observe(), trainer.version)
    spread = float(np.std(cards[..., -1]))
    return 2.0 / max(spread, 1e-6)


def _write_weights(folder: Path, argv: list[str]) -> Path:
    """DIR/learned_v3.npz: each trained version's kept network, from its checkpoint."""
    from cardarena.locm.agents.learned_v3 import DeckNetwork, save_weights

    networks: dict[str, DeckNetwork] = {}
    meta: dict[str, object] = {"command": "python scripts/train_learned_v3.py " + shlex.join(argv)}
    for version in VERSIONS:
        checkpoint = folder / version / "checkpoint.npz"
        if not checkpoint.exists():
            continue
        with np.load(checkpoint, allow_pickle=False) as data:
            info = json.loads(str(data["meta"]))
            kept = "best/" if info.get("best") else "net/"
            params = {
                k[5:] if kept == "best/" else k[4:]: data[k].copy()
                for k in data.files
                if k.startswith(kept)
            }
        rate, iteration = info.get("best") or (None, info["iteration"])
        networks[version] = DeckNetwork(params)
        meta[version] = {
            "iterations": info["iteration"],
            "games": info["games"],
            "cpu_seconds": round(info["cpu"], 1),
            "kept_iteration": iteration,
            "kept_win_rate_vs_fitted": rate,
        }
    path = folder / "learned_v3.npz"
    partial = folder / f"learned_v3.npz.{os.getpid()}.partial"  # versions may train at once
    save_weights(partial, networks, meta)
    os.replace(partial, path)
    return path


def _write_curves(folder: Path) -> None:
    """curve.csv (every version's rows) and curve.png."""
    rows: list[list[object]] = []
    for version in VERSIONS:
        checkpoint = folder / version / "checkpoint.npz"
        if checkpoint.exists():
            with np.load(checkpoint, allow_pickle=False) as data:
                rows += [[version, *row] for row in data["curve"].tolist()]
    lines = [",".join(CURVE_COLUMNS)]
    for row in rows:
        lines.append(
            ",".join(
                [str(row[0]), str(int(row[1])), str(int(row[2])), *(f"{x:.4f}" for x in row[3:])]
            )
        )
    partial = folder / f"curve.csv.{os.getpid()}.partial"
    partial.write_text("\n".join(lines) + "\n")
    os.replace(partial, folder / "curve.csv")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for axis, column, title in ((axes[0], 6, "learned-v2 battles"), (axes[1], 9, "greedy battles")):
        for version in VERSIONS:
            mine = [r for r in rows if r[0] == version]
            if not mine:
                continue
            hours = np.array([r[3] for r in mine]) / 3600
            rate = np.array([r[column] for r in mine])
            low = np.array([r[column + 1] for r in mine])
            high = np.array([r[column + 2] for r in mine])
            axis.plot(hours, rate, label=f"LOCM {version}")
            axis.fill_between(hours, low, high, alpha=0.2)
        axis.axhline(0.5, color="grey", linewidth=0.8)
        axis.set_title(f"learned-v3's deck vs the fitted deck, {title}")
        axis.set_xlabel("CPU hours")
    axes[0].set_ylabel("win rate (95% interval)")
    axes[0].legend()
    figure.tight_layout()
    picture = folder / f"curve.{os.getpid()}.partial.png"
    figure.savefig(picture, dpi=100)
    os.replace(picture, folder / "curve.png")
    plt.close(figure)


class Stop(Exception):
    """SIGTERM: stop as after Ctrl-C."""


def _on_term(signum: int, frame: object) -> None:
    raise Stop


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _arguments(argv)
    from tqdm import tqdm

    from cardarena.locm.fast import FastEngineUnavailable, require_numba

    try:
        require_numba()
    except FastEngineUnavailable as error:
        print(f"train_learned_v3: {error}", file=sys.stderr)
        return 2
    folder = Path(args.dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        print(f"train_learned_v3: cannot use --dir {folder}: {error.strerror}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _on_term)
    versions = args.version or list(VERSIONS)
    trainers: dict[str, Trainer] = {}
    try:
        for version in versions:
            sub = folder / version
            sub.mkdir(exist_ok=True)
            trainer = Trainer(version, args, sub)
            trainers[version] = trainer
            if args.fresh or not trainer.load():
                trainer.net.params["a"][0] = _initial_fitted_weight(trainer)
                trainer.curve.append(trainer.curve_row())
                trainer.save()
            else:
                print(
                    f"LOCM {version}: resuming after iteration {trainer.iteration}", file=sys.stderr
                )
            budget = math.inf if args.minutes is None else 60.0 * args.minutes
            with tqdm(
                total=args.iterations,
                initial=trainer.iteration,
                unit="it",
                desc=f"LOCM {version}",
                dynamic_ncols=True,
            ) as bar:
                while trainer.iteration < args.iterations and trainer.cpu < budget:
                    started = time.process_time()
                    trainer.step()
                    trainer.cpu += time.process_time() - started
                    if trainer.iteration % args.eval_every == 0:
                        started = time.process_time()
                        trainer.curve.append(trainer.curve_row())
                        trainer.cpu += time.process_time() - started
                        last = trainer.curve[-1]
                        bar.set_postfix_str(f"vs fitted {last[5]:.1%} (greedy {last[8]:.1%})")
                    trainer.save()
                    bar.update(1)
            _write_weights(folder, argv)
            _write_curves(folder)
    except (KeyboardInterrupt, Stop):
        done = ", ".join(f"{v} after iteration {t.iteration}" for v, t in trainers.items())
        print(f"\nstopped ({done}); run the same command to resume", file=sys.stderr)
        return 130
    path = _write_weights(folder, argv)
    _write_curves(folder)
    print(f"weights: {path}; curves: {folder / 'curve.csv'}, {folder / 'curve.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
