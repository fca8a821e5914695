# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs every C unit test binary, plain and sanitized (ASan + UBSan), and the
plain ones once more under valgrind, so pytest gives one report for all tiers.
`make check` builds the binaries first (build/release and build/san)."""
import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
UNIT_SOURCES = sorted((REPO / "tests" / "unit").glob("test_*.c"))
BUILDS = ["release", "san"]


def _binary(build, source):
    return REPO / "build" / build / "tests" / "unit" / source.stem


def _run(cmd, timeout=300):
    env = dict(os.environ)
    # leak checking needs ptrace, which containers sometimes lack; ASan still checks
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env=env)


# tests/unit/unit.h: a binary that could not run some of its checks (not
# root, say) exits 77 after the others passed; that is a visible skip.
UNIT_EXIT_SKIP = 77


def _skip_if_skipped(r, source):
    if r.returncode == UNIT_EXIT_SKIP:
        lines = [l for l in r.stdout.splitlines() if "SKIP:" in l]
        pytest.skip(f"{source.stem}: " + ("; ".join(lines) or "skipped"))


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("source", UNIT_SOURCES, ids=lambda p: p.stem)
def test_unit_binary(build, source):
    binary = _binary(build, source)
    assert binary.exists(), f"{binary} is not built: run `make check` (or `make unit SANITIZE=1`)"
    r = _run([str(binary)])
    print(r.stdout)
    print(r.stderr)
    _skip_if_skipped(r, source)
    assert r.returncode == 0, f"{source.stem} ({build}) failed:\n{r.stdout}\n{r.stderr}"
    assert "AddressSanitizer" not in r.stderr and "runtime error:" not in r.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
@pytest.mark.parametrize("source", UNIT_SOURCES, ids=lambda p: p.stem)
def test_unit_valgrind(source):
    binary = _binary("release", source)
    assert binary.exists(), f"{binary} is not built: run `make check`"
    r = _run(["valgrind", "-q", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
              "--error-exitcode=99", str(binary)], timeout=900)
    _skip_if_skipped(r, source)
    assert r.returncode == 0, f"valgrind on {source.stem}:\n{r.stdout}\n{r.stderr[-4000:]}"
