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
from collections.abc import Iterable
from pathlib import Path

import numpy as np

__all__ = ["FORMATS", "ffmpeg", "write"]

#: Animation formats :func:`write` knows, by file suffix.
FORMATS = ("gif", "mp4")


def ffmpeg() -> str | None:
    """The ``ffmpeg`` executable on the PATH, or None."""
    return shutil.which("ffmpeg")


def _gif(images: Iterable[np.ndarray], path: Path, fps: float) -> None:
    """All frames quantised to one palette without dithering: fast, and the static
    background stays still (Pillow then stores each frame as its changed rectangle)."""
    from PIL import Image

    frames = [Image.fromarray(np.ascontiguousarray(im)) for im in images]
    if not frames:
        raise ValueError("write: no frames")
    # One palette for every frame, from the first, middle and last frames stacked (the
    # background, the agents' colours and the danger ramp are in all of them).
    picks = [frames[i] for i in sorted({0, len(frames) // 2, len(frames) - 1})]
    w, h = picks[0].size
    strip = Image.new("RGB", (w, h * len(picks)))
    for i, im in enumerate(picks):
        strip.paste(im, (0, i * h))
    palette = strip.quantize(colors=255, method=Image.Quantize.MEDIANCUT)
    indexed = [im.quantize(palette=palette, dither=Image.Dither.NONE) for im in frames]
    indexed[0].save(
        path,
        save_all=True,
        append_images=indexed[1:],
        loop=0,
        duration=int(round(1000.0 / fps)),
        optimize=False,
        disposal=1,
    )


def _mp4(images: Iterable[np.ndarray], path: Path, fps: float, exe: str) -> None:
    it = iter(images)
    first = next(it, None)
    if first is None:
        raise ValueError("write: no frames")
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
        for im in (first, *it):
            if im.shape[:2] != (h, w):
                raise ValueError(f"write: frames differ in size: {im.shape[:2]} vs {(h, w)}")
            proc.stdin.write(np.ascontiguousarray(im[..., :3], dtype=np.uint8).tobytes())
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
        Frames per second.
    format : {"gif", "mp4"}, optional
        Default: from the suffix of ``path``. GIFs are written with Pillow (one palette
        for all frames, no dithering); MP4s (H.264, yuv420p) by piping raw frames to the
        ``ffmpeg`` executable, which must be on the PATH.

    Raises
    ------
    ValueError
        Unknown format, no frames, frames of different sizes.
    RuntimeError
        MP4 without ``ffmpeg`` on the PATH, or ffmpeg failed.
    """
    path = Path(path)
    fmt = (format or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ValueError(f"write: format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if not fps > 0:
        raise ValueError(f"write: fps must be > 0, got {fps!r}")
    if fmt == "gif":
        _gif(images, path, float(fps))
    else:
        exe = ffmpeg()
        if exe is None:
            raise RuntimeError(
                "write: MP4 needs the ffmpeg executable on the PATH "
                "(e.g. apt-get install ffmpeg); write a GIF instead"
            )
        _mp4(images, path, float(fps), exe)
    return path
