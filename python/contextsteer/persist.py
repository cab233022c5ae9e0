"""Saving and loading simulations: a small versioned container around a pickle.

``Simulation.save(path)`` writes a zip archive with two members:

- ``meta.json``: ``{"format": "contextsteer-simulation", "version": 1, "library": ...,
  "sha256": <hex digest of the payload>, "agents": N, "time": t, "step_count": s}``;
- ``simulation.pickle``: the simulation (world, agents, steering, motion, parameters and
  every buffer that carries state between steps; see ``Simulation.__reduce__``).

:func:`load` checks the format, the version and the digest before it unpickles, so a
truncated or corrupted file raises a clear ``ValueError`` and never half-loads; members
are inflated only up to their declared sizes, checked first (``meta.json`` at most 1 MiB,
the payload at most the memory this process may use), and a restored state's indices are checked
before a step can read through them. Like any pickle, load only files you trust.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import pickle
import secrets
import stat
import warnings
import zipfile
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO, cast

import numpy as np

from .maps import _physical_memory

if TYPE_CHECKING:
    from .simulation import Simulation

__all__ = ["FORMAT", "FORMAT_VERSION", "load", "save"]

FORMAT = "contextsteer-simulation"
FORMAT_VERSION = 1

_MEMBER_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip member can carry

# What a damaged archive raises while it is read (a bad header, a flipped byte in the
# deflated data, flags this reader does not support, a cut-off member). A missing file,
# a directory and a permission error are not damage and pass through as they are.
_DAMAGE = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    KeyError,
    EOFError,
    ValueError,
    zlib.error,
    RuntimeError,
    NotImplementedError,
    OSError,
)


class _SnapshotPickler(pickle.Pickler):
    """Pickles a simulation and keeps the state its ``__reduce__`` copied under the thread
    guard (``snapshot``: the simulation's buffers and its agents' arrays)."""

    def __init__(self, file: io.BytesIO, sim: Simulation) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._sim = sim
        self.snapshot: tuple[dict[str, Any], dict[str, Any]] | None = None

    def reducer_override(self, obj: Any) -> Any:
        from .agents import Agents

        if obj is self._sim and self.snapshot is None:
            reduced = obj.__reduce__()
            self.snapshot = reduced[1][-2], reduced[1][-1]
            return reduced
        if isinstance(obj, Agents) and type(obj) is not Agents:
            # A subclass is saved as plain Agents, as a Simulation subclass is: pickled as
            # itself it left a file that does not load without the subclass's code (one
            # defined in __main__: fuzz round 26), or a save that failed on an attribute
            # that is not plain data.
            return obj._base_reduce()
        return NotImplemented


def save(sim: Simulation, path: str | bytes | os.PathLike, *, stacklevel: int = 2) -> None:
    """Write ``sim`` to ``path`` (see the module docstring). The file is written whole
    under a new temporary name beside it (its own for each save, never opened through a
    link), synced to disk, then renamed over ``path``: an interrupted save leaves no half
    file, and two saves to one path leave one of them whole. A ``path`` that exists and is
    not a regular file (a device, a pipe) is refused with ``ValueError``. A symbolic link
    at ``path`` is written through (its target is replaced), a file replaced keeps its
    permission bits, and a hard link's other names keep the old contents.
    """
    from . import __version__

    try:
        sim._core._check_agents()  # what a restore checks, so the file will load
    except ValueError as exc:
        raise ValueError(f"save: {exc}; a simulation in this state cannot be restored") from None
    from .detour import leading

    led = leading(sim)
    if led:
        # Their goals live in the Detour, not here.
        warnings.warn(
            f"save: a Detour leads {led} agent(s) of this simulation on routes; the file "
            "holds their waypoints as targets, not their goals (kept by the Detour), so "
            "loaded they stop at the waypoint. Pickle the pair, pickle.dumps((sim, "
            "detour)), to continue the detour.",
            UserWarning,
            stacklevel=stacklevel,
        )
    buffer = io.BytesIO()
    pickler = _SnapshotPickler(buffer, sim)
    pickler.dump(sim)
    payload = buffer.getvalue()
    assert pickler.snapshot is not None  # the simulation is the object pickled
    state, agents_state = pickler.snapshot
    # Time, step count and agent count come from the snapshot the payload holds, not
    # from ``sim`` again: a step in another thread between the two would make them
    # disagree.
    meta = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "library": __version__,
        "sha256": hashlib.sha256(payload).hexdigest(),
        "agents": int(np.count_nonzero(agents_state["alive"])),
        # The simulation's scalars are stored as their raw native bytes.
        "time": float(np.frombuffer(state["time"], dtype=np.float64)[0]),
        "step_count": int(np.frombuffer(state["step_count"], dtype=np.uint64)[0]),
    }
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"save: path must be a file path (str, bytes or os.PathLike), got {path!r}")
    path = os.fsdecode(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):  # (the temporary name was the one the error named)
        raise FileNotFoundError(errno.ENOENT, f"save: no folder {folder!r} for the file", path)
    if os.path.isdir(path) or not os.path.basename(path):
        raise IsADirectoryError(errno.EISDIR, "save: the path is a folder, not a file", path)
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(os.stat(path).st_mode):
            # The rename would put the file in its place (as root, /dev/full became a file).
            raise ValueError(
                f"save: {path!r} exists and is not a regular file (a device, a pipe or a "
                "socket); give the path of a file"
            )
    with _replacing(path, "save") as f, zipfile.ZipFile(f, "w") as z:
        for name, data in (
            ("meta.json", json.dumps(meta, indent=1)),
            ("simulation.pickle", payload),
        ):
            # A fixed member date: saving one state twice writes the same bytes.
            z.writestr(zipfile.ZipInfo(name, _MEMBER_DATE), data, zipfile.ZIP_DEFLATED)


@contextlib.contextmanager
def _replacing(path: str | os.PathLike, what: str, in_place_ok: bool = False) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new contents into, whole or not at all.

    The contents go to a new temporary file beside the target (its own name, created new:
    never through a link planted there, nor shared with another writer), synced to disk
    and renamed over it, so a failed or interrupted write leaves the old file as it was
    and no temporary file. A symbolic link is written through (its target is replaced),
    and a file replaced keeps its permission bits.

    A path under /dev or /proc (``/dev/stdout`` redirected to a file), or reached through
    a link there, is always written in place. With ``in_place_ok`` the file is written in
    place, as ``open(path, "wb")`` writes it
    (and with its errors), wherever a rename would not do what that open does: a target
    that is not a regular file (a device or a pipe, ``/dev/stdout``), one with other
    names (hard links), one owned by another user or not writable, one with extended
    attributes (ACLs; on Linux, where Python lists them) or whose group a new file cannot
    take, a dangling link, a folder
    where no new file can be made, a path ending in a separator or passing through a
    missing folder. A file replaced keeps its group where the new file can take it.
    Without it (``save``) the caller has refused devices, and a rename always replaces
    the file. Errors name ``path``, not the temporary file."""
    given = os.fsdecode(path)
    try:
        st: os.stat_result | None = os.stat(given)  # (through links, as open() goes)
    except OSError:
        st = None
    target = os.path.realpath(given) if os.path.islink(given) else given
    new: tuple[int, str] | None = None
    if not (_through_devices(given) or (in_place_ok and not _renames_like_open(given, st))):
        try:
            new = _new_file(target)
        except OSError as exc:
            if not in_place_ok:
                raise type(exc)(
                    exc.errno,
                    f"{what}: cannot create a file in "
                    f"{os.path.dirname(os.path.abspath(target))!r} ({exc.strerror})",
                    given,
                ) from None
    if new is not None and st is not None and not _group_kept(new, st) and in_place_ok:
        # A new file that cannot take the replaced file's group (a group the user is not
        # in): open() keeps the group, and so does writing in place.
        os.close(new[0])
        with contextlib.suppress(OSError):
            os.remove(new[1])
        new = None
    if new is None:  # in place, as open() writes
        try:
            with open(given, "wb") as f:
                yield f
        except OSError as exc:
            _name_path(exc, given, None)
            raise
        return
    fd, tmp = new
    try:
        with os.fdopen(fd, "wb") as f:
            if st is not None:  # keep the replaced file's permissions, as open() would
                with contextlib.suppress(OSError, AttributeError):  # (no fchmod: Windows)
                    os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode))
            yield f
            f.flush()
            os.fsync(f.fileno())  # on disk before the rename makes it the file
        os.replace(tmp, target)
    except BaseException as exc:
        # No stray temporary file: a full disk, an interrupt or a failed replace.
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if isinstance(exc, OSError):
            _name_path(exc, given, tmp)
        raise


def _name_path(exc: OSError, given: str, tmp: str | None) -> None:
    """Raise ``exc`` again naming ``given`` where it named no file (a write that failed:
    a full disk, a file size limit) or the temporary one ``tmp``; else return."""
    if exc.errno is not None and exc.filename in (None, tmp):
        raise type(exc)(exc.errno, exc.strerror, given) from None


def _group_kept(new: tuple[int, str], st: os.stat_result) -> bool:
    """Gives the new file the replaced file's group; whether it has it (a rename made the
    file the user's group, and a group-shared file lost its group's access)."""
    fd = new[0]
    try:
        if os.fstat(fd).st_gid != st.st_gid:
            os.fchown(fd, -1, st.st_gid)
    except (OSError, AttributeError):  # (no fchown: not POSIX)
        return False
    return True


def _has_xattrs(path: str) -> bool:
    """Whether ``path`` carries extended attributes (ACLs among them), which a rename of a
    new file over it would drop. Linux only (``os.listxattr``): elsewhere False, and a
    macOS file's attributes (tags, ACLs) are not kept by a rename. ``security.*`` is not
    counted: the new file takes the policy's SELinux label, and a label set by hand
    (``chcon``) or file capabilities are not kept."""
    try:
        names = os.listxattr(path)
    except (OSError, AttributeError):
        return False
    # security.* (an SELinux label, say) is set by policy on a new file as well: counted,
    # every file of an SELinux host was written in place, never whole.
    return any(not n.startswith("security.") for n in names)


def _through_devices(given: str) -> bool:
    """Whether ``given`` is under /dev or /proc, or reached through a link or a folder
    there: ``/dev/stdout`` redirected to a file resolves to that file, and a rename over
    it would leave this process's descriptor on the old one (what it prints after is
    lost)."""

    def under(p: str) -> bool:
        p = "/" + os.path.normpath(p).lstrip("/") + "/"  # ("//dev/fd/1" is /dev/fd/1)
        # /dev/shm is a plain folder of files in memory, where a rename works.
        return p.startswith(("/dev/", "/proc/")) and not p.startswith("/dev/shm/")

    p = os.path.normpath(os.path.abspath(given))
    for _ in range(40):
        if under(p) or under(os.path.realpath(os.path.dirname(p))):
            return True
        if not os.path.islink(p):
            return False
        p = os.path.normpath(os.path.join(os.path.dirname(p), os.readlink(p)))
    return False


def _renames_like_open(given: str, st: os.stat_result | None) -> bool:
    """Whether renaming a new file over ``given`` leaves what ``open(given, "wb")`` and a
    write would: the same file kind, owner, links and permission to write it."""
    if not given or given.endswith(os.sep) or (os.altsep and given.endswith(os.altsep)):
        return False  # ("": open() raises FileNotFoundError for it)
    if not os.path.isdir(os.path.dirname(given) or "."):  # ("missing/../x": open fails)
        return False
    if st is None:
        return not os.path.islink(given)  # a new file; a dangling link: open creates its target
    return (
        stat.S_ISREG(st.st_mode)
        and st.st_nlink == 1
        and (not hasattr(os, "geteuid") or st.st_uid == os.geteuid())
        and os.access(given, os.W_OK)
        and os.access(os.path.dirname(os.path.realpath(given)), os.W_OK | os.X_OK)
        and not _has_xattrs(given)
    )


def write_text(path: str | os.PathLike, text: str, what: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all where a rename does what
    ``open`` does, else in place as ``open`` writes (``_replacing`` with ``in_place_ok``:
    devices, pipes, hard links, other users' files)."""
    with _replacing(path, what, in_place_ok=True) as f:
        f.write(text.encode("utf-8"))


def write_bytes(path: str | os.PathLike, data: bytes, what: str) -> None:
    """Write ``data`` to ``path`` as :func:`write_text` writes text."""
    with _replacing(path, what, in_place_ok=True) as f:
        f.write(data)


def _new_file(path: str) -> tuple[int, str]:
    """A new file in ``path``'s folder (``.cssim-<random>.tmp``: short, so that any name
    the folder takes leaves room for it; mode 0666 less the umask, as a plain open gives
    a new file), opened for writing: its descriptor and name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_BINARY", 0)  # (Windows opens text mode by default: \n -> \r\n)
    folder = os.path.dirname(path)
    for _ in range(100):
        tmp = os.path.join(folder, f".cssim-{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "save: no free temporary name beside the file", path)


def _named(path: Any) -> str:
    """How load's messages name what it read: a path, or a file object's name."""
    if isinstance(path, (str, bytes, os.PathLike)):
        return repr(os.fspath(path))
    name = getattr(path, "name", None)
    return repr(name) if isinstance(name, str) else f"the {type(path).__name__} given"


_MAX_META = 1 << 20
"""Largest ``meta.json`` load reads (bytes); a saved one is a few hundred."""


_UNCHECKED = object()


def _member(
    z: zipfile.ZipFile, name: str, limit: int, where: str, sha256: Any = _UNCHECKED
) -> bytes | bytearray:
    """A member's bytes, its declared size checked before it is inflated (a zip bomb
    declares it) and, given ``sha256``, its digest taken while it is read (one pass, and
    no second copy: a member that does not match is refused at its end)."""
    size = z.getinfo(name).file_size
    if size > limit:
        raise ValueError(
            f"load: {where} is not a contextsteer simulation file, or one too large to load "
            f"here: its {name} inflates to {size:,} bytes (at most {limit:,})"
        )
    # One buffer, filled in place; at most 256 MiB of it before the data is there (a size
    # declared falsely large must not take gigabytes), grown as more arrives.
    try:
        buf = bytearray(min(size, 1 << 28))
        digest, pos = hashlib.sha256(), 0
        with z.open(name) as f:
            while pos < size:
                if pos == len(buf):
                    buf.extend(bytes(min(size - pos, len(buf))))  # at most doubled
                with memoryview(buf) as view:
                    n = cast("io.BufferedIOBase", f).readinto(view[pos : pos + (1 << 22)])
                    if not n:
                        break
                    digest.update(view[pos : pos + n])
                pos += n
    except MemoryError:
        raise ValueError(
            f"load: {where}: not enough memory to read its {name} ({size:,} bytes)"
        ) from None
    if pos != size:
        raise ValueError(f"load: {where} is truncated or corrupted: its {name} is cut short")
    if sha256 is not _UNCHECKED and digest.hexdigest() != sha256:  # (None: no digest)
        raise ValueError(
            f"load: {where} is corrupted (its payload does not match the recorded SHA-256)"
        )
    return buf


def _seekable(f: Any) -> bool:
    try:
        return bool(f.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _read_stream(f: Any, limit: int, where: str) -> io.BytesIO:
    """A stream that cannot seek (a pipe), read whole, at most ``limit`` bytes."""
    data = bytearray()
    while chunk := f.read(1 << 22):
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"load: {where} must be opened in binary mode ('rb'), not text")
        data += chunk
        if len(data) > limit:
            raise ValueError(
                f"load: {where} holds more than the memory this process may use ({limit:,} bytes)"
            )
    return io.BytesIO(data)


def load(path: str | bytes | os.PathLike | BinaryIO) -> Simulation:
    """Read a simulation written by ``Simulation.save``, from a file path or a readable
    binary file object (an open file, ``io.BytesIO``).

    Raises
    ------
    ValueError
        Not a contextsteer simulation file, a damaged archive (truncated, or a byte
        changed), a format version this library does not read, a payload that does not
        match its recorded digest (checked as it is read, before it is unpickled), one
        that holds something other than a Simulation, a payload declared larger than the
        memory (refused unread), or a path that is not a regular file (a device, a pipe:
        zipfile would read ``/dev/zero`` forever). A file object that cannot seek (a pipe)
        is read whole first, at most the memory this process may use.
    FileNotFoundError, IsADirectoryError, PermissionError
        As opening ``path`` raises them.
    TypeError
        ``path`` is neither a path nor a readable file object, or a file opened in text
        mode.

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
    if not isinstance(path, (str, bytes, os.PathLike)) and not hasattr(path, "read"):
        raise TypeError(
            "load: path must be a file path (str, bytes or os.PathLike) or a readable binary "
            f"file object, got {path!r}"
        )
    if isinstance(path, (bytes, os.PathLike)):
        path = os.fsdecode(path)  # (zipfile took bytes for a file object)
    where = _named(path)
    if isinstance(path, str):
        with contextlib.suppress(OSError):  # (a missing file: as opening it raises)
            mode = os.stat(path).st_mode
            if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
                # zipfile would read a device to its end (/dev/zero: gigabytes a second)
                # or wait on a pipe for a writer.
                raise ValueError(
                    f"load: {where} is not a regular file (a device, a pipe or a socket)"
                )
    elif isinstance(path, io.TextIOBase):
        raise TypeError(f"load: {where} must be opened in binary mode ('rb'), not text")
    elif not _seekable(path):
        # A pipe or a socket: zipfile reads the directory at the end first.
        path = _read_stream(path, _physical_memory(), where)
    try:
        with zipfile.ZipFile(path) as z:
            meta = json.loads(_member(z, "meta.json", _MAX_META, where))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise ValueError(f"load: {where} is not a contextsteer simulation file")
            version = meta.get("version")
            if type(version) is not int or not 1 <= version <= FORMAT_VERSION:
                raise ValueError(
                    f"load: file format version {version!r}; this contextsteer reads up to "
                    f"{FORMAT_VERSION}"
                )
            # A payload larger than the memory this process may use is refused unread; one that does
            # not match its digest is refused once read, before it is unpickled.
            payload = _member(
                z, "simulation.pickle", _physical_memory(), where, sha256=meta.get("sha256")
            )
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        raise
    except ValueError as exc:
        if str(exc).startswith("load: "):
            raise
        raise ValueError(
            f"load: {where} is not a contextsteer simulation file "
            f"(or it is truncated or corrupted): {type(exc).__name__}: {exc}"
        ) from None
    except _DAMAGE as exc:
        raise ValueError(
            f"load: {where} is not a contextsteer simulation file "
            f"(or it is truncated or corrupted): {type(exc).__name__}: {exc}"
        ) from None
    from .simulation import Simulation

    try:
        sim = pickle.loads(payload)
    except MemoryError:
        raise ValueError(
            f"load: {where}: not enough memory to restore its simulation (a payload written "
            "by hand or by a faulty writer can also claim a huge size)"
        ) from None
    except (
        pickle.UnpicklingError,
        EOFError,
        AttributeError,
        ImportError,
        IndexError,
        KeyError,
        TypeError,
        ValueError,
        OverflowError,
        RuntimeError,
    ) as exc:
        # A payload with the right digest that is not a pickle this library wrote.
        raise ValueError(
            f"load: {where} does not hold a simulation this library can read: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(sim, Simulation):
        raise ValueError(f"load: {where} holds a {type(sim).__name__}, not a Simulation")
    return sim
