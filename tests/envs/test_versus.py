"""The play-against-opponents Gymnasium env (ConcentrationVs-v0)."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

from concentration_env.envs.versus import VersusEnv
from concentration_env.game.batch import VersusBatch
from tests.helpers.tables import RandomPolicy, short_rules

CHECK_CONFIGS = [
    dict(num_players=2, ranks=6),
    dict(num_players=3, rules=short_rules("checkerboard"), observation_mode="visible"),
    dict(num_players=4, rules=short_rules("jokers"), seat=2, reward_mode="win_loss"),
]


def make(**kwargs):
    kwargs.setdefault("opponents", RandomPolicy())
    return VersusEnv(**kwargs)


def play_to_the_end(env, seed):
    """Play the learner's seat with random legal flips; return total reward and the last info."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    total, terminated = 0.0, False
    while not terminated:
        assert obs["action_mask"].any(), "the learner is only asked to act on its turn"
        assert np.array_equal(env.action_masks(), obs["action_mask"].astype(bool))
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        total += reward
    return total, info


@pytest.mark.parametrize("kwargs", CHECK_CONFIGS)
def test_gymnasium_and_sb3_check_env(kwargs):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    gym_check_env(make(**kwargs), skip_render_check=True)
    sb3_checker.check_env(make(**kwargs), warn=True)


def test_registered_id_and_flat_observation():
    env = gym.make("ConcentrationVs-v0", num_players=3, opponents=RandomPolicy(), ranks=3)
    obs, info = env.reset(seed=0)
    assert set(obs) == {"cards", "face_up", "removed", "action_mask", "scores"}
    assert obs["action_mask"].dtype == np.int8 and info["action_mask"].dtype == np.int8
    assert obs["scores"].shape == (3,) and env.observation_space.contains(obs)
    assert env.spec.max_episode_steps == 10_000


@pytest.mark.parametrize("seat, first_player", [(0, 0), (1, 0), (2, 1)])
def test_learner_reward_is_its_points_and_opponents_move_in_between(seat, first_player):
    env = make(num_players=3, seat=seat, first_player=first_player, ranks=4)
    for seed in range(3):
        total, info = play_to_the_end(env, seed)
        assert total == info["scores"][seat] == env.unwrapped.scores_by_name()[info["agent"]]
        assert info["scores"].sum() == 8 and info["winners"].any()
        assert env.unwrapped.winner_names() == [f"player_{s}" for s in np.flatnonzero(info["winners"])]
        assert not info["action_mask"].any()


def test_margin_return_is_the_final_margin_when_the_opponent_moves_first():
    """Opponent captures before the learner's first flip count against it (on its first step)."""
    env = make(num_players=2, seat=1, ranks=2, reward_mode="margin")
    early_captures = 0
    for seed in range(40):
        env.reset(seed=seed)
        early_captures += env.unwrapped._table.scores_by_name()["player_0"] > 0
        total, info = play_to_the_end(env, seed)
        assert total == info["scores"][1] - info["scores"][0], seed
    assert early_captures  # some games had an opponent capture before the learner moved


class OutOfRangePolicy(RandomPolicy):
    """Plays a position that no table has."""

    def act(self, observation, action_mask):
        return 99

    def act_rows(self, observations, rows):
        return np.full(len(rows), 99)

    def reset_batch(self, seeds):
        pass

    def reset_rows(self, rows, seeds):
        pass

    def __repr__(self):
        return "OutOfRangePolicy()"


def test_an_opponent_playing_an_illegal_flip_is_named():
    env = make(num_players=3, seat=1, ranks=3, opponents=[RandomPolicy(), OutOfRangePolicy()])
    env.reset(seed=0)  # seat 0 plays legally; seat 2 plays after the learner
    with pytest.raises(ValueError, match=r"opponent in seat 2 \(player_2\), policy OutOfRangePolicy\(\), played 99"):
        for _ in range(2):  # the learner's turn, then seat 2 is asked
            env.step(int(np.flatnonzero(env.action_masks())[0]))
    table = env.unwrapped._table
    assert table.agent_selection == "player_2" and int(table._state.player[0]) == 2  # its flip was not played


def test_a_batched_opponent_playing_an_illegal_flip_is_named_and_the_seats_kept():
    batch = VersusBatch(2, num_players=2, ranks=3, seats=[0, 1], opponents=OutOfRangePolicy())
    with pytest.raises(ValueError, match=r"opponent in seat 0 \(player_0\) of game 1, policy OutOfRangePolicy\(\)"):
        batch.reset(seed=0)  # game 1's opponent moves first
    assert not batch.state.done.any()  # game 0, waiting for its learner, is not left marked done
    assert batch.state.player.tolist() == [0, 0]


def test_win_loss_reward_matches_the_winners():
    env = make(num_players=2, ranks=3, reward_mode="win_loss")
    outcomes = set()
    for seed in range(12):
        total, info = play_to_the_end(env, seed)
        won, shared = info["winners"][0], info["winners"].all()
        assert total == (0 if shared else (1 if won else -1))
        outcomes.add(total)
    assert len(outcomes) > 1  # the test saw more than one kind of ending


def test_same_seed_same_game_and_opponent_sequence():
    runs = []
    for _ in range(2):
        env = make(num_players=3, ranks=3, opponents=[RandomPolicy(), RandomPolicy()])
        obs, _ = env.reset(seed=11)
        trace = [obs["cards"].copy()]
        for _ in range(10):
            obs, *_ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
            trace.append(obs["cards"].copy())
        runs.append(np.array(trace))
    assert np.array_equal(*runs)


def test_step_after_the_end_and_before_reset_raise():
    env = make(num_players=2, ranks=1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    play_to_the_end(env, 0)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(num_players=3, opponents=[RandomPolicy()]), "opponents"),
        (dict(num_players=2, opponents=42), "policy"),
        (dict(num_players=2, seat=2), "seat"),
        (dict(num_players=1), "num_players"),
    ],
)
def test_bad_settings(kwargs, field):
    with pytest.raises(ValueError, match=field):
        VersusEnv(**kwargs)


def test_policy_names_resolve_through_baselines():
    baselines = pytest.importorskip("baselines")
    env = VersusEnv(num_players=2, ranks=3)  # the default opponent: greedy
    total, info = play_to_the_end(env, 0)
    assert info["winners"].any()
    assert type(env.opponents[1]) is type(baselines.make_policy("greedy", env.rules))


def test_reset_never_returns_a_game_the_opponents_already_finished():
    """On 4 cards a greedy opponent moving first often clears the table at once; reset
    deals again until the learner has a move, and the same seed still gives the same deal."""
    for seed in range(30):
        env = gym.make("ConcentrationVs-v0", ranks=1, first_player=1, opponents="greedy")
        obs, info = env.reset(seed=seed)
        assert obs["action_mask"].any()
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        again = gym.make("ConcentrationVs-v0", ranks=1, first_player=1, opponents="greedy")
        again.reset(seed=seed)
        assert again.unwrapped.layout == env.unwrapped.layout


def test_reset_raises_when_the_opponents_always_clear_the_table_first():
    """On one pair the opponent moving first always captures it: no deal leaves the learner
    a move, so reset gives up with one clear error instead of dealing forever."""
    env = gym.make("ConcentrationVs-v0", deck="pictures", pairs=1, first_player=1, opponents="greedy")
    with pytest.raises(RuntimeError, match=r"cleared 1000 deals in a row before the learner \(seat 0\).*too small"):
        env.reset(seed=0)
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(0)


def test_infos_hold_fixed_shape_winners_and_scores_from_reset_on():
    env = make(num_players=3, ranks=3, seat=1)
    rng = np.random.default_rng(0)
    shared = 0
    for seed in range(10):
        obs, info = env.reset(seed=seed)
        infos, over = [info], False
        while not over:
            obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            infos.append(info)
            over = terminated or truncated
        for step in infos:
            assert set(step) == {"action_mask", "winners", "scores", "agent"}
            assert step["winners"].dtype == bool and step["winners"].shape == (3,)
            assert step["scores"].dtype == np.int32 and step["scores"].shape == (3,)
        assert not np.stack([step["winners"] for step in infos[:-1]]).any() and info["winners"].any()
        assert info["scores"].tolist() == list(env.unwrapped.scores_by_name().values())
        shared += int(info["winners"].sum()) > 1
    assert shared  # a shared win was among them


def test_box_format_is_the_dict_observation_flattened():
    kwargs = dict(num_players=3, ranks=3, seat=1)
    boxed, plain = make(observation_format="box", **kwargs), make(**kwargs)
    gym_check_env(make(observation_format="box", **kwargs), skip_render_check=True)
    assert set(boxed.observation_space) == {"observation", "action_mask"}
    assert boxed.observation_space["observation"].dtype == np.float32
    layout = boxed.unwrapped.box_layout()
    rng = np.random.default_rng(0)
    for seed in range(3):
        (flat, info), (obs, reference) = boxed.reset(seed=seed), plain.reset(seed=seed)
        done = False
        while not done:
            assert boxed.observation_space.contains(flat)
            assert np.array_equal(flat["action_mask"], obs["action_mask"])
            assert np.array_equal(flat["observation"], boxed.unwrapped._table.to_box(obs))
            assert flat["observation"][layout[-1][1]] == np.float32(obs["scores"][0] / 6)  # 6 pairs in the game
            assert_infos_equal(info, reference)
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            flat, _, terminated, truncated, info = boxed.step(action)
            obs, _, _, _, reference = plain.step(action)
            done = terminated or truncated
    with pytest.raises(ValueError, match="observation_format"):
        make(observation_format="Box")


def assert_infos_equal(ours, theirs):
    assert set(ours) == set(theirs)
    for key, value in ours.items():
        assert np.array_equal(value, theirs[key]) if isinstance(value, np.ndarray) else value == theirs[key]
