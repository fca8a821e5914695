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
