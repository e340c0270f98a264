"""Card-scoring networks in plain torch, shared by the SB3 policies of the training layer and
the RLlib module (``concentration_env.integrations.rllib.module``), whose venv has no SB3.

- :class:`PerCardNet`: one MLP applied to every card's engineered feature row (see
  ``concentration_env.envs.features``), a pooled summary as context, one logit per card.
- :func:`init_card_tokens` / :func:`card_tokens`: the raw tier's card tokens (a face embedding
  plus a flag embedding per card, no positional encoding) after self-attention.
- :class:`CardHeads`: tokens -> one logit per card and a pooled value latent.
- :class:`CardTransformer`: the pre-norm transformer across cards that every attention
  learner uses, torch's own layers and weights with the arithmetic written out.

Nothing here depends on the deck's size: the same weights score 8 or 104 cards.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch
import torch.nn.functional as F
from gymnasium import spaces
from torch import nn

from concentration_env.envs.features import NUM_CARD_FEATURES

ACTION_GAIN = 0.01  # small initial logits: a near-uniform first policy (as SB3 does)
FLAG_KEYS = ("face_up", "removed", "action_mask", "back")  # bit i of a card's flag index
EMBEDDING_STD = 0.02


class PerCardNet(nn.Module):
    """Per-card encoder -> pooled context -> one logit per card and a value latent."""

    def __init__(self, num_cards: int, hidden: int = 64, num_features: int = NUM_CARD_FEATURES):
        super().__init__()
        self.num_cards = num_cards
        self.num_features = num_features
        self.encode = nn.Sequential(nn.Linear(num_features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.score = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.value = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.Tanh())
        # What SB3's MlpExtractor exposes: the latent sizes of the two heads.
        self.latent_dim_pi = num_cards
        self.latent_dim_vf = hidden

    def _encode(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # rows of num_features per card, however many cards (SB3 hands them flattened)
        cards = self.encode(features.reshape(features.shape[0], -1, self.num_features))
        pooled = torch.cat([cards.mean(dim=1), cards.max(dim=1).values], dim=-1)
        return cards, pooled

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self(features)[0]

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value(self._encode(features)[1])

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cards, pooled = self._encode(features)  # one encoding for both heads
        context = pooled[:, None, : cards.shape[-1]].expand_as(cards)
        return self.score(torch.cat([cards, context], dim=-1)).squeeze(-1), self.value(pooled)


def shrink_last_layer(score: nn.Sequential) -> None:
    """Start the per-card logits near zero (a near-uniform first policy)."""
    last = score[-1]
    assert isinstance(last, nn.Linear)
    nn.init.orthogonal_(last.weight, gain=ACTION_GAIN)
    nn.init.zeros_(last.bias)


def face_vocabulary(observation_space: spaces.Space) -> int:
    """The number of values a ``cards`` entry takes (unknown plus every face)."""
    cards = observation_space.spaces.get("cards") if isinstance(observation_space, spaces.Dict) else None
    if not isinstance(cards, spaces.MultiDiscrete):
        raise ValueError(
            f"network card_attention reads the raw observation (a Dict with a MultiDiscrete 'cards'); "
            f"got {observation_space}"
        )
    return int(cards.nvec.max())


def init_card_tokens(
    module: Any, vocabulary: int, flag_keys: tuple[str, ...], d_model: int, layers: int, heads: int
) -> None:
    """Give ``module`` the token layers (``faces``, ``flags``, ``attend``) that
    :func:`card_tokens` runs; set on the caller so that saved parameter names stay put."""
    module.vocabulary = vocabulary
    module.flag_keys = flag_keys
    module.faces = nn.Embedding(vocabulary, d_model)
    module.flags = nn.Embedding(2 ** len(flag_keys), d_model)
    module.attend = CardTransformer(d_model, heads, layers)
    # Small embeddings (GPT-2's 0.02) rather than torch's unit normal: the residual stream
    # starts small, so what attention brings from the other cards is not drowned by each
    # card's own embedding.
    for table in (module.faces, module.flags):
        nn.init.normal_(table.weight, std=EMBEDDING_STD)


class CardTransformer(nn.TransformerEncoder):
    """``layers`` pre-norm self-attention blocks across the cards (``(batch, cards, width)``,
    no positions), then a final layer norm: torch's ``TransformerEncoder`` of
    ``TransformerEncoderLayer(width, heads, dim_feedforward=2 * width, dropout=0,
    norm_first=True)``, with the same parameters under the same names (saved models load
    unchanged) and the same arithmetic to float rounding.

    The forward pass is written out because torch's is slow for these small shapes on a
    CPU: its fused attention kernel, built for long sequences and wide heads, took about half
    of an update of the raw attention learner (52 tokens, heads of 8) in its backward pass.
    With plain matrix products and a softmax, that learner's policy update (two trunks,
    minibatches of 256, one thread) ran 2,780 samples/s against 1,858 with torch's forward,
    alternating on the same machine; ``scripts/bench_train_speed.py`` times it.
    """

    def __init__(self, width: int, heads: int, layers: int):
        layer = nn.TransformerEncoderLayer(
            width, heads, dim_feedforward=2 * width, dropout=0.0, batch_first=True, norm_first=True
        )
        super().__init__(layer, layers, norm=nn.LayerNorm(width), enable_nested_tensor=False)

    def forward(self, tokens: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:  # type: ignore[override]  # no masks: every card attends to every card
        if args or kwargs:
            raise TypeError("CardTransformer takes the tokens only (no masks)")
        return self._blocks(tokens, self.layers)

    def of_rows(self, table: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """``self(table[rows])`` (``table``: ``(kinds, width)``, ``rows``: ``(batch, cards)``
        indices into it), with the work that one card does alone before any attention (the
        first layer norm and query/key/value projection, or the final norm when there are no
        layers) run once per row of the table rather than once per card. Worth it when the
        table is small beside the batch: the raw tokens take one row per face and flag
        combination (848 for 52 cards) where a minibatch holds 1,024 x 52 cards."""
        if not self.layers:
            return _gathered(self._blocks(table, self.layers), rows)
        first = self.layers[0]
        attention = first.self_attn
        projected = F.linear(_normed(first.norm1, table), attention.in_proj_weight, attention.in_proj_bias)
        tokens = _gathered(table, rows) + _attended(attention, _gathered(projected, rows))
        return self._blocks(_feed_forward(first, tokens), self.layers[1:])

    def _blocks(self, tokens: torch.Tensor, layers: Iterable[Any]) -> torch.Tensor:
        """``layers`` (``TransformerEncoderLayer``s, which a ``ModuleList`` types as plain
        modules) as whole pre-norm blocks, then the final layer norm."""
        for layer in layers:
            tokens = tokens + _self_attention(layer.self_attn, _normed(layer.norm1, tokens))
            tokens = _feed_forward(layer, tokens)
        assert isinstance(self.norm, nn.LayerNorm)  # always built with one
        return _normed(self.norm, tokens)


def _feed_forward(layer: nn.TransformerEncoderLayer, tokens: torch.Tensor) -> torch.Tensor:
    """A pre-norm block's feed-forward half, with its residual."""
    return tokens + layer.linear2(F.relu(layer.linear1(_normed(layer.norm2, tokens))))


def _gathered(table: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``table[rows]`` by ``index_select``: the same rows, but its backward (an index add) ran
    3 to 4 times faster on a CPU than an embedding's own for a minibatch of 1,024 deals of 52
    cards, where the embedding's backward had taken a fifth of an update."""
    return table.index_select(0, rows.reshape(-1)).reshape(*rows.shape, table.shape[-1])


def _normed(norm: nn.LayerNorm, tokens: torch.Tensor) -> torch.Tensor:
    """``norm(tokens)`` on the tokens as one ``(batch * cards, width)`` matrix: the same
    numbers, but torch's CPU backward of a layer norm over a width of 16 ran about 1.4x
    faster on the matrix than on the ``(batch, cards, width)`` tensor (minibatches of 1,024
    deals of 52 cards, two threads)."""
    flat = F.layer_norm(tokens.reshape(-1, tokens.shape[-1]), norm.normalized_shape, norm.weight, norm.bias, norm.eps)
    return flat.reshape(tokens.shape)


def _self_attention(attention: nn.MultiheadAttention, tokens: torch.Tensor) -> torch.Tensor:
    """``attention`` (batch-first, no dropout, no mask) of ``tokens`` on themselves."""
    return _attended(attention, F.linear(tokens, attention.in_proj_weight, attention.in_proj_bias))


def _attended(attention: nn.MultiheadAttention, projected: torch.Tensor) -> torch.Tensor:
    """The rest of ``attention`` from the tokens' queries, keys and values side by side
    (``(batch, cards, 3 * width)``, as its input projection makes them)."""
    batch, cards, width = projected.shape[0], projected.shape[1], projected.shape[2] // 3
    heads = attention.num_heads
    split = (batch, cards, heads, width // heads)
    query, key, value = (part.reshape(split).transpose(1, 2) for part in projected.split(width, dim=-1))
    # The scale goes on the queries (cards x width) rather than on the scores (cards x cards):
    # the same product with a smaller tensor to multiply and differentiate (the attention's
    # forward and backward over 52 cards, one thread: 1.23x with one head of 16, 1.05x with
    # four heads of 8).
    weights = torch.softmax((query * (1.0 / math.sqrt(width // heads))) @ key.transpose(-1, -2), dim=-1)
    mixed = (weights @ value).transpose(1, 2).reshape(batch, cards, width)
    return attention.out_proj(mixed)


def card_tokens(module: Any, observations: dict[str, torch.Tensor]) -> torch.Tensor:
    """``(batch, cards, d_model)`` tokens of the raw columns (``cards`` and the flag keys)."""
    faces = observations["cards"].long()
    flags = torch.zeros_like(faces)
    for bit, key in enumerate(module.flag_keys):
        flags |= observations[key].long() << bit
    # A card's token is its face's embedding plus its flags': one row of the table of every
    # face and flag combination, on which the card-alone work of the trunk runs once.
    combinations = module.faces.weight[:, None, :] + module.flags.weight[None, :, :]
    kinds = module.flags.num_embeddings
    return module.attend.of_rows(combinations.reshape(-1, combinations.shape[-1]), faces * kinds + flags)


class CardHeads(nn.Module):
    """Tokens -> one logit per card, and the mean token as the value latent."""

    def __init__(self, d_model: int):
        super().__init__()
        self.score = nn.Sequential(nn.Linear(d_model, d_model), nn.Tanh(), nn.Linear(d_model, 1))
        self.pool = nn.Sequential(nn.Linear(d_model, d_model), nn.Tanh())
        # What SB3's MlpExtractor exposes: the latent sizes of the two heads (the policy's
        # latent is already the logits).
        self.latent_dim_pi = 1
        self.latent_dim_vf = d_model

    def forward_actor(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.score(tokens).squeeze(-1)

    def forward_critic(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.pool(tokens.mean(dim=1))

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(tokens), self.forward_critic(tokens)
