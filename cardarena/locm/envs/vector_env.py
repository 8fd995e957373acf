"""A Gymnasium VectorEnv of N LOCM games on the compiled batch engine.

The same environment as :class:`~.gym_env.LOCMEnv` (modes, seats, policies, shaping,
rewards, infos, masks, observations), N games at a time: one ``step`` is one compiled
call over the whole batch, in which the learner's actions are applied and the
opponent's and the scripted policies' moves are played, when those are the compiled
``"random"`` or ``"greedy"``. Any other policy is a batched callable
``(observations[k, obs], masks[k, n]) -> actions[k]``, called once per round for every
game that waits for it. Needs numba (``pip install ".[fast]"``).

What is equal to N single environments stepped with the same actions (the tests
check it): observations, masks, rewards, terminations, infos and autoresets, for the
same seeds, whenever the policies are callables (deterministic in their arrays).
The env's own random draws (game seeds of unseeded resets, random seats, the
policies' seeds) come from one generator per game seeded exactly as the single env's
``np_random``. The compiled ``"random"`` and ``"greedy"`` policies play the same
kind of moves as the built-in agents (uniform over the legal actions; greedy's
one-step evaluation) but from their own random streams, so their games differ.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from ..encoding.encoder import action_layout, observation_layout
from ..engine.javarandom import JAVA_LONG_MAX, JAVA_LONG_MIN
from ..engine.params import GameParameters, resolve_parameters
from ..engine.rules import DEFAULT_VERSION, ruleset
from ..engine.state import IllegalActionError, State
from ..fast import require_numba
from .checks import SHAPING_TERMS, action_array, checked_shaping, game_seed
from .gym_env import Mode

require_numba()

from ..fast import pcg64  # noqa: E402 (after the one-line install hint)
from ..fast import vector as kernels  # noqa: E402
from ..fast.batch import Batch, new_game_arrays  # noqa: E402
from ..fast.threads import run_all, slices, thread_count  # noqa: E402

_PHASE_NAMES = np.array(["deck_building", "battle", "ended"], dtype=object)
_LEARNING = {"game": -1, "deckbuilding": 0, "battle": 1}
"""The phase the learner plays, as the compiled loop reads it (-1: both)."""
_COMPILED = {"random": kernels.POLICY_RANDOM, "greedy": kernels.POLICY_GREEDY}
_MIN_SLICE = 128
"""Fewer games than this per thread are not worth a thread's hand-over."""
BatchedPolicy = Callable[[np.ndarray, np.ndarray], Any]
"""``(observations[k, obs_size], masks[k, n]) -> k action indices``."""


class MaskedMultiDiscrete(spaces.MultiDiscrete):
    """The batch of Discrete actions; ``sample()`` without a mask draws a legal action
    per game from the env's current masks (any action for a game about to reset)."""

    def __init__(self, n: int, env: LOCMVectorEnv) -> None:
        super().__init__(np.full(env.num_envs, n, np.int64))
        self._env = env

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        env = self._env
        actions = np.empty(env.num_envs, np.int64)
        uniforms = self.np_random.random(len(actions))
        env._in_parallel([[(kernels.sample_legal, env._masks, uniforms, actions, first, stop)]
                          for first, stop in env._slices])  # fmt: skip
        return actions


class LOCMVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` LOCM games for one learner each (see docs/envs.md, "Vector environment").

    The arguments are those of :class:`~.gym_env.LOCMEnv`, plus ``num_envs``,
    ``autoreset_mode`` (``AutoresetMode.NEXT_STEP``, the default, or ``SAME_STEP``) and
    ``copy`` (False: ``step`` returns the env's own observation buffer, rewritten by the
    next step; the fastest choice when the caller stores what it needs) and ``threads``
    (the batch is stepped in that many slices at once; default: the cores this process
    may use).
    Policies: ``"random"`` and ``"greedy"`` (compiled) or a batched callable.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int = 1,
        version: str = DEFAULT_VERSION,
        mode: Mode = "game",
        opponent: str | BatchedPolicy = "random",
        seat: int | str = 0,
        deck_policy: str | BatchedPolicy = "random",
        battle_policy: str | BatchedPolicy = "random",
        shaping: Mapping[str, float] | None = None,
        league: int = 4,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        threads: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.rules = ruleset(version)
        if mode not in _LEARNING:
            raise ValueError(f"mode must be 'game', 'deckbuilding' or 'battle', got {mode!r}")
        if seat not in (0, 1, "random"):
            raise ValueError(f"seat must be 0, 1 or 'random', got {seat!r}")
        if render_mode is not None:
            raise ValueError("the vector env does not render: env.state(i) is game i as a State")
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        if self.autoreset_mode is AutoresetMode.DISABLED:
            raise ValueError("autoreset_mode must be NEXT_STEP or SAME_STEP")
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.shaping = checked_shaping(shaping)
        self.num_envs = num_envs
        self.mode: Mode = mode
        self.seat_option = seat
        self.league = league
        self.render_mode = render_mode
        self.copy = copy
        self.layout = action_layout(self.rules)
        obs_layout = observation_layout(self.rules)
        self.single_observation_space = spaces.Box(obs_layout.low, obs_layout.high,
                                                   dtype=np.float32)  # fmt: skip
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.single_action_space = spaces.Discrete(self.layout.size)
        self.action_space = MaskedMultiDiscrete(self.layout.size, self)
        self._policies: list[BatchedPolicy | None] = [None, None, None, None]
        """Per role (learner, opponent, deck, battle): the callable, None if compiled."""
        self._policy_codes = np.zeros(4, np.int32)
        for role, (name, spec) in enumerate(
            (("opponent", opponent), ("deck_policy", deck_policy),
             ("battle_policy", battle_policy)), start=1,
        ):  # fmt: skip
            self._policy_codes[role], self._policies[role] = _resolve_policy(name, spec)
        self._shaping_terms = np.array([SHAPING_TERMS.index(t) for t in self.shaping], np.int32)
        self._shaping_weights = np.array(list(self.shaping.values()), np.float64)
        self._learning = _LEARNING[mode]
        self._play_games = kernels.play_games_for(
            pool=not self.rules.draft, greedy=kernels.POLICY_GREEDY in self._policy_codes
        )
        """The compiled step of this env's version and policies (only their code)."""

        n = num_envs
        self.threads = thread_count(threads)
        self._slices = slices(n, self.threads, _MIN_SLICE)
        """The games each thread steps: (first, stop), disjoint, the first on this thread."""
        self._slice_games = [np.arange(first, stop, dtype=np.int64)
                             for first, stop in self._slices]  # fmt: skip
        """The same slices as arrays of game indexes (what the compiled step takes)."""
        self._pool = ThreadPoolExecutor(len(self._slices) - 1) if len(self._slices) > 1 else None
        self.batch: Batch | None = None
        self._generators = np.zeros((n, pcg64.STATE_WORDS), np.uint64)
        """Per env: its random generator (numpy's PCG64, seeded as the single env's
        ``np_random``) as a state row, so that compiled autoresets draw from it."""
        self._has_generator = np.zeros(n, np.bool_)
        self._seat_code = kernels.SEAT_RANDOM if seat == "random" else int(seat)
        self._new_game = new_game_arrays(self.rules.version, league)
        self._info = np.zeros((n, kernels.INFO_COLUMNS), np.int32)
        """Per env: phase, turn and winner when its learner was last to decide (the infos)."""
        self._seats = np.zeros(n, np.int32)
        self._game_seeds = np.zeros(n, np.int64)
        self._policy_rng = np.zeros((n, 4), np.uint64)
        self._masks = np.zeros((n, self.layout.size), np.bool_)
        self._observations = np.zeros((n, obs_layout.size), np.float32)
        self._offers_dirty = np.ones(n, np.bool_)
        """Per env: may its observation row hold deck-building offers? Only a deck-building
        observation writes them, so a battle-only env zeroes the 1.5 pool block once."""
        self._potentials = np.zeros(n, np.float64)
        self._rewards = np.zeros(n, np.float64)
        self._terminations = np.zeros(n, np.bool_)
        self._truncations = np.zeros(n, np.bool_)
        self._autoreset = np.zeros(n, np.bool_)
        self._roles = np.zeros(n, np.int32)
        self._fresh = np.zeros(n, np.bool_)

    # --- the Gymnasium API ----------------------------------------------------------

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a game in every env (or in those of ``options["reset_mask"]``).

        ``seed``: None, an int (env i gets ``seed + i``, as in SyncVectorEnv) or one per
        env; each is the official game seed, as in the single env. ``options``:
        ``params`` (one mapping for all, or one per env) and ``seat`` (0 or 1, or one
        per env) for this episode, ``reset_mask`` (bool per env).
        """
        n = self.num_envs
        options = dict(options or {})
        unknown = set(options) - {"params", "seat", "reset_mask"}
        if unknown:
            raise ValueError(
                f"unknown reset option(s) {sorted(unknown)}; known: params, seat, reset_mask"
            )
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, Sequence | np.ndarray) and not isinstance(seed, str | bytes):
            seeds = [game_seed(one) for one in seed]
            if len(seeds) != n:
                raise ValueError(f"{len(seeds)} seeds for {n} envs")
        else:
            first = game_seed(seed)  # TypeError for anything but an integer
            seeds = [game_seed(int(first or 0) + i) for i in range(n)]
        reset_mask = options.pop("reset_mask", None)
        if reset_mask is None:
            games = np.arange(n)
        else:
            reset_mask = np.asarray(reset_mask)
            if reset_mask.shape != (n,) or reset_mask.dtype != np.bool_ or not reset_mask.any():
                raise ValueError("options['reset_mask'] must be a bool array of num_envs, one True")
            if self.batch is None and not reset_mask.all():
                raise ValueError("the first reset must reset every env")
            games = np.flatnonzero(reset_mask)
        params = _per_env(options.get("params"), n, "params")
        seats = _per_env(options.get("seat"), n, "seat")
        for i in games:
            if seeds[i] is not None:
                seeded = seeding.np_random(int(seeds[i]) & 0xFFFF_FFFF_FFFF_FFFF)[0]
            elif not self._has_generator[i]:
                seeded = seeding.np_random()[0]
            else:
                continue
            pcg64.load(seeded, self._generators[i])
            self._has_generator[i] = True
        self._start_games(games, [seeds[i] for i in games], [params[i] for i in games],
                          [seats[i] for i in games])  # fmt: skip
        self._rewards[games] = 0.0
        self._terminations[games] = False
        self._truncations[games] = False
        self._autoreset[games] = False
        return self._observations_out(), self._infos()

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        batch = self.batch
        if batch is None:
            raise RuntimeError("call reset() before step()")
        actions = action_array(actions, self.num_envs)
        resetting = self._autoreset
        self._check_actions(actions, resetting)
        self._terminations[:] = False
        self._fresh[:] = False
        next_step = self.autoreset_mode is AutoresetMode.NEXT_STEP
        # One compiled call per thread does the whole step of its games, the restart of
        # those that ended last step (draws included) and their observations and masks.
        restart = resetting if next_step else np.zeros(self.num_envs, np.bool_)
        self._in_parallel([
            [(self._play_games, kernels.STEP, batch.state, batch.cards, games, actions,
              restart, *self._restart_arrays(), *self._arrays())]
            for games in self._slice_games
        ])  # fmt: skip
        if next_step:
            self._restarted(np.flatnonzero(resetting))
        self._play_callables()
        final: tuple[np.ndarray, dict[str, Any]] | None = None
        if next_step:
            self._autoreset = self._terminations.copy()
        else:
            ended = self._terminations.copy()
            games = np.flatnonzero(ended)
            if games.size:
                final = (self._observations.copy(), self._infos())
                self._in_parallel([
                    [(self._play_games, kernels.RESTART, batch.state, batch.cards, part,
                      _NO_ACTIONS, ended, *self._restart_arrays(), *self._arrays())]
                    for part in self._slice_games
                ])  # fmt: skip
                self._restarted(games)
                self._play_callables()
        infos = self._infos()
        if final is not None:
            # As SyncVectorEnv batches them: final_obs an object array, final_info a
            # batched info dict, each with its mask of the envs that ended.
            ended = np.zeros(self.num_envs, np.bool_)
            ended[games] = True
            final_obs = np.full(self.num_envs, None, dtype=object)
            for g in games:
                final_obs[g] = final[0][g]
            final_info: dict[str, Any] = {}
            for key, full in final[1].items():
                if key.startswith("_"):
                    continue
                if full.dtype == object:
                    values = np.full(full.shape, None, dtype=object)
                else:
                    values = np.zeros_like(full)
                values[games] = full[games]
                final_info[key] = values
                final_info[f"_{key}"] = ended.copy()
            infos.update({"final_obs": final_obs, "_final_obs": ended,
                          "final_info": final_info, "_final_info": ended.copy()})  # fmt: skip
        return (
            self._observations_out(),
            self._rewards.copy(),
            self._terminations.copy(),
            self._truncations.copy(),
            infos,
        )

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the stepping threads."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
            self._slices = [(0, self.num_envs)]
            self._slice_games = [np.arange(self.num_envs, dtype=np.int64)]

    def action_masks(self) -> np.ndarray:
        """The legal actions now, one row per env (sb3-contrib's MaskablePPO reads this)."""
        return self._masks.copy()

    def state(self, index: int) -> State:
        """A reference :class:`State` copy of env ``index``'s game (to look at or replay)."""
        if self.batch is None:
            raise RuntimeError("call reset() first")
        return self.batch.to_state(index)

    # --- internals ------------------------------------------------------------------

    def _check_actions(self, actions: np.ndarray, resetting: np.ndarray) -> None:
        """IllegalActionError naming the first env whose action is not legal (none applied)."""
        bad = kernels.count_illegal(self._masks, actions, resetting)
        if bad:
            g = int(np.flatnonzero(~resetting & ~self._legal_now(actions))[0])
            raise IllegalActionError(
                f"env {g}: {self.layout.describe(int(actions[g]))} is not legal for player "
                f"{self._seats[g]} in {self.batch.to_state(g)!r}"  # type: ignore[union-attr]
                f" ({bad} illegal action(s) in this step; none was applied)"
            )

    def _legal_now(self, actions: np.ndarray) -> np.ndarray:
        """Per env: is its action in its mask?"""
        inside = (actions >= 0) & (actions < self.layout.size)
        return inside & self._masks[np.arange(self.num_envs), np.where(inside, actions, 0)]

    def _draw_games(
        self,
        games: np.ndarray,
        seeds: list[int | None],
        params: list[Any],
        seats: list[Any],
    ) -> tuple[np.ndarray, list[tuple[int, GameParameters]], bool]:
        """The single env's reset draws for ``games``, game by game from each env's
        generator: (game seeds, the games given parameters, whether the batch was made)."""
        game_seeds = np.zeros(len(games), np.int64)
        by_params: list[tuple[int, GameParameters]] = []
        for k, (g, seed, given_params, seat_option) in enumerate(
            zip(games.tolist(), seeds, params, seats, strict=True)
        ):
            rng = pcg64.generator(self._generators[g])
            seat = self.seat_option if seat_option is None else seat_option
            if seed is None:
                seed = int(rng.integers(JAVA_LONG_MIN, JAVA_LONG_MAX, endpoint=True))
            if given_params is not None or not JAVA_LONG_MIN <= seed <= JAVA_LONG_MAX:
                if isinstance(given_params, GameParameters):
                    resolved = given_params
                else:  # the official parameters (or the error the single env gives)
                    resolved = resolve_parameters(
                        self.rules, {"seed": seed, **(given_params or {})}
                    )
                by_params.append((g, resolved))
                seed = resolved.seed
            game_seeds[k] = seed
            if seat == "random":
                seat = int(rng.integers(2))
            if seat not in (0, 1):
                raise ValueError(f"seat must be 0, 1 or 'random', got {seat!r}")
            self._seats[g] = seat
            for role in (1, 2, 3):  # drawn even if unused, as the single env does
                self._policy_rng[g, role] = int(rng.integers(2**63))
            pcg64.load(rng, self._generators[g])
        self._game_seeds[games] = game_seeds
        if self.batch is None:
            self.batch = Batch.new(self.rules.version, seeds=game_seeds, league=self.league)
            made = True
        else:
            made = False
        self._fresh[games] = True
        return game_seeds, by_params, made

    def _start_games(
        self,
        games: np.ndarray,
        seeds: list[int | None],
        params: list[Any],
        seats: list[Any],
    ) -> None:
        """New games in ``games`` (:meth:`_draw_games`, then :meth:`_reset_calls` on the
        threads), then the callables' rounds."""
        game_seeds, by_params, made = self._draw_games(games, seeds, params, seats)
        calls = self._reset_calls(games, game_seeds, by_params, made)
        self._in_parallel(calls)
        self._play_callables()

    def _restarted(self, games: np.ndarray) -> None:
        """The batch's record of games the compiled step restarted (their seeds)."""
        batch = self.batch
        assert batch is not None
        batch.seeds[games] = self._game_seeds[games]
        batch.restarted(games)

    def _reset_parts(self, games: np.ndarray) -> list[np.ndarray]:
        """Positions in ``games`` per thread: creating a 1.5 game (120 generated cards)
        costs as much as many steps, so even a few resets are split over the threads."""
        if len(games) >= (_MIN_SLICE // 2 if self.rules.draft else 2):
            return np.array_split(np.arange(len(games)), len(self._slices))
        return [np.arange(len(games))]

    def _reset_calls(
        self,
        games: np.ndarray,
        game_seeds: np.ndarray,
        by_params: list[tuple[int, GameParameters]],
        made: bool,
        split: bool = True,
    ) -> list[list[tuple[Any, ...]]]:
        """Per thread (one list unless ``split``), the calls that create the new games and
        play the policies up to the learner's first decision (games created from
        parameters first, here)."""
        batch = self.batch
        assert batch is not None
        for g, resolved in by_params:
            batch.set_state(g, State.new(self.rules, resolved, self.league))
        given = {g for g, _resolved in by_params}
        fresh_by_seed = np.array([g not in given for g in games.tolist()], np.bool_)
        games = games.astype(np.int64)
        arrays = self._arrays()
        parts = self._reset_parts(games) if split else [np.arange(len(games))]
        calls: list[list[tuple[Any, ...]]] = []
        for part in parts:
            new = part[fresh_by_seed[part]]
            thread_calls: list[tuple[Any, ...]] = []
            if not made and new.size:
                thread_calls.append((batch.reset_games, games[new], game_seeds[new]))
            thread_calls.append((self._play_games, kernels.START, batch.state, batch.cards,
                                 games[part], _NO_ACTIONS, self._fresh,
                                 *self._restart_arrays(), *arrays))  # fmt: skip
            calls.append(thread_calls)
        return calls

    def _play_callables(self) -> None:
        """Rounds of the callable policies: each one decides for every game that waits
        for it, in one call, until every game waits for the learner or has ended."""
        batch = self.batch
        assert batch is not None
        while True:
            waiting = np.flatnonzero(self._roles)
            if not waiting.size:
                return
            actions = np.zeros(waiting.size, np.int64)
            roles = self._roles[waiting]
            for role in np.unique(roles):
                chosen = waiting[roles == role]
                policy = self._policies[role]
                assert policy is not None
                players = kernels.players_to_act(batch.state, chosen.astype(np.int64))
                observations = np.empty((chosen.size, self._observations.shape[1]), np.float32)
                kernels.observe_games(batch.state, batch.cards, chosen.astype(np.int64),
                                      players, observations)  # fmt: skip
                masks = self._masks[chosen]
                picked = np.asarray(policy(observations, masks)).astype(np.int64).reshape(-1)
                if picked.shape != (chosen.size,):
                    raise ValueError(f"{_ROLE_NAMES[role]}: {chosen.size} actions expected,"
                                     f" got shape {picked.shape}")  # fmt: skip
                inside = (picked >= 0) & (picked < self.layout.size)
                ok = inside & masks[np.arange(chosen.size), np.where(inside, picked, 0)]
                if not ok.all():
                    k = int(np.flatnonzero(~ok)[0])
                    raise IllegalActionError(
                        f"the {_ROLE_NAMES[role]} policy chose "
                        f"{self.layout.describe(int(picked[k]))}, which is not legal for "
                        f"player {players[k]} in env {chosen[k]}"
                    )
                actions[roles == role] = picked
            self._play_games(kernels.CONTINUE, batch.state, batch.cards,
                               waiting.astype(np.int64), actions, self._fresh,
                               *self._restart_arrays(), *self._arrays())  # fmt: skip

    def _in_parallel(self, calls: list[list[tuple[Any, ...]]]) -> None:
        """Run per-thread lists of compiled calls ``(function, *args)`` at once: the first
        list on this thread, the others on the pool (the compiled loops release the GIL);
        wait for all."""
        if self._pool is None:
            for thread_calls in calls:
                _run(thread_calls)
            return
        run_all([partial(_run, thread_calls) for thread_calls in calls], self._pool)

    def _arrays(self) -> tuple[Any, ...]:
        """The per-env arrays and settings every compiled step loop takes, in its order."""
        return (
            self._seats, self._learning, self._policy_codes, self._policy_rng, self._masks,
            self._roles, self._observations, self._offers_dirty,
            self._shaping_terms, self._shaping_weights, self._potentials, self._rewards,
            self._terminations, self._info,
        )  # fmt: skip

    def _restart_arrays(self) -> tuple[Any, ...]:
        """What a compiled restart needs beside :meth:`_arrays`, in its order."""
        template, allowed_rows = self._new_game
        return (template, allowed_rows, self._seat_code, self._generators, self._game_seeds,
                self._fresh)  # fmt: skip

    def _observations_out(self) -> np.ndarray:
        return self._observations.copy() if self.copy else self._observations

    def _infos(self) -> dict[str, Any]:
        """The single env's info, batched as SyncVectorEnv batches it."""
        everyone = np.ones(self.num_envs, np.bool_)
        info = self._info
        return {
            "action_mask": self._masks.copy(), "_action_mask": everyone,
            "seat": self._seats.astype(np.int64), "_seat": everyone.copy(),
            "phase": _PHASE_NAMES[info[:, kernels.INFO_PHASE]], "_phase": everyone.copy(),
            "turn": info[:, kernels.INFO_TURN].astype(np.int64), "_turn": everyone.copy(),
            "winner": info[:, kernels.INFO_WINNER].astype(np.int64),
            "_winner": everyone.copy(),
            "game_seed": self._game_seeds.copy(), "_game_seed": everyone.copy(),
        }  # fmt: skip


_NO_ACTIONS = np.zeros(0, np.int64)
"""The actions of a compiled call that applies none (a reset, a same-step autoreset)."""


def _run(calls: list[tuple[Any, ...]]) -> None:
    for function, *args in calls:
        function(*args)


_ROLE_NAMES = ("learner", "opponent", "deck_policy", "battle_policy")


def _resolve_policy(role: str, spec: Any) -> tuple[int, BatchedPolicy | None]:
    """(compiled policy code, None) for a built-in the batch plays, (CALLABLE, fn) else."""
    if isinstance(spec, str):
        name = spec.removeprefix("builtin:")
        if name in _COMPILED:
            return _COMPILED[name], None
        raise ValueError(
            f"{role}: the vector env plays 'random' and 'greedy' itself; give any other "
            f"policy as a batched callable (observations, masks) -> actions, got {spec!r}"
        )
    if callable(spec) and not hasattr(spec, "act"):
        return kernels.POLICY_CALLABLE, spec
    raise TypeError(
        f"{role} must be 'random', 'greedy' or a batched callable (observations, masks) -> "
        f"actions; got {type(spec).__name__} (agents with act(state) play in the single env)"
    )


def _per_env(value: Any, n: int, name: str) -> list[Any]:
    """An option given once for all envs, or as one value per env."""
    if isinstance(value, list | tuple | np.ndarray) and not isinstance(value, GameParameters):
        if len(value) != n:
            raise ValueError(f"options[{name!r}]: {len(value)} values for {n} envs")
        return list(value)
    return [value] * n


class LOCMVectorDeckBuildingEnv(LOCMVectorEnv):
    """Deck building only; ``battle_policy`` plays the learner's battles."""

    def __init__(self, num_envs: int = 1, version: str = DEFAULT_VERSION, **kwargs: Any) -> None:
        super().__init__(num_envs, version, mode="deckbuilding", **kwargs)


class LOCMVectorBattleEnv(LOCMVectorEnv):
    """Battle only; ``deck_policy`` builds the learner's decks."""

    def __init__(self, num_envs: int = 1, version: str = DEFAULT_VERSION, **kwargs: Any) -> None:
        super().__init__(num_envs, version, mode="battle", **kwargs)
