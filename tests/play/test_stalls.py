"""Two optimal players stall on purpose (both refuse to reveal a card); every way of playing
them finishes: the turn cap truncates, and play_out stops at the stall itself."""

import gymnasium as gym
import numpy as np
import pytest

from baselines import make_policy
from baselines.evaluate import play
from concentration_env import Rules, concentration_v0, duel_v0
from concentration_env.game.seats import TURNS_PER_CARD_CAP
from concentration_env.play.gif import record_gif
from concentration_env.play.seated import SeatedGame, play_out
from concentration_env.play.session import Session

RULES = Rules(ranks=5, num_players=2)  # optimal players stall in most of these deals
FLIP_BOUND = 100_000  # far beyond any cap used here: a loop reaching it would never end


def optimal_pair(rules=RULES, seed=0):
    bots = [make_policy("optimal", rules) for _ in range(2)]
    for seat, bot in enumerate(bots):
        bot.reset(seed=seed + seat)
    return bots


def drive(env, bots):
    """Play a wrapped AEC env with ``bots`` (seat order); returns the flips and the last info."""
    flips = 0
    for agent in env.agent_iter(FLIP_BOUND):
        obs, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(bots[env.possible_agents.index(agent)].act(obs["observation"], obs["action_mask"]))
        flips += 1
    return flips, info


def test_the_harness_sees_optimal_players_stall():
    result = play(RULES, optimal_pair(), 50, seed=0)
    assert result.stalled.sum() > 25 and not result.capped.any()


def test_session_of_optimal_players_finishes_truncated_at_the_cap():
    result = Session(["optimal", "optimal"], RULES).play(4, seed=0)
    assert len(result.points) == 4 and any(result.truncated)
    short = Session(["optimal", "optimal"], RULES, max_turns=3).play(2, seed=0)
    assert short.truncated == [True, True]
    with pytest.raises(ValueError, match="max_turns"):
        Session(["optimal", "optimal"], RULES, max_turns=0)


def test_play_out_stops_optimal_players_at_the_stall():
    stalled = 0
    for seed in range(6):
        match = SeatedGame(RULES, seed=seed)
        result = play_out(match, optimal_pair(seed=seed))
        assert match.over
        turns = match.env.unwrapped._state.turns[0]
        assert turns < TURNS_PER_CARD_CAP * RULES.num_cards  # the stall, well before the cap
        if "stopped unfinished" in result.summary:
            stalled += 1
            assert sum(result.scores) < RULES.num_pairs and result.winners
    assert stalled


def test_play_out_of_other_players_is_not_stopped_early():
    match = SeatedGame(RULES, seed=0)
    result = play_out(match, [make_policy("random", RULES), make_policy("optimal", RULES)])
    assert sum(result.scores) == RULES.num_pairs and "stopped" not in result.summary


def test_seated_game_turn_cap_truncates():
    match = SeatedGame(RULES, seed=0, max_turns=2)
    result = play_out(match, [make_policy("random", RULES), make_policy("random", RULES)])
    assert match.over and "after 2 turns" in result.summary


def test_record_gif_of_optimal_players_finishes(tmp_path):
    pytest.importorskip("PIL.Image", reason="Pillow (render extra) is not installed")
    result, frames = record_gif(RULES, optimal_pair(seed=1), tmp_path / "game.gif", seed=1)
    assert (tmp_path / "game.gif").exists() and frames < 4 * RULES.num_cards


@pytest.mark.parametrize("make", [concentration_v0.env, duel_v0.env], ids=["concentration_v0", "duel_v0"])
def test_aec_env_truncates_at_max_turns(make):
    rules = RULES if make is concentration_v0.env else Rules(ranks=5, packs=2, matching="identical")
    env = make(rules=rules, max_turns=7)
    env.reset(seed=0)
    bots = [make_policy("greedy" if make is duel_v0.env else "optimal", env.unwrapped.rules) for _ in range(2)]
    flips, info = drive(env, bots)
    assert env.unwrapped._state.turns[0] == 7 and flips >= 7
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert set(info) == {"winners", "scores"} and info["scores"].sum() < 5 and info["winners"].any()
    with pytest.raises(ValueError, match="max_turns"):
        make(max_turns=-1)


def test_aec_env_of_optimal_players_finishes_with_a_cap():
    env = concentration_v0.env(rules=RULES, max_turns=TURNS_PER_CARD_CAP * RULES.num_cards)
    env.reset(seed=0)
    flips, _ = drive(env, optimal_pair())
    assert flips < FLIP_BOUND and all(env.truncations.values())


def test_versus_env_optimal_learner_against_optimal_finishes():
    for env, limit in [
        (gym.make("ConcentrationVs-v0", rules=RULES, opponents="optimal", max_episode_steps=300), "time limit"),
        (gym.make("ConcentrationVs-v0", rules=RULES, opponents="optimal", max_turns=40), "max_turns"),
    ]:
        learner = make_policy("optimal", RULES)
        observation, info = env.reset(seed=0)
        learner.reset(seed=0)
        for _ in range(FLIP_BOUND):
            action = learner.act(observation, observation["action_mask"])
            observation, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        assert truncated and not terminated, limit
        assert info["scores"].sum() < RULES.num_pairs


def first_games(end_stalled: bool, games: int = 16, limit: int = 300):
    """An optimal learner against optimal opponents in the batched versus env, both seats:
    each game's first episode as (terminated, truncated, reward, scores, learner flips)."""
    from concentration_env.envs.versus_vector import VersusVectorEnv

    rules = RULES.replace(reward_mode="win_loss")
    envs = VersusVectorEnv(
        games,
        rules,
        seats=[0, 1] * (games // 2),
        opponents="optimal",
        max_episode_steps=limit,
        end_stalled=end_stalled,
        autoreset_mode="SameStep",  # the learner then sees each next game from its start
    )
    learner = make_policy("optimal", rules)
    learner.reset_batch(list(range(games)))
    obs, info = envs.reset(seed=0)
    ended: dict[int, tuple] = {}
    for flip in range(1, limit + 1):
        obs, rewards, terminated, truncated, info = envs.step(learner.act_batch(obs))
        over = np.flatnonzero(terminated | truncated)
        if over.size:
            learner.reset_rows(over, over.tolist())
        for game in over:
            if game not in ended:
                ended[game] = (
                    terminated[game],
                    truncated[game],
                    rewards[game],
                    tuple(info["final_info"]["scores"][game]),
                    flip,
                )
        if len(ended) == games:
            break
    return [ended[game] for game in range(games)]


def test_the_versus_vector_env_ends_stalled_games_only_when_asked():
    """With end_stalled the games that stall end there, terminated, with the scores and the
    win-or-lose reward they have at the time limit without it; the others are unchanged."""
    stopped, running = first_games(end_stalled=True), first_games(end_stalled=False)
    stalls = 0
    for game, (now, at_limit) in enumerate(zip(stopped, running)):
        (terminated, truncated, reward, scores, flips), (_, cut, reward_at_limit, scores_at_limit, _) = now, at_limit
        assert terminated and not truncated and scores == scores_at_limit
        if cut:  # stalled: it ran to the limit without end_stalled, unpaid
            stalls += 1
            seat = game % 2
            assert sum(scores) < RULES.num_pairs and flips < 300 and reward_at_limit == 0
            assert reward == np.sign(scores[seat] - scores[1 - seat])  # +1, -1, or 0 for a tie
        else:
            assert reward == reward_at_limit
    assert stalls > 4


def test_end_stalled_takes_true_or_false():
    from concentration_env.envs.versus_vector import VersusVectorEnv

    with pytest.raises(ValueError, match="invalid end_stalled='yes'; allowed: True or False"):
        VersusVectorEnv(2, RULES, end_stalled="yes")
