"""The in-process agent interface."""

from __future__ import annotations

from typing import Protocol

from ..engine.state import Action, State


class Agent(Protocol):
    """Anything that picks an action for ``state.current_player``.

    Agents must treat ``state`` as read-only (clone it to search) and should use
    only what :func:`cardarena.locm.engine.views.player_view` shows that player.
    """

    name: str

    def act(self, state: State) -> Action: ...
