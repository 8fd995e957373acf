"""Legends of Code and Magic (LOCM) 1.0, 1.2 and 1.5, faithful to the official referees.

>>> from cardarena.locm import State
>>> state = State.new("1.5", {"seed": 42})
>>> state.current_player, len(state.legal_actions())
(0, 120)
"""

from .engine.cards import Area, Card, CardType
from .engine.errors import InvalidStateError
from .engine.params import GameParameters, ParameterError, parameter_names, resolve_parameters
from .engine.rules import DEFAULT_VERSION, RULESETS, VERSIONS, RuleSet, ruleset
from .engine.state import (
    PASS,
    Action,
    ActionType,
    CardInstance,
    Creature,
    EndReason,
    IllegalActionError,
    Phase,
    Player,
    State,
)
from .engine.text import player_input
from .referee.protocol_game import ProtocolError, ProtocolGame, Request

__all__ = [
    "DEFAULT_VERSION",
    "PASS",
    "RULESETS",
    "VERSIONS",
    "Action",
    "ActionType",
    "Area",
    "Card",
    "CardInstance",
    "CardType",
    "Creature",
    "EndReason",
    "GameParameters",
    "IllegalActionError",
    "InvalidStateError",
    "ParameterError",
    "Phase",
    "Player",
    "ProtocolError",
    "ProtocolGame",
    "Request",
    "RuleSet",
    "State",
    "parameter_names",
    "player_input",
    "resolve_parameters",
    "ruleset",
]
