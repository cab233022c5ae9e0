"""Fast animation frames (plot.frames), the GIF/MP4 writer and the run command's options."""

import json
import shutil

import numpy as np
import pytest

import contextsteer as cs
from contextsteer import cli, plot, video


def _racetrack_recording(agents=3, steps=60, records=10):
    sim = cs.scenarios.get("racetrack")(agents=agents, seed=1)
    rec = cs.run_simulation(sim, steps, dt=1 / 30, records=records, maps=True).history
    return sim, rec


def test_frames_have_the_asked_size_and_change_between_frames():
    sim, rec = _racetrack_recording()
    out = plot.frames(sim, history=rec, size=800, dt=1 / 30, title="race", trail=True)
    assert out.size[0] == 800 and out.size[1] % 2 == 0 and out.count == len(rec.steps)
    images = list(out.images)
    assert len(images) == out.count
    assert all(im.shape == (out.size[1], out.size[0], 3) and im.dtype == np.uint8 for im in images)
    assert np.any(images[0] != images[-1])  # the cars moved
    # (width, height) is honoured, rounded up to even numbers for video encoders.
    out = plot.frames(sim, history=rec, size=(301, 201), rays=False)
    assert out.size == (302, 202) and next(iter(out.images)).shape == (202, 302, 3)


def test_frame_inches_give_the_pixels_under_truncating_and_rounding_matplotlib():
    # matplotlib before 3.11 takes int(figsize·dpi), later versions round: the figure size
    # must give the asked pixels either way (2.3 in · 100 dpi was 229 rows before 3.11).
    from contextsteer.plot.animation import _figsize

    for dpi in (72, 96.5, 100, 120, 300):
        for px in range(16, 1001, 2):
            w, h = _figsize(px, px + 2, dpi)
            assert int(w * dpi) == round(w * dpi) == px, (px, dpi)
            assert int(h * dpi) == round(h * dpi) == px + 2, (px, dpi)


def test_frames_match_a_full_redraw_of_the_same_artists():
    """Blitting draws the agents where a plain scene draws them: the agents' colours
    appear at the projected positions."""
    sim, rec = _racetrack_recording(agents=1, steps=30, records=2)
    out = plot.frames(sim, history=rec, size=400, rays=False)
    im = list(out.images)[-1]
    ax = out.figure.axes[0]
    x, y = ax.transData.transform(rec.positions[-1, 0])
    row, col = out.size[1] - int(round(y)), int(round(x))
    patch = im[row - 1 : row + 2, col - 1 : col + 2].reshape(-1, 3).astype(int)
    blue = np.array([31, 119, 180])  # tab10 colour 0
    assert np.abs(patch - blue).sum(axis=1).min() < 40


def test_frames_refuse_bad_input():
    sim, rec = _racetrack_recording(agents=1, steps=10, records=2)
    with pytest.raises(ValueError, match="size"):
        plot.frames(sim, history=rec, size=4)
    with pytest.raises(ValueError, match="dpi"):
        plot.frames(sim, history=rec, dpi=0)
    with pytest.raises(ValueError, match="positions of shape"):
        plot.frames(history=plot.Recording(None, np.zeros((3, 2)), None, None, None))
    with pytest.raises(ValueError, match="trail"):
        plot.frames(sim, history=rec, trail=np.zeros((5, 7, 2)))


def test_video_write_gif_and_errors(tmp_path):
    from PIL import Image

    images = [np.full((20, 30, 3), v, np.uint8) for v in (0, 100, 200)]
    path = video.write(images, tmp_path / "a.gif", fps=5)
    with Image.open(path) as gif:
        assert gif.n_frames == 3 and gif.size == (30, 20)
    with pytest.raises(ValueError, match="format must be one of gif, mp4"):
        video.write(images, tmp_path / "a.avi")
    with pytest.raises(ValueError, match="no frames"):
        video.write([], tmp_path / "b.gif")
    for bad in (np.array(5), np.zeros((3, 4))):  # len() of a 0-d array raised a bare TypeError
        with pytest.raises(TypeError, match=r"write: images must be .* got an array of shape"):
            video.write(bad, tmp_path / "d.gif")
    with pytest.raises(ValueError, match="fps"):
        video.write(images, tmp_path / "c.gif", fps=0)


def _gif_delays(path):
    """The frame delays (centiseconds) stored in a GIF's graphic control extensions, read
    from the bytes: block 0x21 0xF9, size 4, packed byte, then the 16-bit delay."""
    import re

    raw = path.read_bytes()
    return [
        int.from_bytes(m.group(1), "little")
        for m in re.finditer(rb"\x21\xf9\x04.(..)..", raw, re.S)
    ]


@pytest.mark.parametrize(
    "fps, delay",
    # 100 / fps centiseconds, rounded: 15 fps -> 6.67 -> 7; 60 fps -> 1.67 -> 2 (plays at
    # 50 fps); 0.002 fps -> 50000 cs (the old milliseconds-then-truncated delay was 6 and 1
    # cs, and 1 cs plays at 10 fps).
    [(15, 7), (30, 3), (50, 2), (60, 2), (0.002, 50000)],
)
def test_gif_frame_delay_is_whole_centiseconds(tmp_path, fps, delay):
    images = [np.full((20, 30, 3), v, np.uint8) for v in (0, 100, 200)]
    path = video.write(images, tmp_path / "a.gif", fps=fps)
    assert _gif_delays(path) == [delay] * 3


@pytest.mark.parametrize("fps", [67, 120, 1000, 0.001, np.inf, np.nan])
def test_gif_refuses_an_fps_it_cannot_store(tmp_path, fps):
    # 100 / 67 rounds to 1 cs (viewers play 0 and 1 cs at 10 fps); 100 / 0.001 = 100000 cs
    # overflows the 16-bit delay.
    images = [np.zeros((20, 30, 3), np.uint8)] * 2
    with pytest.raises(ValueError, match="fps"):
        video.write(images, tmp_path / "a.gif", fps=fps)
    assert not (tmp_path / "a.gif").exists()


def test_gif_refuses_frames_of_different_sizes(tmp_path):
    images = [np.zeros((40, 60, 3), np.uint8), np.zeros((80, 30, 3), np.uint8)]
    with pytest.raises(ValueError, match="frames differ in size: 80x30 \\(HxW\\) vs 40x60"):
        video.write(images, tmp_path / "a.gif")


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg is not on the PATH")
def test_video_write_mp4(tmp_path):
    images = [np.full((20, 30, 3), v, np.uint8) for v in range(0, 250, 25)]
    path = video.write(images, tmp_path / "a.mp4", fps=10)
    assert path.stat().st_size > 0 and b"ftyp" in path.read_bytes()[:32]
    with pytest.raises(ValueError, match="even"):
        video.write([np.zeros((21, 30, 3), np.uint8)], tmp_path / "b.mp4")


def test_video_mp4_without_ffmpeg(tmp_path, monkeypatch):
    monkeypatch.setattr(video.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="ffmpeg"):
        video.write([np.zeros((20, 30, 3), np.uint8)], tmp_path / "a.mp4")


def test_run_size_dpi_and_format_options(tmp_path, capsys, monkeypatch):
    from PIL import Image

    out = tmp_path / "o"
    assert (
        cli.main(
            [
                "run",
                "racetrack",
                "--agents",
                "3",
                "--steps",
                "30",
                "--frames",
                "3",
                "--size",
                "640x400",
                "--dpi",
                "80",
                "--fps",
                "10",
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    with Image.open(out / "animation.gif") as gif:
        assert gif.size == (640, 400) and gif.n_frames == 4
    assert json.loads((out / "metrics.json").read_text())["steps"] == 30
    # The default is at least 800 px wide.
    assert cli.build_parser().parse_args(["run"]).size >= 800
    for bad in (
        ["--size", "10"],
        ["--size", "axb"],
        ["--dpi", "0"],
        ["--format", "avi"],
        ["--fps", "-1"],
    ):
        assert cli.main(["run", "racetrack", *bad, "--quiet", "--out", str(out)]) == 2
    monkeypatch.setattr(video.shutil, "which", lambda name: None)
    assert (
        cli.main(
            ["run", "racetrack", "--format", "mp4", "--steps", "5", "--quiet", "--out", str(out)]
        )
        == 2
    )
    assert "ffmpeg" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg is not on the PATH")
def test_run_writes_mp4(tmp_path):
    out = tmp_path / "o"
    assert (
        cli.main(
            [
                "run",
                "racetrack",
                "--agents",
                "3",
                "--steps",
                "30",
                "--frames",
                "3",
                "--format",
                "mp4",
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert (out / "animation.mp4").stat().st_size > 0
    assert not (out / "animation.gif").exists()


@pytest.mark.parametrize(
    "frame",
    [
        np.zeros((8, 10, 3), np.float64),
        np.zeros((8, 10, 3), np.uint16),
        np.zeros((8, 10, 4), np.uint8),
        np.zeros((8, 10), np.uint8),
    ],
)
@pytest.mark.parametrize("fmt", ["gif", "mp4"])
def test_video_write_refuses_frames_that_are_not_rgb_uint8(tmp_path, monkeypatch, frame, fmt):
    """Both formats refuse alike, naming the frame and what was expected (GIF gave Pillow's
    'Cannot handle this data type', MP4 took RGBA and grayscale)."""
    monkeypatch.setattr(video, "ffmpeg", lambda: "/bin/false")  # never reached
    with pytest.raises(ValueError, match=r"frame 0: expected an RGB image of shape \(H, W, 3\)"):
        video.write([frame], tmp_path / f"a.{fmt}", format=fmt)


def test_video_write_format_wins_over_the_suffix(tmp_path):
    from PIL import Image

    images = [np.full((8, 10, 3), v, np.uint8) for v in (0, 255)]
    path = video.write(images, tmp_path / "clip.mp4", format="gif")
    with Image.open(path) as im:
        assert im.format == "GIF" and im.n_frames == 2


def test_animations_draw_each_frame_with_the_radii_of_the_agents_then():
    """A slot filled or revived after recording started is drawn at its own agent's radius
    (History.frame_radii), not the radius the slot had at the first frame (0, or the
    previous occupant's)."""
    agents = cs.Agents(4, slots=8)
    agents.add([[0, 0], [0, 3]], radius=0.5, max_speed=1, velocity=[1, 0])
    sim = cs.Simulation(None, agents, [cs.Forward()], motion=cs.Lerp(steer_force=1))
    history = sim.record()
    sim.step(0.1, steps=3)
    agents.remove([0])
    sim.step(0.1, steps=3)
    agents.add([[5, 1], [2, 1.5]], radius=1.0, max_speed=1)  # revives slot 0, fills slot 2
    sim.step(0.1, steps=3)
    np.testing.assert_array_equal(history.frame_radii[0], [0.5, 0.5, 0, 0])
    np.testing.assert_array_equal(history.frame_radii[-1], np.asarray(agents.radius))
    assert history.radii.tolist() == [0.5, 0.5, 0, 0]  # the first frame's, as documented
    last = len(history) - 1
    anim = cs.plot.animate(history, rays=False, trail=False)
    anim._init_draw()  # drawn (an animation never drawn warns when collected)
    bodies = [a for a in anim._func(last) if a.get_label() == "agents"][0]
    drawn = [float(np.ptp(p.vertices[:, 0]) / 2) for p in bodies.get_paths()]
    np.testing.assert_allclose(drawn, [1.0, 0.5, 1.0], rtol=1e-6)
    rendered = plot.frames(history=history, size=200, rays=False)
    images = list(rendered.images)
    ax = rendered.figure.axes[0]
    colour = np.array(plt_colour(2)) * 255
    x, y = ax.transData.transform(history.positions[-1, 2] + [0.0, -0.5])  # inside r = 1
    pixel = images[-1][int(round(images[-1].shape[0] - y)), int(round(x))]
    np.testing.assert_allclose(pixel, colour, atol=2)


def plt_colour(i):
    import matplotlib.pyplot as plt

    return plt.get_cmap("tab10")(i)[:3]


@pytest.mark.parametrize(
    "kw, error, match",
    [
        ({"size": 300.0}, TypeError, "size: expected an int width or a"),
        ({"size": (300,)}, TypeError, "size: expected an int width or a"),
        ({"size": 10**6}, ValueError, "size: expected 16 to 8192 pixels a side"),
        ({"dpi": float("inf")}, ValueError, r"dpi: expected 10 to 1000"),
        ({"dpi": "100"}, TypeError, "dpi: expected a number"),
        # FreeType refused the caption's font at dpi 1-3.3; 1e6 ran out of memory
        # (fuzz round 20).
        ({"dpi": 2}, ValueError, r"dpi: expected 10 to 1000"),
        ({"dpi": 1e6}, ValueError, r"dpi: expected 10 to 1000"),
        ({"trail_samples": 0}, ValueError, "trail_samples: expected a whole number >= 1"),
        ({"trail_samples": "3"}, ValueError, "trail_samples: expected a whole number >= 1"),
        ({"trail_samples": float("nan")}, ValueError, "trail_samples: expected a whole"),
        # A ray of -5 was drawn backwards, NaN ones not at all (rays() refused both).
        ({"look_ahead": -5.0}, ValueError, "look_ahead: must be >= 0"),
        ({"look_ahead": [1.0, float("nan")]}, ValueError, "look_ahead: must be finite"),
    ],
)
def test_frames_check_size_and_dpi(kw, error, match):
    with pytest.raises(error, match=match):
        plot.frames(history=np.zeros((2, 2, 2)), **kw)


def test_an_animation_of_no_frames_is_refused_like_frames():
    with pytest.raises(ValueError, match="at least one frame"):
        plot.animate(np.zeros((0, 2, 2)))


def test_a_gif_keeps_colours_seen_in_one_frame_only(tmp_path):
    """The palette came from the first, middle and last frames: an agent seen only in
    frame 6 came out grey, and squares seen only in frames 1 and 5 vanished (Pillow then
    merged the frames; fuzz round 13). Every frame's own colours are read back."""
    from PIL import Image

    frames = []
    for i in range(9):
        im = np.full((64, 80, 3), 255, np.uint8)
        im[10:20, 10:20] = (31, 119, 180)
        if i == 1:
            im[30:40, 30:40] = (0, 0, 255)
        if i == 5:
            im[40:50, 50:60] = (0, 160, 0)
        if i == 6:
            im[20:30, 60:70] = (140, 86, 75)
        im[50:55, i * 5 : i * 5 + 5] = (214, 39, 40)  # a walker: every frame differs
        frames.append(im)
    path = tmp_path / "x.gif"
    cs.video.write(frames, path, fps=10)
    back = []
    with Image.open(path) as gif:
        for k in range(gif.n_frames):
            gif.seek(k)
            back.append(np.asarray(gif.convert("RGB")))
    assert len(back) == 9
    for got, want in zip(back, frames, strict=True):
        np.testing.assert_array_equal(got, want)
