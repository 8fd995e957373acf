"""Gymnasium and PettingZoo environments for LOCM 1.0, 1.2 and 1.5.

Importing this package registers the Gymnasium ids (it needs the ``envs`` extra:
``pip install ".[envs]"``)::

    cardarena/LOCM-v0               the whole game: deck building, then battle
    cardarena/LOCM-deckbuilding-v0  deck building; the battle is played by policies
    cardarena/LOCM-battle-v0        battle; the decks are built by policies

``import cardarena`` and the engine never import this package (nor gymnasium). Without
gymnasium, :mod:`.encoding` (numpy only) still imports: the learned agent and policy
agents given by reference use it at play time.
"""

from __future__ import annotations

from typing import Any

from ..encoding.encoder import (
    ActionLayout,
    Encoder,
    ObservationLayout,
    action_layout,
    observation_layout,
)

try:
    import gymnasium as gym
except ImportError:  # the environments need the envs extra; the encoding does not
    gym = None  # type: ignore[assignment]
else:
    from .gym_env import LOCMBattleEnv, LOCMDeckBuildingEnv, LOCMEnv, MaskedDiscrete

ENV_IDS = ("cardarena/LOCM-v0", "cardarena/LOCM-deckbuilding-v0", "cardarena/LOCM-battle-v0")


def _register() -> None:
    entry = "cardarena.locm.envs.gym_env:"
    vector_entry = "cardarena.locm.envs.vector_env:"
    classes = ("LOCMEnv", "LOCMDeckBuildingEnv", "LOCMBattleEnv")
    vector_classes = ("LOCMVectorEnv", "LOCMVectorDeckBuildingEnv", "LOCMVectorBattleEnv")
    for env_id, name, vector_name in zip(ENV_IDS, classes, vector_classes, strict=True):
        if env_id not in gym.registry:
            # No wrappers: the env checks its own call order, and env.action_masks() stays
            # reachable on what gymnasium.make returns. gymnasium.make_vec builds the batch
            # engine's vector env (numba; imported only then).
            gym.register(
                id=env_id,
                entry_point=entry + name,
                vector_entry_point=vector_entry + vector_name,
                disable_env_checker=True,
                order_enforce=False,
            )


if gym is not None:
    _register()
else:

    def __getattr__(name: str) -> Any:
        if name in ("LOCMBattleEnv", "LOCMDeckBuildingEnv", "LOCMEnv", "MaskedDiscrete"):
            raise ImportError(
                f"cardarena.locm.envs.{name} needs gymnasium: pip install "
                '".[envs]" in the cardarena folder, or pip install gymnasium'
            )
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def aec_env(version: str = "1.5", **kwargs: object):  # type: ignore[no-untyped-def]
    """The PettingZoo AEC environment (imports pettingzoo on first use)."""
    from .pettingzoo_env import LOCMAECEnv

    return LOCMAECEnv(version, **kwargs)  # type: ignore[arg-type]


__all__ = [
    "ENV_IDS",
    "ActionLayout",
    "Encoder",
    "LOCMBattleEnv",
    "LOCMDeckBuildingEnv",
    "LOCMEnv",
    "MaskedDiscrete",
    "ObservationLayout",
    "action_layout",
    "aec_env",
    "observation_layout",
]
