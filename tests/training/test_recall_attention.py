"""The raw-tier memory network whose policy reads its recall (``network: card_recall_attention``):
its trunks start from a memory-mode attention model and then score a visible-mode board as
that model scores the memory-mode one; frozen trunks stay put while the read-out learns."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from gymnasium import spaces  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

from concentration_env.game.batch import GameBatch  # noqa: E402
from concentration_env.game.rules import Rules  # noqa: E402
from concentration_env.integrations.sb3 import ConcentrationSB3VecEnv  # noqa: E402
from concentration_env.training.attention import CardAttentionPolicy  # noqa: E402
from concentration_env.training.recall_attention import RecallAttentionNet  # noqa: E402
from concentration_env.training.recurrent import (  # noqa: E402
    RecurrentPPO,
    RecurrentPPOSettings,
    obs_tensors,
    remember,
)

PAIRS, WIDTH, HEADS, SCALE = 4, 8, 4, 3.0  # 4 heads: the recurrent learner's networks have 4
RULES = Rules(deck="pictures", pairs=PAIRS)


@pytest.fixture(scope="module")
def attention_model(tmp_path_factory):
    """A memory-mode card_attention model, trained a little so that its weights are its own."""
    venv = ConcentrationSB3VecEnv(8, rules=RULES, observation_mode="memory")
    venv.seed(0)
    kwargs = {"d_model": WIDTH, "layers": 1, "heads": HEADS, "value_scale": SCALE}
    model = MaskablePPO(CardAttentionPolicy, venv, n_steps=16, batch_size=64, policy_kwargs=kwargs, seed=0)
    model.learn(256)
    path = tmp_path_factory.mktemp("attention") / "model.zip"
    model.save(path)
    return path, model.policy


def recall_net(**kwargs) -> RecallAttentionNet:
    options = {"hidden": WIDTH, "num_heads": HEADS, "value_trunk": True, "value_scale": SCALE, **kwargs}
    return RecallAttentionNet(PAIRS, **options)


def test_with_a_sure_recall_it_plays_as_the_memory_mode_model_it_started_from(attention_model):
    """Started from a memory-mode model and given a read-out sure of the agent's own record,
    its logits and value on the visible-mode board equal that model's on the memory-mode board
    of the same deal, flip after flip; its own untrained read-out gives other logits."""
    path, policy = attention_model
    net = recall_net()
    net.start_from(path)
    games = 6
    memory_mode, visible_mode = GameBatch(games, RULES, "memory"), GameBatch(games, RULES, "visible")
    for batch in (memory_mode, visible_mode):
        batch.seed(3)
        batch.deal(np.arange(games))
    record = torch.zeros(games, 2 * PAIRS, dtype=torch.long)
    starts = torch.ones(games)
    memory = net.initial_state(games, 2 * PAIRS)
    rng = np.random.default_rng(0)
    untrained_differs = False
    for _ in range(5):
        seen, shown = obs_tensors(memory_mode.observe()), obs_tensors(visible_mode.observe())
        record = remember(record, shown, starts)
        with torch.no_grad():
            theirs = policy.mlp_extractor.forward_actor(policy.pi_features_extractor(seen))
            their_value = policy.predict_values(seen).squeeze(-1)
            inputs = net.card_inputs(shown)
            sure = torch.nn.functional.one_hot(record, PAIRS + 1).float() * 1e3
            faces, flags = net.recalled_board(inputs, sure)
            ours = net.card_heads.score(net.tokens(net.policy_tokens, faces, flags)).squeeze(-1)
            value_latent = net.card_heads.pool(net.tokens(net.value_tokens, faces, flags).mean(dim=-2))
            our_value = net.value(value_latent).squeeze(-1) * net.value_scale
            own, _, memory, _ = net.step(inputs, memory, starts)
        torch.testing.assert_close(ours, theirs)
        torch.testing.assert_close(our_value, their_value)
        untrained_differs |= not torch.allclose(own, theirs)
        legal = seen["action_mask"].numpy().astype(bool)
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in legal])
        memory_mode.step(actions)
        visible_mode.step(actions)
        starts = torch.zeros(games)
    assert untrained_differs


@pytest.mark.parametrize(
    "options, message",
    [
        ({"hidden": 2 * WIDTH}, rf"hidden \(d_model\) {WIDTH} \(here {2 * WIDTH}\)"),
        ({"value_scale": 1.0}, rf"value_scale {SCALE} \(here 1.0\)"),
        ({"value_trunk": False}, "needs value_trunk: true"),
    ],
)
def test_starting_from_a_model_of_another_shape_names_what_differs(attention_model, options, message):
    net = recall_net(**options)
    before = {name: tensor.clone() for name, tensor in net.state_dict().items()}
    with pytest.raises(ValueError, match=message):
        net.start_from(attention_model[0])
    for name, tensor in net.state_dict().items():
        assert torch.equal(tensor, before[name])  # nothing half-copied


def test_other_faces_are_refused(attention_model):
    net = RecallAttentionNet(PAIRS + 1, hidden=WIDTH, num_heads=HEADS, value_trunk=True, value_scale=SCALE)
    with pytest.raises(ValueError, match=rf"faces {PAIRS} \(here {PAIRS + 1}\)"):
        net.start_from(attention_model[0])


def test_frozen_trunks_stay_as_they_came_while_the_read_out_learns(attention_model):
    venv = ConcentrationSB3VecEnv(8, rules=RULES, observation_mode="visible")
    venv.seed(0)
    settings = RecurrentPPOSettings(
        n_steps=16, n_epochs=2, env_batches=2, hidden=WIDTH, value_trunk=True, value_scale=SCALE,
        policy_from=str(attention_model[0]), policy_frozen_steps=16 * 8,
    )  # fmt: skip
    agent = RecurrentPPO(venv, settings, network="card_recall_attention")
    agent.net.start_from(settings.policy_from)
    started = {name: tensor.clone() for name, tensor in agent.net.state_dict().items()}
    agent.learn(16 * 8)  # one rollout, within the frozen steps
    frozen = {id(parameter) for parameter in agent.net.transferred_parameters()}
    for name, parameter in agent.net.named_parameters():
        moved = not torch.equal(parameter.detach(), started[name])
        assert moved == (id(parameter) not in frozen), name
    agent.learn(2 * 16 * 8)  # past them: the trunks learn too
    assert not torch.equal(agent.net.card_heads.score[0].weight.detach(), started["card_heads.score.0.weight"])


def test_it_reads_no_rules_object():
    space = spaces.Dict(
        {
            "cards": spaces.MultiDiscrete(np.full(10, 6)),
            "face_up": spaces.MultiBinary(10),
            "removed": spaces.MultiBinary(10),
            "action_mask": spaces.MultiBinary(10),
        }
    )
    net = RecallAttentionNet.from_space(space, hidden=WIDTH, num_heads=HEADS)
    assert net.num_faces == 5 and net.recall.out_features == 6
