"""Play Concentration yourself: in the terminal (or a pygame window) against bots, or solitaire.

``concentration-play`` (or ``python scripts/play.py``)::

    concentration-play                                  # solitaire, the standard game
    concentration-play --rules zebra --opponents greedy # you against the greedy bot
    concentration-play --rules toddler --opponents random greedy --seat 1
    concentration-play --opponents runs/ppo/model.zip   # against a saved model
    concentration-play --set jokers=true --set layout=[6,9] --window

Cards are named by row letter and column number ("B7"). The table is drawn again after every
flip, with the turn's cards face up. Type ``help`` for the commands. Exit status: 0 when
the game was played to the end, 1 when it was abandoned (``quit``, end of input, window
closed, output closed), 2 for bad arguments, 130 for Ctrl-C while it starts.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import cast

import numpy as np
from gymnasium.error import DependencyNotInstalled

from concentration_env.envs.opponents import resolve_policy
from concentration_env.envs.policy_specs import MODEL_SUFFIXES, is_model_path
from concentration_env.envs.solitaire import ConcentrationEnv
from concentration_env.game.checks import check_int, check_number
from concentration_env.game.overrides import apply_overrides
from concentration_env.game.policy import Policy
from concentration_env.game.rules import FIELDS, Rules, preset_names
from concentration_env.game.seats import SEED_RANGE
from concentration_env.play.seated import PlayedFlip, SeatedGame
from concentration_env.render.coordinates import coordinate, parse_coordinate
from concentration_env.render.frame import position_at
from concentration_env.render.shapes import TABLE_SHAPES
from concentration_env.render.window import Screen

HUMAN = "you"
QUIT_WORDS = ("quit", "exit", "q")
HELP_WORDS = ("help", "h", "?")
BOARD_WORDS = ("board", "b")
BOT_DELAY_TTY = 0.8  # seconds a bot's flip stays on screen when a person is watching
EXIT_FINISHED, EXIT_ABANDONED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
MAX_DELAY_S = 60.0  # a longer pause after a bot's flip looks like a hang
DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")
HELP = (
    "Enter a card as its row letter and column number, e.g. A1 or b7 (case does not matter).\n"
    "Commands: 'board' shows the table again, 'help' shows this, 'quit' leaves the game."
)


class Abandoned(Exception):
    """The person left the game (quit, end of input, a closed window)."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="concentration-play",
        description="Play Concentration in the terminal against bots, or solitaire.",
        epilog=HELP,
    )
    parser.add_argument("--rules", default="standard", help=f"rule preset: {', '.join(preset_names())}")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help=f"override a rule field (YAML value), e.g. jokers=true, layout=[6,9]; fields: {', '.join(FIELDS)}",
    )
    parser.add_argument(
        "--opponents",
        nargs="*",
        default=[],
        metavar="BOT",
        help=f"one bot per other seat: a baseline name or a saved model's path ({', '.join(MODEL_SUFFIXES)}; none: solitaire)",
    )
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0 = first to move (default 0)")
    parser.add_argument("--seed", type=int, default=None, help="deal seed (default: a fresh shuffle)")
    parser.add_argument(
        "--observation-mode", choices=("memory", "visible"), default="memory", help="what the bots see (default memory)"
    )
    parser.add_argument("--table-shape", choices=TABLE_SHAPES, default="grid", help="how --window lays the cards out")
    parser.add_argument("--window", action="store_true", help="play with mouse clicks in a pygame window")
    parser.add_argument(
        "--delay",
        type=float,
        default=None,
        help=f"seconds to show each bot flip (default {BOT_DELAY_TTY} on a terminal, else 0)",
    )
    return parser.parse_args(argv)


def build_rules(preset: str, overrides: list[str], num_players: int) -> Rules:
    """A preset with ``FIELD=VALUE`` overrides and the number of seats; ``ValueError`` if bad."""
    fields = apply_overrides({}, overrides, form="FIELD=VALUE, e.g. jokers=true")
    if "num_players" in fields:
        raise ValueError("--set num_players: the number of seats is 1 + the number of --opponents")
    return Rules.from_preset(preset, **fields, num_players=num_players)


class TerminalGame:
    """One game with a person at ``seat`` and ``bots`` at the other seats, in order."""

    def __init__(
        self,
        match: SeatedGame,
        seat: int,
        bots: list[Policy],
        names: list[str],
        delay: float,
        screen: Screen | None = None,
        out=sys.stdout,
    ):
        self.match, self.seat, self.names, self.delay, self.screen, self.out = match, seat, names, delay, screen, out
        self.players: list[Policy | None] = [*bots[:seat], None, *bots[seat:]]
        self.first_flip: PlayedFlip | None = None  # the open card of the turn in progress

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def show(self) -> None:
        """Draw the table: in the window, or as text."""
        if self.screen is not None:
            self.screen.show(self.match.render())
        else:
            self.say(self.match.render())

    def run(self) -> int:
        """Play to the end; the exit status."""
        self.say(self.introduction())
        try:
            self.show()
            while not self.match.over:
                seat = self.match.to_move
                bot = self.players[seat]
                position = self.ask() if bot is None else int(bot.act(*self.match.observe()))
                flip = self.match.flip(position)
                self.show()
                self.say(self.describe(flip))
                if bot is not None and self.delay:
                    time.sleep(self.delay)
        except Abandoned as reason:
            self.say(f"{reason} The game is abandoned.")
            self.say(self.end_screen())
            return EXIT_ABANDONED
        self.say(self.end_screen())
        return EXIT_FINISHED

    # -- the person's turn --------------------------------------------------------------
    def ask(self) -> int:
        """A legal position from the person: typed, or clicked in the window."""
        what = "first" if self.first_flip is None else "second"
        while True:
            if self.screen is not None:
                position = self.click()
            else:
                text = self.read(f"{self.names[self.seat]}, flip your {what} card (e.g. B7; 'help'): ")
                position = self.interpret(text)
            if position is not None and self.check_legal(position):
                return position

    def read(self, prompt: str) -> str:
        """One line of input. Ctrl-C asks again (twice in a row leaves); end of input leaves."""
        interrupted = False
        while True:
            try:
                self.out.write(prompt)
                self.out.flush()
                line = sys.stdin.readline()
            except KeyboardInterrupt:
                if interrupted:
                    raise Abandoned("Interrupted twice.") from None
                interrupted = True
                self.say("\nInterrupted. Type 'quit' to leave the game (or press Ctrl-C again), or pick a card.")
                continue
            if not line:
                self.say()
                raise Abandoned("End of input.")
            return line.strip()

    def interpret(self, text: str) -> int | None:
        """A position from typed text, or None after handling a command or bad input."""
        word = text.lower()
        if word in QUIT_WORDS:
            raise Abandoned("You quit.")
        if word in HELP_WORDS:
            self.say(HELP)
            return None
        if word in BOARD_WORDS:
            self.show()
            return None
        if not word:
            self.say("Please enter a card, e.g. B7 ('help' for the commands).")
            return None
        try:
            return parse_coordinate(text, self.match.rules.shape, self.match.rules.num_cards)
        except ValueError as error:
            self.say(f"Not understood: {error}.")
            return None

    def click(self) -> int | None:
        """A position clicked in the window, or None for a click off the cards."""
        assert self.screen is not None  # asked only when the game has a window
        xy = self.screen.wait_click()
        if xy is None:
            raise Abandoned("The window was closed.")
        frame = self.match.render()
        rules = self.match.rules
        position = position_at(frame, rules.shape, rules.num_cards, self.match.table_shape, *xy)
        if position is None:
            self.say("That click is not on a card.")
        return position

    def check_legal(self, position: int) -> bool:
        """Whether the person may flip ``position``; says why not otherwise."""
        observation, mask = self.match.observe()
        if mask[position]:
            return True
        name = self.coordinate(position)
        if observation["removed"][position]:
            self.say(f"{name} has already been captured: pick a card that is still on the table.")
        else:
            self.say(f"{name} is already face up: pick a different card to go with it.")
        return False

    # -- messages -------------------------------------------------------------------------
    def coordinate(self, position: int) -> str:
        return coordinate(position, self.match.rules.shape[1])

    def introduction(self) -> str:
        rules = self.match.rules
        seats = ", ".join(f"{name} (seat {i})" for i, name in enumerate(self.names))
        return (
            f"Concentration: {rules.num_cards} cards in a {rules.shape[0]} x {rules.shape[1]} layout, "
            f"matching rule {rules.matching!r}, turn policy {rules.turn_policy!r}.\n"
            f"Players: {seats}.\n{HELP}"
        )

    def describe(self, flip: PlayedFlip) -> str:
        """One line about a flip, naming both cards of the turn when it ends."""
        who = self.names[flip.seat]
        where = f"{self.coordinate(flip.position)} ({flip.card})"
        if not flip.legal:
            self.first_flip = None
            return f"{who} flipped {where}, which is not a legal flip: the turn ends."
        if not flip.ends_turn:
            self.first_flip = flip
            return f"{who} flipped {where}."
        first = self.first_flip
        assert first is not None  # a legal flip that ends a turn is its second: the first was kept
        self.first_flip = None
        pair = f"{self.coordinate(first.position)} ({first.card}) and {where}"
        if flip.matched:
            return f"{who} flipped {pair}: a pair!"
        return f"{who} flipped {pair}: no pair."

    def end_screen(self) -> str:
        result = self.match.result()
        lines = ["", "=== Game over ===" if self.match.over else "=== Scores so far ==="]
        if self.match.solitaire:
            lines.append(f"You {result.summary}.")
            return "\n".join(lines)
        width = max(map(len, self.names))
        for seat, (name, score) in enumerate(zip(self.names, result.scores)):
            lines.append(f"  {name:<{width}} {score:>3}{'  winner' if seat in result.winners else ''}")
        if self.match.over:
            winners = [self.names[seat] for seat in result.winners]
            tie = " (a tie)" if len(winners) > 1 else ""
            lines.append(f"Winner{'s' if len(winners) > 1 else ''}: {' and '.join(winners)}{tie}.")
        return "\n".join(lines)


def bot_name(spec: str) -> str:
    """A short display name for a bot spec (a model file's stem, else the baseline's name)."""
    return Path(spec).stem if is_model_path(spec) else spec


def check_display() -> None:
    """``ValueError`` when a window cannot open: on Linux and the BSDs SDL needs an X11 or
    Wayland display (or a driver named in ``SDL_VIDEODRIVER``); without one it waits forever."""
    if sys.platform in ("win32", "darwin"):
        return
    if not any(os.environ.get(name) for name in DISPLAY_VARIABLES):
        raise ValueError(
            f"--window: there is no display ({', '.join(DISPLAY_VARIABLES)} are unset); play in the terminal "
            "without --window, or set SDL_VIDEODRIVER to a video driver that works here"
        )


def main(argv: list[str] | None = None) -> int:
    """Run ``concentration-play``; the exit status."""
    try:
        return play(parse_args(argv))
    except BrokenPipeError:
        # The reader of our output has gone (``| head``): leave without writing more, and
        # point stdout at nothing so that the interpreter's final flush cannot fail either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ABANDONED


def play(args: argparse.Namespace) -> int:
    """One game as the parsed arguments describe it."""
    num_players = 1 + len(args.opponents)
    screen = None
    try:
        if not 0 <= args.seat < num_players:
            raise ValueError(f"--seat {args.seat}: allowed 0..{num_players - 1} with {len(args.opponents)} opponent(s)")
        check_int("--seed", args.seed, 0, SEED_RANGE - 1, optional=True, allowed=f"an int from 0 to {SEED_RANGE - 1}")
        if args.delay is not None:
            check_number("--delay", args.delay, 0, MAX_DELAY_S)
        rules = build_rules(args.rules, args.set, num_players)
        bots = [resolve_policy(spec, rules) for spec in args.opponents]
        if args.window:
            screen = Screen(ConcentrationEnv.metadata["render_fps"])  # needs pygame; opens on first show
            check_display()
        match = SeatedGame(
            rules,
            "rgb_array" if args.window else "ansi",
            table_shape=args.table_shape,
            observation_mode=args.observation_mode,
            seed=args.seed,
        )
        seed = (
            args.seed if args.seed is not None else int(cast(int, np.random.SeedSequence().entropy) % SEED_RANGE)
        )  # fresh entropy is one int
        for seat, bot in enumerate(bots):
            bot.reset(seed=seed + seat)
    except (ValueError, DependencyNotInstalled) as error:
        print(f"concentration-play: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # while loading bots or opening the window
        print("concentration-play: interrupted while starting", file=sys.stderr)
        return EXIT_INTERRUPTED
    names = [HUMAN if seat == args.seat else "" for seat in range(num_players)]
    for seat, spec in zip([s for s in range(num_players) if s != args.seat], args.opponents):
        names[seat] = f"player_{seat} ({bot_name(spec)})"
    delay = args.delay if args.delay is not None else (BOT_DELAY_TTY if sys.stdin.isatty() or args.window else 0.0)
    game = TerminalGame(match, args.seat, bots, names, delay, screen)
    try:
        return game.run()
    except KeyboardInterrupt:  # during a bot's move or drawing: leave quietly
        print("\nInterrupted. The game is abandoned.")
        return EXIT_ABANDONED
    finally:
        match.close()
        if screen is not None:
            screen.close()


if __name__ == "__main__":
    sys.exit(main())
