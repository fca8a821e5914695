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

import glob
import ipaddress
import os
import subprocess
import json
import time

import pytest

from fabtest import wait_until, zone
from fabtest.daemon import Daemon, run_at
from fabtest.frr import Frr, frr_available
from fabtest.pinger import Pingers, all_pairs

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


def test_vtysh_write_by_the_operator_is_adopted(evpn):
    """`vtysh -c write` rewrites frr.conf without fabricd's markers: the next apply takes its part back."""
    cluster, frrs = evpn
    pve1, frr = cluster.node("pve1"), frrs["pve1"]
    path = f"{cluster.tmpdir}/cluster.json"
    running = frr.running_config()
    frr.vtysh("write")
    assert "fabricd:" not in frr.read_conf()
    res = fabricd(cluster, frrs, pve1, "plan", "-c", path)
    assert res.rc == 2 and "~ frr bgp evpn" in res.stdout, res
    res = fabricd(cluster, frrs, pve1, "apply", "-c", path)
    assert res.rc == 0, res
    conf = frr.read_conf()
    assert conf.count("router bgp 65000\n") == 1 and "! fabricd:fabtest begin" in conf, conf
    assert frr.running_config() == running
    res = fabricd(cluster, frrs, pve1, "plan", "-c", path)
    assert res.rc == 0, res


def fdb_dst(node, dev, mac):
    for e in node.fdb(dev):
        if e.get("mac") == mac and "dst" in e:
            return e["dst"]
    return None


def test_mac_move_converges_fast(evpn):
    """A guest's MAC leaves pve2 and appears on pve3 (a migrated VM): pve1 and pve2 follow via BGP
    within 0.5 s (issue 15's bound)."""
    cluster, frrs = evpn
    pve1, pve2, pve3 = cluster.nodes
    mac = "02:00:00:15:00:01"
    s1 = next(g for g in cluster.guests if g.name == "s1")
    old = cluster.add_guest(pve2, "vnet100", "10.100.0.50/24", name="vm-old")
    run_ip = ["ip", "-n"]
    from fabtest import run
    run(run_ip + [old.ns, "link", "set", "eth0", "address", mac])
    wait_until(lambda: s1.ping("10.100.0.50"), timeout=10, what="guest before the move")
    wait_until(lambda: fdb_dst(pve1, "vs100", mac) == pve2.fabric_address, timeout=5,
               what="pve1 learnt the MAC at pve2 over BGP")
    # the VM stops on pve2 and starts on pve3 with the same MAC
    run(["ip", "-n", pve2.ns, "link", "del", old.tap])
    new = cluster.add_guest(pve3, "vnet100", "10.100.0.50/24", name="vm-new")
    run(["ip", "-n", new.ns, "link", "set", "eth0", "down"])
    run(["ip", "-n", new.ns, "link", "set", "eth0", "address", mac])
    run(["ip", "-n", new.ns, "link", "set", "eth0", "up"])
    # its first frame: the ARP request of a ping (a migrated VM announces itself alike)
    t0 = time.monotonic()
    pinger = subprocess.Popen(["ip", "netns", "exec", new.ns, "ping", "-c", "1", "-W", "2",
                               "10.100.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # every other node follows: pve1, and pve2, which had the MAC on a local port
    wait_until(lambda: all(fdb_dst(n, "vs100", mac) == pve3.fabric_address for n in (pve1, pve2)),
               timeout=5, interval=0.01, what="pve1 and pve2 follow the MAC to pve3")
    moved = time.monotonic() - t0
    pinger.wait(timeout=5)
    print(f"evpn: MAC move seen on pve1 and pve2 {moved * 1000:.0f} ms after pve3's first frame")
    assert moved < 0.5, f"MAC move took {moved:.3f} s"
    assert s1.ping("10.100.0.50"), "the moved guest answers"


def test_daemon_restart_changes_nothing_in_frr(evpn):
    cluster, frrs = evpn
    path = f"{cluster.tmpdir}/cluster.json"
    definition = json.load(open(path))

    def frr_state():
        state = {}
        for name, frr in frrs.items():
            peers = frr.json("show bgp l2vpn evpn summary json")["peers"]
            st = os.stat(frr.conf)
            state[name] = (frr.running_config(), st.st_ino, st.st_mtime_ns,
                           {a: (p["connectionsEstablished"], p["state"]) for a, p in peers.items()})
        return state

    before = frr_state()
    daemons = {n.name: Daemon(cluster, n, extra_args=["--frr-pathspace", frrs[n.name].pathspace])
               for n in cluster.nodes}
    try:
        for d in daemons.values():
            d.write(definition)
            d.start()
        assert frr_state() == before, "a daemon start touched FRR"
        for d in daemons.values():
            d.stop()
            d.start()
        assert frr_state() == before, "a daemon restart touched FRR (file, config or sessions)"
    finally:
        for d in daemons.values():
            if d.running():
                d.stop()
            d.check_log()


SWITCH_SPREAD = 0.5  # seconds between the nodes' switches
# Echoes (10 ms apart) a pair may lose while the nodes switch one after the other:
# two spreads and a second for zebra and BGP to announce the new VTEP.
SWITCH_LOSS_MAX = int((2 * SWITCH_SPREAD + 1.0) / 0.01)


def test_plain_to_secure_switch_on_evpn_zone(evpn):
    """Zone "pln" moves to secure under `fabricd run`, node by node.

    FRR 8.4's zebra crashes when two VXLAN devices carry one VNI, so an EVPN
    vnet cannot switch make-before-break: its old device goes before the new
    one comes (README, "EVPN control plane"). What must hold: zebra survives,
    the loss is bounded by the switch's spread, and afterwards FRR floods the
    new device to the fabric addresses and every pair pings.
    """
    cluster, frrs = evpn
    definition = json.load(open(f"{cluster.tmpdir}/cluster.json"))
    guests = [g for g in cluster.guests if g.name in ("p1", "p2", "p3")]
    daemons = {n.name: Daemon(cluster, n, grace=5,
                              extra_args=["--frr-pathspace", frrs[n.name].pathspace])
               for n in cluster.nodes}
    frr_pids = {name: frr.pids() for name, frr in frrs.items()}
    try:
        for d in daemons.values():
            for sock in glob.glob(f"{d.dir}/notify*.sock"):  # an earlier test's daemons
                os.unlink(sock)
            d.write(definition)
            d.start()
        pingers = Pingers.between(cluster, all_pairs(guests), seconds=3 * SWITCH_SPREAD + 4)
        pingers.start()
        wait_until(lambda: all(p.proc.poll() is None for p in pingers.pingers), timeout=2)
        run_at([(0.5 + SWITCH_SPREAD * i, lambda d=d: d.set_transport("pln", "secure"))
                for i, d in enumerate(daemons.values())])
        results = pingers.wait()
        print("\nevpn plain -> secure: " + ", ".join(f"{r.label} lost {r.lost}" for r in results))
        assert {name: frr.pids() for name, frr in frrs.items()} == frr_pids, "an FRR daemon died"
        for r in results:
            assert r.received >= 20 and r.lost <= SWITCH_LOSS_MAX, str(r)
        for node in cluster.nodes:
            others = sorted((n.fabric_address for n in cluster.nodes if n is not node),
                            key=ipaddress.ip_address)
            assert "vx200" not in node.owned_links("fabtest")
            wait_until(lambda: node.fdb_remotes("vs200") == others, timeout=10,
                       what=f"{node.name}: FRR floods vs200 to the fabric addresses")
            assert frrs[node.name].remote_vteps(200) == sorted(others)
    finally:
        for d in daemons.values():
            if d.running():
                d.stop()
            d.check_log()
    for a, b in all_pairs(guests):
        assert a.ping(b), f"{a.name} -> {b.name} after the switch"


def test_route_reflector_replaces_the_full_mesh(evpn):
    """route_reflectors ["pve1"]: pve2 and pve3 peer with pve1 only and still reach each other."""
    cluster, frrs = evpn
    pve1, pve2, pve3 = cluster.nodes
    definition = json.load(open(f"{cluster.tmpdir}/cluster.json"))
    definition["zones"][1]["transport"] = "secure"  # as the switch left it
    definition["fabric"]["evpn"]["route_reflectors"] = ["pve1"]
    path = cluster.write_definition(definition, f"{cluster.tmpdir}/rr.json")
    apply(cluster, frrs, path)
    wait_until(lambda: all_established(frrs, ["pve1"], 2), timeout=20, what="pve1 reflects to both")
    wait_until(lambda: all_established(frrs, ["pve2", "pve3"], 1), timeout=20,
               what="clients peer with pve1 only")
    assert "route-reflector-client" in frrs["pve1"].running_config()
    assert set(frrs["pve2"].established()) == {pve1.fabric_address}
    wait_until(lambda: frrs["pve2"].remote_vteps(100) == sorted(
        [pve1.fabric_address, pve3.fabric_address]), timeout=10,
               what="pve2 learns pve3's VTEP through the reflector")
    s2 = next(g for g in cluster.guests if g.name == "s2")
    s3 = next(g for g in cluster.guests if g.name == "s3")
    wait_until(lambda: s2.ping(s3), timeout=10, what="pve2 -> pve3 through reflected routes")


def test_node_leaving_is_withdrawn_everywhere(evpn):
    cluster, frrs = evpn
    pve1, pve2, pve3 = cluster.nodes
    path = cluster.write_definition(evpn_definition(cluster, nodes=["pve1", "pve2"]),
                                    f"{cluster.tmpdir}/two.json")
    res = fabricd(cluster, frrs, pve1, "plan", "-c", path)
    assert res.rc == 2 and f"-neighbor {pve3.fabric_address} peer-group fabricd" in res.stdout, res
    apply(cluster, frrs, path, nodes=[pve1, pve2])
    res = fabricd(cluster, frrs, pve3, "down", "-c", f"{cluster.tmpdir}/cluster.json")
    assert res.rc == 0, res
    for node, other in ((pve1, pve2), (pve2, pve1)):
        frr = frrs[node.name]
        assert f"neighbor {pve3.fabric_address} " not in frr.running_config()
        wait_until(lambda: frr.remote_vteps(100) == [other.fabric_address], timeout=10,
                   what=f"{node.name}: pve3's VTEP withdrawn from VNI 100")
        wait_until(lambda: frr.remote_vteps(200) == [other.underlay], timeout=10,
                   what=f"{node.name}: pve3's VTEP withdrawn from VNI 200")
        wait_until(lambda: node.fdb_remotes("vs100") == [other.fabric_address], timeout=10,
                   what=f"{node.name}: vs100 floods to {other.name} only")
        wait_until(lambda: node.fdb_remotes("vx200") == [other.underlay], timeout=10,
                   what=f"{node.name}: vx200 floods to {other.name} only")
        assert fdb_dst(node, "vs100", "02:00:00:15:00:01") is None, "the moved MAC is withdrawn"


def test_down_leaves_foreign_frr_config(evpn):
    """pve3 went down in the test before: only fabricd's part of FRR is gone."""
    cluster, frrs = evpn
    frr = frrs["pve3"]
    running = frr.running_config()
    assert f"router bgp {ASN}\n" not in running + "\n", running
    for line in FOREIGN_LINES:
        assert line in running, f"{line!r} lost by down:\n{running}"
    conf = frr.read_conf()
    assert "fabricd:" not in conf and f"router bgp {ASN}\n" not in conf, conf
    for line in FOREIGN_LINES:
        assert line in conf, f"{line!r} lost from frr.conf by down:\n{conf}"


def test_frr_not_running_is_said_and_nothing_changes(evpn):
    cluster, frrs = evpn
    pve3 = cluster.node("pve3")
    frrs["pve3"].stop_daemons()
    links = sorted(pve3.links())
    res = fabricd(cluster, frrs, pve3, "apply", "-c", f"{cluster.tmpdir}/cluster.json")
    assert res.rc == 1, res
    assert "FRR's zebra is not running in pathspace" in res.stderr, res
    assert "fabricd never starts FRR" in res.stderr, res
    assert sorted(pve3.links()) == links, "apply changed the kernel"
    res = fabricd(cluster, frrs, pve3, "plan", "-c", f"{cluster.tmpdir}/cluster.json")
    assert res.rc == 2 and "apply will refuse until it runs" in res.stderr, res
    assert "+ frr bgp evpn" in res.stdout, res
    res = fabricd(cluster, frrs, pve3, "status", "-c", f"{cluster.tmpdir}/cluster.json", "--json")
    assert res.rc == 0 and json.loads(res.stdout)["evpn"]["frr_running"] is False, res

    # a default-VRF BGP instance of the operator's: FRR allows one, fabricd refuses
    frr = frrs["pve3"]
    frr.write_conf(frr.read_conf() + "router bgp 64999\n bgp router-id 192.0.2.98\nexit\n")
    res = fabricd(cluster, frrs, pve3, "plan", "-c", f"{cluster.tmpdir}/cluster.json")
    assert res.rc == 1 and 'frr.conf: has "router bgp 64999" outside fabricd\'s part' in res.stderr, res
    assert "nothing was changed" in res.stderr, res


def test_bad_pathspace_name_is_refused(evpn):
    cluster, frrs = evpn
    res = cluster.node("pve1").fabricd("plan", "-c", f"{cluster.tmpdir}/cluster.json",
                                       "--frr-pathspace", "../etc")
    assert res.rc == 1 and '--frr-pathspace "../etc": give the NAME' in res.stderr, res


def test_frr_reload_failure_is_reported(evpn):
    """A broken line in the operator's part: frr-reload.py fails, fabricd says so and exits 1."""
    cluster, frrs = evpn
    pve3, frr = cluster.node("pve3"), frrs["pve3"]
    frr.write_conf(frr.initial)
    frr.start_daemons()
    frr.write_conf(frr.initial + "router bgp 65099 vrf blue\n no-such-command here\nexit\n")
    res = fabricd(cluster, frrs, pve3, "apply", "-c", f"{cluster.tmpdir}/cluster.json")
    assert res.rc == 1, res
    assert "frr-reload.py" in res.stderr and "failed (exit" in res.stderr, res
