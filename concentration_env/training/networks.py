"""The per-card network as an SB3 MaskablePPO policy (torch; imported only for training).

A Concentration policy must be equivariant to moving cards around: what makes position ``i``
a good flip is its own features plus the state of the game, not its index. The per-card
network therefore applies one small MLP to every card's feature row (see
``concentration_env.envs.features``), adds a pooled summary of all cards as context, and emits one
logit per card; the value head reads the pooled summary. Its size does not depend on the
deck, so the same weights serve 20 or 104 cards.
"""

from __future__ import annotations

from typing import Any

from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from concentration_env.training.card_nets import ACTION_GAIN, PerCardNet, shrink_last_layer

__all__ = ["ACTION_GAIN", "PerCardMaskablePolicy", "PerCardNet"]


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
        shrink_last_layer(self.mlp_extractor.score)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)  # type: ignore[call-arg]  # SB3 types optimizer_class as the base Optimizer, which takes no lr

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["hidden"] = self.hidden
        return data
