"""Adapters for RL libraries: :mod:`.sb3` (Stable-Baselines3 VecEnvs, ``train`` extra) and
:mod:`.rllib` (RLlib, ``rllib`` extra, in its own venv). Neither is imported by
``import concentration_env``."""
