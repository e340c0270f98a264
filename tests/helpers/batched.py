"""Shared cases of the batched-env tests: rule sets, a random policy, exact comparison."""

import numpy as np

# Small decks so that episodes end often: wins, chip losses and time-limit truncations.
RULE_SETS = [
    {"rules": "toddler"},
    {"rules": "solitaire_chips", "ranks": 3, "max_mismatches": 4},
    {"rules": "checkerboard", "ranks": 2, "observation_mode": "visible"},
    {"deck": "pictures", "pairs": 6, "turn_policy": "one_flip"},
]


def assert_same(ours, theirs, where=""):
    """Recursive exact equality of step results: same keys, types, dtypes, shapes and values."""
    if isinstance(ours, (tuple, list)):
        assert len(ours) == len(theirs), where
        for index, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{where}[{index}]")
    elif isinstance(ours, dict):
        assert set(ours) == set(theirs), (where, sorted(ours), sorted(theirs))
        for key in ours:
            assert_same(ours[key], theirs[key], f"{where}/{key}")
    elif isinstance(ours, np.ndarray) and ours.dtype == object:
        assert len(ours) == len(theirs), where
        for a, b in zip(ours, theirs):
            assert (a is None) == (b is None), where
            if a is not None:
                assert_same(a, b, where + "[]")
    else:
        assert isinstance(ours, np.ndarray) or type(ours) is type(theirs), (where, type(ours), type(theirs))
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (where, ours.dtype, theirs.dtype)
        np.testing.assert_array_equal(ours, theirs, err_msg=where)


def random_actions(rng, masks, step):
    """A random legal flip per game, with an occasional illegal one (a face-up or captured card)."""
    actions = np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in masks])
    if step % 23 == 7:
        actions[1] = np.flatnonzero(masks[1] == 0)[0] if (masks[1] == 0).any() else actions[1]
    return actions


def play_alongside(ours, reference, steps, seed, compare):
    """Step a batched SB3 VecEnv and its ``DummyVecEnv`` reference with the same random flips
    (checking that both offer the same legal flips), calling ``compare(result, expected,
    where)`` after every step; returns how many episodes ended."""
    rng = np.random.default_rng(seed)
    ends = 0
    for step in range(steps):
        masks = np.stack(ours.env_method("action_masks"))
        np.testing.assert_array_equal(masks, np.stack([env.unwrapped.action_masks() for env in reference.envs]))
        actions = random_actions(rng, masks, step)
        result = ours.step(actions)
        compare(result, reference.step(actions), f"step {step}")
        ends += result[2].sum()
    return ends
