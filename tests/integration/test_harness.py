# SPDX-License-Identifier: GPL-2.0-or-later
"""Self-test of the fabtest harness: a mini-fabric built by hand, no fabricd.

Each node gets, with ip/wg/bridge commands, what fabricd would build for one
secure zone with vnet100 (VNI 100) on an IPv4 underlay with MTU 1500::

      sw-fdXXXX: br0 ------------------------------ capture: only UDP 51820
          |                          |
     eth0 192.0.2.11            eth0 192.0.2.12
     wgfab0 10.255.0.1/24 <=WG=> wgfab0 10.255.0.2/24   MTU 1440, wireguard-go
       vs100 (4790, local fabric addr, FDB 00:00.. -> peer fabric addr)
       vnet100 bridge, MTU 1390                 (1500 - 60 - 50)
          |                          |
     g1 10.0.0.1/24             g2 10.0.0.2/24  guests, MTU 1390

pve1's wireguard-go daemonizes (as fabricd may start it), pve2's runs in the
foreground under the harness; teardown must end both and leave nothing.
The same hand-built state also checks the expectation helpers that the
scenario tests use (assert_node_converged).
"""

import os

import pytest

from fabtest import (
    Capture,
    SimCluster,
    WaitTimeout,
    WgDump,
    assert_node_converged,
    json_subset,
    node_problems,
    wait_until,
    zone,
)

FABRIC_MTU = 1440  # 1500 - 60 (WireGuard over IPv4)
ZONE_MTU = 1390  # 1440 - 50 (VXLAN over IPv4)
ALIAS = "fabricd:fabtest"


def build_mini_fabric(cluster):
    """Build wgfab0 + vs100 + vnet100 by hand in every node; one guest per node."""
    nodes = cluster.nodes
    for node in nodes:
        if node.index == 1:
            node.run(["wireguard-go", "wgfab0"])  # daemonizes, like a service would
        else:
            node.run_bg(["wireguard-go", "wgfab0"], env={"WG_PROCESS_FOREGROUND": "1"})
        wait_until(lambda: node.run(["test", "-S", "/run/wireguard/wgfab0.sock"]),
                   what=f"{node.name}: wireguard-go control socket")
    for node in nodes:
        peers = [p for p in nodes if p is not node]
        wg_set = ["wg", "set", "wgfab0", "private-key", node.key_file, "listen-port", "51820"]
        for p in peers:
            wg_set += ["peer", p.public_key, "endpoint", f"{p.underlay}:51820",
                       "allowed-ips", f"{p.fabric_address}/32", "persistent-keepalive", "25"]
        node.run(wg_set)
        node.run(["ip", "addr", "add", f"{node.fabric_address}/24", "dev", "wgfab0"])
        node.run(["ip", "link", "set", "wgfab0", "mtu", str(FABRIC_MTU), "alias", ALIAS, "up"])
        node.run(["ip", "link", "add", "vs100", "type", "vxlan", "id", "100", "dstport", "4790",
                  "local", node.fabric_address, "nolearning"])
        for p in peers:
            node.run(["bridge", "fdb", "append", "00:00:00:00:00:00", "dev", "vs100",
                      "dst", p.fabric_address])
        node.run(["ip", "link", "add", "vnet100", "mtu", str(ZONE_MTU), "type", "bridge"])
        node.run(["ip", "link", "set", "vs100", "master", "vnet100", "mtu", str(ZONE_MTU),
                  "alias", ALIAS, "up"])
        node.run(["ip", "link", "set", "vnet100", "alias", ALIAS, "up"])
    return [cluster.add_guest(node, "vnet100", f"10.0.0.{node.index}/24") for node in nodes]


def mini_definition(cluster):
    return cluster.definition(zones=[zone("tenant-a", "secure", [("vnet100", 100)])])


@pytest.fixture(scope="module")
def mini_fabric(netns_env):
    with SimCluster(2) as cluster:
        guests = build_mini_fabric(cluster)
        wait_until(lambda: guests[0].ping(guests[1]), timeout=10, what="first ping g1 -> g2")
        yield cluster, guests


@pytest.mark.netns
@pytest.mark.wireguard
@pytest.mark.vxlan
class TestMiniFabric:
    def test_each_node_has_its_own_wireguard_socket(self, mini_fabric):
        cluster, _ = mini_fabric
        keys = set()
        for node in cluster.nodes:
            dump = node.wg_dump()
            assert dump is not None, f"{node.name}: wg show wgfab0 dump failed"
            assert dump.public_key == node.public_key
            assert set(dump.peers) == {p.public_key for p in cluster.nodes if p is not node}
            keys.add(dump.public_key)
        assert len(keys) == len(cluster.nodes)
        # the host's /run/wireguard is not where the nodes' sockets are
        host_sockets = os.listdir("/run/wireguard") if os.path.isdir("/run/wireguard") else []
        assert all(not s.startswith("wgfab0") for s in host_sockets), host_sockets

    def test_guests_ping_across_the_fabric(self, mini_fabric):
        _, (g1, g2) = mini_fabric
        assert g1.ping(g2, count=3)
        assert g2.ping(g1, count=3)

    def test_fabric_addresses_ping(self, mini_fabric):
        cluster, _ = mini_fabric
        res = cluster.nodes[0].run(["ping", "-c", "1", "-W", "2", cluster.nodes[1].fabric_address],
                                   check=False)
        assert res.returncode == 0, res.stdout + res.stderr

    def test_largest_unfragmented_ping_is_the_zone_mtu(self, mini_fabric):
        cluster, (g1, g2) = mini_fabric
        with cluster.capture() as underlay:
            biggest = g1.ping(g2, count=2, size=ZONE_MTU - 28, df=True)
        assert biggest, biggest.output
        assert underlay.fragment_count() == 0, underlay.summary()
        assert underlay.wireguard_count() >= 4, underlay.summary()
        too_big = g1.ping(g2, count=1, size=ZONE_MTU - 27, df=True)
        assert not too_big, too_big.output

    def test_secure_traffic_is_only_wireguard_on_the_underlay(self, mini_fabric):
        cluster, (g1, g2) = mini_fabric
        node1 = cluster.nodes[0]
        with cluster.capture() as underlay, node1.capture("wgfab0") as fabric:
            assert g1.ping(g2, count=5)
        assert underlay.vxlan_count() == 0, underlay.summary()
        assert underlay.secure_vxlan_count() == 0, underlay.summary()
        assert underlay.wireguard_count() >= 10, underlay.summary()
        not_wg = f"not ({Capture.WIREGUARD}) and not ({Capture.HOUSEKEEPING})"
        assert underlay.count(not_wg) == 0, underlay.summary()
        # inside the fabric the same traffic is secure VXLAN, VNI 100
        assert fabric.secure_vxlan_count() >= 10, fabric.summary()
        assert underlay.stats.get("dropped by kernel") == 0

    def test_expectation_helpers_accept_the_hand_built_nodes(self, mini_fabric):
        cluster, _ = mini_fabric
        definition = mini_definition(cluster)
        for node in cluster.nodes:
            assert_node_converged(node, definition, zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU)

    def test_expectation_helpers_report_differences(self, mini_fabric):
        cluster, _ = mini_fabric
        node = cluster.nodes[0]
        definition = mini_definition(cluster)
        definition["zones"][0]["vnets"].append({"name": "vnet101", "vni": 101})
        problems = node_problems(node, definition, zone_mtu=1400, fabric_mtu=1420)
        text = "\n".join(problems)
        assert "vnet100: MTU 1390, expected 1400" in text
        assert "wgfab0: MTU 1440, expected 1420" in text
        assert "vs101: missing" in text and "vnet101: missing" in text
        with pytest.raises(AssertionError, match="vnet101"):
            assert_node_converged(node, definition, zone_mtu=ZONE_MTU)

    def test_processes_are_known(self, mini_fabric):
        cluster, _ = mini_fabric
        names = [name for _pid, name in cluster.processes()]
        assert names.count("wireguard-go") == 2, cluster.processes()


@pytest.mark.netns
@pytest.mark.wireguard
@pytest.mark.vxlan
def test_teardown_leaves_nothing_behind(netns_env):
    host_wg = sorted(os.listdir("/run/wireguard")) if os.path.isdir("/run/wireguard") else None
    cluster = SimCluster(2)
    try:
        guests = build_mini_fabric(cluster)
        cluster.add_node()  # a late node is torn down too
        wait_until(lambda: guests[0].ping(guests[1]), timeout=10)
        running = cluster.capture()
        running.start()  # left running on purpose: teardown must stop it
        pids = [pid for pid, _ in cluster.processes()]
        names = sorted(name for _, name in cluster.processes())
        assert names == ["tcpdump", "wireguard-go", "wireguard-go"], names
        namespaces = list(cluster._netns)
        assert len(namespaces) == 1 + 3 + 2  # switch, nodes, guests
    finally:
        cluster.close()
    assert cluster.leftovers() == []
    alive = [p for p in pids if os.path.exists(f"/proc/{p}") and _not_zombie(p)]
    assert alive == [], f"processes of the cluster still running: {alive}"
    remaining = set(os.listdir("/run/netns")) & set(namespaces)
    assert remaining == set()
    with open("/proc/self/mountinfo") as f:
        assert cluster.suffix not in f.read()
    now_wg = sorted(os.listdir("/run/wireguard")) if os.path.isdir("/run/wireguard") else None
    assert now_wg == host_wg
    cluster.close()  # idempotent


@pytest.mark.netns
@pytest.mark.skipif(not os.path.isdir("/etc/network/interfaces.d"),
                    reason="no /etc/network/interfaces.d on this machine")
def test_each_node_has_its_own_ifupdown_directory(netns_env):
    """fabricd's default --ifupdown-file is /etc/network/interfaces.d/fabricd: what one
    node writes there is neither the machine's nor another node's (the nodes of
    concurrent runs wrote and removed the machine's file)."""
    cluster = SimCluster(2)
    name = f"fabtest-{cluster.suffix}"
    path = f"/etc/network/interfaces.d/{name}"
    try:
        pve1, pve2 = cluster.nodes
        pve1.run(["sh", "-c", f"echo pve1 > {path}"])
        assert pve1.run(["cat", path]).stdout == "pve1\n"
        assert not os.path.exists(path), "written into the machine's /etc"
        assert pve2.run(["test", "-e", path], check=False).returncode != 0, "pve2 sees pve1's file"
    finally:
        cluster.close()
        if os.path.exists(path):
            os.unlink(path)
    assert cluster.leftovers() == []


def _not_zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# --- pure helpers: no root needed ---------------------------------------------


def test_json_subset_matches_subsets():
    actual = {"ifname": "vnet100", "mtu": 1390, "flags": ["UP", "LOWER_UP"],
              "linkinfo": {"info_kind": "bridge", "info_data": {"stp_state": 0}}}
    assert json_subset({"mtu": 1390, "linkinfo": {"info_kind": "bridge"}}, actual) == []
    assert json_subset({"flags": ["LOWER_UP"], "ifname": "*"}, actual) == []
    assert json_subset({"master": None}, actual) == []


def test_json_subset_reports_each_difference():
    actual = {"mtu": 1500, "flags": ["UP"], "master": "br0"}
    diffs = json_subset({"mtu": 1390, "flags": ["UP", "LOWER_UP"], "alias": "*", "master": None}, actual)
    assert "$.mtu: expected 1390, got 1500" in diffs
    assert "$.flags[1]: no element matches \"LOWER_UP\"" in diffs
    assert any(d.startswith("$.alias: missing") for d in diffs)
    assert any(d.startswith("$.master: expected absent") for d in diffs)
    # one actual element cannot satisfy two expected ones
    assert json_subset([{"a": 1}, {"a": 1}], [{"a": 1, "b": 2}]) != []
    assert json_subset([{"a": 1}, {"b": 2}], [{"a": 1, "b": 2}, {"b": 2}]) == []
    assert json_subset(True, 1) != []


def test_wait_until_returns_the_value_and_reports_the_last_failure():
    calls = []

    def third_time():
        calls.append(1)
        assert len(calls) >= 3, f"only {len(calls)} calls"
        return "ready"

    assert wait_until(third_time, timeout=2, interval=0.001) == "ready"
    with pytest.raises(WaitTimeout, match="never: not true after 0.05 s.*last failure: nope"):
        wait_until(lambda: (_ for _ in ()).throw(AssertionError("nope")), timeout=0.05,
                   interval=0.01, what="never")


def test_wg_dump_parser():
    text = ("PRIV\tPUB1\t51820\toff\n"
            "PUB2\t(none)\t192.0.2.12:51820\t10.255.0.2/32\t1700000000\t2212\t2144\t25\n"
            "PUB3\t(none)\t(none)\t(none)\t0\t0\t0\toff\n")
    dump = WgDump.parse(text)
    assert dump.public_key == "PUB1" and dump.listen_port == 51820
    assert dump.peers["PUB2"].endpoint == "192.0.2.12:51820"
    assert dump.peers["PUB2"].allowed_ips == ["10.255.0.2/32"]
    assert dump.peers["PUB2"].rx_bytes == 2212 and dump.peers["PUB2"].keepalive == "25"
    assert dump.peers["PUB3"].allowed_ips == [] and dump.peers["PUB3"].keepalive == "off"
