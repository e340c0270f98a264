"""The raw-tier memory network (``network: card_memory``): built from the observation space
alone, equivariant to the card positions, trained, saved and played."""

import json

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from baselines.evaluate import play  # noqa: E402
from concentration_env.game.rules import Rules  # noqa: E402
from concentration_env.training import ModelPolicy, load_config, train  # noqa: E402
from concentration_env.training.memory import RawMemoryNet  # noqa: E402
from concentration_env.training.recurrent import RecurrentActor, build_network  # noqa: E402

CONFIG = "configs/train/raw_memory_visible.yaml"
STEPS, BATCH, HIDDEN = 6, 3, 8
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


def test_built_from_the_observation_space_alone():
    space = visible_space(Rules(deck="pictures", pairs=5))
    net = build_network("card_memory", space, HIDDEN)  # no match table, no Rules
    assert isinstance(net, RawMemoryNet) and net.num_faces == 5
    samples = [space.sample() for _ in range(BATCH)]
    obs = {
        key: torch.as_tensor(np.stack([s[key] for s in samples]))
        for key in ("cards", "face_up", "removed", "action_mask")
    }
    logits, value, memory, recall = net.step(net.card_inputs(obs), net.initial_state(BATCH, 10))
    assert logits.shape == (BATCH, 10) and value.shape == (BATCH,) and recall.shape == (BATCH, 10, 6)
    assert memory.shape == (BATCH, 10, HIDDEN)
    with pytest.raises(ValueError, match="needs the rules' match table"):
        build_network("mlp", space, HIDDEN)


def test_permuting_card_positions_permutes_the_logits():
    torch.manual_seed(0)
    net = RawMemoryNet(num_faces=4, hidden=HIDDEN, num_heads=2)
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


def test_a_card_logit_depends_on_what_other_cards_show():
    """Attention across cards: changing one card's observation moves another card's logit."""
    torch.manual_seed(0)
    net = RawMemoryNet(num_faces=4, hidden=HIDDEN, num_heads=2)
    obs = random_observations(net.num_faces, 6, steps=1)
    other = {key: value.clone() for key, value in obs.items()}
    other["cards"][..., 0] = 3
    other["face_up"][..., 0] = True
    memory = net.initial_state(BATCH, 6)
    before = net.step(net.card_inputs({k: v[0] for k, v in obs.items()}), memory)[0]
    after = net.step(net.card_inputs({k: v[0] for k, v in other.items()}), memory)[0]
    assert not torch.allclose(before[:, 1:], after[:, 1:])


def test_smoke_train_save_reload_and_play(tmp_path):
    overrides = [
        "rules.pairs=3",
        "num_envs=8",
        "hyperparameters.n_steps=16",
        "hyperparameters.n_epochs=2",
        "total_timesteps=3000",
        "eval_freq=1500",
        "eval_episodes=4",
        "checkpoint_freq=1500",
    ]
    config = load_config(CONFIG, overrides)
    assert config.tier == "raw" and config.network == "card_memory"
    run_dir = train(config, "raw_memory_visible", tmp_path / "run", progress_bar=False)
    summary = json.loads((run_dir / "training.json").read_text())
    assert summary["timesteps"] >= 3000 and summary["tier"] == "raw"

    saved = torch.load(run_dir / "final_model.pt", weights_only=False)
    assert saved["network"] == "card_memory" and "match" not in saved
    actor = RecurrentActor.load(run_dir / "final_model.pt")
    assert isinstance(actor.net, RawMemoryNet)
    for name, tensor in actor.net.state_dict().items():
        torch.testing.assert_close(tensor, saved["state_dict"][name])

    rules = config.resolved_rules
    result = play(rules, [ModelPolicy(run_dir, rules)], games=6, seed=0, max_turns=200)
    np.testing.assert_array_equal(result.scores.sum(axis=1) + result.mismatches, result.turns)
    assert (result.scores.sum(axis=1) == rules.num_pairs).all()  # every deal cleared
