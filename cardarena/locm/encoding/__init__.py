"""The fixed-size action and observation encoding of LOCM states (numpy arrays).

Shared by the agents that play from arrays (``builtin:learned``, policies given by
reference) and the environments, so it sits right above the engine and below both.
It needs numpy; the engine itself does not.
"""

from .encoder import ActionLayout, Encoder, ObservationLayout, action_layout, observation_layout

__all__ = ["ActionLayout", "Encoder", "ObservationLayout", "action_layout", "observation_layout"]
