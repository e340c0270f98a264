"""Per-card recurrent memories, and the raw-tier memory network of the recurrent PPO.

:class:`CardRecurrence` is what both networks of :mod:`concentration_env.training.recurrent`
share: every position of the board has its own memory, all positions updated by one
``GRUCell`` fed that card's input each flip, with only the hidden side of the recurrence
run step by step.

:class:`RawMemoryNet` (``network: card_memory``, the *raw* tier) knows nothing of the game
beyond the observation space: each card's input is what the env shows of it now (its face
id one-hot, 0 = not shown, and its face-up, captured and legal flags). Each flip every
card's token (its memory and what is shown of it now) attends to all the others, one
self-attention layer with no positions, so a relation such as "the card I remember here
has the face of the one up now" can be learned; one logit per card, the value from the
pooled tokens. Permuting the positions of an observation sequence permutes the logits.
Its only read-out is an auxiliary one: from each card's memory, the face last seen there
(the target, :func:`concentration_env.training.recurrent.remember`, is the agent's own
earlier observations), weighted by ``recall_coef`` in the loss and never fed to the policy.

With ``value_trunk`` the value reads the cards through layers of its own (the same shape as
the policy's), from the memory with its gradient stopped, and ``value_scale`` multiplies its
output: the fix that made the memory-mode attention learner learn (with one trunk, the value
loss of 52-card returns sets the shared weights and the policy gradient barely moves them),
here applied to the recurrent one. The memory is then trained by the policy loss and the
read-out alone.

:class:`MaxMemoryNet` (``network: card_max_memory``, also *raw*) swaps the GRU for a running
elementwise maximum: each card's memory is the maximum, over the flips since the deal, of a
learned linear map of that card's raw input. A card's face never changes where it lies, so
once a face is shown its mark stays in the memory with nothing to learn about keeping it;
the GRU learner must first learn to hold a face (its read-out took 300k-450k env steps on 52
cards). The cost of the bias: the memory cannot forget or follow a value that changes. Its
tokens then go through the pre-norm transformer layer of the memory-mode attention learner
rather than the GRU learner's tanh mixing layers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, cast

import numpy as np
import torch
from torch import nn

from concentration_env.training.card_nets import CardTransformer

ACTION_GAIN = 0.01  # the last scoring layer starts near zero: a near-uniform first policy
FLAGS = ("face_up", "removed", "action_mask")  # the per-card flags the raw network is shown


class CardRecurrence(nn.Module, ABC):
    """Per-card memories updated by one shared ``GRUCell``; subclasses make the inputs and heads."""

    ARGUMENTS: tuple[str, ...]  # constructor arguments (besides ``hidden``) saved with the weights
    cell: nn.GRUCell
    hidden: int

    def initial_state(self, batch: int, num_cards: int) -> torch.Tensor:
        return torch.zeros(batch, num_cards, self.hidden)

    @abstractmethod
    def card_inputs(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """(..., n, inputs) float tensor from a batch of raw observations."""

    @abstractmethod
    def heads(self, inputs: torch.Tensor, memory: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """(logits (..., n), value (...), face read-out logits (..., n, num_faces + 1)) from the
        inputs and the memory after them, for any leading batch dimensions."""

    def arguments(self) -> dict[str, Any]:
        """The values of :attr:`ARGUMENTS`, to rebuild the network from a saved file."""
        return {name: getattr(self, name) for name in self.ARGUMENTS}

    def recur(self, inputs: torch.Tensor, memory: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        """Every card's memory after each flip of a sequence: (T, B, n, hidden) from inputs
        (T, B, n, k), the memory before it (B, n, hidden) and episode starts (T, B), where the
        memory is zeroed first.

        The ``GRUCell``'s own update, with the input side computed for all steps in one call:
        only the hidden side is sequential (fewer, larger tensor ops than a cell per step)."""
        cell, hidden = self.cell, self.hidden
        # Unbound per step (not indexed in the loop): the backward of an index fills a zero
        # tensor of the whole sequence per step.
        from_inputs = nn.functional.linear(inputs, cell.weight_ih, cell.bias_ih)
        gates_in, candidate_in = from_inputs.split([2 * hidden, hidden], -1)
        keep = (1 - starts)[..., None, None]
        memories = []
        for gate_in, cand_in, keep_t in zip(gates_in.unbind(), candidate_in.unbind(), keep.unbind()):
            memory = memory * keep_t
            from_memory = nn.functional.linear(memory, cell.weight_hh, cell.bias_hh)
            gates_h, candidate_h = from_memory.split([2 * hidden, hidden], -1)
            reset, update = torch.sigmoid(gate_in + gates_h).chunk(2, -1)
            candidate = torch.tanh(cand_in + reset * candidate_h)
            memory = candidate + update * (memory - candidate)
            memories.append(memory)
        return torch.stack(memories)

    def step(
        self, inputs: torch.Tensor, memory: torch.Tensor, starts: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, ...]:
        """One flip for a batch (inputs (B, n, k)): (logits, value, memory, face read-out)."""
        starts = torch.zeros(len(inputs)) if starts is None else starts
        memory = self.recur(inputs[None], memory, starts[None])[0]
        logits, value, recall = self.heads(inputs, memory)
        return logits, value, memory, recall

    def logits(self, inputs: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        """The logits of :meth:`heads` alone; a subclass may skip the heads that playing does not need."""
        return self.heads(inputs, memory)[0]

    def act(self, inputs: torch.Tensor, memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One flip of games under way, for playing (no value, no read-out): (logits, memory)."""
        memory = self.recur(inputs[None], memory, torch.zeros(1, len(inputs)))[0]
        return self.logits(inputs, memory), memory


def faces_of(observation_space: Any) -> int:
    """The number of faces of an env's Dict observation space (its ``cards`` MultiDiscrete holds
    face id + 1 per position, 0 = not shown)."""
    return int(np.asarray(observation_space["cards"].nvec).max()) - 1


def raw_card_inputs(obs: dict[str, torch.Tensor], num_faces: int) -> torch.Tensor:
    """Each card's raw input ``(..., n, num_faces + 1 + len(FLAGS))``: its face id one-hot
    (0 = not shown) and its flags."""
    onehot = nn.functional.one_hot(obs["cards"].long(), num_faces + 1).float()
    return torch.cat([onehot, torch.stack([obs[key].float() for key in FLAGS], dim=-1)], dim=-1)


class CardMixer(nn.Module):
    """Card tokens from each card's memory and raw input, then one self-attention layer across
    the cards (no positions) and a residual mixing layer: ``(..., n, hidden)``."""

    def __init__(self, inputs: int, hidden: int, num_heads: int):
        super().__init__()
        self.hidden = hidden
        self.token = nn.Sequential(nn.Linear(hidden + inputs, hidden), nn.Tanh())
        self.attention = nn.MultiheadAttention(hidden, num_heads, batch_first=True)
        self.mix = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())

    def forward(self, memory: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        lead, n = memory.shape[:-2], memory.shape[-2]
        tokens = self.token(torch.cat([memory, inputs], dim=-1)).reshape(-1, n, self.hidden)
        attended, _ = self.attention(tokens, tokens, tokens, need_weights=False)
        tokens = tokens + attended
        return (tokens + self.mix(tokens)).reshape(*lead, n, self.hidden)


def pool(tokens: torch.Tensor) -> torch.Tensor:
    """Mean and max over the cards: ``(..., 2 * hidden)``, the same for any order of the cards."""
    return torch.cat([tokens.mean(dim=-2), tokens.max(dim=-2).values], dim=-1)


class RawMemoryNet(CardRecurrence):
    """Per-card GRU memory and self-attention across cards on raw observations; see the module docstring."""

    ARGUMENTS = ("num_faces", "num_heads")  # value_trunk and value_scale travel in the learner's settings

    def __init__(
        self,
        num_faces: int,
        hidden: int = 64,
        num_heads: int = 4,
        value_trunk: bool = False,
        value_scale: float = 1.0,
    ):
        super().__init__()
        if hidden % num_heads:
            raise ValueError(f"hidden ({hidden}) must be a multiple of num_heads ({num_heads})")
        self.num_faces, self.hidden, self.num_heads = num_faces, hidden, num_heads
        self.value_trunk, self.value_scale = bool(value_trunk), float(value_scale)
        inputs = num_faces + 1 + len(FLAGS)
        self.make_memory(inputs)
        self.cards = self.make_mixer(inputs)
        self.value_cards = self.make_mixer(inputs) if self.value_trunk else None
        self.score = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.value = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.recall = nn.Linear(hidden, num_faces + 1)  # auxiliary only: the face last seen here
        nn.init.orthogonal_(cast(nn.Linear, self.score[-1]).weight, gain=ACTION_GAIN)

    def make_memory(self, inputs: int) -> None:
        """The memory's own layers (saved under their attribute names): a ``GRUCell``."""
        self.cell = nn.GRUCell(inputs, self.hidden)

    def make_mixer(self, inputs: int) -> nn.Module:
        """The layers from (memory, input) pairs to card tokens ``(..., n, hidden)``."""
        return CardMixer(inputs, self.hidden, self.num_heads)

    @classmethod
    def from_space(cls, observation_space: Any, hidden: int = 64, **options: Any) -> RawMemoryNet:
        """The network for an env's Dict observation space; ``options``: ``value_trunk``, ``value_scale``."""
        return cls(faces_of(observation_space), hidden, **options)

    def card_inputs(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        return raw_card_inputs(obs, self.num_faces)

    def heads(self, inputs: torch.Tensor, memory: torch.Tensor) -> tuple[torch.Tensor, ...]:
        tokens = self.cards(memory, inputs)
        value_tokens = tokens if self.value_cards is None else self.value_cards(memory.detach(), inputs)
        value = self.value(pool(value_tokens)).squeeze(-1) * self.value_scale
        return self.score(tokens).squeeze(-1), value, self.recall(memory)

    def logits(self, inputs: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        # The value trunk is as costly as the policy's, and playing needs neither it nor the read-out.
        return self.score(self.cards(memory, inputs)).squeeze(-1)


MAX_MEMORY_LAYERS = 1  # as the memory-mode attention learner (raw_attention_*.yaml), which reaches the optimum


class CardEncoder(nn.Module):
    """Card tokens from each card's memory and raw input, then a pre-norm transformer across
    the cards (no positions), as in :func:`~concentration_env.training.card_nets.card_tokens`:
    ``(..., n, hidden)``."""

    def __init__(self, inputs: int, hidden: int, num_heads: int, layers: int = MAX_MEMORY_LAYERS):
        super().__init__()
        self.hidden = hidden
        self.token = nn.Linear(hidden + inputs, hidden)
        self.attend = CardTransformer(hidden, num_heads, layers)

    def forward(self, memory: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        lead, n = memory.shape[:-2], memory.shape[-2]
        tokens = self.token(torch.cat([memory, inputs], dim=-1)).reshape(-1, n, self.hidden)
        return self.attend(tokens).reshape(*lead, n, self.hidden)


class MaxMemoryNet(RawMemoryNet):
    """Per-card running-maximum memory and a transformer across cards on raw observations;
    see the module docstring."""

    def make_memory(self, inputs: int) -> None:
        self.write = nn.Linear(inputs, self.hidden)

    def make_mixer(self, inputs: int) -> nn.Module:
        return CardEncoder(inputs, self.hidden, self.num_heads)

    def recur(self, inputs: torch.Tensor, memory: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        return running_maximum(self.write(inputs), memory, starts)


def running_maximum(writes: torch.Tensor, memory: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
    """``memory_t = max(memory_{t-1}, writes_t)`` elementwise, per card, from a zero memory at
    each episode start: (T, B, n, hidden) from writes (T, B, n, hidden), the memory before them
    and episode starts (T, B), as :meth:`CardRecurrence.recur`."""
    keep = (1 - starts)[..., None, None]
    memories = []
    for write, keep_t in zip(writes.unbind(), keep.unbind()):
        memory = torch.maximum(memory * keep_t, write)
        memories.append(memory)
    return torch.stack(memories)
