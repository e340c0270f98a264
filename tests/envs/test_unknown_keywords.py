"""Unknown keyword arguments raise a TypeError in Python's words (a ValueError too), so that
clients probing for optional keywords, such as TorchRL's ``GymEnv`` with ``frameskip``, can
build every env; bad values stay plain ValueErrors."""

import gymnasium as gym
import pytest

import concentration_env  # noqa: F401  (registers the ids)
from concentration_env import concentration_v0, duel_v0
from concentration_env.envs.registration import VERSUS_ID, solitaire_env_ids
from concentration_env.envs.vector import ConcentrationVectorEnv
from concentration_env.envs.versus import VersusEnv
from concentration_env.game.batch import GameBatch, VersusBatch
from concentration_env.game.checks import UnknownFieldError
from concentration_env.game.rules import FIELDS, Rules, resolve_rules

ONE = r"unknown rule field: got an unexpected keyword argument 'frameskip'; allowed: " + ", ".join(FIELDS)

CONSTRUCTORS = {
    "gym.make": lambda **kw: gym.make("Concentration-v0", **kw),
    "gym.make preset": lambda **kw: gym.make("Concentration-TwoDecks-v0", **kw),
    "gym.make versus": lambda **kw: gym.make(VERSUS_ID, **kw),
    "gym.make_vec": lambda **kw: gym.make_vec("Concentration-v0", num_envs=2, **kw),
    "gym.make_vec versus": lambda **kw: gym.make_vec(VERSUS_ID, num_envs=2, **kw),
    "vector": lambda **kw: ConcentrationVectorEnv(2, **kw),
    "versus": lambda **kw: VersusEnv(**kw),
    "aec": lambda **kw: concentration_v0.env(**kw),
    "aec raw": lambda **kw: concentration_v0.raw_env(rules="standard", **kw),
    "duel": lambda **kw: duel_v0.env(**kw),
    "game batch": lambda **kw: GameBatch(2, **kw),
    "versus batch": lambda **kw: VersusBatch(2, num_players=2, **kw),
    "resolve_rules with Rules": lambda **kw: resolve_rules(Rules(), **kw),
}


@pytest.mark.parametrize("make", CONSTRUCTORS.values(), ids=CONSTRUCTORS.keys())
def test_every_constructor_refuses_frameskip_as_python_would(make):
    with pytest.raises(TypeError, match=ONE) as error:
        make(frameskip=4)
    assert isinstance(error.value, ValueError) and type(error.value) is UnknownFieldError


def test_the_sb3_vec_envs_refuse_frameskip_as_python_would():
    pytest.importorskip("stable_baselines3")
    from concentration_env.integrations.sb3 import make_sb3_vec_env

    for kwargs in ({}, {"num_players": 2}, {"opponents": "greedy"}):
        with pytest.raises(TypeError, match=ONE):
            make_sb3_vec_env(2, frameskip=4, **kwargs)


def test_several_unknown_names_are_listed_in_python_words():
    with pytest.raises(TypeError, match=r"^rules: unknown rule fields: got unexpected keyword arguments 'a', 'b'; "):
        resolve_rules(b=1, a=2)


def test_bad_values_stay_value_errors():
    with pytest.raises(ValueError) as error:
        gym.make("Concentration-v0", ranks=0)
    assert not isinstance(error.value, TypeError)


def _make_as_torchrl_does(env_id: str) -> gym.Env:
    """TorchRL's GymEnv passes ``frameskip`` and retries without it only on Python's TypeError."""
    try:
        return gym.make(env_id, frameskip=4)
    except TypeError as error:
        if "unexpected keyword argument 'frameskip'" not in str(error):
            raise
        return gym.make(env_id)


@pytest.mark.parametrize("env_id", (*solitaire_env_ids(), VERSUS_ID))
def test_torchrls_frameskip_retry_builds_every_registered_id(env_id):
    env = _make_as_torchrl_does(env_id)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and info["action_mask"].any()
    env.close()
