"""Benchmark of the context-map pipeline combine -> resolve -> choose (not a test).

For N agents with K slots and B = 3 interest maps: combine(max) -> resolve(mask) ->
choose(vector_sum, contiguous), in C++ (contextsteer, outputs preallocated via out=) and
as a vectorised NumPy implementation of the same rules written below. Prints the
median times, the speed-up over NumPy, and the achieved bandwidth against a NumPy array
copy of the same number of bytes measured in the same run.

Bytes counted per pipeline run: combine reads B*N*K and writes N*K floats, resolve reads
2*N*K and writes N*K, choose reads N*K and writes 4 numbers per agent; i.e.
(B + 5) * N * K * 4 + 16 * N bytes. Copy bandwidth = 2 * nbytes / time of
np.copyto(dst, src) with src.nbytes = half the pipeline bytes (read + write).

Timing: the machine may be shared, so each case runs in rounds; a round times the copy,
the C++ pipeline on 1 and on all threads, cs.steer on 1 and on all threads (medians of a
few calls each) and one NumPy run, back to back. Times are medians over rounds; ratios
(x np, %copy) are medians of the ratios within each round.

The same pipeline fused: cs.steer (combine -> resolve -> choose per cache-sized block of
agents, so the intermediate maps never go to memory) is timed alongside; its bytes are
what it must read and write: (B + 1) * N * K * 4 + 16 * N (inputs and the choice).

Data. "scene" (the main table): what behaviours write: each of the B interest maps is a
clamped-cosine lobe toward a random direction with a random weight (dot_map), and danger
marks two obstacles per agent, each a random arc of 0..K/4 slots either side of a random
slot (rays hitting a wall block neighbouring slots together). "noise" (worst case, N=100k
only): uniform random values in [-0.2, 1] and 20 % of slots blocked independently, so the
pattern of positive runs is random from one agent to the next.

``--choose argmax`` runs the C++ rows (cs.choose, cs.steer) with argmax instead (issue 15's
map-stage target); the NumPy row stays vector_sum, and "agree" then compares with a NumPy
argmax of the resolved maps.

Usage: PYTHONPATH=python python3 benchmarks/bench_maps.py [--quick] [--only N:K ...] [--choose argmax]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from functools import partial

import numpy as np

import contextsteer as cs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scenes import agent_count  # noqa: E402

B = 3


def median_time(fn, repeats, min_time=0.0, warmup=True):
    times = []
    if warmup:
        fn()  # page faults, thread pool start
    t_end = time.perf_counter() + min_time
    while len(times) < repeats or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= 200:
            break
    return statistics.median(times)


def numpy_choose_vector_sum(v, dx, dy):
    """Contiguous vector_sum in vectorised NumPy (same rules as the kernel, except that
    ties between equal run totals go to the first run after a masked slot)."""
    n, k = v.shape
    pos = v > 0
    allpos = pos.all(axis=1)
    shift = np.where(allpos, 0, (np.argmin(pos, axis=1) + 1) % k)
    idx = shift[:, None] + np.arange(k)
    idx[idx >= k] -= k
    vr = np.take_along_axis(v, idx, axis=1)
    pr = vr > 0
    starts = pr.copy()
    starts[:, 1:] &= ~pr[:, :-1]
    label = np.cumsum(starts, axis=1, dtype=np.int32)
    label[~pr] = 0
    flat = (np.arange(n, dtype=np.int64)[:, None] * (k + 1) + label).ravel()
    totals = np.bincount(flat, weights=vr.ravel().astype(np.float64), minlength=n * (k + 1))
    totals = totals.reshape(n, k + 1)
    totals[:, 0] = -1.0
    best = np.argmax(totals, axis=1)
    w = np.where(label == best[:, None], vr, np.float32(0))
    sx = (w * dx[idx]).sum(axis=1, dtype=np.float64)
    sy = (w * dy[idx]).sum(axis=1, dtype=np.float64)
    top = np.take_along_axis(idx, np.argmax(w, axis=1)[:, None], axis=1)[:, 0]
    vtop = np.take_along_axis(v, top[:, None], axis=1)[:, 0]
    length = np.hypot(sx, sy)
    total = w.sum(axis=1, dtype=np.float64)
    ok = length > 1e-6 * total
    ux = np.where(ok, sx / np.where(ok, length, 1), dx[top])
    uy = np.where(ok, sy / np.where(ok, length, 1), dy[top])
    nearest = np.argmax(ux[:, None] * dx + uy[:, None] * dy, axis=1)
    bad = np.take_along_axis(v, nearest[:, None], axis=1)[:, 0] <= 0
    ux = np.where(bad, dx[top], ux)
    uy = np.where(bad, dy[top], uy)
    some = pr.any(axis=1)
    direction = np.where(some[:, None], np.stack([ux, uy], axis=1), 0).astype(np.float32)
    strength = np.where(some, np.clip(vtop, 0, 1), 0).astype(np.float32)
    slot = np.where(some, top, -1).astype(np.int32)
    return direction, strength, slot


def numpy_pipeline(stack, danger, dx, dy, chunk=131072):
    n = stack.shape[1]
    outs = []
    for s in range(0, n, chunk):  # bounded temporaries; each chunk is fully vectorised
        interest = stack[:, s : s + chunk].max(axis=0)
        resolved = np.where(danger[s : s + chunk] > 0, np.float32(0), interest)
        outs.append(numpy_choose_vector_sum(resolved, dx, dy))
    return outs


def scene_data(rng, slots, n, k):
    stack = np.stack(
        [
            cs.dot_map(slots, rng.normal(size=(n, 2)), weight=rng.uniform(0.3, 1.0, n))
            for _ in range(B)
        ]
    )
    danger = np.zeros((n, k), np.float32)
    for _ in range(2):
        centre = rng.integers(0, k, n)
        half = rng.integers(0, k // 4 + 1, n)
        off = (np.arange(k)[None, :] - centre[:, None]) % k
        danger[(off <= half[:, None]) | (k - off <= half[:, None])] = 1.0
    return stack, danger


def noise_data(rng, slots, n, k):
    stack = rng.uniform(-0.2, 1.0, (B, n, k)).astype(np.float32)
    danger = (rng.random((n, k)) < 0.2).astype(np.float32)
    return stack, danger


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N in {1k, 100k} only")
    ap.add_argument(
        "--choose",
        choices=["vector_sum", "argmax"],
        default="vector_sum",
        help="choose mode of the C++ rows (cs.choose and cs.steer); the NumPy "
        "row always runs vector_sum. Issue 15's map-stage target (cs.steer on one "
        "thread, N=100k, K=16, against a one-thread copy) is measured with argmax",
    )
    ap.add_argument(
        "--only",
        metavar="N:K",
        action="append",
        help="run only these scene cases, e.g. --only 100000:16 (repeatable)",
    )
    args = ap.parse_args()
    sizes = [1_000, 100_000] if args.quick else [1_000, 100_000, 1_000_000]
    ks = [8, 16, 32, 64]
    cases = [("scene", n, k) for n in sizes for k in ks] + [("noise", 100_000, k) for k in ks]
    if args.only:
        cases = []
        for o in args.only:
            n, sep, k = o.partition(":")
            try:
                if not sep:
                    raise ValueError(f"expected N:K such as 100000:16 or 100k:16, got {o!r}")
                cases.append(("scene", agent_count(n), agent_count(k)))
            except ValueError as e:
                ap.error(f"--only: {e}")
    threads = cs.get_num_threads()
    rng = np.random.default_rng(0)
    print(
        f"contextsteer {cs.__version__}, numpy {np.__version__}, all threads = {threads}; "
        f"pipeline: combine(max, B={B}) -> resolve(mask) -> choose({args.choose}); medians"
    )
    head = (
        f"{'data':>5} {'N':>9} {'K':>3} {'numpy ms':>9} {'C++1 ms':>8} {f'C++{threads} ms':>8} "
        f"{'x np(1)':>8} {f'x np({threads})':>8} {'GB/s 1':>7} {f'GB/s {threads}':>7} "
        f"{'copy GB/s':>9} {'%copy 1':>7} {f'%copy {threads}':>8} {'agree':>6} | "
        f"{'steer1 ms':>9} {f'steer{threads} ms':>9} {'x np(1)':>8} {f'x np({threads})':>8} "
        f"{'%copy 1':>7} {f'%copy {threads}':>8}"
    )
    print(head)
    print("-" * len(head))
    for data, n, k in cases:
        slots = cs.SlotSet(k)
        dx = slots.directions[:, 0].copy()
        dy = slots.directions[:, 1].copy()
        stack, danger = (scene_data if data == "scene" else noise_data)(rng, slots, n, k)
        interest = np.empty((n, k), np.float32)
        resolved = np.empty((n, k), np.float32)
        choice = cs.Choice(
            np.empty((n, 2), np.float32), np.empty(n, np.float32), np.empty(n, np.int32)
        )

        # (The timed functions bind this case's arrays as defaults: they run within this
        # iteration, and the arrays are deleted at its end.)
        def cpp(
            stack=stack,
            interest=interest,
            danger=danger,
            resolved=resolved,
            slots=slots,
            choice=choice,
        ):
            cs.combine(stack, "max", out=interest)
            cs.resolve(interest, danger, "mask", out=resolved)
            cs.choose(resolved, slots, args.choose, out=choice)

        def fused(stack=stack, danger=danger, slots=slots, choice=choice):
            cs.steer(stack, danger, slots, choose=args.choose, out=choice)

        nbytes = (B + 5) * n * k * 4 + 16 * n
        fused_bytes = (B + 1) * n * k * 4 + 16 * n
        src = np.ones(nbytes // 8, np.float32)
        dst = np.empty_like(src)
        small = n * k <= 16_000
        reps_c = 20 if small else (5 if n <= 100_000 else 2)
        rounds = 5 if n <= 100_000 else 3
        # The machine may be shared: every round times everything once, back to back,
        # and the ratios are taken within a round (medians over rounds are printed).
        runs = {"copy": [], "c1": [], "ct": [], "f1": [], "ft": [], "np": []}
        np_out = []
        numpy_pipeline(stack[:, :1000], danger[:1000], dx, dy)  # warm-up
        for _ in range(rounds):
            runs["copy"].append(
                median_time(lambda dst=dst, src=src: np.copyto(dst, src), reps_c, 0.02)
            )
            for key, fn, th in (
                ("c1", cpp, 1),
                ("ct", cpp, threads),
                ("f1", fused, 1),
                ("ft", fused, threads),
            ):
                with cs.threads(th):
                    runs[key].append(median_time(fn, reps_c, 0.02))
            np_out[:] = []
            pipeline = partial(numpy_pipeline, stack, danger, dx, dy)
            runs["np"].append(
                median_time(lambda out=np_out, run=pipeline: out.append(run()), 1, warmup=False)
            )
        med = {key: statistics.median(v) for key, v in runs.items()}

        def ratio(a, b, scale=1.0, runs=runs):  # median over rounds of scale * a / b
            return statistics.median(scale * x / y for x, y in zip(runs[a], runs[b]))

        # Same answer? (slots agree except for rare ties between equal run totals)
        fused()
        fused_slot = choice.slot.copy()
        cpp()
        assert np.array_equal(fused_slot, choice.slot)
        np_slot = np.concatenate([o[2] for o in np_out[-1]])
        del np_out
        # (argmax: the slot of the resolved maximum, lowest on ties, -1 when none is positive)
        if args.choose == "argmax":
            res = np.where(danger > 0, np.float32(0), stack.max(axis=0))
            np_slot = np.where(res.max(axis=1) > 0, res.argmax(axis=1), -1)
        agree = float(np.mean(np_slot == choice.slot))
        copy_bw = 2 * src.nbytes / med["copy"] / 1e9
        bw1, bwt = nbytes / med["c1"] / 1e9, nbytes / med["ct"] / 1e9
        # %copy = achieved bandwidth / copy bandwidth = (bytes / t) / (nbytes / t_copy).
        pf = fused_bytes / nbytes
        print(
            f"{data:>5} {n:>9} {k:>3} {med['np'] * 1e3:>9.2f} {med['c1'] * 1e3:>8.3f} {med['ct'] * 1e3:>8.3f} "
            f"{ratio('np', 'c1'):>8.1f} {ratio('np', 'ct'):>8.1f} {bw1:>7.2f} {bwt:>7.2f} {copy_bw:>9.2f} "
            f"{ratio('copy', 'c1', 100):>6.0f}% {ratio('copy', 'ct', 100):>7.0f}% {agree:>6.3f} | "
            f"{med['f1'] * 1e3:>9.3f} {med['ft'] * 1e3:>9.3f} {ratio('np', 'f1'):>8.1f} {ratio('np', 'ft'):>8.1f} "
            f"{ratio('copy', 'f1', 100 * pf):>6.0f}% {ratio('copy', 'ft', 100 * pf):>7.0f}%",
            flush=True,
        )
        del stack, danger, interest, resolved, choice, src, dst, cpp, fused, pipeline
    if args.choose != "argmax":
        print(
            "(Issue 15's map-stage figure is cs.steer's '%copy 1' with argmax: "
            "run with --choose argmax --only 100000:16.)"
        )


if __name__ == "__main__":
    main()
