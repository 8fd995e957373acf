"""Fit the card-value model of the built-in deck building to self-play results.

    python scripts/fit_card_values.py games --version 1.2 --games 50000 --out /tmp/decks-1.2.npz
    python scripts/fit_card_values.py fit /tmp/decks-1.0.npz /tmp/decks-1.2.npz /tmp/decks-1.5.npz

``games`` plays games whose decks are built at random (uniform draft picks in
1.0/1.2, uniform constructed choices in 1.5) and whose battles ``builtin:greedy``
plays for both sides, and stores each player's 30 cards and the winner. ``fit``
fits a logistic regression of the winner on the difference of the two decks'
summed card features (:func:`cardarena.locm.agents.cardvalues.card_features`) and
prints the weights as the Python tuple that ``cardvalues.FITTED_WEIGHTS`` holds.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from cardarena.locm.agents import GreedyAgent
from cardarena.locm.agents.cardscore import DECK_POLICIES, deck_building_action
from cardarena.locm.agents.cardvalues import FEATURE_NAMES, card_features
from cardarena.locm.engine.cards import CARD_LIST, Card
from cardarena.locm.engine.rules import ruleset
from cardarena.locm.engine.state import Phase, State

CARD_COLUMNS = 10
"""A stored card: base_id, type, cost, attack, defense, keywords, my/opp health, draw, area."""


def _play_chunk(task: tuple[str, int, int, str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Games ``first .. first + count - 1``: (decks[count, 2, 30, 10], winners[count])."""
    version, first, count, policy_name, epsilon = task
    policy = DECK_POLICIES.get(policy_name)
    decks = np.zeros((count, 2, 30, CARD_COLUMNS), np.int16)
    winners = np.full(count, -1, np.int8)
    for k in range(count):
        seed = first + k
        state = State.new(version, {"seed": seed})
        rng = random.Random(seed)
        while state.phase == Phase.DECK_BUILDING:
            if policy is None or rng.random() < epsilon:
                state.apply(state.random_action(rng.random))
            else:
                state.apply(deck_building_action(state, policy))
        for player in (0, 1):
            for i, card in enumerate(state.players[player].chosen):
                decks[k, player, i] = tuple(card)
        agents = (GreedyAgent(2 * seed + 1), GreedyAgent(2 * seed + 2))
        while not state.is_terminal:
            state.apply(agents[state.current_player].act(state))
        winners[k] = -1 if state.winner is None else state.winner
    return decks, winners


def play_games(
    version: str, games: int, seed: int, workers: int, out: str, policy: str, epsilon: float
) -> None:
    chunk = 250
    tasks = [
        (version, seed + i, min(chunk, games - i), policy, epsilon) for i in range(0, games, chunk)
    ]
    started = time.perf_counter()
    decks, winners = [], []
    with ProcessPoolExecutor(workers) as pool:
        for done, (d, w) in enumerate(pool.map(_play_chunk, tasks), 1):
            decks.append(d)
            winners.append(w)
            print(
                f"\r{done * chunk:>8} / {games} games, {time.perf_counter() - started:.0f} s",
                end="",
                file=sys.stderr,
                flush=True,
            )
    print(file=sys.stderr)
    np.savez_compressed(
        out, version=version, decks=np.concatenate(decks), winners=np.concatenate(winners)
    )
    print(
        f"{games} games of LOCM {version} in {time.perf_counter() - started:.0f} s "
        f"(load {os.getloadavg()[0]:.2f}) -> {out}"
    )


def deck_features(decks: np.ndarray, version: str) -> np.ndarray:
    """Summed card features of each stored deck: [games, 2, features]."""
    rules = ruleset(version)
    cache: dict[tuple[int, ...], tuple[float, ...]] = {}
    out = np.zeros((*decks.shape[:2], len(FEATURE_NAMES)))
    for g in range(decks.shape[0]):
        for p in (0, 1):
            total = np.zeros(len(FEATURE_NAMES))
            for row in decks[g, p]:
                key = tuple(int(x) for x in row)
                features = cache.get(key)
                if features is None:
                    features = cache[key] = card_features(Card(*key), rules)
                total += features
            out[g, p] = total
    return out


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """Newton's method on the L2-penalised log-likelihood (the intercept unpenalised)."""
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x @ w)))
        gradient = x.T @ (y - p) - penalty * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        w += step
        if np.abs(step).max() < 1e-8:
            break
    return w


def _held_out(x: np.ndarray, y: np.ndarray, l2: float, holdout: float) -> str:
    split = int(len(y) * (1 - holdout))
    w = fit_logistic(x[:split], y[:split], l2)
    p = 1 / (1 + np.exp(-(x[split:] @ w)))
    accuracy = float(((p > 0.5) == (y[split:] > 0.5)).mean())
    loss = float(-np.mean(y[split:] * np.log(p) + (1 - y[split:]) * np.log(1 - p)))
    return f"held-out accuracy {accuracy:.3f}, log loss {loss:.4f}"


def fit_version(
    paths: list[str], l2: float, holdout: float
) -> tuple[str, list[float], list[float]]:
    """(version, feature weights, per-card values or []) fitted to the games of one version."""
    files = [np.load(path) for path in paths]
    versions = {str(data["version"]) for data in files}
    if len(versions) != 1:
        raise SystemExit(f"fit_card_values: files of several versions together: {versions}")
    version = versions.pop()
    winners = np.concatenate([data["winners"] for data in files])
    decided = winners >= 0
    decks = np.concatenate([data["decks"] for data in files])[decided]
    # Shuffle (with a fixed seed) so that the held-out games come from every file.
    order = np.random.default_rng(0).permutation(len(decks))
    decks = decks[order]
    y = (winners[decided][order] == 0).astype(float)
    ones = np.ones((len(y), 1))
    features = deck_features(decks, version)
    x = np.concatenate([ones, features[:, 0] - features[:, 1]], axis=1)
    print(
        f"LOCM {version}, {len(y)} games with a winner: card features: "
        f"{_held_out(x, y, l2, holdout)}"
    )
    weights = fit_logistic(x, y, l2)[1:].tolist()
    values: list[float] = []
    if ruleset(version).draft:  # a fixed card list: one value per card
        counts = np.zeros((len(y), 2, len(CARD_LIST) + 1))
        games = np.arange(len(y))
        for player in (0, 1):
            for i in range(decks.shape[2]):
                np.add.at(counts[:, player], (games, decks[:, player, i, 0]), 1)
        x = np.concatenate([ones, counts[:, 0, 1:] - counts[:, 1, 1:]], axis=1)
        print(f"LOCM {version}: one value per card: {_held_out(x, y, l2, holdout)}")
        values = fit_logistic(x, y, l2)[1:].tolist()
    return version, weights, values


def fit(paths: list[str], l2: float, holdout: float, out: str) -> None:
    weights: dict[str, list[float]] = {}
    values: dict[str, list[float]] = {}
    by_version: dict[str, list[str]] = {}
    for path in paths:
        by_version.setdefault(str(np.load(path)["version"]), []).append(path)
    for version_paths in by_version.values():
        version, weights[version], card_values = fit_version(version_paths, l2, holdout)
        if card_values:
            values[version] = card_values
    lines = [
        '"""Card values fitted by scripts/fit_card_values.py (generated: do not edit by hand).',
        "",
        "Log-odds of winning per card in a deck; see cardvalues.py.",
        '"""',
        "",
    ]
    for name, table in (("FEATURE_WEIGHTS", weights), ("CARD_VALUES", values)):
        lines.append(f"{name}: dict[str, tuple[float, ...]] = {{")
        for version, numbers in sorted(table.items()):
            lines.append(f'    "{version}": (')
            for i in range(0, len(numbers), 8):
                lines.append("        " + " ".join(f"{x:.5f}," for x in numbers[i : i + 8]))
            lines.append("    ),")
        lines.append("}")
    lines.append("")
    with open(out, "w", encoding="utf-8") as file:
        file.write("\n".join(lines))
    print(f"written: {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    games = commands.add_parser("games", help="play random-deck greedy games and store them")
    games.add_argument("--version", choices=("1.0", "1.2", "1.5"), required=True)
    games.add_argument("--games", type=int, default=50_000)
    games.add_argument("--seed", type=int, default=1, help="seed of the first game")
    games.add_argument("--workers", type=int, default=1)
    games.add_argument("--out", required=True, help="the .npz file to write")
    games.add_argument(
        "--decks",
        default="random",
        choices=("random", *DECK_POLICIES),
        help="how decks are built: at random, or by a named deck policy whose "
        "every choice is random with probability --epsilon (default random)",
    )
    games.add_argument(
        "--epsilon",
        type=float,
        default=0.3,
        help="share of random choices with --decks POLICY (default 0.3)",
    )
    fitting = commands.add_parser("fit", help="fit the card values to stored games")
    fitting.add_argument(
        "paths",
        nargs="+",
        help=".npz files written by the games command (the files of "
        "one version are fitted together)",
    )
    fitting.add_argument(
        "--out",
        default="cardarena/locm/agents/cardvalues_data.py",
        help="the data module to write (default: the package's)",
    )
    fitting.add_argument("--l2", type=float, default=30.0, help="L2 penalty (default 30)")
    fitting.add_argument(
        "--holdout",
        type=float,
        default=0.2,
        help="share of games held out to report accuracy (default 0.2)",
    )
    args = parser.parse_args()
    if args.command == "games":
        play_games(
            args.version, args.games, args.seed, args.workers, args.out, args.decks, args.epsilon
        )
    else:
        fit(args.paths, args.l2, args.holdout, args.out)


if __name__ == "__main__":
    main()
