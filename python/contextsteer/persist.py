"""Saving and loading simulations: a small versioned container around a pickle.

``Simulation.save(path)`` writes a zip archive with two members:

- ``meta.json``: ``{"format": "contextsteer-simulation", "version": 1, "library": ...,
  "sha256": <hex digest of the payload>, "agents": N, "time": t, "step_count": s}``;
- ``simulation.pickle``: the simulation (world, agents, steering, motion, parameters and
  every buffer that carries state between steps; see ``Simulation.__reduce__``).

:func:`load` checks the format, the version and the digest before it unpickles, so a
truncated or corrupted file raises a clear ``ValueError`` and never half-loads. Like any
pickle, load only files you trust.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import zipfile
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .simulation import Simulation

__all__ = ["FORMAT", "FORMAT_VERSION", "load", "save"]

FORMAT = "contextsteer-simulation"
FORMAT_VERSION = 1


def save(sim: Simulation, path: str | os.PathLike[str]) -> None:
    """Write ``sim`` to ``path`` (see the module docstring). The file is written whole
    under a temporary name first, then renamed, so an interrupted save leaves no half file.
    """
    from . import __version__

    payload = pickle.dumps(sim, protocol=pickle.HIGHEST_PROTOCOL)
    meta = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "library": __version__,
        "sha256": hashlib.sha256(payload).hexdigest(),
        "agents": int(sim.agents.count),
        "time": float(sim.time),
        "step_count": int(sim.step_count),
    }
    path = os.fspath(path)
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("meta.json", json.dumps(meta, indent=1))
        z.writestr("simulation.pickle", payload)
    os.replace(tmp, path)


def load(path: str | os.PathLike) -> Any:
    """Read a simulation written by ``Simulation.save``.

    Raises
    ------
    ValueError
        Not a contextsteer simulation file, a newer format version, or a payload that does
        not match its recorded digest (truncated or corrupted).
    FileNotFoundError
        No such file.

    Examples
    --------
    >>> import os, tempfile, numpy as np, contextsteer as cs
    >>> sim = cs.scenarios.get("oncoming")(seed=1)
    >>> sim.step(1 / 30, steps=20)
    >>> path = os.path.join(tempfile.mkdtemp(), "run.cssim")
    >>> sim.save(path)
    >>> back = cs.load(path)
    >>> sim.step(1 / 30, steps=20); back.step(1 / 30, steps=20)
    >>> bool(np.array_equal(sim.agents.position, back.agents.position)), back.step_count
    (True, 40)
    """
    try:
        with zipfile.ZipFile(path) as z:
            meta = json.loads(z.read("meta.json"))
            payload = z.read("simulation.pickle")
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, EOFError) as exc:
        raise ValueError(
            f"load: {os.fspath(path)!r} is not a contextsteer simulation file "
            f"(or it is truncated): {exc}"
        ) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"load: {os.fspath(path)!r} is not a contextsteer simulation file")
    version = meta.get("version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ValueError(
            f"load: file format version {version!r}; this contextsteer reads up to {FORMAT_VERSION}"
        )
    if hashlib.sha256(payload).hexdigest() != meta.get("sha256"):
        raise ValueError(
            f"load: {os.fspath(path)!r} is corrupted (its payload does not match "
            f"the recorded SHA-256)"
        )
    return pickle.load(io.BytesIO(payload))
