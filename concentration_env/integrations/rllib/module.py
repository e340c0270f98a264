"""The RLlib RLModules of this game (needs Ray and torch; imported only by RLlib code).

:class:`CardRLModule` scores every card with shared weights and masks illegal flips:

- ``network: per_card`` (engineered tier) runs
  :class:`~concentration_env.training.card_nets.PerCardNet`, the training layer's per-card
  network, over the engineered card features;
- ``network: card_attention`` (raw tier) runs the training layer's card tokens
  (:func:`~concentration_env.training.card_nets.card_tokens`) and
  :class:`~concentration_env.training.card_nets.CardHeads` over the raw per-card columns.

``network: mlp`` (raw tier) uses RLlib's own action-masking example module instead (see
:func:`module_class`). The value head is one linear layer on the network's value latent;
``_forward_train`` hands that latent on as the embeddings, so PPO's value pass reuses it.
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from torch import nn

from concentration_env.integrations.rllib.env import MASK_KEY, OBS_KEY
from concentration_env.training.card_nets import (
    FLAG_KEYS,
    CardHeads,
    PerCardNet,
    card_tokens,
    init_card_tokens,
    shrink_last_layer,
)

CARD_COLUMNS = ("cards", "face_up", "removed", "back")  # the column order of env.RAW_COLUMNS
MIN_LOGIT = -1e9  # what an illegal flip's logit becomes


def masked(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with every illegal position pushed to :data:`MIN_LOGIT`."""
    return torch.where(mask > 0, logits, torch.full_like(logits, MIN_LOGIT))


class CardTokenNet(nn.Module):
    """Raw per-card columns ``(B, n, k)`` plus the mask -> tokens -> logits and value latent."""

    def __init__(self, vocabulary: int, columns: tuple[str, ...], d_model: int, layers: int, heads: int):
        super().__init__()
        self.columns = columns
        flag_keys = tuple(key for key in FLAG_KEYS if key in columns or key == MASK_KEY)
        init_card_tokens(self, vocabulary, flag_keys, d_model, layers, heads)
        self.heads = CardHeads(d_model)

    def forward(self, columns: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        raw = {key: columns[..., i] for i, key in enumerate(self.columns)}
        raw[MASK_KEY] = mask
        tokens = card_tokens(self, raw)
        return self.heads.forward_actor(tokens), self.heads.forward_critic(tokens)


class CardRLModule(TorchRLModule, ValueFunctionAPI):
    """PPO module over the per-card encodings (``model_config["network"]``: ``per_card`` or
    ``card_attention``; ``hidden``, or ``d_model``/``layers``/``heads``)."""

    def setup(self) -> None:
        config: dict[str, Any] = dict(self.model_config or {})
        space = self.observation_space[OBS_KEY]
        num_cards = space.shape[0]
        if config["network"] == "per_card":
            hidden = int(config.get("hidden", 64))
            self.net: nn.Module = PerCardNet(num_cards, hidden, space.shape[1])
            shrink_last_layer(self.net.score)
            latent = hidden
        else:
            d_model = int(config.get("d_model", 64))
            columns = CARD_COLUMNS[: space.shape[1]]
            vocabulary = int(space.high[:, 0].max()) + 1
            self.net = CardTokenNet(
                vocabulary, columns, d_model, int(config.get("layers", 2)), int(config.get("heads", 4))
            )
            shrink_last_layer(self.net.heads.score)
            latent = d_model
        self.vf = nn.Linear(latent, 1)

    def _run(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        mask = obs[MASK_KEY]
        if isinstance(self.net, PerCardNet):
            logits, latent = self.net(obs[OBS_KEY])
        else:
            logits, latent = self.net(obs[OBS_KEY], mask)
        return masked(logits, mask), latent

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: self._run(batch)[0]}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        logits, latent = self._run(batch)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: latent}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:
            embeddings = self._run(batch)[1]
        return self.vf(embeddings).squeeze(-1)


def module_class(network: str) -> type:
    """The RLModule class of a network."""
    if network == "mlp":
        from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

        return ActionMaskingTorchRLModule
    return CardRLModule


def model_config(config) -> dict:
    """The ``model_config`` of a run's modules (``config``: an ``RLlibConfig``)."""
    if config.network == "mlp":
        return {"fcnet_hiddens": list(config.hidden), "fcnet_activation": "relu"}
    if config.network == "per_card":
        return {"network": "per_card", "hidden": config.hidden[0]}
    return {"network": "card_attention", "d_model": config.d_model, "layers": config.layers, "heads": config.heads}
