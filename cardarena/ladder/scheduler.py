"""What the ladder plays next: validation games, then rated pairs, handed out under leases.

The scheduler is asked for one game whenever a worker is free (:meth:`Scheduler.next_game`),
so a new submission or a change of ratings is taken into account at the next free worker,
never behind a long precomputed queue. Order of business:

1. nothing while the organiser has paused the ladder;
2. leases that ran out are queued again (a worker that vanished without an answer);
3. every version that passed its build gets its validation games (``validation_pairs``
   pairs against a built-in, seats swapped, at the official limits);
4. a queued game (validation games first, then the second game of a pair);
5. otherwise a new rated pair from the matchmaker
   (:func:`cardarena.ladder.matchmaking.choose_pairing`: new versions first, an opponent
   near in rating, never two bots of one owner, at most ``max_in_flight`` games queued or
   playing per version, both games of the pair included), the same seed with the seats
   swapped; every other new pair may instead be a pair of a running A/B test
   (:mod:`.abtests`: unrated, within its share of the workers).

Results go back through :meth:`Scheduler.record` (the store moves the ratings in the same
transaction, counts a game once, and disables a version that keeps losing by its own errors).
:meth:`Scheduler.recover` runs once when the server starts: the games the last run had leased
were never finished (they would have been ``done``), so they are queued again.
"""

from __future__ import annotations

import random
import uuid
from typing import TYPE_CHECKING, Protocol

from ..tournaments.store import GameRecord
from .matchmaking import choose_pairing
from .store import DEFAULT_LEASE_S, LadderStore, LeasedGame

if TYPE_CHECKING:
    from .abtests import AbTests

JAVA_LONG_BITS = 64


def random_seed(rng: random.Random) -> int:
    """A signed 64-bit game seed (a Java long, as the referees take)."""
    return rng.getrandbits(JAVA_LONG_BITS) - (1 << (JAVA_LONG_BITS - 1))


class Programme(Protocol):
    """Organised play beside the rated games (the final): asked for games when nothing is
    queued, before a rated pair is chosen."""

    def queue_games(self, store: LadderStore, rng: random.Random) -> bool:
        """Queue this programme's next games; True if it queued some."""
        ...

    def holds_rated_play(self, store: LadderStore) -> bool:
        """True while no rated pair may start (a final is running)."""
        ...


class Scheduler:
    """Chooses, queues and leases the ladder's games (in the server process)."""

    def __init__(
        self,
        store: LadderStore,
        *,
        validation_opponent: str,
        validation_pairs: int = 2,
        max_in_flight: int = 2,
        min_games: int = 20,
        lease_s: float = DEFAULT_LEASE_S,
        rng: random.Random | None = None,
        ab: AbTests | None = None,
    ) -> None:
        if validation_pairs < 1:
            raise ValueError("validation needs at least one pair of games")
        if max_in_flight < 2:
            raise ValueError("a version needs room for at least one pair (2 games) in flight")
        self.store = store
        self.validation_opponent = validation_opponent
        self.validation_pairs = validation_pairs
        self.max_in_flight = max_in_flight
        self.min_games = min_games
        self.lease_s = lease_s
        self.rng = rng or random.Random()
        self.ab = ab
        """The A/B tests (:mod:`.abtests`): their pairs take turns with the rated ones."""
        self.owner = f"server-{uuid.uuid4().hex[:12]}"
        """The lease owner: this run of the server (a restart is another owner)."""
        self.programmes: list[Programme] = []
        """Organised play (:class:`Programme`: the final), asked in turn before rated pairs."""

    def _seed(self) -> int:
        return random_seed(self.rng)

    def recover(self) -> int:
        """At start-up: queue again every game a previous run leased and did not finish."""
        return self.store.expire_leases(every=True)

    def next_game(self) -> LeasedGame | None:
        """The next game to play, leased to this server; None if there is none now."""
        store = self.store
        if store.settings()["paused"]:
            return None
        store.expire_leases()
        for version in store.validation_needed():
            for _pair in range(self.validation_pairs):
                store.queue_pair(
                    "validation",
                    random_seed(self.rng),
                    version,
                    None,
                    opponent=self.validation_opponent,
                )
        game = store.lease(self.owner, self.lease_s)
        if game is not None:
            return game
        for programme in self.programmes:
            if programme.queue_games(store, self.rng):
                game = store.lease(self.owner, self.lease_s)
                if game is not None:
                    return game
        # A final holds rated games and A/B tests alike: every worker plays the final.
        if any(programme.holds_rated_play(store) for programme in self.programmes):
            return None
        if self.ab is not None and self.ab.take_turn(self._seed):
            return store.lease(self.owner, self.lease_s)
        pairing = choose_pairing(
            store.entrants(),
            self.rng,
            max_in_flight=self.max_in_flight - 1,  # room for both games of the pair
            min_games=self.min_games,
        )
        if pairing is None:
            if self.ab is not None and self.ab.take_turn(self._seed, alone=True):
                return store.lease(self.owner, self.lease_s)
            return None
        store.queue_pair("rated", random_seed(self.rng), *pairing)
        if self.ab is not None:
            self.ab.rated_turn()
        return store.lease(self.owner, self.lease_s)

    def record(self, game: int, result: GameRecord) -> bool:
        """Store a game's result; False if it was already stored (it counts once)."""
        stored = self.store.finish(game, result)
        if stored and self.ab is not None:
            self.ab.collect()  # a pair of A/B games may be complete
        return stored
