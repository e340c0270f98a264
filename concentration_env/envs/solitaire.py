"""Gymnasium adapter for solitaire Concentration."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from concentration_env.envs.spaces import board_space, parse_action
from concentration_env.game import core
from concentration_env.game.checks import check_seed
from concentration_env.game.rules import Rules, resolve_rules
from concentration_env.game.seats import check_observation_mode
from concentration_env.game.state import read_snapshot
from concentration_env.render.frame import Table, render_tables
from concentration_env.render.shapes import check_table_shape
from concentration_env.render.text import render_ansi
from concentration_env.render.window import Screen, available_render_modes, check_render_mode

MAX_EPISODE_STEPS = 10_000


class ConcentrationEnv(gym.Env):
    """Solitaire Concentration: clear a face-down layout in as few unsuccessful pairs as possible.

    ## Description
    A deck is shuffled and dealt face down into a grid. A turn is two flips: turn one card
    face up, then another. If the two form a pair under the matching rule they are captured
    and leave the table; otherwise both are shown and then turned face down again. The game
    ends when every card is captured (or, with chips, when the last chip is paid). Any rule
    variant of :class:`concentration_env.Rules` can be played: matching rules (rank and
    colour, any suit, zebra, identical), one or two packs, jokers, picture decks, short
    decks, explicit layouts, checkerboard backs and chips.

    ## Action Space
    ``Discrete(num_cards)``: flip the card at position ``i`` (row-major over the layout
    ``env.unwrapped.rules.shape``). One step is one flip, so a turn is two steps: the second
    choice can depend on the first card.

    ## Observation Space
    A ``Dict`` of flat arrays of length ``num_cards``:

    - ``cards`` (``MultiDiscrete(num_faces + 1)``, int16): 0 if the face is unknown, else
      face id + 1 (face ids index ``env.unwrapped.faces``). With ``observation_mode="memory"``
      every card ever seen that is still on the table is shown (perfect memory: the game is
      one of strategy). With ``"visible"`` only cards face up now are shown (a POMDP: the
      agent must remember). Captured cards are public in both modes.
    - ``face_up`` (``MultiBinary``): cards face up on the table now. After a missed pair the
      two cards stay face up in the observation of that second flip and turn face down at
      the next flip (their positions are legal for that flip).
    - ``removed`` (``MultiBinary``): captured cards.
    - ``action_mask`` (``MultiBinary``, int8): legal flips.
    - ``back`` (``MultiBinary``, only with ``backs="checkerboard"``): which back design each
      card has; public information.

    ## Rewards
    0 for a flip that does not end a turn or that captures a pair, -1 for each unsuccessful
    pair (the classic solitaire score: the number of misses), and -1 for an illegal flip
    under ``illegal_action="end_turn"`` (it counts as an unsuccessful pair). The episode
    return is minus the number of unsuccessful pairs.

    ## Starting State
    A fresh shuffle of the deck, every card face down. The same seed deals the same layout.

    ## Episode End
    ``terminated`` when every card is captured (``info["won"]`` is True), or when
    ``max_mismatches`` chips have all been paid (``info["won"]`` is False). Registered ids
    are truncated after 10,000 flips: random legal play on the default 52-card deck takes
    about 1,350 flips on average and on the 104-card two-pack deck about 5,400.

    ## Information
    ``info`` holds ``action_mask`` (int8), ``mismatches``, ``pairs`` (captured), ``turns``
    (completed turns), and after a flip that ends a turn ``matched``; at the end ``won``.
    ``env.action_masks()`` returns the legal flips as booleans (for sb3-contrib's
    ``MaskablePPO``).

    ## Arguments
    ``gym.make("Concentration-v0", rules=None, observation_mode="memory", render_mode=None,
    **rule_fields)``

    - ``rules``: a :class:`Rules`, a preset name from ``configs/rules/`` (``"standard"``,
      ``"two_decks"``, ...) or ``None`` for the defaults; keyword rule fields
      (``matching="zebra"``, ``jokers=True``, ...) are applied on top.
    - ``observation_mode``: ``"memory"`` or ``"visible"``.
    - ``render_mode``: ``None``, ``"ansi"`` (a text grid: ``##`` face down, card names face
      up, blanks captured), ``"rgb_array"`` (a picture of the table as a ``(height, width, 3)``
      uint8 array, the same pixels for the same state, no window needed) or ``"human"`` (that
      picture in a pygame window at ``metadata["render_fps"]``; needs the ``render`` extra).
    - ``table_shape``: how pictures lay the cards out: ``"grid"`` (default), ``"circle"``
      (concentric rings), ``"diamond"`` or ``"scatter"``. Drawing only: positions, actions
      and observations are the grid's, and fancy shapes tag each card with its coordinate.

    ## Registered Configurations
    ``Concentration-v0`` (the standard game) and one id per preset,
    ``Concentration-<Preset>-v0`` (for example ``Concentration-TwoDecks-v0``).

    ## Version History
    - v0: initial release (``rgb_array``/``human`` rendering and ``table_shape`` added
      without changing the game).
    """

    metadata = {"render_modes": available_render_modes(), "render_fps": 4}

    def __init__(
        self,
        rules: Rules | str | None = None,
        observation_mode: str = "memory",
        render_mode: str | None = None,
        table_shape: str = "grid",
        **rule_fields: Any,
    ):
        self.rules = resolve_rules(rules, **rule_fields)
        if self.rules.num_players != 1:
            raise ValueError(
                f"invalid rules: num_players={self.rules.num_players}; allowed: 1 for the solitaire env "
                "(use concentration_env.concentration_v0 for two or more players)"
            )
        self._memory = check_observation_mode(observation_mode)
        self.observation_mode = observation_mode
        self.render_mode = check_render_mode(render_mode, self.metadata)
        self.table_shape = check_table_shape(table_shape)
        self._screen = Screen(self.metadata["render_fps"]) if render_mode == "human" else None
        self.game = core.compile_rules(self.rules)
        self.observation_space = board_space(self.game)
        self.action_space = gym.spaces.Discrete(self.game.num_cards)
        self._state: core.State | None = None
        self._over = True  # no game running: before the first reset, or after the end (a flip's ``ended``)

    # -- the public face of the game -------------------------------------------------
    @property
    def faces(self):
        """Face id -> Card, for decoding ``cards`` observations."""
        return self.game.faces

    @property
    def layout(self) -> tuple:
        """The dealt cards in position order (a god view for tests and debugging)."""
        state = self._require_reset()
        return tuple(self.game.faces[f] for f in state.faces[0])

    def action_masks(self) -> np.ndarray:
        """Legal flips as booleans (the method sb3-contrib's MaskablePPO calls)."""
        return core.legal_mask(self._require_reset())[0]

    # -- Gymnasium API ---------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=check_seed(seed))
        faces = core.deal(self.game, self.np_random)
        self._state = core.new_state(self.game, faces[None])
        self._over = False
        obs = self._observation()
        if self._screen is not None:
            self.render()
        return obs, self._info(obs, 0, 0, 0)

    def step(self, action):
        if self._over:  # a Python flag, cheaper than reading the state's ``done`` every flip
            self._require_reset()
            raise RuntimeError("the episode is over; call reset() before step()")
        game = self.game
        if type(action) is not int or not 0 <= action < game.num_cards:  # else parse_action returns it as is
            action = parse_action(action, game.num_cards)
        assert self._state is not None  # a running game (``_over`` False) has a state
        flip, obs = core.step_one(game, self._state, action, self._memory)
        ended = flip.ended
        self._over = ended
        info = self._info(obs, flip.turns, flip.mismatches, flip.pairs)
        if flip.turn_ended:
            info["matched"] = flip.matched
        if ended:
            info["won"] = flip.won
        if self._screen is not None:
            self.render()
        return obs, flip.solitaire_reward, ended, False, info

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi', 'rgb_array' or 'human'")
            return None
        state = self._require_reset()
        header = (
            f"turn {int(state.turns[0]) + 1}  pairs {int(state.removed[0].sum()) // 2}/{self.rules.num_pairs}"
            f"  misses {int(state.mismatches[0])}"
            + (f"/{self.rules.max_mismatches}" if self.rules.max_mismatches else "")
        )
        table = Table(
            self.rules.shape,
            self.layout,
            core.face_up(state)[0],
            state.removed[0],
            self.game.backs if self.game.checkerboard else None,
        )
        if self.render_mode == "ansi":
            return render_ansi(*table[:5], header)
        frame = render_tables([table], "solitaire\n" + header, table_shape=self.table_shape)
        return frame if self._screen is None else self._screen.show(frame)

    def close(self):
        if self._screen is not None:
            self._screen.close()

    # -- snapshots -----------------------------------------------------------------------
    def get_state(self) -> dict[str, Any]:
        """A snapshot of the game and the random generator, for search (e.g. MCTS):
        ``set_state`` brings the env back to exactly this point."""
        return {"rules": self.rules, "core": self._require_reset().copy(), "rng": self.np_random.bit_generator.state}

    def set_state(self, snapshot: dict[str, Any]) -> None:
        """Restore a snapshot taken by ``get_state`` of an env with equal rules; a
        ``ValueError`` naming what is wrong (checked in full before anything changes)."""
        core_state, rng = read_snapshot(snapshot, self.game)
        self._state = core_state.copy()
        self._over = bool(core_state.done[0])
        self.np_random = rng

    # -- helpers -------------------------------------------------------------------------
    def _require_reset(self) -> core.State:
        if self._state is None:
            raise RuntimeError("call reset() before using the env")
        return self._state

    def _observation(self) -> dict[str, np.ndarray]:
        return {key: value[0] for key, value in core.observe(self.game, self._require_reset(), self._memory).items()}

    def _info(self, obs: dict[str, np.ndarray], turns: int, mismatches: int, pairs: int) -> dict[str, Any]:
        return {"action_mask": obs["action_mask"].copy(), "mismatches": mismatches, "pairs": pairs, "turns": turns}
