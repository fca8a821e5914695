# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: changing the definition changes only what changed; down cleans up.

Each test builds its own cluster (they change it); standard_zones()::

                       sw: br0
          +--------------+--------------+ . . . . . . +
        pve1           pve2           pve3          pve4 (added by one test)
   tenant-plain   vnet100 vnet101 on every node            (plain)
   tenant-secure  vnet200 vnet201 on every node            (secure)
   tenant-pair    vnet300 on pve1 and pve2 only            (secure)

"Keeps" below means: same ifindex (the link was not re-created) and, for
WireGuard peers, the same session (handshake time and byte counters only
grow; re-adding a peer would zero them).
"""

import json
import os
import shutil
import time
import signal

import pytest

from fabtest import assert_node_converged, vnet, wait_until, zone
from fabtest.daemon import Daemon
from fabtest.scenario import assert_sessions_kept, peer_sessions, standard_zones, warm_sessions

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

FABRIC_MTU = 1440
ZONE_MTU = 1390
ALL_FABRICD_KINDS = ("wgfab0", "vx", "vs", "vnet")


def applied(cluster, zones=None, nodes=None, name="cluster.json"):
    """Write a definition (standard zones by default), apply it on its nodes."""
    definition = cluster.definition(zones=standard_zones() if zones is None else zones, nodes=nodes)
    path = cluster.write_definition(definition, f"{cluster.tmpdir}/{name}")
    cluster.apply_all(path, nodes=nodes)
    return definition, path


def snapshot(nodes):
    """{node: (ifindexes, wg sessions)} after warming every session."""
    warm_sessions(nodes)
    return {n.name: (n.ifindexes(), peer_sessions(n)) for n in nodes}


def fabricd_links(node):
    return sorted(name for name in node.links() if name.startswith(ALL_FABRICD_KINDS))


def wireguard_go_processes(node):
    return [(pid, name) for pid, name in node.processes() if name == "wireguard-go"]


def test_plan_lists_changes_and_touches_nothing(make_cluster):
    cluster = make_cluster(2)
    definition = cluster.definition(zones=standard_zones())
    path = cluster.write_definition(definition)
    for node in cluster.nodes:
        before = node.ifindexes()
        res = node.fabricd("plan", "-c", path)
        assert res.rc == 2, f"{node.name}: plan on a bare node must find changes: {res}"
        for name in ("wgfab0", "vnet100", "vnet200", "vnet300"):
            assert name in res.stdout, f"{node.name}: plan does not mention {name}:\n{res.stdout}"
        assert node.ifindexes() == before, f"{node.name}: plan changed links"
        assert wireguard_go_processes(node) == []


# a vnet's bridge and VXLAN devices; that WireGuard is left alone by a change that is not
# its own is the same planning for both backends, and a kernel wgfab0 read back unchanged
# is test_apply_basic's reapply case (the QEMU tier runs it)
@pytest.mark.backend_neutral
def test_adding_a_vnet_touches_only_that_vnet(make_cluster):
    cluster = make_cluster(3)
    definition, path = applied(cluster)
    before = snapshot(cluster.nodes)

    zones = standard_zones()
    zones[0]["vnets"].append(vnet("vnet102", 102))
    definition = cluster.definition(zones=zones)
    path = cluster.write_definition(definition, path)
    for node in cluster.nodes:
        res = node.fabricd("plan", "-c", path)
        assert res.rc == 2 and "vnet102" in res.stdout, f"{node.name}: {res}"
    cluster.apply_all(path)

    for node in cluster.nodes:
        ifindexes, sessions = before[node.name]
        now = node.ifindexes()
        assert {k: now.get(k) for k in ifindexes} == ifindexes, f"{node.name}: other links re-created"
        # a plain vnet: its bridge, vx102 and the mute standby vs102
        assert set(now) - set(ifindexes) == {"vnet102", "vx102", "vs102"}
        assert_sessions_kept(node, sessions, peer_sessions(node))
        assert_node_converged(node, definition, zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU)
        assert node.fabricd("plan", "-c", path).rc == 0


@pytest.mark.backend_neutral  # as the case above
def test_removing_a_vnet_removes_its_bridge_and_vxlan(make_cluster):
    cluster = make_cluster(3)
    definition, path = applied(cluster)
    before = snapshot(cluster.nodes)

    zones = standard_zones()
    zones[0]["vnets"] = [v for v in zones[0]["vnets"] if v["name"] != "vnet101"]
    definition = cluster.definition(zones=zones)
    cluster.write_definition(definition, path)
    cluster.apply_all(path)

    for node in cluster.nodes:
        ifindexes, sessions = before[node.name]
        now = node.ifindexes()
        gone = ("vnet101", "vx101", "vs101")  # the bridge, the device, its standby
        assert not set(gone) & set(now), f"{node.name}: {sorted(now)}"
        kept = {k: v for k, v in ifindexes.items() if k not in gone}
        assert {k: now.get(k) for k in kept} == kept, f"{node.name}: other links re-created"
        assert_sessions_kept(node, sessions, peer_sessions(node))
        assert_node_converged(node, definition, zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU)


@pytest.mark.slow
def test_adding_a_node(make_cluster):
    cluster = make_cluster(3)
    applied(cluster)
    old_nodes = list(cluster.nodes)
    before = snapshot(old_nodes)

    pve4 = cluster.add_node()
    definition, path = applied(cluster, name="four.json")

    for node in old_nodes:
        ifindexes, sessions = before[node.name]
        dump = node.wg_dump()
        assert pve4.public_key in dump.peers, f"{node.name}: no peer for pve4"
        assert_sessions_kept(node, sessions, peer_sessions(node))
        now = node.ifindexes()
        assert {k: now.get(k) for k in ifindexes} == ifindexes, f"{node.name}: links re-created"
        assert_node_converged(node, definition, zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU)
    assert_node_converged(pve4, definition, zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU)
    assert "vnet300" not in pve4.links()
    assert pve4.underlay in cluster["pve1"].fdb_remotes("vx100")
    assert pve4.fabric_address in cluster["pve1"].fdb_remotes("vs200")

    for bridge, prefix in (("vnet100", "10.0.100"), ("vnet200", "10.0.200")):
        new = cluster.add_guest(pve4, bridge, f"{prefix}.4/24")
        old = cluster.add_guest("pve1", bridge, f"{prefix}.1/24")
        wait_until(lambda: new.ping(old), timeout=10, what=f"{bridge}: pve4 -> pve1")


@pytest.mark.slow
def test_removing_a_node(make_cluster):
    cluster = make_cluster(3)
    _, old_path = applied(cluster, name="three.json")
    pve1, pve2, pve3 = cluster.nodes
    guests = [cluster.add_guest(n, "vnet200", f"10.0.0.{n.index}/24") for n in (pve1, pve2)]
    before = snapshot(cluster.nodes)

    definition, path = applied(cluster, nodes=["pve1", "pve2"], name="two.json")

    for node in (pve1, pve2):
        dump = node.wg_dump()
        assert pve3.public_key not in dump.peers, f"{node.name}: pve3's peer is still there"
        sessions = {k: v for k, v in before[node.name][1].items() if k != pve3.public_key}
        assert_sessions_kept(node, sessions, peer_sessions(node))
        for dev in ("vx100", "vx101"):
            assert pve3.underlay not in node.fdb_remotes(dev), f"{node.name} {dev}"
        for dev in ("vs200", "vs201"):
            assert pve3.fabric_address not in node.fdb_remotes(dev), f"{node.name} {dev}"
        assert_node_converged(node, definition, zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU)
    wait_until(lambda: guests[0].ping(guests[1]), timeout=10, what="pve1 -> pve2 after removing pve3")

    # the removed node's operator takes it down with the definition it had
    res = pve3.fabricd("down", "-c", old_path)
    assert res.rc == 0, str(res)
    assert pve3.owned_links() == []


def learned_to(node, dev, address):
    """MACs dev learned to remote address (its own table, not all-zeros, not permanent)."""
    return [e["mac"] for e in node.fdb(dev)
            if e.get("dst") == address and e.get("mac") != "00:00:00:00:00:00"
            and e.get("state") != "permanent"]


def test_a_node_that_moves_takes_the_macs_learned_behind_it(make_cluster):
    """pve3 moves to another underlay address. pve1's vx100 had learned g3's MAC
    behind the old address; with that entry left, g1's unicast to g3 kept going to
    the old address (a stranger's, perhaps) until it aged out (300 s) or g1's ARP
    expired (about 30 s here). apply removes it with the old remote."""
    cluster = make_cluster(3)
    zones = [{"name": "red", "transport": "plain", "vnets": [vnet("vnet100", 100)]}]
    definition, path = applied(cluster, zones=zones)
    pve1, pve2, pve3 = cluster.nodes
    g1 = cluster.add_guest(pve1, "vnet100", "10.0.0.1/24")
    g3 = cluster.add_guest(pve3, "vnet100", "10.0.0.3/24")
    wait_until(lambda: g1.ping(g3), timeout=10, what="g1 -> g3")
    old = pve3.underlay
    g3_mac = json.loads(g3.run(["ip", "-j", "link", "show", "eth0"]).stdout)[0]["address"]
    wait_until(lambda: g3_mac in learned_to(pve1, "vx100", old), timeout=5,
               what=f"pve1's vx100 learning g3's MAC behind {old}")

    new = "192.0.2.23"
    pve3.run(["ip", "addr", "del", f"{old}/24", "dev", "eth0"])
    pve3.run(["ip", "addr", "add", f"{new}/24", "dev", "eth0"])
    pve3.underlay = new
    definition = cluster.definition(zones=zones)
    path = cluster.write_definition(definition, path)
    cluster.apply_all(path)

    assert learned_to(pve1, "vx100", old) == [], pve1.run(["bridge", "fdb", "show"]).stdout
    assert set(pve1.fdb_remotes("vx100")) == {pve2.underlay, new}
    # g1 still knows g3's MAC (its ARP entry did not expire): the unicast floods
    # to the remotes now, reaches pve3 at its new address, and is learned there
    assert g1.ping(g3, count=3, timeout=4), "g1 -> g3 right after the move"
    wait_until(lambda: g3_mac in learned_to(pve1, "vx100", new), timeout=5,
               what=f"pve1's vx100 learning g3's MAC behind {new}")
    for node in cluster.nodes:
        res = node.fabricd("plan", "-c", path)
        assert res.rc == 0, f"{node.name}: {res}"


@pytest.mark.backend_neutral
def test_a_switch_keeps_the_learned_macs_of_the_device_it_mutes(make_cluster):
    """plain -> secure removes vx100's remotes and mutes it later in the same pass; its
    learned MACs must stay until then, or the bridge's unicast to vx100 is lost in between
    (a few echoes a switch at 150 vnets, when they were taken with the remotes)."""
    cluster = make_cluster(2)
    zones = [{"name": "red", "transport": "plain", "vnets": [vnet("vnet100", 100)]}]
    _, path = applied(cluster, zones=zones)
    pve1, pve2 = cluster.nodes
    g1 = cluster.add_guest(pve1, "vnet100", "10.0.0.1/24")
    g2 = cluster.add_guest(pve2, "vnet100", "10.0.0.2/24")
    wait_until(lambda: g1.ping(g2), timeout=10, what="g1 -> g2")
    g2_mac = json.loads(g2.run(["ip", "-j", "link", "show", "eth0"]).stdout)[0]["address"]
    assert g2_mac in learned_to(pve1, "vx100", pve2.underlay)
    secure = cluster.write_definition(cluster.definition(zones=[dict(zones[0], transport="secure")]),
                                      f"{cluster.tmpdir}/secure.json")
    res = pve1.fabricd("apply", "-c", secure, "--grace", "30", "--verbose")
    assert res.rc == 0, res
    assert "learned MAC address" not in res.stderr, res.stderr
    assert g2_mac in learned_to(pve1, "vx100", pve2.underlay), "taken before vx100 was muted"
    assert g1.ping(g2, count=3, timeout=4), "g1 -> g2 after pve1's switch"


def test_down_and_status_need_no_wireguard_to_use(make_cluster):
    """wireguard-go gone from the node (it is only Recommended) and no module: apply
    refuses, but status still reports and down still removes everything, wgfab0 too
    (its wireguard-go is ended by its PID file, not found on PATH)."""
    cluster = make_cluster(2)
    if cluster.wg_backend != "userspace":
        pytest.skip("with kernel WireGuard (the QEMU tier) apply has a backend without PATH")
    definition, _ = applied(cluster)
    pve1 = cluster.nodes[0]
    without = ["env", "PATH=/nonexistent", cluster.fabricd_bin]
    options = ["-c", f"{cluster.tmpdir}/cluster.json", "-n", pve1.name,
               "--wg-backend", cluster.wg_backend]
    key = ["--key-file", pve1.key_file]  # down reads no key, and refuses the option
    res = pve1.run(without + ["apply"] + options + key, check=False)
    assert res.returncode == 1 and "wireguard-go is not installed" in res.stderr, res
    res = pve1.run(without + ["status"] + options + key, check=False)
    assert res.returncode == 0, res
    assert "warning: fabric wgfab0: wireguard-go is not installed" in res.stderr, res
    assert "wgfab0" in res.stdout, res
    res = pve1.run(without + ["down"] + options, check=False)
    assert res.returncode == 0, res
    assert pve1.owned_links() == [] and wireguard_go_processes(pve1) == []


def test_an_explicit_backend_other_than_the_devices_is_refused(make_cluster):
    """A kernel wgfab0 and `--wg-backend userspace` (or the reverse): fabricd used to
    keep the device and say "nothing to change", so the operator believed the fabric
    had moved. Replacing it drops every session: refused, with the way to do it."""
    cluster = make_cluster(2)
    definition, path = applied(cluster)
    pve1 = cluster.nodes[0]
    kind = pve1.link("wgfab0")["linkinfo"]["info_kind"]
    if kind != "wireguard" or not shutil.which("wireguard-go"):
        pytest.skip("needs a kernel wgfab0 and wireguard-go (the QEMU tier)")
    before = pve1.ifindexes()
    options = ["-c", path, "-n", pve1.name, "--key-file", pve1.key_file]
    for command in ("plan", "apply"):
        res = pve1.fabricd(command, *options, "--wg-backend", "userspace", node_options=False)
        assert res.rc == 1, res
        assert "fabric wgfab0 runs on kernel WireGuard, not on the wireguard-go that " \
            "--wg-backend asks for" in res.stderr and "to move it, delete the device (ip " \
            "link delete wgfab0) and apply again with --wg-backend userspace (the vnets " \
            "and their guests stay)" in res.stderr, res
    assert pve1.ifindexes() == before
    res = pve1.fabricd("plan", *options, "--wg-backend", "kernel", node_options=False)
    assert res.rc == 0, res
    # the way it names: the fabric moves, every other link stays (down took the bridges)
    pve1.run(["ip", "link", "delete", "wgfab0"])
    res = pve1.fabricd("apply", *options, "--wg-backend", "userspace", node_options=False)
    assert res.rc == 0, res
    assert pve1.link("wgfab0")["linkinfo"]["info_kind"] == "tun"
    assert {k: v for k, v in pve1.ifindexes().items() if k != "wgfab0"} == \
        {k: v for k, v in before.items() if k != "wgfab0"}
    res = pve1.fabricd("plan", *options, "--wg-backend", "userspace", node_options=False)
    assert res.rc == 0, res
    wait_until(lambda: cluster.nodes[1].run(["ping", "-c", "1", "-W", "2", pve1.fabric_address],
                                            check=False).returncode == 0,
               timeout=30, what="pve2 -> pve1's fabric address over the moved device")


def test_status_reports_a_device_of_the_other_backend(make_cluster):
    """status with --wg-backend naming the backend the device does not run on: it changes
    nothing, so it shows the node, with the mismatch as a conflict, where apply refuses
    (it exited 1 and showed nothing)."""
    cluster = make_cluster(2)
    definition, path = applied(cluster)
    pve1 = cluster.nodes[0]
    kind = pve1.link("wgfab0")["linkinfo"]["info_kind"]
    other = "userspace" if kind == "wireguard" else "kernel"
    options = ["-c", path, "-n", pve1.name, "--key-file", pve1.key_file, "--wg-backend", other]
    res = pve1.fabricd("status", *options, node_options=False)
    assert res.rc == 0 and "fabric wgfab0" in res.stdout, res
    # what stops apply is a conflict in status, as every such thing
    assert "CONFLICTS that stop every change" in res.stdout, res
    assert "conflict: fabric wgfab0: runs on" in res.stdout, res
    assert pve1.fabricd("apply", *options, node_options=False).rc == 1


def hold_udp_port(node, port, ipv6):
    """A process of node's holding UDP port (IPv4, or IPv6 only), as another program's
    socket would; kill() it when done."""
    family, addr = ("AF_INET6", "::") if ipv6 else ("AF_INET", "0.0.0.0")
    holder = node.run_bg(["/usr/bin/python3", "-c",
                          f"import socket, time\ns = socket.socket(socket.{family}, "
                          "socket.SOCK_DGRAM)\n"
                          + ("s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)\n"
                             if ipv6 else "")
                          + f"s.bind(('{addr}', {port}))\ntime.sleep(120)"])
    shown = f"[::]:{port}" if ipv6 else f"0.0.0.0:{port}"
    wait_until(lambda: shown in node.run(["ss", "-uln"]).stdout, timeout=10,
               what=f"the other socket bound on {shown}")
    return holder


def test_a_listen_port_another_socket_holds_is_named(make_cluster):
    """Another socket on the fabric's port (an operator's own wg0, say): plan and apply
    name the port and what to do, once, before any change (apply built the guard and the
    vnets, then failed at the device, which kernel WireGuard then left without a key);
    the next apply after the port is freed converges."""
    cluster = make_cluster(2)
    pve1 = cluster.nodes[0]
    holder = hold_udp_port(pve1, 51820, ipv6=False)
    try:
        path = cluster.write_definition(cluster.definition(zones=standard_zones()))
        for command in ("plan", "apply"):
            res = pve1.fabricd(command, "-c", path)
            assert res.rc == 1, res
            assert "error: fabric wgfab0: listen port 51820 is taken: another socket on " \
                "this node has it" in res.stderr and "nodes[i].listen_port" in res.stderr, res
            assert "peer " not in res.stderr and "create failed" not in res.stderr, res
        assert pve1.owned_links() == [], "apply changed the node before the port stopped it"
        assert pve1.run(["nft", "list", "table", "inet", "fabricd"], check=False).returncode
        status = pve1.fabricd("status", "-c", path)
        assert status.rc == 0 and "conflict: fabric wgfab0: listen port 51820 is taken" in \
            status.stdout, status
    finally:
        holder.kill()
        holder.wait()
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 0 and pve1.fabricd("plan", "-c", path).rc == 0, res
    assert pve1.wg_dump().listen_port == 51820


def test_a_secure_port_another_socket_holds_is_named(make_cluster):
    """fabric.secure_port moved onto a port another socket of one node holds: plan and apply
    name the port and what to do before any change, and the secure devices stay as they
    were (apply removed them, failed to bring the new ones up with "Address already in
    use", and the daemon did so on every pass: the zone was cut on that node); once the
    port is free the next apply converges."""
    cluster = make_cluster(2)
    definition, _ = applied(cluster, zones=[zone("blue", "secure", [vnet("vnet200", 200)])])
    moved = dict(definition, fabric=dict(definition["fabric"], secure_port=4800))
    path = cluster.write_definition(moved, f"{cluster.tmpdir}/moved.json")
    pve1 = cluster.nodes[0]
    before = pve1.link("vs200")
    holder = hold_udp_port(pve1, 4800, ipv6=False)
    try:
        for command in ("plan", "apply"):
            res = pve1.fabricd(command, "-c", path)
            assert res.rc == 1 and "vxlan vs200: UDP port 4800 (fabric.secure_port) is " \
                "taken: another socket on this node has it" in res.stderr, res
            assert "already in use" not in res.stderr, res
        after = pve1.link("vs200")
        assert after["ifindex"] == before["ifindex"] and "UP" in after["flags"], after
        assert after["linkinfo"]["info_data"]["port"] == 4790
    finally:
        holder.kill()
        holder.wait()
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 0 and pve1.fabricd("plan", "-c", path).rc == 0, res
    assert_node_converged(pve1, moved, ZONE_MTU)


def test_the_listen_port_moved_onto_the_old_secure_port_in_one_edit(make_cluster):
    """secure_port 4790 -> 6000 and listen_port 51820 -> 4790 at once: the port is held by
    fabricd's own secure devices, which the same plan moves first; it is no conflict (the
    check of a port another socket holds refused it on every pass)."""
    cluster = make_cluster(2)
    definition, path = applied(cluster)
    moved = dict(definition, fabric=dict(definition["fabric"], secure_port=6000,
                                         listen_port=4790))
    path = cluster.write_definition(moved, f"{cluster.tmpdir}/moved.json")
    # an IPv6 socket on the port beside fabricd's IPv4 devices: WireGuard needs both
    pve1 = cluster.nodes[0]
    holder = hold_udp_port(pve1, 4790, ipv6=True)
    try:
        for command in ("plan", "apply"):
            res = pve1.fabricd(command, "-c", path)
            assert res.rc == 1 and "listen port 4790 is taken: another socket" in \
                res.stderr, res
        assert pve1.wg_dump().listen_port == 51820, "apply changed the node"
    finally:
        holder.kill()
        holder.wait()
    for node in cluster.nodes:
        res = node.fabricd("apply", "-c", path)
        assert res.rc == 0 and "is taken" not in res.stderr, res
    for node in cluster.nodes:
        assert node.fabricd("plan", "-c", path).rc == 0
        assert node.wg_dump().listen_port == 4790
    # a VXLAN device of another manager on the port: named, as ss cannot name it
    pve1.run(["ip", "link", "add", "vxother", "type", "vxlan", "id", "77", "dstport", "7000",
              "local", pve1.underlay])
    pve1.run(["ip", "link", "set", "vxother", "up"])
    other = dict(moved, fabric=dict(moved["fabric"], listen_port=7000))
    path = cluster.write_definition(other, f"{cluster.tmpdir}/other.json")
    res = pve1.fabricd("plan", "-c", path)
    assert res.rc == 1 and "listen port 7000 is taken by VXLAN device vxother" in res.stderr, res


@pytest.mark.parametrize("listen_port, secure_port", [(51821, 51820), (4790, 51820)],
                         ids=["secure-onto-old-listen", "swapped"])
def test_the_secure_port_moved_onto_the_old_listen_port_in_one_edit(make_cluster, listen_port,
                                                                   secure_port):
    """secure_port onto the port WireGuard leaves in the same edit (alone, and swapped with
    it): WireGuard moves before the secure devices are made. It moved after them, so every
    apply (and every daemon pass) failed with "Address already in use" on the secure
    devices, which it had already removed: every secure zone was cut until the edit was
    undone."""
    cluster = make_cluster(2)
    definition, _ = applied(cluster, zones=[zone("blue", "secure", [vnet("vnet200", 200)])])
    moved = dict(definition, fabric=dict(definition["fabric"], secure_port=secure_port,
                                         listen_port=listen_port))
    path = cluster.write_definition(moved, f"{cluster.tmpdir}/moved.json")
    for node in cluster.nodes:
        res = node.fabricd("apply", "-c", path)
        assert res.rc == 0 and "failed" not in res.stderr, res
    for node in cluster.nodes:
        assert node.fabricd("plan", "-c", path).rc == 0
        assert node.wg_dump().listen_port == listen_port
        assert_node_converged(node, moved, ZONE_MTU)
    g1, g2 = (cluster.add_guest(n, "vnet200", f"10.2.0.{n.index}/24") for n in cluster.nodes)
    wait_until(lambda: g1.ping(g2), timeout=20, what="g1 -> g2 through the moved secure port")


@pytest.mark.backend_neutral
def test_an_owned_device_with_another_vni_is_made_again_once(make_cluster):
    """vx100 (owned) carrying VNI 101: vnet100's plan makes it again, and the removal
    of owned links nobody wants must not delete it a second time (apply used to fail
    with "No such device" and leave the vnet without its device)."""
    cluster = make_cluster(2)
    zones = [{"name": "red", "transport": "plain", "vnets": [vnet("vnet100", 100)]}]
    _, path = applied(cluster, zones=zones)
    pve1 = cluster.nodes[0]
    pve1.run(["ip", "link", "del", "vx100"])
    pve1.run(["ip", "link", "add", "vx100", "type", "vxlan", "id", "101", "dstport", "4789",
              "local", pve1.underlay])
    pve1.run(["ip", "link", "set", "vx100", "alias", f"fabricd:{cluster.cluster_name}"])
    res = pve1.fabricd("plan", "-c", path)
    assert res.rc == 2 and res.stdout.count("- vxlan vx100: remove") == 1, res
    assert "recreated: vni 101 -> 100" in res.stdout, res
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 0, res
    vx = pve1.link("vx100")
    assert vx and vx["linkinfo"]["info_data"]["id"] == 100, vx
    assert pve1.fabricd("plan", "-c", path).rc == 0


@pytest.mark.backend_neutral
def test_two_vxlan_devices_whose_names_were_swapped_are_each_made_again_once(make_cluster):
    """vx100 and vx101 swapped by hand (each now carries the other's VNI), and the variant
    of one deleted and the other renamed to its name: each is removed once, to be made
    again; the removal of renamed devices must not delete it a second time (apply failed
    with "No such device" and left both vnets without a VXLAN device)."""
    cluster = make_cluster(2)
    zones = [{"name": "red", "transport": "plain",
              "vnets": [vnet("vnet100", 100), vnet("vnet101", 101)]}]
    _, path = applied(cluster, zones=zones)
    pve1 = cluster.nodes[0]
    swaps = ["ip link set vx100 down; ip link set vx101 down; ip link set vx100 name swaptmp; "
             "ip link set vx101 name vx100; ip link set swaptmp name vx101; "
             "ip link set vx100 up; ip link set vx101 up",
             "ip link del vx101; ip link set vx100 down; ip link set vx100 name vx101; "
             "ip link set vx101 up"]
    for swap in swaps:
        pve1.run(["sh", "-ec", swap])
        res = pve1.fabricd("plan", "-c", path)
        assert res.rc == 2, res
        for dev in ("vx100", "vx101"):
            assert res.stdout.count(f"- vxlan {dev}: remove") <= 1, res
        res = pve1.fabricd("apply", "-c", path)
        assert res.rc == 0, res
        for dev, vni, bridge in (("vx100", 100, "vnet100"), ("vx101", 101, "vnet101")):
            link = pve1.link(dev)
            assert link and link["linkinfo"]["info_data"]["id"] == vni, (swap, link)
            assert link.get("master") == bridge, (swap, link)
        assert pve1.fabricd("plan", "-c", path).rc == 0, swap


def test_down_after_the_cluster_was_renamed_says_how(make_cluster):
    """The definition's cluster name changed after the node was built: down with it
    removes nothing of the old name's (ownership), and says which command does, for each
    name with its own count (here also a link of a still older name; one whose alias has a
    tab after that name is no cluster's, as ownership reads it: neither counted nor named)."""
    cluster = make_cluster(2)
    definition, path = applied(cluster)
    pve1 = cluster.nodes[0]
    old = definition["cluster"]
    renamed = cluster.write_definition(dict(definition, cluster="renamed"),
                                       f"{cluster.tmpdir}/renamed.json")
    # plan and apply refuse (the names are taken), and say the same way out once
    for command in ("plan", "apply"):
        res = pve1.fabricd(command, "-c", renamed)
        assert res.rc == 1 and f"belong to cluster \"{old}\": if that was this cluster's " \
            f"name before, run `fabricd down --cluster {old}`" in res.stderr, res
        # the old name's wgfab0 holds the listen port: not a stranger's socket; the guard
        # table is the old name's too, which down --cluster removes (no nft by hand)
        assert "another socket" not in res.stderr, res
        assert f"nftables table inet fabricd: made by fabricd for cluster \"{old}\", not " \
            f"\"renamed\"; if that was this cluster's name before, `fabricd down " \
            f"--cluster {old}` removes it" in res.stderr, res
    n_old = len(pve1.owned_links(old))
    for name, alias in (("oldbr1", "fabricd:older"), ("oldbr2", "fabricd:older\tnote")):
        pve1.run(["ip", "link", "add", name, "type", "bridge"])
        pve1.run(["ip", "link", "set", name, "alias", alias])
    res = pve1.fabricd("down", "-c", renamed)
    assert res.rc == 0, res
    assert f"{n_old} links here belong to cluster \"{old}\", which this down leaves" in \
        res.stderr and f"fabricd down --cluster {old} removes them" in res.stderr, res
    assert f"warning: nftables table inet fabricd: made by fabricd for cluster \"{old}\"" \
        in res.stderr, res
    assert "1 link here belongs to cluster \"older\"" in res.stderr and \
        "fabricd down --cluster older removes them" in res.stderr, res
    assert pve1.owned_links() != []
    res = pve1.fabricd("down", "--cluster", old, "-n", pve1.name, "--wg-backend",
                       cluster.wg_backend, node_options=False)
    assert res.rc == 0 and pve1.owned_links(old) == [], res
    assert "note" not in res.stderr, res
    # with -c FILE as well (by habit): --cluster decides, and says the file is not read
    res = pve1.fabricd("down", "-c", renamed, "--cluster", "older", "-n", pve1.name,
                       "--wg-backend", cluster.wg_backend, node_options=False)
    assert res.rc == 0 and pve1.owned_links() == ["oldbr2"], res
    assert f"warning: down: --cluster older names the cluster, so {renamed} is not read: " \
        "down removes what fabricd owns for cluster older on this node" in res.stderr, res
    pve1.run(["ip", "link", "del", "oldbr2"])


# Only wgfab0 is the backend's: the others are left out of the QEMU tier.
@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.backend_neutral) for n in ("vnet100", "vx100", "vs200")
] + ["wgfab0"])
def test_unowned_link_with_a_wanted_name_fails_and_changes_nothing(make_cluster, name):
    cluster = make_cluster(2)
    pve1 = cluster["pve1"]
    pve1.run(["ip", "link", "add", name, "type", "bridge"])
    foreign = pve1.link(name)
    before = pve1.ifindexes()
    path = cluster.write_definition(cluster.definition(zones=standard_zones()))

    res = pve1.fabricd("apply", "-c", path)

    assert res.rc == 1, f"apply over an unowned {name} must fail: {res}"
    assert name in res.stderr, f"the error should name {name}: {res.stderr}"
    assert pve1.ifindexes() == before, "apply changed links although it failed"
    assert pve1.owned_links() == []
    assert pve1.link(name).get("ifalias") == foreign.get("ifalias")
    assert pve1.link(name).get("master") is None
    assert wireguard_go_processes(pve1) == []


def test_down_removes_every_owned_object_and_keeps_foreign_ones(make_cluster):
    cluster = make_cluster(2)
    pve1, pve2 = cluster.nodes
    pve1.run(["ip", "link", "add", "br-foreign", "type", "bridge"])
    pve1.run(["ip", "link", "set", "br-foreign", "alias", "admin:keep", "up"])
    pve1.run(["ip", "addr", "add", "198.51.100.1/24", "dev", "br-foreign"])
    pve1.run(["ip", "link", "add", "keep0", "type", "veth", "peer", "name", "keep1"])
    _, path = applied(cluster)
    guest = cluster.add_guest(pve1, "vnet100", "10.0.0.1/24")  # a VM's tap: not fabricd's
    foreign = ("lo", "eth0", "br-foreign", "keep0", "keep1", guest.tap)
    before = pve1.ifindexes()
    pve2_before = pve2.ifindexes()

    res = pve1.fabricd("down", "-c", path)

    assert res.rc == 0, str(res)
    assert pve1.owned_links() == []
    assert fabricd_links(pve1) == []
    wait_until(lambda: wireguard_go_processes(pve1) == [], what="wireguard-go gone from pve1")
    now = pve1.ifindexes()
    assert {k: now.get(k) for k in foreign} == {k: before[k] for k in foreign}
    assert pve1.link("br-foreign")["ifalias"] == "admin:keep"
    assert "198.51.100.1/24" in pve1.addresses("br-foreign")
    assert f"{pve1.underlay}/24" in pve1.addresses("eth0")
    # the other node is left alone
    assert pve2.ifindexes() == pve2_before
    # a second down has nothing left to do
    again = pve1.fabricd("down", "-c", path)
    assert again.rc == 0, str(again)


def test_a_wireguard_go_that_does_not_answer_is_named(make_cluster):
    """wireguard-go stopped (SIGSTOP: hung): its device exists but cannot be read; the
    error says what does not answer and what to do, and nothing is changed."""
    cluster = make_cluster(2)
    if cluster.wg_backend != "userspace":
        pytest.skip("wireguard-go only")
    _, path = applied(cluster, zones=[{"name": "red", "transport": "plain",
                                       "vnets": [vnet("vnet100", 100)]}])
    pve1 = cluster.nodes[0]
    ((pid, _),) = wireguard_go_processes(pve1)
    os.kill(pid, signal.SIGSTOP)
    try:
        res = pve1.fabricd("plan", "-c", path)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert res.rc == 1, res
    assert "error: fabric wgfab0: the device exists but its WireGuard state cannot be read " \
        "with the userspace backend (its wireguard-go does not answer on " \
        "/var/run/wireguard/wgfab0.sock: stopped, or hung?); if it stays so, end that " \
        "wireguard-go" in res.stderr, res
    assert pve1.fabricd("plan", "-c", path).rc == 0


def test_a_fabric_renamed_by_hand_is_named_as_fabricd_s_own(make_cluster):
    """wgfab0 renamed by hand with no daemon watching: its WireGuard keeps the listen port,
    so one made anew cannot have it. The conflict said "another socket ... another
    WireGuard device?"; it names the renamed device as fabricd's own and how to give it
    its name back, which then converges with its peers kept."""
    cluster = make_cluster(2)
    _, path = applied(cluster, zones=[{"name": "red", "transport": "plain",
                                       "vnets": [vnet("vnet100", 100)]}])
    pve1 = cluster.nodes[0]
    peers = pve1.wg_dump().peers
    pve1.run(["ip", "-batch", "-"], input="link set wgfab0 down\nlink set wgfab0 name wgold\n")
    res = pve1.fabricd("plan", "-c", path)
    if os.environ.get("FABRICD_VM"):
        # kernel WireGuard closes its sockets when the device goes down: the port is free,
        # and the owned device under another name is replaced, the peers made anew
        assert res.rc == 2 and "- wireguard wgold: remove" in res.stdout, res
        assert pve1.fabricd("apply", "-c", path).rc == 0
        assert pve1.fabricd("plan", "-c", path).rc == 0
        assert pve1.wg_dump().peers.keys() == peers.keys()
        return
    assert res.rc == 1, res
    assert "error: fabric wgfab0: listen port 51820 is taken by wgold, fabricd's own " \
        "WireGuard device under another name (wgfab0 renamed by hand?): give it its name " \
        "back (ip link set wgold down name wgfab0; up again by the next pass), or delete " \
        "it" in res.stderr, res
    pve1.run(["ip", "link", "set", "wgold", "down", "name", "wgfab0"])
    assert pve1.fabricd("apply", "-c", path).rc == 0
    assert pve1.fabricd("plan", "-c", path).rc == 0
    assert pve1.wg_dump().peers.keys() == peers.keys()


@pytest.mark.backend_neutral
def test_an_underlay_address_not_on_this_host_is_said(make_cluster):
    """A typo in a node's underlay (.21 for .11): its VXLAN devices send from an address
    the host does not have and the others' guards accept only that one, so both
    transports die; apply, plan and status said nothing and status called it in sync."""
    cluster = make_cluster(2)
    definition = cluster.definition(zones=standard_zones())
    definition["nodes"][0]["underlay"] = "192.0.2.21"
    path = cluster.write_definition(definition)
    pve1, pve2 = cluster.nodes
    said = "warning: nodes[0].underlay: 192.0.2.21 is not an address of this host"
    for command in ("apply", "plan", "status"):
        res = pve1.fabricd(command, "-c", path)
        assert res.rc == 0 and said in res.stderr and "correct the address" in res.stderr, res
    res = pve2.fabricd("apply", "-c", path)
    assert res.rc == 0 and "is not an address of this host" not in res.stderr, res
    # a daemon says it once, and says when the host has it (an IPv6 address gets there
    # only after duplicate address detection: the warning's last word was wrong)
    daemon = Daemon(cluster, pve1, grace=3)
    daemon.write(definition)
    daemon.start()
    try:
        daemon.wait_log(said[len("warning: "):])
        pve1.run(["ip", "addr", "add", "192.0.2.21/24", "dev", "eth0"])
        daemon.wait_log("nodes[0].underlay: 192.0.2.21 is an address of this host now")
        assert daemon.log().count("is not an address of this host") == 1, daemon.log()
    finally:
        daemon.stop()
    # the host given that address: nothing to say
    res = pve1.fabricd("plan", "-c", path)
    assert "is not an address of this host" not in res.stderr, res


def test_a_prefix_change_keeps_routes_from_the_fabric_address(make_cluster):
    """fabric.prefix /24 -> /16: the address with the new length goes on before the old
    goes, so the kernel does not flush an operator's route that uses the fabric address
    as its source (it did: the old address was removed first)."""
    cluster = make_cluster(2)
    definition = cluster.definition(zones=standard_zones())
    path = cluster.write_definition(definition)
    cluster.apply_all(path)
    pve1 = cluster.node("pve1")
    pve1.run(["ip", "route", "add", "10.99.0.0/24", "dev", "wgfab0", "src", pve1.fabric_address])
    definition["fabric"]["prefix"] = definition["fabric"]["prefix"].replace("/24", "/16")
    path = cluster.write_definition(definition, path)
    plan = pve1.fabricd("plan", "-c", path)
    assert plan.stdout.index(f"+ address {pve1.fabric_address}/16") < \
        plan.stdout.index(f"- address {pve1.fabric_address}/24"), plan
    cluster.apply_all(path)
    routes = pve1.run(["ip", "route", "show", "dev", "wgfab0"]).stdout
    assert f"10.99.0.0/24 scope link src {pve1.fabric_address}" in routes, routes
    addrs = pve1.run(["ip", "-4", "-o", "addr", "show", "dev", "wgfab0"]).stdout
    assert f"{pve1.fabric_address}/16" in addrs and f"{pve1.fabric_address}/24" not in addrs, addrs
    assert pve1.fabricd("plan", "-c", path).rc == 0


@pytest.mark.backend_neutral  # refused before the kernel
def test_a_missing_key_file_and_a_node_not_listed_point_at_join(make_cluster):
    """The node is listed with a public key, so a key made with genkey (the advice until
    now) cannot match it: put the right file back, or rotate with join. A node not in the
    definition is added with join, besides being named with -n."""
    cluster = make_cluster(2)
    path = cluster.write_definition(cluster.definition(zones=standard_zones()))
    pve1 = cluster.node("pve1")
    res = pve1.fabricd("apply", "-c", path, "-n", "pve1", "--key-file",
                       f"{cluster.tmpdir}/none.key", node_options=False)
    assert res.rc == 1 and "nodes[0] (pve1) has a public key already" in res.stderr, res
    assert "fabricd join -c FILE --rotate-key" in res.stderr and "genkey" not in res.stderr, res
    res = pve1.fabricd("plan", "-c", path, "-n", "pve9", node_options=False)
    assert res.rc == 1 and 'node "pve9" is not in' in res.stderr and \
        "add this node to it with `fabricd join -c FILE` (one that left: `fabricd down` " \
        "removes its fabric)" in res.stderr, res


@pytest.mark.backend_neutral
def test_a_bridge_keeps_its_address_when_ports_come_and_go(make_cluster):
    """A bridge made without an address takes its smallest port's, again on every port
    change: a transport switch (a VXLAN device made, one retired) moved it, and a
    gateway address on the bridge answered from a MAC its guests did not know."""
    cluster = make_cluster(2)
    definition, path = applied(cluster)
    pve1 = cluster.nodes[0]
    bridge = pve1.link("vnet100")
    # a port with the smallest address there is: the bridge does not take it
    pve1.run(["ip", "link", "add", "lowmac", "address", "00:00:00:00:00:01", "type", "veth",
              "peer", "name", "lowmacp"])
    pve1.run(["ip", "link", "set", "lowmac", "master", "vnet100", "up"])
    assert pve1.link("vnet100")["address"] == bridge["address"]
    pve1.run(["ip", "link", "del", "lowmac"])
    # the vnets' transports switched (their VXLAN ports made and retired): the same
    for z in definition["zones"]:
        z["transport"] = "secure" if z["transport"] == "plain" else "plain"
    cluster.apply_all(cluster.write_definition(definition, path))
    assert pve1.link("vnet100")["address"] == bridge["address"]


def test_a_fabric_address_moved_in_its_subnet_is_kept(make_cluster):
    """10.255.0.1/24 -> 10.255.0.9/24: the new address, added first, is the old one's
    secondary, which the kernel deletes with the primary (promote_secondaries off), and
    apply left wgfab0 without an address. A new address goes on after the old goes."""
    cluster = make_cluster(2)
    definition, path = applied(cluster)
    pve1 = cluster.nodes[0]
    definition["nodes"][0]["fabric_address"] = "10.255.0.9"
    path = cluster.write_definition(definition, path)
    cluster.apply_all(path)
    addrs = pve1.run(["ip", "-4", "-o", "addr", "show", "dev", "wgfab0"]).stdout
    assert "10.255.0.9/24" in addrs and "10.255.0.1/" not in addrs, addrs
    assert pve1.fabricd("plan", "-c", path).rc == 0
    cluster.nodes[1].run(["ping", "-c", "1", "-W", "3", "10.255.0.9"])


@pytest.mark.backend_neutral
def test_a_proxmox_bridge_keeps_its_address_through_switches(make_cluster):
    """A bridge of `bridges: existing` has no address of its own (fabricd does not set
    one on another's bridge) and takes its smallest port's: the secure device, made with
    the smaller address and present in both transports (the plain vnet's standby), is
    that port, so switches do not move the gateway's MAC."""
    cluster = make_cluster(2)
    for n in cluster.nodes:
        n.run(["ip", "link", "add", "vnet100", "type", "bridge"])
        n.run(["ip", "link", "set", "vnet100", "up"])
    pve1 = cluster.nodes[0]
    seen = []
    for transport in ("plain", "secure", "plain", "secure"):
        definition = cluster.definition(
            zones=[dict(zone("red", transport, [("vnet100", 100)]), bridges="existing")])
        path = cluster.write_definition(definition, f"{cluster.tmpdir}/existing.json")
        for n in cluster.nodes:
            res = n.fabricd("apply", "-c", path, "--grace", "0")
            assert res.rc == 0, res
        seen.append(pve1.link("vnet100")["address"])
    assert len(set(seen)) == 1 and seen[0].startswith("02:00:"), seen
    assert pve1.link("vs100")["address"] == seen[0]
    # not fabricd's, and rightly: status says so without calling it a conflict
    res = pve1.fabricd("status", "-c", path)
    assert res.rc == 0 and "vnet vnet100 vni 100: bridge up, vxlan vs100" in res.stdout, res
    doc = json.loads(pve1.fabricd("status", "-c", path, "--json").stdout)
    bridge = doc["zones"][0]["vnets"][0]["bridge"]
    assert bridge["existing"] is True and bridge["owned"] is False, bridge


@pytest.mark.backend_neutral
def test_an_existing_bridge_over_its_zones_mtu_is_warned_of(make_cluster):
    """A bridge whose MTU its manager set (ifupdown2 does, from Proxmox's zone) keeps it
    when fabricd's smaller port joins: the guests' larger frames are lost between nodes.
    Once the port is in, plan and apply say so; a bridge that followed its port does not
    (before the port joins, a bridge MTU says nothing: it may still follow)."""
    cluster = make_cluster(2)
    pve1 = cluster.nodes[0]
    path = cluster.write_definition(cluster.definition(
        zones=[dict(zone("red", "secure", [("vnet100", 100), ("vnet101", 101),
                                           ("vnet102", 102)]), bridges="existing")]))
    for name, set_mtu in (("vnet100", True), ("vnet101", False)):
        pve1.run(["ip", "link", "add", name, "type", "bridge"])
        if set_mtu:  # as ifupdown2 does: the kernel then keeps it
            pve1.run(["ip", "link", "set", name, "mtu", "1450"])
        pve1.run(["ip", "link", "set", name, "up"])
    warning = ("warning: vnet100: this existing bridge has MTU 1450, over the 1390 its zone "
               "carries: its guests' frames over 1390 are lost between nodes; give the bridge "
               "(in Proxmox, its zone) MTU 1390")
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 0 and "existing bridge has MTU" not in res.stderr, res
    assert pve1.link("vnet100")["mtu"] == 1450 and pve1.link("vnet101")["mtu"] == 1390
    res = pve1.fabricd("plan", "-c", path)
    assert res.rc == 0 and warning in res.stderr and "vnet101" not in res.stderr, res
    # vnet102's bridge was never made: fabricd waits for it, and status says for what
    res = pve1.fabricd("status", "-c", path)
    assert res.rc == 0 and "vnet vnet102 vni 102: bridge absent (its manager has not made " \
        "it: fabricd's port joins once Proxmox's SDN Apply or ifreload -a does)" in res.stdout, res


@pytest.mark.backend_neutral
def test_an_ifupdown_file_fabricd_cannot_write_stops_apply_before_any_change(make_cluster):
    """The file that keeps fabricd's ports in Proxmox's bridges across `ifreload -a` is
    someone else's: apply says so and changes nothing (a port added anyway is taken by the
    next ifreload, and the guests lose the other nodes); exit 1, as for any failure."""
    cluster = make_cluster(2)
    pve1 = cluster.nodes[0]
    pve1.run(["ip", "link", "add", "vnet100", "type", "bridge"])
    pve1.run(["ip", "link", "set", "vnet100", "up"])
    keep = f"{cluster.tmpdir}/interfaces.d-fabricd"
    with open(keep, "w") as f:
        f.write("# the admin's own notes\n")
    path = cluster.write_definition(cluster.definition(
        zones=[dict(zone("red", "plain", [("vnet100", 100)]), bridges="existing")]))
    res = pve1.fabricd("apply", "-c", path, "--ifupdown-file", keep)
    assert res.rc == 1, res
    assert f"error: {keep} exists and was not written by fabricd: move it away" in res.stderr
    assert "apply pve1: nothing was changed" in res.stderr, res
    assert pve1.owned_links() == [] and pve1.link("vx100") is None
    os.unlink(keep)
    res = pve1.fabricd("apply", "-c", path, "--ifupdown-file", keep)
    assert res.rc == 0 and pve1.link("vx100")["master"] == "vnet100", res
    with open(keep) as f:
        assert "vnet100" in f.read()
    # gone while nothing else changed: an apply with nothing to do writes it again
    os.unlink(keep)
    res = pve1.fabricd("apply", "-c", path, "--ifupdown-file", keep)
    assert res.rc == 0 and "nothing to change" in res.stdout and os.path.exists(keep), res
    # down removes it; where it cannot, down says so and fails (it said "ifreload may
    # remove fabricd's ports", which down had just removed, and exited 0)
    keep_dir = os.path.dirname(keep)
    pve1.run(["sh", "-c", f"mount --bind {keep_dir} {keep_dir} && "
              f"mount -o remount,bind,ro {keep_dir}"])
    try:
        res = pve1.fabricd("down", "-c", path, "--ifupdown-file", keep)
    finally:
        pve1.run(["umount", keep_dir])
    assert res.rc == 1 and f"error: {keep}: cannot remove it: Read-only file system; remove " \
        "it by hand (it names ports fabricd no longer has)" in res.stderr, res
    assert pve1.owned_links() == [] and res.stderr.count(keep) == 1, res


@pytest.mark.backend_neutral
def test_the_daemon_changes_nothing_while_the_ifupdown_file_cannot_be_written(make_cluster):
    """The same under `fabricd run`: it joined vx100 into the bridge all the same and said
    converged, the port left to the next ifreload. As apply, it changes nothing while the
    file is someone else's (a pass that fails, retried), and converges once it is moved."""
    from fabtest.daemon import Daemon

    cluster = make_cluster(2)
    pve1 = cluster.nodes[0]
    pve1.run(["ip", "link", "add", "vnet100", "type", "bridge"])
    pve1.run(["ip", "link", "set", "vnet100", "up"])
    keep = f"{cluster.tmpdir}/interfaces.d-fabricd"
    daemon = Daemon(cluster, pve1, extra_args=["--ifupdown-file", keep])
    daemon.write(cluster.definition(
        zones=[dict(zone("red", "plain", [("vnet100", 100)]), bridges="existing")]))
    daemon.start()
    try:
        assert pve1.link("vx100")["master"] == "vnet100"
        with open(keep, "w") as f:  # the admin's own file now
            f.write("# the admin's own notes\n")
        mark = daemon.mark()
        pve1.run(["ip", "link", "delete", "vx100"])  # drift: the port to make again
        daemon.wait_log(f"{keep} exists and was not written by fabricd: move it away",
                        "not converged; trying again", since=mark)
        time.sleep(1)
        assert pve1.link("vx100") is None
        os.unlink(keep)
        wait_until(lambda: (pve1.link("vx100") or {}).get("master") == "vnet100",
                   timeout=40, what="vx100 in vnet100 once the file is fabricd's to write")
        with open(keep) as f:
            assert "vnet100" in f.read()
    finally:
        daemon.stop()


def test_the_summary_counts_no_change_to_what_it_made(make_cluster):
    """A fresh node: every link is created, and the settings of links made in the same
    apply (a port's isolation, a standby's mute) are part of making them, not changes
    ("20 created, 5 changed" on a node that had nothing)."""
    cluster = make_cluster(2)
    path = cluster.write_definition(cluster.definition(zones=standard_zones()))
    pve1 = cluster.nodes[0]
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 0 and ", 0 changed, 0 removed" in res.stdout, res
    # a change of a link that was there counts (the bridge keeps its own MTU: one;
    # until 2026-12-07 it followed its port's, two)
    pve1.run(["ip", "link", "set", "vx100", "mtu", "1300"])
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 0 and ": 0 created, 1 changed, 0 removed" in res.stdout, res
