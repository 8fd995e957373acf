"""Legends of Code and Magic (LOCM) 1.0, 1.2 and 1.5, faithful to the official referees.

>>> from cardarena.locm import State
>>> state = State.new("1.5", {"seed": 42})
>>> state.current_player, len(state.legal_actions())
(0, 120)
"""

from .cards import Area, Card, CardType
from .params import GameParameters, ParameterError, parameter_names, resolve_parameters
from .protocol import ProtocolError, ProtocolGame, Request, player_input
from .rules import DEFAULT_VERSION, RULESETS, VERSIONS, RuleSet, ruleset
from .state import (
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
