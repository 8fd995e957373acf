"""Agents by reference: ``python:MODULE:FACTORY`` or ``python:path/to/file.py:FACTORY``.

A researcher's agent joins ``locm play``, ``locm tournament`` and ``locm bot`` without
editing the package. The factory is called once per game as ``FACTORY(seed)`` (the
same per-game seed a built-in agent gets: a 64-bit integer, possibly negative, or ``None``
when there is none) and returns

* an agent: an object with ``act(state) -> Action`` (see :mod:`cardarena.locm.agents`), or
* a policy: a callable ``(observation, action_mask) -> action index`` over the arrays of
  the Gymnasium environments (needs numpy), e.g. a trained network.

``FACTORY`` defaults to ``make_agent``. A module name is imported with the current
directory on ``sys.path``; a file path (anything ending in ``.py`` or holding a ``/``)
is loaded from that file. Every failure is an :class:`AgentReferenceError` with one
clear line, raised before any game is played.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from ..engine.state import Action, State

PYTHON_PREFIX = "python:"
DEFAULT_FACTORY = "make_agent"


class AgentReferenceError(ValueError):
    """A ``python:`` reference that cannot give an agent (a usage error)."""


def split_reference(spec: str) -> tuple[str, str]:
    """(module name or file path, factory name) of ``python:TARGET[:FACTORY]``."""
    body = spec.removeprefix(PYTHON_PREFIX).strip()
    target, sep, factory = body.rpartition(":")
    if not sep or "/" in factory or factory.endswith(".py"):
        target, factory = body, DEFAULT_FACTORY  # no factory given (or a Windows-like path)
    if not target:
        raise AgentReferenceError(
            f"{spec!r}: want python:MODULE:FACTORY or python:path/to/file.py:FACTORY"
        )
    if not factory.isidentifier():
        raise AgentReferenceError(f"{spec!r}: {factory!r} is not a Python name")
    return target, factory


def reference_name(spec: str) -> str:
    """A short bot name for a bare reference: the module (or file) name."""
    target, _factory = split_reference(spec)
    if _is_path(target):
        return Path(target).stem
    return target.rpartition(".")[2]


def _is_path(target: str) -> bool:
    return target.endswith(".py") or "/" in target or os.sep in target


def _load_module(spec: str, target: str) -> ModuleType:
    if _is_path(target):
        path = Path(target).expanduser().resolve()
        if path.is_dir():
            raise AgentReferenceError(f"{spec!r}: {target} is a directory, not a Python file")
        if not path.is_file():
            raise AgentReferenceError(f"{spec!r}: no such file {target}")
        # One module per file, under a name that cannot clash with an installed module.
        digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
        name = f"_cardarena_agent_{path.stem}_{digest}"
        if name in sys.modules:
            return sys.modules[name]
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise AgentReferenceError(f"{spec!r}: cannot load {target} as Python")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except (Exception, SystemExit) as error:
            del sys.modules[name]
            raise AgentReferenceError(f"{spec!r}: loading {target} failed: {_why(error)}") from None
        return module
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)  # "importable from the current directory", as python -m does
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as error:
        if error.name and (target == error.name or target.startswith(error.name + ".")):
            raise AgentReferenceError(
                f"{spec!r}: no module named {target!r} (from {cwd} or sys.path)"
            ) from None
        raise AgentReferenceError(f"{spec!r}: importing {target} failed: {_why(error)}") from None
    except (Exception, SystemExit) as error:
        raise AgentReferenceError(f"{spec!r}: importing {target} failed: {_why(error)}") from None


def _why(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def load_factory(spec: str) -> Callable[..., Any]:
    """The factory a reference names (its module imported), or AgentReferenceError."""
    target, factory_name = split_reference(spec)
    module = _load_module(spec, target)
    factory = getattr(module, factory_name, None)
    if factory is None:
        raise AgentReferenceError(f"{spec!r}: {target} has no attribute {factory_name!r}")
    if not callable(factory):
        kind = type(factory).__name__
        raise AgentReferenceError(f"{spec!r}: {factory_name} is not callable (a {kind} object)")
    return factory


def make_reference_agent(spec: str, seed: int | None = None) -> Any:
    """The agent a reference makes for one game (a policy is wrapped as an agent)."""
    factory = load_factory(spec)
    try:
        made = factory(seed)
    except (Exception, SystemExit) as error:
        raise AgentReferenceError(f"{spec!r}: {getattr(factory, '__name__', 'the factory')}"
                                  f"({seed!r}) raised {_why(error)}") from None  # fmt: skip
    if hasattr(made, "act") and callable(made.act):
        if not isinstance(getattr(made, "name", None), str):
            with contextlib.suppress(AttributeError):  # e.g. a class with __slots__
                made.name = reference_name(spec)
        return made
    if callable(made):
        return PolicyAgent(made, reference_name(spec))
    raise AgentReferenceError(
        f"{spec!r}: the factory returned a {type(made).__name__} object, want an agent with "
        "act(state) or a callable (observation, action_mask) -> action"
    )


class PolicyAgent:
    """A ``(observation, action_mask) -> index`` policy playing as an agent.

    The arrays are those of :mod:`cardarena.locm.envs` for the game's version, seen
    by the player to act (nothing hidden); the index is decoded to the engine action.
    """

    reads_own_deck = True
    """``locm bot`` gives it the cards left in its deck, as the environment observation has."""

    def __init__(self, policy: Callable[[Any, Any], Any], name: str = "policy") -> None:
        from ..encoding import (
            encoder as encoding,  # numpy: imported now, not on the first turn's clock
        )

        self.policy = policy
        self.name = name
        self._encoding = encoding
        self._encoders: dict[str, Any] = {}

    def act(self, state: State) -> Action:
        encoder = self._encoders.get(state.rules.version)
        if encoder is None:
            encoder = self._encoders[state.rules.version] = self._encoding.Encoder(state.rules)
        player = state.current_player
        index = self.policy(encoder.observe(state, player), encoder.mask(state))
        return encoder.decode(state, int(index))


__all__ = [
    "PYTHON_PREFIX",
    "AgentReferenceError",
    "PolicyAgent",
    "load_factory",
    "make_reference_agent",
    "reference_name",
    "split_reference",
]
