"""Memory Duel: rules, roles, observations, API checks, random play, bad input."""

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, seed_test

from concentration_env import Rules, duel_v0
from concentration_env.game import core
from concentration_env.game import duel_rules as duel
from tests.envs.test_multiplayer import MODES, quietly
from tests.helpers.tables import play_random_game

SHORT = {"ranks": 4}  # 16 cards per player
GAMES_PER_CONFIG = 2


def make(**kwargs):
    return duel_v0.raw_env(**kwargs)


def side(env, seat):
    """Seat's dealt cards by name."""
    return [str(card) for card in env.layout[seat]]


def twin(env, seat, name):
    """Position of the card named ``name`` in ``seat``'s layout."""
    return side(env, seat).index(name)


def test_registered_and_defaults():
    env = pettingzoo.make("aec", "concentration/Duel-v0")
    rules = env.unwrapped.rules
    assert (rules.packs, rules.matching, rules.num_players) == (2, "identical", 2)
    assert env.unwrapped.player_shape == (4, 13)
    assert env.action_space("player_0").n == 52
    raw = make(rules="two_decks", jokers=True)
    assert raw.num_cards == 54 and raw.player_shape == (6, 9)


def test_each_player_deals_one_full_pack():
    env = make()
    env.reset(seed=0)
    pack = sorted(str(card) for card in Rules().faces)
    assert sorted(side(env, 0)) == sorted(side(env, 1)) == pack
    assert side(env, 0) != side(env, 1)


@pytest.mark.parametrize("mode", MODES)
def test_api_seed_and_random_games(mode):
    kwargs = dict(observation_mode=mode, **SHORT)
    quietly(api_test, duel_v0.env(**kwargs), num_cycles=2000)
    quietly(seed_test, lambda: duel_v0.env(**kwargs), num_cycles=2000)
    env = make(**kwargs)
    rng = np.random.default_rng(0)
    for game in range(GAMES_PER_CONFIG):
        env.reset(seed=game)
        play_random_game(env, rng)
        assert env._state.removed.all()
        assert sum(env.scores_by_name().values()) == env.rules.num_pairs == 16
        for agent in env.agents:
            assert env.infos[agent]["scores"].tolist() == list(env.scores_by_name().values())


def test_full_52_card_duel_random_game():
    env = make(observation_mode="visible")
    env.reset(seed=3)
    play_random_game(env, np.random.default_rng(3), check_turns=False)
    assert env._state.removed.all() and sum(env.scores_by_name().values()) == 52


@pytest.mark.parametrize("what, points", [("match", 1), ("miss", 0)])
def test_roles_swap_every_turn(what, points):
    env = make(**SHORT)
    env.reset(seed=1)
    card = side(env, 0)[0]
    env.step(0)
    assert env.agent_selection == "player_1"  # the follower answers
    answer = twin(env, 1, card) if what == "match" else next(p for p, name in enumerate(side(env, 1)) if name != card)
    env.step(answer)
    assert env.scores_by_name() == {"player_0": 0, "player_1": points}
    assert env.rewards["player_1"] == points
    assert env.agent_selection == "player_1"  # ... and leads the next turn
    assert env.observe("player_1")["observation"]["leading"].tolist() == [1]
    assert env.observe("player_0")["observation"]["leading"].tolist() == [0]


def test_illegal_follow_ends_the_turn_and_the_follower_leads():
    env = make(**SHORT)
    env.reset(seed=1)
    card = side(env, 0)[0]
    env.step(0)
    env.step(twin(env, 1, card))  # player_1 captures; position 0 of player_0's layout is gone
    env.step(int(np.flatnonzero(env.observe("player_1")["action_mask"])[0]))  # player_1 leads
    env.step(0)  # player_0 follows with its captured card: illegal
    assert env._state.mismatches[0] == 1 and env.agent_selection == "player_0"
    assert env.observe("player_0")["observation"]["leading"].tolist() == [1]


def test_illegal_lead_passes_the_lead():
    env = make(**SHORT)
    env.reset(seed=2)
    card = side(env, 0)[0]
    env.step(0)
    env.step(twin(env, 1, card))  # player_1 captures; leads next
    env.step(twin(env, 1, card))  # player_1 leads with its captured card: illegal
    assert env.agent_selection == "player_0" and env._state.mismatches[0] == 1
    assert env.observe("player_0")["observation"]["leading"].tolist() == [1]


def test_illegal_flip_under_raise():
    env = make(illegal_action="raise", **SHORT)
    env.reset(seed=2)
    card = side(env, 0)[0]
    env.step(0)
    env.step(twin(env, 1, card))
    with pytest.raises(core.IllegalFlipError, match="captured"):
        env.step(twin(env, 1, card))
    assert env.agent_selection == "player_1"


@pytest.mark.parametrize("mode, remembered", [("memory", True), ("visible", False)])
def test_observations_of_both_layouts(mode, remembered):
    env = make(observation_mode=mode, **SHORT)
    env.reset(seed=4)
    card = side(env, 0)[5]
    env.step(5)
    follower = env.observe("player_1")
    obs = follower["observation"]
    assert obs["opponent_cards"][5] > 0 and obs["opponent_face_up"][5] == 1 and obs["leading"][0] == 0
    assert not obs["cards"].any() and follower["action_mask"].all()
    leader = env.observe("player_0")
    assert leader["observation"]["cards"][5] > 0 and not leader["action_mask"].any()
    miss = next(p for p, name in enumerate(side(env, 1)) if name != card)
    env.step(miss)
    lead = 1 if miss == 0 else 0
    env.step(lead)  # player_1 leads: last turn's cards turn face down
    obs = env.observe("player_0")["observation"]
    assert (obs["opponent_cards"][miss] > 0) == remembered and (obs["cards"][5] > 0) == remembered
    assert obs["opponent_cards"][lead] > 0 and obs["leading"][0] == 0
    assert env.observation_space("player_0").contains(env.observe("player_0"))


@pytest.mark.parametrize("reward_mode", ["pairs", "win_loss"])
def test_rewards_and_winners(reward_mode):
    env = make(reward_mode=reward_mode, ranks=1)  # four cards each
    env.reset(seed=5)
    totals = dict.fromkeys(env.possible_agents, 0)
    while not env.terminations[env.agent_selection]:
        mover = env.possible_agents.index(env.agent_selection)
        if env._state.first[0] == core.NONE:
            move = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
        else:  # the follower always finds the twin
            lead = side(env, 1 - mover)[env._state.first[0] % env.num_cards]
            move = twin(env, mover, lead)
        env.step(move)
        for agent in totals:
            totals[agent] += env.rewards[agent]
    assert env.scores_by_name() == {"player_0": 2, "player_1": 2}
    assert env.infos["player_0"]["winners"].tolist() == [True, True]
    assert env.winner_names() == ["player_0", "player_1"]
    assert totals == ({"player_0": 2, "player_1": 2} if reward_mode == "pairs" else {"player_0": 0, "player_1": 0})


def test_render_shows_both_layouts():
    env = make(render_mode="ansi", **SHORT)
    env.reset(seed=0)
    env.step(0)
    text = env.render()
    assert "player_0's layout" in text and "player_1's layout" in text
    assert side(env, 0)[0] in text


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"packs": 1}, "packs"),
        ({"rules": "standard"}, "packs"),
        ({"backs": "checkerboard"}, "backs"),
        ({"layout": (8, 13)}, "layout"),
        ({"rules": Rules(packs=2, matching="identical", num_players=3)}, "num_players"),
        ({"first_player": 2}, "first_player"),
        ({"observation_mode": "all"}, "observation_mode"),
    ],
)
def test_bad_settings(kwargs, field):
    with pytest.raises(ValueError, match=field):
        make(**kwargs)


def test_step_functions_are_batch_first():
    game = core.compile_rules(duel.duel_rules(**SHORT))
    rng = np.random.default_rng(0)
    faces = np.stack([duel.deal(game, rng) for _ in range(3)])
    batch = core.new_state(game, faces, first_player=np.array([0, 1, 0]))
    singles = [core.new_state(game, faces[b : b + 1], first_player=[0, 1, 0][b]) for b in range(3)]
    for _ in range(40):
        masks = duel.legal_mask(batch)
        if not masks.any():
            break
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        duel.step(game, batch, actions)
        for b, single in enumerate(singles):
            duel.step(game, single, actions[b : b + 1])
    for b, single in enumerate(singles):
        for name in ("faces", "removed", "seen", "scores", "player", "first", "shown", "turns"):
            assert np.array_equal(getattr(batch, name)[b], getattr(single, name)[0]), name


@pytest.mark.parametrize(
    "fields",
    [
        {"ranks": 3, "jokers": True},
        {"deck": "pictures", "pairs": 4},
        {"ranks": 3, "matching": "zebra"},
        {"ranks": 3, "matching": "rank"},
        {"ranks": 3, "matching": "rank_colour", "tie_break": "highest_rank"},
    ],
)
def test_rule_variants_play_out(fields):
    env = make(**fields)
    rng = np.random.default_rng(0)
    for game in range(GAMES_PER_CONFIG):
        env.reset(seed=game)
        play_random_game(env, rng)
        assert env._state.removed.all() and sum(env.scores_by_name().values()) == env.rules.num_pairs
        scores = env.infos["player_0"]["scores"]
        assert (scores[env.infos["player_0"]["winners"]] == scores.max()).all()
