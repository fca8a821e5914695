#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A lossless transport switch of an EVPN zone, done by hand: the evidence for a design.

fabricd switches an EVPN zone break-before-make today (README, "EVPN control
plane"): plain and secure use different VXLAN devices, VTEPs and ports, and
FRR 8.4's zebra cannot hold two devices of one VNI. This script shows the
other way, with nothing of fabricd's changed: keep one VXLAN device per VNI
whatever the transport (vx200, local = underlay address, port 4789, the VTEP
BGP announces never changes) and make "secure" a routing decision:

  - every node, once: each peer's underlay address in its WireGuard allowed
    IPs, `ip rule fwmark 0xfab0 lookup 4242` with `default dev wgfab0` in
    table 4242, and loose rp_filter on wgfab0 (the decrypted frames come from
    the peers' underlay addresses);
  - switching a node to secure: a bridge-family nftables table marks every
    frame the bridge sends out of vx200 (forward and output hooks); VXLAN
    routes its outer packet with the inner skb's mark, so it goes into
    WireGuard. A peer still on plain receives it from wgfab0 on the same
    vx200 (fabricd's guard already accepts (underlay address, VNI) there);
    what that peer sends in clear text still arrives. Switching back is the
    table's removal.

zebra sees no link change at all. A last round changes vx200's alias on every
node (as fabricd's grace-period notes would) and back, under the same pings. Run as root on a machine with frr,
frr-pythontools, wireguard-go and a built fabricd (`make`):

    sudo /usr/bin/python3 tests/experiments/evpn_switch_by_mark.py

It prints, per direction, the echoes lost by each guest pair (pings between
three guests on three nodes, the nodes switching 0.5 s apart) and, for
plain -> secure, the clear-text VXLAN packets each node sent on the underlay
after its own switch (must be 0).
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

from fabtest import SimCluster, wait_until, zone  # noqa: E402
from fabtest.cluster import default_fabricd_bin  # noqa: E402
from fabtest.frr import Frr, frr_available  # noqa: E402
from fabtest.pinger import Pingers, all_pairs  # noqa: E402

MARK = "0xfab0"
TABLE = "4242"
SPREAD = 0.5
MARK_TABLE = f"""table bridge fabx {{
 chain mark_fwd {{ type filter hook forward priority 0; oifname "vx200" meta mark set {MARK}; }}
 chain mark_out {{ type filter hook output priority 0; oifname "vx200" meta mark set {MARK}; }}
}}
"""


def prepare(cluster, node):
    """What fabricd would keep on every node of an EVPN cluster."""
    for line in node.run(["wg", "show", "wgfab0", "dump"]).stdout.splitlines()[1:]:
        public_key, _, _, allowed = line.split("\t")[:4]
        peer = next(n for n in cluster.nodes if f"{n.fabric_address}/32" in allowed)
        node.run(["wg", "set", "wgfab0", "peer", public_key, "allowed-ips",
                  f"{peer.fabric_address}/32,{peer.underlay}/32"])
    node.run(["sysctl", "-qw", "net.ipv4.conf.wgfab0.rp_filter=2"])
    node.run(["ip", "rule", "add", "fwmark", MARK, "lookup", TABLE, "pref", "100"])
    node.run(["ip", "route", "add", "default", "dev", "wgfab0", "table", TABLE])


def note_alias(node):
    """What fabricd's stage notes would do to the one device: change its alias (zebra sees
    an RTM_NEWLINK of the VNI's device)."""
    alias = node.link("vx200").get("ifalias", "")
    node.run(["ip", "link", "set", "vx200", "alias", f"{alias} clear-until=1 grace=30 at=1"])
    node.run(["ip", "link", "set", "vx200", "alias", alias])


def switch_all(cluster, guests, action):
    """Pings between every pair while action(node) runs on each node, SPREAD s apart."""
    capture = cluster.capture("udp")
    capture.start()
    pingers = Pingers.between(cluster, all_pairs(guests), seconds=3 + SPREAD * len(cluster.nodes))
    pingers.start()
    time.sleep(1)
    at = {}
    for node in cluster.nodes:
        action(node)
        at[node.name] = time.time()
        time.sleep(SPREAD)
    results = pingers.wait()
    capture.stop()
    clear = {}
    for node in cluster.nodes:
        clear[node.name] = sum(1 for p in capture.packets("udp port 4789")
                               if f" {node.underlay}." in p.split(">")[0]
                               and float(p.split()[0]) > at[node.name])
    return results, clear


def main():
    reason = frr_available()
    if reason:
        sys.exit(f"needs FRR: {reason}")
    cluster = SimCluster(3, fabricd_bin=default_fabricd_bin())
    frrs = {}
    try:
        for node in cluster.nodes:
            frrs[node.name] = Frr(node).start()
        definition = cluster.definition(zones=[zone("pln", "plain", [("vnet200", 200)])])
        definition["fabric"]["control_plane"] = "evpn"
        definition["fabric"]["evpn"] = {"asn": 65000}
        path = cluster.write_definition(definition)
        for node in cluster.nodes:
            res = node.fabricd("apply", "-c", path, "--frr-pathspace", frrs[node.name].pathspace)
            assert res.rc == 0, res
        wait_until(lambda: all(set(f.established().values()) == {"Established"}
                               and len(f.established()) == 2 for f in frrs.values()),
                   timeout=40, what="EVPN sessions")
        guests = [cluster.add_guest(n, "vnet200", f"10.200.0.{i}/24", name=f"p{i}")
                  for i, n in enumerate(cluster.nodes, 1)]
        for a, b in all_pairs(guests):
            wait_until(lambda: a.ping(b), timeout=15, what=f"{a.name} -> {b.name}")
        for node in cluster.nodes:
            prepare(cluster, node)
        pids = {name: f.pids() for name, f in frrs.items()}
        vteps = {name: f.remote_vteps(200) for name, f in frrs.items()}
        for label, action in (
                ("plain -> secure", lambda n: n.run(["nft", "-f", "-"], input=MARK_TABLE)),
                ("secure -> plain", lambda n: n.run(["nft", "delete", "table", "bridge", "fabx"])),
                ("an alias note on vx200", note_alias)):
            results, clear = switch_all(cluster, guests, action)
            print(f"{label}: lost " + ", ".join(f"{r.label} {r.lost} of {r.transmitted}"
                                                for r in results))
            if label.endswith("secure"):
                print("  clear-text VXLAN sent after the node's own switch: "
                      + ", ".join(f"{k} {v}" for k, v in clear.items()))
        print("FRR daemons unchanged:", {n: f.pids() for n, f in frrs.items()} == pids)
        print("remote VTEPs unchanged:", {n: f.remote_vteps(200) for n, f in frrs.items()} == vteps)
    finally:
        for f in frrs.values():
            f.stop()
        cluster.close()


if __name__ == "__main__":
    main()
