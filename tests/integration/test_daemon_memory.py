# SPDX-License-Identifier: GPL-2.0-or-later
"""Resource limits of the daemon: memory stays bounded across 1000 reloads.

The definition is replaced 1000 times (by rename, as editors and cluster
file systems do), alternating between two valid versions that differ by a
vnet, so every reload is a real change with a kernel pass behind it. The
daemon's resident set after the first 100 reloads and after all 1000 must
be within a small margin: a leak of even a few hundred bytes per reload
would show as tens of kilobytes. And no private key shows up in its log.
"""
import pytest

from fabtest import zone
from fabtest.daemon import start_daemons
from fabtest.wait import wait_until

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.slow]

RELOADS = 1000


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def test_memory_is_bounded_across_1000_reloads(make_cluster):
    cluster = make_cluster(2)
    pve1 = cluster.nodes[0]
    one = cluster.definition(zones=[zone("a", "plain", [("vnet1", 1)])])
    two = cluster.definition(zones=[zone("a", "plain", [("vnet1", 1), ("vnet2", 2)])])
    daemons = start_daemons(cluster, one, nodes=[pve1])
    d = daemons["pve1"]

    def reload(i):
        d.write(two if i % 2 else one)
        want_vnet2 = bool(i % 2)
        # each reload converges before the next: a real pass per change
        try:
            wait_until(lambda: ("vnet2" in pve1.links()) == want_vnet2, timeout=10,
                       interval=0.01, what=f"reload {i} applied")
        except AssertionError:
            print(d.log()[-3000:])
            raise

    for i in range(1, 101):
        reload(i)
    warm = vm_rss_kib(d.pid)
    for i in range(101, RELOADS + 1):
        reload(i)
    end = vm_rss_kib(d.pid)
    print(f"daemon VmRSS after 100 reloads: {warm} KiB, after {RELOADS}: {end} KiB")
    assert end <= warm + 256, f"RSS grew from {warm} KiB to {end} KiB over {RELOADS - 100} reloads"
    private = open(pve1.key_file).read().strip()
    assert private not in d.log(all_runs=True)
    d.stop()
