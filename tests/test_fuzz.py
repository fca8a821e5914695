# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs the libFuzzer harness of the definition loader for 30 seconds."""
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_fuzz_config_30s():
    if shutil.which("clang") is None:
        pytest.skip("clang is not installed (scripts/install-deps.sh)")
    r = subprocess.run(
        ["make", "-C", str(REPO / "tests" / "fuzz"), "run", "FUZZ_SECONDS=30"],
        capture_output=True, text=True, timeout=900)
    # libFuzzer reports on stderr; keep the end, where a crash is described
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    assert "Done " in r.stderr, r.stderr[-3000:]
