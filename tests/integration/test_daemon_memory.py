# SPDX-License-Identifier: GPL-2.0-or-later
"""Resource limits of the daemon: memory stays bounded across reloads.

The definition names 64 nodes (two simulated, the other 62 only peers), so
each reload parses, validates and plans a definition of real size. It is
replaced 600 times (by rename, as editors and cluster file systems do),
alternating between two valid versions that differ by a vnet, so every
reload is a real change with a kernel pass behind it. The daemon's resident
set may grow by at most 16 KiB over the last 500 reloads: a leak of 33
bytes or more per reload would exceed it (RSS moves in 4 KiB pages). And no
private key shows up in its log.
"""
import base64

import pytest

from fabtest import zone
from fabtest.daemon import start_daemons
from fabtest.wait import wait_until

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.slow]

WARMUP = 100
MEASURED = 500
GROWTH_LIMIT_KIB = 16
NODES = 64


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def with_peers(cluster, definition):
    """definition with nodes added up to NODES: peers of pve1 that never answer."""
    for i in range(len(definition["nodes"]) + 1, NODES + 1):
        definition["nodes"].append({
            "name": f"peer{i}", "underlay": f"192.0.2.{100 + i}",
            "fabric_address": f"10.255.0.{100 + i}",
            "public_key": base64.b64encode(bytes([i]) * 32).decode()})
    return definition


def test_memory_is_bounded_across_reloads(make_cluster):
    cluster = make_cluster(2)
    pve1 = cluster.nodes[0]
    one = with_peers(cluster, cluster.definition(zones=[zone("a", "plain", [("vnet1", 1)])]))
    two = with_peers(cluster, cluster.definition(zones=[zone("a", "plain", [("vnet1", 1),
                                                                             ("vnet2", 2)])]))
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

    for i in range(1, WARMUP + 1):
        reload(i)
    warm = vm_rss_kib(d.pid)
    for i in range(WARMUP + 1, WARMUP + MEASURED + 1):
        reload(i)
    end = vm_rss_kib(d.pid)
    print(f"daemon VmRSS ({NODES} nodes) after {WARMUP} reloads: {warm} KiB, "
          f"after {WARMUP + MEASURED}: {end} KiB")
    assert end - warm <= GROWTH_LIMIT_KIB, \
        f"RSS grew from {warm} KiB to {end} KiB over the last {MEASURED} reloads"
    private = open(pve1.key_file).read().strip()
    assert private not in d.log(all_runs=True)
    d.stop()
