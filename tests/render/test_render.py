"""Pictures of the table: rgb_array frames, card drawing, table shapes, the window, GIFs."""

import itertools
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import concentration_env  # noqa: F401  (registers the ids)
from concentration_env import Card, Rules
from concentration_env.envs.solitaire import ConcentrationEnv
from concentration_env.play.gif import record_gif
from concentration_env.play.seated import SeatedGame, play_out
from concentration_env.render.coordinates import coordinate, parse_coordinate
from concentration_env.render.font import LINE_H
from concentration_env.render.frame import FELT, HIGHLIGHT, STATUS_LINES, Table, draw_status, draw_table, render_tables
from concentration_env.render.shapes import GAP, TABLE_SHAPES, TAG_H, table_geometry
from concentration_env.render.sprites import (
    BACK_COLOURS,
    BLACK,
    CARD_FACE,
    CARD_H,
    CARD_W,
    COURT_PANEL,
    JOKER_INK,
    RED,
    back_sprite,
    card_mask,
    face_sprite,
)
from tests.helpers.tables import RandomPolicy


def seeded_random_policy(seed=0):
    policy = RandomPolicy()
    policy.reset(seed=seed)
    return policy


def card_region(env, frame, position):
    """The pixels of the card at ``position`` in a one-table frame."""
    rules = env.unwrapped.rules
    geometry = table_geometry(rules.shape, rules.num_cards, env.unwrapped.table_shape)
    left = (frame.shape[1] - geometry.width) // 2
    top = STATUS_LINES * LINE_H + GAP
    x, y = geometry.xy[position]
    return frame[top + y : top + y + CARD_H, left + x : left + x + CARD_W]


def colour_in(pixels, colour):
    return bool((pixels == np.array(colour, dtype=np.uint8)).all(axis=-1).any())


def test_rgb_array_shape_dtype_and_determinism():
    frames = []
    for _ in range(2):
        env = gym.make("Concentration-v0", render_mode="rgb_array")
        env.reset(seed=7)
        for action in (0, 1, 2):
            env.step(action)
        frames.append(env.render())
    frame = frames[0]
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8
    assert np.array_equal(frames[0], frames[1])
    assert np.array_equal(frame, env.render())  # rendering does not change the state


@pytest.mark.parametrize("table_shape", ["grid", "scatter"])
def test_every_frame_of_a_game_has_one_size(table_shape):
    """Video writers need it: the text (misses 9 -> 10) never resizes the frame."""
    match = SeatedGame(Rules.from_preset("toddler"), "rgb_array", table_shape=table_shape, seed=2)
    shapes = {match.render().shape}
    play_out(match, [seeded_random_policy()], on_flip=lambda flip: shapes.add(match.render().shape))
    assert match.over and len(shapes) == 1 and match.result().summary.startswith("cleared")


def test_face_up_card_differs_from_face_down_and_captured_cards_are_gone():
    env = ConcentrationEnv(render_mode="rgb_array", ranks=2)
    env.reset(seed=0)
    before = env.render()
    env.step(0)
    after = env.render()
    down, up = card_region(env, before, 0), card_region(env, after, 0)
    assert not np.array_equal(down, up)
    assert np.array_equal(card_region(env, before, 1), card_region(env, after, 1))
    # capture a pair: its cards leave nothing but felt behind
    faces, game = env.unwrapped._state.faces[0], env.unwrapped.game
    partner = next(j for j in range(1, 8) if game.match[faces[0], faces[j]])
    env.step(partner)
    captured = env.render()
    for position in (0, partner):
        region = card_region(env, captured, position)
        assert (region == np.array(FELT, dtype=np.uint8)).all()


@pytest.mark.parametrize(
    "card, ink, other",
    [
        (Card(5, "H"), RED, BLACK),
        (Card(10, "D"), RED, BLACK),
        (Card(1, "S"), BLACK, RED),
        (Card(13, "C"), BLACK, RED),
        (Card(0, "J"), JOKER_INK, RED),
    ],
)
def test_cards_carry_rank_and_suit_in_their_colour(card, ink, other):
    sprite = face_sprite(card)
    assert colour_in(sprite, ink) and not colour_in(sprite, other)


def test_court_jokers_pictures_and_backs_look_different():
    assert colour_in(face_sprite(Card(12, "H")), COURT_PANEL)
    assert not colour_in(face_sprite(Card(9, "H")), COURT_PANEL)
    pictures = [face_sprite(Card(i, "P")) for i in range(1, 70)]
    assert all(not np.array_equal(a, b) for a, b in itertools.combinations(pictures, 2))
    faces = [face_sprite(card) for card in Rules(jokers=True).faces]
    assert all(not np.array_equal(a, b) for a, b in itertools.combinations(faces, 2))
    assert not np.array_equal(back_sprite(0), back_sprite(1))


def test_checkerboard_draws_both_back_designs():
    env = ConcentrationEnv(rules="checkerboard", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    backs = env.unwrapped.game.backs
    zero, one = int(np.flatnonzero(backs == 0)[0]), int(np.flatnonzero(backs == 1)[0])
    mask = card_mask()
    assert np.array_equal(card_region(env, frame, zero)[mask], back_sprite(0)[mask])
    assert np.array_equal(card_region(env, frame, one)[mask], back_sprite(1)[mask])
    assert colour_in(back_sprite(1), BACK_COLOURS[1][0]) and not colour_in(back_sprite(1), BACK_COLOURS[0][0])


@pytest.mark.parametrize("table_shape", TABLE_SHAPES)
@pytest.mark.parametrize("num_cards, shape", [(2, (1, 2)), (20, (4, 5)), (36, (6, 6)), (52, (4, 13)), (108, (9, 12))])
def test_every_table_shape_places_cards_without_overlap(table_shape, num_cards, shape):
    geometry = table_geometry(shape, num_cards, table_shape)
    x, y = geometry.xy[:, 0], geometry.xy[:, 1]
    # a card plus its coordinate tag, when the shape has tags
    height = CARD_H + (TAG_H if geometry.tags else 0)
    apart = (np.abs(x[:, None] - x[None]) >= CARD_W) | (np.abs(y[:, None] - y[None]) >= height)
    np.fill_diagonal(apart, True)
    assert apart.all()
    assert (x >= 0).all() and (y >= 0).all()
    assert (x + CARD_W <= geometry.width).all() and (y + height <= geometry.height).all()
    assert table_geometry.__wrapped__(shape, num_cards, table_shape).xy.tolist() == geometry.xy.tolist()


@pytest.mark.parametrize("table_shape", TABLE_SHAPES)
def test_table_shape_changes_the_picture_not_the_game(table_shape):
    grid = ConcentrationEnv(rules="jokers", render_mode="rgb_array")
    fancy = ConcentrationEnv(rules="jokers", render_mode="rgb_array", table_shape=table_shape)
    observations = [env.reset(seed=3)[0] for env in (grid, fancy)]
    for action in (5, 9, 5, 40):
        observations = [env.step(action)[0] for env in (grid, fancy)]
        assert all(np.array_equal(observations[0][k], observations[1][k]) for k in observations[0])
    frame = fancy.render()
    assert frame.dtype == np.uint8 and (table_shape == "grid") == (frame.shape == grid.render().shape)
    # every card on the table is drawn where the geometry says: a face-up one is highlighted
    face_up = int(np.flatnonzero(observations[1]["face_up"])[0])
    assert colour_in(card_region(fancy, frame, face_up), CARD_FACE)


def test_status_band_shows_scores_and_whose_turn():
    table = Table((1, 2), (Card(1, "S"), Card(1, "C")), (False, False), (False, False))
    scores = [("player_0", 3), ("player_1", 5)]
    first = render_tables([table], "turn 4", scores, to_move=0)
    second = render_tables([table], "turn 4", scores, to_move=1)
    band = slice(0, STATUS_LINES * LINE_H + GAP)
    assert colour_in(first[band], HIGHLIGHT) and not np.array_equal(first[band], second[band])
    assert not np.array_equal(first, render_tables([table], "turn 4", [("player_0", 4), ("player_1", 5)], 0))
    with pytest.raises(ValueError, match="2 lines"):
        render_tables([table], "one\ntwo", scores)


def test_coordinates_round_trip_and_bad_ones_are_named():
    shape, n = (9, 12), 108
    assert [parse_coordinate(coordinate(i, 12), shape, n) for i in range(n)] == list(range(n))
    assert parse_coordinate(" b 7 ", shape, n) == 18
    for text, why in [
        ("Z1", "not on the table"),
        ("A13", "not on the table"),
        ("A0", "not on the table"),
        ("7B", "not a card coordinate"),
        ("", "not a card coordinate"),
        ("ÄB1", "not a card"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_coordinate(text, shape, n)
    with pytest.raises(ValueError, match="F5 is not on the table"):  # a partial last row
        parse_coordinate("F5", (6, 7), 39)


def test_bad_render_settings_are_named():
    with pytest.raises(ValueError, match="table_shape='spiral'.*'circle'"):
        ConcentrationEnv(table_shape="spiral")
    with pytest.raises(ValueError, match="render_mode='opengl'.*rgb_array"):
        ConcentrationEnv(render_mode="opengl")


def test_check_env_with_rgb_array_rendering(monkeypatch):
    pytest.importorskip("pygame", reason="check_env also tries render_mode='human', which needs pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # the checker also tries the other render modes
    monkeypatch.setitem(ConcentrationEnv.metadata, "render_fps", 1000)
    check_env(gym.make("Concentration-Toddler-v0", render_mode="rgb_array").unwrapped)


def test_human_mode_shows_the_rgb_array_picture_in_a_window(monkeypatch):
    pygame = pytest.importorskip("pygame", reason="the render extra (pygame) is not installed")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setitem(ConcentrationEnv.metadata, "render_fps", 1000)
    human = ConcentrationEnv(render_mode="human", ranks=2)
    twin = ConcentrationEnv(render_mode="rgb_array", ranks=2)
    for env in (human, twin):
        env.reset(seed=0)
        env.step(0)
    assert human.render() is None
    shown = pygame.surfarray.array3d(pygame.display.get_surface()).transpose(1, 0, 2)
    assert np.array_equal(shown, twin.render())
    human.close()


def test_missing_pygame_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygame", None)  # makes `import pygame` fail
    with pytest.raises(gym.error.DependencyNotInstalled, match=r"concentration-env\[render\]"):
        ConcentrationEnv(render_mode="human")


def test_gif_of_a_game_has_every_frame(tmp_path):
    pil = pytest.importorskip("PIL.Image", reason="Pillow (render extra) is not installed")
    rules = Rules.from_preset("toddler")
    path = tmp_path / "game.gif"
    result, frames = record_gif(rules, [RandomPolicy()], path, seed=1, max_flips=12)
    with pil.open(path) as gif:
        assert gif.n_frames == frames == 13
        assert gif.size[::-1] == SeatedGame(rules, "rgb_array", seed=1).render().shape[:2]
        gif.seek(frames - 1)
        last = np.asarray(gif.convert("RGB"))
    # the GIF's last frame is the picture of the game after 12 flips (the palette is exact)
    match = SeatedGame(rules, "rgb_array", seed=1)
    play_out(match, [seeded_random_policy(1)], max_flips=12)
    assert np.array_equal(last, match.render())
    assert "pairs" in result.summary


def test_record_video_wrapper(tmp_path):
    pytest.importorskip("moviepy", reason="gymnasium's RecordVideo needs moviepy, which is not installed")
    env = gym.wrappers.RecordVideo(
        gym.make("Concentration-v0", ranks=2, render_mode="rgb_array"), str(tmp_path), episode_trigger=lambda e: True
    )
    obs, _ = env.reset(seed=0)
    done = False
    policy = seeded_random_policy()
    while not done:
        obs, _, terminated, truncated, _ = env.step(policy.act(obs, obs["action_mask"]))
        done = terminated or truncated
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 0


def test_multiplayer_picture_shows_scores_and_whose_turn():
    from concentration_env import concentration_v0

    frames = []
    for _ in range(2):
        env = concentration_v0.env(num_players=3, rules="toddler", render_mode="rgb_array", table_shape="circle")
        env.reset(seed=0)
        first = env.render()
        policy = seeded_random_policy()
        for _ in range(4):  # two turns of random legal flips
            observed = env.observe(env.agent_selection)
            env.step(policy.act(observed["observation"], observed["action_mask"]))
        frames.append(env.render())
    assert np.array_equal(frames[0], frames[1]) and frames[0].shape == first.shape
    band = first[: STATUS_LINES * LINE_H + GAP]
    expected = draw_status(first.shape[1], "turn 1", [("player_0", 0), ("player_1", 0), ("player_2", 0)], 0)
    assert np.array_equal(band, expected) and colour_in(band, HIGHLIGHT)


def test_duel_picture_shows_both_layouts():
    from concentration_env import duel_v0

    env = duel_v0.raw_env(render_mode="rgb_array")
    env.reset(seed=1)
    env.step(0)
    frame = env.render()
    one_side = draw_table(Table((4, 13), env.layout[0], [True] + [False] * 51, [False] * 52, None, "x"), "grid")
    assert frame.shape[0] == STATUS_LINES * LINE_H + GAP + 2 * one_side.shape[0]
    text_env = duel_v0.raw_env(render_mode="ansi")
    text_env.reset(seed=1)
    assert "player_1's layout" in text_env.render()


def test_versus_env_renders_pictures():
    env = gym.make("ConcentrationVs-v0", rules="toddler", opponents=seeded_random_policy(), render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3


def test_multiplayer_human_mode_shows_the_picture(monkeypatch):
    pygame = pytest.importorskip("pygame", reason="the render extra (pygame) is not installed")
    from concentration_env import concentration_v0

    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setitem(concentration_v0.raw_env.metadata, "render_fps", 1000)
    human = concentration_v0.raw_env(num_players=2, ranks=2, render_mode="human")
    twin = concentration_v0.raw_env(num_players=2, ranks=2, render_mode="rgb_array")
    for env in (human, twin):
        env.reset(seed=0)
        env.step(3)
    shown = pygame.surfarray.array3d(pygame.display.get_surface()).transpose(1, 0, 2)
    assert np.array_equal(shown, twin.render())
    human.close()
