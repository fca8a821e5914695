# SPDX-License-Identifier: GPL-2.0-or-later
"""Taking over a running Proxmox VXLAN zone without stopping a guest (issue 13, part 3).

Before: Debian's ifupdown2 built, from files of Proxmox's shape, on each of
three nodes a bridge `blue` with the guest's tap and `vxlan_blue` (VNI 100,
vxlan_remoteip the other nodes). Guests ping each other through Proxmox's VXLAN.

    pveN: blue (Proxmox) <- tapNi0 (guest), vxlan_blue (Proxmox)  ->  after: vx100 (fabricd)

Procedure (README, Proxmox VE): fabricd apply, node by node, with the zone's
"bridges": "existing" and the vnet's "replaces": "vxlan_blue"; then in
Proxmox the vnet moves to a Simple zone and "Apply" (ifreload -a) drops the
vxlan_blue stanza. Checked: pings run at 100/s the whole time and the lost
ones are counted (the interruption); the bridge and the guests' taps keep
their ifindex; nodes not taken over yet keep talking to those that are (same
VXLAN on the wire); a second apply changes nothing.
"""
import os

import pytest

from fabtest import zone
from fabtest.pinger import Pingers
from fabtest.proxmox import (IFRELOAD, ifupdown, ports, proxmox_node, simple_vnet, vxlan_vnet,
                             write_sdn)
from fabtest.wait import wait_until

pytestmark = [pytest.mark.netns, pytest.mark.vxlan]

MTU = 1450  # Proxmox's VXLAN default; fabricd's plain maximum on a 1500 underlay


def test_takeover_of_a_running_vxlan_zone(make_cluster):
    if not os.path.exists(IFRELOAD):
        pytest.skip("Debian's ifupdown2 is not installed")
    cluster = make_cluster(3)
    etcs = {}
    for n in cluster.nodes:
        remotes = [m.underlay for m in cluster.nodes if m is not n]
        etcs[n.name] = proxmox_node(cluster, n, vxlan_vnet("blue", 100, remotes, MTU))
    guests = [cluster.add_guest(n, "blue", f"10.0.5.{i + 1}/24") for i, n in
              enumerate(cluster.nodes)]
    for a, b in [(guests[0], guests[1]), (guests[1], guests[2]), (guests[2], guests[0])]:
        wait_until(lambda: a.ping(b), timeout=15)  # Proxmox's VXLAN works
    before = {n.name: (n.link("blue")["ifindex"], n.link(f"tap{i + 1}i0")["ifindex"])
              for i, n in enumerate(cluster.nodes)}

    takeover = dict(zone("blue", "plain", [("blue", 100)], mtu_policy="max"), bridges="existing")
    takeover["vnets"][0]["replaces"] = "vxlan_blue"
    config = cluster.write_definition(cluster.definition(zones=[takeover]))
    plan = cluster.nodes[0].fabricd("plan", "-c", config)
    assert plan.rc == 2 and "vxlan_blue" in plan.stdout and "taken over" in plan.stdout, plan

    pairs = [(guests[0], guests[1]), (guests[1], guests[2]), (guests[2], guests[0])]
    pingers = Pingers.between(cluster, pairs, seconds=12).start()
    for n in cluster.nodes:  # one node at a time: mixed states must carry traffic
        assert n.fabricd("apply", "-c", config).rc == 0
        assert "vx100" in ports(n, "blue") and n.link("vxlan_blue") is None, ports(n, "blue")
    # in Proxmox: the vnet moves to a Simple zone; "Apply" reloads every node
    for n in cluster.nodes:
        write_sdn(etcs[n.name], simple_vnet("blue", MTU), 2)
        ifupdown(n, "ifreload")
    results = pingers.wait()
    lost = sum(len(r.missing) for r in results)
    worst = max(len(r.missing) for r in results)
    print(f"takeover of 3 nodes: {lost} echoes lost in all ({worst} at most per pair, "
          f"{worst * 10} ms at 100 echoes/s); pairs: " + "; ".join(str(r) for r in results))
    assert all(r.received >= 20 for r in results), results
    assert worst * 0.01 < 1.0, "target: under one second of lost pings per guest pair"

    for i, n in enumerate(cluster.nodes):
        # vx100 sends, vs100 is its mute standby (the condone regex keeps both)
        assert ports(n, "blue") == sorted([f"tap{i + 1}i0", "vs100", "vx100"]), ports(n, "blue")
        assert (n.link("blue")["ifindex"], n.link(f"tap{i + 1}i0")["ifindex"]) == before[n.name]
        assert n.link("vxlan_blue") is None, "ifreload must not bring Proxmox's device back"
        assert n.fabricd("plan", "-c", config).rc == 0, "a second apply changes nothing"
    assert guests[0].ping(guests[2], count=3)


def test_a_proxmox_zone_on_another_udp_port_is_warned_of(make_cluster):
    """Proxmox's zone has `vxlan-port` set: a node taken over speaks 4789, the nodes not
    yet still the zone's port, so they cannot reach each other until all are taken over.
    plan and apply say so (they said only "taken over"); the default port says nothing."""
    cluster = make_cluster(2)
    pve1 = cluster.nodes[0]
    takeover = dict(zone("blue", "plain", [("blue", 100)], mtu_policy="max"), bridges="existing")
    takeover["vnets"][0]["replaces"] = "vxlan_blue"
    config = cluster.write_definition(cluster.definition(zones=[takeover]))
    warning = ("warning: vxlan_blue: uses UDP port 4800, and vx100 will use 4789: until every "
               "node of vnet blue is taken over, this node and the others cannot reach each "
               "other in it; take them over together, or give the zone port 4789 in Proxmox "
               "(vxlan-port) and apply that first")
    # straight into secure: no port of Proxmox's would join the two (it said "give the
    # zone port 4790 in Proxmox", secure VXLAN being inside WireGuard)
    secure = dict(takeover, transport="secure")
    secure_config = cluster.write_definition(cluster.definition(zones=[secure]),
                                             f"{cluster.tmpdir}/secure.json")
    for command in (["link", "add", "blue", "type", "bridge"],
                    ["link", "add", "vxlan_blue", "type", "vxlan", "id", "100", "dstport",
                     "4789", "local", pve1.underlay],
                    ["link", "set", "vxlan_blue", "master", "blue", "up"]):
        pve1.run(["ip", *command])
    plan = pve1.fabricd("plan", "-c", secure_config)
    assert plan.rc == 2 and "warning: vxlan_blue: is Proxmox's plain VXLAN, and vs100 is " \
        "secure (inside WireGuard)" in plan.stderr and "take the zone over plain first" in \
        plan.stderr and "vxlan-port" not in plan.stderr, plan
    pve1.run(["ip", "link", "delete", "vxlan_blue"])
    pve1.run(["ip", "link", "delete", "blue"])
    for port, warned in ((4789, False), (4800, True)):
        for command in (["link", "add", "blue", "type", "bridge"],
                        ["link", "add", "vxlan_blue", "type", "vxlan", "id", "100", "dstport",
                         str(port), "local", pve1.underlay],
                        ["link", "set", "vxlan_blue", "master", "blue", "up"],
                        ["link", "set", "blue", "up"]):
            pve1.run(["ip", *command])
        plan = pve1.fabricd("plan", "-c", config)
        assert plan.rc == 2 and "- vxlan vxlan_blue: remove (taken over" in plan.stdout, plan
        assert (warning in plan.stderr) == warned and ("port 4789 in Proxmox" in plan.stderr) \
            == warned, plan
        res = pve1.fabricd("apply", "-c", config)
        assert res.rc == 0 and (warning in res.stderr) == warned, res
        assert pve1.link("vxlan_blue") is None and "vx100" in ports(pve1, "blue")
        assert pve1.fabricd("down", "-c", config).rc == 0
        pve1.run(["ip", "link", "delete", "blue"])
