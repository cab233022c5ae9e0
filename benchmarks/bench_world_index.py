"""Grid index tuning on the SCENES.md racetrack scene ("track-M-L").

Times ``cs.raycast`` (160,000 independent rays) and ``cs.slot_raycast`` (10,000 agents x
16 slots, same rays) for several grid cell sizes, the automatic one, and a single cell
(= brute force over all walls with the same kernels), and every slot method. Prints
rays/s (median of repeats) and the hit checksum (hits, sum of hit fractions) of each run so
that they are seen to agree. This is the measurement behind the index choice documented in
cpp/include/contextsteer/world.hpp.

    PYTHONPATH=python python3 benchmarks/bench_world_index.py [--threads 1] [--repeats 5]

Results on the shared 2-core VM (load average ~2.5-3.5 from other jobs, so +-30%), one
thread, M rays/s, medians of 5 repeats (2026-11-22 00:00 UTC):

    scene           grid cell  raycast  slot_raycast  brute force raycast (1x1 grid)
    track-1000-10   auto 1.10     17.1          23.1  0.42
    track-1000-50   auto 1.10      7.8           8.6  0.40
    track-10000-10  auto 0.35     14.0          17.6  0.04
    track-10000-50  auto 0.35      5.2           6.6  0.04
    (Box2D 2.4.1 b2World::RayCast closest hit, right after: track-10000-50 2.2,
    track-1000-50 3.9)

Cell sweep, track-10000-50, instructions / branch misses per ray under cachegrind
(load-independent): cell 0.35: 1219 / 11.2, 0.5: 1287 / 11.3, 1.0: 1565 / 11.3,
2.0: 2204 / 11.7, 3.5: 3390 / 11.9; track-1000-50: 0.5: 1055 / 9.6, 1.0: 995 / 9.9,
2.0: 987 / 11.4, 3.5: 1056 / 12.2. Hence ~20 cells per segment (world.cpp).
The gather method is 5-50x slower than per_ray at these look-aheads (see raycast.cpp).
Checksums: track-1000-50 142,674 hits, track-10000-50 142,674 hits (SCENES.md quotes
142,673 from a float32 solver; the extra ray, 29559, hits at 49.99917 per the float64 oracle).
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np

import contextsteer as cs
from scenes import at_least  # the script's folder is on sys.path


def track_scene(m: int, length: float, n: int = 10_000, d: int = 16):
    """Walls (M, 4), origins (N, 2), slot directions (D, 2) and expanded rays, as in SCENES.md."""
    half = m // 2
    walls = []
    for a, b in ((100.0, 60.0), (80.0, 40.0)):
        k = np.arange(half)
        ang = 2 * np.pi * k / half
        p = np.stack([a * np.cos(ang), b * np.sin(ang)], axis=1)
        q = np.roll(p, -1, axis=0)
        walls.append(np.hstack([p, q]))
    walls = np.vstack(walls).astype(np.float32)
    i = np.arange(n)
    theta = 2 * np.pi * (i + 0.5) / n
    s = 0.1 + 0.8 * np.modf((i + 1) * 0.6180339887498949)[0]
    origins = np.stack([(80 + 20 * s) * np.cos(theta), (40 + 20 * s) * np.sin(theta)], axis=1)
    phi = 2 * np.pi * np.arange(d) / d
    slots = np.stack([np.cos(phi), np.sin(phi)], axis=1)
    ray_o = np.repeat(origins, d, axis=0).astype(np.float32)
    ray_d = np.tile(slots, (n, 1)).astype(np.float32)
    return walls, origins.astype(np.float32), slots.astype(np.float32), ray_o, ray_d


def timed(fn, repeats: int) -> tuple[float, object]:
    times = []
    result = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), result


def checksum(dist: np.ndarray, length: float) -> str:
    hit = np.isfinite(dist)
    return f"{int(hit.sum()):>7d} {float((dist[hit] / length).astype(np.float64).sum()):>12.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=at_least(1), default=1)
    ap.add_argument("--repeats", type=at_least(1), default=5)
    ap.add_argument("--cells", type=float, nargs="*", default=[0.5, 1.0, 2.0, 4.0, 8.0])
    args = ap.parse_args()
    cs.set_num_threads(args.threads)
    print(f"threads={args.threads} repeats={args.repeats} (median), rays/s in millions")
    print(
        f"{'scene':<14}{'cell':>9}{'grid':>11} {'query':<22}{'Mrays/s':>9}  {'hits':>7} {'sum(frac)':>12}"
    )
    for m in (1000, 10_000):
        for length in (10.0, 50.0):
            walls, origins, slots, ray_o, ray_d = track_scene(m, length)
            world = cs.World()
            world.add_segments(walls)
            rays = ray_o.shape[0]
            for cell in [*args.cells, 0.0, 1e4]:
                world.cell_size = cell
                nx, ny, h = world._core.grid_shape
                label = "brute" if cell == 1e4 else ("auto" if cell == 0.0 else f"{cell:g}")
                raycast = partial(cs.raycast, world, ray_o, ray_d, length)
                runs = [("raycast", lambda raycast=raycast: raycast().distance)]
                for method in ("gather", "per_ray", "strips", "auto"):
                    runs.append(
                        (
                            f"slot_raycast[{method}]",
                            partial(cs.slot_raycast, world, origins, slots, length, method=method),
                        )
                    )
                for name, fn in runs:
                    if (
                        cell == 1e4
                        and m == 10_000
                        and name != "slot_raycast[gather]"
                        and name != "raycast"
                    ):
                        continue
                    reps = 1 if cell == 1e4 else args.repeats
                    if name in ("slot_raycast[strips]", "slot_raycast[auto]") and cell != 1e4:
                        fn()  # builds the strip index once (cached with the world): not timed
                    t, dist = timed(fn, reps)
                    print(
                        f"track-{m}-{int(length):<4}{label:>9}{f'{nx}x{ny}':>11} {name:<22}"
                        f"{rays / t / 1e6:>9.2f}  {checksum(np.asarray(dist).reshape(-1), length)}"
                    )


if __name__ == "__main__":
    main()
