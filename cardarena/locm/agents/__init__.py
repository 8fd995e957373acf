"""Built-in LOCM agents. An agent picks one legal action for the player to act."""

from .base import Agent
from .random_agent import RandomAgent

__all__ = ["Agent", "RandomAgent"]
