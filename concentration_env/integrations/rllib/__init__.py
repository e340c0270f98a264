"""Scale-out training with RLlib on Ray: the multi-player game as an RLlib multi-agent env,
PPO with action masking over per-card networks, self-play and league opponents, fault-tolerant
checkpointed runs, and playback of a trained checkpoint.

Nothing here is imported by ``concentration_env`` itself, and Ray is imported only by the
modules that need it (:mod:`.module`, :mod:`.multiagent`) and inside functions, so the
config and the observation encodings work without the ``rllib`` extra
(``pip install -e ".[rllib]"``).

- :mod:`.config`: :class:`RLlibConfig`, one run, read from YAML (``network`` and its tier);
- :mod:`.env`: each network's observation encoding, :class:`MaskedFlatObservation`;
- :mod:`.multiagent`: the turn-based ``MultiAgentEnv`` (self-play seats or league roles);
- :mod:`.module`: :class:`~.module.CardRLModule`, the per-card and attention networks;
- :mod:`.training`: the PPO config, the league's snapshot pool, checkpoints and resume;
- :mod:`.policy`: :class:`RLlibPolicy`, a checkpoint behind the baselines' protocol.
"""

from __future__ import annotations

from concentration_env.integrations.rllib.config import (
    FROZEN_PREFIX,
    LEARNER,
    NETWORK_TIERS,
    POLICY_SHARING,
    SHARED_MODULE,
    RLlibConfig,
)
from concentration_env.integrations.rllib.env import (
    ENV_NAME,
    MASK_KEY,
    OBS_KEY,
    Encoding,
    MaskedFlatObservation,
    encode,
    flat_space,
    observed_space,
)
from concentration_env.integrations.rllib.policy import RLlibPolicy
from concentration_env.integrations.rllib.training import (
    CONFIG_FILE,
    INSTALL_HINT,
    build_algorithm,
    episode_stats,
    latest_checkpoint,
    make_multiagent_env,
    ppo_config,
    read_progress,
    require_ray,
    save_checkpoint,
    seat_mapping,
    shared_mapping,
    train,
)

__all__ = [
    "CONFIG_FILE",
    "ENV_NAME",
    "FROZEN_PREFIX",
    "INSTALL_HINT",
    "LEARNER",
    "MASK_KEY",
    "NETWORK_TIERS",
    "OBS_KEY",
    "POLICY_SHARING",
    "SHARED_MODULE",
    "Encoding",
    "MaskedFlatObservation",
    "RLlibConfig",
    "RLlibPolicy",
    "build_algorithm",
    "encode",
    "episode_stats",
    "flat_space",
    "latest_checkpoint",
    "make_multiagent_env",
    "observed_space",
    "ppo_config",
    "read_progress",
    "require_ray",
    "save_checkpoint",
    "seat_mapping",
    "shared_mapping",
    "train",
]
