# SPDX-License-Identifier: GPL-2.0-or-later
"""A secure EVPN zone over an IPv6 underlay with an IPv4 fabric prefix (issue 15).

  pve1 ---- pve2      IPv6 underlay, IPv4 fabric; zebra + bgpd per node
  zone "sec": secure, evpn, vnet100 (VTEP = the IPv4 fabric address)

FRR 8.4's zebra takes no IPv6 VTEP ("Local VTEP IP: 0.0.0.0" for a device
with an IPv6 local address), so a plain EVPN zone needs an IPv4 underlay
(README "EVPN control plane"); a secure one works here, its VTEP being the
fabric address. fabricd keeps the carry's rule and route for both families
(VXLAN may go to VTEPs of either while a zone switches). What must hold:
guests ping, the underlay shows no VXLAN of the zone, the zone MTU is
WireGuard over IPv6 then VXLAN over IPv4 (1370 on 1500) and that size passes
unfragmented, and `down` leaves no rule behind.
"""

import pytest

from fabtest import SimCluster, wait_until, zone
from fabtest.frr import Frr, frr_available

pytestmark = [pytest.mark.frr]

ZONE_MTU = 1500 - 80 - 50  # WireGuard over IPv6, then VXLAN over the IPv4 fabric


@pytest.fixture(scope="module")
def evpn6(cluster_options):
    reason = frr_available()
    if reason:
        pytest.skip(reason)
    cluster = SimCluster(2, family=6, fabric_family=4, **cluster_options)
    frrs = {}
    try:
        for node in cluster.nodes:
            frrs[node.name] = Frr(node).start()
        definition = cluster.definition(zones=[zone("sec", "secure", [("vnet100", 100)])])
        definition["fabric"]["control_plane"] = "evpn"
        definition["fabric"]["evpn"] = {"asn": 65000}
        path = cluster.write_definition(definition)
        for node in cluster.nodes:
            res = node.fabricd("apply", "-c", path, "--frr-pathspace", frrs[node.name].pathspace)
            assert res.rc == 0, res
        yield cluster, frrs, path
    finally:
        for frr in frrs.values():
            frr.stop()
        cluster.close()


def test_secure_zone_pings_through_wireguard_only(evpn6):
    cluster, frrs, _ = evpn6
    pve1, pve2 = cluster.nodes
    s1 = cluster.add_guest(pve1, "vnet100", "10.100.0.1/24", name="s1")
    s2 = cluster.add_guest(pve2, "vnet100", "10.100.0.2/24", name="s2")
    wait_until(lambda: s1.ping(s2), timeout=30, what="s1 pings s2")
    for node in cluster.nodes:
        other = pve2 if node is pve1 else pve1
        info = node.link("vx100")["linkinfo"]["info_data"]
        assert info.get("local") == node.fabric_address, f"{node.name}: VTEP {info}"
        assert frrs[node.name].remote_vteps(100) == [other.fabric_address]
        for family in ("-4", "-6"):
            rules = node.ip_json(family, "rule", "show")
            assert any(r.get("fwmark") == "0xfab0" and str(r.get("table")) == "64176"
                       for r in rules), (family, rules)
            routes = node.ip_json(family, "route", "show", "table", "64176")
            assert [(r.get("dst"), r.get("dev")) for r in routes] == [("default", "wgfab0")], \
                (family, routes)
    with cluster.capture("udp port 4789 or udp port 51820") as underlay:
        assert s1.ping(s2, count=5)
    assert underlay.count("udp port 4789") == 0, underlay.packets("udp port 4789")
    assert underlay.count("ip6 and udp port 51820") >= 10, "the pings went through WireGuard"


def test_secure_zone_mtu(evpn6):
    cluster, _, _ = evpn6
    s1 = next(g for g in cluster.guests if g.name == "s1")
    s2 = next(g for g in cluster.guests if g.name == "s2")
    for node in cluster.nodes:
        assert node.link("vnet100")["mtu"] == ZONE_MTU, node.name
    assert s1.ping(s2, size=ZONE_MTU - 28, df=True), "the zone MTU passes unfragmented"


def test_down_removes_the_carry_rule(evpn6):
    cluster, frrs, path = evpn6
    pve2 = cluster.nodes[1]
    res = pve2.fabricd("down", "-c", path, "--frr-pathspace", frrs[pve2.name].pathspace)
    assert res.rc == 0, res
    for family in ("-4", "-6"):
        assert not [r for r in pve2.ip_json(family, "rule", "show") if r.get("fwmark") == "0xfab0"]
    assert "vx100" not in pve2.links() and "wgfab0" not in pve2.links()
