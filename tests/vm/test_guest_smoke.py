# SPDX-License-Identifier: GPL-2.0-or-later
"""Smoke test of the kernel-WireGuard tier, run inside the QEMU guest.

tests/vm/run-vm-tests.sh runs this file in the guest (Debian's kernel, which has
wireguard.ko) before the integration scenarios. It proves the whole path without
fabricd: two network namespaces joined by a veth "underlay", a kernel WireGuard device
in each, a VXLAN over the WireGuard addresses and a bridge on top; a ping crosses the
bridges, the largest unfragmented ping equals the bridge MTU, and a capture on the
underlay shows WireGuard only, never VXLAN.

On a host whose kernel has no WireGuard (the build machines) it skips.
"""

import os
import re
import shutil
import subprocess
import time
import uuid

import pytest

pytestmark = [pytest.mark.wireguard, pytest.mark.vxlan, pytest.mark.netns]

UNDERLAY = {"a": "192.0.2.1", "b": "192.0.2.2"}   # veth between the namespaces
FABRIC = {"a": "10.255.0.1", "b": "10.255.0.2"}     # on the WireGuard devices
BRIDGED = {"a": "10.77.0.1", "b": "10.77.0.2"}      # on the bridges (over VXLAN)
WG_PORT = 51820
VNI = 100
VXLAN_PORT = 4790          # fabricd's secure VXLAN port (inside WireGuard)
FABRIC_MTU = 1440          # 1500 - 60 (WireGuard over IPv4)
BRIDGE_MTU = 1390          # 1440 - 50 (VXLAN over IPv4)


def sh(*args, check=True, **kw):
    """Runs a command; on failure the assertion shows its output."""
    p = subprocess.run(list(args), capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        pytest.fail(f"{' '.join(args)} -> {p.returncode}\n{p.stdout}{p.stderr}")
    return p


def kernel_wireguard():
    """'' if this kernel can create a WireGuard device, else why not."""
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("ip", "wg", "ping", "tcpdump"):
        if not shutil.which(tool):
            return f"{tool} is not installed"
    ns = f"wgprobe-{uuid.uuid4().hex[:8]}"
    if subprocess.run(["ip", "netns", "add", ns], capture_output=True).returncode:
        return "cannot create a network namespace"
    try:
        p = subprocess.run(["ip", "-n", ns, "link", "add", "wgprobe", "type", "wireguard"],
                           capture_output=True, text=True)
        return "" if p.returncode == 0 else \
            f"this kernel has no WireGuard ({p.stderr.strip()}); run tests/vm/run-vm-tests.sh"
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@pytest.fixture
def pair(tmp_path):
    """Two namespaces a and b: veth underlay, kernel wg0, VXLAN vs100 in bridge br100."""
    why = kernel_wireguard()
    if why:
        pytest.skip(why)
    tag = uuid.uuid4().hex[:6]
    ns = {n: f"smoke{n}-{tag}" for n in "ab"}
    keys = {}
    for n in "ab":
        key = tmp_path / f"{n}.key"
        priv = sh("wg", "genkey").stdout.strip()
        key.write_text(priv + "\n")
        key.chmod(0o600)
        keys[n] = (key, sh("wg", "pubkey", input=priv + "\n").stdout.strip())
    try:
        for n in "ab":
            sh("ip", "netns", "add", ns[n])
            sh("ip", "-n", ns[n], "link", "set", "lo", "up")
            # No IPv6 on the pair: the devices' own router solicitations and MLD reports
            # made both sides start a WireGuard handshake at once; a collision costs a 5 s
            # retry each, and under TCG a run of them outlasted the first ping's wait.
            sh("ip", "netns", "exec", ns[n], "sysctl", "-q", "-w",
               "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
        sh("ip", "-n", ns["a"], "link", "add", "ul0", "type", "veth",
           "peer", "name", "ul0", "netns", ns["b"])
        for n, o in (("a", "b"), ("b", "a")):
            ip = ("ip", "-n", ns[n])
            sh(*ip, "addr", "add", f"{UNDERLAY[n]}/24", "dev", "ul0")
            sh(*ip, "link", "set", "ul0", "up")
            sh(*ip, "link", "add", "wg0", "type", "wireguard")
            sh("ip", "netns", "exec", ns[n], "wg", "set", "wg0",
               "listen-port", str(WG_PORT), "private-key", str(keys[n][0]),
               "peer", keys[o][1], "endpoint", f"{UNDERLAY[o]}:{WG_PORT}",
               "allowed-ips", f"{FABRIC[o]}/32")
            sh(*ip, "addr", "add", f"{FABRIC[n]}/24", "dev", "wg0")
            sh(*ip, "link", "set", "wg0", "mtu", str(FABRIC_MTU), "up")
            sh(*ip, "link", "add", f"vs{VNI}", "type", "vxlan", "id", str(VNI),
               "dstport", str(VXLAN_PORT), "local", FABRIC[n], "nolearning")
            sh("bridge", "-n", ns[n], "fdb", "append", "00:00:00:00:00:00",
               "dev", f"vs{VNI}", "dst", FABRIC[o])
            sh(*ip, "link", "add", f"br{VNI}", "type", "bridge")
            sh(*ip, "link", "set", f"vs{VNI}", "master", f"br{VNI}", "mtu", str(BRIDGE_MTU), "up")
            sh(*ip, "link", "set", f"br{VNI}", "mtu", str(BRIDGE_MTU), "up")
            sh(*ip, "addr", "add", f"{BRIDGED[n]}/24", "dev", f"br{VNI}")
        yield ns, keys
    finally:
        for n in "ab":
            subprocess.run(["ip", "netns", "del", ns[n]], capture_output=True)


def ping(ns, dst, *extra):
    return sh("ip", "netns", "exec", ns, "ping", "-n", "-c", "3", "-i", "0.2", "-W", "2",
              *extra, dst, check=False)


def wait_reachable(ns, dst, seconds=60):
    """Pings until dst answers: the first handshake may be lost while the peer's device
    is not yet up (WireGuard retries after 5 s) and everything is slow under TCG."""
    deadline = time.monotonic() + seconds
    while True:
        p = sh("ip", "netns", "exec", ns, "ping", "-n", "-c", "1", "-W", "1", dst, check=False)
        if p.returncode == 0 or time.monotonic() > deadline:
            return p


def test_kernel_wireguard_device(pair):
    ns, keys = pair
    link = sh("ip", "-n", ns["a"], "-d", "link", "show", "wg0").stdout
    assert "wireguard" in link, link
    assert os.path.isdir("/sys/module/wireguard")             # the kernel's, not wireguard-go
    dump = sh("ip", "netns", "exec", ns["a"], "wg", "show", "wg0", "dump").stdout.splitlines()
    assert dump[1].split("\t")[0] == keys["b"][1]          # the one peer is b
    p = wait_reachable(ns["a"], FABRIC["b"])
    assert p.returncode == 0, "no ping across WireGuard:\n" + p.stdout + p.stderr
    p = ping(ns["a"], FABRIC["b"])
    assert p.returncode == 0, p.stdout + p.stderr
    hs = sh("ip", "netns", "exec", ns["a"], "wg", "show", "wg0", "latest-handshakes").stdout
    assert int(hs.split()[1]) > 0, hs


def test_vxlan_over_wireguard_bridge(pair, tmp_path):
    ns, _ = pair
    pcap = tmp_path / "underlay.pcap"
    dump = subprocess.Popen(["ip", "netns", "exec", ns["a"], "tcpdump", "-i", "ul0", "-nn",
                             "-U", "-w", str(pcap), "udp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30     # wait until tcpdump is listening
        while dump.poll() is None and time.monotonic() < deadline:
            if pcap.exists():
                break
            time.sleep(0.1)
        time.sleep(0.5)
        p = wait_reachable(ns["a"], BRIDGED["b"])
        assert p.returncode == 0, "no ping across the bridges:\n" + p.stdout + p.stderr
        p = ping(ns["a"], BRIDGED["b"])
        assert p.returncode == 0, "no ping across the bridges:\n" + p.stdout + p.stderr
        # largest unfragmented packet = bridge MTU (ICMP 8 + IPv4 20 = 28 bytes of headers)
        p = ping(ns["a"], BRIDGED["b"], "-M", "do", "-s", str(BRIDGE_MTU - 28))
        assert p.returncode == 0, p.stdout + p.stderr
        p = ping(ns["a"], BRIDGED["b"], "-M", "do", "-s", str(BRIDGE_MTU - 27), "-c", "1")
        assert p.returncode != 0, "a packet over the bridge MTU went through unfragmented"
        time.sleep(0.5)
    finally:
        dump.terminate()
        dump.wait(timeout=10)
    read = sh("tcpdump", "-r", str(pcap), "-nn").stdout
    assert re.search(rf"\.{WG_PORT}[ :]", read), "no WireGuard traffic on the underlay:\n" + read
    assert not re.search(rf"\.(4789|{VXLAN_PORT})[ :]", read), \
        "VXLAN seen in clear on the underlay:\n" + read
