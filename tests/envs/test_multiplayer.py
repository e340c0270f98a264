"""The multi-player PettingZoo env: API, registry, turns, scores, observations, bad input."""

import contextlib
import importlib
import io
import pickle
import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, seed_test

import concentration_env
from concentration_env import Rules, concentration_v0, duel_v0, preset_names
from concentration_env.envs.registration import pettingzoo_env_ids
from concentration_env.game import core
from tests.helpers.tables import play_random_game, positions_matching, short_rules

PLAYER_COUNTS = (2, 3, 4)
MODES = ("memory", "visible")
GAMES_PER_CONFIG = 2


def quietly(check, *args, **kwargs):
    """Run a PettingZoo test function without its prints and advisory warnings
    (a Dict observation is reported as "not a NumPy array")."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        check(*args, **kwargs)


def make(**kwargs):
    return concentration_v0.raw_env(**kwargs)


# -- registry and module style --------------------------------------------------------------
def test_registered_in_pettingzoo_with_the_issue_example():
    env = pettingzoo.make(
        "aec", "concentration/Concentration-v0", num_players=3, matching="zebra", turn_policy="one_flip"
    )
    rules = env.unwrapped.rules
    assert (rules.num_players, rules.matching, rules.turn_policy) == (3, "zebra", "one_flip")
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    assert pettingzoo.make("aec", "concentration/Concentration-TwoDecks-v0").unwrapped.rules.num_cards == 104
    for env_id in pettingzoo_env_ids():
        assert isinstance(pettingzoo.make("aec", env_id).unwrapped, pettingzoo.AECEnv)
    concentration_env.envs.registration.register_envs()  # idempotent: no override warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        concentration_env.envs.registration.register_envs()


def test_classic_module_style():
    from concentration_env import concentration_v0 as module
    from concentration_env import duel_v0

    for mod, name in ((module, "concentration_v0"), (duel_v0, "duel_v0")):
        env = mod.env()
        assert isinstance(env, pettingzoo.utils.wrappers.OrderEnforcingWrapper)
        assert isinstance(env.unwrapped, mod.raw_env)
        assert env.metadata["name"] == name and env.metadata["is_parallelizable"] is False
    raw = module.raw_env(num_players=3, jokers=True)
    clone = pickle.loads(pickle.dumps(raw))
    assert clone.rules == raw.rules


def test_issue_example_loop_with_ansi_render():
    env = concentration_v0.env(num_players=2, render_mode="ansi", ranks=4)
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else env.action_space(agent).sample(obs["action_mask"])
        env.step(action)
    assert env.agents == []
    text = env.unwrapped.render()
    assert "player_0=" in text and "game over" in text


# -- PettingZoo's own checks, every preset x observation mode x player count ----------------
@pytest.mark.parametrize("players", PLAYER_COUNTS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("preset", preset_names())
def test_api_seed_and_random_games(preset, mode, players):
    rules = short_rules(preset)
    kwargs = dict(rules=rules, num_players=players, observation_mode=mode)
    quietly(api_test, concentration_v0.env(**kwargs), num_cycles=1000)
    quietly(seed_test, lambda: concentration_v0.env(**kwargs), num_cycles=1000)
    env = make(**kwargs)
    rng = np.random.default_rng(players)
    for game in range(GAMES_PER_CONFIG):
        env.reset(seed=game)
        play_random_game(env, rng)
        check_end_of_game(env)


def check_end_of_game(env):
    """Invariants of a finished game: all captured (unless chips ran out), points add up,
    every agent's info names the winners and final scores."""
    state, game = env._state, env.game
    scores = env.scores_by_name()
    if env.rules.max_mismatches is None:
        assert state.removed.all()
        assert sum(scores.values()) == int(game.pair_value[game.deck].sum()) // 2
    assert core.pairs_captured(state).sum() == state.removed.sum() // 2
    best = max(scores.values())
    for agent in env.agents:
        assert env.terminations[agent]
        assert env.infos[agent]["scores"].tolist() == list(scores.values())
        assert all(scores[w] == best for w in env.winner_names()) and env.winner_names()
        assert env.infos[agent]["winners"].tolist() == [a in env.winner_names() for a in env.possible_agents]


def test_full_52_card_game_passes_the_api_test():
    quietly(api_test, concentration_v0.env(num_players=2), num_cycles=2000)


def test_seed_gives_same_deal_and_none_continues():
    env = make(num_players=3)
    env.reset(seed=7)
    first = env.layout
    env.reset(seed=7)
    assert env.layout == first
    env.reset()
    assert env.layout != first


# -- turns --------------------------------------------------------------------------------------
# (turn_policy, what the turn does, does the same agent move again)
TURN_TABLE = [
    ("extra_turn", "match", True),
    ("one_flip", "match", False),
    ("extra_turn", "miss", False),
    ("one_flip", "miss", False),
    ("extra_turn", "illegal", False),
    ("one_flip", "illegal", False),
]


@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("turn_policy, what, again", TURN_TABLE)
def test_who_moves_after_a_turn(turn_policy, what, again, players):
    last = players - 1  # start at the last seat: passing the turn wraps round to player_0
    env = make(num_players=players, turn_policy=turn_policy, first_player=last)
    env.reset(seed=1)
    mover = env.agent_selection
    assert mover == f"player_{last}"
    i, j = positions_matching(env, matched=(what == "match"))
    env.step(i)
    assert env.agent_selection == mover  # the first flip never passes the turn
    env.step(i if what == "illegal" else j)
    assert env.agent_selection == (mover if again else "player_0")
    assert env.rewards[mover] == (1 if what == "match" else 0)
    assert env.scores_by_name()[mover] == (1 if what == "match" else 0)


def test_illegal_flip_under_raise_changes_nothing():
    env = make(num_players=2, illegal_action="raise")
    env.reset(seed=2)
    i, _ = positions_matching(env, matched=False)
    env.step(i)
    before = env.observe("player_0")
    with pytest.raises(core.IllegalFlipError, match=f"position {i}"):
        env.step(i)
    after = env.observe("player_0")
    assert env.agent_selection == "player_0"
    for key in before["observation"]:
        assert np.array_equal(before["observation"][key], after["observation"][key])


def test_rotated_scores_and_zero_masks_off_turn():
    env = make(num_players=3, first_player=1)
    env.reset(seed=3)
    i, j = positions_matching(env, matched=True)
    env.step(i)
    env.step(j)
    expected = {"player_0": [0, 1, 0], "player_1": [1, 0, 0], "player_2": [0, 0, 1]}
    for agent, scores in expected.items():
        obs = env.observe(agent)
        assert obs["observation"]["scores"].tolist() == scores
        assert obs["action_mask"].dtype == np.int8
        assert obs["action_mask"].any() == (agent == "player_1")
        assert env.observation_space(agent).contains(obs)


def test_joker_pair_scores_joker_value():
    env = make(num_players=2, jokers=True, joker_value=2)
    env.reset(seed=4)
    jokers = [p for p, card in enumerate(env.layout) if card.is_joker]
    env.step(jokers[0])
    env.step(jokers[1])
    assert env.rewards["player_0"] == 2 and env.scores_by_name() == {"player_0": 2, "player_1": 0}


@pytest.mark.parametrize("mode, shown", [("memory", True), ("visible", False)])
def test_everyone_sees_every_flip(mode, shown):
    env = make(num_players=3, observation_mode=mode)
    env.reset(seed=5)
    i, j = positions_matching(env, matched=False)
    env.step(i)
    env.step(j)  # player_0 misses; player_1 moves
    for agent in env.possible_agents:  # the missed pair is face up for everyone
        cards = env.observe(agent)["observation"]["cards"]
        assert cards[i] > 0 and cards[j] > 0
    k = next(p for p in range(env.num_cards) if p not in (i, j))
    env.step(k)  # the next flip turns the missed pair face down
    for agent in env.possible_agents:
        cards = env.observe(agent)["observation"]["cards"]
        assert (cards[i] > 0) == shown and (cards[j] > 0) == shown and cards[k] > 0


# -- the end of a game: winners, tie-breaks, rewards ----------------------------------------
# A four-card deck (aces; rank_colour pairs AC-AS and AD-AH) or, with jokers, six cards.
# Under one_flip player_0 takes the first pair and player_1 the second (then the jokers
# go to whoever is on turn). (rule fields, expected winners)
END_TABLE = [
    ({"tie_break": "share"}, ["player_0", "player_1"]),
    ({"tie_break": "first_capture"}, ["player_0"]),
    ({"tie_break": "highest_rank"}, ["player_0", "player_1"]),
    ({"tie_break": "jokers"}, ["player_0", "player_1"]),
    ({"tie_break": "jokers", "jokers": True, "joker_value": 2, "matching": "rank"}, ["player_0"]),
    ({"tie_break": "highest_rank", "jokers": True, "joker_value": 2, "matching": "rank"}, ["player_1"]),
    ({"tie_break": "share", "jokers": True, "joker_value": 2, "matching": "rank"}, ["player_0", "player_1"]),
]


def flip(env, name, copy=0):
    """Flip the ``copy``-th card named ``name`` (in position order)."""
    env.step([p for p, card in enumerate(env.layout) if str(card) == name][copy])


SHORT_GAME = [("AC", 0), ("AS", 0), ("AD", 0), ("AH", 0)]  # player_0 takes AC-AS, player_1 AD-AH
# player_0 misses (JK, AC), player_1 takes AC-AS, player_0 the jokers, player_1 AD-AH.
JOKER_GAME = [("JK", 0), ("AC", 0), ("AC", 0), ("AS", 0), ("JK", 0), ("JK", 1), ("AD", 0), ("AH", 0)]


@pytest.mark.parametrize("fields, winners", END_TABLE)
@pytest.mark.parametrize("reward_mode", ["pairs", "margin", "win_loss"])
def test_winners_and_rewards_at_the_end(fields, winners, reward_mode):
    env = make(num_players=2, ranks=1, turn_policy="one_flip", reward_mode=reward_mode, **fields)
    env.reset(seed=0)
    jokers = fields.get("jokers", False)
    for name, copy in JOKER_GAME if jokers else SHORT_GAME:
        flip(env, name, copy)
    assert all(env.terminations.values())
    for agent in env.possible_agents:
        assert env.infos[agent]["winners"].tolist() == [a in winners for a in env.possible_agents]
        points = 2 if jokers else 1
        assert env.infos[agent]["scores"].tolist() == [points, points]
    assert env.winner_names() == winners and env.scores_by_name() == {"player_0": points, "player_1": points}
    if reward_mode == "win_loss":
        tied = len(winners) == 2
        for agent in env.possible_agents:
            expected = 0 if tied else (1 if agent in winners else -1)
            assert env._cumulative_rewards[agent] == expected


def test_margin_rewards_sum_to_the_pair_margin():
    env = make(num_players=2, ranks=1, turn_policy="one_flip", reward_mode="margin")
    env.reset(seed=0)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for step, (name, copy) in enumerate(SHORT_GAME):
        flip(env, name, copy)
        for agent in env.possible_agents:
            totals[agent] += env.rewards[agent]
        if step == 1:  # player_0 took AC-AS: +1 to it, -1 to its opponent
            assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert totals == {"player_0": 0.0, "player_1": 0.0}  # one pair each


# -- bad input ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"num_players": 1}, "num_players"),
        ({"num_players": 0}, "num_players"),
        ({"num_players": "3"}, "num_players"),
        ({"num_players": True}, "num_players"),
        ({"num_players": 2, "first_player": 2}, "first_player"),
        ({"num_players": 3, "first_player": "player_3"}, "first_player"),
        ({"observation_mode": "full"}, "observation_mode"),
        ({"render_mode": "opengl"}, "render_mode"),
        ({"tie_break": "coin"}, "tie_break"),
        ({"reward_mode": "money"}, "reward_mode"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_settings_raise_one_value_error_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        make(**kwargs)


def test_bad_reset_option_names_first_player():
    env = make(num_players=2)
    with pytest.raises(ValueError, match="first_player"):
        env.reset(options={"first_player": 5})


def test_first_player_setting_and_reset_option():
    env = make(num_players=4, first_player="player_2")
    env.reset(seed=0)
    assert env.agent_selection == "player_2"
    env.reset(seed=0, options={"first_player": 3})
    assert env.agent_selection == "player_3"
    env.reset(seed=0)
    assert env.agent_selection == "player_2"


def test_wrapped_env_enforces_order_and_bounds():
    env = concentration_v0.env(num_players=2, ranks=2)
    with pytest.raises(AssertionError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action 8 is out of range; valid flips are 0..7"):
        env.step(env.unwrapped.num_cards)
    iterator = iter(env.agent_iter())
    next(iterator)
    with pytest.raises(AssertionError, match="step"):
        next(iterator)  # taking the next agent without acting for the current one


@pytest.mark.parametrize("make_env", [lambda: concentration_v0.env(num_players=2, ranks=2), duel_v0.env])
@pytest.mark.parametrize(
    "bad, error, message",
    [
        (-1, ValueError, "action -1 is out of range"),
        (52, ValueError, "action 52 is out of range"),
        (3.0, TypeError, r"action 3.0 \(float\) is not an integer position"),
        (None, TypeError, r"action None \(NoneType\) is not an integer position"),
        (True, TypeError, "not an integer position"),
        (np.array([1, 2]), ValueError, "has shape"),
    ],
)
def test_bad_actions_get_the_packages_errors_and_change_nothing(make_env, bad, error, message):
    env = make_env()
    env.reset(seed=0)
    env.step(np.array([3]))  # one position in an array is a flip, as in the solitaire env
    before = (env.agent_selection, env.unwrapped._state.buffer.copy())
    with pytest.raises(error, match=message):
        env.step(bad)
    assert env.agent_selection == before[0] and np.array_equal(env.unwrapped._state.buffer, before[1])


def test_dead_agent_must_step_with_none():
    env = concentration_v0.env(num_players=2, ranks=1, turn_policy="one_flip")
    env.reset(seed=0)
    for name, copy in SHORT_GAME:
        flip(env, name, copy)
    with pytest.raises(ValueError, match="None"):
        env.step(0)
    env.step(None)
    env.step(None)
    assert env.agents == []


def test_layout_and_rules_match_the_solitaire_conventions():
    env = make(num_players=2, rules="checkerboard")
    env.reset(seed=1)
    assert isinstance(env.rules, Rules) and env.rules.backs == "checkerboard"
    assert sorted(env.layout) == sorted(env.faces[f] for f in env.game.deck)
    obs = env.observe("player_0")["observation"]
    assert set(obs) == {"cards", "face_up", "removed", "back", "scores"}
    assert np.array_equal(obs["back"], env.game.backs)
    assert make(num_players=2).render() is None


def pettingzoo_wrapped(**kwargs):
    """The raw env behind PettingZoo's own standard wrappers, for comparison with ``env()``."""
    wrappers = pettingzoo.utils.wrappers
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(concentration_v0.raw_env(**kwargs)))


def outcome(read):
    """What reading an attribute gives: its value, or the exception type and message."""
    try:
        return repr(read())
    except Exception as error:
        return f"{type(error).__name__}: {error}"


def test_env_wrappers_answer_like_pettingzoos_own():
    """``env()``'s wrappers forward the per-step attributes as properties: the same values
    and, before a reset, the same errors as PettingZoo's wrappers; the same bounds check."""
    names = [
        "agent_selection",
        "agents",
        "rewards",
        "_cumulative_rewards",
        "terminations",
        "truncations",
        "infos",
        "num_agents",
        "possible_agents",
        "_private",
        "no_such_attribute",
    ]
    ours, theirs = concentration_v0.env(ranks=2), pettingzoo_wrapped(ranks=2)
    assert isinstance(ours, pettingzoo.utils.wrappers.OrderEnforcingWrapper)
    assert isinstance(ours.env, pettingzoo.utils.wrappers.AssertOutOfBoundsWrapper)
    assert str(ours) == str(theirs) == "concentration_v0"
    for name in names:
        assert outcome(lambda name=name: getattr(ours, name)) == outcome(lambda name=name: getattr(theirs, name)), name
    for env in (ours, theirs):
        env.reset(seed=3)
    for action in [0, 0, 7]:  # a legal flip, the same card again (illegal: ends the turn), a legal flip
        for env in (ours, theirs):
            env.step(action)
        for name in names:
            assert outcome(lambda name=name: getattr(ours, name)) == outcome(lambda name=name: getattr(theirs, name)), (
                name
            )
    for bad in [8, -1, 1.0, np.int64(8), None]:  # PettingZoo asserts; the package names the action
        ours_error = outcome(lambda bad=bad: ours.step(bad))
        assert outcome(lambda bad=bad: theirs.step(bad)) == "AssertionError: action is not in action space", bad
        assert ours_error.startswith(("ValueError: action", "TypeError: action")), ours_error
        assert "valid flips are 0..7" in ours_error, ours_error


def test_action_space_contains_like_discrete():
    space = concentration_v0.raw_env(ranks=2).action_space("player_0")
    plain = gymnasium.spaces.Discrete(8)
    assert space == plain and repr(space) == "Discrete(8)"
    for value in [0, 7, 8, -1, 2**70, True, False, 1.0, np.int64(3), np.int8(9), np.array(2), np.array([2]), "1", None]:
        assert space.contains(value) == plain.contains(value), value


# -- fixed-shape infos ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "make_env",
    [lambda: concentration_v0.env(num_players=3, ranks=3), lambda: duel_v0.env(ranks=3)],
    ids=["concentration_v0", "duel_v0"],
)
def test_infos_are_fixed_shape_arrays_from_reset_to_the_end(make_env):
    """Every step's info stacks with every other's (Tianshou and PufferLib store them): bool
    winners and int32 scores in seat order, the winners marked only once the game is over."""
    env = make_env()
    raw = env.unwrapped
    players = raw.num_players
    endings = set()
    for seed in range(12):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        kept = []
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, info = env.last()
            assert set(info) == {"winners", "scores"}
            assert info["winners"].dtype == bool and info["winners"].shape == (players,)
            assert info["scores"].dtype == np.int32 and info["scores"].shape == (players,)
            assert info["scores"].tolist() == list(raw.scores_by_name().values())
            over = terminated or truncated
            assert info["winners"].any() == over
            assert [a for a, won in zip(raw.possible_agents, info["winners"]) if won] == raw.winner_names()
            kept.append((info, info["scores"].copy(), info["winners"].copy()))
            env.step(None if over else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        for info, scores, winners in kept:  # an info handed out earlier never changed later
            assert np.array_equal(info["scores"], scores) and np.array_equal(info["winners"], winners)
        assert raw.winner_names()  # still readable after every agent left
        endings.add(len(raw.winner_names()))
        np.stack([info["winners"] for info, _, _ in kept])  # every step's info stacks
    assert 1 in endings and max(endings) > 1  # saw a sole winner and a shared win


def test_winner_names_survive_a_snapshot_and_need_a_reset():
    env = make(num_players=2, ranks=1)
    with pytest.raises(RuntimeError, match="reset"):
        env.winner_names()
    env.reset(seed=0)
    play_random_game(env, np.random.default_rng(0))
    names = env.winner_names()
    fresh = make(num_players=2, ranks=1)
    fresh.reset(seed=1)
    fresh.set_state(env.get_state())
    assert fresh.winner_names() == names and names
    snapshot = env.get_state()
    snapshot["aec"]["_won"] = [True, False]
    with pytest.raises(ValueError, match="_won"):
        fresh.set_state(snapshot)


# -- the flat (classic) observation format --------------------------------------------------
BOX_PRESETS = ("standard", "checkerboard", "pictures", "zebra")


@pytest.mark.parametrize(
    "make_env, kwargs",
    [(concentration_v0.env, dict(rules=short_rules(preset), num_players=3)) for preset in BOX_PRESETS]
    + [(duel_v0.env, dict(ranks=2))],
    ids=[*BOX_PRESETS, "duel_v0"],
)
def test_box_format_passes_pettingzoo_api_and_seed_tests(make_env, kwargs):
    kwargs = dict(kwargs, observation_format="box")
    env = make_env(**kwargs)
    space = env.observation_space("player_0")
    assert space["observation"].dtype == np.float32 and space["action_mask"].dtype == np.int8
    assert len(space["observation"].shape) == 1 and space["action_mask"].shape == (env.unwrapped.num_cards,)
    quietly(api_test, env, num_cycles=500)
    quietly(seed_test, lambda: make_env(**kwargs), num_cycles=500)


def check_box_matches_dict(box_env, dict_env, seed):
    """Play one random game on both formats; every observation's flat vector decodes,
    slice by slice of ``box_layout()``, to the Dict one."""
    layout = box_env.unwrapped.box_layout()
    total = int(box_env.observation_space("player_0")["observation"].shape[0])
    assert layout[-1][2] == total and [start for _, start, _ in layout[1:]] == [stop for _, _, stop in layout[:-1]]
    points = int(dict_env.observation_space("player_0")["observation"]["scores"].high[0])  # the game's points
    rng = np.random.default_rng(seed)
    box_env.reset(seed=seed)
    dict_env.reset(seed=seed)
    for agent in dict_env.agent_iter():
        flat, mask = box_env.observe(agent)["observation"], box_env.observe(agent)["action_mask"]
        plain = dict_env.observe(agent)
        assert np.array_equal(mask, plain["action_mask"])
        for name, start, stop in layout:
            part, expected = flat[start:stop], plain["observation"][name]
            if name == "scores":
                np.testing.assert_allclose(part, expected / points, rtol=1e-6)
            elif name.endswith("cards"):
                onehot = part.reshape(len(expected), -1)
                assert (onehot.sum(axis=1) == 1).all() and onehot.argmax(axis=1).tolist() == expected.tolist()
            else:
                assert part.tolist() == expected.tolist(), name
        done = dict_env.terminations[agent] or dict_env.truncations[agent]
        action = None if done else int(rng.choice(np.flatnonzero(plain["action_mask"])))
        box_env.step(action)
        dict_env.step(action)


@pytest.mark.parametrize(
    "make_env, kwargs",
    [
        (concentration_v0.env, dict(num_players=3, ranks=3)),
        (concentration_v0.env, dict(rules="checkerboard", ranks=2, jokers=True, joker_value=3)),
        (duel_v0.env, dict(ranks=2)),
    ],
)
def test_box_format_is_the_documented_concatenation_of_the_dict(make_env, kwargs):
    for seed in range(3):
        check_box_matches_dict(make_env(observation_format="box", **kwargs), make_env(**kwargs), seed)
    raw = make_env(**kwargs).unwrapped
    names = [name for name, _, _ in raw.box_layout()]
    assert names[:3] == ["cards", "face_up", "removed"] and names[-1] == "scores"
    if raw.game.checkerboard:
        assert names[3] == "back"


def test_box_layout_helper_and_a_bad_format():
    from concentration_env.envs.spaces import box_layout

    raw = make(num_players=3, ranks=2)
    assert box_layout(raw.game, 3) == raw.box_layout()
    faces, n = raw.game.num_faces, raw.num_cards
    assert box_layout(raw.game, 3) == [
        ("cards", 0, n * (faces + 1)),
        ("face_up", n * (faces + 1), n * (faces + 2)),
        ("removed", n * (faces + 2), n * (faces + 3)),
        ("scores", n * (faces + 3), n * (faces + 3) + 3),
    ]
    for make_env in (make, duel_v0.raw_env):
        with pytest.raises(ValueError, match=r"observation_format.*dict, box, flat"):
            make_env(observation_format="Box")


# -- the global state (god view) ------------------------------------------------------------
STATE_TEST = importlib.import_module("pettingzoo.test.state_test")  # the module, not its function


@pytest.mark.parametrize(
    "make_env, kwargs",
    [
        (concentration_v0.env, dict(num_players=3, ranks=3)),
        (concentration_v0.env, dict(rules="checkerboard", ranks=2, observation_format="box")),
        (concentration_v0.env, dict(num_players=2, ranks=2, max_turns=5)),
        (duel_v0.env, dict(ranks=2)),
        (duel_v0.env, dict(ranks=2, observation_format="box")),
    ],
)
def test_state_is_the_whole_table_in_state_space(make_env, kwargs):
    env = make_env(**kwargs)
    quietly(STATE_TEST.test_state_space, env)
    quietly(STATE_TEST.test_state, env, 300)
    quietly(api_test, make_env(**kwargs), num_cycles=300)
    raw = env.unwrapped
    layout = {name: slice(start, stop) for name, start, stop in raw.state_layout()}
    assert raw.state_layout()[-1][2] == raw.state_space.shape[0]
    assert ("back" in layout) == raw.game.checkerboard
    rng = np.random.default_rng(0)
    for seed in range(3):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            state, core_state = env.state(), raw._state
            assert state.dtype == np.int32 and env.state_space.contains(state)
            faces = np.asarray(raw.layout).reshape(-1)  # every dealt card, both layouts in the duel
            shown = [raw.faces.index(card) + 1 for card in faces]
            captured = core_state.removed[0].astype(bool)
            assert state[layout["faces"]].tolist() == np.where(captured, 0, shown).tolist()
            assert state[layout["removed"]].tolist() == core_state.removed[0].tolist()
            assert state[layout["face_up"]].tolist() == core.face_up(core_state)[0].tolist()
            assert state[layout["scores"]].tolist() == list(raw.scores_by_name().values())
            over = env.terminations[agent] or env.truncations[agent]
            expected = [0] * raw.num_players if over else [int(a == agent) for a in raw.possible_agents]
            assert state[layout["to_move"]].tolist() == expected
            env.step(None if over else int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
    with pytest.raises(RuntimeError, match="reset"):
        make_env(**kwargs).unwrapped.state()
