"""Which games a tournament plays, and the seed of each.

Every ordered pair of distinct bots plays ``games_per_pair`` games, so every
pairing plays both seats. Game ``r`` of (A, B) and game ``r`` of (B, A) share
one seed: the same cards with the seats swapped, which halves the luck in a
head-to-head comparison. Seeds come from a hash of the tournament seed and the
two names, so adding a bot to a tournament changes no existing game.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

JAVA_LONG_BITS = 64


@dataclass(frozen=True, order=True)
class GameSpec:
    """One scheduled game: who sits where, which round, which seed."""

    first: str
    second: str
    round: int
    seed: int

    @property
    def key(self) -> str:
        """The game's identity in the results store (unique per tournament)."""
        return f"{self.first}\t{self.second}\t{self.round}"


def game_seed(tournament_seed: int, a: str, b: str, round_index: int) -> int:
    """A signed 64-bit game seed (a Java long), the same for both seat orders."""
    low, high = sorted((a, b))
    text = f"{tournament_seed}\n{low}\n{high}\n{round_index}".encode()
    digest = hashlib.blake2b(text, digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    return value - (1 << JAVA_LONG_BITS) if value >= 1 << (JAVA_LONG_BITS - 1) else value


def schedule(bots: Sequence[str], games_per_pair: int, tournament_seed: int) -> list[GameSpec]:
    """Every game of the tournament, in a fixed order (round-major, so that a
    partial tournament is spread evenly over the pairings)."""
    if len(set(bots)) != len(bots):
        raise ValueError("bot names must be unique")
    if len(bots) < 2:
        raise ValueError("a tournament needs at least two bots")
    if games_per_pair < 1:
        raise ValueError("games per pair must be at least 1")
    return [
        GameSpec(a, b, r, game_seed(tournament_seed, a, b, r))
        for r in range(games_per_pair)
        for a in bots
        for b in bots
        if a != b
    ]
