"""A compact recurrent PPO for ``observation_mode="visible"`` (torch, batched over envs).

In visible mode the agent sees only the cards face up now, so it must remember what it saw.
sb3-contrib's ``RecurrentPPO`` runs at about 21 env-steps/s on this 2-core machine with its
defaults; this learner is written for the game instead. It has two networks (a config's
``network``), both per-card recurrent memories
(:class:`~concentration_env.training.memory.CardRecurrence`: every position has its own GRU
state, all positions sharing one ``GRUCell``):

- ``network: card_memory`` (:class:`~concentration_env.training.memory.RawMemoryNet`, the
  *raw* tier): the env's raw observations only, self-attention across cards, an auxiliary
  read-out of the face last seen at each position. ``network: card_max_memory``
  (:class:`~concentration_env.training.memory.MaxMemoryNet`, raw too) keeps a running
  maximum per card in place of the GRU, and a pre-norm transformer layer across cards.
- ``network: mlp`` (:class:`CardMemoryNet`, the *engineered* tier). Each step a card's
  input is what is visible of it now (its face one-hot while face up, captured, legal,
  first card of the turn) plus the turn context, so remembering "the card at 17 is the
  queen of hearts" is one cell's job. A linear **face read-out** of each card's memory
  predicts which face lies there (or "not seen"), trained with a self-supervised loss
  (``recall_coef``) against the agent's own record of the faces it has been shown
  (:func:`remember`, built from its observations alone: no hidden state). A card's logit
  then uses the probability, through the rules' match table, that it pairs with the turn's
  first card: "flip the known partner" needs no learning of the matching rule itself.

Both train the same way:

- **PPO with truncated BPTT over the rollout**: rollouts of ``n_steps`` for all envs at once;
  each epoch replays whole env sequences from the stored start state, with the memory
  zeroed at episode starts; minibatches split the envs. Only the GRU's hidden side runs step
  by step (:meth:`CardRecurrence.recur`); the read-out, scores, values and losses of every
  step of a minibatch are one batched call (the network's ``heads``).
- ``target_kl`` (optional) ends an update's epochs at the first minibatch whose estimated KL
  to the rollout's policy passes 1.5 times it, as SB3's PPO does.

It trains on any SB3 ``VecEnv`` of Dict observations (the batched ``concentration_env.integrations.sb3``
one, ``vec_env: native``, or SB3's ``DummyVecEnv`` of solitaire envs); masks come from the
observation.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from torch import nn

from concentration_env.training.memory import ACTION_GAIN, CardRecurrence, MaxMemoryNet, RawMemoryNet
from concentration_env.training.recall_attention import RecallAttentionNet

MASKED_LOGIT = -1e9


@dataclass(frozen=True)
class RecurrentPPOSettings:
    """Hyperparameters of :class:`RecurrentPPO` (the ``hyperparameters`` of a config)."""

    n_steps: int = 64  # rollout length per env (also the BPTT window)
    n_epochs: int = 4
    env_batches: int = 4  # minibatches per epoch, each a slice of the envs
    learning_rate: float = 1e-3
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    recall_coef: float = 1.0  # weight of the "which face was last seen here" loss (own observations)
    hidden: int = 64
    target_kl: float | None = None  # stop the epochs of an update once a minibatch's KL passes 1.5x this
    # The raw networks only (card_memory, card_max_memory): a value trunk of its own, and its output's scale.
    value_trunk: bool = False
    value_scale: float = 1.0
    # card_recall_attention only: a MaskablePPO card_attention model whose trunks it starts
    # from, and for how many env steps those trunks stay as they came (the read-out learns first).
    policy_from: str | None = None
    policy_frozen_steps: int = 0


SETTINGS = tuple(f.name for f in dataclasses.fields(RecurrentPPOSettings))
RAW_NETWORK_SETTINGS = ("value_trunk", "value_scale")  # the settings only the raw networks read
SHAPE_SETTINGS = ("hidden", "value_trunk")  # settings that change the network's parameters


class CardMemoryNet(CardRecurrence):
    """Per-card GRU memory, a face read-out, and match-aware scoring; see the module docstring."""

    ARGUMENTS = ("match",)
    match: torch.Tensor  # a registered buffer, which nn.Module's typing cannot see

    def __init__(self, match: np.ndarray, hidden: int = 64):
        super().__init__()
        num_faces = len(match)
        self.num_faces = num_faces
        self.hidden = hidden
        # The rules' match table over "face + 1" (row and column 0: unseen, matches nothing).
        table = torch.zeros(num_faces + 1, num_faces + 1)
        table[1:, 1:] = torch.tensor(np.asarray(match, dtype=np.float32))
        self.register_buffer("match", table)
        inputs = num_faces + 1 + 5  # face one-hot (0 = unseen), face_up, removed, legal, first, mid_turn
        self.cell = nn.GRUCell(inputs, hidden)
        self.readout = nn.Linear(hidden, num_faces + 1)  # which face the card holds (0: not seen)
        self.score = nn.Sequential(nn.Linear(2 * hidden + 2, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.value = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        nn.init.orthogonal_(cast(nn.Linear, self.score[-1]).weight, gain=ACTION_GAIN)

    def arguments(self) -> dict[str, Any]:
        return {"match": self.match[1:, 1:].numpy().astype(bool)}

    def card_inputs(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        cards = obs["cards"].long()
        up = obs["face_up"].float()
        mid_turn = (up.sum(dim=-1, keepdim=True) == 1).float()
        first = up * mid_turn
        onehot = nn.functional.one_hot(cards, self.num_faces + 1).float()
        flags = [up, obs["removed"].float(), obs["action_mask"].float(), first, mid_turn.expand_as(up)]
        return torch.cat([onehot, torch.stack(flags, dim=-1)], dim=-1)

    def heads(self, inputs: torch.Tensor, memory: torch.Tensor) -> tuple[torch.Tensor, ...]:
        recall = self.readout(memory)
        belief = recall.softmax(dim=-1)  # what the agent believes lies at each position
        first = inputs[..., -2:-1]  # the "first" flag
        first_belief = (belief * first).sum(dim=-2)  # (..., faces + 1); zeros when no first card is up
        pairs_with_first = (belief @ self.match * first_belief[..., None, :]).sum(-1, keepdim=True)
        seen = 1.0 - belief[..., :1]
        pooled = torch.cat([memory.mean(dim=-2), memory.max(dim=-2).values], dim=-1)
        # The score's first layer on [memory, context, pairs_with_first, seen], split by its
        # weight's columns so that the context (the mean memory, the same for every card of a
        # game) goes through it once per game, not once per card.
        first_layer = cast(nn.Linear, self.score[0])
        weight, hidden = first_layer.weight, self.hidden
        per_card = nn.functional.linear(memory, weight[:, :hidden])
        per_card = per_card + nn.functional.linear(torch.cat([pairs_with_first, seen], dim=-1), weight[:, 2 * hidden :])
        per_game = nn.functional.linear(pooled[..., :hidden], weight[:, hidden : 2 * hidden], first_layer.bias)
        logits = self.score[1:](per_card + per_game[..., None, :]).squeeze(-1)
        return logits, self.value(pooled).squeeze(-1), recall


# A config's ``network`` for algo recurrent_ppo: the class it names.
RAW_NETWORKS: dict[str, type[RawMemoryNet] | type[RecallAttentionNet]] = {
    "card_memory": RawMemoryNet,
    "card_max_memory": MaxMemoryNet,
    "card_recall_attention": RecallAttentionNet,
}
NETWORK_CLASSES: dict[str, type[CardRecurrence]] = {"mlp": CardMemoryNet, **RAW_NETWORKS}


def network_options(network: str, settings: RecurrentPPOSettings) -> dict[str, Any]:
    """The constructor arguments besides ``hidden`` that ``network`` takes from the settings."""
    if network not in RAW_NETWORKS:
        return {}
    return {name: getattr(settings, name) for name in RAW_NETWORK_SETTINGS}


def build_network(
    network: str, observation_space: Any, settings: RecurrentPPOSettings, match: np.ndarray | None = None
) -> CardRecurrence:
    """A fresh network: the raw ones (``card_memory``, ``card_max_memory``) from the
    observation space alone, ``mlp`` (the engineered one) with the rules' match table."""
    if network in RAW_NETWORKS:
        return RAW_NETWORKS[network].from_space(
            observation_space, settings.hidden, **network_options(network, settings)
        )
    if match is None:
        raise ValueError(f"network {network!r} needs the rules' match table")
    return CardMemoryNet(match, settings.hidden)


def masked_distribution(logits: torch.Tensor, mask: torch.Tensor) -> torch.distributions.Categorical:
    """The policy over the legal flips (argument checks off: the logits are finite by construction)."""
    masked = torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))
    return torch.distributions.Categorical(logits=masked, validate_args=False)


def remember(recalled: torch.Tensor, obs: dict[str, torch.Tensor], starts: torch.Tensor) -> torch.Tensor:
    """The agent's own record of the faces it has seen (face + 1, 0 = never), the target of
    the read-out: forgotten at an episode start, updated with every face shown, cleared
    where cards are captured. Built from the observations alone."""
    recalled = recalled * (1 - starts.long())[:, None]
    recalled = torch.where(obs["cards"] > 0, obs["cards"].long(), recalled)
    return torch.where(obs["removed"].bool(), torch.zeros_like(recalled), recalled)


def obs_tensors(obs: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    """Batched numpy observations as tensors (only the keys the network reads)."""
    return {k: torch.as_tensor(np.asarray(obs[k])) for k in ("cards", "face_up", "removed", "action_mask")}


class RecurrentPPO:
    """Recurrent PPO over a VecEnv of Dict observations; see the module docstring."""

    def __init__(
        self,
        venv: Any,
        settings: RecurrentPPOSettings,
        seed: int = 0,
        network: str = "mlp",
        match: np.ndarray | None = None,
    ):
        torch.manual_seed(seed)
        self.venv = venv
        self.settings = settings
        self.network = network
        self.num_cards = venv.observation_space["cards"].shape[0]
        self.net = build_network(network, venv.observation_space, settings, match)
        # foreach: one multi-tensor update instead of a loop over the parameters (same result).
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=settings.learning_rate, eps=1e-5, foreach=True)
        self.num_timesteps = 0
        # The learning rate at an env step, set before each update (None: settings.learning_rate throughout).
        self.schedule: Callable[[int], float] | None = None

    def learn(self, total_timesteps: int, on_rollout: Callable[[RecurrentPPO, dict], bool] | None = None) -> None:
        """Train for ``total_timesteps`` env steps. ``on_rollout(self, stats)`` runs after each
        update; returning False stops training early."""
        s = self.settings
        num_envs = self.venv.num_envs
        obs = obs_tensors(self.venv.reset())
        memory = self.net.initial_state(num_envs, self.num_cards)
        recalled = torch.zeros(num_envs, self.num_cards, dtype=torch.long)
        starts = torch.ones(num_envs)
        while self.num_timesteps < total_timesteps:
            start_memory = memory
            batch: dict[str, list[Any]] = {
                k: [] for k in ("inputs", "masks", "actions", "logp", "values", "rewards", "starts", "recalled")
            }
            episode_stats = []
            began = time.perf_counter()
            with torch.no_grad():
                for _ in range(s.n_steps):
                    recalled = remember(recalled, obs, starts)
                    inputs, mask = self.net.card_inputs(obs), obs["action_mask"].bool()
                    logits, value, memory, _ = self.net.step(inputs, memory, starts)
                    dist = masked_distribution(logits, mask)
                    action = dist.sample()
                    next_obs, reward, done, infos = self.venv.step(action.numpy())
                    for k, v in (
                        ("inputs", inputs),
                        ("masks", mask),
                        ("actions", action),
                        ("logp", dist.log_prob(action)),
                        ("values", value),
                        ("rewards", torch.as_tensor(reward, dtype=torch.float32)),
                        ("starts", starts),
                        ("recalled", recalled),
                    ):
                        batch[k].append(v)
                    episode_stats += [info for info, d in zip(infos, done) if d]
                    obs, starts = obs_tensors(next_obs), torch.as_tensor(done, dtype=torch.float32)
                last_value = self.net.step(self.net.card_inputs(obs), memory, starts)[1]
            self.num_timesteps += s.n_steps * num_envs
            rollout_seconds = time.perf_counter() - began
            if self.schedule is not None:  # as SB3 does: the rate at the steps taken so far
                for group in self.optimizer.param_groups:
                    group["lr"] = self.schedule(self.num_timesteps)
            stats = self._update({k: torch.stack(v) for k, v in batch.items()}, start_memory, last_value, starts)
            stats.update(
                rollout_seconds=rollout_seconds,
                episodes=episode_stats,
                learning_rate=self.optimizer.param_groups[0]["lr"],
            )
            if on_rollout is not None and on_rollout(self, stats) is False:
                break

    def _update(
        self, batch: dict, start_memory: torch.Tensor, last_value: torch.Tensor, last_start: torch.Tensor
    ) -> dict:
        """PPO epochs over one rollout (``batch``: (T, B, ...) tensors); returns mean losses."""
        s = self.settings
        rewards, values, starts = batch["rewards"], batch["values"], batch["starts"]
        # starts[t + 1] says the episode ended at step t (no bootstrapping across it).
        next_nonterminal = 1 - torch.cat([starts[1:], last_start[None]])
        next_values = torch.cat([values[1:], last_value[None]])
        advantages = torch.zeros_like(rewards)
        running = torch.zeros_like(last_value)
        for t in reversed(range(s.n_steps)):
            delta = rewards[t] + s.gamma * next_values[t] * next_nonterminal[t] - values[t]
            running = delta + s.gamma * s.gae_lambda * next_nonterminal[t] * running
            advantages[t] = running
        returns = advantages + values
        num_envs = rewards.shape[1]
        # Trunks that started from another model stay as they came for policy_frozen_steps.
        frozen = (
            cast(RecallAttentionNet, self.net).transferred_parameters()
            if self.num_timesteps <= s.policy_frozen_steps
            else []
        )
        losses = []
        stopped = False
        for _ in range(s.n_epochs):
            if stopped:
                break
            for envs in torch.randperm(num_envs).chunk(s.env_batches):
                inputs = batch["inputs"][:, envs]
                # Only the memory is sequential: replay it, then score every step at once.
                memory = self.net.recur(inputs, start_memory[envs], starts[:, envs])
                logits, value, recall = self.net.heads(inputs, memory)
                recall_loss = nn.functional.cross_entropy(recall.flatten(0, -2), batch["recalled"][:, envs].flatten())
                dist = masked_distribution(logits, batch["masks"][:, envs])
                logp, entropy = dist.log_prob(batch["actions"][:, envs]), dist.entropy()
                adv = advantages[:, envs]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                log_ratio = logp - batch["logp"][:, envs]
                if s.target_kl is not None:
                    with torch.no_grad():  # SB3's estimate of the KL to the rollout's policy
                        approx_kl = ((log_ratio.exp() - 1) - log_ratio).mean().item()
                    if approx_kl > 1.5 * s.target_kl:
                        stopped = True
                        break
                ratio = torch.exp(log_ratio)
                policy_loss = -torch.min(ratio * adv, ratio.clamp(1 - s.clip_range, 1 + s.clip_range) * adv).mean()
                value_loss = (value - returns[:, envs]).pow(2).mean()
                loss = policy_loss + s.vf_coef * value_loss - s.ent_coef * entropy.mean() + s.recall_coef * recall_loss
                self.optimizer.zero_grad()
                loss.backward()
                for parameter in frozen:
                    parameter.grad = None  # Adam leaves a parameter without a gradient alone
                nn.utils.clip_grad_norm_(self.net.parameters(), s.max_grad_norm)
                self.optimizer.step()
                losses.append((policy_loss.item(), value_loss.item(), entropy.mean().item(), recall_loss.item()))
        policy_loss, value_loss, entropy, recall_loss = np.mean(losses, axis=0)
        return {"policy_loss": policy_loss, "value_loss": value_loss, "entropy": entropy, "recall_loss": recall_loss}

    # -- persistence and acting ------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Save weights, settings and Adam's state to ``path`` (a ``.pt`` file)."""
        torch.save(
            {
                "state_dict": self.net.state_dict(),
                "settings": dataclasses.asdict(self.settings),
                "num_cards": self.num_cards,
                "network": self.network,
                "optimizer": self.optimizer.state_dict(),
                **self.net.arguments(),
            },
            Path(path),
        )

    @classmethod
    def resume(
        cls, path: str | Path, venv: Any, settings: RecurrentPPOSettings, timesteps: int, seed: int = 0
    ) -> RecurrentPPO:
        """A learner carrying on from a file that :meth:`save` wrote at ``timesteps`` env steps:
        its network, and Adam's state where the file holds it (files saved before it did start
        Adam afresh). ``settings`` are the resumed run's, its learning rate included; the
        network's shape must be the saved one's."""
        data = check_resumable(path, settings)
        match = data.get("match")
        agent = cls(venv, settings, seed=seed, network=data.get("network", "mlp"), match=match)
        agent.net.load_state_dict(data["state_dict"])
        if "optimizer" in data:
            agent.optimizer.load_state_dict(data["optimizer"])
            for group in agent.optimizer.param_groups:
                group["lr"] = settings.learning_rate
        agent.num_timesteps = timesteps
        return agent


def check_resumable(path: str | Path, settings: RecurrentPPOSettings) -> dict[str, Any]:
    """The contents of a file :meth:`RecurrentPPO.save` wrote, after checking that ``settings``
    build a network of its shape (a ``ValueError`` naming the settings that differ)."""
    data = torch.load(Path(path), weights_only=False)
    saved = RecurrentPPOSettings(**data["settings"])
    changed = [name for name in SHAPE_SETTINGS if getattr(saved, name) != getattr(settings, name)]
    if changed:
        raise ValueError(
            f"{path}: the saved network has {', '.join(f'{n}={getattr(saved, n)!r}' for n in changed)}; "
            "a resumed run keeps the network's shape"
        )
    return data


class RecurrentActor:
    """A saved :class:`RecurrentPPO` network playing a batch of games (keeps their memory)."""

    def __init__(self, net: CardRecurrence, num_cards: int):
        self.net = net
        self.num_cards = num_cards
        self.reset(1)

    @classmethod
    def load(cls, path: str | Path) -> RecurrentActor:
        """The actor of a network saved by :meth:`RecurrentPPO.save`."""
        data = torch.load(Path(path), weights_only=False)
        settings = RecurrentPPOSettings(**data["settings"])
        # Files saved before the raw network existed name none: they hold the engineered one.
        name = data.get("network", "mlp")
        network = NETWORK_CLASSES[name]
        arguments = {argument: data[argument] for argument in network.ARGUMENTS}
        net = network(**arguments, hidden=settings.hidden, **network_options(name, settings))
        net.load_state_dict(data["state_dict"])
        net.eval()
        return cls(net, data["num_cards"])

    def reset(self, batch: int, seed: int | None = None) -> None:
        """Forget everything and start ``batch`` games; ``seed`` seeds the sampling."""
        self.memory = self.net.initial_state(batch, self.num_cards)
        self.generator = torch.Generator()
        if seed is None:
            self.generator.seed()
        else:
            self.generator.manual_seed(seed)

    def act_batch(self, observations: dict[str, np.ndarray], deterministic: bool = False) -> np.ndarray:
        """Sampled (or, ``deterministic``, the likeliest) flips for a batch of ``(B, n)``
        observations; updates the memory."""
        obs = obs_tensors(observations)
        with torch.no_grad():
            logits, self.memory = self.net.act(self.net.card_inputs(obs), self.memory)
            probs = masked_distribution(logits, obs["action_mask"].bool()).probs
            if deterministic:
                return probs.argmax(dim=1).numpy()
            return torch.multinomial(probs, 1, generator=self.generator)[:, 0].numpy()
