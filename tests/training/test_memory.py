"""The raw-tier memory networks (``network: card_memory``, a GRU per card, ``card_max_memory``,
a running maximum per card, and ``card_recall_attention``, whose policy reads the running
maximum's recall): built from the observation space alone,
equivariant to the card positions, their value trunk apart from the memory, trained, saved
and played."""

import json

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from baselines.evaluate import play  # noqa: E402
from concentration_env.game.rules import Rules  # noqa: E402
from concentration_env.training import ModelPolicy, load_config, train  # noqa: E402
from concentration_env.training.memory import MaxMemoryNet, RawMemoryNet  # noqa: E402
from concentration_env.training.recall_attention import RecallAttentionNet  # noqa: E402
from concentration_env.training.recurrent import (  # noqa: E402
    RecurrentActor,
    RecurrentPPO,
    RecurrentPPOSettings,
    build_network,
)

CONFIG = "configs/train/raw_memory_visible.yaml"
CONFIG_52 = "configs/train/raw_memory_visible_52.yaml"  # value trunk, value scale, target_kl
CONFIG_MAX_52 = "configs/train/raw_max_memory_visible_52.yaml"  # the running-maximum memory
CONFIG_RECALL_52 = "configs/train/raw_recall_attention_visible_52.yaml"  # the policy reads the recall
RAW_NETWORKS = {
    "card_memory": RawMemoryNet,
    "card_max_memory": MaxMemoryNet,
    "card_recall_attention": RecallAttentionNet,
}
STEPS, BATCH, HIDDEN = 6, 3, 8
SETTINGS = RecurrentPPOSettings(hidden=HIDDEN)
TOLERANCE = 1e-5


def visible_space(rules):
    return gym.make("Concentration-v0", rules=rules, observation_mode="visible").observation_space


def random_observations(num_faces, n, steps=STEPS):
    """A batch of raw visible-mode observation sequences (T, B, n): some cards up, some captured."""
    generator = torch.Generator().manual_seed(0)
    up = torch.rand(steps, BATCH, n, generator=generator) < 0.3
    removed = (torch.rand(steps, BATCH, n, generator=generator) < 0.2) & ~up
    faces = torch.randint(1, num_faces + 1, (steps, BATCH, n), generator=generator)
    return {
        "cards": torch.where(up | removed, faces, 0),
        "face_up": up,
        "removed": removed,
        "action_mask": ~(up | removed),
    }


@pytest.mark.parametrize("network", sorted(RAW_NETWORKS))
def test_built_from_the_observation_space_alone(network):
    space = visible_space(Rules(deck="pictures", pairs=5))
    net = build_network(network, space, SETTINGS)  # no match table, no Rules
    assert type(net) is RAW_NETWORKS[network] and net.num_faces == 5
    samples = [space.sample() for _ in range(BATCH)]
    obs = {
        key: torch.as_tensor(np.stack([s[key] for s in samples]))
        for key in ("cards", "face_up", "removed", "action_mask")
    }
    logits, value, memory, recall = net.step(net.card_inputs(obs), net.initial_state(BATCH, 10))
    assert logits.shape == (BATCH, 10) and value.shape == (BATCH,) and recall.shape == (BATCH, 10, 6)
    assert memory.shape == (BATCH, 10, HIDDEN)
    with pytest.raises(ValueError, match="needs the rules' match table"):
        build_network("mlp", space, SETTINGS)


@pytest.mark.parametrize("network", sorted(RAW_NETWORKS))
@pytest.mark.parametrize("value_trunk", [False, True])
def test_permuting_card_positions_permutes_the_logits(network, value_trunk):
    torch.manual_seed(0)
    net = RAW_NETWORKS[network](num_faces=4, hidden=HIDDEN, num_heads=2, value_trunk=value_trunk)
    n = 8
    obs = random_observations(net.num_faces, n)
    starts = torch.zeros(STEPS, BATCH)
    starts[0] = 1.0
    perm = torch.randperm(n)
    while (perm == torch.arange(n)).all():
        perm = torch.randperm(n)
    permuted = {key: value[..., perm] for key, value in obs.items()}

    def run(observations):
        inputs = net.card_inputs(observations)
        memory = net.recur(inputs, net.initial_state(BATCH, n), starts)
        return net.heads(inputs, memory)

    logits, value, recall = run(obs)
    logits_p, value_p, recall_p = run(permuted)
    torch.testing.assert_close(logits_p, logits[..., perm], atol=TOLERANCE, rtol=TOLERANCE)
    torch.testing.assert_close(recall_p, recall[..., perm, :], atol=TOLERANCE, rtol=TOLERANCE)
    torch.testing.assert_close(value_p, value, atol=TOLERANCE, rtol=TOLERANCE)
    # The logits depend on the card: the check above is not one of constant scores.
    assert logits[-1].std(dim=-1).min() > 0


@pytest.mark.parametrize("network", sorted(RAW_NETWORKS))
def test_a_card_logit_depends_on_what_other_cards_show(network):
    """Attention across cards: changing one card's observation moves another card's logit."""
    torch.manual_seed(0)
    net = RAW_NETWORKS[network](num_faces=4, hidden=HIDDEN, num_heads=2)
    obs = random_observations(net.num_faces, 6, steps=1)
    other = {key: value.clone() for key, value in obs.items()}
    other["cards"][..., 0] = 3
    other["face_up"][..., 0] = True
    memory = net.initial_state(BATCH, 6)
    before = net.step(net.card_inputs({k: v[0] for k, v in obs.items()}), memory)[0]
    after = net.step(net.card_inputs({k: v[0] for k, v in other.items()}), memory)[0]
    assert not torch.allclose(before[:, 1:], after[:, 1:])


@pytest.mark.parametrize("network", [*RAW_NETWORKS, *(f"{name}_value_trunk" for name in RAW_NETWORKS), "mlp"])
def test_playing_gives_the_logits_and_memory_of_a_training_step(network):
    """``act`` (what a saved model plays with) skips the value and read-out heads, and its
    logits and memory are those of ``step``, to the bit, flip after flip."""
    torch.manual_seed(0)
    rules = Rules(deck="pictures", pairs=4)
    if network == "mlp":
        from concentration_env.game.core import compile_rules
        from concentration_env.training.recurrent import CardMemoryNet

        net = CardMemoryNet(compile_rules(rules).match, hidden=HIDDEN)
    else:
        raw = RAW_NETWORKS[network.removesuffix("_value_trunk")]
        net = raw(num_faces=4, hidden=HIDDEN, num_heads=2, value_trunk=network.endswith("trunk"))
    obs = random_observations(4, 8)
    trained = played = net.initial_state(BATCH, 8)
    with torch.no_grad():
        for t in range(STEPS):
            inputs = net.card_inputs({key: value[t] for key, value in obs.items()})
            logits, _, trained, _ = net.step(inputs, trained)
            logits_played, played = net.act(inputs, played)
            assert torch.equal(logits_played, logits) and torch.equal(played, trained)
    assert logits.std(dim=-1).min() > 0  # not a check of constant scores


def sequence_outputs(net, n=6):
    obs = random_observations(net.num_faces, n)
    starts = torch.zeros(STEPS, BATCH)
    starts[0] = 1.0
    inputs = net.card_inputs(obs)
    return net.heads(inputs, net.recur(inputs, net.initial_state(BATCH, n), starts))


def test_a_value_trunk_of_its_own_does_not_train_the_memory():
    """With value_trunk the value loss reaches its own layers only; the policy's reaches the memory."""
    torch.manual_seed(0)
    net = RawMemoryNet(num_faces=4, hidden=HIDDEN, num_heads=2, value_trunk=True)
    logits, value, _ = sequence_outputs(net)
    value.sum().backward(retain_graph=True)
    assert net.cell.weight_hh.grad is None and net.cards.token[0].weight.grad is None
    assert net.value_cards is not None and net.value_cards.token[0].weight.grad.abs().sum() > 0
    logits.sum().backward()
    assert net.cell.weight_hh.grad.abs().sum() > 0
    # One trunk: the value's gradient reaches the memory through the shared layers.
    shared = RawMemoryNet(num_faces=4, hidden=HIDDEN, num_heads=2)
    sequence_outputs(shared)[1].sum().backward()
    assert shared.value_cards is None and shared.cell.weight_hh.grad.abs().sum() > 0


def test_the_max_memory_is_the_running_maximum_of_its_writes_since_the_deal():
    """Each card's memory is max(0, write(x_s)) over the flips s since the last episode start,
    so a face shown once stays in it however long the card lies face down."""
    torch.manual_seed(0)
    net = MaxMemoryNet(num_faces=4, hidden=HIDDEN, num_heads=2)
    n = 6
    obs = random_observations(net.num_faces, n)
    starts = torch.zeros(STEPS, BATCH)
    starts[0] = 1.0
    starts[3, 0] = 1.0  # game 0 is dealt again before its fourth flip
    inputs = net.card_inputs(obs)
    with torch.no_grad():
        memory = net.recur(inputs, torch.rand(BATCH, n, HIDDEN), starts)
        writes = net.write(inputs).clamp(min=0)
    for t in range(STEPS):
        for game in range(BATCH):
            since = 3 if game == 0 and t >= 3 else 0
            expected = writes[since : t + 1, game].max(dim=0).values
            torch.testing.assert_close(memory[t, game], expected)
    # Card 0 of game 1: face down throughout, or face 2 up at the first flip only. At the last
    # flip the two memories still differ.
    hidden = {key: value.clone() for key, value in obs.items()}
    for key, value in (("cards", 0), ("face_up", False), ("removed", False), ("action_mask", True)):
        hidden[key][:, 1, 0] = value
    shown = {key: value.clone() for key, value in hidden.items()}
    for key, value in (("cards", 2), ("face_up", True), ("action_mask", False)):
        shown[key][0, 1, 0] = value
    with torch.no_grad():
        remembered = net.recur(net.card_inputs(shown), net.initial_state(BATCH, n), starts)[-1, 1, 0]
        never_seen = net.recur(net.card_inputs(hidden), net.initial_state(BATCH, n), starts)[-1, 1, 0]
    assert not torch.allclose(remembered, never_seen)


def test_a_value_trunk_of_its_own_does_not_train_the_max_memory():
    torch.manual_seed(0)
    net = MaxMemoryNet(num_faces=4, hidden=HIDDEN, num_heads=2, value_trunk=True)
    logits, value, _ = sequence_outputs(net)
    value.sum().backward(retain_graph=True)
    assert net.write.weight.grad is None and net.cards.token.weight.grad is None
    logits.sum().backward()
    assert net.write.weight.grad.abs().sum() > 0


def test_value_scale_multiplies_the_value():
    torch.manual_seed(0)
    plain = RawMemoryNet(num_faces=4, hidden=HIDDEN, num_heads=2, value_trunk=True)
    scaled = RawMemoryNet(num_faces=4, hidden=HIDDEN, num_heads=2, value_trunk=True, value_scale=30.0)
    scaled.load_state_dict(plain.state_dict())
    with torch.no_grad():
        logits, value, _ = sequence_outputs(plain)
        logits_scaled, value_scaled, _ = sequence_outputs(scaled)
    torch.testing.assert_close(value_scaled, 30.0 * value)
    torch.testing.assert_close(logits_scaled, logits)


@pytest.mark.parametrize("target_kl, stops", [(None, False), (1e-9, True)])
def test_target_kl_stops_the_epochs_of_an_update(target_kl, stops):
    """A tiny target_kl ends the update after its first minibatch moved the policy; none runs every one."""
    config = load_config(CONFIG, ["rules.pairs=3", "num_envs=8"])
    from concentration_env.training.envs import make_vec_env

    venv = make_vec_env(config, config.resolved_rules, 8, 0)
    settings = RecurrentPPOSettings(n_steps=16, n_epochs=3, env_batches=2, hidden=HIDDEN, target_kl=target_kl)
    agent = RecurrentPPO(venv, settings, network="card_memory")
    steps = []
    step = agent.optimizer.step
    agent.optimizer.step = lambda *args, **kwargs: (steps.append(1), step(*args, **kwargs))[1]
    agent.learn(16 * 8)
    assert len(steps) == (1 if stops else settings.n_epochs * settings.env_batches)


@pytest.mark.parametrize("config_path", [CONFIG, CONFIG_52, CONFIG_MAX_52, CONFIG_RECALL_52])
def test_smoke_train_save_reload_and_play(tmp_path, config_path):
    overrides = [
        "rules.pairs=3" if config_path == CONFIG else "rules=toddler",
        "num_envs=8",
        "hyperparameters.n_steps=16",
        "hyperparameters.n_epochs=2",
        "total_timesteps=3000",
        "eval_freq=1500",
        "eval_episodes=4",
        "checkpoint_freq=1500",
    ]
    if config_path == CONFIG_RECALL_52:
        overrides.append("hyperparameters.policy_from=null")  # its 52-card model does not fit this deck
    config = load_config(config_path, overrides)
    assert config.tier == "raw" and config.network in RAW_NETWORKS
    run_dir = train(config, "raw_memory_visible", tmp_path / "run", progress_bar=False)
    summary = json.loads((run_dir / "training.json").read_text())
    assert summary["timesteps"] >= 3000 and summary["tier"] == "raw"

    saved = torch.load(run_dir / "final_model.pt", weights_only=False)
    assert saved["network"] == config.network and "match" not in saved
    actor = RecurrentActor.load(run_dir / "final_model.pt")
    assert type(actor.net) is RAW_NETWORKS[config.network]
    assert actor.net.value_trunk == config.hyperparameters.get("value_trunk", False)
    assert actor.net.value_scale == config.hyperparameters.get("value_scale", 1.0)
    for name, tensor in actor.net.state_dict().items():
        torch.testing.assert_close(tensor, saved["state_dict"][name])

    rules = config.resolved_rules
    result = play(rules, [ModelPolicy(run_dir, rules)], games=6, seed=0, max_turns=200)
    np.testing.assert_array_equal(result.scores.sum(axis=1) + result.mismatches, result.turns)
    assert (result.scores.sum(axis=1) == rules.num_pairs).all()  # every deal cleared
