"""Per-card features: each one recomputed from the hidden game state and compared."""

import re

import gymnasium as gym
import numpy as np
import pytest

import concentration_env
from concentration_env.envs.features import (
    FEATURE_NAMES,
    NUM_CARD_FEATURES,
    CardFeatures,
    count_features,
    count_lead_features,
    count_width,
    features_space,
    lead_width,
)
from concentration_env.game import core

RULE_SETS = [
    {"rules": "toddler"},  # any suit: four cards per rank, several partners
    {"deck": "pictures", "pairs": 6},
    {"ranks": 3, "matching": "zebra"},
]


def expected_features(game, state, memory: bool) -> dict[str, np.ndarray]:
    """The documented features from the god view of one game (batch row 0)."""
    faces, removed = state.faces[0], state.removed[0]
    up = core.face_up(state)[0]
    known = (state.seen[0] if memory else up) & ~removed
    n = len(faces)
    mid_turn = state.first[0] != core.NONE
    pairs = known[:, None] & known[None, :] & game.match[faces[:, None], faces[None, :]] & ~np.eye(n, dtype=bool)
    matches_first = np.zeros(n, dtype=bool)
    if mid_turn:
        first = state.first[0]
        matches_first = known & game.match[faces[first], faces] & (np.arange(n) != first)
    return {
        "unknown": ~known & ~removed,
        "known": known & ~up,
        "first": (np.arange(n) == state.first[0]) & mid_turn,
        "face_up": up,
        "removed": removed,
        "legal": core.legal_mask(state)[0],
        "matches_first": matches_first,
        "known_pair": pairs.any(axis=1),
        "mid_turn": np.full(n, mid_turn),
        "match_known": np.full(n, matches_first.any()),
        "pair_known": np.full(n, pairs.any()),
        "unknown_frac": np.full(n, (~known & ~removed).mean()),
        "removed_frac": np.full(n, removed.mean()),
    }


@pytest.mark.parametrize("mode", ["memory", "visible"])
@pytest.mark.parametrize("fields", RULE_SETS)
def test_features_match_the_god_view_through_random_games(fields, mode):
    env = CardFeatures(gym.make("Concentration-v0", observation_mode=mode, **fields))
    assert env.observation_space.shape == (env.unwrapped.game.num_cards, NUM_CARD_FEATURES)
    rng = np.random.default_rng(0)
    seen_matches = 0
    for episode in range(2):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            assert env.observation_space.contains(obs)
            want = expected_features(env.unwrapped.game, env.unwrapped._state, mode == "memory")
            for k, name in enumerate(FEATURE_NAMES):
                np.testing.assert_allclose(obs[:, k], want[name], err_msg=name)
            seen_matches += int(want["matches_first"].any())
            obs, _, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
            done = terminated or truncated
    if mode == "memory":
        assert seen_matches > 0  # the interesting feature was exercised


def expected_counts(game, state) -> tuple[int, int]:
    """Unseen pairs and lone known cards from the god view (memory mode, batch row 0)."""
    faces, removed = state.faces[0], state.removed[0]
    known = (state.seen[0] | core.face_up(state)[0]) & ~removed
    n = len(faces)
    partners = game.match[faces[:, None], faces[None, :]] & ~np.eye(n, dtype=bool)
    lone = known & ~(partners & known[None, :]).any(axis=1)
    return (int((~known & ~removed).sum()) - int(lone.sum())) // 2, int(lone.sum())


@pytest.mark.parametrize("fields", [{"deck": "pictures", "pairs": 6}, {}, {"rules": "toddler"}])
def test_count_features_match_the_god_view_through_random_games(fields):
    env = CardFeatures(gym.make("Concentration-v0", **fields), "count_features")
    game = env.unwrapped.game
    width = count_width(game)
    assert env.observation_space.shape == (game.num_cards, NUM_CARD_FEATURES + 2 * width)
    one_partner = np.all(game.match.sum(axis=1)[game.deck] == 1)  # every face pairs with one face
    rng = np.random.default_rng(3)
    obs, info = env.reset(seed=4)
    counts_seen = set()
    for _ in range(400):
        state = env.unwrapped._state
        unseen, lone = expected_counts(game, state)
        blocks = obs[:, NUM_CARD_FEATURES:].reshape(game.num_cards, 2, width)
        np.testing.assert_array_equal(blocks.sum(axis=2), 1)  # one-hot, on every row alike
        np.testing.assert_array_equal(blocks.argmax(axis=2), np.tile([unseen, lone], (game.num_cards, 1)))
        if one_partner:  # the count is then the pairs of which no card is known
            known = state.seen[0] | core.face_up(state)[0]
            untouched = [f for f in set(state.faces[0]) if not (known | state.removed[0])[state.faces[0] == f].any()]
            assert unseen == len(untouched)
        counts_seen.add((unseen, lone))
        want = expected_features(game, state, memory=True)
        for k, name in enumerate(FEATURE_NAMES):  # card_features come first, unchanged
            np.testing.assert_allclose(obs[:, k], want[name], err_msg=name)
        obs, _, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
        if terminated or truncated:
            obs, info = env.reset()
    assert len(counts_seen) > 10


def test_action_masks_reach_through_the_wrapper():
    env = CardFeatures(gym.make("Concentration-v0", rules="toddler"))
    _, info = env.reset(seed=1)
    np.testing.assert_array_equal(env.get_wrapper_attr("action_masks")(), info["action_mask"].astype(bool))


def test_count_lead_features_add_the_one_hot_lead_of_the_observer():
    game = core.compile_rules(concentration_env.Rules(ranks=3, num_players=3))
    env = gym.make("ConcentrationVs-v0", rules=game.rules, opponents="greedy")
    obs, _ = env.reset(seed=0)
    batch = {key: np.repeat(np.asarray(value)[None], 4, axis=0) for key, value in obs.items()}
    batch["scores"] = np.array([[2, 1, 0], [0, 3, 1], [1, 1, 1], [0, 0, 40]])
    features = count_lead_features(game, batch)
    assert features.shape[1:] == features_space(game, "count_lead_features").shape
    np.testing.assert_array_equal(features[..., : features.shape[2] - lead_width(game)], count_features(game, batch))
    lead = features[..., features.shape[2] - lead_width(game) :]
    assert (lead.sum(axis=2) == 1).all() and (lead == lead[:, :1]).all()  # one value, on every row
    reach = count_width(game) - 1  # 6 pairs: leads -6 .. 6, clipped (the last one from -40)
    assert reach == 6 and lead[:, 0].argmax(axis=1).tolist() == [reach + 1, reach - 3, reach, 0]
    del batch["scores"]
    with pytest.raises(ValueError, match="'count_lead_features' reads the scores, which these observations lack"):
        count_lead_features(game, batch)


@pytest.mark.parametrize("feature_set", ["card_features", "count_features"])
def test_vec_wrapper_equals_the_single_env_wrapper(feature_set):
    from stable_baselines3.common.vec_env import DummyVecEnv

    from concentration_env.envs.features import vec_card_features

    rules = concentration_env.Rules.from_preset("toddler")
    plain = DummyVecEnv([lambda: gym.make("Concentration-v0", rules=rules)] * 2)
    wrapped = DummyVecEnv([lambda: CardFeatures(gym.make("Concentration-v0", rules=rules), feature_set)] * 2)
    batched = vec_card_features(plain, rules, feature_set)
    for venv in (wrapped, batched):
        venv.seed(5)
    a, b = wrapped.reset(), batched.reset()
    rng = np.random.default_rng(2)
    for _ in range(120):
        np.testing.assert_array_equal(a, b)
        masks = np.stack(wrapped.env_method("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        a, _, done_a, info_a = wrapped.step(actions)
        b, _, done_b, info_b = batched.step(actions)
        np.testing.assert_array_equal(done_a, done_b)
        for i in np.flatnonzero(done_a):
            np.testing.assert_array_equal(info_a[i]["terminal_observation"], info_b[i]["terminal_observation"])


def test_unknown_feature_set_is_one_clear_error():
    with pytest.raises(
        ValueError,
        match=re.escape("feature_set='counts'; allowed: card_features | count_features | count_lead_features"),
    ):
        CardFeatures(gym.make("Concentration-v0"), "counts")
