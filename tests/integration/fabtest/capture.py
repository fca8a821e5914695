# SPDX-License-Identifier: GPL-2.0-or-later
"""Capture: tcpdump in a namespace, as a context manager.

    with cluster.capture() as cap:          # the underlay switch's bridge
        guest.ping(...)
    assert cap.count(Capture.VXLAN) == 0
    assert cap.count(Capture.WIREGUARD) > 0

Entering starts tcpdump writing a pcap file and returns only once tcpdump
reports "listening on" (the socket is bound and the filter attached), so no
packet sent afterwards is missed. Leaving stops it by PID with SIGINT, which
makes tcpdump flush and print its statistics. Afterwards count() and
packets() read the file again with any BPF filter, so one capture answers
several questions.

A tcpdump on a bridge device sees every frame the bridge forwards, not only
those for the bridge itself, because tcpdump makes the device promiscuous and
a promiscuous bridge passes every frame up as well (br_handle_frame_finish).
"""

import os
import re
import signal
import subprocess

from .proc import run
from .wait import wait_until

_PACKET_START = re.compile(r"^\d+\.\d+ ")


class Capture:
    """tcpdump -i IFACE in one namespace, writing PATH; see the module doc."""

    #: UDP port of plain VXLAN
    VXLAN = "udp port 4789"
    #: UDP port of secure VXLAN (only ever inside WireGuard)
    SECURE_VXLAN = "udp port 4790"
    #: WireGuard between the nodes (fabric.listen_port 51820)
    WIREGUARD = "udp port 51820"
    #: any IPv4 fragment (MF set or offset non-zero) or an IPv6 fragment header
    FRAGMENTS = "(ip and ip[6:2] & 0x3fff != 0) or (ip6 and ip6[6] == 44)"
    #: what nodes send on their own: ARP, IPv6 neighbour discovery, and MLD
    #: reports (ICMPv6 behind a hop-by-hop header, which `icmp6` misses)
    HOUSEKEEPING = "arp or icmp6 or (ip6 and ip6[6] == 0 and ip6[40] == 58)"

    def __init__(self, spawn, iface, path, bpf="", label="capture"):
        """spawn(argv) -> Popen runs argv in the right namespace."""
        self._spawn = spawn
        self.iface = iface
        self.path = path
        self.bpf = bpf
        self.label = label
        self.stderr_path = path + ".stderr"
        self.proc = None
        self.stats = {}

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        argv = ["tcpdump", "-i", self.iface, "-nn", "-U", "--immediate-mode",
                # tcpdump drops to its own user before opening the file;
                # the run's temporary directory is root's alone
                "-Z", "root", "-w", self.path]
        if self.bpf:
            argv.append(self.bpf)
        self._stderr = open(self.stderr_path, "w")
        self.proc = self._spawn(argv, stdout=subprocess.DEVNULL, stderr=self._stderr)
        wait_until(self._listening, timeout=10, what=f"{self.label}: tcpdump listening")

    def _listening(self):
        text = self.stderr_text()
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.label}: tcpdump exited {self.proc.returncode}: {text}")
        return "listening on" in text

    def stop(self):
        """Stop tcpdump (SIGINT by PID) and read its statistics."""
        if self.proc is None or self.proc.returncode is not None:
            return
        try:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        finally:
            self._stderr.close()
        for number, what in re.findall(r"(\d+) packets? (captured|received by filter|dropped by kernel)",
                                       self.stderr_text()):
            self.stats[what] = int(number)

    def stderr_text(self):
        try:
            with open(self.stderr_path) as f:
                return f.read()
        except OSError:
            return ""

    def packets(self, bpf="", verbose=False):
        """The captured packets matching bpf, one string per packet (tcpdump -nn -r)."""
        if self.proc is not None and self.proc.returncode is None:
            raise RuntimeError(f"{self.label}: read the capture after it stopped")
        if not os.path.exists(self.path):
            return []
        # -tt: every packet starts with "<seconds>.<micro> "; other lines
        # continue it (-v details, the inner frame of a decoded VXLAN packet)
        argv = ["tcpdump", "-nn", "-tt", "-r", self.path] + (["-v"] if verbose else [])
        if bpf:
            argv.append(bpf)
        out = run(argv, timeout=30, where=self.label).stdout
        packets = []
        for line in out.splitlines():
            if _PACKET_START.match(line) or not packets:
                packets.append(line)
            else:
                packets[-1] += "\n" + line
        return packets

    def count(self, bpf=""):
        """Number of captured packets matching bpf."""
        return len(self.packets(bpf))

    def vxlan_count(self):
        return self.count(self.VXLAN)

    def secure_vxlan_count(self):
        return self.count(self.SECURE_VXLAN)

    def wireguard_count(self, port=51820):
        return self.count(f"udp port {port}")

    def fragment_count(self):
        return self.count(self.FRAGMENTS)

    def summary(self, limit=20):
        """The first packets as text, for assertion messages."""
        pkts = self.packets()
        lines = pkts[:limit] + ([f"... {len(pkts) - limit} more"] if len(pkts) > limit else [])
        return f"{self.label} on {self.iface}: {len(pkts)} packets\n  " + "\n  ".join(lines)
