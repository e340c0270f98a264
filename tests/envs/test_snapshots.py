"""Corrupt snapshots: set_state checks everything before it changes anything, and a
snapshot it accepts is a game that plays on within its spaces."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from concentration_env import concentration_v0, duel_v0
from concentration_env.envs.solitaire import ConcentrationEnv
from concentration_env.game.state import STATE_FIELDS

MAKERS = {
    "solitaire": lambda: ConcentrationEnv(ranks=3, max_mismatches=30),
    "aec": lambda: concentration_v0.raw_env(num_players=3, ranks=3),
    "duel": lambda: duel_v0.raw_env(ranks=2),
}


def legal(env):
    """The legal flips of the seat to move."""
    if isinstance(env, ConcentrationEnv):
        return env.action_masks()
    return env.observe(env.agent_selection)["action_mask"].astype(bool)


def started(kind, seed, flips):
    env = MAKERS[kind]()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(flips):
        mask = legal(env)
        if not mask.any():
            break
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return env


def fingerprint(env):
    """Everything a snapshot restores, comparable."""
    snapshot = env.get_state()
    return snapshot["core"].buffer.tobytes(), repr(snapshot["rng"]), repr(snapshot.get("aec"))


def play_on(env, seed, flips=200):
    """Random legal flips; every observation stays in its space."""
    rng = np.random.default_rng(seed)
    for _ in range(flips):
        mask = legal(env)
        if not mask.any():
            return
        env.step(int(rng.choice(np.flatnonzero(mask))))
        if isinstance(env, ConcentrationEnv):
            assert env.observation_space.contains(env._observation())
        else:
            agent = env.agent_selection
            assert env.observation_space(agent).contains(env.observe(agent))


@given(
    kind=st.sampled_from(sorted(MAKERS)),
    seed=st.integers(0, 1000),
    flips=st.integers(0, 40),
    field=st.sampled_from(STATE_FIELDS),
    where=st.integers(0, 10**6),
    value=st.sampled_from([-(2**31), -128, -2, -1, 0, 1, 2, 3, 7, 11, 12, 26, 52, 127, 30000, 2**31 - 1]),
)
def test_a_corrupted_field_is_rejected_or_plays_on(kind, seed, flips, field, where, value):
    env = started(kind, seed, flips)
    snapshot = env.get_state()
    array = getattr(snapshot["core"], field)
    flat = array.reshape(-1)
    info = np.iinfo(array.dtype) if array.dtype.kind in "iu" else None
    flat[where % flat.size] = value if info is None else np.clip(value, info.min, info.max)
    before = fingerprint(env)
    try:
        env.set_state(snapshot)
    except ValueError as error:
        assert str(error).startswith("invalid state.")  # a field named (perhaps the one it contradicts)
        assert fingerprint(env) == before  # a rejected snapshot changes nothing
        return
    play_on(env, seed)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_the_issues_corruptions_are_named(kind):
    env = started(kind, 1, 5)
    cases = {
        "state.faces": lambda s: s["core"].faces.__setitem__((0, slice(None)), 30000),
        "state.player": lambda s: s["core"].player.__setitem__(0, 10**6),
        "state.first": lambda s: s["core"].first.__setitem__(0, 10**6),
        "state.captured_by": lambda s: s["core"].captured_by.__setitem__((0, 0), 100),
        "state.mismatches": lambda s: s["core"].mismatches.__setitem__(0, -5),
        "snapshot keys": lambda s: s.pop("rng"),
        "snapshot['rng']": lambda s: s.__setitem__("rng", {"bit_generator": "MT19937"}),
        "state.faces.shape": lambda s: s["core"].buffer[:8].view(np.int64).__setitem__(0, 2),
    }
    for name, corrupt in cases.items():
        snapshot = copy.deepcopy(env.get_state())
        corrupt(snapshot)
        before = fingerprint(env)
        with pytest.raises(ValueError, match=name.replace("[", r"\[").replace("]", r"\]")):
            env.set_state(snapshot)
        assert fingerprint(env) == before, name


def test_a_snapshot_of_other_rules_with_as_many_cards_is_refused():
    standard, pictures = ConcentrationEnv(), ConcentrationEnv(deck="pictures", pairs=26)
    standard.reset(seed=0)
    pictures.reset(seed=0)
    assert standard.game.num_cards == pictures.game.num_cards == 52
    with pytest.raises(ValueError, match=r"snapshot\['rules'\]"):
        pictures.set_state(standard.get_state())
    snapshot = standard.get_state()
    snapshot["rules"] = pictures.rules  # the rules key cannot vouch for the cards
    with pytest.raises(ValueError, match="state.faces"):
        pictures.set_state(snapshot)
