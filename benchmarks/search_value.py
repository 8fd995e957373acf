"""search-v3's 1.5 network fine-tuned on the positions search-v3 itself scores.

    python benchmarks/search_value.py generate --games 2000 --workers 2 --out search-positions.npz
    python benchmarks/search_value.py fit search-positions.npz --out search-value.npy
    CARDARENA_SEARCH_VALUE=search-value.npy python benchmarks/agents.py \\
        --pair python:search_value:fine_tuned,search-v1 --deck fitted --version 1.5 --workers 1

Why: search-v3 scores a position after the opponent's reply, where the opponent's turn
is still open (its creatures have attacked, its mana is spent), with learned-v2's
network. That network learned from afterstates of its own one-action play, in which the
opponent to act always starts its turn: the positions search-v3 asks about are outside
what it saw. This benchmark measures what fitting the network to them is worth:

* ``generate``: search-v3 plays LOCM 1.5 games (70% against itself, 30% against
  search-v1; both on the fitted deck; ``--time-scale`` of the official limits). Just
  before every PASS the waiting player's features are recorded, as search-v3's score
  reads them (the player's view alone), labelled 1 if that player won the game. The file
  is rewritten every 25 games, so a stopped run keeps what it played.
* ``fit``: learned-v2's 1.5 network, fine-tuned on those positions (Adam, cross-entropy
  on who won); a sixth of the games is held out, and the held-out log-loss before and
  after is printed. The weights are written as one flat float64 vector (``.npy``).
* ``python:search_value:fine_tuned``: search-v3 with that network in 1.5, read from the
  file named by ``CARDARENA_SEARCH_VALUE``, for ``benchmarks/agents.py``.
"""

from __future__ import annotations

import argparse
import os
import random
from pathlib import Path
from typing import Any

import numpy as np

from cardarena.locm.agents.cardscore import FITTED_DECK
from cardarena.locm.agents.learned_v2 import (
    FEATURES,
    ValueNetwork,
    fit_network,
    load_weights,
    position_features,
)
from cardarena.locm.agents.search import SearchAgent
from cardarena.locm.agents.search_v3 import SearchAgentV3
from cardarena.locm.engine.state import ActionType, Phase, State
from cardarena.machine import run_script, worker_pool

SELF_PLAY_SHARE = 0.7
"""Share of generated games that search-v3 plays against itself (the rest: search-v1)."""
SAVE_EVERY = 25
HELD_OUT = 6
"""One game in this many (chosen at random, seeded) is held out of the fit."""
ENV_VAR = "CARDARENA_SEARCH_VALUE"


def play_game(task: tuple[int, float]) -> dict[str, np.ndarray]:
    """One generated game (seed, time scale): the waiting player's features before each
    PASS, that player, and whether it won."""
    seed, time_scale = task
    rng = random.Random(seed)
    state = State.new("1.5", {"seed": seed})
    searcher = SearchAgentV3(rng.getrandbits(32), time_scale=time_scale)
    other: SearchAgentV3 | SearchAgent
    if rng.random() < SELF_PLAY_SHARE:
        other = SearchAgentV3(rng.getrandbits(32), time_scale=time_scale)
    else:
        other = SearchAgent(rng.getrandbits(32), time_scale=time_scale, deck_policy=FITTED_DECK)
    agents = [searcher, other] if seed % 2 == 0 else [other, searcher]
    rows: list[np.ndarray] = []
    waiting: list[int] = []
    while not state.is_terminal:
        action = agents[state.current_player].act(state)
        if action.type == ActionType.PASS and state.phase != Phase.DECK_BUILDING:
            rows.append(position_features(state, 1 - state.active))
            waiting.append(1 - state.active)
        state.apply(action)
    seats = np.array(waiting, np.int64)
    return {
        "x": np.array(rows, np.float64).reshape(-1, FEATURES),
        "seat": seats,
        "y": (seats == state.winner).astype(np.float64),
        "game": np.full(len(seats), seed, np.int64),
    }


def _save(path: Path, parts: list[dict[str, np.ndarray]]) -> None:
    keys = ("x", "seat", "y", "game")
    arrays = {key: np.concatenate([part[key] for part in parts]) for key in keys}
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as handle:
        np.savez(handle, **arrays)
    partial.replace(path)


def generate(games: int, seed: int, workers: int, time_scale: float, out: Path) -> None:
    from tqdm import tqdm

    parts: list[dict[str, np.ndarray]] = []
    tasks = [(seed + i, time_scale) for i in range(games)]
    with worker_pool(workers) as pool, tqdm(total=games, unit="game") as bar:
        for done, part in enumerate(pool.map(play_game, tasks, chunksize=1), 1):
            parts.append(part)
            bar.update()
            if done % SAVE_EVERY == 0 or done == games:
                _save(out, parts)
    positions = sum(len(part["y"]) for part in parts)
    print(f"{games} games, {positions} positions -> {out}")


def log_loss(network: ValueNetwork, x: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(network.values(x), 1e-7, 1 - 1e-7)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def calibration(network: ValueNetwork, x: np.ndarray, y: np.ndarray) -> list[tuple[int, float]]:
    """Per tenth of the network's win chance (0-10%, ..., 90-100%): the positions in it
    and the share of them won (NaN if none)."""
    tenth = np.minimum((network.values(x) * 10).astype(int), 9)
    return [(int((tenth == k).sum()), float(y[tenth == k].mean()) if (tenth == k).any()
             else float("nan")) for k in range(10)]  # fmt: skip


def fine_tune(x: np.ndarray, y: np.ndarray, start: ValueNetwork, epochs: int,
              learning_rate: float, seed: int = 0) -> ValueNetwork:  # fmt: skip
    """A copy of ``start`` fitted to (x, y) by learned-v2's training step
    (:func:`~cardarena.locm.agents.learned_v2.fit_network`), a fresh Adam state."""
    flat = start.flat.copy()
    adam: list[Any] = [np.zeros_like(flat), np.zeros_like(flat), 0]
    fit_network(flat, start.hidden, x, y, adam, learning_rate, epochs, np.random.default_rng(seed))
    return ValueNetwork(flat, start.hidden)


def load_positions(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The features, labels and games of a file ``generate`` wrote; ValueError if it is
    not one."""
    refusal = f"{path}: not a positions file written by 'search_value.py generate'"
    try:
        with np.load(path) as data:
            x, y, game = data["x"], data["y"], data["game"]
    except Exception as error:  # not a file, not an .npz, or not ours
        raise ValueError(refusal) from error
    if x.ndim != 2 or x.shape[1:] != (FEATURES,) or not len(x) == len(y) == len(game):
        raise ValueError(refusal)
    return x, y, game


def fit(data: list[tuple[np.ndarray, np.ndarray, np.ndarray]], out: Path, epochs: int,
        learning_rate: float) -> None:  # fmt: skip
    """Fine-tune on the positions of ``data`` (as :func:`load_positions` reads them), print
    the held-out log-loss and calibration, and write the weights to ``out``."""
    x, y, game = (np.concatenate(column) for column in zip(*data, strict=True))
    games = np.unique(game)
    rng = np.random.default_rng(0)
    held = np.isin(game, rng.choice(games, size=max(1, len(games) // HELD_OUT), replace=False))
    start = load_weights().networks["1.5"]
    tuned = fine_tune(x[~held], y[~held], start, epochs, learning_rate)
    print(f"{len(games)} games, {len(x)} positions ({held.sum()} held out)")
    print(f"held-out log-loss: learned-v2 {log_loss(start, x[held], y[held]):.4f}, "
          f"fine-tuned {log_loss(tuned, x[held], y[held]):.4f}")  # fmt: skip
    print("held-out positions by the win chance rated, and the share won:")
    for name, network in (("learned-v2", start), ("fine-tuned", tuned)):
        cells = [f"{count} {won:.0%}" if count else "0"
                 for count, won in calibration(network, x[held], y[held])]  # fmt: skip
        print(f"  {name:>10}: " + " | ".join(cells))
    np.save(out, tuned.flat)
    print(f"weights -> {out}")


class FineTunedSearch(SearchAgentV3):
    """search-v3 whose 1.5 positions are scored by a fine-tuned network."""

    def __init__(self, seed: int | None = None, weights: str | Path | None = None,
                 **options: object) -> None:  # fmt: skip
        super().__init__(seed, **options)  # type: ignore[arg-type]
        flat = np.load(weights or os.environ[ENV_VAR])
        start = self._networks["1.5"]
        self._networks = {**self._networks, "1.5": ValueNetwork(flat, start.hidden)}


def fine_tuned(seed: int | None = None) -> FineTunedSearch:
    """The ``python:search_value:fine_tuned`` agent (weights: ``$CARDARENA_SEARCH_VALUE``)."""
    if not os.environ.get(ENV_VAR):
        raise ValueError(f"set {ENV_VAR} to the weights written by 'search_value.py fit'")
    return FineTunedSearch(seed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="record search-v3's positions of 1.5 games")
    gen.add_argument("--games", type=int, default=2000)
    gen.add_argument("--seed", type=int, default=700001, help="seed of the first game")
    gen.add_argument("--workers", type=int, default=1)
    gen.add_argument("--time-scale", type=float, default=0.5,
                     help="the searches' share of the official limits (default 0.5)")  # fmt: skip
    gen.add_argument("--out", type=Path, required=True)
    fitting = commands.add_parser("fit", help="fine-tune learned-v2's 1.5 network on them")
    fitting.add_argument("files", type=Path, nargs="+")
    fitting.add_argument("--out", type=Path, required=True)
    fitting.add_argument("--epochs", type=int, default=1)
    fitting.add_argument("--learning-rate", type=float, default=5e-4)
    args = parser.parse_args(argv)
    if args.command == "generate":
        if args.games < 1 or args.workers < 1 or not args.time_scale > 0:
            parser.error("--games and --workers must be at least 1, --time-scale above 0")
        generate(args.games, args.seed, args.workers, args.time_scale, args.out)
        return 0
    if args.epochs < 1 or not args.learning_rate > 0:
        parser.error("--epochs must be at least 1, --learning-rate above 0")
    data = []
    for path in args.files:
        try:
            data.append(load_positions(path))
        except ValueError as error:  # one line, not a traceback
            parser.error(str(error))
    fit(data, args.out, args.epochs, args.learning_rate)
    return 0


if __name__ == "__main__":
    run_script(main, "benchmarks/search_value.py")
