"""Gymnasium single-agent LOCM environments: the whole game, deck building, or battle.

The learner plays one seat; every other decision (the opponent's, and the learner's
own decisions in the phase it does not learn) is taken by a :class:`Policy`. One
step is one learner action; the opponent moves in between. The engine underneath
is the faithful one, so ``reset(seed=S)`` deals exactly the official game ``S``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..encoding.encoder import Encoder
from ..engine.drawing import state_frame
from ..engine.javarandom import JAVA_LONG_MAX, JAVA_LONG_MIN
from ..engine.params import GameParameters, resolve_parameters
from ..engine.rules import DEFAULT_VERSION, ruleset
from ..engine.state import Action, IllegalActionError, Phase, State
from .checks import action_index, checked_shaping, game_seed
from .javastreams import double_streams
from .policies import Policy, PolicySpec

Mode = Literal["game", "deckbuilding", "battle"]
_PHASE_NAMES = {phase: phase.name.lower() for phase in Phase}
_DECK_BUILDING, _BATTLE, _ENDED = Phase.DECK_BUILDING, Phase.BATTLE, Phase.ENDED


class MaskedDiscrete(spaces.Discrete):
    """A Discrete space whose ``sample()`` without a mask draws a legal action.

    The mask is the environment's current one, so ``env.action_space.sample()`` is a
    uniformly random legal move (what a random baseline and Gymnasium's checker
    need); ``sample(mask=...)`` behaves as in :class:`~gymnasium.spaces.Discrete`.
    """

    def __init__(self, n: int, env: LOCMEnv) -> None:
        super().__init__(n)
        self._env = env

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        if mask is None and probability is None:
            legal = self._env.action_masks()
            if legal.any():
                return super().sample(mask=legal.astype(np.int8))
        return super().sample(mask=mask, probability=probability)


class LOCMEnv(gym.Env[np.ndarray, np.int64]):
    """LOCM for one learner (see docs/envs.md for spaces, rewards and options).

    ``mode``: ``"game"`` (deck building then battle), ``"deckbuilding"`` (the learner
    builds, ``battle_policy`` fights for it) or ``"battle"`` (``deck_policy`` builds
    for it). ``seat``: 0, 1 or ``"random"`` (drawn at each reset).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012 (Gymnasium API)

    def __init__(
        self,
        version: str = DEFAULT_VERSION,
        mode: Mode = "game",
        opponent: PolicySpec = "random",
        seat: int | str = 0,
        deck_policy: PolicySpec = "random",
        battle_policy: PolicySpec = "random",
        shaping: Mapping[str, float] | None = None,
        league: int = 4,
        render_mode: str | None = None,
    ) -> None:
        self.rules = ruleset(version)
        if mode not in ("game", "deckbuilding", "battle"):
            raise ValueError(f"mode must be 'game', 'deckbuilding' or 'battle', got {mode!r}")
        if seat not in (0, 1, "random"):
            raise ValueError(f"seat must be 0, 1 or 'random', got {seat!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.shaping = checked_shaping(shaping)
        self.mode: Mode = mode
        self._learning = {"game": None, "deckbuilding": Phase.DECK_BUILDING}.get(mode, Phase.BATTLE)
        """The phase the learner plays (None: both)."""
        self.seat_option = seat
        self.league = league
        self.render_mode = render_mode
        self.encoder = Encoder(self.rules)
        self._policy_encoder = Encoder(self.rules)
        self.opponent = Policy(opponent, self._policy_encoder, None, "opponent")
        self.deck_policy = Policy(deck_policy, self._policy_encoder, None, "deck_policy")
        self.battle_policy = Policy(battle_policy, self._policy_encoder, None, "battle_policy")
        self._playing = [self.opponent]
        """The policies this mode plays (only they are reseeded at reset)."""
        if mode == "battle":
            self._playing.append(self.deck_policy)
        elif mode == "deckbuilding":
            self._playing.append(self.battle_policy)
        layout = self.encoder.obs_layout
        self.observation_space = spaces.Box(layout.low, layout.high, dtype=np.float32)
        self.action_space = MaskedDiscrete(self.encoder.actions.size, self)
        self.state: State | None = None
        self.seat = 0
        self._mask = np.zeros(self.encoder.actions.size, bool)
        self._deck_draws: tuple[Callable[[], float] | None, ...] | None = None
        """Per seat, the random draw building its deck (see _random_deck_draws)."""
        self._legal: dict[int, Action] = {}
        """Index -> engine action of every legal index now (filled with the mask)."""
        self._potential = 0.0

    # --- the Gymnasium API --------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a game. ``seed`` is the official game seed; ``options`` may hold
        ``params`` (official game parameters, e.g. ``{"seed": 7, "shufflePlayer0Seed": 1}``)
        and ``seat`` (0 or 1, this episode only)."""
        seed = game_seed(seed)
        super().reset(seed=None if seed is None else seed & 0xFFFF_FFFF_FFFF_FFFF)
        options = dict(options or {})
        unknown = set(options) - {"params", "seat"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; known: params, seat")
        rng = self.np_random
        given: dict[str, object] = {}
        if seed is not None:
            given["seed"] = seed
        else:
            given["seed"] = int(rng.integers(JAVA_LONG_MIN, JAVA_LONG_MAX, endpoint=True))
        params = options.get("params")
        if isinstance(params, GameParameters):
            resolved = params
        else:
            given.update(params or {})
            resolved = resolve_parameters(self.rules, given)
        seat = options.get("seat", self.seat_option)
        if seat == "random":
            seat = int(rng.integers(2))
        if seat not in (0, 1):
            raise ValueError(f"seat must be 0, 1 or 'random', got {seat!r}")
        self.seat = int(seat)
        for policy in (self.opponent, self.deck_policy, self.battle_policy):
            seed = int(rng.integers(2**63))  # drawn even if unused: the same streams
            if policy in self._playing:
                policy.reseed(seed)
        self.state = State.new(self.rules, resolved, self.league, double_streams)
        self._deck_draws = self._random_deck_draws()
        self._advance()
        self._potential = self._shaping_potential()
        return self._observe(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        state = self.state
        if state is None:
            raise RuntimeError("call reset() before step()")
        if state.phase is _ENDED:
            raise IllegalActionError(
                f"the game has ended ({state!r}); call reset() to start another"
            )
        index = action_index(action, self.encoder.actions.size)
        engine_action = self._legal.get(index)  # listed with the mask: legal now
        if engine_action is None:
            self.encoder.decode(state, index)  # raises, naming the action
            raise AssertionError(f"action {index} is legal but was not in the mask")
        state._apply_legal(engine_action)
        self._advance()
        reward = 0.0
        if self.shaping:
            potential = self._shaping_potential()
            reward = potential - self._potential
            self._potential = potential
        terminated = state.phase is _ENDED
        if terminated:
            reward += state.returns()[self.seat]
        return self.encoder.observe(state, self.seat), reward, terminated, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The legal actions now (sb3-contrib's MaskablePPO calls this)."""
        return self._mask.copy()

    def render(self) -> str | None:  # type: ignore[override]
        if self.render_mode != "ansi":
            return None
        if self.state is None:
            return "(no game: call reset())\n"
        return state_frame(self.state, self.seat, self.encoder.board_slots)

    # --- internals ---------------------------------------------------------------------

    def _advance(self) -> None:
        """Let the policies play until the learner must decide or the game ends."""
        state = self.state
        assert state is not None
        seat = self.seat
        learning = self._learning
        while True:
            phase = state.phase
            if phase is _ENDED:
                break
            if phase is _DECK_BUILDING and self._deck_draws is not None:
                state._random_picks(self._deck_draws)
                if state.phase is _DECK_BUILDING:
                    break  # the learner's pick
                continue
            player = state.active if phase is _BATTLE else state.current_player
            if player != seat:
                policy = self.opponent
            elif learning is None or phase is learning:
                break
            elif phase is _DECK_BUILDING:
                policy = self.deck_policy
            else:
                policy = self.battle_policy
            draw = policy.draw
            if draw is not None:  # the random agent's own pick, legal by construction
                state._apply_legal(state.random_action(draw))
            else:
                state.apply(policy.act(state, player))
        self.encoder.mask(state, self._mask, self._legal)

    def _random_deck_draws(self) -> tuple[Callable[[], float] | None, ...] | None:
        """Per seat, the draw of the random policy that builds its deck (None: the
        learner builds it); None if a non-random policy builds one (the plain loop)."""
        draws: list[Callable[[], float] | None] = []
        for player in (0, 1):
            if player != self.seat:
                policy = self.opponent
            elif self._learning is None or self._learning is Phase.DECK_BUILDING:
                draws.append(None)
                continue
            else:
                policy = self.deck_policy
            if policy.draw is None:
                return None
            draws.append(policy.draw)
        return tuple(draws)

    def _observe(self) -> np.ndarray:
        assert self.state is not None
        return self.encoder.observe(self.state, self.seat)

    def _info(self) -> dict[str, Any]:
        state = self.state
        assert state is not None
        return {
            "action_mask": self._mask.copy(),
            "seat": self.seat,
            "phase": _PHASE_NAMES[state.phase],
            "turn": state.turn,
            "winner": -1 if state.winner is None else state.winner,
            "game_seed": state.params.seed,
        }

    def _shaping_potential(self) -> float:
        """Σ weight × (my − opponent's) quantity / 30, for the shaping terms asked for."""
        state = self.state
        assert state is not None
        me, opp = state.players[self.seat], state.players[1 - self.seat]
        total = 0.0
        for term, weight in self.shaping.items():
            if term == "health":
                difference = me.health - opp.health
            else:
                difference = sum(c.attack + c.defense for c in me.board) - sum(
                    c.attack + c.defense for c in opp.board
                )
            total += weight * difference / 30.0
        return total


class LOCMDeckBuildingEnv(LOCMEnv):
    """Deck building only; ``battle_policy`` plays the learner's battle."""

    def __init__(self, version: str = DEFAULT_VERSION, **kwargs: Any) -> None:
        super().__init__(version, mode="deckbuilding", **kwargs)


class LOCMBattleEnv(LOCMEnv):
    """Battle only; ``deck_policy`` builds the learner's deck."""

    def __init__(self, version: str = DEFAULT_VERSION, **kwargs: Any) -> None:
        super().__init__(version, mode="battle", **kwargs)
