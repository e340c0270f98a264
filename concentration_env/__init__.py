"""Concentration (Memory, Pelmanism, Pairs) as reinforcement-learning environments.

Importing the package registers the Gymnasium ids (``Concentration-v0`` and one per rule
preset). ``gymnasium.make("concentration_env:Concentration-v0")`` imports it for you.
"""

from concentration_env.cards import Card
from concentration_env.registration import register_envs
from concentration_env.rules import Rules, preset_names

__all__ = ["Card", "Rules", "preset_names"]
__version__ = "0.1.0"

register_envs()
