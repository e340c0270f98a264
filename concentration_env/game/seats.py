"""Seats, seeds and observation modes: the conventions every game and adapter shares.

Seats are numbered from 0 and named ``player_<seat>`` (PettingZoo's agent names). Policies
that play seats are reseeded from a game's generator with seeds below :data:`SEED_RANGE`.
"""

from __future__ import annotations

from typing import Any

from concentration_env.game.checks import check_choice, check_int, is_int
from concentration_env.game.rules import Rules, resolve_rules

OBSERVATION_MODES = ("memory", "visible")


def check_observation_mode(mode: str) -> bool:
    """Validate an observation mode; True for perfect-memory observations."""
    check_choice("observation_mode", mode, OBSERVATION_MODES)
    return mode == "memory"


MIN_PLAYERS = 2
# Games between policies stop after this many turns per card: two optimal players repeat a
# stalled position forever, and weak policies can retry one missed pair forever (optimal
# play needs under one turn per card, random play on 52 cards a few hundred turns in all).
TURNS_PER_CARD_CAP = 50


def turn_cap(num_cards: int, max_turns: Any = None) -> int:
    """``max_turns`` validated (an int >= 1), or the default cap for ``num_cards`` cards."""
    if max_turns is None:
        return TURNS_PER_CARD_CAP * num_cards
    allowed = f"None ({TURNS_PER_CARD_CAP} turns per card) or an int >= 1"
    return check_int("max_turns", max_turns, 1, numpy=True, allowed=allowed)


def agent_name(seat: int) -> str:
    """The PettingZoo name of a seat: 0 -> "player_0"."""
    return f"player_{seat}"


def seat_of(value: int | str, players: int, field: str = "first_player") -> int:
    """A seat number from a seat index or an agent name; ValueError naming ``field``."""
    names = [agent_name(seat) for seat in range(players)]
    if isinstance(value, str) and value in names:
        return names.index(value)
    if is_int(value, numpy=True) and 0 <= value < players:
        return int(value)
    raise ValueError(f"invalid {field}={value!r}; allowed: a seat 0..{players - 1} or an agent name {names}")


def table_rules(rules: Rules | str | None, num_players: int | None, **rule_fields: Any) -> Rules:
    """Resolve the rules of a game for ``num_players`` (default: the rules' own count when
    it is two or more, else two)."""
    resolved = resolve_rules(rules, **rule_fields)
    if num_players is None:
        num_players = max(resolved.num_players, MIN_PLAYERS)
    num_players = check_int(
        "num_players",
        num_players,
        MIN_PLAYERS,
        numpy=True,
        allowed=f"an int >= {MIN_PLAYERS} (use the solitaire env Concentration-v0 for one player)",
    )
    return resolved.replace(num_players=num_players)


SEED_RANGE = 2**31  # policies are reseeded from the env's generator on every reset
MAX_REDEALS = 1000  # deals in a row the opponents may clear before the learner's first flip


def no_game_for_the_learner(seat: int) -> RuntimeError:
    """The error for a deck on which the opponents keep clearing the table before the learner can flip."""
    return RuntimeError(
        f"the opponents cleared {MAX_REDEALS} deals in a row before the learner (seat {seat}) could flip: "
        "the deck is too small to play against them; allowed: a larger deck, or first_player set to the learner's seat"
    )
