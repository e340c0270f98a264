"""The rules of Concentration: one frozen, validated object for every variant.

``Rules`` is the single source of truth for what game is played. It is checked once when it
is built (every bad value raises one ``ValueError`` naming the field and what is allowed; an
unknown field name raises a ``TypeError`` in Python's words that is a ``ValueError`` too),
and compiled once by :func:`concentration_env.game.core.compile_rules` into the arrays the game
core runs on. Named presets live as YAML files in ``configs/rules/``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from concentration_env.game.cards import JOKERS_PER_PACK, SUITS, Card, picture_faces, standard_faces
from concentration_env.game.checks import check_bool, check_choice, check_int, fail, is_int, reject_unknown

PRESET_DIR = Path(__file__).resolve().parents[1] / "presets"
# A preset's file name: lowercase words joined by "_", which is also what makes an env id of it.
PRESET_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")

DECKS = ("standard", "pictures")
MATCHING = ("rank_colour", "rank", "zebra", "identical")
TURN_POLICIES = ("extra_turn", "one_flip")
ILLEGAL_ACTIONS = ("end_turn", "raise")
BACKS = ("plain", "checkerboard")
TIE_BREAKS = ("share", "first_capture", "highest_rank", "jokers")
REWARD_MODES = ("pairs", "margin", "win_loss")
MAX_RANKS = 13
MAX_PACKS = 2
# Upper bounds on sizes, so that every game compiles, plays and renders in about a second.
# The match table grows with the square of the number of faces and a rendered frame with the
# number of cards; seats are stored as int8 (``NONE`` = -1 is "nobody"), so 127 is the most
# seats whose captures can be recorded.
MAX_CARDS = 2048
MAX_LAYOUT_SIDE = 256  # rows or columns of a layout: a frame of a 2048-card line would be 150k pixels long
MAX_PLAYERS = 127
# Numbers the game counts in int32 (scores, pair values, misses): a game whose every pair is
# worth the most points still scores below 2**31 (and exactly in float32, below 2**24 per pair).
MAX_JOKER_VALUE = 1_000_000
MAX_MISMATCHES = 2**31 - 1

# Layouts the reference texts name for the classic deck sizes; other sizes get the most
# square rectangle that holds them.
CLASSIC_LAYOUTS = {52: (4, 13), 54: (6, 9), 104: (8, 13), 108: (9, 12)}


def _fail(field: str, value: Any, allowed: str) -> NoReturn:
    fail(f"rules: {field}", value, allowed)


@dataclass(frozen=True)
class Rules:
    """Every setting of a game of Concentration.

    Fields (defaults first in each list of choices):

    - ``deck``: ``"standard"`` playing cards or ``"pictures"`` (``pairs`` distinct pictures).
    - ``packs``: 1 or 2 packs; with pictures, each picture appears ``2 * packs`` times.
    - ``jokers``: add two jokers per standard pack. Jokers pair only with jokers.
    - ``ranks``: use ranks ace..``ranks`` only (1-13), for shorter games.
    - ``pairs``: number of distinct pictures (pictures deck only); a deck holds at most
      ``MAX_CARDS`` (2048) cards.
    - ``matching``: ``"rank_colour"`` (same rank and colour), ``"rank"`` (any suit),
      ``"zebra"`` (same rank, opposite colour) or ``"identical"`` (same rank and suit;
      needs two packs). Pictures always pair with their twin.
    - ``turn_policy``: ``"extra_turn"`` (a match earns another turn) or ``"one_flip"``.
    - ``illegal_action``: ``"end_turn"`` (a flip of a face-up or captured card is undone
      and ends the turn, counted as an unsuccessful pair) or ``"raise"`` (``ValueError``).
    - ``max_mismatches``: ``None`` or the number of chips in solitaire (at most
      ``MAX_MISMATCHES``, 2**31 - 1); paying the last chip loses the game.
    - ``layout``: ``None`` (automatic) or ``(rows, cols)``, each at most ``MAX_LAYOUT_SIDE`` (256).
    - ``backs``: ``"plain"`` or ``"checkerboard"`` (two packs with different, public backs
      dealt in a checkerboard pattern).
    - ``joker_value``: points for capturing the joker pair, at most ``MAX_JOKER_VALUE`` (10**6).
    - ``num_players``: seats at the table (1 = solitaire), at most ``MAX_PLAYERS`` (127).
    - ``tie_break``: ``"share"``, ``"first_capture"``, ``"highest_rank"`` or ``"jokers"``.
    - ``reward_mode``: ``"pairs"`` (points as they are captured), ``"margin"`` (the
      captor's points minus an equal share of them for every other seat, a zero-sum
      reward that sums to the pair margin over two-player games) or ``"win_loss"``.
    """

    deck: str = "standard"
    packs: int = 1
    jokers: bool = False
    ranks: int = MAX_RANKS
    pairs: int | None = None
    matching: str = "rank_colour"
    turn_policy: str = "extra_turn"
    illegal_action: str = "end_turn"
    max_mismatches: int | None = None
    layout: tuple[int, int] | None = None
    backs: str = "plain"
    joker_value: int = 1
    num_players: int = 1
    tie_break: str = "share"
    reward_mode: str = "pairs"

    def __post_init__(self) -> None:
        if isinstance(self.layout, list):
            self._store("layout", tuple(self.layout))
        self._validate()

    # -- validation ------------------------------------------------------------------
    def _validate(self) -> None:
        choices = {
            "deck": DECKS,
            "matching": MATCHING,
            "turn_policy": TURN_POLICIES,
            "illegal_action": ILLEGAL_ACTIONS,
            "backs": BACKS,
            "tie_break": TIE_BREAKS,
            "reward_mode": REWARD_MODES,
        }
        for field, allowed in choices.items():
            self._store(field, str(check_choice(f"rules: {field}", getattr(self, field), allowed)))
        self._check_int("packs", 1, MAX_PACKS, allowed=f"1 or {MAX_PACKS}")
        check_bool("rules: jokers", self.jokers)
        self._check_int("ranks", 1, MAX_RANKS)
        self._check_int("joker_value", 1, MAX_JOKER_VALUE)
        self._check_int("num_players", 1, MAX_PLAYERS)
        self._check_int("max_mismatches", 1, MAX_MISMATCHES, optional=True)
        if self.deck == "pictures":
            most = MAX_CARDS // (2 * self.packs)
            pairs_allowed = f"an int from 1 to {most} (distinct pictures; at most {MAX_CARDS} cards)"
            self._check_int("pairs", 1, most, allowed=pairs_allowed)
            if self.jokers:
                _fail("jokers", self.jokers, "False with deck='pictures'")
            if self.ranks != MAX_RANKS:
                _fail("ranks", self.ranks, f"{MAX_RANKS} (unused) with deck='pictures'")
        else:
            if self.pairs is not None:
                _fail("pairs", self.pairs, "None with deck='standard' (use ranks)")
            if self.matching == "identical" and self.packs < 2:
                _fail("matching", self.matching, "'identical' only with packs=2")
        if self.backs == "checkerboard" and self.packs != 2:
            _fail("backs", self.backs, "'checkerboard' only with packs=2")
        if self.layout is not None:
            self._validate_layout()

    def _store(self, field: str, value: Any) -> None:
        object.__setattr__(self, field, value)  # the dataclass is frozen once built

    def _check_int(self, field: str, minimum: int, maximum: int, **options: Any) -> None:
        """Check an int field (NumPy integers too) and keep it as a plain int."""
        self._store(field, check_int(f"rules: {field}", getattr(self, field), minimum, maximum, numpy=True, **options))

    def _validate_layout(self) -> None:
        layout, n = self.layout, self.num_cards
        if (
            not isinstance(layout, tuple)
            or len(layout) != 2
            or not all(is_int(x, numpy=True) and 1 <= x <= MAX_LAYOUT_SIDE for x in layout)
        ):
            _fail("layout", layout, f"None or (rows, cols) with ints from 1 to {MAX_LAYOUT_SIDE}")
        rows, cols = layout = (int(layout[0]), int(layout[1]))
        self._store("layout", layout)
        if rows * cols < n or (rows - 1) * cols >= n:
            _fail(
                "layout",
                layout,
                f"(rows, cols) holding all {n} cards with no empty row, e.g. {_auto_layout(n)}",
            )

    # -- derived facts ---------------------------------------------------------------
    @property
    def faces(self) -> tuple[Card, ...]:
        """The distinct card faces of this deck; face id = index in this tuple."""
        if self.deck == "pictures":
            assert self.pairs is not None  # validation requires pairs with the pictures deck
            return picture_faces(self.pairs)
        return standard_faces(self.ranks, self.jokers)

    @property
    def copies(self) -> tuple[int, ...]:
        """How many cards of each face the deck holds."""
        if self.deck == "pictures":
            assert self.pairs is not None  # validation requires pairs with the pictures deck
            return (2 * self.packs,) * self.pairs
        suited = (self.packs,) * (self.ranks * len(SUITS))
        return suited + ((JOKERS_PER_PACK * self.packs,) if self.jokers else ())

    @property
    def num_cards(self) -> int:
        """Cards dealt to the table."""
        return sum(self.copies)

    @property
    def num_pairs(self) -> int:
        """Pairs to be captured in a game."""
        return self.num_cards // 2

    @property
    def shape(self) -> tuple[int, int]:
        """The grid (rows, cols) the cards are dealt into, row-major."""
        if self.layout is not None:
            return self.layout
        return _auto_layout(self.num_cards)

    # -- construction ------------------------------------------------------------------
    def replace(self, **changes: Any) -> Rules:
        """A copy with some fields changed (validated like any other)."""
        return Rules.from_mapping({**dataclasses.asdict(self), **changes})

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any], source: str = "rules") -> Rules:
        """Build from a plain mapping, rejecting unknown keys by name."""
        if not isinstance(mapping, Mapping):
            raise ValueError(f"{source}: expected a mapping of rule fields, got {type(mapping).__name__}")
        _reject_unknown_fields(mapping, source)
        try:
            return cls(**mapping)
        except ValueError as error:
            if source == "rules":
                raise
            raise ValueError(f"{source}: {error}") from None

    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> Rules:
        """A named preset from ``configs/rules/<name>.yaml``, with fields overridden."""
        return cls.from_mapping({**_preset_fields(name), **overrides}, source=f"preset {name!r}")


FIELDS = tuple(field.name for field in dataclasses.fields(Rules))


def _reject_unknown_fields(mapping: Mapping, source: str) -> None:
    """An :class:`~concentration_env.game.checks.UnknownFieldError` (a ``TypeError`` and a
    ``ValueError``) naming every key that is not a rule field (keys of any type)."""
    reject_unknown(source, sorted((key for key in mapping if key not in FIELDS), key=repr), "rule field", FIELDS)


def preset_names() -> tuple[str, ...]:
    """The names of the shipped rule presets: the YAML files of the preset folder whose
    names are lowercase words joined by ``_``; any other YAML file there is skipped with a
    warning (it could not name an env id)."""
    names = []
    for path in sorted(PRESET_DIR.glob("*.yaml")):
        if PRESET_NAME.fullmatch(path.stem):
            names.append(path.stem)
        else:
            warnings.warn(
                f"{path}: skipped: a preset file name must be lowercase words joined by '_' (e.g. two_decks.yaml)",
                stacklevel=2,
            )
    return tuple(names)


@functools.cache
def _strict_loader() -> type:
    """YAML's safe loader, refusing a mapping that gives one key twice (the plain loader
    keeps the last silently). Built on first use: yaml is imported only when a file is read."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            if isinstance(node, yaml.MappingNode):
                seen = set()
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue  # "<<: *base" may be overridden by the keys beside it
                    key = self.construct_object(key_node, deep=True)
                    try:
                        duplicate = key in seen
                    except TypeError:
                        continue  # an unhashable key: the safe loader names it
                    if duplicate:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"duplicate key {key!r}", key_node.start_mark
                        )
                    seen.add(key)
            return super().construct_mapping(node, deep)

    return StrictLoader


MAX_YAML_DEPTH = 32  # nested mappings and lists a config may hold (ours use three)


def _check_nesting(yaml: Any, text: str, path: Path) -> None:
    """Refuse documents nested deeper than :data:`MAX_YAML_DEPTH`, from the parser's event
    stream (read without recursion), before the recursive loader could overflow the stack."""
    depth = 0
    for event in yaml.parse(text):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise ValueError(f"{path}: not valid YAML: nested too deeply (more than {MAX_YAML_DEPTH} levels)")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def load_yaml_mapping(path: Path, *, allow_empty: bool = True) -> dict:
    """Read a UTF-8 YAML file that must hold a mapping with no key given twice; an empty
    file is an empty mapping unless ``allow_empty`` is False. Every error names the file."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
        _check_nesting(yaml, text, path)
        data = yaml.load(text, Loader=_strict_loader())
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text: {error}") from None
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML: {error}") from None
    if data is None:
        if not allow_empty:
            raise ValueError(f"{path}: empty; allowed: a mapping of keys to values ({{}} for none)")
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of keys to values, got {type(data).__name__}")
    return data


def _preset_fields(name: str) -> dict:
    # Only a name listed by preset_names: never a path, which could lead out of the folder.
    names = preset_names()
    if not isinstance(name, str) or name not in names:
        raise ValueError(f"invalid rules: unknown preset {name!r}; allowed: {', '.join(names)}")
    path = PRESET_DIR / f"{name}.yaml"
    fields = load_yaml_mapping(path, allow_empty=False)
    _reject_unknown_fields(fields, str(path))
    return fields


def resolve_rules(rules: Rules | str | None = None, **fields: Any) -> Rules:
    """Turn what a user passes to an env (a ``Rules``, a preset name, or nothing, plus
    field keyword arguments) into one validated ``Rules``."""
    if rules is None:
        return Rules.from_mapping(fields)
    if isinstance(rules, Rules):
        return rules.replace(**fields) if fields else rules
    if isinstance(rules, str):
        return Rules.from_preset(rules, **fields)
    raise ValueError(f"invalid rules: {rules!r}; allowed: a Rules, a preset name ({', '.join(preset_names())}) or None")


def _auto_layout(n: int) -> tuple[int, int]:
    """The classic grid for ``n`` cards, else the most square grid with no empty row."""
    if n in CLASSIC_LAYOUTS:
        return CLASSIC_LAYOUTS[n]
    candidates = []
    for rows in range(1, math.isqrt(n) + 2):
        cols = math.ceil(n / rows)
        if rows <= cols and (rows - 1) * cols < n:
            candidates.append((cols - rows, rows * cols, (rows, cols)))
    return min(candidates)[2]
