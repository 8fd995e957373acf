"""PNG pictures of a report; matplotlib is imported only here, and only when asked."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

from ...terminal import shown

if TYPE_CHECKING:
    from .model import Report


def _pyplot():  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    return plt


def plot_matrix(report: Report, path: str) -> None:
    """A heatmap of the row bot's win rate against the column bot, with the intervals."""
    plt = _pyplot()
    names = [b.name for b in report.bots]
    size = len(names)
    values = [[float("nan")] * size for _ in range(size)]
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * size, 1.2 + 1.0 * size))
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            stats = report.matrix.get(a, {}).get(b)
            if a == b or stats is None or stats.rate is None:
                continue
            values[i][j] = stats.rate
            low, high = stats.interval
            ax.text(
                j, i, f"{stats.rate:.0%}\n[{low:.0%}, {high:.0%}]\nn={stats.games}",
                ha="center", va="center", fontsize=8,
            )  # fmt: skip
    image = ax.imshow(values, cmap="RdYlGn", vmin=0.0, vmax=1.0)
    labels = [shown(name) for name in names]  # a glyph matplotlib lacks: a raw warning
    ax.set_xticks(range(size), labels, rotation=30, ha="right")
    ax.set_yticks(range(size), labels)
    ax.set_xlabel("opponent")
    ax.set_ylabel("bot")
    ax.set_title(f"Win rate of the row bot ({report.games} games)")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_ratings(report: Report, path: str) -> None:
    """Each bot's rating with its 95% interval, best at the top."""
    plt = _pyplot()
    bots = [b for b in reversed(report.bots) if math.isfinite(b.rating_sigma)]
    fig, ax = plt.subplots(figsize=(6.5, 1.0 + 0.5 * len(bots)))
    ys = range(len(bots))
    mus = [b.rating for b in bots]
    errors = [[b.rating - b.rating_low for b in bots], [b.rating_high - b.rating for b in bots]]
    ax.errorbar(mus, ys, xerr=errors, fmt="o", capsize=4)
    ax.set_yticks(list(ys), [shown(b.name) for b in bots])
    ax.set_xlabel("rating, Elo points (Bradley-Terry, maximum likelihood; 95% interval)")
    ax.set_title(f"Ratings ({report.games} games)")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_pictures(report: Report, directory: str) -> list[str]:
    """matrix.png (heatmap) and ratings.png (ratings with intervals)."""
    os.makedirs(directory, exist_ok=True)
    matrix_path = os.path.join(directory, "matrix.png")
    ratings_path = os.path.join(directory, "ratings.png")
    plot_matrix(report, matrix_path)
    plot_ratings(report, ratings_path)
    return [matrix_path, ratings_path]
