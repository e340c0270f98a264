"""Concentration (Memory, Pelmanism, Pairs) as reinforcement-learning environments.

Importing the package registers the Gymnasium ids (``Concentration-v0``, one per rule
preset, and ``ConcentrationVs-v0`` against opponents) and the PettingZoo AEC ids in the
``concentration`` namespace (``concentration/Concentration-v0``, one per preset, and
``concentration/Duel-v0``). ``gymnasium.make("concentration_env:Concentration-v0")``
imports it for you; the PettingZoo classic-style modules are ``concentration_v0`` and
``duel_v0``.

The package is in layers, one folder each: ``game/`` (the rules on plain arrays, no RL
framework), ``envs/`` (the Gymnasium and PettingZoo adapters), ``render/`` (drawing),
``play/`` (games between seats, the terminal game), ``integrations/`` (Stable-Baselines3,
RLlib) and ``training/`` (learners; needs the ``train`` extra).
"""

from concentration_env import moved
from concentration_env.envs.registration import register_envs
from concentration_env.game.cards import Card
from concentration_env.game.rules import Rules, preset_names

__all__ = ["Card", "Rules", "preset_names"]
__version__ = "0.2.0"

register_envs()
moved.install()
