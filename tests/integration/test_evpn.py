# SPDX-License-Identifier: GPL-2.0-or-later
"""BGP EVPN control plane with FRR (issue 15): three nodes, zebra and bgpd on each.

  pve1 ---- pve2 ---- pve3      one underlay switch; WireGuard fabric between all
  zebra+bgpd per node, pathspace fabtest-<suffix>-pveN, iBGP AS 65000 over the fabric
  zone "sec": secure, evpn, vnet100 (VNI 100, VTEP = fabric address)
  zone "pln": plain,  evpn, vnet200 (VNI 200, VTEP = underlay address)
  each node's frr.conf starts with a foreign part: a BGP instance in VRF
  "blue" and a zebra interface description, which must survive apply and down.

The tests run in order on one module-wide cluster (they build on each other,
as an operator's day does): converge and ping, idempotence and drift,
status, a MAC move, a daemon restart, a node leaving, down.
"""

import ipaddress
import json
import time

import pytest

from fabtest import wait_until, zone
from fabtest.daemon import Daemon
from fabtest.frr import Frr, frr_available

pytestmark = [pytest.mark.frr]

ASN = 65000
FOREIGN = ("router bgp 65099 vrf blue\n bgp router-id 192.0.2.99\nexit\n!\n"
           "interface eth0\n description fabtest-foreign-underlay\nexit\n!\n")
FOREIGN_LINES = ("router bgp 65099 vrf blue", "description fabtest-foreign-underlay")


def evpn_definition(cluster, nodes=None):
    definition = cluster.definition(zones=[
        zone("sec", "secure", [("vnet100", 100)]),
        zone("pln", "plain", [("vnet200", 200)]),
    ], nodes=nodes)
    definition["fabric"]["control_plane"] = "evpn"
    definition["fabric"]["evpn"] = {"asn": ASN}
    return definition


@pytest.fixture(scope="module")
def evpn(cluster_options):
    reason = frr_available()
    if reason:
        pytest.skip(reason)
    from fabtest import SimCluster
    cluster = SimCluster(3, **cluster_options)
    frrs = {}
    try:
        for node in cluster.nodes:
            frrs[node.name] = Frr(node, foreign=FOREIGN).start()
        yield cluster, frrs
    finally:
        for frr in frrs.values():
            frr.stop()
        cluster.close()


def fabricd(cluster, frrs, node, command, *args):
    node = cluster.node(node) if isinstance(node, str) else node
    return node.fabricd(command, *args, "--frr-pathspace", frrs[node.name].pathspace)


def apply(cluster, frrs, path, nodes=None):
    for node in (nodes or cluster.nodes):
        res = fabricd(cluster, frrs, node, "apply", "-c", path)
        assert res.rc == 0, f"apply on {node.name}: {res}"


def all_established(frrs, names, n_peers):
    for name in names:
        states = frrs[name].established()
        if len(states) != n_peers or set(states.values()) != {"Established"}:
            return False
    return True


def test_converge_and_ping_both_transports(evpn):
    cluster, frrs = evpn
    path = cluster.write_definition(evpn_definition(cluster))
    t0 = time.monotonic()
    apply(cluster, frrs, path)
    wait_until(lambda: all_established(frrs, frrs, 2), timeout=30, what="EVPN sessions up")
    sessions = time.monotonic() - t0
    guests = {}
    for i, node in enumerate(cluster.nodes, 1):
        guests[("vnet100", i)] = cluster.add_guest(node, "vnet100", f"10.100.0.{i}/24",
                                                   name=f"s{i}")
        guests[("vnet200", i)] = cluster.add_guest(node, "vnet200", f"10.200.0.{i}/24",
                                                   name=f"p{i}")
    for vnet in ("vnet100", "vnet200"):
        for a, b in ((1, 2), (1, 3), (2, 3)):
            wait_until(lambda: guests[(vnet, a)].ping(guests[(vnet, b)]), timeout=15,
                       what=f"{vnet}: guest on pve{a} pings pve{b}")
    print(f"evpn: sessions established {sessions:.2f} s after the first apply")
    for node in cluster.nodes:
        for dev, want in (("vs100", [n.fabric_address for n in cluster.nodes if n is not node]),
                          ("vx200", [n.underlay for n in cluster.nodes if n is not node])):
            link = node.link(dev)
            info = link["linkinfo"]["info_data"]
            assert info.get("learning") is False, f"{node.name} {dev}: learning on: {info}"
            # zebra, not fabricd, installed the flood list: VTEPs learnt over BGP
            wait_until(lambda: node.fdb_remotes(dev) == sorted(want, key=ipaddress.ip_address),
                       timeout=10, what=f"{node.name} {dev}: flood list {want}")
        assert frrs[node.name].remote_vteps(100) == sorted(
            n.fabric_address for n in cluster.nodes if n is not node)


def test_second_apply_and_plan_change_nothing(evpn):
    cluster, frrs = evpn
    path = f"{cluster.tmpdir}/cluster.json"
    before = {n: frrs[n].running_config() for n in frrs}
    for node in cluster.nodes:
        res = fabricd(cluster, frrs, node, "plan", "-c", path)
        assert res.rc == 0, f"plan on {node.name} after traffic (zebra's MACs) must be empty: {res}"
        res = fabricd(cluster, frrs, node, "apply", "-c", path)
        assert res.rc == 0 and "nothing to change" in res.stdout, res
    assert {n: frrs[n].running_config() for n in frrs} == before


def test_status_shows_peers_and_vnis(evpn):
    cluster, frrs = evpn
    path = f"{cluster.tmpdir}/cluster.json"
    res = fabricd(cluster, frrs, "pve1", "status", "-c", path, "--json")
    assert res.rc == 0, res
    status = json.loads(res.stdout)
    ev = status["evpn"]
    assert ev["asn"] == ASN and ev["frr_running"] is True
    assert sorted((p["node"], p["state"]) for p in ev["peers"]) == [
        ("pve2", "Established"), ("pve3", "Established")]
    vnis = {v["vni"]: v for v in ev["vnis"]}
    assert sorted(vnis[100]["remote_vteps"]) == ["10.255.0.2", "10.255.0.3"]
    assert sorted(vnis[200]["remote_vteps"]) == [cluster.node("pve2").underlay,
                                                  cluster.node("pve3").underlay]
    res = fabricd(cluster, frrs, "pve1", "status", "-c", path)
    assert "bgp peer 10.255.0.2" in res.stdout and "Established" in res.stdout, res


def test_foreign_frr_config_survives_apply(evpn):
    cluster, frrs = evpn
    for name, frr in frrs.items():
        running = frr.running_config()
        for line in FOREIGN_LINES:
            assert line in running, f"{name}: {line!r} lost from FRR:\n{running}"
        assert frr.read_conf().startswith(frr.initial), f"{name}: foreign part of frr.conf changed"
        assert f"router bgp {ASN}\n" in running
