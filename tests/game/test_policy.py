"""The policy protocols of the game layer."""

import numpy as np

from baselines import make_policy
from concentration_env import Rules
from concentration_env.game.policy import BatchPolicy, Policy, is_stationary


class Fixed:
    def reset(self, seed=None):
        pass

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])


def test_stationary_only_when_a_policy_says_so():
    rules = Rules(ranks=2)
    assert [is_stationary(make_policy(name, rules)) for name in ("random", "greedy", "safe_first", "optimal")] == [
        False,
        True,
        True,
        True,
    ]
    assert not is_stationary(make_policy("forgetful", rules))  # it forgets at random
    assert not is_stationary(Fixed())  # saying nothing means not stationary
    said = Fixed()
    said.stationary = "yes"  # only True itself counts
    assert not is_stationary(said)


def test_protocols_are_checked_by_shape():
    assert isinstance(Fixed(), Policy) and not isinstance(Fixed(), BatchPolicy)
    assert isinstance(make_policy("greedy", Rules(ranks=2)), BatchPolicy)
