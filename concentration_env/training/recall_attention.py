"""The raw-tier memory network whose policy reads its own recall (``network: card_recall_attention``).

In visible mode a card's face is shown only while it is up (or once captured). This network
remembers as :class:`~concentration_env.training.memory.MaxMemoryNet` does (each card's
memory is the running maximum of a learned linear map of that card's raw input), and reads
out of each card's memory the face last seen there: the auxiliary target of every raw memory
network, built from the agent's own earlier observations
(:func:`~concentration_env.training.recurrent.remember`, weighted by ``recall_coef``).

What is new is where the read-out goes. The policy is the memory-mode attention learner's
network (:func:`~concentration_env.training.card_nets.init_card_tokens` and
:class:`~concentration_env.training.card_nets.CardHeads`), fed the board as the memory
recalls it: a card shown now enters with its own face embedding, a face-down card with the
read-out's probabilities times the face embedding table (the expected embedding; at a sure
recall, the embedding of that face; at "never seen", the unknown token's). The probabilities
are detached, so the memory is trained by its read-out alone and the policy by PPO.

Because the policy and value trunks have exactly the shapes of
:class:`~concentration_env.training.attention.CardAttentionPolicy` (``shared=False``), they
can start from a trained memory-mode model of that learner (:meth:`RecallAttentionNet.start_from`,
a config's ``hyperparameters.policy_from``): a curriculum whose first leg, memory mode, is
raw as well. Everything the network sees is the env's visible-mode observation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from concentration_env.training.card_nets import CardHeads, CardTransformer, init_card_tokens, shrink_last_layer
from concentration_env.training.memory import FLAGS, CardRecurrence, faces_of, raw_card_inputs, running_maximum

FLAG_BITS = 2 ** torch.arange(len(FLAGS))  # a card's flags as one index, bit i = FLAGS[i] (card_nets' order)
TRANSFERRED = {  # this network's submodule <- the prefix of a CardAttentionPolicy's state dict
    "policy_tokens": "pi_features_extractor.",
    "value_tokens": "vf_features_extractor.",
    "card_heads": "mlp_extractor.",
    "value": "value_net.0.",
}


class TokenTrunk(nn.Module):
    """The card-token layers of the attention learner (``faces``, ``flags``, ``attend``), under
    the names its saved models use."""

    faces: nn.Embedding
    flags: nn.Embedding
    attend: CardTransformer
    vocabulary: int
    flag_keys: tuple[str, ...]

    def __init__(self, vocabulary: int, width: int, layers: int, heads: int):
        super().__init__()
        init_card_tokens(self, vocabulary, FLAGS, width, layers, heads)


class RecallAttentionNet(CardRecurrence):
    """Running-maximum memory, a face read-out, and the memory-mode attention policy on the
    recalled board; see the module docstring. ``hidden`` is also the attention's width."""

    ARGUMENTS = ("num_faces", "num_heads", "layers")  # value_trunk and value_scale travel in the learner's settings

    def __init__(
        self,
        num_faces: int,
        hidden: int = 32,
        num_heads: int = 4,
        layers: int = 1,
        value_trunk: bool = True,
        value_scale: float = 1.0,
    ):
        super().__init__()
        if hidden % num_heads:
            raise ValueError(f"hidden ({hidden}) must be a multiple of num_heads ({num_heads})")
        self.num_faces, self.hidden, self.num_heads, self.layers = num_faces, hidden, num_heads, layers
        self.value_trunk, self.value_scale = bool(value_trunk), float(value_scale)
        vocabulary = num_faces + 1  # face id + 1, 0 = not shown, as the observation's ``cards``
        self.write = nn.Linear(vocabulary + len(FLAGS), hidden)
        self.recall = nn.Linear(hidden, vocabulary)
        self.policy_tokens = TokenTrunk(vocabulary, hidden, layers, num_heads)
        self.value_tokens = TokenTrunk(vocabulary, hidden, layers, num_heads) if self.value_trunk else None
        self.card_heads = CardHeads(hidden)
        self.value = nn.Linear(hidden, 1)
        shrink_last_layer(self.card_heads.score)

    @classmethod
    def from_space(cls, observation_space: Any, hidden: int = 32, **options: Any) -> RecallAttentionNet:
        """The network for an env's Dict observation space; ``options``: ``value_trunk``, ``value_scale``."""
        return cls(faces_of(observation_space), hidden, **options)

    def card_inputs(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        return raw_card_inputs(obs, self.num_faces)

    def recur(self, inputs: torch.Tensor, memory: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        return running_maximum(self.write(inputs), memory, starts)

    def recalled_board(self, inputs: torch.Tensor, recall: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(face probabilities (..., n, faces + 1), flag indices (..., n)): the faces shown
        now, and the read-out's belief (detached) where none is shown."""
        shown_now = inputs[..., : self.num_faces + 1]
        hidden_now = shown_now[..., :1]  # column 0: nothing shown
        believed = recall.detach().softmax(dim=-1)
        faces = shown_now * (1 - hidden_now) + believed * hidden_now
        flags = (inputs[..., self.num_faces + 1 :] * FLAG_BITS).sum(dim=-1).long()
        return faces, flags

    def tokens(self, trunk: TokenTrunk, faces: torch.Tensor, flags: torch.Tensor) -> torch.Tensor:
        """One trunk's tokens ``(..., n, hidden)`` for any leading dimensions."""
        lead, n = faces.shape[:-2], faces.shape[-2]
        embedded = faces @ trunk.faces.weight + trunk.flags(flags)
        return trunk.attend(embedded.reshape(-1, n, self.hidden)).reshape(*lead, n, self.hidden)

    def heads(self, inputs: torch.Tensor, memory: torch.Tensor) -> tuple[torch.Tensor, ...]:
        recall = self.recall(memory)
        faces, flags = self.recalled_board(inputs, recall)
        tokens = self.tokens(self.policy_tokens, faces, flags)
        value_tokens = tokens.detach() if self.value_tokens is None else self.tokens(self.value_tokens, faces, flags)
        latent = self.card_heads.pool(value_tokens.mean(dim=-2))
        value = self.value(latent).squeeze(-1) * self.value_scale
        return self.card_heads.score(tokens).squeeze(-1), value, recall

    def logits(self, inputs: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        faces, flags = self.recalled_board(inputs, self.recall(memory))
        return self.card_heads.score(self.tokens(self.policy_tokens, faces, flags)).squeeze(-1)

    def transferred_parameters(self) -> list[nn.Parameter]:
        """The parameters :meth:`start_from` sets: everything but the memory and its read-out."""
        return [parameter for name in TRANSFERRED for parameter in getattr(self, name).parameters()]

    def start_from(self, path: str | Path) -> None:
        """Copy the policy and value trunks of a saved MaskablePPO ``card_attention`` model
        (``shared: false``, no ``back`` flag) into this network; its memory and read-out stay
        fresh. A ``ValueError`` says which shape or setting differs."""
        from concentration_env.training.attention import saved_card_attention

        if not self.value_trunk:
            raise ValueError(f"policy_from {path}: needs value_trunk: true (the model's value has a trunk of its own)")
        ours = {
            "d_model": self.hidden,
            "layers": self.layers,
            "heads": self.num_heads,
            "shared": False,
            "value_scale": self.value_scale,
            "faces": self.num_faces,
            "flags": FLAGS,
        }
        labels = {"d_model": "hidden (d_model)", "heads": "num_heads (heads)"}
        policy = saved_card_attention(path, ours, "this network", labels)
        state = policy.state_dict()
        for name, prefix in TRANSFERRED.items():
            module = getattr(self, name)
            module.load_state_dict(
                {key[len(prefix) :]: value for key, value in state.items() if key.startswith(prefix)}
            )
