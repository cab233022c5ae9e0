"""Builds the C++ GoogleTest suite under tests/cpp (Debug, ASan + UBSan) and runs it with CTest.

Skipped (with the reason) when CMake, Ninja or GoogleTest are not available, so a user
without a C++ test toolchain still gets a green `pytest`.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The builds and their tests run without the sanitizer runtimes that tools/sanitize-pytest
# preloads into this process: a ThreadSanitizer test with ASan preloaded crashed at start.
ENV = {
    k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")
}


def _gtest_available() -> bool:
    return any(
        Path(p).exists()
        for p in (
            "/usr/lib/x86_64-linux-gnu/cmake/GTest",
            "/usr/lib/aarch64-linux-gnu/cmake/GTest",
            "/usr/lib/cmake/GTest",
            "/usr/local/lib/cmake/GTest",
            "/usr/src/googletest",
        )
    ) or bool(os.environ.get("GTEST_ROOT"))


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not found")
@pytest.mark.skipif(
    not _gtest_available(), reason="GoogleTest not installed (apt install libgtest-dev)"
)
def test_cpp_suite(tmp_path_factory):
    build = ROOT / "build" / "cpp-tests"
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(
        [
            "cmake",
            "-S",
            str(ROOT),
            "-B",
            str(build),
            *gen,
            "-DCMAKE_BUILD_TYPE=Debug",
            "-DCONTEXTSTEER_TESTS=ON",
            "-DCONTEXTSTEER_PYTHON=OFF",
            "-DCONTEXTSTEER_SANITIZE=ON",
        ],
        check=True,
        capture_output=True,
        text=True,
        env=ENV,
    )
    built = subprocess.run(
        ["cmake", "--build", str(build), "-j", "2"], capture_output=True, text=True, env=ENV
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    ran = subprocess.run(
        ["ctest", "--test-dir", str(build), "--output-on-failure", "-j", "2", "--timeout", "300"],
        capture_output=True,
        text=True,
        env=ENV,
    )
    sys.stdout.write(ran.stdout[-2000:])
    assert ran.returncode == 0, ran.stdout[-6000:] + ran.stderr[-2000:]


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not found")
@pytest.mark.skipif(
    not _gtest_available(), reason="GoogleTest not installed (apt install libgtest-dev)"
)
def test_cpp_concurrency_tests_under_thread_sanitizer():
    """The thread pool's tests, the simulation's thread-count identity test and the slot
    indexes' concurrent first calls, built with ThreadSanitizer (a separate build: it
    cannot be combined with ASan)."""
    build = ROOT / "build" / "cpp-tests-tsan"
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(
        [
            "cmake",
            "-S",
            str(ROOT),
            "-B",
            str(build),
            *gen,
            "-DCMAKE_BUILD_TYPE=Debug",
            "-DCONTEXTSTEER_TESTS=ON",
            "-DCONTEXTSTEER_PYTHON=OFF",
            "-DCONTEXTSTEER_TSAN=ON",
        ],
        check=True,
        capture_output=True,
        text=True,
        env=ENV,
    )
    built = subprocess.run(
        [
            "cmake",
            "--build",
            str(build),
            "-j",
            "2",
            "--target",
            "test_parallel",
            "test_neighbours",
            "test_raycast",
        ],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    env = {**ENV, "TSAN_OPTIONS": "halt_on_error=1 second_deadlock_stack=1"}
    # test_raycast: only its concurrent first calls (strip and sector indexes built by
    # threads racing for the cache).
    runs = [
        ("test_parallel", []),
        ("test_neighbours", []),
        ("test_raycast", ["--gtest_filter=*Concurrent*"]),
    ]
    for name, args in runs:
        ran = subprocess.run(
            [str(build / "tests" / "cpp" / name), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        sys.stdout.write(ran.stdout[-1000:])
        assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-6000:]


# The thread-local variables that may stay as they are: a flag read once per parallel_for,
# and the bindings' per-thread token (read once per call from Python).
_PLAIN_THREAD_LOCALS = {
    "cpp/src/parallel.cpp": "thread_local bool t_inside_parallel = false;",
    "cpp/bindings/in_use.cpp": "thread_local const std::uint64_t token =",
}


def test_core_scratch_is_reached_through_thread_scratch():
    """Per-thread scratch in the core goes through detail::thread_scratch
    (cpp/src/thread_scratch.hpp), not a function-local ``thread_local``: in the Python
    module GCC reached such a variable by a call to __tls_get_addr at each use inside the
    kernels' loops, which made the thick sector rays 1.4-1.6x slower through Python than in
    a static build (docs/performance.md, "Thread-local scratch in the shared library")."""
    found = []
    for path in sorted((ROOT / "cpp").rglob("*.[ch]pp")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "cpp/src/thread_scratch.hpp":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//")[0]
            if "thread_local" not in code:
                continue
            allowed = _PLAIN_THREAD_LOCALS.get(rel)
            if allowed is None or allowed not in code:
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, (
        "use detail::thread_scratch<T, Tag>() (cpp/src/thread_scratch.hpp) instead of a "
        "thread_local variable:\n" + "\n".join(found)
    )
