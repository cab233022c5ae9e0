"""Matplotlib pictures of context maps (and, later, of scenes and runs).

Functions follow shapely's plotting conventions: matplotlib is imported inside them, an
axes is created only when ``ax is None``, ``plt.show()`` is never called, extra keyword
arguments go to the main artist, and the artists are returned (a NamedTuple when several).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["ContextMapArtists", "context_map"]


class ContextMapArtists(NamedTuple):
    """Artists drawn by :func:`context_map`."""

    interest: Any  #: BarContainer, one bar a slot
    danger: Any  #: Line2D of the closed danger curve, or None
    masked: Any  #: Line2D of markers on masked slots, or None
    chosen: Any  #: FancyArrow / Annotation of the chosen direction, or None


def _slot_angles(k: int, offset: float) -> np.ndarray:
    return offset + 2.0 * np.pi * np.arange(k) / k


def context_map(
    interest,
    danger=None,
    *,
    chosen=None,
    strength: float | None = None,
    threshold: float = 0.0,
    offset: float = 0.0,
    ax=None,
    interest_color: str = "tab:green",
    danger_color: str = "tab:red",
    chosen_color: str = "black",
    **kwargs,
) -> ContextMapArtists:
    """Polar plot of one agent's context maps.

    Interest is drawn as one bar a slot, danger as a closed red curve, slots whose
    interest the Godot ``mask`` rule removes (danger > ``threshold``) as crosses on the
    rim, and the chosen direction as an arrow whose length is its strength.

    Parameters
    ----------
    interest : array_like, shape (K,)
        Interest of each slot, slot 0 along +x (rotated by ``offset``), counter-clockwise.
    danger : array_like, shape (K,), optional
        Danger of each slot.
    chosen : array_like, shape (2,), optional
        Chosen direction (need not be unit length; its angle is drawn).
    strength : float, optional
        Arrow length; defaults to the length of ``chosen`` clipped to [0, 1], or 1.
    threshold : float
        Danger above which a slot counts as masked.
    offset : float
        Angle of slot 0 in radians.
    ax : matplotlib polar Axes, optional
        Where to draw; a new polar axes is created when None.
    **kwargs
        Passed to ``ax.bar`` for the interest bars.

    Returns
    -------
    ContextMapArtists

    Examples
    --------
    >>> import numpy as np, contextsteer as cs
    >>> interest = np.array([1, .707, 0, 0, 0, 0, 0, .707])
    >>> art = cs.plot.context_map(interest, np.eye(8)[1], chosen=(1.0, -0.2))
    >>> len(art.interest.patches)
    8
    """
    import matplotlib.pyplot as plt

    interest = np.asarray(interest, dtype=np.float64)
    if interest.ndim != 1 or interest.shape[0] < 3:
        raise ValueError(f"interest: expected shape (K,) with K >= 3, got {interest.shape}")
    k = interest.shape[0]
    if danger is not None:
        danger = np.asarray(danger, dtype=np.float64)
        if danger.shape != (k,):
            raise ValueError(f"danger: expected shape ({k},), got {danger.shape}")
    if not np.all(np.isfinite(interest)) or (danger is not None and not np.all(np.isfinite(danger))):
        raise ValueError("interest and danger must be finite")
    if ax is None:
        _, ax = plt.subplots(subplot_kw={"projection": "polar"})
    theta = _slot_angles(k, offset)
    width = 2.0 * np.pi / k * 0.8
    bars = ax.bar(theta, np.clip(interest, 0, None), width=width, color=interest_color,
                  alpha=0.7, label="interest", **kwargs)
    danger_line = masked = arrow = None
    rim = max(1.0, float(np.max(np.abs(interest))) if k else 1.0)
    if danger is not None:
        closed_t = np.append(theta, theta[0])
        closed_d = np.append(danger, danger[0])
        (danger_line,) = ax.plot(closed_t, closed_d, color=danger_color, lw=1.5, label="danger")
        ax.fill(closed_t, closed_d, color=danger_color, alpha=0.15)
        rim = max(rim, float(np.max(danger)))
        hit = danger > threshold
        (masked,) = ax.plot(theta[hit], np.full(int(hit.sum()), rim * 1.05), "x",
                            color=danger_color, ms=8, mew=2, label="masked")
        for patch in np.asarray(bars.patches, dtype=object)[hit]:
            patch.set_hatch("//")
            patch.set_alpha(0.3)
    if chosen is not None:
        c = np.asarray(chosen, dtype=np.float64)
        if c.shape != (2,) or not np.all(np.isfinite(c)):
            raise ValueError(f"chosen: expected a finite (2,) direction, got {chosen!r}")
        norm = float(np.hypot(*c))
        if norm > 0:
            length = float(np.clip(norm, 0, 1)) if strength is None else float(strength)
            angle = float(np.arctan2(c[1], c[0]))
            arrow = ax.annotate(
                "", xy=(angle, length * rim), xytext=(0.0, 0.0),
                arrowprops={"arrowstyle": "->", "color": chosen_color, "lw": 2},
            )
    ax.set_ylim(0, rim * 1.12)
    ax.set_yticklabels([])
    return ContextMapArtists(bars, danger_line, masked, arrow)
