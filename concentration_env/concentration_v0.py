"""Concentration for two or more players, PettingZoo classic style: ``env()`` and ``raw_env``.

See :class:`concentration_env.multiplayer.raw_env` for the documentation page.
"""

from concentration_env.multiplayer import env, raw_env

__all__ = ["env", "raw_env"]
