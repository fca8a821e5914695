# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: what the underlay carries for each transport, seen on the switch.

    secure-only cluster            mixed cluster
    sw: br0  <- capture            sw: br0  <- capture
     |      |                       |      |
    pve1   pve2                    pve1   pve2
    vnet200 (secure)               vnet100 (plain), vnet200 (secure)
    s1 ---- s2                     p1 ---- p2       s1 ---- s2

A cluster with only secure zones must put nothing but WireGuard on the
underlay (ARP and IPv6 neighbour discovery of the nodes themselves aside):
no UDP 4789 or 4790 at all. In a mixed cluster, plain traffic is VXLAN on
UDP 4789 between the underlay addresses, and the secure vnet's VNI never
appears in clear text.
"""

from types import SimpleNamespace

import pytest

from fabtest import Capture, SimCluster, wait_until, zone

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

SECURE = zone("tenant-secure", "secure", [("vnet200", 200)])
PLAIN = zone("tenant-plain", "plain", [("vnet100", 100)])


def build(cluster_options, zones, guests):
    cluster = SimCluster(2, **cluster_options)
    try:
        definition = cluster.definition(zones=zones)
        cluster.apply_all(cluster.write_definition(definition))
        placed = {}
        for name, bridge, prefix in guests:
            for node in cluster.nodes:
                placed[(name, node.name)] = cluster.add_guest(
                    node, bridge, f"{prefix}.{node.index}/24", name=f"{name}{node.index}")
    except BaseException:
        cluster.close()
        raise
    return SimpleNamespace(cluster=cluster, guests=placed)


@pytest.fixture(scope="module")
def secure_only(cluster_options):
    fabric = build(cluster_options, [SECURE], [("s", "vnet200", "10.0.0")])
    yield fabric
    fabric.cluster.close()


@pytest.fixture(scope="module")
def mixed(cluster_options):
    fabric = build(cluster_options, [PLAIN, SECURE],
                   [("p", "vnet100", "10.0.0"), ("s", "vnet200", "10.0.0")])
    yield fabric
    fabric.cluster.close()


def ping_under_capture(fabric, name, count=5):
    src, dst = fabric.guests[(name, "pve1")], fabric.guests[(name, "pve2")]
    wait_until(lambda: src.ping(dst), timeout=10, what=f"{src.name} -> {dst.name}")
    with fabric.cluster.capture() as underlay:
        result = src.ping(dst, count=count)
    assert result, result.output
    assert underlay.stats.get("dropped by kernel") == 0
    return underlay


def test_secure_zone_puts_only_wireguard_on_the_underlay(secure_only):
    underlay = ping_under_capture(secure_only, "s")
    assert underlay.vxlan_count() == 0, underlay.summary()
    assert underlay.secure_vxlan_count() == 0, underlay.summary()
    assert underlay.wireguard_count() >= 10, underlay.summary()
    other = f"not ({Capture.WIREGUARD}) and not ({Capture.HOUSEKEEPING})"
    assert underlay.count(other) == 0, underlay.summary()


def test_plain_zone_is_vxlan_on_udp_4789(mixed):
    underlay = ping_under_capture(mixed, "p")
    pve1, pve2 = mixed.cluster["pve1"], mixed.cluster["pve2"]
    vxlan = underlay.packets(Capture.VXLAN)
    assert len(vxlan) >= 10, underlay.summary()
    forward = [p for p in vxlan if f"{pve1.underlay}." in p and f"> {pve2.underlay}.4789:" in p]
    backward = [p for p in vxlan if f"{pve2.underlay}." in p and f"> {pve1.underlay}.4789:" in p]
    assert forward and backward, underlay.summary()
    assert all("vni 100" in p for p in vxlan), underlay.summary()


def test_secure_zone_in_a_mixed_cluster_stays_inside_wireguard(mixed):
    underlay = ping_under_capture(mixed, "s")
    assert underlay.secure_vxlan_count() == 0, underlay.summary()
    assert underlay.wireguard_count() >= 10, underlay.summary()
    leaked = [p for p in underlay.packets(Capture.VXLAN) if "vni 200" in p]
    assert leaked == [], underlay.summary()
