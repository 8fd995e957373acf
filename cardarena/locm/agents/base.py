"""The in-process agent interface."""

from __future__ import annotations

from typing import Protocol

from ..state import Action, State


class Agent(Protocol):
    """Anything that picks an action for ``state.current_player``.

    Agents must treat ``state`` as read-only (clone it to search) and should use
    only what :func:`cardarena.locm.observation.player_view` shows that player.
    """

    name: str

    def act(self, state: State) -> Action: ...
