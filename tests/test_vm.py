# SPDX-License-Identifier: GPL-2.0-or-later
"""Kernel-WireGuard tier: the integration scenarios inside a QEMU guest.

The build machines' kernel has no WireGuard, so the netns scenarios normally run against
wireguard-go. This test boots Debian's stock kernel under QEMU (tests/vm/run-vm-tests.sh,
software emulation) and runs, in one boot, the guest smoke test
(tests/vm/test_guest_smoke.py: kernel WireGuard + VXLAN + bridge between two namespaces,
no fabricd) and the integration scenarios selected by INNER_ARGS with
`--fabricd-backend auto` (kernel WireGuard in the guest). It reads the inner JUnit report
and fails with the names and messages of the inner failures, or if no inner test ran.
"""

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = [pytest.mark.vm, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "tests" / "vm" / "run-vm-tests.sh"
OUT = REPO / "tests" / "vm" / "work" / "out"
# The inner selection, shared with `make vmcheck`: tests/vm/focused.txt says
# what it holds and why.
FOCUSED = REPO / "tests" / "vm" / "focused.txt"
INNER_FILES = [line.strip() for line in FOCUSED.read_text().splitlines()
               if line.strip() and not line.startswith("#")]
INNER_ARGS = INNER_FILES
MAX_LINES = 12  # of each inner failure's message in this test's failure


def inner_results(junit):
    """(ran, skipped, [(name, message), ...] of failures and errors) from a JUnit file."""
    ran, skipped, bad = 0, 0, []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}".lstrip(":")
        if case.find("skipped") is not None:
            skipped += 1
            continue
        ran += 1
        for kind in ("failure", "error"):
            for el in case.findall(kind):
                text = (el.text or "").strip().splitlines()
                detail = (el.get("message") or (text[-1] if text else "")).splitlines()
                if len(detail) > MAX_LINES:
                    detail = detail[:MAX_LINES] + [f"... ({len(detail) - MAX_LINES} more lines)"]
                bad.append((name, f"{kind}: " + "\n      ".join(detail)))
    return ran, skipped, bad


def test_scenarios_with_kernel_wireguard_in_qemu():
    if os.environ.get("FABRICD_VM"):
        pytest.skip("already inside the QEMU guest")
    if os.geteuid() != 0:
        pytest.skip("the QEMU tier needs root (9p export of the host's /, netns in the guest)")
    if not shutil.which("qemu-system-x86_64"):
        pytest.skip("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)")

    timeout = int(os.environ.get("VM_TIMEOUT", "2400"))
    env = dict(os.environ, VM_TIMEOUT=str(timeout))
    env.pop("VM_CMD", None)
    p = subprocess.run(["bash", str(SCRIPT), *INNER_ARGS], cwd=REPO, env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout + 300)
    print(p.stdout)  # shown by pytest on failure (or with -s)
    tail = "\n".join(p.stdout.splitlines()[-60:])

    junit = OUT / "junit.xml"
    if not junit.is_file():
        pytest.fail(f"the guest produced no JUnit report (exit {p.returncode}); "
                    f"see tests/vm/work/console.log\n{tail}")
    ran, skipped, bad = inner_results(junit)
    if bad:
        lines = "\n".join(f"  {name}: {msg}" for name, msg in bad)
        pytest.fail(f"{len(bad)} of {ran} inner test(s) failed in the QEMU guest "
                    f"(kernel WireGuard):\n{lines}\n\n{tail}")
    if ran == 0:
        pytest.fail(f"no inner test ran in the QEMU guest ({skipped} skipped)\n{tail}")
    assert p.returncode == 0, f"run-vm-tests.sh exited {p.returncode}\n{tail}"
