"""The raw tier's attention learner: built from the observation space alone, equivariant to
moving cards around, trainable and reloadable; and the tier every config and run names."""

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import torch
from gymnasium import spaces

from baselines.evaluate import play
from concentration_env.game import compile as compile_module
from concentration_env.game.rules import Rules
from concentration_env.training import ModelPolicy, load_config, train
from concentration_env.training.config import config_from_mapping
from concentration_env.training.evaluation import agent_stats
from concentration_env.training.run import EVAL_SEED_OFFSET
from concentration_env.training.run_folder import read_eval_csv

CONFIGS = Path("configs/train")
TINY = {
    "algo": "maskable_ppo",
    "rules": {"deck": "pictures", "pairs": 4},
    "features": "raw",
    "network": "card_attention",
    "num_envs": 16,
    "vec_env": "native",
    "total_timesteps": 2048,
    "policy_kwargs": {"d_model": 16, "layers": 1, "heads": 2},
    "hyperparameters": {"n_steps": 32, "batch_size": 256, "n_epochs": 2, "target_kl": 0.05},
    "eval_freq": 1024,
    "eval_episodes": 8,
    "checkpoint_freq": 2048,
}


def board(num_cards: int, faces: int, back: bool = False) -> spaces.Dict:
    """An observation space written out by hand: no rules, no game."""
    fields = {
        "cards": spaces.MultiDiscrete(np.full(num_cards, faces + 1), dtype=np.int16),
        "face_up": spaces.MultiBinary(num_cards),
        "removed": spaces.MultiBinary(num_cards),
        "action_mask": spaces.MultiBinary(num_cards),
    }
    if back:
        fields["back"] = spaces.MultiBinary(num_cards)
    return spaces.Dict(fields)


def policy_of(space: spaces.Dict, **kwargs):
    from concentration_env.training.attention import CardAttentionPolicy

    num_cards = len(space["cards"].nvec)
    return CardAttentionPolicy(space, spaces.Discrete(num_cards), lambda _: 3e-4, **kwargs)


def random_obs(rng, batch: int, num_cards: int, faces: int, keys) -> dict[str, np.ndarray]:
    obs = {key: rng.integers(0, 2, (batch, num_cards), dtype=np.int8) for key in keys}
    obs["cards"] = rng.integers(0, faces + 1, (batch, num_cards)).astype(np.int16)
    obs["action_mask"][:, 0] = 1  # at least one legal flip
    return obs


def logits_and_value(policy, obs):
    tensors = {key: torch.as_tensor(value) for key, value in obs.items()}
    with torch.no_grad():
        tokens = policy.pi_features_extractor(tensors)  # the policy's trunk, shared or not
        return policy.mlp_extractor.forward_actor(tokens).numpy(), policy.predict_values(tensors).numpy()


@pytest.mark.parametrize("back", [False, True])
def test_permuting_the_cards_permutes_the_logits_and_keeps_the_value(back):
    rng = np.random.default_rng(0)
    space = board(20, 10, back)
    policy = policy_of(space)
    obs = random_obs(rng, 5, 20, 10, space.spaces)
    order = rng.permutation(20)
    logits, value = logits_and_value(policy, obs)
    moved, moved_value = logits_and_value(policy, {key: column[:, order] for key, column in obs.items()})
    np.testing.assert_allclose(moved, logits[:, order], atol=1e-5)
    np.testing.assert_allclose(moved_value, value, atol=1e-5)
    assert np.ptp(logits, axis=1).min() > 0  # the cards get different logits: the check has teeth


def test_the_flags_and_faces_reach_the_logits():
    rng = np.random.default_rng(1)
    space = board(12, 6, back=True)
    policy = policy_of(space)
    obs = random_obs(rng, 1, 12, 6, space.spaces)
    logits, _ = logits_and_value(policy, obs)
    for key in space.spaces:
        changed = {k: v.copy() for k, v in obs.items()}
        changed[key][0, 3] = (changed[key][0, 3] + 1) % 2 if key != "cards" else (changed[key][0, 3] + 1) % 7
        assert not np.allclose(logits_and_value(policy, changed)[0][0, 3], logits[0, 3]), key


def test_the_same_weights_serve_any_deck_size_within_the_face_vocabulary():
    rng = np.random.default_rng(2)
    policy = policy_of(board(12, 52))
    for num_cards in (12, 104):
        logits, value = logits_and_value(policy, random_obs(rng, 3, num_cards, 52, board(num_cards, 52).spaces))
        assert logits.shape == (3, num_cards) and value.shape == (3, 1)


def test_the_policy_is_built_and_run_from_the_spaces_alone(monkeypatch):
    def no_rules(*args, **kwargs):
        raise AssertionError("the attention policy touched the rules")

    monkeypatch.setattr(Rules, "__init__", no_rules)
    monkeypatch.setattr(compile_module, "compile_rules", no_rules)
    space = board(8, 4)
    policy = policy_of(space)
    obs = random_obs(np.random.default_rng(3), 4, 8, 4, space.spaces)
    actions, _ = policy.predict(obs, deterministic=True, action_masks=obs["action_mask"].astype(bool))
    assert all(obs["action_mask"][row, action] for row, action in enumerate(actions))  # masked: legal flips only


@pytest.mark.parametrize("shared", [False, True])
def test_the_value_loss_reaches_the_policy_trunk_only_when_shared(shared):
    rng = np.random.default_rng(4)
    space = board(10, 5)
    policy = policy_of(space, shared=shared)
    obs = {key: torch.as_tensor(value) for key, value in random_obs(rng, 4, 10, 5, space.spaces).items()}
    policy.predict_values(obs).pow(2).sum().backward()
    reached = [p.grad is not None and bool(p.grad.abs().sum() > 0) for p in policy.pi_features_extractor.parameters()]
    assert any(reached) == shared
    assert (policy.pi_features_extractor is policy.vf_features_extractor) == shared


def test_a_model_saved_with_one_trunk_loads_with_one(tmp_path):
    from sb3_contrib import MaskablePPO

    from concentration_env.training.attention import CardAttentionPolicy

    config = config_from_mapping(TINY)
    from concentration_env.training.envs import make_vec_env

    venv = make_vec_env(config, config.resolved_rules, 4, 0)
    for shared in (False, True):
        model = MaskablePPO(CardAttentionPolicy, venv, n_steps=8, batch_size=32, policy_kwargs={"shared": shared})
        model.save(tmp_path / "model.zip")
        loaded = MaskablePPO.load(tmp_path / "model.zip")
        assert loaded.policy.share_features_extractor == shared
    # What earlier versions saved: SB3's own flag, no ``shared``.
    old = CardAttentionPolicy(venv.observation_space, venv.action_space, lambda _: 3e-4, share_features_extractor=True)
    assert old.share_features_extractor and old.shared


def test_a_value_trunk_without_attention_reads_each_card_alone(tmp_path):
    """value_layers=0: each value token is its own card's embedding, whatever the other
    cards show; the value's gradient stays out of the policy's trunk; the setting survives a
    save and a load, and a shared trunk refuses it."""
    from sb3_contrib import MaskablePPO

    from concentration_env.training.attention import CardAttentionPolicy
    from concentration_env.training.envs import make_vec_env

    rng = np.random.default_rng(5)
    space = board(10, 5)
    policy = policy_of(space, layers=2, value_layers=0)
    assert len(policy.pi_features_extractor.attend.layers) == 2
    assert len(policy.vf_features_extractor.attend.layers) == 0
    obs = {key: torch.as_tensor(value) for key, value in random_obs(rng, 4, 10, 5, space.spaces).items()}
    tokens = policy.vf_features_extractor(obs)
    alone = torch.stack(
        [policy.vf_features_extractor({k: v[:, [card]] for k, v in obs.items()})[:, 0] for card in range(10)], dim=1
    )
    assert torch.allclose(tokens, alone, atol=1e-6)  # no card's token depends on another card
    policy.predict_values(obs).pow(2).sum().backward()
    assert all(p.grad is None for p in policy.pi_features_extractor.parameters())
    venv = make_vec_env(config_from_mapping(TINY), config_from_mapping(TINY).resolved_rules, 4, 0)
    model = MaskablePPO(CardAttentionPolicy, venv, n_steps=8, batch_size=32, policy_kwargs={"value_layers": 0})
    model.save(tmp_path / "model.zip")
    loaded = MaskablePPO.load(tmp_path / "model.zip").policy
    assert loaded.value_layers == 0 and len(loaded.vf_features_extractor.attend.layers) == 0
    assert loaded.settings()["value_layers"] == 0
    with pytest.raises(ValueError, match="value_layers=0 needs a value trunk of its own"):
        policy_of(space, shared=True, value_layers=0)


def test_training_replays_the_observations_and_masks_the_policy_acted_on():
    """The rollout buffer stores floats and the native env reuses its arrays: what PPO trains
    on must still be what the policy saw and which flips were legal when it acted."""
    from stable_baselines3.common.utils import obs_as_tensor

    from concentration_env.training.envs import make_vec_env
    from concentration_env.training.learners import build_sb3

    config = config_from_mapping({**TINY, "num_envs": 4, "hyperparameters": {"n_steps": 40, "batch_size": 160}})
    venv = make_vec_env(config, config.resolved_rules, config.num_envs, 0)
    model = build_sb3(config, venv, None)
    seen: list[dict[str, np.ndarray]] = []
    masks: list[np.ndarray] = []
    forward = model.policy.forward

    def recording(obs, deterministic=False, action_masks=None):
        seen.append({key: value.clone().numpy() for key, value in obs.items()})
        masks.append(np.array(action_masks, copy=True))
        return forward(obs, deterministic, action_masks)

    model.policy.forward = recording
    model.learn(40 * 4)
    buffer = model.rollout_buffer
    assert buffer.generator_ready  # the update flattened the buffer env by env: undo that

    def by_step(array: np.ndarray) -> np.ndarray:
        return array.reshape(4, 40, *array.shape[1:]).swapaxes(0, 1)

    stored = {key: by_step(value) for key, value in buffer.observations.items()}
    assert len(seen) == 40
    for key in seen[0]:
        np.testing.assert_array_equal(stored[key], np.stack([step[key] for step in seen]))
    np.testing.assert_array_equal(by_step(buffer.action_masks), np.stack(masks).reshape(40, 4, -1))
    assert not np.array_equal(seen[0]["cards"], seen[-1]["cards"])  # the games moved on
    # and the update reads the tokens the policy acted on
    replay = obs_as_tensor({key: value[5] for key, value in stored.items()}, "cpu")
    acted = obs_as_tensor(seen[5], "cpu")
    with torch.no_grad():
        np.testing.assert_allclose(
            model.policy.get_distribution(replay).distribution.logits.numpy(),
            model.policy.get_distribution(acted).distribution.logits.numpy(),
            atol=1e-6,
        )


def test_a_space_it_cannot_read_gets_one_clear_error():
    from concentration_env.training.attention import CardAttentionPolicy

    with pytest.raises(ValueError, match="card_attention reads the raw observation"):
        CardAttentionPolicy(spaces.Box(0, 1, (8, 5)), spaces.Discrete(8), lambda _: 3e-4)


def test_config_validation():
    with pytest.raises(ValueError, match="'card_attention' reads the raw observation; it needs features: raw"):
        config_from_mapping({**TINY, "features": "card_features"})
    with pytest.raises(ValueError, match="'card_attention' is implemented for algo: maskable_ppo"):
        config_from_mapping({**TINY, "algo": "ppo"})
    with pytest.raises(ValueError, match="unknown name\\(s\\) 'hidden' for network card_attention; allowed: d_model"):
        config_from_mapping({**TINY, "policy_kwargs": {"hidden": 64}})
    with pytest.raises(ValueError, match="'policy_kwargs': invalid layers=0"):
        config_from_mapping({**TINY, "policy_kwargs": {"layers": 0}})
    with pytest.raises(ValueError, match="shared must be true or false"):
        config_from_mapping({**TINY, "policy_kwargs": {"shared": "yes"}})
    with pytest.raises(ValueError, match="value_scale"):
        config_from_mapping({**TINY, "policy_kwargs": {"value_scale": 0}})
    assert config_from_mapping({**TINY, "policy_kwargs": {"shared": True, "value_scale": 30}}).policy_kwargs
    with pytest.raises(ValueError, match="'policy_kwargs': invalid value_layers=-1"):
        config_from_mapping({**TINY, "policy_kwargs": {"value_layers": -1}})
    with pytest.raises(ValueError, match="value_layers needs a value trunk of its own"):
        config_from_mapping({**TINY, "policy_kwargs": {"shared": True, "value_layers": 0}})
    assert config_from_mapping({**TINY, "policy_kwargs": {"value_layers": 0}}).policy_kwargs["value_layers"] == 0
    with pytest.raises(ValueError, match="d_model=30 must be a multiple of heads=4"):
        config_from_mapping({**TINY, "policy_kwargs": {"d_model": 30}})


def test_every_config_and_model_card_names_its_tier():
    assert config_from_mapping(TINY).tier == "raw" and not config_from_mapping(TINY).engineered_by
    assert config_from_mapping({**TINY, "network": "mlp"}).tier == "raw"
    assert load_config(CONFIGS / "visible_recurrent.yaml").engineered_by  # features: raw, yet engineered
    for path in sorted(CONFIGS.glob("*.yaml")):
        config = load_config(path)
        assert path.read_text().startswith(f"# Tier: {config.tier} ("), path
        assert (config.tier == "raw") == (not config.engineered_by), path
    for card in sorted(Path("models").glob("*/README.md")):
        config = load_config(card.parent / "config.yaml")
        assert f"- Tier: {config.tier} (" in card.read_text(), card


def test_smoke_train_save_reload_and_play(tmp_path):
    config = config_from_mapping(TINY)
    run_dir = train(config, "attention", tmp_path / "run", progress_bar=False)
    summary = json.loads((run_dir / "training.json").read_text())
    assert summary["timesteps"] >= 2048 and summary["tier"] == "raw" and summary["engineered_by"] == []
    assert (run_dir / "config.yaml").read_text().startswith("# tier: raw (")
    policy = ModelPolicy(run_dir)
    rules = config.resolved_rules
    result = play(rules, [policy], games=8, seed=0, max_turns=60)
    np.testing.assert_array_equal(result.scores.sum(axis=1) + result.mismatches, result.turns)
    # The reloaded model plays the final evaluation's deals as the model in training did.
    final = read_eval_csv(run_dir / "eval.csv")
    stats = agent_stats(config, rules, policy, config.eval_episodes, config.seed + EVAL_SEED_OFFSET)
    assert stats["moves"] == pytest.approx(final["moves"][-1])


def test_a_checkerboard_model_reads_the_backs_when_it_plays(tmp_path):
    rules = {"packs": 2, "backs": "checkerboard", "ranks": 1, "matching": "identical"}
    config = config_from_mapping({**TINY, "rules": rules, "total_timesteps": 512, "eval_freq": 512})
    run_dir = train(config, "attention", tmp_path / "run", progress_bar=False)
    policy = ModelPolicy(run_dir)
    assert "back" in policy._model.observation_space.spaces
    result = play(config.resolved_rules, [policy], games=4, seed=0, max_turns=60)
    np.testing.assert_array_equal(result.scores.sum(axis=1) + result.mismatches, result.turns)


@pytest.mark.parametrize(("width", "heads", "layers"), [(32, 4, 1), (16, 1, 2), (24, 3, 2)])
def test_card_transformer_computes_torchs_encoder(width, heads, layers):
    """The written-out forward is torch's pre-norm encoder to float rounding, with the same
    parameter names (saved models load into either), and so are its gradients."""
    from torch import nn

    from concentration_env.training.card_nets import CardTransformer

    torch.manual_seed(0)
    ours = CardTransformer(width, heads, layers)
    layer = nn.TransformerEncoderLayer(
        width, heads, dim_feedforward=2 * width, dropout=0.0, batch_first=True, norm_first=True
    )
    torchs = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(width), enable_nested_tensor=False)
    torchs.load_state_dict(ours.state_dict())
    tokens = torch.randn(5, 13, width)
    ours(tokens).square().sum().backward()
    torchs(tokens).square().sum().backward()
    torch.testing.assert_close(ours(tokens), torchs(tokens), rtol=1e-5, atol=1e-5)
    for (name, mine), theirs in zip(ours.named_parameters(), torchs.parameters(), strict=True):
        torch.testing.assert_close(mine.grad, theirs.grad, rtol=1e-4, atol=1e-5, msg=name)
    with pytest.raises(TypeError, match="tokens only"):
        ours(tokens, mask=None)


@pytest.mark.parametrize("layers", [0, 1, 2])
def test_card_tokens_run_the_card_alone_work_on_the_table_of_combinations(layers):
    """card_tokens runs the first layer's per-card work on every face and flag combination
    once and gathers it (CardTransformer.of_rows): the same tokens and gradients, to float
    rounding, as the trunk run on each card's own embedding."""
    from torch import nn

    from concentration_env.training.card_nets import FLAG_KEYS, card_tokens, init_card_tokens

    torch.manual_seed(0)
    module = nn.Module()
    init_card_tokens(module, 7, FLAG_KEYS, 16, layers, 2)
    generator = torch.Generator().manual_seed(1)
    observations = {"cards": torch.randint(0, 7, (5, 12), generator=generator)}
    for key in FLAG_KEYS:
        observations[key] = torch.randint(0, 2, (5, 12), generator=generator)
    flags = sum(observations[key] << bit for bit, key in enumerate(FLAG_KEYS))
    card_tokens(module, observations).square().sum().backward()
    tabulated = {name: weight.grad.clone() for name, weight in module.named_parameters() if weight.grad is not None}
    module.zero_grad()
    direct = module.attend(module.faces(observations["cards"]) + module.flags(flags))
    direct.square().sum().backward()
    torch.testing.assert_close(card_tokens(module, observations), direct, rtol=1e-5, atol=1e-5)
    assert tabulated.keys() == {name for name, weight in module.named_parameters() if weight.grad is not None}
    for name, weight in module.named_parameters():
        if weight.grad is not None:
            torch.testing.assert_close(tabulated[name], weight.grad, rtol=1e-4, atol=1e-5, msg=name)
