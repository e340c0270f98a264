"""The environments: thin Gymnasium and PettingZoo adapters over the game layer.

- :mod:`.solitaire`: ``Concentration-v0`` (Gymnasium), one game;
- :mod:`.vector`: the native Gymnasium ``VectorEnv`` of ``gym.make_vec``;
- :mod:`.versus`: ``ConcentrationVs-v0``, one seat against policies;
- :mod:`.multiplayer`: the PettingZoo AEC env for 2..N players (``concentration_v0``);
- :mod:`.duel`: the Memory Duel AEC env (``duel_v0``);
- :mod:`.spaces`, :mod:`.features`, :mod:`.opponents`, :mod:`.registration`: the spaces,
  per-card features for learners, policies from names and files, and the registered ids.
"""
