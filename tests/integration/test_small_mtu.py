# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: a zone whose MTU is under 1280 bytes (no IPv6 inside) applies end to end.

                 sw: br0
          +---------+---------+
        pve1                 pve2
   red  vnet100  vx100 (plain, "mtu": 1200)
   blue vnet200  vs200 (secure, "mtu": 1200)

A link whose MTU is under 1280 has no IPv6 state in the kernel, and the
kernel refuses an IPv6 address-generation setting for it; that setting
travels in the message that carries the owner mark. The definition allows
such zones (with a warning), so apply must build them: links created and
marked, guests reach each other at exactly 1200 bytes, and a second apply
changes nothing.
"""

import pytest

from fabtest import assert_node_converged, wait_until, zone

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

SMALL = 1200


def test_zone_under_1280_applies(make_cluster):
    cluster = make_cluster(2)
    definition = cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)], mtu=SMALL),
                                           zone("blue", "secure", [("vnet200", 200)], mtu=SMALL)])
    path = cluster.write_definition(definition)
    res = cluster.node("pve1").fabricd("check", "-c", path)
    assert res.rc == 0 and "1280" in res.stderr, res  # allowed, with a warning
    cluster.apply_all(path)
    for node in cluster.nodes:
        for name in ("vnet100", "vx100", "vnet200", "vs200"):
            link = node.link(name)
            assert link and link["mtu"] == SMALL, f"{node.name} {name}: {link}"
            assert link.get("ifalias") == f"fabricd:{cluster.cluster_name}", link
            assert "UP" in link["flags"], link
        assert_node_converged(node, definition, SMALL)
    for bridge, prefix in (("vnet100", "10.1.0"), ("vnet200", "10.2.0")):
        g1 = cluster.add_guest("pve1", bridge, f"{prefix}.1/24")
        g2 = cluster.add_guest("pve2", bridge, f"{prefix}.2/24")
        wait_until(lambda: g1.ping(g2), timeout=10, what=f"{bridge}: guests ping")
        # the largest unfragmented packet is the zone MTU: 28 bytes of IPv4 + ICMP headers
        assert g1.ping(g2, size=SMALL - 28, df=True), f"{bridge}: {SMALL} bytes do not pass"
        assert not g1.ping(g2, size=SMALL - 27, df=True), f"{bridge}: more than {SMALL} passed"
    for node in cluster.nodes:
        res = node.fabricd("plan", "-c", path)
        assert res.rc == 0, f"second plan on {node.name} is not empty: {res}"
        before = node.ifindexes()
        res = node.fabricd("apply", "-c", path)
        assert res.rc == 0 and "nothing to change" in res.stdout, res
        assert node.ifindexes() == before


@pytest.mark.parametrize("underlay", [1300, 1000])
def test_fabric_under_1280_applies_at_once(make_cluster, underlay):
    """An underlay of 1300 bytes leaves wgfab0 1240: an IPv4 fabric works (its zones are
    under 1280, warned), and the first apply builds it; before 2026-12-05 the fabric's
    IPv6 address-generation setting, sent with its MTU, failed the first apply
    ("Address family not supported by protocol") and only a second one finished. 1000
    given on an IPv4 underlay: until 2026-12-07 a given underlay_mtu had to be 1280, while
    the same underlay measured applied."""
    cluster = make_cluster(2)
    path = cluster.write_definition(cluster.definition(
        zones=[zone("red", "secure", [("vnet100", 100)])], underlay_mtu=underlay))
    fabric, guest = underlay - 60, underlay - 60 - 50
    for node in cluster.nodes:
        res = node.fabricd("apply", "-c", path)
        assert res.rc == 0, f"first apply on {node.name}: {res}"
        assert node.link("wgfab0")["mtu"] == fabric
        assert node.link("vnet100")["mtu"] == guest
    g1 = cluster.add_guest("pve1", "vnet100", "10.1.0.1/24")
    g2 = cluster.add_guest("pve2", "vnet100", "10.1.0.2/24")
    wait_until(lambda: g1.ping(g2), timeout=15, what=f"guests ping over a {fabric}-byte fabric")
    assert g1.ping(g2, size=guest - 28, df=True)
    for node in cluster.nodes:
        assert node.fabricd("plan", "-c", path).rc == 0


@pytest.mark.parametrize("given", [True, False], ids=["underlay_mtu", "measured"])
def test_ipv6_fabric_under_1280_is_refused_before_the_kernel(make_cluster, given):
    """An IPv6 fabric needs 1280 bytes on wgfab0 (under it the kernel refuses its
    address): a definition error with what to give, from check, plan and apply, and
    nothing built (before 2026-12-05 check passed and every apply failed half-way)."""
    cluster = make_cluster(2, fabric_family=6)
    pve1 = cluster.node("pve1")
    path = cluster.write_definition(cluster.definition(
        zones=[zone("red", "plain", [("vnet100", 100)])],
        underlay_mtu=1300 if given else None))
    if not given:
        pve1.run(["ip", "link", "set", "eth0", "mtu", "1300"])
        want = "1300, measured on the routes to the other nodes, leaves wgfab0 1240 bytes"
    else:
        want = "fabric.underlay_mtu: 1300 leaves wgfab0 1240 bytes"
        res = pve1.fabricd("check", "-c", path)
        assert res.rc == 1 and want in res.stderr and "give at least 1340" in res.stderr, res
    for command in ("plan", "apply"):
        res = pve1.fabricd(command, "-c", path)
        assert res.rc == 1 and want in res.stderr, (command, res)
    assert pve1.link("wgfab0") is None and pve1.link("vnet100") is None, "the kernel was touched"
