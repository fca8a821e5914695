# SPDX-License-Identifier: GPL-2.0-or-later
"""wireguard-go outlives a burst of link changes, and its UDP sockets have room.

wireguard-go exits when its rtnetlink listener's socket overflows (ENOBUFS,
"Failed to read packet from TUN device: failed to receive netlink message:
no buffer space available"), and it opens that socket with the default
receive buffer. On a node with a thousand bridges the kernel reports their
carrier changes a hundred at a time for seconds after a build; at 1024 vnets
wireguard-go died within seconds of a daemon starting beside it. fabricd
now gives wireguard-go's rtnetlink sockets an 8 MiB buffer when it starts it
(wireguard/uapi_proc.c, widen_netlink_buffers).

Here wireguard-go is frozen (SIGSTOP) while 600 link changes come, more than
a default buffer holds; thawed, and given packets to send (it sees the
overflow only when it next reads one from its TUN device), it must still
run, and the fabric with it.

Debian 12's wireguard-go (0.0.20220316) keeps its UDP sockets' default
buffers (208 KiB) and drops what arrives while it is busy encrypting; later
versions set 7 MiB themselves. fabricd sets them after every apply and
daemon pass (wg_tune): measured with `fabricd bench --reference`, 1.3 times
the secure path's throughput at 0.8 times the CPU per GB (README).
"""

import os
import re

import pytest

from fabtest import zone
from fabtest.daemon import start_daemons, stop_daemons
from fabtest.wait import stays_true, wait_until

pytestmark = [pytest.mark.netns, pytest.mark.wireguard]

BURST = 300  # bridges, each created and deleted: 600 notifications


def wireguard_go(node):
    pids = [pid for pid, name in node.processes() if name == "wireguard-go"]
    assert len(pids) == 1, pids
    return pids[0]


def netlink_buffers(node, pid):
    """The receive buffers (skmem rb) of pid's rtnetlink sockets."""
    out = node.run(["ss", "-f", "netlink", "-a", "-m", "-p"]).stdout
    return [int(m.group(1)) for m in
            re.finditer(rf"rtnl:wireguard-go/{pid}\s.*?skmem:\(r\d+,rb(\d+)", out, re.S)]


UDP_BUFFER = 7 << 20  # what wireguard-go 0.0.20230223 and later set themselves


def udp_buffers(node, pid):
    """(rb, tb) of each of pid's UDP sockets, as ss shows them (the kernel doubles the size
    set)."""
    out = node.run(["ss", "-u", "-a", "-n", "-m", "-p"]).stdout
    return [(int(m.group(1)), int(m.group(2))) for m in
            re.finditer(rf'"wireguard-go",pid={pid},fd=\d+\)\)\s*skmem:\(r\d+,rb(\d+),t\d+,tb(\d+)',
                        out)]


def udp_inodes(node, pid):
    """The socket inodes of pid's UDP sockets."""
    out = node.run(["ss", "-u", "-a", "-n", "-e", "-p"]).stdout
    return set(re.findall(rf'"wireguard-go",pid={pid},fd=\d+\)\).*? ino:(\d+)', out))


def all_wide(buffers):
    return bool(buffers) and all(rb >= UDP_BUFFER and tb >= UDP_BUFFER for rb, tb in buffers)


def userspace_cluster(make_cluster):
    """Two nodes; the test is skipped on kernel WireGuard, which has no wireguard-go."""
    cluster = make_cluster(2)
    if cluster.wg_backend != "userspace":
        pytest.skip("wireguard-go only: kernel WireGuard has neither its sockets nor its listener")
    return cluster


def rebind(node, pid, port):
    """Set wireguard-go's listen port by hand: it binds new sockets, with the defaults."""
    node.run(["wg", "set", "wgfab0", "listen-port", str(port)])
    wait_until(lambda: udp_buffers(node, pid) and not all_wide(udp_buffers(node, pid)),
               what=f"wireguard-go bound again (port {port}) with default buffers")


def test_wireguard_go_udp_buffers_widened_and_kept(make_cluster):
    cluster = userspace_cluster(make_cluster)
    pve1, pve2 = cluster.nodes
    path = cluster.write_definition(cluster.definition(zones=[zone("a", "secure", [("vnet1", 1)])]))
    for node in (pve1, pve2):
        assert node.fabricd("apply", "-c", path).rc == 0
    pid = wireguard_go(pve1)
    assert all_wide(udp_buffers(pve1, pid)), udp_buffers(pve1, pid)
    # setting the port, even the same one, makes wireguard-go bind again
    rebind(pve1, pid, 51820)
    # nothing for apply to change, but the sockets are widened again
    result = pve1.fabricd("apply", "-c", path)
    assert result.rc == 0 and "nothing to change" in result.stdout, result.stdout
    assert all_wide(udp_buffers(pve1, pid)), udp_buffers(pve1, pid)
    # another port: apply puts the definition's back, and the new sockets are widened
    rebind(pve1, pid, 51999)
    result = pve1.fabricd("apply", "-c", path)
    assert result.rc == 0 and "nothing to change" not in result.stdout, result.stdout
    assert ":51820 " in pve1.run(["ss", "-uanp"]).stdout
    assert all_wide(udp_buffers(pve1, pid)), udp_buffers(pve1, pid)
    ping = pve1.run(["ping", "-c", "3", "-i", "0.2", "-W", "1", pve2.fabric_address], check=False)
    assert ping.returncode == 0, ping.stdout


def test_wireguard_go_environment(make_cluster):
    """wireguard-go gets fabricd's environment (made before fork: the daemon has threads),
    without what would make it adopt descriptors it does not have or dump its memory
    (GOTRACEBACK), with its settings, and no core file size."""
    cluster = userspace_cluster(make_cluster)
    pve1, pve2 = cluster.nodes
    path = cluster.write_definition(cluster.definition(zones=[zone("a", "secure", [("vnet1", 1)])]))
    env = dict(os.environ, WG_UAPI_FD="9", WG_TUN_FD="8", WG_TUN_NAME_FILE="/tmp/x",
               LOG_LEVEL="debug", GOTRACEBACK="crash", FABTEST_KEPT="yes")
    assert pve1.fabricd("apply", "-c", path, env=env).rc == 0
    with open(f"/proc/{wireguard_go(pve1)}/environ", "rb") as f:
        got = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
    assert got.get(b"LOG_LEVEL") == b"error" and got.get(b"WG_PROCESS_FOREGROUND") == b"1", got
    assert not {b"WG_UAPI_FD", b"WG_TUN_FD", b"WG_TUN_NAME_FILE"} & set(got), got
    # crash would abort into a core file (a piped core_pattern ignores the size limit)
    assert b"GOTRACEBACK" not in got, got
    assert got.get(b"FABTEST_KEPT") == b"yes", got
    # it holds the private key: no core file of it (exec made it dumpable again)
    with open(f"/proc/{wireguard_go(pve1)}/limits") as f:
        core = [line.split()[4:6] for line in f if line.startswith("Max core file size")]
    assert core == [["0", "0"]], core
    assert pve2.fabricd("apply", "-c", path).rc == 0
    ping = pve1.run(["ping", "-c", "2", "-i", "0.2", "-W", "1", pve2.fabric_address], check=False)
    assert ping.returncode == 0, ping.stdout


def test_wireguard_go_outlives_a_burst_of_link_changes(make_cluster):
    cluster = userspace_cluster(make_cluster)
    pve1, pve2 = cluster.nodes
    path = cluster.write_definition(cluster.definition(zones=[zone("a", "plain", [("vnet1", 1)])]))
    assert pve1.fabricd("apply", "-c", path).rc == 0
    pid = wireguard_go(pve1)
    buffers = netlink_buffers(pve1, pid)
    assert buffers and min(buffers) >= 8 << 20, f"wireguard-go's rtnetlink buffers: {buffers}"
    batch = "".join(f"link add fbst{i} type bridge\nlink del fbst{i}\n" for i in range(BURST))
    pve1.run(["kill", "-STOP", str(pid)])
    try:
        pve1.run(["ip", "-batch", "-"], input=batch, timeout=60)
    finally:
        pve1.run(["kill", "-CONT", str(pid)])
    # wireguard-go notices a lost notification only when it next reads a packet from its
    # TUN device: send some into the fabric (pve2 was not applied; nothing answers)
    pve1.run(["ping", "-c", "3", "-i", "0.2", "-W", "0.2", pve2.fabric_address], check=False)
    stays_true(lambda: pve1.link("wgfab0") is not None and
               any(p == pid for p, _ in pve1.processes()), 2, what="wireguard-go still runs")
    assert pve1.fabricd("plan", "-c", path).rc == 0


def test_daemon_widens_wireguard_go_udp_buffers(make_cluster):
    cluster = userspace_cluster(make_cluster)
    pve1 = cluster.nodes[0]
    one = [("vnet1", 1)]
    daemons = start_daemons(cluster, cluster.definition(zones=[zone("a", "secure", one)]),
                            nodes=[pve1])
    try:
        pid = wireguard_go(pve1)
        # wireguard-go binds a moment after the build: the settling pass finds its sockets
        wait_until(lambda: all_wide(udp_buffers(pve1, pid)), timeout=10,
                   what="the daemon widened wireguard-go's UDP buffers")
        before = udp_inodes(pve1, pid)
        pve1.run(["wg", "set", "wgfab0", "listen-port", "51820"])
        wait_until(lambda: udp_inodes(pve1, pid) and not udp_inodes(pve1, pid) & before,
                   what="wireguard-go bound new sockets")
        # the next pass (here for a new vnet, if nothing else caused one) widens them
        daemons[pve1.name].write(cluster.definition(
            zones=[zone("a", "secure", one + [("vnet2", 2)])]))
        wait_until(lambda: all_wide(udp_buffers(pve1, pid)), timeout=10,
                   what="the daemon widened the new sockets")
    finally:
        stop_daemons(daemons)


def test_foreign_wireguard_go_left_alone(make_cluster):
    """A wgfab0 that is not fabricd's: apply refuses it and leaves its wireguard-go's sockets
    as they are."""
    cluster = userspace_cluster(make_cluster)
    pve1 = cluster.nodes[0]
    pve1.run(["wireguard-go", "wgfab0"])  # detaches; silent, so it keeps no pipe of ours
    pid = wireguard_go(pve1)
    try:
        pve1.run(["wg", "set", "wgfab0", "listen-port", "51820"])
        pve1.run(["ip", "link", "set", "wgfab0", "up"])
        wait_until(lambda: udp_buffers(pve1, pid), what="the foreign wireguard-go bound")
        path = cluster.write_definition(
            cluster.definition(zones=[zone("a", "secure", [("vnet1", 1)])]))
        result = pve1.fabricd("apply", "-c", path)
        assert result.rc != 0 and "wgfab0" in result.stderr, result
        assert not all_wide(udp_buffers(pve1, pid)), udp_buffers(pve1, pid)
    finally:
        pve1.run(["kill", str(pid)], check=False)
