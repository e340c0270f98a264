"""Registration survives odd files in the preset folder: a file name that cannot be a
preset is skipped with a warning, and two presets that make one env id are reported. Every
AEC id answers a request for a parallel env with one clear error."""

import gymnasium as gym
import pettingzoo
import pytest

from concentration_env.envs import registration
from concentration_env.envs.registration import NoParallelEnv, pettingzoo_env_ids
from concentration_env.game import rules


@pytest.fixture
def presets(tmp_path, monkeypatch):
    """A preset folder of the test's own, and the registries restored afterwards."""
    monkeypatch.setattr(rules, "PRESET_DIR", tmp_path)
    registries = gym.registry, pettingzoo.aec_registry, pettingzoo.parallel_registry
    saved = [dict(registry) for registry in registries]
    yield tmp_path
    for registry, entries in zip(registries, saved):
        registry.clear()
        registry.update(entries)


def test_a_preset_file_name_with_a_space_is_skipped_with_a_warning(presets):
    (presets / "two decks.yaml").write_text("packs: 2\n")
    (presets / "Zebra.yaml").write_text("matching: zebra\n")
    (presets / "tiny_pack.yaml").write_text("ranks: 1\n")
    with pytest.warns(UserWarning) as caught:
        assert rules.preset_names() == ("tiny_pack",)
    assert [str(warning.message) for warning in caught] == [
        f"{presets / name}: skipped: a preset file name must be lowercase words joined by '_' (e.g. two_decks.yaml)"
        for name in ("Zebra.yaml", "two decks.yaml")
    ]
    with pytest.warns(UserWarning, match="skipped"):
        registration.register_envs()  # not "Malformed environment ID"
    assert gym.make("Concentration-TinyPack-v0").unwrapped.rules.num_cards == 4
    assert "concentration/Concentration-TinyPack-v0" in pettingzoo.aec_registry


def test_two_presets_that_make_one_env_id_are_reported(presets):
    (presets / "a1.yaml").write_text("ranks: 1\n")
    (presets / "a_1.yaml").write_text("ranks: 2\n")
    with pytest.warns(UserWarning, match=r"presets 'a1' and 'a_1' both make the env id 'Concentration-A1-v0'"):
        assert registration.solitaire_env_ids() == ("Concentration-v0", "Concentration-A1-v0")
    with pytest.warns(UserWarning, match="both make"):
        registration.register_envs()
    assert gym.make("Concentration-A1-v0").unwrapped.rules.ranks == 1


@pytest.mark.parametrize("env_id", pettingzoo_env_ids())
def test_a_parallel_env_is_refused_saying_the_game_is_turn_based(env_id):
    classic = "duel_v0" if "Duel" in env_id else "concentration_v0"
    expected = (
        f"{env_id} is turn-based (who flips next depends on the last flip), so it is offered as a PettingZoo "
        f"AEC env only, not as a parallel env: use pettingzoo.make('aec', '{env_id}', ...) "
        f"or concentration_env.{classic}.env(...)"
    )
    with pytest.raises(NoParallelEnv) as error:
        pettingzoo.make("parallel", env_id, num_players=2)
    assert str(error.value) == expected
    assert isinstance(error.value, pettingzoo.env_registry.exceptions.PettingZooRegistryError)
    assert pettingzoo.make("aec", env_id).metadata["is_parallelizable"] is False
