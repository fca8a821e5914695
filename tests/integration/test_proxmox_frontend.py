# SPDX-License-Identifier: GPL-2.0-or-later
"""Proxmox VE stays the front end (issue 13, part 2).

Proxmox builds the vnet bridges of a Simple zone on every node with ifupdown2
(here Debian's ifupdown2 reading Proxmox-shaped files); fabricd carries them
between the nodes (zone "bridges": "existing"): it adds its VXLAN device as
a port of each bridge and never creates, changes or deletes the bridge.
Every `ifreload -a` (each SDN "Apply") removes the ports its configuration does
not list unless they match bridge-ports-condone-regex (Proxmox:
^(tap|veth|fwpr)); fabricd therefore writes /etc/network/interfaces.d/fabricd
with one extra `iface <bridge>` stanza widening the regex to vx<VNI>/vs<VNI>.

    pveN (netns + mount ns; /etc/network, /run/network, /var/tmp/network private)
      /etc/network/interfaces           lo, "source /etc/network/interfaces.d/*"
      /etc/network/interfaces.d/sdn     Proxmox's: auto vnet1 / bridge_ports none ...
      /etc/network/interfaces.d/fabricd fabricd's: iface vnet1 / condone regex
      vnet1 (Proxmox) <- tapNi0 (guest), vs100 (fabricd, secure)
      vnet2 (Proxmox) <- tapNi0 (guest), vx200 (fabricd, plain)

Checked: guests on three nodes ping in both transports; `ifreload -a` run on
every node, again and again and after Proxmox adds a vnet, loses no ping; the
bridges keep their ifindex (never recreated) and carry no fabricd mark; the
control (without fabricd's file) shows ifreload does remove the port.
"""
import os
import shutil
import time

import pytest

from fabtest import zone
from fabtest.pinger import Pingers
from fabtest.wait import wait_until

pytestmark = [pytest.mark.netns, pytest.mark.vxlan]

IFUPDOWN2 = "/usr/sbin/ifreload"
PROXMOX_CONDONE = "^(tap|veth|fwpr)"  # what Proxmox's ifupdown2 uses by default
MTU = 1390  # fabricd's stable MTU on a 1500 underlay; set as the Simple zone's mtu

INTERFACES = """auto lo
iface lo inet loopback

source /etc/network/interfaces.d/*
"""


def sdn_file(vnets, version):
    """/etc/network/interfaces.d/sdn as Proxmox renders a Simple zone (no subnets)."""
    text = f"#version:{version}\n"
    for name in vnets:
        text += (f"\nauto {name}\niface {name}\n\tbridge_ports none\n\tbridge_stp off\n"
                 f"\tbridge_fd 0\n\tmtu {MTU}\n"
                 # Debian's ifupdown2 has no default: write Proxmox's, as its package does
                 f"\tbridge-ports-condone-regex {PROXMOX_CONDONE}\n")
    return text


def ifupdown(node, command):
    """ifup/ifreload -a inside the node (Debian's python, argv[0] picks the command)."""
    started = time.monotonic()
    res = node.run(["/usr/bin/python3", f"/usr/sbin/{command}", "-a"], check=False, timeout=60)
    assert res.returncode == 0, f"{command} -a on {node.name}: {res.stdout}{res.stderr}"
    return time.monotonic() - started


def proxmox_node(cluster, node, vnets):
    """Give node a private /etc/network of Proxmox's shape and run `ifup -a`."""
    etc = os.path.join(cluster.tmpdir, f"{node.name}-etc-network")
    os.makedirs(os.path.join(etc, "interfaces.d"))
    shutil.copytree("/etc/network/ifupdown2", os.path.join(etc, "ifupdown2"))
    with open(os.path.join(etc, "interfaces"), "w") as f:
        f.write(INTERFACES)
    write_sdn(etc, vnets, 1)
    # inside the node's own mount namespace only: the host's files are never touched
    node.run(["mount", "--bind", etc, "/etc/network"])
    # ifupdown2 writes bridge settings under /sys/class/net: a sysfs of this netns
    node.run(["mount", "-t", "sysfs", "fabtest-sysfs", "/sys"])
    node.run(["mount", "-t", "tmpfs", "fabtest-run-network", "/run/network"])
    node.run(["mount", "-t", "tmpfs", "fabtest-state-network", "/var/tmp/network"])
    ifupdown(node, "ifup")
    return etc


def write_sdn(etc, vnets, version):
    path = os.path.join(etc, "interfaces.d", "sdn")
    with open(path + ".new", "w") as f:
        f.write(sdn_file(vnets, version))
    os.replace(path + ".new", path)


def ports(node, bridge):
    return sorted(name for name, link in node.links().items() if link.get("master") == bridge)


def bridge_ids(cluster, names):
    return {(n.name, b): n.link(b)["ifindex"] for n in cluster.nodes for b in names}


@pytest.fixture
def frontend(make_cluster):
    if not os.path.exists(IFUPDOWN2):
        pytest.skip("Debian's ifupdown2 is not installed")
    cluster = make_cluster(3)
    etcs = {n.name: proxmox_node(cluster, n, ["vnet1", "vnet2"]) for n in cluster.nodes}
    zones = [dict(zone("front", "secure", [("vnet1", 100)]), bridges="existing"),
             dict(zone("frontp", "plain", [("vnet2", 200)]), bridges="existing")]
    config = cluster.write_definition(cluster.definition(zones=zones))
    return cluster, etcs, zones, config


def test_ifreload_keeps_fabricd_ports(frontend):
    cluster, etcs, zones, config = frontend
    ids = bridge_ids(cluster, ["vnet1", "vnet2"])
    cluster.apply_all(config)
    for n in cluster.nodes:
        assert ports(n, "vnet1") == ["vs100"] and ports(n, "vnet2") == ["vx200"], n.links()
        text = open(os.path.join(etcs[n.name], "interfaces.d", "fabricd")).read()
        assert "iface vnet1\n\tbridge-ports-condone-regex" in text, text
        for b in ("vnet1", "vnet2"):
            assert not n.link(b).get("ifalias", "").startswith("fabricd:"), "never marked"
    sec = [cluster.add_guest(n, "vnet1", f"10.0.1.{i + 1}/24") for i, n in
           enumerate(cluster.nodes)]
    pln = [cluster.add_guest(n, "vnet2", f"10.0.2.{i + 1}/24") for i, n in
           enumerate(cluster.nodes)]
    for a, b in [(sec[0], sec[1]), (sec[1], sec[2]), (pln[0], pln[1]), (pln[2], pln[0])]:
        wait_until(lambda: a.ping(b), timeout=15)

    pairs = [(sec[0], sec[1]), (sec[2], sec[0]), (pln[0], pln[1]), (pln[1], pln[2])]
    seconds = 30
    pingers = Pingers.between(cluster, pairs, seconds=seconds).start()
    started = time.monotonic()
    reload_times = []
    for version in (2, 3):
        for n in cluster.nodes:
            reload_times.append(ifupdown(n, "ifreload"))
    # Proxmox adds a vnet (SDN "Apply" on every node), then fabricd carries it
    for n in cluster.nodes:
        write_sdn(etcs[n.name], ["vnet1", "vnet2", "vnet3"], 4)
        reload_times.append(ifupdown(n, "ifreload"))
    zones[0]["vnets"].append({"name": "vnet3", "vni": 101})
    config = cluster.write_definition(cluster.definition(zones=zones))
    cluster.apply_all(config)
    for n in cluster.nodes:
        reload_times.append(ifupdown(n, "ifreload"))
    busy = time.monotonic() - started
    assert busy < seconds - 1, f"the reloads took {busy:.1f} s, longer than the pings ran"
    pingers.assert_no_loss("across ifreload -a on every node")
    print(f"ifreload -a took {min(reload_times):.2f}..{max(reload_times):.2f} s "
          f"({len(reload_times)} runs in {busy:.1f} s), no ping lost")

    assert bridge_ids(cluster, ["vnet1", "vnet2"]) == ids, "Proxmox's bridges were recreated"
    for n in cluster.nodes:
        assert "vs100" in ports(n, "vnet1") and "vx200" in ports(n, "vnet2")
        assert ports(n, "vnet3") == ["vs101"], n.links()
    new = [cluster.add_guest(n, "vnet3", f"10.0.3.{i + 1}/24") for i, n in
           enumerate(cluster.nodes)]
    wait_until(lambda: new[0].ping(new[2]), timeout=15)
    assert not new[0].ping(sec[1]), "vnets stay apart"

    # down: fabricd's ports and file go, Proxmox's bridges and guests stay
    cluster.fabricd_all("down", config)
    for n in cluster.nodes:
        assert [p for p in ports(n, "vnet1") if not p.startswith("tap")] == []
        assert n.link("vnet1") is not None
        assert not os.path.exists(os.path.join(etcs[n.name], "interfaces.d", "fabricd"))


def test_control_ifreload_removes_unlisted_port(frontend):
    """Without fabricd's stanza ifreload does remove the port: the file is what keeps it."""
    cluster, etcs, _zones, config = frontend
    pve1 = cluster.nodes[0]
    cluster.apply_all(config, nodes=[pve1])
    os.unlink(os.path.join(etcs[pve1.name], "interfaces.d", "fabricd"))
    ifupdown(pve1, "ifreload")
    assert ports(pve1, "vnet1") == [], "ifreload should remove a port it does not condone"
    # the next apply puts back both the file and the port (the daemon does so on its tick)
    assert pve1.fabricd("apply", "-c", config).rc == 0
    assert ports(pve1, "vnet1") == ["vs100"]
    ifupdown(pve1, "ifreload")
    assert ports(pve1, "vnet1") == ["vs100"]
    # a vnet whose bridge Proxmox has not made yet is waited for, not created
    res = pve1.fabricd("plan", "-c", cluster.write_definition(cluster.definition(zones=[
        dict(zone("later", "secure", [("vnet7", 700)]), bridges="existing")])))
    assert "bridge vnet7" not in res.stdout and pve1.link("vnet7") is None, res
