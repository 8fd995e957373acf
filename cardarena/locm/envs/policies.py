"""Who plays the decisions the learner does not: built-in agents, agent objects, callables.

A policy is given as

* a built-in agent name (``"random"``, ``"greedy"``, ``"builtin:search"``, ...) or an
  agent by reference (``"python:my_module:make_agent"``, see :mod:`..agents.reference`),
* an agent object with ``act(state) -> Action`` (see :mod:`cardarena.locm.agents`), or
* any callable ``(observation, action_mask) -> action index`` over the same arrays the
  learner gets, e.g. a frozen copy of the learner's own network for self-play.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..agents import check_agent_version, make_agent
from ..agents.random_agent import RandomAgent
from ..agents.reference import PYTHON_PREFIX
from ..encoding.encoder import Encoder
from ..engine.state import Action, IllegalActionError, State

PolicyFn = Callable[[np.ndarray, np.ndarray], Any]
PolicySpec = Any  # str | agent with act(state) | PolicyFn
"""A built-in agent name, an object with ``act(state)``, or ``(observation, mask) -> index``."""


class Policy:
    """One resolved policy: picks the engine action of ``player`` in ``state``."""

    def __init__(self, spec: PolicySpec, encoder: Encoder, seed: int | None, role: str) -> None:
        self.role = role
        self.spec = spec
        self.encoder = encoder
        self.agent: Any = None
        self.function: PolicyFn | None = None
        if isinstance(spec, str):
            name = spec.removeprefix("builtin:")
            if not name.startswith(PYTHON_PREFIX):
                try:
                    check_agent_version(name, encoder.rules.version)
                except ValueError as error:
                    raise ValueError(f"{role}: {error}") from None
            self.agent = make_agent(name, seed)
        elif hasattr(spec, "act"):
            self.agent = spec
        elif callable(spec):
            self.function = spec
        else:
            raise TypeError(
                f"{role} must be a built-in agent name, an agent with act(state), or a "
                f"callable (observation, action_mask) -> action; got {type(spec).__name__}"
            )
        self.draw = self._random_draw()

    def _random_draw(self) -> Callable[[], float] | None:
        """The draw of a plain random agent: the env then plays its picks itself."""
        return self.agent.draw if type(self.agent) is RandomAgent else None

    def reseed(self, seed: int) -> None:
        """A fresh built-in agent for a new episode, so that seeded episodes repeat."""
        if isinstance(self.spec, str):
            self.agent = make_agent(self.spec.removeprefix("builtin:"), seed)
            self.draw = self._random_draw()

    def act(self, state: State, player: int) -> Action:
        if self.agent is not None:
            return self.agent.act(state)
        assert self.function is not None
        observation = self.encoder.observe(state, player)
        mask = self.encoder.mask(state)
        index = self.function(observation, mask)
        try:
            return self.encoder.decode(state, int(index))
        except IllegalActionError as error:
            raise IllegalActionError(f"the {self.role} policy chose {error}") from None


__all__ = ["Policy", "PolicyFn", "PolicySpec"]
