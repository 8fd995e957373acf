"""A batch of LOCM games over two arrays: the API a researcher uses directly.

    >>> from cardarena.locm.fast import Batch
    >>> batch = Batch.new("1.2", seeds=range(1000))
    >>> masks = batch.masks()             # bool [1000, actions]: the player to act's
    >>> batch.step(masks.argmax(axis=1))   # one legal action index per game

Every per-step operation is one call into compiled code for the whole batch. The
arrays are public: ``state[N, STATE_SIZE]`` and ``cards[N, MAX_CARDS, CARD_FIELDS]``
(int32, see :mod:`.layout`); a game is one row of each, and :meth:`Batch.to_state` /
:meth:`Batch.set_state` hand it to and from the reference engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache, partial

import numpy as np

from ..encoding.encoder import ActionLayout, action_layout
from ..engine.params import GameParameters, game_parameters, random_seed, resolve_parameters
from ..engine.rules import DECK_SIZE, ruleset
from ..engine.state import State
from . import generators, kernels
from . import layout as L
from .convert import row_from_state, state_from_row
from .threads import run_all, slices, thread_count

ParamsLike = Mapping[str, object] | GameParameters


class IllegalBatchAction(ValueError):
    """An action given to :meth:`Batch.step` is not legal in its game (one line)."""


_TEMPLATES: dict[str, np.ndarray] = {}


def _template(version: str) -> np.ndarray:
    """The row of a new game before its seeds and card count (the same for every game)."""
    row = _TEMPLATES.get(version)
    if row is None:
        state = State.new_battle(version)
        state.phase = State.new(version, {"seed": 0}).phase  # deck building
        state.turn = -1
        row, _cards = row_from_state(state)
        row[L.CARD_COUNT] = 0
        _TEMPLATES[version] = row
    return row


@cache
def _pool_rows(version: str, league: int) -> np.ndarray:
    """The card-table rows a draft may offer (read-only: shared by every batch)."""
    rows = generators.draft_pool_rows(version, league)
    rows.setflags(write=False)
    return rows


def new_game_arrays(version: str, league: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """What compiled code needs to start a game from its seed alone
    (:func:`.generators.start_row`): the template row and the draft's card rows."""
    rules = ruleset(version)
    return _template(rules.version), _pool_rows(rules.version, rules.check_league(league))


class Batch:
    """N games of one LOCM version, stepped together by compiled kernels.

    An action given for a game that has ended is skipped (its index is ignored), so a
    batch can be stepped until every game is over; an illegal action for a running game
    raises :class:`IllegalBatchAction` naming the game and the action, and nothing is
    applied to any game.
    """

    def __init__(
        self,
        version: str,
        state: np.ndarray,
        cards: np.ndarray,
        params: list[GameParameters | None],
        seeds: np.ndarray,
        league: int = 4,
    ) -> None:
        """The arrays as they are (use :meth:`new` to start games)."""
        self.version = ruleset(version).version
        self.layout: ActionLayout = action_layout(self.version)
        self.state = state
        """int32 [N, STATE_SIZE]: one row per game (:mod:`.layout`)."""
        self.cards = cards
        """int32 [N, MAX_CARDS, CARD_FIELDS]: each game's draft offers or 1.5 pool."""
        self.params = params
        """Each game's parameters, where given; None: derived from :attr:`seeds`."""
        self.seeds = seeds
        """int64 [N]: each game's ``seed`` (its parameters when :attr:`params` has None)."""
        self.league = league
        self._status = np.zeros(len(seeds), np.int8)
        self._id_maps: dict[int, dict[int, int]] = {}
        self._known = np.array([p is not None for p in params], np.bool_)
        """Per game: may it have parameters or an id map to forget when it restarts? (So
        that restarting many games touches only those, with no Python per game.)"""

    # --- creating games -----------------------------------------------------------------

    @classmethod
    def new(
        cls,
        version: str,
        n: int | None = None,
        *,
        seeds: Iterable[int] | None = None,
        params: Sequence[ParamsLike] | None = None,
        seed: int | None = None,
        league: int = 4,
        threads: int | None = 1,
    ) -> Batch:
        """New games at the start of deck building.

        Give per-game ``seeds`` (each game is ``State.new(version, {"seed": s})``),
        per-game ``params`` (any official parameters), or ``n`` with one ``seed`` from
        which the game seeds are drawn (:func:`.generators.game_seeds`; without it, at
        random). The same seeds give the same games as the reference engine.
        ``threads``: games from seeds are created on that many threads (None: every core).
        """
        rules = ruleset(version)
        league = rules.check_league(league)
        if sum(x is not None for x in (seeds, params, seed)) > 1:
            raise ValueError("give one of seeds, params or seed")
        if params is not None:
            resolved = [game_parameters(rules.version, p) for p in params]
            if n is not None and n != len(resolved):
                raise ValueError(f"n={n} but {len(resolved)} parameters")
            tables, subseeds = generators.tables_from_parameters(rules.version, resolved, league)
            batch = cls._empty(rules.version, len(resolved), league)
            game_seed_array = np.array([p.seed for p in resolved], np.int64)
            batch._fill(np.arange(len(resolved)), game_seed_array, subseeds, tables)
            batch.params = list(resolved)
            batch._known[:] = True
            return batch
        if seeds is not None:
            game_seed_array = np.fromiter((int(s) for s in seeds), np.int64)
        else:
            if n is None:
                raise ValueError("give n (with an optional seed), seeds or params")
            if seed is None:
                seed = random_seed()
            game_seed_array = generators.game_seeds(seed, n)
        if n is not None and n != len(game_seed_array):
            raise ValueError(f"n={n} but {len(game_seed_array)} seeds or parameters")
        batch = cls._empty(rules.version, len(game_seed_array), league)
        batch._fill_from_seeds(np.arange(len(game_seed_array)), game_seed_array,
                               thread_count(threads))  # fmt: skip
        return batch

    @classmethod
    def _empty(cls, version: str, n: int, league: int) -> Batch:
        """A batch of ``n`` games whose arrays :meth:`_fill` makes next."""
        state = np.zeros((0, L.STATE_SIZE), np.int32)
        cards = np.zeros((0, L.MAX_CARDS, L.CARD_FIELDS), np.int32)
        return cls(version, state, cards, [None] * n, np.zeros(n, np.int64), league)

    def _fill_from_seeds(self, games: np.ndarray, seeds: np.ndarray, threads: int = 1) -> None:
        """New games ``games`` from their seeds, in one compiled call per thread (what
        :meth:`_fill` does with the sub-seeds and tables of these seeds)."""
        if len(self.state) == 0:  # a new batch (from _empty)
            self.state = np.empty((len(self.seeds), L.STATE_SIZE), np.int32)
            self.cards = np.empty((len(self.seeds), L.MAX_CARDS, L.CARD_FIELDS), np.int32)
        games = games.astype(np.int64)
        seeds = seeds.astype(np.int64)
        template, allowed = _template(self.version), _pool_rows(self.version, self.league)
        run_all([partial(generators.start_rows, self.state, self.cards, games[a:b], seeds[a:b],
                         template, allowed)
                 for a, b in slices(len(games), threads, 64)])  # fmt: skip
        self._forget(games, seeds)

    def _fill(self, games: np.ndarray, seeds: np.ndarray, subseeds: np.ndarray,
              tables: np.ndarray) -> None:  # fmt: skip
        """New games ``games`` at the start of deck building from their sub-seeds and tables."""
        rows = np.repeat(_template(self.version)[None, :], len(games), axis=0)
        names = generators.subseed_names(self.version)
        rows[:, L.CARD_COUNT] = 3 * DECK_SIZE if ruleset(self.version).draft else L.MAX_CARDS
        for player in (0, 1):
            shuffle_seeds = subseeds[:, names.index(f"shufflePlayer{player}Seed")]
            rows[:, L.SHUFFLE_SEED + 2 * player] = (shuffle_seeds >> 32).astype(np.int32)
            rows[:, L.SHUFFLE_SEED + 2 * player + 1] = (
                (shuffle_seeds & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
            )
        if len(self.state) == 0:  # a new batch (from _empty): its arrays, no copies
            self.state, self.cards = rows, tables
        else:
            self.state[games] = rows
            self.cards[games] = tables
        self._forget(games, seeds)

    def _forget(self, games: np.ndarray, seeds: np.ndarray) -> None:
        """The new games' seeds; what the batch knew of the old games there goes."""
        self.seeds[games] = seeds
        self.restarted(games)

    def restarted(self, games: np.ndarray) -> None:
        """Rows ``games`` hold new games of the seeds in :attr:`seeds`, written by compiled
        code (:func:`.generators.start_row`): forget the parameters and id maps of the old
        games there (vectorised: only games that had any are visited)."""
        known = games[self._known[games]]
        for g in known.tolist():
            self.params[g] = None
            self._id_maps.pop(g, None)
        self._known[known] = False

    # --- reading ------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.seeds)

    def masks(self, out: np.ndarray | None = None) -> np.ndarray:
        """bool [N, layout.size]: the legal actions of each game's player to act (all
        False for an ended game), in the environments' action layout."""
        if out is None:
            out = np.empty((len(self), self.layout.size), bool)
        kernels.legal_masks(self.state, self.cards, out)
        return out

    @property
    def terminal(self) -> np.ndarray:
        """bool [N]: the games that have ended."""
        return self.state[:, L.PHASE] == kernels.ENDED

    @property
    def winners(self) -> np.ndarray:
        """int8 [N]: the winner of each game, -1 while running (or without a winner)."""
        return self.state[:, L.WINNER].astype(np.int8)

    @property
    def end_reasons(self) -> np.ndarray:
        """int8 [N]: :class:`~..engine.state.EndReason` numbers (0 while running)."""
        return self.state[:, L.END_REASON].astype(np.int8)

    @property
    def current_player(self) -> np.ndarray:
        """int8 [N]: the player to act (in deck building, the one with fewer choices)."""
        chosen0 = self.state[:, L.PLAYER_0 + L.P_CHOSEN_COUNT]
        chosen1 = self.state[:, L.PLAYER_1 + L.P_CHOSEN_COUNT]
        building = self.state[:, L.PHASE] == kernels.DECK_BUILDING
        return np.where(building, chosen1 < chosen0, self.state[:, L.ACTIVE]).astype(np.int8)

    @property
    def turns(self) -> np.ndarray:
        """int32 [N]: the reference engine's ``State.turn`` (-1 during deck building)."""
        return self.state[:, L.TURN].copy()

    @property
    def health(self) -> np.ndarray:
        """int32 [N, 2]: both players' health."""
        return self.state[:, [L.PLAYER_0 + L.P_HEALTH, L.PLAYER_1 + L.P_HEALTH]].copy()

    # --- acting -------------------------------------------------------------------------

    def step(self, actions: np.ndarray | Sequence[int]) -> None:
        """Apply one action index per game (ignored for ended games); all or nothing:
        an illegal action raises :class:`IllegalBatchAction` and changes no game."""
        chosen = np.asarray(actions)
        if chosen.shape != (len(self),):
            raise ValueError(f"expected {len(self)} actions, got shape {chosen.shape}")
        chosen = chosen.astype(np.int64, copy=False)
        first = kernels.step_games(self.state, self.cards, chosen, self._status)
        if first >= 0:
            raise IllegalBatchAction(
                f"game {first}: {self.layout.describe(int(chosen[first]))} is not legal for "
                f"player {int(self.current_player[first])} (no game was changed)"
            )

    # --- the reference engine -----------------------------------------------------------

    def game_parameters(self, i: int) -> GameParameters:
        """The parameters of game ``i`` (resolved from its seed if not given)."""
        params = self.params[i]
        if params is None:
            params = resolve_parameters(self.version, {"seed": int(self.seeds[i])})
            self.params[i] = params
            self._known[i] = True
        return params

    def to_state(self, i: int) -> State:
        """Game ``i`` as a reference :class:`State` (a copy: changing it changes nothing here)."""
        return state_from_row(self.state[i], self.cards[i], self.game_parameters(i),
                              self.version, self.league, self._id_maps.get(i))  # fmt: skip

    def set_state(self, i: int, state: State) -> None:
        """Put a reference state (of this version) into game ``i``."""
        if state.version != self.version:
            raise ValueError(f"the state is LOCM {state.version}, the batch {self.version}")
        ids: dict[int, int] = {}
        self.state[i], self.cards[i] = row_from_state(state, ids)
        self.params[i] = state.params
        self.seeds[i] = state.params.seed
        self._known[i] = True
        if ids:
            self._id_maps[i] = ids
        else:
            self._id_maps.pop(i, None)

    def clone(self) -> Batch:
        """An independent copy of every game."""
        copy = Batch(self.version, self.state.copy(), self.cards.copy(), list(self.params),
                     self.seeds.copy(), self.league)  # fmt: skip
        copy._id_maps = {i: dict(m) for i, m in self._id_maps.items()}
        copy._known = self._known.copy()
        return copy

    def reset_games(self, games: np.ndarray | Sequence[int], seeds: Iterable[int]) -> None:
        """Start new games in place of ``games`` (a boolean mask or indexes), one seed each."""
        index = np.asarray(games)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        new_seeds = np.fromiter((int(s) for s in seeds), np.int64)
        if len(new_seeds) != len(index):
            raise ValueError(f"{len(index)} games to reset but {len(new_seeds)} seeds")
        if len(index):
            self._fill_from_seeds(index.astype(np.int64), new_seeds)

    def observe(self, players: np.ndarray | Sequence[int] | None = None,
                out: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
        """float32 [N, observation size]: each game as ``players[g]`` sees it (default:
        the player to act), equal to the environments' Encoder.observe."""
        from .observation import observe_batch  # written with the vector environment

        seen = self.current_player if players is None else np.asarray(players, np.int8)
        if out is None:
            from ..encoding.encoder import observation_layout

            out = np.empty((len(self), observation_layout(self.version).size), np.float32)
        observe_batch(self.state, self.cards, seen, out)
        return out

    def __repr__(self) -> str:
        done = int(self.terminal.sum())
        return f"<Batch LOCM {self.version}: {len(self)} games, {done} ended>"
