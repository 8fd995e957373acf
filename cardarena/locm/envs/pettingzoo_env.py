"""The PettingZoo AEC environment: the whole two-player LOCM game, turn by turn.

Agents ``player_0`` and ``player_1`` act in the engine's order (deck building
alternates, a battle turn is a run of one player's actions ended by PASS). Each
observation is ``{"observation": the same array the Gymnasium envs give that
player, "action_mask": int8 legal actions (all 0 when it is not its move)}``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger

from ..encoding.encoder import Encoder
from ..engine.drawing import state_frame
from ..engine.javarandom import JAVA_LONG_MAX, JAVA_LONG_MIN
from ..engine.params import resolve_parameters
from ..engine.rules import DEFAULT_VERSION, ruleset
from ..engine.state import IllegalActionError, State
from .checks import action_index, game_seed
from .javastreams import double_streams

AGENTS = ("player_0", "player_1")


class LOCMAECEnv(AECEnv):
    """Two-player LOCM for self-play and multi-agent learning (reward ±1/0 at the end)."""

    metadata = {  # noqa: RUF012 (PettingZoo API)
        "name": "cardarena_locm_v0",
        "render_modes": ["ansi"],
        "is_parallelizable": False,
    }

    def __init__(
        self, version: str = DEFAULT_VERSION, league: int = 4, render_mode: str | None = None
    ) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.rules = ruleset(version)
        self.league = league
        self.render_mode = render_mode
        self.encoder = Encoder(self.rules)
        layout = self.encoder.obs_layout
        size = self.encoder.actions.size
        self.possible_agents = list(AGENTS)
        self._observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(layout.low, layout.high, dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, (size,), dtype=np.int8),
                }
            )
            for agent in AGENTS
        }
        self._action_spaces = {agent: spaces.Discrete(size) for agent in AGENTS}
        self._rng = np.random.default_rng()
        self.state: State | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """``seed`` is the official game seed; ``options={"params": {...}}`` gives
        full game parameters (see docs/envs.md)."""
        seed = game_seed(seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed & 0xFFFF_FFFF_FFFF_FFFF)
        # Other option keys are ignored: PettingZoo's api_test passes arbitrary ones.
        options = dict(options or {})
        given: dict[str, object] = {
            "seed": seed
            if seed is not None
            else int(self._rng.integers(JAVA_LONG_MIN, JAVA_LONG_MAX, endpoint=True))
        }
        given.update(options.get("params") or {})
        self.state = State.new(
            self.rules, resolve_parameters(self.rules, given), self.league, double_streams
        )
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self.agent_selection = AGENTS[self.state.current_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        state = self.state
        assert state is not None, "call reset() first"
        player = AGENTS.index(agent)
        if not state.is_terminal and state.current_player == player:
            mask = self.encoder.mask(state).astype(np.int8)
        else:
            mask = np.zeros(self.encoder.actions.size, np.int8)
        return {"observation": self.encoder.observe(state, player), "action_mask": mask}

    def step(self, action: Any) -> None:
        """Play ``action`` (an integer index) for :attr:`agent_selection`. Once the game
        is over, each agent is stepped out with ``None`` (PettingZoo's dead step; any
        other action is a ValueError); a step after that only warns, as PettingZoo's
        order-enforcing wrapper does, until :meth:`reset`."""
        state = self.state
        if state is None:
            EnvLogger.error_step_before_reset()
        assert state is not None
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(f"{agent} must act in {state!r}; got None")
        index = action_index(action, self.encoder.actions.size)
        self._cumulative_rewards[agent] = 0.0
        state.apply(self.encoder.decode(state, index))
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        if state.is_terminal:
            returns = state.returns()
            self.rewards = {agent: returns[i] for i, agent in enumerate(AGENTS)}
            self.terminations = dict.fromkeys(AGENTS, True)
            self._accumulate_rewards()
            # Dead agents are stepped out in order, starting with the one that did not act.
            self.agent_selection = AGENTS[1 - AGENTS.index(agent)]
            return
        self._accumulate_rewards()
        self.agent_selection = AGENTS[state.current_player]

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.state is None:
            return None
        return state_frame(self.state, self.state.current_player, self.encoder.board_slots)

    def close(self) -> None:
        """Nothing to release: the engine holds no processes or files."""
