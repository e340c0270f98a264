"""Self-attention over the cards of the raw observation (torch; imported only for training).

Every card is one token built from its own columns of the env's observation and nothing
else: the face it shows (``cards``: 0 for unknown, else face id + 1) as a learned embedding,
plus one embedding of its flags (face up, removed, legal, and the back colour of
checkerboard decks). No positional encoding: a few self-attention layers mix the tokens, so
moving cards around moves the logits with them and leaves the value alone. Each token
yields its card's logit; the value reads the mean of the tokens of its own trunk (a second
set of the same layers, unless ``shared``). Nothing in the network
depends on the deck's size, and it is built from the observation space alone: the face
vocabulary comes from the ``cards`` bound, with no rules or match table in sight.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import MaskableDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from concentration_env.training.card_nets import (
    FLAG_KEYS,
    CardHeads,
    card_tokens,
    face_vocabulary,
    init_card_tokens,
    shrink_last_layer,
)
from concentration_env.training.config_values import ATTENTION_SIZES

__all__ = ["CardAttentionPolicy", "CardHeads", "CardTokens", "face_vocabulary", "saved_card_attention"]


class CardTokens(BaseFeaturesExtractor):
    """Raw observation dict -> ``(batch, cards, d_model)`` tokens after self-attention (the
    layers of :func:`~concentration_env.training.card_nets.card_tokens`).

    Reads the observation's own integer columns (SB3's one-hot preprocessing is skipped by
    :class:`CardAttentionPolicy`): rollouts pass the env's dtypes, the rollout buffer floats.
    """

    vocabulary: int  # set by init_card_tokens, as are the layers
    flag_keys: tuple[str, ...]

    def __init__(self, observation_space: spaces.Dict, d_model: int = 64, layers: int = 2, heads: int = 4):
        super().__init__(observation_space, features_dim=d_model)
        flag_keys = tuple(key for key in FLAG_KEYS if key in observation_space.spaces)
        init_card_tokens(self, face_vocabulary(observation_space), flag_keys, d_model, layers, heads)

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        return card_tokens(self, observations)


class Scale(nn.Module):
    """Multiplies by a constant: the value head's output in the units of the returns.

    Returns of 52-card games run to -40 and below (-1 per miss) while Adam moves each weight
    about one learning rate per step, so an unscaled value head needs many updates to reach
    them (explained variance 0.00 for the first ten on 52 cards; 0.88 after the first with
    a factor of 30). On small decks, whose returns are a few moves, a large factor hurts."""

    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, values: torch.Tensor) -> torch.Tensor:
        return values * self.factor


class CardAttentionPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy over :class:`CardTokens` and :class:`CardHeads`: the raw tier's
    attention learner. ``policy_kwargs``: ``d_model``, ``layers``, ``heads``, ``shared``,
    ``value_layers`` (the value trunk's own attention layers, default ``layers``; 0 leaves
    its tokens unmixed: the value reads the mean of every card's own embedding, which costs
    no attention in the rollout's forward or the update) and ``value_scale`` (see
    :class:`Scale`).

    By default the policy and the value have a trunk each (``shared=False``). With one trunk
    the value loss (returns of -40 to -300, -1 per miss) sets the shared weights and the
    policy gradient barely moves them: on 12 picture cards the shared trunk played 22.5
    moves sampled after 30k steps where separate trunks played 9.75 (optimum 9.16)."""

    mlp_extractor: CardHeads  # type: ignore[assignment]  # SB3 types it as its MlpExtractor; any module with forward_actor/forward_critic works

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        *args: Any,
        d_model: int = 64,
        layers: int = 2,
        heads: int = 4,
        shared: bool = False,
        value_layers: int | None = None,
        value_scale: float = 1.0,
        **kwargs: Any,
    ):
        face_vocabulary(observation_space)  # the one clear error for a space it cannot read
        self.d_model, self.layers, self.heads, self.value_scale = d_model, layers, heads, float(value_scale)
        self.value_layers = layers if value_layers is None else value_layers
        if shared and self.value_layers != layers:
            raise ValueError(f"value_layers={value_layers} needs a value trunk of its own (shared=False)")
        kwargs.setdefault("net_arch", [])
        # torch's own init suits the transformer; the score layer is shrunk in _build.
        kwargs.setdefault("ortho_init", False)
        kwargs["features_extractor_class"] = CardTokens
        kwargs["features_extractor_kwargs"] = {"d_model": d_model, "layers": layers, "heads": heads}
        # Models saved before ``shared`` existed name SB3's own flag (always true then).
        shared = bool(kwargs.pop("share_features_extractor", shared))
        self.shared = shared
        kwargs["share_features_extractor"] = shared
        super().__init__(observation_space, action_space, *args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = CardHeads(self.d_model)

    def _build(self, lr_schedule) -> None:
        if self.value_layers != self.layers:  # SB3 made the value trunk a copy of the policy's
            self.vf_features_extractor = CardTokens(self.observation_space, self.d_model, self.value_layers, self.heads)  # type: ignore[arg-type]  # a Dict, as face_vocabulary checked
        super()._build(lr_schedule)
        # The per-card scores are the logits: drop SB3's dense action layer, start near
        # uniform as SB3 does, and rebuild the optimizer over the parameters that remain.
        self.action_net = nn.Identity()
        shrink_last_layer(self.mlp_extractor.score)
        if self.value_scale != 1.0:
            self.value_net = nn.Sequential(self.value_net, Scale(self.value_scale))  # type: ignore[assignment]  # SB3 types value_net as a Linear; any module works
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)  # type: ignore[call-arg]  # SB3 types optimizer_class as the base Optimizer, which takes no lr

    # SB3 one-hot encodes MultiDiscrete observations before the features extractor (a
    # Python loop over the 52 columns); the tokens embed the integers instead, so every
    # path that extracts features goes straight to the extractor.
    def extract_features(  # type: ignore[override]  # SB3 returns a pair when the trunks are separate
        self, obs: Any, features_extractor: BaseFeaturesExtractor | None = None
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        if self.share_features_extractor:
            return self.features_extractor(obs)
        return self.pi_features_extractor(obs), self.vf_features_extractor(obs)

    def get_distribution(self, obs: Any, action_masks: Any = None) -> MaskableDistribution:
        trunk = self.features_extractor if self.share_features_extractor else self.pi_features_extractor
        distribution = self._get_action_dist_from_latent(self.mlp_extractor.forward_actor(trunk(obs)))
        if action_masks is not None:
            distribution.apply_masking(action_masks)
        return distribution

    def predict_values(self, obs: Any) -> torch.Tensor:
        trunk = self.features_extractor if self.share_features_extractor else self.vf_features_extractor
        return self.value_net(self.mlp_extractor.forward_critic(trunk(obs)))

    def settings(self) -> dict[str, Any]:
        """What a saved model must share with a network that starts from it (:func:`saved_card_attention`)."""
        tokens = cast(CardTokens, self.pi_features_extractor)
        return {
            "d_model": self.d_model,
            "layers": self.layers,
            "heads": self.heads,
            "shared": self.shared,
            "value_layers": self.value_layers,
            "value_scale": self.value_scale,
            "faces": tokens.vocabulary - 1,
            "flags": tokens.flag_keys,
        }

    def start_from(self, path: str | Path) -> None:
        """Copy every weight of a saved MaskablePPO ``card_attention`` model into this policy: a
        curriculum, for example a solitaire model starting a multi-player learner (the tokens
        read the cards' columns only, so a game's other keys, such as ``scores``, change
        nothing). All its :meth:`settings` must be this policy's; a ``ValueError`` names what
        differs and nothing is copied then."""
        self.load_state_dict(saved_card_attention(path, self.settings(), "this policy").state_dict())

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update({name: getattr(self, name) for name in ATTENTION_SIZES})
        for key in ("features_extractor_class", "features_extractor_kwargs", "share_features_extractor"):
            data.pop(key, None)  # set from d_model, layers, heads and shared
        return data


def saved_card_attention(
    path: str | Path, ours: dict[str, Any], owner: str, labels: dict[str, str] | None = None
) -> CardAttentionPolicy:
    """The policy of the saved MaskablePPO ``card_attention`` model at ``path``, whose
    :meth:`~CardAttentionPolicy.settings` named in ``ours`` must equal ``ours`` (those of
    ``owner``, the network that starts from it); else one ``ValueError`` names each that
    differs (as ``labels`` calls it, if it does)."""
    from sb3_contrib import MaskablePPO

    source = MaskablePPO.load(Path(path), device="cpu").policy
    if not isinstance(source, CardAttentionPolicy):
        raise ValueError(f"policy_from {path}: not a card_attention model ({type(source).__name__})")
    theirs, labels = source.settings(), labels or {}
    differ = [
        f"{labels.get(name, name)} {theirs[name]!r} (here {value!r})"
        for name, value in ours.items()
        if theirs[name] != value
    ]
    if differ:
        raise ValueError(f"policy_from {path}: the model's {', '.join(differ)} must match {owner}")
    return source
