"""Memory Duel, PettingZoo classic style: ``env()`` and ``raw_env``.

See :class:`concentration_env.envs.duel.raw_env` for the documentation page.
"""

from concentration_env.envs.duel import env, raw_env

__all__ = ["env", "raw_env"]
