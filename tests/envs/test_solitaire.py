"""The solitaire Gymnasium env: API contract, turn mechanics, observations, chips, seeding."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

from concentration_env import Rules, preset_names
from concentration_env.envs.registration import solitaire_env_ids
from concentration_env.envs.solitaire import ConcentrationEnv


def make(**kwargs):
    return ConcentrationEnv(**kwargs)


def positions_of(env, predicate):
    return [i for i, card in enumerate(env.unwrapped.layout) if predicate(card)]


def find_pair(env, matched=True):
    """Two positions that match (or not) under the env's rules, both still on the table."""
    game = env.unwrapped.game
    faces = env.unwrapped._state.faces[0]
    removed = env.unwrapped._state.removed[0]
    live = np.flatnonzero(~removed)
    for i in live:
        for j in live:
            if i != j and game.match[faces[i], faces[j]] == matched:
                return int(i), int(j)
    raise AssertionError("no such pair")


def test_make_by_id_with_and_without_import():
    env = gym.make("Concentration-v0")
    assert env.unwrapped.rules == Rules()
    env = gym.make(
        "concentration_env:Concentration-v0",
        matching="zebra",
        jokers=True,
        observation_mode="visible",
        render_mode="ansi",
    )
    assert env.unwrapped.rules.matching == "zebra" and env.unwrapped.rules.num_cards == 54
    env = gym.make("Concentration-v0", rules="two_decks")
    obs, info = env.reset(seed=0)
    assert obs["cards"].shape == (104,) and env.unwrapped.rules.shape == (8, 13)
    assert env.spec.max_episode_steps == 10_000


def test_make_without_import_in_fresh_process():
    import subprocess
    import sys

    code = "import gymnasium as gym; e = gym.make('concentration_env:Concentration-v0'); print(e.reset(seed=1)[0]['cards'].shape)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(52,)"


@pytest.mark.parametrize("env_id", solitaire_env_ids())
@pytest.mark.parametrize("mode", ["memory", "visible"])
def test_gymnasium_check_env(env_id, mode):
    env = gym.make(env_id, observation_mode=mode)
    gym_check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("preset", preset_names())
@pytest.mark.parametrize("mode", ["memory", "visible"])
def test_sb3_check_env(preset, mode):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3_checker.check_env(ConcentrationEnv(rules=preset, observation_mode=mode), warn=True)


def test_turn_of_two_flips_match_and_miss():
    env = make()
    obs, info = env.reset(seed=3)
    assert info["turns"] == 0 and info["pairs"] == 0 and obs["action_mask"].dtype == np.int8
    i, j = find_pair(env, matched=False)
    obs, reward, term, trunc, info = env.step(i)
    assert reward == 0 and "matched" not in info and obs["face_up"][i] == 1 and obs["action_mask"][i] == 0
    obs, reward, term, trunc, info = env.step(j)
    assert reward == -1 and info["matched"] is False and info["mismatches"] == 1 and info["turns"] == 1
    # the second flip's observation shows both cards face up ...
    assert obs["face_up"][i] == obs["face_up"][j] == 1
    assert obs["cards"][i] > 0 and obs["cards"][j] > 0
    # ... and both are legal for the next flip, which turns them face down
    assert obs["action_mask"][i] == obs["action_mask"][j] == 1
    k, partner = find_pair(env, matched=True)
    obs, *_ = env.step(k)
    assert obs["face_up"].sum() == 1 and obs["face_up"][k] == 1
    obs, reward, term, trunc, info = env.step(partner)
    assert reward == 0 and info["matched"] is True and info["pairs"] == 1
    assert obs["removed"][k] == obs["removed"][partner] == 1 and obs["action_mask"][k] == 0
    assert obs["cards"][k] > 0  # captured cards are public


def test_memory_versus_visible_observations():
    for mode, keeps in (("memory", True), ("visible", False)):
        env = make(observation_mode=mode)
        env.reset(seed=5)
        i, j = find_pair(env, matched=False)
        env.step(i)
        env.step(j)
        others = [p for p in range(52) if p not in (i, j)]
        obs, *_ = env.step(others[0])
        assert bool(obs["cards"][i] > 0) is keeps and bool(obs["cards"][j] > 0) is keeps
        assert obs["face_up"][i] == 0 and obs["cards"][others[0]] > 0


def test_cards_encode_face_ids():
    env = make()
    env.reset(seed=11)
    obs, *_ = env.step(7)
    assert env.unwrapped.faces[obs["cards"][7] - 1] == env.unwrapped.layout[7]


@pytest.mark.parametrize("second", [False, True])
def test_illegal_flip_end_turn(second):
    env = make()
    env.reset(seed=2)
    k, partner = find_pair(env, matched=True)
    env.step(k)
    env.step(partner)  # captured
    if second:
        env.step(next(p for p in range(52) if p not in (k, partner)))
    obs, reward, term, trunc, info = env.step(k)  # flipping a captured card
    assert reward == -1 and info["mismatches"] == 1 and info["matched"] is False
    assert info["turns"] == 2 and obs["face_up"].sum() == 0


def test_flipping_the_face_up_card_again_is_illegal():
    env = make()
    env.reset(seed=2)
    env.step(4)
    obs, reward, term, trunc, info = env.step(4)
    assert reward == -1 and info["mismatches"] == 1 and obs["face_up"].sum() == 0


def test_illegal_flip_raise_leaves_state_unchanged():
    env = make(illegal_action="raise")
    env.reset(seed=2)
    env.step(4)
    before = env.unwrapped._state.copy()
    with pytest.raises(ValueError, match="position 4"):
        env.step(4)
    after = env.unwrapped._state
    for name in ("first", "seen", "removed", "mismatches", "turns"):
        np.testing.assert_array_equal(getattr(before, name), getattr(after, name))


def test_chips_lose_the_game():
    env = make(rules="solitaire_chips")
    env.reset(seed=0)
    terminated, misses = False, 0
    while not terminated:
        i, j = find_pair(env, matched=False)
        env.step(i)
        _, reward, terminated, _, info = env.step(j)
        misses += 1
    assert misses == 18 and info["won"] is False and info["mismatches"] == 18


def test_clearing_the_table_wins():
    env = make(ranks=3)
    env.reset(seed=9)
    terminated = False
    while not terminated:
        i, j = find_pair(env, matched=True)
        env.step(i)
        _, reward, terminated, _, info = env.step(j)
        assert reward == 0
    assert info["won"] is True and info["pairs"] == 6 and info["mismatches"] == 0


def test_step_after_end_asks_for_reset():
    env = make(ranks=1)
    env.reset(seed=0)
    while True:
        i, j = find_pair(env, matched=True)
        env.step(i)
        if env.step(j)[2]:
            break
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset()
    env.step(0)


@pytest.mark.parametrize(
    "action, error",
    [
        (52, ValueError),
        (-1, ValueError),
        (1.5, TypeError),
        (None, TypeError),
        ("3", TypeError),
        (True, TypeError),
        (np.array([1, 2]), ValueError),
    ],
)
def test_bad_actions_name_the_range(action, error):
    env = make()
    env.reset(seed=0)
    with pytest.raises(error, match="0..51"):
        env.step(action)
    assert env.unwrapped._state.first[0] == -1


def test_numpy_actions_accepted():
    env = make()
    env.reset(seed=0)
    env.step(np.int64(3))
    env.step(np.array(4))


def test_checkerboard_backs_are_observed():
    env = make(rules="checkerboard")
    obs, _ = env.reset(seed=1)
    layout = env.unwrapped.layout
    assert obs["back"].sum() == 52
    for back in (0, 1):
        cards = sorted(str(c) for c, b in zip(layout, obs["back"]) if b == back)
        assert len(set(cards)) == 52  # each back holds exactly one full pack


def test_seeding_is_deterministic():
    def trajectory(seed):
        env = make(observation_mode="visible")
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        out = [obs["cards"].copy()]
        for _ in range(60):
            action = rng.choice(np.flatnonzero(obs["action_mask"]))
            obs, reward, *_ = env.step(action)
            out.append(obs["cards"].copy())
        return np.array(out), env.unwrapped.layout

    a, la = trajectory(7)
    b, lb = trajectory(7)
    c, lc = trajectory(8)
    np.testing.assert_array_equal(a, b)
    assert la == lb and la != lc


def test_reset_without_seed_continues_the_generator():
    env = make()
    env.reset(seed=1)
    first = env.unwrapped.layout
    env.reset()
    second = env.unwrapped.layout
    env.reset(seed=1)
    assert env.unwrapped.layout == first and first != second


def test_action_masks_match_info():
    env = make()
    _, info = env.reset(seed=0)
    env.step(0)
    assert env.unwrapped.action_masks().dtype == bool
    assert not env.unwrapped.action_masks()[0]


def test_ansi_render_distinguishes_card_states():
    env = make(render_mode="ansi", ranks=2)
    env.reset(seed=0)
    k, partner = find_pair(env, matched=True)
    env.step(k)
    env.step(partner)
    env.step(next(p for p in range(8) if p not in (k, partner)))
    text = env.render()
    assert "##" in text and "pairs 1/4" in text
    face_up_card = str(env.unwrapped.layout[next(p for p in range(8) if p not in (k, partner))])
    assert face_up_card in text


def test_solitaire_env_rejects_players_and_bad_modes():
    with pytest.raises(ValueError, match="num_players=2"):
        make(num_players=2)
    with pytest.raises(ValueError, match="observation_mode"):
        make(observation_mode="xray")
    with pytest.raises(ValueError, match="render_mode"):
        make(render_mode="opengl")


@pytest.mark.parametrize("preset", preset_names())
@pytest.mark.parametrize("mode", ["memory", "visible"])
def test_random_legal_play_clears_the_table(preset, mode):
    """Many games of random legal play end with every card captured; invariants hold."""
    env = make(rules=preset, observation_mode=mode)
    game = env.unwrapped.game
    rng = np.random.default_rng(0)
    for episode in range(3):
        obs, info = env.reset(seed=episode)
        deck = sorted(env.unwrapped.layout)
        terminated, flips = False, 0
        while not terminated:
            state = env.unwrapped._state
            expected_mask = (~state.removed[0]) & (np.arange(game.num_cards) != state.first[0])
            np.testing.assert_array_equal(obs["action_mask"].astype(bool), expected_mask)
            assert sorted(env.unwrapped.layout) == deck  # cards are conserved
            obs, reward, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(obs["action_mask"])))
            flips += 1
        captured = env.unwrapped._state.removed[0]
        if info["won"]:
            assert captured.all() and info["pairs"] == game.num_cards // 2
        else:
            assert info["mismatches"] == env.unwrapped.rules.max_mismatches
        assert reward <= 0 and info["mismatches"] <= flips
