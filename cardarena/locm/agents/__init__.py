"""Built-in LOCM agents. An agent picks one legal action for the player to act.

:data:`BUILTIN_AGENTS` maps the names the command line accepts (``builtin:<name>``)
to agent factories taking a seed.
"""

from collections.abc import Callable

from .base import Agent
from .greedy import GreedyAgent
from .pass_agent import PassAgent
from .random_agent import RandomAgent
from .search import SearchAgent

BUILTIN_AGENTS: dict[str, Callable[[int | None], Agent]] = {
    "random": RandomAgent,
    "pass": PassAgent,
    "greedy": GreedyAgent,
    "search": SearchAgent,
}


def make_agent(name: str, seed: int | None = None) -> Agent:
    """The built-in agent called ``name``; ValueError naming the known ones otherwise."""
    try:
        factory = BUILTIN_AGENTS[name]
    except KeyError:
        known = ", ".join(sorted(BUILTIN_AGENTS))
        raise ValueError(f"unknown built-in agent {name!r}; known: {known}") from None
    return factory(seed)


__all__ = [
    "BUILTIN_AGENTS",
    "Agent",
    "GreedyAgent",
    "PassAgent",
    "RandomAgent",
    "SearchAgent",
    "make_agent",
]
