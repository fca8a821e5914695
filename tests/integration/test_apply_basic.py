# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: `fabricd apply` on every node of a three-node cluster converges.

IPv4 underlay, MTU 1500: wgfab0 1440, every zone 1390 (stable policy).
Every guest is in 10.0.0.0/24, whatever its vnet: isolation must come from
the VNIs, not from addressing::

                         sw: br0 (192.0.2.0/24)
            +-----------------+------------------+
          pve1              pve2               pve3
   vnet100 p100a .1     p100b .2            p100c .3      tenant-plain
   vnet101 p101a .4     p101b .5                          tenant-plain
   vnet200 s200a .6                         s200b .7      tenant-secure
   vnet201              s201a .8            s201b .9      tenant-secure
   vnet300 t300a .10    t300b .11           (absent)      tenant-pair
"""

import json
from types import SimpleNamespace

import pytest

from fabtest import assert_node_converged, vnet_expectations, wait_until
from fabtest.scenario import (
    assert_sessions_kept,
    peer_sessions,
    standard_zones,
    warm_sessions,
)

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

FABRIC_MTU = 1440
ZONE_MTU = 1390

GUESTS = [  # name, node, vnet, address
    ("p100a", "pve1", "vnet100", "10.0.0.1/24"),
    ("p100b", "pve2", "vnet100", "10.0.0.2/24"),
    ("p100c", "pve3", "vnet100", "10.0.0.3/24"),
    ("p101a", "pve1", "vnet101", "10.0.0.4/24"),
    ("p101b", "pve2", "vnet101", "10.0.0.5/24"),
    ("s200a", "pve1", "vnet200", "10.0.0.6/24"),
    ("s200b", "pve3", "vnet200", "10.0.0.7/24"),
    ("s201a", "pve2", "vnet201", "10.0.0.8/24"),
    ("s201b", "pve3", "vnet201", "10.0.0.9/24"),
    ("t300a", "pve1", "vnet300", "10.0.0.10/24"),
    ("t300b", "pve2", "vnet300", "10.0.0.11/24"),
]

SAME_VNET = [  # guest pairs on different nodes that must reach each other
    pytest.param("p100a", "p100b", id="plain-vnet100-pve1-pve2"),
    pytest.param("p100b", "p100c", id="plain-vnet100-pve2-pve3"),
    pytest.param("p100c", "p100a", id="plain-vnet100-pve3-pve1"),
    pytest.param("p101a", "p101b", id="plain-vnet101"),
    pytest.param("s200a", "s200b", id="secure-vnet200"),
    pytest.param("s201a", "s201b", id="secure-vnet201"),
    pytest.param("t300a", "t300b", id="secure-subset-vnet300"),
]

OTHER_VNET = [  # (source, its same-vnet partner, a guest of another vnet on another node)
    pytest.param("p100a", "p100b", "p101b", id="plain-vs-plain"),
    pytest.param("s200a", "s200b", "s201b", id="secure-vs-secure"),
    pytest.param("p100a", "p100c", "s200b", id="plain-vs-secure"),
    pytest.param("t300a", "t300b", "p100b", id="subset-vs-plain"),
]


@pytest.fixture(scope="module")
def fabric(cluster3):
    definition = cluster3.definition(zones=standard_zones())
    path = cluster3.write_definition(definition)
    cluster3.apply_all(path)
    guests = {name: cluster3.add_guest(node, vnet, cidr, name=name)
              for name, node, vnet, cidr in GUESTS}
    return SimpleNamespace(cluster=cluster3, definition=definition, path=path, guests=guests)


@pytest.mark.parametrize("node_name", ["pve1", "pve2", "pve3"])
def test_node_has_exactly_the_objects_of_the_definition(fabric, node_name):
    """wgfab0 + peers, vx/vs devices with FDB remotes, bridges, MTUs, aliases."""
    node = fabric.cluster[node_name]
    assert_node_converged(node, fabric.definition, zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU)


def test_subset_zone_only_on_its_member_nodes(fabric):
    pve1, pve3 = fabric.cluster["pve1"], fabric.cluster["pve3"]
    links = pve3.links()
    assert "vnet300" not in links and "vs300" not in links
    assert pve1.fdb_remotes("vs300") == [fabric.cluster["pve2"].fabric_address]
    assert [v.bridge for v in vnet_expectations(fabric.definition, "pve3")] == [
        "vnet100", "vnet101", "vnet200", "vnet201"]


def test_nodes_reach_each_other_over_the_fabric(fabric):
    warm_sessions(fabric.cluster.nodes)


@pytest.mark.parametrize("src,dst", SAME_VNET)
def test_guests_in_one_vnet_reach_each_other_across_nodes(fabric, src, dst):
    source, target = fabric.guests[src], fabric.guests[dst]
    wait_until(lambda: source.ping(target), timeout=10, what=f"{src} -> {dst}")
    result = source.ping(target, count=3)
    assert result, result.output


@pytest.mark.parametrize("src,partner,other", OTHER_VNET)
def test_guests_in_different_vnets_are_isolated(fabric, src, partner, other):
    """Same subnet, different VNI: no reply, and ARP never resolves."""
    source, stranger = fabric.guests[src], fabric.guests[other]
    # the source's own vnet works, so a failure below is isolation, not breakage
    wait_until(lambda: source.ping(fabric.guests[partner]), timeout=10, what=f"{src} -> {partner}")
    result = source.ping(stranger, count=1, timeout=2)
    assert not result, f"{src} reached {other} ({stranger.address}) in another vnet:\n{result.output}"
    neigh = source.run(["ip", "-j", "neigh", "show", stranger.address]).stdout
    assert "lladdr" not in neigh, f"{src} resolved {other}'s MAC across vnets: {neigh}"


def test_plan_after_apply_finds_nothing(fabric):
    for node in fabric.cluster.nodes:
        res = node.fabricd("plan", "-c", fabric.path)
        assert res.rc == 0, f"{node.name}: plan after apply should be empty: {res}"


def test_reapply_changes_nothing(fabric):
    cluster = fabric.cluster
    warm_sessions(cluster.nodes)
    before = {n.name: (n.ifindexes(), peer_sessions(n),
                       {link: n.fdb_remotes(link) for link in n.links() if link[:2] in ("vx", "vs")})
              for n in cluster.nodes}
    cluster.apply_all(fabric.path)
    for node in cluster.nodes:
        ifindexes, sessions, fdb = before[node.name]
        assert node.ifindexes() == ifindexes, f"{node.name}: a link was re-created"
        assert_sessions_kept(node, sessions, peer_sessions(node))
        assert {link: node.fdb_remotes(link) for link in fdb} == fdb
        assert_node_converged(node, fabric.definition, zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU)


def test_status_succeeds_as_text_and_json(fabric):
    for node in fabric.cluster.nodes:
        text = node.fabricd("status", "-c", fabric.path)
        assert text.rc == 0, f"{node.name}: {text}"
        as_json = node.fabricd("status", "-c", fabric.path, "--json")
        assert as_json.rc == 0, f"{node.name}: {as_json}"
        try:
            json.loads(as_json.stdout)
        except ValueError as e:
            pytest.fail(f"{node.name}: status --json is not JSON ({e}):\n{as_json.stdout}")
