"""The recurrent learner's batched computations equal the step-by-step ones they replace."""

import pytest

torch = pytest.importorskip("torch")

from baselines.evaluate import play  # noqa: E402
from concentration_env.game.core import compile_rules  # noqa: E402
from concentration_env.game.rules import Rules  # noqa: E402
from concentration_env.training import ModelPolicy  # noqa: E402
from concentration_env.training.recurrent import CardMemoryNet  # noqa: E402

STEPS, BATCH, HIDDEN = 7, 3, 8
TOLERANCE = 1e-5


@pytest.fixture
def net():
    torch.manual_seed(0)
    return CardMemoryNet(compile_rules(Rules(deck="pictures", pairs=3)).match, HIDDEN)


def random_inputs(net, steps=STEPS):
    """Card inputs of random observations (a face up at some positions, some removed, some first)."""
    n = 6
    up = torch.rand(steps, BATCH, n) < 0.3
    obs = {
        "cards": torch.where(up, torch.randint(1, net.num_faces + 1, (steps, BATCH, n)), 0),
        "face_up": up,
        "removed": torch.rand(steps, BATCH, n) < 0.2,
        "action_mask": torch.rand(steps, BATCH, n) < 0.8,
    }
    return net.card_inputs(obs)


def test_recur_is_the_gru_cell_step_by_step_with_resets(net):
    inputs = random_inputs(net)
    starts = torch.zeros(STEPS, BATCH)
    starts[3, 1] = starts[0, 2] = 1.0  # env 1 starts a new episode mid-sequence, env 2 at once
    before = torch.randn(BATCH, inputs.shape[2], HIDDEN)
    memories = net.recur(inputs, before, starts)

    memory, expected = before, []
    for t in range(STEPS):
        memory = memory * (1 - starts[t])[:, None, None]
        memory = net.cell(inputs[t].flatten(0, 1), memory.flatten(0, 1)).view_as(memory)
        expected.append(memory)
    torch.testing.assert_close(memories, torch.stack(expected), atol=TOLERANCE, rtol=TOLERANCE)
    # The reset really zeroes: env 2 from zero memory equals env 2 from its given memory.
    fresh = net.recur(inputs, torch.zeros_like(before), starts)
    torch.testing.assert_close(fresh[:, 2], memories[:, 2])
    assert not torch.allclose(fresh[:3, 1], memories[:3, 1])


def test_heads_score_the_concatenated_card_features(net):
    inputs = random_inputs(net)
    memory = torch.randn(*inputs.shape[:-1], HIDDEN)
    logits, value, recall = net.heads(inputs, memory)

    # The scorer as written in the module docstring: one MLP on [memory, context, pairs, seen].
    belief = recall.softmax(dim=-1)
    first_belief = (belief * inputs[..., -2:-1]).sum(dim=-2)
    pairs_with_first = (belief @ net.match * first_belief[..., None, :]).sum(-1, keepdim=True)
    context = memory.mean(dim=-2, keepdim=True).expand_as(memory)
    features = torch.cat([memory, context, pairs_with_first, 1.0 - belief[..., :1]], dim=-1)
    torch.testing.assert_close(logits, net.score(features).squeeze(-1), atol=TOLERANCE, rtol=TOLERANCE)
    pooled = torch.cat([memory.mean(dim=-2), memory.max(dim=-2).values], dim=-1)
    torch.testing.assert_close(value, net.value(pooled).squeeze(-1))


def test_one_call_over_a_sequence_equals_acting_step_by_step(net):
    inputs = random_inputs(net)
    starts = torch.zeros(STEPS, BATCH)
    starts[0] = starts[4, 0] = 1.0
    memory = torch.zeros(BATCH, inputs.shape[2], HIDDEN)
    logits, values = net.heads(inputs, net.recur(inputs, memory, starts))[:2]
    for t in range(STEPS):
        step_logits, step_value, memory, _ = net.step(inputs[t], memory, starts[t])
        torch.testing.assert_close(step_logits, logits[t], atol=TOLERANCE, rtol=TOLERANCE)
        torch.testing.assert_close(step_value, values[t], atol=TOLERANCE, rtol=TOLERANCE)


def test_the_committed_engineered_model_still_loads_and_plays():
    """models/visible_recurrent was saved before files named their network: it loads as the
    engineered one and still plays near the optimum (9.16 moves on 6 picture pairs)."""
    policy = ModelPolicy("models/visible_recurrent")
    assert isinstance(policy._actor.net, CardMemoryNet)
    assert not ModelPolicy("models/visible_recurrent", deterministic=True).stationary  # it has a memory
    result = play(policy.rules, [policy], games=40, seed=0, max_turns=100)
    assert (result.scores.sum(axis=1) == policy.rules.num_pairs).all()
    assert result.turns.mean() < 10.5  # random play takes about 37
