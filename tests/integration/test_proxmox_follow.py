# SPDX-License-Identifier: GPL-2.0-or-later
"""`fabricd run --sdn-dir DIR` follows Proxmox's deployed SDN configuration
(issue 13, part 2): no definition file, no fabricd command by hand.

    <tmpdir>/pve/                 a fake /etc/pve shared by the three nodes
      corosync.conf               nodelist: pve1..pve3, ring0_addr = underlay
      sdn/.running-config         what SDN "Apply" deploys, replaced by rename
    pveN: fabricd run --sdn-dir <tmpdir>/pve/sdn (inotify on both directories)

.running-config holds a WireGuard fabric (wireguard_fabric "wgf", one
wireguard_node per node with its public key, endpoint and ip) and a VXLAN zone
"lab": `fabric wgf` makes it secure, `peers <underlays>` plain. Checked:
a vnet added in Proxmox gets its bridge and VXLAN device on every node (the
time from the rename until all three nodes have them is printed), its guests
ping across; switching the zone's transport through .running-config loses no
ping; a .running-config (or corosync.conf) with a problem is logged with
file, section and key and changes nothing; a vnet renamed moves its VNI to
the new bridge; the vnet removed goes on every node. And where Proxmox's
ifupdown2 has built the same VXLAN zone itself (bridge V over vxlan_V), the
daemon refuses to start and changes nothing: the two never fight silently.
"""
import json
import os
import time

import pytest

from fabtest.daemon import Daemon, stop_daemons
from fabtest.pinger import Pingers
from fabtest.proxmox import IFRELOAD, proxmox_node, vxlan_vnet
from fabtest.wait import wait_until

pytestmark = [pytest.mark.netns, pytest.mark.vxlan]

GRACE = 3


class FakePve:
    """A fake /etc/pve: corosync.conf and sdn/.running-config, written as pmxcfs does."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.dir = os.path.join(cluster.tmpdir, "pve")
        self.sdn = os.path.join(self.dir, "sdn")
        os.makedirs(self.sdn)
        self.version = 0
        nodes = "".join(
            f"  node {{\n    name: {n.name}\n    nodeid: {n.index}\n    quorum_votes: 1\n"
            f"    ring0_addr: {n.underlay}\n  }}\n" for n in cluster.nodes)
        self._replace(os.path.join(self.dir, "corosync.conf"),
                      f"nodelist {{\n{nodes}}}\n\ntotem {{\n  cluster_name: {cluster.cluster_name}"
                      f"\n  config_version: 1\n  version: 2\n}}\n")

    @staticmethod
    def _replace(path, text):
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)  # one rename: a reader sees old or new

    def fabrics(self):
        ids = {"wgf": {"type": "wireguard_fabric", "id": "wgf", "ip_prefix": "10.255.0.0/24"}}
        for n in self.cluster.nodes:
            ids[f"wgf_{n.name}"] = {
                "type": "wireguard_node", "id": f"wgf_{n.name}", "role": "internal",
                "endpoint": n.underlay, "ip": n.fabric_address,
                "interfaces": [f"name=wg0,listen_port=51820,public_key={n.public_key}"],
                "peers": [f"type=internal,node={m.name},node_iface=wg0,iface=wg0"
                          for m in self.cluster.nodes if m is not n]}
        return ids

    def apply(self, transport, vnets, extra_vnets=None):
        """SDN "Apply": zone lab (secure = fabric wgf, plain = peers) with vnets {name: tag}."""
        zone = {"type": "vxlan"}
        if transport == "secure":
            zone["fabric"] = "wgf"
        else:
            zone["peers"] = ",".join(n.underlay for n in self.cluster.nodes)
        ids = {name: {"type": "vnet", "zone": "lab", "tag": tag} for name, tag in vnets.items()}
        ids.update(extra_vnets or {})
        self.version += 1
        running = {"version": self.version, "zones": {"ids": {"lab": zone}},
                   "vnets": {"ids": ids}, "subnets": {"ids": {}},
                   "controllers": {"ids": {}}, "fabrics": {"ids": self.fabrics()}}
        self._replace(os.path.join(self.sdn, ".running-config"), json.dumps(running))
        return time.monotonic()


def device(transport, tag):
    return f"{'vs' if transport == 'secure' else 'vx'}{tag}"


def has_vnet(node, name, dev):
    links = node.links()
    return links.get(dev, {}).get("master") == name and name in links


def all_have(nodes, name, dev):
    return all(has_vnet(n, name, dev) for n in nodes)


def none_have(nodes, name, dev):
    return not any(name in n.links() or dev in n.links() for n in nodes)


@pytest.fixture
def followed(make_cluster):
    cluster = make_cluster(3)
    pve = FakePve(cluster)
    pve.apply("secure", {"blue": 100})
    daemons = {}
    try:
        for n in cluster.nodes:
            daemons[n.name] = Daemon(cluster, n, grace=GRACE,
                                     extra_args=["--sdn-dir", pve.sdn]).start(wait_ready=False)
        for d in daemons.values():
            d.wait_notify("READY=1", timeout=20)
        yield cluster, pve, daemons
    finally:
        stop_daemons(daemons)


def test_follows_running_config(followed):
    cluster, pve, daemons = followed
    nodes = cluster.nodes
    for d in daemons.values():
        assert "following Proxmox SDN" in d.log(), d.log()
    assert all_have(nodes, "blue", "vs100")
    blue = [cluster.add_guest(n, "blue", f"10.0.1.{i + 1}/24") for i, n in enumerate(nodes)]
    wait_until(lambda: blue[0].ping(blue[2]), timeout=25, what="blue: g1 -> g3")

    # a vnet added in Proxmox: bridge and VXLAN device on every node, no command run
    applied = pve.apply("secure", {"blue": 100, "green": 101})
    wait_until(lambda: all_have(nodes, "green", "vs101"), timeout=10, interval=0.01,
               what="green and vs101 on every node")
    added = time.monotonic() - applied
    green = [cluster.add_guest(n, "green", f"10.0.2.{i + 1}/24") for i, n in enumerate(nodes)]
    for a, b in [(green[0], green[1]), (green[1], green[2]), (green[2], green[0])]:
        wait_until(lambda: a.ping(b), timeout=25, what=f"green: {a.name} -> {b.name}")
    assert not green[0].ping(blue[1]), "vnets stay apart"
    # the one-shot commands read the same configuration: the daemon left nothing to do
    res = nodes[0].fabricd("plan", "--sdn-dir", pve.sdn)
    assert res.rc == 0, res
    res = nodes[0].fabricd("set-transport", "--sdn-dir", pve.sdn, "lab", "plain",
                           node_options=False)
    assert res.rc == 1 and "works on a definition file" in res.stderr, res

    # the zone's transport switched in Proxmox (fabric -> peers -> fabric): no ping lost
    pairs = [(blue[0], blue[1]), (blue[1], blue[2]), (green[2], green[0]), (green[0], green[1])]
    pingers = Pingers.between(cluster, pairs, seconds=2 * GRACE + 10).start().wait_replies()
    applied = pve.apply("plain", {"blue": 100, "green": 101})
    wait_until(lambda: all_have(nodes, "green", "vx101") and all_have(nodes, "blue", "vx100"),
               timeout=10, interval=0.01, what="plain devices on every node")
    switched = time.monotonic() - applied
    # after the grace period vx101 sends and vs101 stays as its mute standby
    wait_until(lambda: all(n.fdb_remotes("vx101") and not n.fdb_remotes("vs101")
                           for n in nodes), timeout=GRACE + 10,
               what="vx101 sends, vs101 the standby, after the grace period")
    pve.apply("secure", {"blue": 100, "green": 101})
    wait_until(lambda: all_have(nodes, "green", "vs101") and all_have(nodes, "blue", "vs100"),
               timeout=10, interval=0.01, what="secure devices on every node again")
    pingers.stop()
    pingers.assert_no_loss("while zone lab switched secure -> plain -> secure in Proxmox")

    # a problem in Proxmox's files: logged with file, section and key; nothing changes
    marks = {name: d.mark() for name, d in daemons.items()}
    pve.apply("secure", {"blue": 100, "green": 101},
              extra_vnets={"bad": {"type": "vnet", "zone": "lab"}})
    for name, d in daemons.items():
        d.wait_log("the last good definition stays in force",
                   ".running-config (vnets) [vnet: bad] tag:", since=marks[name])
    assert all_have(nodes, "green", "vs101") and all_have(nodes, "blue", "vs100")
    assert green[0].ping(green[2]), "the last good state stays in force"

    # corosync.conf is followed too: a broken one is reported by name, and changes nothing
    marks = {name: d.mark() for name, d in daemons.items()}
    corosync = os.path.join(pve.dir, "corosync.conf")
    good = open(corosync).read()
    pve._replace(corosync, good.replace("nodelist {", "nodelist {{", 1))
    for name, d in daemons.items():
        d.wait_log("the last good definition stays in force", f"{corosync}:",
                   since=marks[name])
    pve._replace(corosync, good)
    assert green[0].ping(green[1]), "the last good state stays in force"

    # a vnet renamed in Proxmox (same tag): the new bridge takes the VNI on every node
    pve.apply("secure", {"blue": 100, "teal": 101})
    wait_until(lambda: all_have(nodes, "teal", "vs101") and none_have(nodes, "green", "x"),
               timeout=GRACE + 10, what="teal with vs101, no green, on every node")

    # the vnet removed in Proxmox goes on every node
    applied = pve.apply("secure", {"blue": 100})
    wait_until(lambda: none_have(nodes, "teal", "vs101"), timeout=GRACE + 10, interval=0.02,
               what="teal and vs101 gone on every node")
    removed = time.monotonic() - applied
    assert blue[2].ping(blue[0]), "blue keeps working"
    for d in daemons.values():
        d.check_log()
    print(f"vnet added in .running-config -> bridge and vs101 on all 3 nodes: {added:.2f} s "
          f"(target 2 s); transport secure -> plain devices on all nodes: {switched:.2f} s; "
          f"vnet removed -> gone on all nodes: {removed:.2f} s")


def test_refuses_a_zone_proxmox_built(make_cluster):
    """Proxmox's Apply also renders a VXLAN zone for ifupdown2; fabricd does not take it."""
    if not os.path.exists(IFRELOAD):
        pytest.skip("Debian's ifupdown2 is not installed")
    cluster = make_cluster(3)
    pve = FakePve(cluster)
    pve.apply("plain", {"blue": 100})
    pve1 = cluster.nodes[0]
    remotes = [n.underlay for n in cluster.nodes[1:]]
    proxmox_node(cluster, pve1, vxlan_vnet("blue", 100, remotes, 1450))
    before = pve1.links()
    d = Daemon(cluster, pve1, grace=GRACE, extra_args=["--sdn-dir", pve.sdn])
    d.start(wait_ready=False)
    rc = d.proc.wait(timeout=30)
    log = d.log()
    assert rc == 1, log
    assert "bridge blue: a link named blue exists that fabricd does not own" in log, log
    assert "already used by vxlan_blue, which fabricd does not own" in log, log
    assert pve1.links().keys() == before.keys(), "nothing was changed"
    assert pve1.link("vxlan_blue")["master"] == "blue"


def test_zone_mtus_are_judged_on_the_measured_underlay(make_cluster):
    """On a 9000 underlay a Proxmox zone's "mtu" below what the zone carries is kept (1400,
    8000), a zone without one gets the zone's own (8890 secure); nothing is compared with an
    assumed 1500 underlay (it dropped 1400 and 8000, saying to use an option apply does not
    take). On a 1500 underlay each is named by its Proxmox zone: a zone without "mtu"
    (Proxmox's guests at 1450) is told to set one, the others' "mtu" is above the zones'."""
    cluster = make_cluster(2, underlay_mtu=9000)
    pve = FakePve(cluster)
    peers = ",".join(n.underlay for n in cluster.nodes)
    pve.version += 1
    running = {"version": pve.version,
               "zones": {"ids": {"low": {"type": "vxlan", "fabric": "wgf", "mtu": 1400},
                                 "dflt": {"type": "vxlan", "fabric": "wgf"},
                                 "big": {"type": "vxlan", "peers": peers, "mtu": 8000}}},
               "vnets": {"ids": {"vlow": {"type": "vnet", "zone": "low", "tag": 10},
                                 "vdflt": {"type": "vnet", "zone": "dflt", "tag": 11},
                                 "vbig": {"type": "vnet", "zone": "big", "tag": 12}}},
               "subnets": {"ids": {}}, "controllers": {"ids": {}},
               "fabrics": {"ids": pve.fabrics()}}
    pve._replace(os.path.join(pve.sdn, ".running-config"), json.dumps(running))
    pve1 = cluster.nodes[0]
    res = pve1.fabricd("apply", "--sdn-dir", pve.sdn)
    assert res.rc == 0, res
    assert {b: pve1.link(b)["mtu"] for b in ("vlow", "vdflt", "vbig")} == \
        {"vlow": 1400, "vdflt": 8890, "vbig": 8000}
    assert "assuming" not in res.stderr and "--underlay-mtu" not in res.stderr, res.stderr
    assert "gives its guests" not in res.stderr, res.stderr
    assert pve1.fabricd("plan", "--sdn-dir", pve.sdn).rc == 0
    pve1.run(["ip", "link", "set", "eth0", "mtu", "1500"])
    res = pve1.fabricd("plan", "--sdn-dir", pve.sdn)
    assert res.rc == 2, res
    assert ("Proxmox zone dflt: it gives its guests MTU 1450 (no MTU set), "
            "above the 1390 zone \"dflt\" carries between nodes here") in res.stderr, res.stderr
    # stable: 1390 in either transport; a zone's own "mtu" above it is named by Proxmox's zone
    assert ("Proxmox zone low, mtu: 1400 is above what zone \"low\" can carry here, 1390 "
            "(underlay MTU 1500") in res.stderr, res.stderr
    assert "Proxmox zone big, mtu: 8000 is above" in res.stderr, res.stderr


def test_a_planning_warning_is_said_once_until_it_changes(make_cluster):
    """The daemon plans again at every change it sees: a warning of the definition's (here
    a zone whose guests' MTU is above what it carries) is said once, not at every pass
    (it came 11 times in 8 s of drift repairs), and again when it changes."""
    cluster = make_cluster(2)
    pve = FakePve(cluster)
    peers = ",".join(n.underlay for n in cluster.nodes)
    pve.version += 1
    running = {"version": pve.version, "zones": {"ids": {"dflt": {"type": "vxlan", "fabric": "wgf"}}},
               "vnets": {"ids": {"vdflt": {"type": "vnet", "zone": "dflt", "tag": 11}}},
               "subnets": {"ids": {}}, "controllers": {"ids": {}},
               "fabrics": {"ids": pve.fabrics()}}
    pve._replace(os.path.join(pve.sdn, ".running-config"), json.dumps(running))
    pve1 = cluster.nodes[0]
    d = Daemon(cluster, pve1, grace=GRACE, extra_args=["--sdn-dir", pve.sdn]).start()
    try:
        said = "gives its guests MTU 1450 (no MTU set), above the 1390"
        for mtu in (1300, 1200, 1350):  # three repairs, three passes
            pve1.run(["ip", "link", "set", "vdflt", "mtu", str(mtu)])
            wait_until(lambda: pve1.link("vdflt")["mtu"] == 1390, timeout=5, what="repaired")
        time.sleep(0.5)
        assert d.log().count(said) == 1, d.log()
        # the zone made plain: the same warning (stable: 1390 either way), not said again
        running["zones"]["ids"]["dflt"]["peers"] = peers
        del running["zones"]["ids"]["dflt"]["fabric"]
        pve.version += 1
        running["version"] = pve.version
        pve._replace(os.path.join(pve.sdn, ".running-config"), json.dumps(running))
        wait_until(lambda: pve1.link("vx11") is not None, timeout=10, what="plain now")
        assert d.log().count(said) == 1, d.log()
        # another one: said
        running["zones"]["ids"]["dflt"]["mtu"] = 1400
        pve.version += 1
        running["version"] = pve.version
        pve._replace(os.path.join(pve.sdn, ".running-config"), json.dumps(running))
        d.wait_log("Proxmox zone dflt, mtu: 1400 is above what zone", timeout=10)
    finally:
        d.stop()


def test_a_planning_warning_is_not_said_again_when_another_comes_and_goes(make_cluster):
    """A vnet renamed in Proxmox makes one pass warn that its VNI was the old vnet's; the
    zone's MTU warning, there all along, was said again with it and again at the pass
    after it (the warnings were one digest: any other coming or going said all again)."""
    cluster = make_cluster(2)
    pve = FakePve(cluster)
    pve.apply("secure", {"blue": 100, "green": 101})
    pve1 = cluster.nodes[0]
    d = Daemon(cluster, pve1, grace=GRACE, extra_args=["--sdn-dir", pve.sdn]).start()
    try:
        said = "Proxmox zone lab: it gives its guests MTU 1450 (no MTU set)"
        assert d.log().count(said) == 1, d.log()
        pve.apply("secure", {"blue": 100, "teal": 101})
        d.wait_log("teal: its VNI 101 was vnet green's", timeout=10)
        wait_until(lambda: has_vnet(pve1, "teal", "vs101") and "green" not in pve1.links(),
                   timeout=10, what="teal took VNI 101")
        pve1.run(["ip", "link", "set", "teal", "mtu", "1300"])  # one more pass, a repair
        wait_until(lambda: pve1.link("teal")["mtu"] == 1390, timeout=5, what="repaired")
        time.sleep(0.5)
        assert d.log().count(said) == 1, d.log()
    finally:
        d.stop()


def test_a_proxmox_warning_that_comes_back_is_said_again(make_cluster):
    """A node in corosync.conf but not in the WireGuard fabric is warned of; removed, then
    added again (pvecm delnode, pvecm add), it is warned of again: the warning's return
    was taken for the one said before and never said (the source kept only the last
    non-empty set of warnings)."""
    cluster = make_cluster(2)
    pve = FakePve(cluster)
    pve.apply("secure", {"blue": 100})
    corosync = os.path.join(pve.dir, "corosync.conf")
    good = open(corosync).read()
    extra = good.replace("nodelist {\n", "nodelist {\n  node {\n    name: pve9\n    nodeid: 9\n"
                         "    quorum_votes: 1\n    ring0_addr: 192.0.2.99\n  }\n", 1)
    d = Daemon(cluster, cluster.nodes[0], grace=GRACE, extra_args=["--sdn-dir", pve.sdn]).start()
    try:
        said = 'pve9: is in corosync.conf but not in WireGuard fabric "wgf"'
        for times in (1, 2):
            pve._replace(corosync, extra)  # pvecm add
            wait_until(lambda: d.log().count(said) == times, timeout=5,
                       what=f"the warning said {times} times")
            pve._replace(corosync, good)  # pvecm delnode: read at once (a rename)
            time.sleep(1)
        assert d.log().count(said) == 2, d.log()
    finally:
        d.stop()


def test_a_node_taken_out_of_the_fabric_is_told_the_down_that_works(make_cluster):
    """pve2 deleted from Proxmox's WireGuard fabric: its daemon keeps the last good state and
    says how to take it out, with the options that work here (--sdn-dir DIR): it said
    `fabricd down -c FILE`, and on Proxmox there is no such file."""
    cluster = make_cluster(2)
    pve = FakePve(cluster)
    pve.apply("secure", {"blue": 100})
    pve2 = cluster.nodes[1]
    d = Daemon(cluster, pve2, grace=GRACE, extra_args=["--sdn-dir", pve.sdn]).start()
    try:
        path = os.path.join(pve.sdn, ".running-config")
        running = json.load(open(path))
        del running["fabrics"]["ids"]["wgf_pve2"]
        running["fabrics"]["ids"]["wgf_pve1"]["peers"] = []
        running["version"] += 1
        pve._replace(path, json.dumps(running))
        log = d.wait_log("this node, pve2, is no longer in", timeout=10)
        assert f"run `fabricd down --sdn-dir {pve.sdn}`" in log, log
        assert "-c FILE" not in log, log
        assert has_vnet(pve2, "blue", "vs100"), "the last good state stays"
        d.stop()
        res = pve2.fabricd("down", "--sdn-dir", pve.sdn)  # what it said works
        assert res.rc == 0 and not pve2.owned_links(), res
    finally:
        d.stop()
