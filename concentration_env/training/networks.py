"""Networks that score every card with shared weights (torch; imported only for training).

A Concentration policy must be equivariant to moving cards around: what makes position ``i``
a good flip is its own features plus the state of the game, not its index. The per-card
network therefore applies one small MLP to every card's feature row (see
``concentration_env.envs.features``), adds a pooled summary of all cards as context, and emits one
logit per card; the value head reads the pooled summary. Its size does not depend on the
deck, so the same weights serve 20 or 104 cards.
"""

from __future__ import annotations

from typing import Any, cast

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from concentration_env.envs.features import NUM_CARD_FEATURES

ACTION_GAIN = 0.01  # small initial logits: a near-uniform first policy (as SB3 does)


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
        cards = self.encode(features.view(-1, self.num_cards, self.num_features))
        pooled = torch.cat([cards.mean(dim=1), cards.max(dim=1).values], dim=-1)
        return cards, pooled

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        cards, pooled = self._encode(features)
        context = pooled[:, None, : cards.shape[-1]].expand_as(cards)
        return self.score(torch.cat([cards, context], dim=-1)).squeeze(-1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value(self._encode(features)[1])

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class PerCardMaskablePolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy whose logits come straight from :class:`PerCardNet` (no dense head
    mixing positions). Use with the ``CardFeatures`` observation; ``hidden`` sets the width."""

    mlp_extractor: PerCardNet  # type: ignore[assignment]  # SB3 types it as its MlpExtractor; any module with forward_actor/forward_critic works

    def __init__(self, *args: Any, hidden: int = 64, **kwargs: Any):
        self.hidden = hidden
        kwargs.setdefault("net_arch", [])
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        shape = self.observation_space.shape
        assert shape is not None  # a Box: CardFeatures' (num_cards, NUM_CARD_FEATURES)
        num_cards = shape[0]
        self.mlp_extractor = PerCardNet(num_cards, self.hidden, shape[1])

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        # The per-card scores are the logits: drop SB3's dense action layer, shrink the last
        # scoring layer like SB3 shrinks its action layer, and rebuild the optimizer.
        self.action_net = nn.Identity()
        last = cast(nn.Linear, self.mlp_extractor.score[-1])
        nn.init.orthogonal_(last.weight, gain=ACTION_GAIN)
        nn.init.zeros_(last.bias)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)  # type: ignore[call-arg]  # SB3 types optimizer_class as the base Optimizer, which takes no lr

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["hidden"] = self.hidden
        return data
