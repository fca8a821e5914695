# SPDX-License-Identifier: GPL-2.0-or-later
"""wireguard-go outlives a burst of link changes.

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
"""

import re

import pytest

from fabtest import zone
from fabtest.wait import stays_true

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


def test_wireguard_go_outlives_a_burst_of_link_changes(make_cluster):
    cluster = make_cluster(2)
    if cluster.wg_backend != "userspace":
        pytest.skip("wireguard-go only: the kernel's WireGuard has no listener to overflow")
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
