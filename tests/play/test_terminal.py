"""The terminal game, driven end to end by a scripted player through a pipe."""

import io
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from concentration_env import Rules
from concentration_env.envs.solitaire import ConcentrationEnv
from concentration_env.play.seated import SeatedGame
from concentration_env.play.terminal import EXIT_ABANDONED, EXIT_FINISHED, EXIT_USAGE, TerminalGame, main
from concentration_env.render.coordinates import coordinate, parse_coordinate
from concentration_env.render.font import LINE_H
from concentration_env.render.frame import STATUS_LINES
from concentration_env.render.shapes import GAP, table_geometry
from concentration_env.render.sprites import CARD_H, CARD_W
from concentration_env.render.window import Screen
from tests.helpers.tables import RandomPolicy

ROOT = Path(__file__).resolve().parents[2]
PLAY = [sys.executable, "-m", "concentration_env.play.terminal"]
WAIT_S = 60  # generous: two slow cores shared by many jobs


def require_baselines():
    """Skip unless bots can be made by name (a bare ``baselines`` folder is not enough)."""
    baselines = pytest.importorskip("baselines", reason="bots by name come from the baselines package")
    if not hasattr(baselines, "make_policy"):
        pytest.skip("bots by name come from the baselines package, which is not installed")


def run_play(args, stdin_text):
    """Run the game with piped input; (exit status, everything it printed)."""
    done = subprocess.run(PLAY + args, input=stdin_text, capture_output=True, text=True, cwd=ROOT, timeout=WAIT_S)
    return done.returncode, done.stdout + done.stderr


def pairs_of(rules, seed):
    """The dealt layout's pairs as grid coordinates, found with the env's own match table."""
    env = ConcentrationEnv(rules=rules)
    env.reset(seed=seed)
    faces, match = env._state.faces[0], env.game.match
    cols, left, pairs = rules.shape[1], list(range(rules.num_cards)), []
    while left:
        a = left.pop(0)
        b = next(p for p in left if match[faces[a], faces[p]])
        left.remove(b)
        pairs.append((coordinate(a, cols), coordinate(b, cols)))
    return pairs


def test_solitaire_played_to_the_end_with_every_kind_of_bad_input():
    rules = Rules.from_preset("toddler")
    pairs = pairs_of(rules, seed=5)
    (a1, a2), (b1, b2), (c1, c2) = pairs[:3]
    script = [
        "zz!",
        "",
        "Z9",
        "A77",
        "help",
        "board",  # garbage, nothing, unknown coordinates, commands
        a1.lower(),
        a1,  # the card already face up this turn
        a2,  # a pair: captured
        a2,  # a captured card
        b1,
        c1,  # a miss
    ]
    script += [card for pair in [(b1, b2), (c1, c2)] + pairs[3:] for card in pair]
    status, out = run_play(["--rules", "toddler", "--seed", "5"], "\n".join(script) + "\n")
    assert status == EXIT_FINISHED, out
    assert "Traceback" not in out
    for message in [
        "Not understood: 'zz!' is not a card coordinate; expected a row letter A..D then a column number 1..5",
        "Please enter a card",
        "Not understood: Z9 is not on the table",
        "Not understood: A77 is not on the table",
        "Commands: 'board' shows the table again",
        f"{a1} is already face up: pick a different card",
        f"{a2} has already been captured",
        f"you flipped {b1} (",
        ": no pair.",
        ": a pair!",
        "=== Game over ===",
        f"You cleared the table in {len(pairs) + 1} turns with 1 unsuccessful pairs.",
    ]:
        assert message in out, message
    # the table is drawn at the start, after every flip, and on 'board'
    flips = 2 * len(pairs) + 2
    assert out.count("     1   2   3   4   5\n") == 1 + flips + 1


def test_end_of_input_abandons_the_game_cleanly():
    status, out = run_play(["--rules", "toddler", "--seed", "1"], "A1\n")
    assert status == EXIT_ABANDONED and "Traceback" not in out
    assert "End of input. The game is abandoned." in out and "=== Scores so far ===" in out


def test_quit_command():
    status, out = run_play(["--seed", "1"], "b7\nquit\n")
    assert status == EXIT_ABANDONED and "You quit. The game is abandoned." in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rules", "poker"], "unknown preset 'poker'"),
        (["--set", "jokers"], "expected FIELD=VALUE"),
        (["--set", "packs=3"], "packs=3"),
        (["--set", "num_players=3"], "1 + the number of --opponents"),
        (["--set", "layout=[4,"], "not valid YAML"),
        (["--opponents", "nowhere/model.zip"], "no saved model at 'nowhere/model.zip'"),
        (["--seat", "1"], "--seat 1: allowed 0..0"),
        (["--seed", "-1"], "invalid --seed=-1: below the minimum 0"),
        (["--set", f"max_mismatches={2**63}"], "max_mismatches=9223372036854775808: above the maximum"),
        (["--set", "pairs=1000000", "--set", "deck=pictures"], "pairs=1000000: above the maximum"),
        (["--seed", str(2**40)], "invalid --seed=1099511627776: above the maximum"),
        (["--delay", "-1"], "invalid --delay=-1.0: below the minimum 0"),
        (["--delay", "nan"], "invalid --delay=nan: not a number"),
        (["--delay", "inf"], "invalid --delay=inf: above the maximum"),
        (["--set", "max_mismatches=2**63"], "max_mismatches"),
    ],
)
def test_bad_arguments_get_one_clear_error(args, message, capsys):
    assert main(args) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_window_without_a_display_says_so(monkeypatch, capsys):
    pytest.importorskip("pygame", reason="the render extra (pygame) is not installed")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    assert main(["--window"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--window: there is no display" in err and err.count("\n") == 1


def test_ctrl_c_while_starting_is_one_line(monkeypatch, capsys):
    def interrupted(spec, rules):
        raise KeyboardInterrupt

    monkeypatch.setattr("concentration_env.play.terminal.resolve_policy", interrupted)
    assert main(["--opponents", "greedy"]) == 130
    assert capsys.readouterr().err == "concentration-play: interrupted while starting\n"


def test_a_closed_output_pipe_ends_the_game_quietly():
    reader = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    game = subprocess.run(
        PLAY + ["--rules", "toddler"],
        input=b"A1\n" * 2000,
        stdout=reader.stdin,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        timeout=WAIT_S,
    )
    reader.stdin.close()
    reader.wait(timeout=WAIT_S)
    assert game.returncode == EXIT_ABANDONED and game.stderr == b""


def test_an_overlong_coordinate_is_refused_before_it_is_read():
    with pytest.raises(ValueError, match=r"\(200000 characters\) is not a card coordinate; expected a row letter"):
        parse_coordinate("A" * 200_000, (4, 13), 52)


def test_window_without_pygame_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pygame", None)  # makes `import pygame` fail
    assert main(["--window"]) == EXIT_USAGE
    assert "concentration-env[render]" in capsys.readouterr().err


def test_a_saved_model_that_cannot_be_loaded_is_a_clear_error(tmp_path, capsys):
    model = tmp_path / "broken.zip"
    model.write_bytes(b"not a model")
    assert main(["--opponents", str(model)]) == EXIT_USAGE
    assert "broken.zip" in capsys.readouterr().err


class Interactive:
    """The game in a child process, read as it prints, so signals can be sent at a prompt."""

    def __init__(self, args):
        self.proc = subprocess.Popen(
            PLAY + args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # CI may start us ignoring it
        )
        self.seen = b""

    def read_until(self, text):
        deadline = time.monotonic() + WAIT_S
        while text.encode() not in self.seen:
            assert time.monotonic() < deadline, f"no {text!r} in:\n{self.seen.decode()}"
            ready, _, _ = select.select([self.proc.stdout], [], [], 1)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, f"the game ended before {text!r}:\n{self.seen.decode()}"
                self.seen += chunk
        before, _, self.seen = self.seen.partition(text.encode())
        return before.decode()

    def send(self, line):
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()


def test_ctrl_c_at_the_prompt_asks_again_and_twice_leaves():
    game = Interactive(["--rules", "toddler", "--seed", "3"])
    try:
        game.read_until("flip your first card")
        game.proc.send_signal(signal.SIGINT)
        game.read_until("Interrupted. Type 'quit' to leave the game (or press Ctrl-C again), or pick a card.")
        game.read_until("flip your first card")
        game.send("A1")
        game.read_until("you flipped A1")
        game.read_until("flip your second card")
        game.proc.send_signal(signal.SIGINT)
        game.read_until("flip your second card")
        game.proc.send_signal(signal.SIGINT)
        rest = game.read_until("Interrupted twice. The game is abandoned.")
        assert game.proc.wait(timeout=WAIT_S) == EXIT_ABANDONED
        assert "Traceback" not in rest + game.seen.decode()
    finally:
        game.proc.kill()
        game.proc.wait()


def test_window_play_with_mouse_clicks(monkeypatch):
    pytest.importorskip("pygame", reason="the render extra (pygame) is not installed")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    rules = Rules.from_preset("toddler")
    (a1, a2), _ = pairs_of(rules, seed=4)[:2]
    match = SeatedGame(rules, "rgb_array", table_shape="diamond", seed=4)
    frame = match.render()
    geometry = table_geometry(rules.shape, rules.num_cards, "diamond")
    left, top = (frame.shape[1] - geometry.width) // 2, STATUS_LINES * LINE_H + GAP

    def centre(name):
        x, y = geometry.xy[parse_coordinate(name, rules.shape, rules.num_cards)]
        return left + int(x) + CARD_W // 2, top + int(y) + CARD_H // 2

    clicks = [centre(a1), (1, 1), centre(a1), centre(a2), centre(a2), None]  # None: the window closes
    screen = Screen(fps=1000)
    monkeypatch.setattr(screen, "wait_click", lambda: clicks.pop(0))
    out = io.StringIO()
    status = TerminalGame(match, 0, [], ["you"], 0.0, screen, out).run()
    screen.close()
    text = out.getvalue()
    assert status == EXIT_ABANDONED and not clicks
    assert "That click is not on a card." in text and f"{a1} is already face up" in text
    assert f"{a2} has already been captured" in text and "The window was closed." in text
    assert match.scores == (1,)
    assert np.array_equal(frame.shape, match.render().shape)


def test_against_bots_to_the_end_screen(monkeypatch):
    """Seat 1 of 3, typing every coordinate in turn, each twice: captured and face-up ones
    are refused with a message, and the game runs to its end screen."""
    rules = Rules.from_preset("toddler", num_players=3)
    cycle = [coordinate(i, rules.shape[1]) for i in range(rules.num_cards) for _ in range(2)]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(cycle * 200) + "\n"))
    match = SeatedGame(rules, "ansi", seed=6)
    names = ["player_0 (random)", "you", "player_2 (random)"]
    out = io.StringIO()
    bots = [RandomPolicy(), RandomPolicy()]
    for seed, bot in enumerate(bots):
        bot.reset(seed=seed)
    status = TerminalGame(match, 1, bots, names, 0.0, None, out).run()
    text = out.getvalue()
    assert status == EXIT_FINISHED and match.over
    assert "player_0 (random) flipped" in text and "player_2 (random) flipped" in text and "you flipped" in text
    assert "has already been captured" in text and "is already face up" in text
    scores = match.result().scores
    assert sum(scores) == rules.num_pairs
    best = [names[seat] for seat in range(3) if scores[seat] == max(scores)]
    assert "=== Game over ===" in text and f"Winner{'s' if len(best) > 1 else ''}: {' and '.join(best)}" in text
    assert "turn " in text and "player_1=" in text  # the multi-player env's own text board


def test_play_against_named_baselines_through_a_pipe():
    require_baselines()
    rules = Rules.from_preset("toddler", num_players=3)
    cycle = [coordinate(i, rules.shape[1]) for i in range(rules.num_cards)]
    status, out = run_play(
        ["--rules", "toddler", "--opponents", "greedy", "random", "--seat", "2", "--seed", "9"], "\n".join(cycle * 60)
    )
    assert status == EXIT_FINISHED and "Traceback" not in out, out
    assert "player_0 (greedy)" in out and "player_1 (random)" in out and "=== Game over ===" in out


def test_record_script_writes_a_gif(tmp_path):
    require_baselines()
    pil = pytest.importorskip("PIL.Image", reason="Pillow (render extra) is not installed")
    out = tmp_path / "duo.gif"
    done = subprocess.run(
        [
            sys.executable,
            "scripts/record.py",
            "--rules",
            "toddler",
            "--policies",
            "greedy",
            "random",
            "--table-shape",
            "scatter",
            "--seed",
            "1",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=WAIT_S,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    frames = int(done.stdout.split(": ")[1].split()[0])
    with pil.open(out) as gif:
        assert gif.n_frames == frames > 20
