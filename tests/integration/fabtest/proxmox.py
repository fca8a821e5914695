# SPDX-License-Identifier: GPL-2.0-or-later
"""Proxmox VE's side of a node, built by Debian's ifupdown2 from files of the
shape Proxmox SDN renders (pve-network Zones/SimplePlugin.pm, VxlanPlugin.pm).

Each node gets a private /etc/network (a directory in the run's tmpdir), a
private /run/network and /var/tmp/network (ifupdown2's state), and a sysfs of
its own network namespace (ifupdown2 writes bridge settings under
/sys/class/net), all inside the node's mount namespace: the host's files are
never read or written. ifupdown2 runs under Debian's /usr/bin/python3.
"""
import os
import shutil
import time

IFRELOAD = "/usr/sbin/ifreload"
PROXMOX_CONDONE = "^(tap|veth|fwpr)"  # Proxmox's ifupdown2 default

INTERFACES = """auto lo
iface lo inet loopback

source /etc/network/interfaces.d/*
"""


def simple_vnet(name, mtu):
    """A vnet of a Simple zone without subnets (hwaddress left out: see README)."""
    return (f"\nauto {name}\niface {name}\n\tbridge_ports none\n\tbridge_stp off\n"
            f"\tbridge_fd 0\n\tmtu {mtu}\n"
            # Debian's ifupdown2 has no default: write Proxmox's, as its package does
            f"\tbridge-ports-condone-regex {PROXMOX_CONDONE}\n")


def vxlan_vnet(name, vni, remotes, mtu):
    """A vnet of a VXLAN zone with peers: bridge <name> over vxlan_<name>."""
    text = (f"\nauto {name}\niface {name}\n\tbridge_ports vxlan_{name}\n\tbridge_stp off\n"
            f"\tbridge_fd 0\n\tmtu {mtu}\n\tbridge-ports-condone-regex {PROXMOX_CONDONE}\n"
            f"\nauto vxlan_{name}\niface vxlan_{name}\n\tvxlan-id {vni}\n")
    text += "".join(f"\tvxlan_remoteip {r}\n" for r in remotes)
    return text + f"\tmtu {mtu}\n"


def ifupdown(node, command):
    """`ifup -a` or `ifreload -a` inside the node; returns the seconds it took."""
    started = time.monotonic()
    res = node.run(["/usr/bin/python3", f"/usr/sbin/{command}", "-a"], check=False, timeout=60)
    assert res.returncode == 0, f"{command} -a on {node.name}: {res.stdout}{res.stderr}"
    return time.monotonic() - started


def write_sdn(etc, text, version):
    """/etc/network/interfaces.d/sdn, replaced atomically as Proxmox writes it."""
    path = os.path.join(etc, "interfaces.d", "sdn")
    with open(path + ".new", "w") as f:
        f.write(f"#version:{version}\n{text}")
    os.replace(path + ".new", path)


def proxmox_node(cluster, node, sdn_text):
    """Give node a private /etc/network of Proxmox's shape and run `ifup -a`."""
    etc = os.path.join(cluster.tmpdir, f"{node.name}-etc-network")
    os.makedirs(os.path.join(etc, "interfaces.d"))
    shutil.copytree("/etc/network/ifupdown2", os.path.join(etc, "ifupdown2"))
    with open(os.path.join(etc, "interfaces"), "w") as f:
        f.write(INTERFACES)
    write_sdn(etc, sdn_text, 1)
    # ifupdown2's state directories are mount points here; on a host without
    # ifupdown (a fresh boot clears /run) they must be made first: empty, and
    # nothing is ever written to the host's copy (the tmpfs covers it)
    node.run(["mkdir", "-p", "/run/network", "/var/tmp/network"])
    node.run(["mount", "--bind", etc, "/etc/network"])
    node.run(["mount", "-t", "sysfs", "fabtest-sysfs", "/sys"])
    node.run(["mount", "-t", "tmpfs", "fabtest-run-network", "/run/network"])
    node.run(["mount", "-t", "tmpfs", "fabtest-state-network", "/var/tmp/network"])
    ifupdown(node, "ifup")
    return etc


def ports(node, bridge):
    """Names of the bridge's ports, sorted."""
    return sorted(name for name, link in node.links().items() if link.get("master") == bridge)
