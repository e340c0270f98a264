"""The game layer: the rules of Concentration on plain arrays, for every env and learner.

Everything that decides what a flip does lives here: the cards and the frozen ``Rules``
(:mod:`.cards`, :mod:`.rules`), and the core, imported as :mod:`.core`: the rules
compiled once into a face deck and a boolean match table (:mod:`.compile`), the
batch-first game state (:mod:`.state`), the numba-compiled flip (:mod:`.kernels`) and the
step and observe functions with the facts derived from a flip (:mod:`.step`); winners
and tie-breaks (:mod:`.scoring`), the Memory Duel's rules (:mod:`.duel_rules`), seats,
seeds and observation modes (:mod:`.seats`), the policy protocols (:mod:`.policy`) and
the engines that step many games at once (:mod:`.batch`).

Contract (checked by ``tests/test_layout.py``): nothing under this package imports
Gymnasium, PettingZoo or any learning framework (torch, Stable-Baselines3, Ray), nor any
other part of ``concentration_env``. The adapters in :mod:`concentration_env.envs` and
:mod:`concentration_env.integrations` format what this layer decides.
"""
