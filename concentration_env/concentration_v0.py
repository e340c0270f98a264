"""Concentration for two or more players, PettingZoo classic style: ``env()`` and ``raw_env``.

See :class:`concentration_env.envs.multiplayer.raw_env` for the documentation page.
"""

from concentration_env.envs.multiplayer import env, raw_env

__all__ = ["env", "raw_env"]
