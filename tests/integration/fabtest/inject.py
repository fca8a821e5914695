# SPDX-License-Identifier: GPL-2.0-or-later
"""Hand-built VXLAN probes for guard tests, and what reached a guest.

A probe is a VXLAN header with a VNI and an inner Ethernet frame to a guest's
MAC carrying a UDP datagram to the guest's address, port PROBE_PORT. The
guest runs tcpdump for that port: whatever reaches it was delivered.
"""

import json
import os
from pathlib import Path

from .wait import wait_quiet

PROBE_PORT = 9999

# Builds VXLAN + Ethernet + IPv4 + UDP by hand and sends it COUNT times:
#   raw SRC DST DPORT VNI MAC IP COUNT   from any source address (IP_HDRINCL)
#   udp - DST DPORT VNI MAC IP COUNT     from an ordinary UDP socket (DST IPv4 or IPv6)
INJECTOR = r'''
import socket, struct, sys

def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

def ipv4(src, dst, payload):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0x4242, 0, 64, 17, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    return hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:] + payload

def udp(sport, dport, payload):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload

mode, src, dst, dport, vni, mac, guest_ip, count = sys.argv[1:9]
inner_ip = guest_ip.rsplit(".", 1)[0] + ".99"
frame = (bytes.fromhex(mac.replace(":", "")) + bytes.fromhex("02005e005399") + b"\x08\x00"
         + ipv4(inner_ip, guest_ip, udp(40000, 9999, b"fabricd-guard-probe")))
vxlan = struct.pack("!B3xI", 0x08, int(vni) << 8) + frame
for _ in range(int(count)):
    if mode == "raw":
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        s.sendto(ipv4(src, dst, udp(40001, int(dport), vxlan)), (dst, 0))
    else:
        s = socket.socket(socket.AF_INET6 if ":" in dst else socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.sendto(vxlan, (dst, int(dport)))
        except PermissionError:
            pass  # the sender's own guard refused it (EPERM from an nftables drop)
    s.close()
'''



def write_injector(cluster):
    """The injector script in the cluster's tmpdir; run it with /usr/bin/python3."""
    path = f"{cluster.tmpdir}/inject.py"
    Path(path).write_text(INJECTOR)
    return path


def guest_mac(guest):
    (link,) = json.loads(guest.run(["ip", "-j", "link", "show", "eth0"]).stdout)
    return link["address"]


def guest_capture(cluster, guest):
    """tcpdump on the guest's eth0 for the probe's UDP port."""
    def spawn(argv, stdout=None, stderr=None):
        return cluster._popen(guest.name, ["nsenter", f"--net=/run/netns/{guest.ns}"], argv,
                              None, stdout, stderr)
    return cluster._capture(spawn, "eth0", f"udp dst port {PROBE_PORT}", f"capture {guest.name}")


def delivered_to(cluster, guest, send):
    """Probes that reached guest while send() ran."""
    with guest_capture(cluster, guest) as cap:
        send()
        # a delivered probe is on the guest's wire within microseconds: the
        # capture file (written per packet) stops growing
        wait_quiet(lambda: os.path.getsize(cap.path) if os.path.exists(cap.path) else 0,
                   quiet=0.3, timeout=5, what="guest capture settles")
    return cap.count()
