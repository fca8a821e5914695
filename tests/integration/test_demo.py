# SPDX-License-Identifier: GPL-2.0-or-later
"""The README's demo command (`make demo`, scripts/demo.sh): it builds its cluster, every
check it prints passes, the commands it tells the reader to try work as printed, and
`scripts/demo.sh down` leaves nothing behind. A state file of its own
(FABRICD_DEMO_STATE), so an operator's demo on the same machine is left alone."""
import os
import shlex
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

REPO = Path(__file__).resolve().parents[2]


def demo(command, state):
    return subprocess.run([str(REPO / "scripts" / "demo.sh"), command], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, FABRICD_DEMO_STATE=state))


def printed(out, word):
    """The command lines the demo printed that run fabricd WORD."""
    return [shlex.split(line) for line in out.splitlines() if f" {word} -c " in line]


def test_the_demo_runs_checks_what_it_says_and_leaves_nothing(tmp_path):
    state = str(tmp_path / "demo.json")
    before = set(os.listdir("/run/netns"))
    up = demo("up", state)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        out = up.stdout
        assert "FAILED" not in out and "?!" not in out, out
        assert out.count(": ok") >= 4 and "the vnets are separate layer-2 networks" in out, out
        assert "vnet200 (VNI 200) as plain VXLAN: 0, secure VXLAN in clear (4790): 0" in out, out
        # the commands it prints work as printed: status in sync, plan with nothing to do
        (status,) = printed(out, "status")
        res = subprocess.run(status, capture_output=True, text=True, timeout=60)
        assert res.returncode == 0 and "in sync with the definition" in res.stdout, res
        (plan,) = printed(out, "plan")
        res = subprocess.run(plan, capture_output=True, text=True, timeout=60)
        assert res.returncode == 0 and "nothing to change" in res.stdout, res
        # wg reads wireguard-go's socket in the node's own /run/wireguard (its mount
        # namespace): without --mount it showed nothing, or another host's device
        (wg_show,) = [shlex.split(line) for line in out.splitlines()
                      if line.strip().endswith(" wg show")]
        res = subprocess.run(wg_show, capture_output=True, text=True, timeout=60)
        assert res.returncode == 0 and "interface: wgfab0" in res.stdout, (wg_show, res)
        assert res.stdout.count("peer: ") == 2, res.stdout
        applies = printed(out, "apply")
        assert len(applies) == 3, out
        for apply in applies:
            res = subprocess.run(apply, capture_output=True, text=True, timeout=60)
            assert res.returncode == 0, res
        assert f"FABRICD_DEMO_STATE={state} scripts/demo.sh down" in out, out
        # a second demo on the same state is refused, saying how to run another
        again = demo("up", state)
        assert again.returncode == 1 and "FABRICD_DEMO_STATE" in again.stdout, again
        assert os.path.getsize(state) > 0, "the refused demo touched the running one's state"
    finally:
        down = demo("down", state)
    assert down.returncode == 0 and "removed" in down.stdout, down
    # its names end in its suffix ("demo fdXXXX removed"); other runs may share the machine
    suffix = down.stdout.split("demo ")[-1].split()[0]
    left = [ns for ns in set(os.listdir("/run/netns")) - before if ns.endswith(f"-{suffix}")]
    assert not left, f"the demo left namespaces {left}"
    assert not os.path.exists(state)
