#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Static flood lists versus BGP EVPN (FRR), measured on a namespace cluster.

    sudo /usr/bin/python3 tests/bench/evpn_vs_static.py [--nodes 3] [--vnis 2]

Builds one SimCluster (tests/integration/fabtest) per control plane, with N
nodes and V vnets in one secure zone, and reports per control plane:
  - flood entries per node (all-zeros FDB entries on the node's VXLAN devices)
  - new MAC: a new guest's first frame (the ARP of a ping) until the other
    node's FDB has the MAC (static: VXLAN learning; evpn: a type-2 route)
  - MAC move: the MAC leaves one node, its first frame on another, until the
    first node's FDB points to the new place
  - node loss: a node's underlay goes silently down, until the others stop
    flooding to it (static: never, the definition still lists it; evpn:
    BGP hold time, 9 s)
Not part of the test suite (it takes about a minute); prints JSON.
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

from fabtest import SimCluster, run, wait_until, zone  # noqa: E402
from fabtest.frr import Frr  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MAC = "02:00:00:15:00:99"


def fdb_dst(node, dev, mac):
    for e in node.fdb(dev):
        if e.get("mac") == mac and "dst" in e:
            return e["dst"]
    return None


def first_frame(guest, target):
    return subprocess.Popen(["ip", "netns", "exec", guest.ns, "ping", "-c", "1", "-W", "2", target],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def timed(fn, timeout):
    t0 = time.monotonic()
    try:
        wait_until(fn, timeout=timeout, interval=0.01)
    except Exception:
        return None
    return round(time.monotonic() - t0, 3)


def measure(control_plane, n_nodes, n_vnis):
    cluster = SimCluster(n_nodes, fabricd_bin=f"{REPO}/fabricd/fabricd", wg_backend="userspace")
    frrs = {}
    try:
        definition = cluster.definition(zones=[
            zone("z", "secure", [(f"vnet{100 + i}", 100 + i) for i in range(n_vnis)])])
        extra = []
        if control_plane == "evpn":
            definition["fabric"]["control_plane"] = "evpn"
            definition["fabric"]["evpn"] = {"asn": 65000}
            frrs = {n.name: Frr(n).start() for n in cluster.nodes}
        path = cluster.write_definition(definition)
        for node in cluster.nodes:
            extra = ["--frr-pathspace", frrs[node.name].pathspace] if frrs else []
            res = node.fabricd("apply", "-c", path, *extra)
            assert res.rc == 0, res
        a, b, c = cluster.nodes[0], cluster.nodes[1], cluster.nodes[-1]
        others = lambda n: n_nodes - 1  # noqa: E731
        wait_until(lambda: all(len(n.fdb_remotes("vs100")) == others(n) for n in cluster.nodes),
                   timeout=60, what="flood lists complete")
        flood = {n.name: sum(len(n.fdb_remotes(f"vs{100 + i}")) for i in range(n_vnis))
                 for n in cluster.nodes}
        ga = cluster.add_guest(a, "vnet100", "10.100.0.1/24", name="ga")
        wait_until(lambda: ga.ping("10.100.0.1"), timeout=5)  # its own address: up
        gb = cluster.add_guest(b, "vnet100", "10.100.0.2/24", name="gb")
        run(["ip", "-n", gb.ns, "link", "set", "eth0", "address", MAC])
        p = first_frame(gb, "10.100.0.1")
        new_mac = timed(lambda: fdb_dst(a, "vs100", MAC) == b.fabric_address, 5)
        p.wait()
        run(["ip", "-n", b.ns, "link", "del", gb.tap])
        gc = cluster.add_guest(c, "vnet100", "10.100.0.2/24", name="gc")
        run(["ip", "-n", gc.ns, "link", "set", "eth0", "address", MAC])
        p = first_frame(gc, "10.100.0.1")
        move = timed(lambda: fdb_dst(a, "vs100", MAC) == c.fabric_address, 5)
        p.wait()
        run(["ip", "-n", c.ns, "link", "set", "eth0", "down"])
        loss = timed(lambda: c.fabric_address not in a.fdb_remotes("vs100"), 15)
        return {"control_plane": control_plane, "nodes": n_nodes, "vnis": n_vnis,
                "flood_entries_per_node": flood, "new_mac_s": new_mac, "mac_move_s": move,
                "node_loss_s": loss}
    finally:
        for f in frrs.values():
            f.stop()
        cluster.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--vnis", type=int, default=2)
    args = parser.parse_args()
    results = [measure(cp, args.nodes, args.vnis) for cp in ("static", "evpn")]
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
