# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: the zone MTU is exactly what the fabric carries, unfragmented.

Two nodes, one plain zone (vnet100) and one secure zone (vnet200), stable
MTU policy, on three underlays (numbers from DESIGN.md "MTU")::

    underlay            wgfab0   plain max  secure max  zone (stable)
    IPv4, MTU 1500      1440     1450       1390        1390
    IPv6, MTU 1500      1420     1430       1370        1370   (IPv4 fabric)
    IPv4, MTU 9000      8940     8950       8890        8890

         sw: br0 (MTU = underlay) <- capture: no IP fragments
           |                  |
         pve1               pve2
    vnet100: p1  ------  p2     plain,  guests' MTU = the bridge's
    vnet200: s1  ------  s2     secure, guests' MTU = the bridge's

The guests take the MTU of the bridge fabricd built, as a hypervisor gives
a VM's tap the bridge's MTU. `ping -M do -s (zone MTU - 28)` must then
arrive whole, without an IP fragment on the underlay (nor, for secure,
inside the fabric device, where fragmenting would stay hidden in
WireGuard), and one byte more must not pass: together, the guests see
exactly the zone MTU and the fabric carries all of it. The underlay
MTU is not written into the definition: fabricd finds it from the route to
the peers.
"""

import pytest

from fabtest import Capture, SimCluster, assert_node_converged, wait_until, zone

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

UNDERLAYS = [
    pytest.param({"family": 4, "underlay_mtu": 1500, "fabric_mtu": 1440, "zone_mtu": 1390},
                 id="ipv4-1500"),
    pytest.param({"family": 6, "underlay_mtu": 1500, "fabric_mtu": 1420, "zone_mtu": 1370},
                 id="ipv6-1500"),
    pytest.param({"family": 4, "underlay_mtu": 9000, "fabric_mtu": 8940, "zone_mtu": 8890},
                 id="ipv4-9000", marks=pytest.mark.slow),
]

UNSHARED = "fabric.underlay_mtu is not set"

TRANSPORTS = [
    pytest.param("plain", id="plain"),
    pytest.param("secure", id="secure"),
]

ZONES = [
    zone("tenant-plain", "plain", [("vnet100", 100)]),
    zone("tenant-secure", "secure", [("vnet200", 200)]),
]
BRIDGE = {"plain": "vnet100", "secure": "vnet200"}
CARRIER = {"plain": Capture.VXLAN, "secure": Capture.WIREGUARD}


class MtuFabric:
    def __init__(self, cluster, definition, expected):
        self.cluster = cluster
        self.definition = definition
        self.fabric_mtu = expected["fabric_mtu"]
        self.zone_mtu = expected["zone_mtu"]
        self.family = expected["family"]
        self.guests = {}

    def pair(self, transport):
        return self.guests[(transport, "pve1")], self.guests[(transport, "pve2")]


@pytest.fixture(scope="module", params=UNDERLAYS)
def mtu_fabric(request, cluster_options):
    expected = request.param
    with SimCluster(2, family=expected["family"], underlay_mtu=expected["underlay_mtu"],
                    **cluster_options) as cluster:
        definition = cluster.definition(zones=ZONES)
        cluster.apply_all(cluster.write_definition(definition))
        fabric = MtuFabric(cluster, definition, expected)
        for transport, bridge in BRIDGE.items():
            for node in cluster.nodes:
                fabric.guests[(transport, node.name)] = cluster.add_guest(
                    node, bridge, f"10.0.{node.index}.{1 if transport == 'plain' else 2}/16",
                    name=f"{transport[0]}{node.index}")
        yield fabric


def test_nodes_have_the_computed_mtus(mtu_fabric):
    for node in mtu_fabric.cluster.nodes:
        assert node.link("wgfab0")["mtu"] == mtu_fabric.fabric_mtu
        for bridge in BRIDGE.values():
            assert node.link(bridge)["mtu"] == mtu_fabric.zone_mtu, f"{node.name} {bridge}"
        assert_node_converged(node, mtu_fabric.definition, zone_mtu=mtu_fabric.zone_mtu,
                              fabric_mtu=mtu_fabric.fabric_mtu)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_largest_packet_crosses_unfragmented(mtu_fabric, transport):
    cluster = mtu_fabric.cluster
    src, dst = mtu_fabric.pair(transport)
    size = mtu_fabric.zone_mtu - 28
    # small pings first: ARP, and for secure the WireGuard handshake
    wait_until(lambda: src.ping(dst), timeout=10, what=f"{transport}: {src.name} -> {dst.name}")
    sender = cluster["pve1"]
    with cluster.capture() as underlay, sender.capture("wgfab0") as fabric:
        result = src.ping(dst, count=3, size=size, df=True)
    assert result, f"ping -M do -s {size} failed:\n{result.output}"
    assert underlay.fragment_count() == 0, underlay.summary()
    assert underlay.count(CARRIER[transport]) >= 6, underlay.summary()
    if transport == "secure":
        # (the plain zone's bridges may send IPv6 housekeeping on 4789 meanwhile)
        assert underlay.secure_vxlan_count() == 0, underlay.summary()
        assert not [p for p in underlay.packets(Capture.VXLAN) if "vni 200" in p], underlay.summary()
        assert fabric.fragment_count() == 0, fabric.summary()
        assert fabric.secure_vxlan_count() >= 6, fabric.summary()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_one_byte_more_does_not_pass(mtu_fabric, transport):
    src, dst = mtu_fabric.pair(transport)
    wait_until(lambda: src.ping(dst), timeout=10, what=f"{transport}: {src.name} -> {dst.name}")
    size = mtu_fabric.zone_mtu - 27
    result = src.ping(dst, count=1, size=size, df=True)
    assert not result, f"ping -M do -s {size} should not fit the zone MTU:\n{result.output}"


@pytest.mark.backend_neutral  # a plain zone: routes measured
def test_a_smaller_measured_underlay_lowers_an_mtu_override(make_cluster):
    """A zone's "mtu" may only lower its MTU; when the underlay measured on a node is
    smaller than the file assumed, that node builds what its underlay carries (with a
    warning naming the key) instead of refusing: a refusal would leave a jumbo fabric on
    a small link, which is the black hole this is about."""
    cluster = make_cluster(2)
    zones = [zone("tenant-plain", "plain", [("vnet100", 100)], mtu=1390)]
    path = cluster.write_definition(cluster.definition(zones=zones))
    for res in cluster.apply_all(path).values():
        assert UNSHARED not in res.stderr, res  # 1500 everywhere: the nodes agree
    pve1 = cluster.node("pve1")
    assert pve1.link("vnet100")["mtu"] == 1390
    pve1.run(["ip", "link", "set", "eth0", "mtu", "1400"])
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 0, res
    assert "warning: zones[0].mtu: 1390 is above what zone \"tenant-plain\" can carry here, " \
        "1290 (underlay MTU 1400" in res.stderr, res
    # pve2 still builds 1390: said on the node that measured something else
    assert f"warning: {UNSHARED}, and this node's underlay carries 1400 bytes" in res.stderr, res
    assert pve1.link("vnet100")["mtu"] == 1290 and pve1.link("wgfab0")["mtu"] == 1340
    res = pve1.fabricd("plan", "-c", path)
    assert res.rc == 0 and UNSHARED in res.stderr, res
    # given in the file, every node builds the same: nothing to say
    path = cluster.write_definition(cluster.definition(zones=[dict(zones[0], mtu=1290)],
                                                       underlay_mtu=1400), path)
    for res in cluster.apply_all(path).values():
        assert UNSHARED not in res.stderr, res
    assert [n.link("vnet100")["mtu"] for n in cluster.nodes] == [1290, 1290]


@pytest.mark.backend_neutral  # bridges' MTUs and what apply says
def test_apply_says_when_a_bridge_mtu_goes_down(make_cluster):
    """An mtu_policy "max" zone switched to secure: its bridges go from 1450 to 1390, and
    guests learn no MTU by themselves. The daemon warns per zone; a one-shot apply must
    say it too (it printed only its counts)."""
    cluster = make_cluster(2)
    plain = cluster.write_definition(cluster.definition(
        zones=[zone("red", "plain", [("vnet100", 100), ("vnet101", 101)], mtu_policy="max")]))
    for res in cluster.apply_all(plain).values():
        assert "MTU" not in res.stderr, res
    pve1 = cluster.node("pve1")
    assert pve1.link("vnet100")["mtu"] == 1450
    secure = cluster.write_definition(cluster.definition(
        zones=[zone("red", "secure", [("vnet100", 100), ("vnet101", 101)], mtu_policy="max")]),
        f"{cluster.tmpdir}/secure.json")
    res = pve1.fabricd("apply", "-c", secure)
    assert res.rc == 0, res
    assert "warning: pve1: the MTU of 2 vnet bridges goes down (vnet100 and others: 1450 -> " \
        "1390): their guests must lower theirs to match" in res.stderr, res
    assert pve1.link("vnet100")["mtu"] == 1390
    # and back: up again (it said nothing), once the secure device is gone (--grace 0)
    res = pve1.fabricd("apply", "-c", plain, "--grace", "0")
    assert res.rc == 0 and "the MTU of 2 vnet bridges goes up (vnet100 and others: 1390 -> " \
        "1450): their guests may raise theirs to match" in res.stderr, res
    assert pve1.link("vnet100")["mtu"] == 1450


@pytest.mark.backend_neutral  # a plain zone: routes measured
def test_a_given_underlay_mtu_above_what_a_path_carries_is_said(make_cluster):
    """fabric.underlay_mtu is trusted, but 9000 written for links of 1500 gave 8890-byte
    zones whose plain VXLAN lost every large frame without a word; the node's routes
    tell, so apply says it (once a process), naming the narrow path and the value to use."""
    cluster = make_cluster(2)
    zones = [zone("red", "plain", [("vnet100", 100)])]
    path = cluster.write_definition(cluster.definition(zones=zones, underlay_mtu=9000))
    for name, res in cluster.apply_all(path).items():
        other = "pve2 (192.0.2.12)" if name == "pve1" else "pve1 (192.0.2.11)"
        assert f"warning: fabric.underlay_mtu is 9000, but this node's route to node {other} " \
            "carries 1500 bytes" in res.stderr and "lower fabric.underlay_mtu to 1500" in \
            res.stderr, res
    # the file's value is what is built: a warning, not a refusal
    assert cluster.node("pve1").link("vnet100")["mtu"] == 8890  # stable: 9000 - 60 - 50
    # a value the path carries is not said; nor is a smaller one (a choice)
    for mtu in (1500, 1400):
        path = cluster.write_definition(cluster.definition(zones=zones, underlay_mtu=mtu), path)
        for res in cluster.apply_all(path).values():
            assert "underlay_mtu is" not in res.stderr, res


def test_a_narrower_route_to_an_endpoint_lowers_the_fabric(make_cluster):
    """WireGuard sends to a node's endpoint, not to its underlay address: the underlay MTU
    is the smallest of the routes to both (wg-quick measures per endpoint). Only the
    underlay's route was asked, so a 1400-byte path to pve2's endpoint left pve1's wgfab0
    at 1440, and WireGuard's largest packets (1500 bytes) were fragmented on it."""
    cluster = make_cluster(2)
    pve1, pve2 = cluster.nodes
    pve2.run(["ip", "addr", "add", "198.51.100.12/32", "dev", "eth0"])
    pve1.run(["ip", "route", "add", "198.51.100.12/32", "dev", "eth0", "mtu", "1400"])
    zones = [zone("blue", "secure", [("vnet200", 200)])]
    definition = cluster.definition(zones=zones)
    definition["nodes"][1]["endpoint"] = "198.51.100.12:51820"
    path = cluster.write_definition(definition)
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 0 and f"{UNSHARED}, and this node's underlay carries 1400" in res.stderr, res
    assert pve1.link("wgfab0")["mtu"] == 1340 and pve1.link("vnet200")["mtu"] == 1290
    # given larger than that path carries: said, naming the endpoint's address
    definition["fabric"]["underlay_mtu"] = 1500
    res = pve1.fabricd("apply", "-c", cluster.write_definition(definition, path))
    assert res.rc == 0 and "warning: fabric.underlay_mtu is 1500, but this node's route to " \
        "node pve2 (198.51.100.12) carries 1400 bytes" in res.stderr, res


@pytest.mark.backend_neutral  # how a name resolves and which route it takes
def test_a_narrower_route_to_an_endpoint_given_by_name_lowers_the_fabric(make_cluster):
    """The same with the endpoint given as a host name: it was resolved after the MTU was
    measured, so its route was never asked and wgfab0 stayed at 1440. Names are resolved
    first now, and the route to the address the name has is measured."""
    cluster = make_cluster(2)
    pve1, pve2 = cluster.nodes
    hosts = f"{cluster.tmpdir}/pve1-hosts"
    with open(hosts, "w") as f:
        f.write("127.0.0.1 localhost\n198.51.100.12 pve2.mtu.test\n")
    pve1.run(["mount", "--bind", hosts, "/etc/hosts"])  # pve1's own mount namespace
    pve2.run(["ip", "addr", "add", "198.51.100.12/32", "dev", "eth0"])
    pve1.run(["ip", "route", "add", "198.51.100.12/32", "dev", "eth0", "mtu", "1400"])
    definition = cluster.definition(zones=[zone("blue", "secure", [("vnet200", 200)])])
    definition["nodes"][1]["endpoint"] = "pve2.mtu.test:51820"
    res = pve1.fabricd("apply", "-c", cluster.write_definition(definition))
    assert res.rc == 0 and f"{UNSHARED}, and this node's underlay carries 1400" in res.stderr, res
    assert pve1.link("wgfab0")["mtu"] == 1340 and pve1.link("vnet200")["mtu"] == 1290
    assert "198.51.100.12:51820" in pve1.run(["wg", "show", "wgfab0", "endpoints"]).stdout


def test_a_guest_port_with_a_smaller_mtu_does_not_lower_the_bridge(make_cluster):
    """A bridge follows its smallest port's MTU until its MTU is changed; one given at
    creation does not count. A guest's 1200-byte port took a new vnet bridge to 1200: the
    next guests got 1200 from it and plan showed a change nobody had made."""
    cluster = make_cluster(2)
    path = cluster.write_definition(cluster.definition(
        zones=[zone("red", "plain", [("vnet100", 100)]), zone("blue", "secure", [("vnet200", 200)])]))
    pve1 = cluster.node("pve1")
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 0, res
    for bridge in ("vnet100", "vnet200"):
        cluster.add_guest(pve1, bridge, "10.9.0.1/24", mtu=1200)
        assert pve1.link(bridge)["mtu"] == 1390, pve1.link(bridge)
    res = pve1.fabricd("plan", "-c", path)
    assert res.rc == 0 and "nothing to change" in res.stdout, res
