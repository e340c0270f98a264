"""Native Gymnasium vector env of ``ConcentrationVs-v0``: many games against opponents at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from concentration_env.envs.opponents import resolve_opponents
from concentration_env.envs.policy_specs import DEFAULT_OPPONENT
from concentration_env.envs.spaces import versus_space
from concentration_env.envs.vector import BatchVectorEnv, put_info
from concentration_env.game import scoring
from concentration_env.game.batch import VersusBatch, check_num_envs
from concentration_env.game.policy import BatchPolicy
from concentration_env.game.rules import Rules
from concentration_env.game.seats import table_rules


class VersusVectorEnv(BatchVectorEnv):
    """Concentration against opponents, ``num_envs`` games at once on the batched core.

    ## Description
    The game of :class:`concentration_env.envs.versus.VersusEnv` (see its page for the
    rules, rewards and observations), played as a Gymnasium 1.x ``VectorEnv`` over
    :class:`concentration_env.game.batch.VersusBatch`: the learner holds seat ``seats[i]`` of
    game ``i``, batched baseline policies play the other seats, and one compiled call flips a
    card in every game. Game ``i`` plays flip for flip like
    ``gym.make("ConcentrationVs-v0", seat=seats[i], opponents=opponents[i])`` seeded with
    ``seed + i``, for opponents whose play is a function of their seed (``random`` and
    ``forgetful`` draw from one stream for the whole batch: only their distribution matches).

    ## Action Space
    ``MultiDiscrete([num_cards] * num_envs)``: one flip position per game.

    ## Observation Space
    The single env's ``Dict`` batched: ``cards`` (int16), ``face_up``, ``removed``,
    ``action_mask`` (int8), ``back`` for checkerboard deals, each ``(num_envs, num_cards)``,
    and ``scores`` ``(num_envs, num_players)`` with each learner's seat first.

    ## Autoreset
    As in the solitaire vector env (:class:`concentration_env.envs.vector.ConcentrationVectorEnv`):
    ``"NextStep"`` (the default) or ``"SameStep"`` (with ``final_obs`` and ``final_info``).

    ## Information
    Gymnasium's vector layout, every key with its ``_key`` mask and present at every step:
    ``action_mask`` ``(num_envs, num_cards)`` int8; ``scores`` ``(num_envs, num_players)``
    int32 in seat order; ``winners`` ``(num_envs, num_players)`` bool in seat order, all
    False until a game ends. ``action_masks()`` returns the legal flips as bool.

    ## Arguments
    ``gym.make_vec("ConcentrationVs-v0", num_envs=4096, rules=None, num_players=None,
    seats=0, opponents="greedy", first_player=0, observation_mode="memory",
    end_stalled=False, autoreset_mode="NextStep", **rule_fields)``; ``max_episode_steps``
    comes from the registered id (10,000 learner flips) unless given.

    - ``seats``: the learner's seat (index or agent name) in every game, or one per game.
    - ``opponents``: a policy name, a saved model's file or a batched policy object for every
      game, or a sequence with one per game; each plays every other seat of its game.
    - ``end_stalled``: end a game once every seat has passed in a row (captured nothing and
      shown nothing new), scored as it stands, as the evaluation harness scores stalled games
      (:class:`concentration_env.game.batch.VersusBatch`); by default such a game runs to
      the time limit.
    - the single env's ``max_turns`` and rendering are not offered (use Gymnasium's
      ``SyncVectorEnv`` of single envs for those).

    ## Version History
    - v0: initial release.
    """

    batch: VersusBatch

    def __init__(
        self,
        num_envs: int = 1,
        rules: Rules | str | None = None,
        num_players: int | None = None,
        seats: int | str | Sequence[int | str] = 0,
        opponents: BatchPolicy | str | Sequence[BatchPolicy | str] = DEFAULT_OPPONENT,
        first_player: int | str = 0,
        observation_mode: str = "memory",
        max_episode_steps: int | None = None,
        end_stalled: bool = False,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        render_mode: None = None,
        max_turns: None = None,
        **rule_fields: Any,
    ):
        if render_mode is not None:
            raise ValueError(f"invalid render_mode={render_mode!r}; the vector env does not render (allowed: None)")
        if max_turns is not None:
            raise ValueError(
                f"invalid max_turns={max_turns!r}; allowed: None in the vector env "
                "(a SyncVectorEnv of ConcentrationVs-v0 envs takes it)"
            )
        table = table_rules(rules, num_players, **rule_fields)
        policies = resolve_opponents(opponents, table, check_num_envs(num_envs))
        self.batch = VersusBatch(
            num_envs, table, None, seats, policies, first_player, observation_mode, max_episode_steps, end_stalled
        )
        self._setup(versus_space(self.batch.game, table.num_players), autoreset_mode)

    def _advance(self, actions, skip):
        rewards, terminated, truncated = self.batch.step(actions, skip=skip)
        return rewards, terminated, truncated, None

    def _infos(self, obs: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, Any]:
        """``action_mask``, ``scores`` and ``winners`` of the games in ``rows``."""
        state = self.batch.require_reset()
        infos: dict[str, Any] = {}
        put_info(infos, "action_mask", obs["action_mask"], rows)
        put_info(infos, "scores", state.scores.astype(np.int32), rows)
        won = np.zeros(state.scores.shape, dtype=bool)
        if state.done.any():  # only a finished game has winners
            won[state.done] = scoring.winners(self.game, state)[state.done]
        put_info(infos, "winners", won, rows)
        return infos
