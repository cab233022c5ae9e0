"""Encode rendered frames as an animated GIF (Pillow) or an MP4 (``ffmpeg`` on the PATH).

>>> import numpy as np, tempfile, os
>>> from contextsteer import video
>>> images = [np.full((40, 60, 3), v, np.uint8) for v in (0, 128, 255)]
>>> with tempfile.TemporaryDirectory() as d:
...     out = video.write(images, os.path.join(d, "run.gif"), fps=10)
...     out.read_bytes()[:6]
b'GIF89a'
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Sized
from pathlib import Path
from typing import Any

import numpy as np

from . import _checks

__all__ = ["FORMATS", "check_fps", "ffmpeg", "write"]

#: Animation formats :func:`write` knows, by file suffix.
FORMATS = ("gif", "mp4")

#: Frame delays a GIF can hold, in centiseconds: it stores a 16-bit delay in 1/100 s, and
#: viewers play a delay of 0 or 1 cs at 10 fps, so a GIF plays at most 50 fps.
GIF_DELAY_CS = (2, 65535)

#: Frame rates :func:`write` accepts for an MP4 (frames per second).
MP4_FPS = (0.01, 1000.0)


def _gif_delay(fps: float) -> int:
    """The GIF frame delay in centiseconds nearest to ``1 / fps``, or a ValueError when
    a GIF cannot store it (see :data:`GIF_DELAY_CS`)."""
    low, high = GIF_DELAY_CS
    cs = round(100.0 / fps) if fps > 100.0 / (high + 1) else high + 1
    if not low <= cs <= high:
        raise ValueError(
            f"write: a GIF frame delay must be {low} to {high} centiseconds (a GIF plays at "
            f"most {100 / low:g} fps, at least {100 / high:.4g} fps), got fps={fps:g}"
        )
    return int(cs)


def check_fps(fps: float, format: str) -> float:
    """``fps`` as a float when an animation of ``format`` can store it, else a ValueError.

    A GIF stores whole centiseconds per frame, from 2 to 65535 (so at most 50 fps; 60 fps
    plays at 50); an MP4 takes 0.01 to 1000 fps.

    >>> from contextsteer.video import check_fps
    >>> check_fps(15, "gif")
    15.0
    >>> check_fps(100, "gif")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: write: a GIF frame delay must be 2 to 65535 centiseconds (...), got fps=100
    """
    if isinstance(fps, bool) or not _checks.is_real(fps):
        raise TypeError(f"write: fps must be a number, got {type(fps).__name__}")
    fps = float(fps)
    format = format.lower() if isinstance(format, str) else format
    if not (fps > 0 and np.isfinite(fps)):
        raise ValueError(f"write: fps must be a finite number > 0, got {fps!r}")
    if format == "gif":
        _gif_delay(fps)
    elif format == "mp4":
        if not MP4_FPS[0] <= fps <= MP4_FPS[1]:
            raise ValueError(
                f"write: an MP4 takes {MP4_FPS[0]:g} to {MP4_FPS[1]:g} fps, got fps={fps:g}"
            )
    else:
        raise ValueError(f"write: format must be 'gif' or 'mp4', got {format!r}")
    return fps


def ffmpeg() -> str | None:
    """The ``ffmpeg`` executable on the PATH, or None."""
    return shutil.which("ffmpeg")


def _rgb(image: Any, i: int) -> np.ndarray:
    """Frame ``i`` as a contiguous (H, W, 3) uint8 array, or a ValueError naming it."""
    im = np.asarray(image)
    if im.dtype != np.uint8 or im.ndim != 3 or im.shape[2] != 3 or 0 in im.shape:
        raise ValueError(
            f"write: frame {i}: expected an RGB image of shape (H, W, 3) and dtype uint8, "
            f"got shape {im.shape} and dtype {im.dtype}"
        )
    return np.ascontiguousarray(im)


def _gif(images: Iterable[np.ndarray], path: Path, fps: float) -> None:
    """All frames quantised to one palette without dithering: fast, and the static
    background stays still (Pillow then stores each frame as its changed rectangle).

    The palette comes from the first, middle and last frames and a sample of every other
    frame's pixels that differ from the first, so every frame is held
    until the last has arrived: deflated (zlib level 1; a scene's frames are mostly
    its unchanged background, some 30-60 times smaller than RGB), then quantised one by
    one. Pillow keeps the quantised frames (one byte a pixel) until it writes the file.
    Holding the RGB frames took 3 MB a frame at 960 px wide (915 MB for 300 frames)."""
    import zlib

    from PIL import Image

    packed: list[bytes] = []
    size: tuple[int, int] | None = None
    for i, im in enumerate(images):
        rgb = _rgb(im, i)
        h, w = rgb.shape[:2]
        if size is None:
            size = (w, h)
        elif (w, h) != size:
            raise ValueError(f"write: frames differ in size: {h}x{w} (HxW) vs {size[1]}x{size[0]}")
        packed.append(zlib.compress(np.ascontiguousarray(rgb).tobytes(), 1))
    if size is None:
        raise ValueError(_NO_FRAMES)
    w, h = size

    def frame(i: int) -> Image.Image:
        flat = np.frombuffer(zlib.decompress(packed[i]), dtype=np.uint8)
        return Image.fromarray(flat.reshape(h, w, 3))

    # One palette for every frame, from the first, middle and last frames stacked, and
    # the pixels of every other frame that differ from the first (up to 4,096 of each):
    # an agent that came or left mid-run has its colour only in frames in between (from
    # the three alone, a body seen in one frame came out grey, and colours seen in no
    # pick vanished; fuzz round 13).
    picks = sorted({0, len(packed) // 2, len(packed) - 1})
    base = np.asarray(frame(0)).reshape(-1, 3)
    extra = []
    for i in range(1, len(packed)):
        if i in picks:
            continue
        px = np.asarray(frame(i)).reshape(-1, 3)
        changed = np.flatnonzero((px != base).any(axis=1))
        if len(changed):
            extra.append(px[changed[:: max(1, len(changed) // 4096)]])
    rows = 0
    if extra:
        sample = np.concatenate(extra)
        rows = -(-len(sample) // w)
        sample = np.concatenate([sample, np.repeat(sample[-1:], rows * w - len(sample), 0)])
    strip = Image.new("RGB", (w, h * len(picks) + rows))
    for j, i in enumerate(picks):
        strip.paste(frame(i), (0, j * h))
    if rows:
        strip.paste(Image.fromarray(sample.reshape(rows, w, 3)), (0, h * len(picks)))
    palette = strip.quantize(colors=255, method=Image.Quantize.MEDIANCUT)

    def indexed(i: int) -> Image.Image:
        im = frame(i).quantize(palette=palette, dither=Image.Dither.NONE)
        packed[i] = b""  # its deflated RGB is no longer needed
        return im

    first = indexed(0)
    first.save(
        path,
        format="GIF",  # whatever the suffix: write(format="gif") overrides it
        save_all=True,
        append_images=(indexed(i) for i in range(1, len(packed))),
        loop=0,
        duration=10 * _gif_delay(fps),  # ms; Pillow stores it in whole centiseconds
        optimize=False,
        disposal=1,
    )


_NO_FRAMES = (
    "write: no frames (an iterator gave none; a generator such as Frames.images is used "
    "up by one write: make the frames again, or keep them in a list)"
)


def _mp4(images: Iterable[np.ndarray], path: Path, fps: float, exe: str) -> None:
    it = iter(images)
    first = next(it, None)
    if first is None:
        raise ValueError(_NO_FRAMES)
    first = _rgb(first, 0)
    h, w = first.shape[:2]
    if w % 2 or h % 2:
        raise ValueError(f"write: MP4 (yuv420p) needs even width and height, got {w}x{h}")
    cmd = [
        exe,
        "-y",
        "-loglevel",
        "error",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "rgb24",
        "-s",
        f"{w}x{h}",
        "-r",
        f"{fps:g}",
        "-i",
        "-",
        "-an",
        "-c:v",
        "libx264",
        "-preset",
        "veryfast",
        "-pix_fmt",
        "yuv420p",
        "-movflags",
        "+faststart",
        str(path),
    ]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    try:
        for i, image in enumerate((first, *it)):
            im = _rgb(image, i)
            if im.shape[:2] != (h, w):
                raise ValueError(f"write: frames differ in size: {im.shape[:2]} vs {(h, w)}")
            proc.stdin.write(im.tobytes())
    except BrokenPipeError:
        pass  # ffmpeg stopped; its message is read below
    finally:
        proc.stdin.close()
        assert proc.stderr is not None
        with proc.stderr:
            err = proc.stderr.read().decode(errors="replace")
        code = proc.wait()
    if code != 0:
        raise RuntimeError(f"ffmpeg failed (exit {code}): {err.strip()}")


def write(
    images: Iterable[np.ndarray],
    path: str | os.PathLike[str],
    *,
    fps: float = 15.0,
    format: str | None = None,
) -> Path:
    """Write RGB images ``(H, W, 3) uint8`` as an animation; returns the path.

    Parameters
    ----------
    images : iterable of ndarray
        Frames of one size, e.g. ``contextsteer.plot.frames(...).images``.
    path : path-like
    fps : float
        Frames per second. A GIF stores the frame delay in whole centiseconds, from 2 to
        65535: it plays at most 50 fps (60 fps plays at 50) and at least 1/655 fps. An
        MP4 takes 0.01 to 1000 fps.
    format : {"gif", "mp4"}, optional
        Default: from the suffix of ``path``; given, it wins over the suffix. GIFs are
        written with Pillow (one palette for all frames, no dithering; Pillow merges
        consecutive identical frames into one shown for their summed time, so the file
        may hold fewer frames than given and plays the same). A GIF's palette comes
        from its first, middle and last frames and a sample of every other frame's
        pixels that differ from the first, so every frame is held until the file
        is written: about one byte a pixel (0.7 MB a frame at 960 × 720, 70 MB for 100
        frames). MP4s (H.264, yuv420p) stream the frames to the ``ffmpeg`` executable,
        which must be on the PATH, and hold none.

    Raises
    ------
    ValueError
        Unknown format, no frames, a frame that is not an (H, W, 3) uint8 image, frames
        of different sizes, an fps the format cannot store (see :func:`check_fps`).
    TypeError
        ``fps`` is not a number.
    RuntimeError
        MP4 without ``ffmpeg`` on the PATH, or ffmpeg failed.
    """
    path = Path(path)
    if format is not None and (not isinstance(format, str) or not format):
        raise TypeError(
            f"write: format must be one of {', '.join(FORMATS)} or None (the suffix's), "
            f"got {format!r}"
        )
    fmt = (format or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ValueError(f"write: format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    fps = check_fps(fps, fmt)
    if isinstance(images, np.ndarray) and images.ndim < 3:
        raise TypeError(
            "write: images must be a sequence of (H, W, 3) uint8 frames or an (F, H, W, 3) "
            f"array, got an array of shape {images.shape}"
        )
    if isinstance(images, Sized) and len(images) == 0:
        raise ValueError("write: no frames (an empty sequence)")
    if fmt == "gif":
        try:
            _gif(images, path, fps)
        except OSError as exc:
            # (Pillow's error on a full disk named no file: "[Errno 28] No space left".)
            if exc.filename is None:
                exc.filename = str(path)
            raise
    else:
        exe = ffmpeg()
        if exe is None:
            raise RuntimeError(
                "write: MP4 needs the ffmpeg executable on the PATH "
                "(e.g. apt-get install ffmpeg); write a GIF instead"
            )
        _mp4(images, path, fps, exe)
    return path
