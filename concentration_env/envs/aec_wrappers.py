"""PettingZoo's standard AEC wrappers, made fast for this package's envs.

``env()`` of the multi-player env and of the duel wraps the raw env in PettingZoo's
``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(...))``, as PettingZoo's classic envs do.
The subclasses here forward the attributes that ``last()`` and ``step()`` read on every
flip as properties (PettingZoo's wrappers reach them through a failed lookup and
``__getattr__`` in each layer), and check actions with the package's ``parse_action``
(one clear error naming the action and the range). They stay ``isinstance`` of PettingZoo's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from concentration_env.envs.spaces import parse_action

HOT_ATTRIBUTES = ("agent_selection", "agents", "rewards", "_cumulative_rewards", "terminations", "truncations", "infos")


def _forwarded(name: str, after_reset: bool) -> property:
    """A read-only property that returns the wrapped env's ``name`` (``after_reset``: and
    raises OrderEnforcingWrapper's AttributeError before the first reset, as it does)."""

    def get(self):
        if after_reset and not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)

    return property(get, doc=f"The wrapped env's ``{name}``.")


def _forward_hot_attributes(before_reset: tuple[str, ...]) -> Callable[[type], type]:
    """A class decorator giving the class one :func:`_forwarded` property per hot
    attribute; those not in ``before_reset`` raise before the first reset."""

    def decorate(cls: type) -> type:
        for name in HOT_ATTRIBUTES:
            setattr(cls, name, _forwarded(name, after_reset=name not in before_reset))
        return cls

    return decorate


@_forward_hot_attributes(before_reset=HOT_ATTRIBUTES)
class AssertOutOfBoundsWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's AssertOutOfBoundsWrapper with the hot attributes forwarded directly and
    the package's own action check in place of its assertion (which ``python -O`` drops):
    a ``ValueError`` or ``TypeError`` naming the action and the valid positions, and the
    same actions accepted as the solitaire env (``np.array([3])`` included). ``None`` still
    passes for an agent that is done (PettingZoo's dead step)."""

    def step(self, action) -> None:
        env = self.env
        agent = env.agent_selection
        if action is not None or not (env.terminations[agent] or env.truncations[agent]):
            action = parse_action(action, env.action_space(agent).n)
        env.step(action)


@_forward_hot_attributes(before_reset=("_cumulative_rewards",))
class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper (same checks, same errors), with the hot
    attributes forwarded directly (all but ``_cumulative_rewards`` only after a reset, as
    PettingZoo's own)."""

    def __str__(self) -> str:
        return str(self.env)  # as PettingZoo prints its own OrderEnforcingWrapper

    def set_state(self, snapshot: dict[str, Any]) -> None:
        """The wrapped env's ``set_state``; a restored game counts as reset here."""
        self.env.set_state(snapshot)
        self._has_reset = self._has_updated = True


def wrap(env: AECEnv) -> AECEnv:
    """PettingZoo's standard wrappers for a classic env: action bounds and call order."""
    return OrderEnforcingWrapper(AssertOutOfBoundsWrapper(env))
