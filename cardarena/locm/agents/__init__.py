"""Built-in LOCM agents. An agent picks one legal action for the player to act.

:data:`BUILTIN_AGENTS` maps the names the command line accepts (``builtin:<name>``)
to agent factories taking a seed. Agents are versioned: ``search-v1`` to ``search-v4``
and ``learned-v1`` to ``learned-v3`` keep playing as they were published, so that
results quoted with them stay reproducible, while the plain names always name the
strongest version. :func:`make_agent` also takes a researcher's agent
by reference, ``python:MODULE:FACTORY`` (see :mod:`.reference`).
"""

from collections.abc import Callable

from .base import Agent
from .greedy import GreedyAgent
from .pass_agent import PassAgent
from .random_agent import RandomAgent
from .reference import PYTHON_PREFIX
from .search import SearchAgent
from .search_v2 import SearchAgentV2


def _search_v3(seed: int | None) -> Agent:
    """search-v2 scored by learned-v2's network (imports numpy only when asked for)."""
    from .search_v3 import SearchAgentV3

    return SearchAgentV3(seed)


def _learned_v1(seed: int | None) -> Agent:
    """The MaskablePPO battle network (imports numpy only when asked for)."""
    from .learned import LearnedAgent

    return LearnedAgent(seed)


def _learned_v2(seed: int | None) -> Agent:
    """The self-play afterstate value network (imports numpy only when asked for)."""
    from .learned_v2 import LearnedAgentV2

    return LearnedAgentV2(seed)


def _learned_v3(seed: int | None) -> Agent:
    """learned-v3's deck network, learned-v2's battle (imports numpy only when asked for)."""
    from .learned_v3 import LearnedAgentV3

    return LearnedAgentV3(seed)


def _search_v4(seed: int | None) -> Agent:
    """search-v3's turns with learned-v3's deck (imports numpy only when asked for)."""
    from .search_v4 import SearchAgentV4

    return SearchAgentV4(seed)


BUILTIN_AGENTS: dict[str, Callable[[int | None], Agent]] = {
    "random": RandomAgent,
    "pass": PassAgent,
    "greedy": GreedyAgent,
    "search": _search_v4,
    "learned": _learned_v3,
    # Published versions, frozen: when a plain name gets a stronger agent, its present
    # code stays here under the versioned name.
    "search-v1": SearchAgent,
    "search-v2": SearchAgentV2,
    "search-v3": _search_v3,
    "learned-v1": _learned_v1,
    "learned-v2": _learned_v2,
    "search-v4": _search_v4,
    "learned-v3": _learned_v3,
}

AGENT_DESCRIPTIONS: dict[str, str] = {
    "random": "uniformly random legal actions and deck choices: the baseline",
    "pass": "always passes in battle; builds the balanced scored deck",
    "greedy": "one action at a time, the best-scoring position next; lethal when it sees it",
    "search": "plans whole turns within the official time limits (today: search-v4)",
    "learned": "self-play networks: a position value, a deck; numpy only (today: learned-v3)",
    "search-v1": "the search agent as first published: turn planning, sampled replies",
    "search-v2": "every distinct turn as time allows, the opponent's reply; the fitted deck",
    "search-v3": "search-v2's turn planning, positions scored by learned-v2's value network",
    "learned-v1": "the learned agent as first published: a MaskablePPO battle policy",
    "learned-v2": "afterstate values learned by self-play against a league; the fitted deck",
    "search-v4": "search-v3's turn planning with learned-v3's deck building",
    "learned-v3": "learned-v2's battle with a deck-building network trained by self-play",
}
"""One line per built-in agent, for ``locm agents``."""


AGENT_VERSIONS: dict[str, tuple[str, ...]] = {
    "learned-v1": ("1.2", "1.5"),
}
"""The built-in agents that play only some versions (the others play all three)."""


def _unknown(name: str) -> ValueError:
    known = ", ".join(sorted(BUILTIN_AGENTS))
    return ValueError(f"unknown built-in agent {name!r}; known: {known}")


def check_agent_version(name: str, version: str) -> None:
    """ValueError (one line) if ``name`` is no built-in agent, or one that does not play
    ``version``."""
    name = name.removeprefix("builtin:")
    if name not in BUILTIN_AGENTS:
        raise _unknown(name)
    versions = AGENT_VERSIONS.get(name)
    if versions is not None and version not in versions:
        raise ValueError(f"the {name} agent plays LOCM {' and '.join(versions)}, not {version}")


def make_agent(name: str, seed: int | None = None) -> Agent:
    """The built-in agent called ``name``, or the agent a ``python:`` reference makes.

    ValueError (one line naming the known agents, or why the reference fails) otherwise.
    """
    if name.startswith(PYTHON_PREFIX):
        from .reference import make_reference_agent

        return make_reference_agent(name, seed)  # type: ignore[no-any-return]
    try:
        factory = BUILTIN_AGENTS[name]
    except KeyError:
        raise _unknown(name) from None
    return factory(seed)


__all__ = [
    "AGENT_DESCRIPTIONS",
    "AGENT_VERSIONS",
    "BUILTIN_AGENTS",
    "Agent",
    "GreedyAgent",
    "PassAgent",
    "RandomAgent",
    "SearchAgent",
    "SearchAgentV2",
    "check_agent_version",
    "make_agent",
]
