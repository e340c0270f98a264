"""Property-based tests: random valid rules and random (legal and illegal) flips.

The solitaire env is checked flip by flip against a small, obviously-correct model of the
rules written here in plain Python, and against the invariants of the game.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from concentration_env import Rules
from concentration_env.envs.solitaire import ConcentrationEnv
from concentration_env.game.cards import cards_match


@st.composite
def small_rules(draw, illegal_action="end_turn"):
    """Any valid rule set with a small deck."""
    deck = draw(st.sampled_from(["standard", "pictures"]))
    packs = draw(st.integers(1, 2))
    fields = {
        "deck": deck,
        "packs": packs,
        "turn_policy": draw(st.sampled_from(["extra_turn", "one_flip"])),
        "illegal_action": illegal_action,
        "max_mismatches": draw(st.none() | st.integers(1, 12)),
        "joker_value": draw(st.integers(1, 3)),
        "backs": draw(st.sampled_from(["plain", "checkerboard"])) if packs == 2 else "plain",
    }
    if deck == "pictures":
        fields["pairs"] = draw(st.integers(1, 5))
    else:
        fields["ranks"] = draw(st.integers(1, 3 if packs == 1 else 2))
        fields["jokers"] = draw(st.booleans())
        matchings = ["rank_colour", "rank", "zebra"] + (["identical"] if packs == 2 else [])
        fields["matching"] = draw(st.sampled_from(matchings))
    return Rules(**fields)


class ReferenceGame:
    """Solitaire Concentration written out longhand, one flip at a time."""

    def __init__(self, rules: Rules, layout):
        self.rules, self.layout = rules, list(layout)
        self.on_table = [True] * len(layout)
        self.seen = [False] * len(layout)
        self.up: list[int] = []  # face-up positions, in flip order
        self.misses = self.turns = 0
        self.over = False

    def flip(self, position: int) -> tuple[float, bool | None]:
        """Returns the reward and, when the flip ended a turn, whether it matched."""
        if len(self.up) == 2:  # last turn's missed pair goes face down
            self.up = []
        if not self.on_table[position] or position in self.up:
            self.up = []
            return self._miss()
        self.seen[position] = True
        self.up.append(position)
        if len(self.up) == 1:
            return 0.0, None
        a, b = self.up
        self.turns += 1
        if cards_match(self.layout[a], self.layout[b], self.rules.matching):
            self.on_table[a] = self.on_table[b] = False
            self.up = []
            self.over = not any(self.on_table)
            return 0.0, True
        self.turns -= 1  # _miss counts the turn
        return self._miss()

    def _miss(self):
        self.misses += 1
        self.turns += 1
        chips = self.rules.max_mismatches
        self.over = not any(self.on_table) or (chips is not None and self.misses >= chips)
        return -1.0, False

    def observation(self, memory: bool):
        n = len(self.layout)
        known = [(self.seen[i] if memory else i in self.up) or not self.on_table[i] for i in range(n)]
        return {
            "face_up": [int(i in self.up) for i in range(n)],
            "removed": [int(not t) for t in self.on_table],
            "known": known,
            "action_mask": [
                int(self.on_table[i] and (len(self.up) != 1 or self.up[0] != i) and not self.over) for i in range(n)
            ],
        }


@given(
    rules=small_rules(),
    mode=st.sampled_from(["memory", "visible"]),
    seed=st.integers(0, 2**16),
    flips=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), min_size=1, max_size=150),
)
def test_env_matches_reference_model(rules, mode, seed, flips):
    env = ConcentrationEnv(rules=rules, observation_mode=mode)
    obs, info = env.reset(seed=seed)
    layout = env.layout
    model = ReferenceGame(rules, layout)
    n = rules.num_cards
    for legal_only, pick in flips:
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[pick % len(legal)]) if legal_only else pick % n
        expected_reward, expected_match = model.flip(action)
        obs, reward, terminated, truncated, info = env.step(action)
        expected = model.observation(mode == "memory")
        assert reward == expected_reward
        assert info.get("matched") == expected_match
        assert terminated == model.over and not truncated
        np.testing.assert_array_equal(obs["face_up"], expected["face_up"])
        np.testing.assert_array_equal(obs["removed"], expected["removed"])
        np.testing.assert_array_equal(obs["action_mask"], expected["action_mask"])
        np.testing.assert_array_equal(info["action_mask"], obs["action_mask"])
        # cards reveal exactly what the player knows, and reveal it truthfully
        np.testing.assert_array_equal(obs["cards"] > 0, expected["known"])
        for i in np.flatnonzero(obs["cards"]):
            assert env.faces[obs["cards"][i] - 1] == layout[i]
        assert env.layout == layout  # cards are conserved and never move
        assert info["mismatches"] == model.misses and info["turns"] == model.turns
        assert 2 * info["pairs"] == sum(obs["removed"])
        if terminated:
            assert info["won"] == (not any(model.on_table))
            break


@given(rules=small_rules(), seed=st.integers(0, 2**16))
def test_captured_cards_form_matching_pairs(rules, seed):
    env = ConcentrationEnv(rules=rules)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    layout = env.layout
    terminated = False
    while not terminated:
        before = obs["removed"].copy()
        obs, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        taken = np.flatnonzero(obs["removed"] & ~before)
        assert len(taken) in (0, 2)
        if len(taken) == 2:
            assert info["matched"] and cards_match(layout[taken[0]], layout[taken[1]], rules.matching)
    if info["won"]:
        assert obs["removed"].all() and info["pairs"] == rules.num_pairs


@given(
    rules=small_rules(illegal_action="raise"),
    seed=st.integers(0, 2**16),
    flips=st.lists(st.integers(0, 10**6), min_size=1, max_size=60),
)
def test_raise_mode_never_changes_state_on_illegal_flips(rules, seed, flips):
    env = ConcentrationEnv(rules=rules)
    obs, _ = env.reset(seed=seed)
    for pick in flips:
        action = pick % rules.num_cards
        if obs["action_mask"][action]:
            obs, _, terminated, _, _ = env.step(action)
            if terminated:
                break
            continue
        snapshot = env.get_state()
        try:
            env.step(action)
        except ValueError as error:
            assert f"position {action}" in str(error)
        else:
            raise AssertionError("an illegal flip did not raise")
        after = env.get_state()
        for name, value in vars(snapshot["core"]).items():
            np.testing.assert_array_equal(value, getattr(after["core"], name))


@given(
    rules=small_rules(),
    mode=st.sampled_from(["memory", "visible"]),
    seed=st.integers(0, 2**16),
    picks=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), min_size=1, max_size=120),
)
def test_vector_env_equals_single_envs(rules, mode, seed, picks):
    """Random rules and flips: the native vector env steps exactly like single envs."""
    import gymnasium as gym

    from tests.helpers.batched import assert_same

    common = dict(num_envs=3, rules=rules, observation_mode=mode, max_episode_steps=40)
    ours = gym.make_vec("Concentration-v0", **common)
    reference = gym.make_vec("Concentration-v0", vectorization_mode="sync", **common)
    obs, info = ours.reset(seed=seed)
    assert_same((obs, info), reference.reset(seed=seed), "reset")
    n = rules.num_cards
    for step, (legal_only, pick) in enumerate(picks):
        actions = np.array(
            [
                np.flatnonzero(row)[(pick + game) % row.sum()] if legal_only and row.any() else (pick + game) % n
                for game, row in enumerate(info["action_mask"])
            ]
        )
        result = ours.step(actions)
        assert_same(result, reference.step(actions), f"step {step}")
        info = result[-1]


@given(
    rules=small_rules(),
    players=st.integers(2, 4),
    mode=st.sampled_from(["memory", "visible"]),
    seed=st.integers(0, 2**16),
    picks=st.lists(st.tuples(st.booleans(), st.integers(0, 10**6)), min_size=1, max_size=150),
)
def test_multiplayer_invariants(rules, players, mode, seed, picks):
    """Random rules, seats and flips in the PettingZoo env: masks, knowledge, scores, ending."""
    from concentration_env import concentration_v0

    env = concentration_v0.env(rules=rules.replace(num_players=players), observation_mode=mode)
    env.reset(seed=seed)
    raw = env.unwrapped
    layout, n = raw.layout, rules.num_cards
    flipped = np.zeros(n, dtype=bool)  # every position any player has turned over
    values = {card: (rules.joker_value if card.is_joker else 1) for card in layout}
    for legal_only, pick in picks:
        agent = env.agent_selection
        for other in env.agents:
            obs = env.observe(other)
            board, mask = obs["observation"], obs["action_mask"]
            if other == agent:
                np.testing.assert_array_equal(mask.astype(bool), _legal_from_board(board))
            else:
                assert not mask.any()
            known = board["cards"] > 0
            assert not (known & ~flipped).any(), "a card the players never saw is shown"
            if mode == "visible":
                np.testing.assert_array_equal(known, board["face_up"].astype(bool) | board["removed"].astype(bool))
            for i in np.flatnonzero(known):
                assert raw.faces[board["cards"][i] - 1] == layout[i]
            scores = raw.scores_by_name()
            assert board["scores"][0] == scores[other] and board["scores"].sum() == sum(scores.values())
        removed = board["removed"].astype(bool)
        captured_points = sum(values[layout[i]] for i in np.flatnonzero(removed)) // 2
        assert sum(raw.scores_by_name().values()) == captured_points
        assert raw.layout == layout
        legal = np.flatnonzero(env.observe(agent)["action_mask"])
        action = int(legal[pick % len(legal)]) if legal_only else pick % n
        if action in legal:
            flipped[action] = True
        env.step(action)
        if all(env.terminations.values()):
            info = env.infos[agent]
            cleared = bool(env.unwrapped._state.removed.all())
            chips = rules.max_mismatches is not None and int(env.unwrapped._state.mismatches[0]) >= rules.max_mismatches
            assert cleared or chips
            assert info["winners"].shape == (raw.num_players,) and info["winners"].any()
            break
        assert not any(env.terminations.values())
        assert not env.unwrapped._state.removed.all()


def _legal_from_board(board) -> np.ndarray:
    """(n,) bool: cards on the table except this turn's first card. A lone face-up card is
    that first card; two face-up cards are last turn's missed pair, legal to flip again."""
    up = board["face_up"].astype(bool)
    first_card = up if up.sum() == 1 else np.zeros_like(up)
    return ~board["removed"].astype(bool) & ~first_card
