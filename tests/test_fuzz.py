# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs each libFuzzer harness of tests/fuzz/ for 30 seconds.

fuzz_config fuzzes the definition loader, fuzz_pve the Proxmox readers and
import-pve's mapping (its output must pass the loader), fuzz_nldump the parsers of kernel
and wireguard-go replies (seeded with the recorded dumps of
tests/fixtures/nl/), fuzz_probe the data-path probe's frame parser.
`make fuzz FUZZ_SECONDS=600` runs each for longer.
"""
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
FUZZ_SECONDS = 30


def run_harness(target):
    """`make -C tests/fuzz TARGET FUZZ_SECONDS=30`; assert libFuzzer finished clean."""
    if shutil.which("clang") is None:
        pytest.skip("clang is not installed (scripts/install-deps.sh)")
    r = subprocess.run(
        ["make", "-C", str(REPO / "tests" / "fuzz"), target, f"FUZZ_SECONDS={FUZZ_SECONDS}"],
        capture_output=True, text=True, timeout=900)
    # libFuzzer reports on stderr; keep the end, where a crash is described
    # (the input is kept in tests/fuzz/corpus-run/artifacts/)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    assert "Done " in r.stderr, r.stderr[-3000:]


@pytest.mark.slow
def test_fuzz_config_30s():
    run_harness("run-config")


@pytest.mark.slow
def test_fuzz_nldump_30s():
    run_harness("run-nldump")


@pytest.mark.slow
def test_fuzz_probe_30s():
    run_harness("run-probe")


@pytest.mark.slow
def test_fuzz_pve_30s():
    run_harness("run-pve")
