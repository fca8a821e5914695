#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes the hand-made seeds of fuzz_nldump into seeds-nl/ (next to this script).

The recorded fixtures (tests/fixtures/nl/*/) cover an IPv4 node running
wireguard-go; these add what they lack: IPv6 VXLAN locals, FDB and address
entries, owner notes in an alias, a kernel WireGuard dump (generic netlink,
which nothing records here) including a peer continued in a second message,
and UAPI answers with IPv6 endpoints or an error.

Each seed starts with the harness's selector byte (0 rtnetlink, 1 generic
netlink, 2 UAPI text). The attribute numbers are those of the kernel's uapi
headers (linux/if_link.h, linux/wireguard.h); rerun after changing this file:
    /usr/bin/python3 tests/fuzz/make_nl_seeds.py
"""

import ipaddress
import pathlib
import socket
import struct

SEEDS = pathlib.Path(__file__).resolve().parent / "seeds-nl"

SELECT_RTNL, SELECT_GENL, SELECT_UAPI = 0, 1, 2
NLA_F_NESTED = 0x8000
NLM_F_MULTI = 0x2

# rtnetlink
RTM_NEWLINK, RTM_NEWADDR, RTM_NEWNEIGH = 16, 20, 28
IFLA_IFNAME, IFLA_MTU, IFLA_MASTER, IFLA_LINKINFO, IFLA_IFALIAS = 3, 4, 10, 18, 20
IFLA_INFO_KIND, IFLA_INFO_DATA, IFLA_INFO_SLAVE_KIND, IFLA_INFO_SLAVE_DATA = 1, 2, 4, 5
IFLA_VXLAN_ID, IFLA_VXLAN_LINK, IFLA_VXLAN_LOCAL, IFLA_VXLAN_PORT, IFLA_VXLAN_LOCAL6 = 1, 3, 4, 15, 17
IFLA_BRPORT_ISOLATED = 33
NDA_DST, NDA_LLADDR = 1, 2
IFA_ADDRESS, IFA_LOCAL = 1, 2
AF_BRIDGE = 7
IFF_UP = 1

# generic netlink WireGuard
WG_GENL_FAMILY_ID = 0x1c  # any id: the parser does not check it
WG_CMD_GET_DEVICE = 0
(WGDEVICE_A_IFINDEX, WGDEVICE_A_IFNAME, WGDEVICE_A_PRIVATE_KEY, WGDEVICE_A_PUBLIC_KEY,
 WGDEVICE_A_LISTEN_PORT, WGDEVICE_A_FWMARK, WGDEVICE_A_PEERS) = 1, 2, 3, 4, 6, 7, 8
(WGPEER_A_PUBLIC_KEY, WGPEER_A_PRESHARED_KEY, WGPEER_A_ENDPOINT,
 WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL, WGPEER_A_LAST_HANDSHAKE_TIME, WGPEER_A_RX_BYTES,
 WGPEER_A_TX_BYTES, WGPEER_A_ALLOWEDIPS) = 1, 2, 4, 5, 6, 7, 8, 9
WGALLOWEDIP_A_FAMILY, WGALLOWEDIP_A_IPADDR, WGALLOWEDIP_A_CIDR_MASK = 1, 2, 3


def align4(data):
    return data + b"\0" * (-len(data) % 4)


def attr(kind, payload):
    """One netlink attribute (header + payload, padded)."""
    return align4(struct.pack("=HH", 4 + len(payload), kind) + payload)


def nest(kind, *attrs):
    return attr(kind | NLA_F_NESTED, b"".join(attrs))


def strz(text):
    return text.encode() + b"\0"


def u8(v):
    return struct.pack("=B", v)


def u16(v):
    return struct.pack("=H", v)


def u32(v):
    return struct.pack("=I", v)


def u64(v):
    return struct.pack("=Q", v)


def be16(v):
    return struct.pack("!H", v)


def msg(msg_type, header, *attrs, seq=1):
    """One netlink message: nlmsghdr + fixed header + attributes."""
    body = align4(header) + b"".join(attrs)
    return struct.pack("=IHHII", 16 + len(body), msg_type, NLM_F_MULTI, seq, 0) + body


def ifinfomsg(index, flags=IFF_UP):
    return struct.pack("=BxHiII", socket.AF_UNSPEC, 1, index, flags, 0)


def ndmsg(index, family=AF_BRIDGE):
    return struct.pack("=BxxxiHBB", family, index, 0x80, 0x2, 0)


def ifaddrmsg(family, prefixlen, index):
    return struct.pack("=BBBBI", family, prefixlen, 0x80, 0, index)


def ip(text):
    return ipaddress.ip_address(text).packed


def vxlan_link(index, name, vni, port, local, master, isolated=True, alias="fabricd:lab"):
    local_attr = (attr(IFLA_VXLAN_LOCAL6, ip(local)) if ":" in local
                  else attr(IFLA_VXLAN_LOCAL, ip(local)))
    return msg(RTM_NEWLINK, ifinfomsg(index),
               attr(IFLA_IFNAME, strz(name)), attr(IFLA_MTU, u32(1390)),
               attr(IFLA_MASTER, u32(master)), attr(IFLA_IFALIAS, strz(alias)),
               nest(IFLA_LINKINFO,
                    attr(IFLA_INFO_KIND, strz("vxlan")),
                    nest(IFLA_INFO_DATA, attr(IFLA_VXLAN_ID, u32(vni)),
                         attr(IFLA_VXLAN_LINK, u32(2)), local_attr,
                         attr(IFLA_VXLAN_PORT, be16(port))),
                    attr(IFLA_INFO_SLAVE_KIND, strz("bridge")),
                    nest(IFLA_INFO_SLAVE_DATA, attr(IFLA_BRPORT_ISOLATED, u8(int(isolated))))))


def bridge_link(index, name, alias):
    return msg(RTM_NEWLINK, ifinfomsg(index),
               attr(IFLA_IFNAME, strz(name)), attr(IFLA_MTU, u32(1390)),
               attr(IFLA_IFALIAS, strz(alias)),
               nest(IFLA_LINKINFO, attr(IFLA_INFO_KIND, strz("bridge"))))


def fdb_entry(index, mac, dst):
    return msg(RTM_NEWNEIGH, ndmsg(index), attr(NDA_LLADDR, bytes(mac)), attr(NDA_DST, ip(dst)))


def address(family, prefixlen, index, local, peer=None):
    attrs = [attr(IFA_ADDRESS, ip(peer or local))]
    if peer:
        attrs.append(attr(IFA_LOCAL, ip(local)))
    return msg(RTM_NEWADDR, ifaddrmsg(family, prefixlen, index), *attrs)


def sockaddr(text, port):
    a = ipaddress.ip_address(text)
    if a.version == 4:
        return struct.pack("=H", socket.AF_INET) + be16(port) + a.packed + b"\0" * 8
    return struct.pack("=H", socket.AF_INET6) + be16(port) + u32(0) + a.packed + u32(0)


def allowed_ip(text):
    net = ipaddress.ip_network(text)
    family = socket.AF_INET if net.version == 4 else socket.AF_INET6
    return nest(0, attr(WGALLOWEDIP_A_FAMILY, u16(family)),
                attr(WGALLOWEDIP_A_IPADDR, net.network_address.packed),
                attr(WGALLOWEDIP_A_CIDR_MASK, u8(net.prefixlen)))


def peer(key_byte, endpoint=None, allowed=(), full=True):
    attrs = [attr(WGPEER_A_PUBLIC_KEY, bytes([key_byte]) * 32)]
    if full:
        attrs += [attr(WGPEER_A_PRESHARED_KEY, b"\0" * 32),
                  attr(WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL, u16(25)),
                  attr(WGPEER_A_LAST_HANDSHAKE_TIME, struct.pack("=qq", 1700000000, 5)),
                  attr(WGPEER_A_RX_BYTES, u64(180)), attr(WGPEER_A_TX_BYTES, u64(752))]
        if endpoint:
            attrs.append(attr(WGPEER_A_ENDPOINT, sockaddr(*endpoint)))
    attrs.append(nest(WGPEER_A_ALLOWEDIPS, *(allowed_ip(a) for a in allowed)))
    return nest(0, *attrs)


def genl_device(*attrs, seq=1):
    genlmsghdr = struct.pack("=BBH", WG_CMD_GET_DEVICE, 1, 0)
    return msg(WG_GENL_FAMILY_ID, genlmsghdr, *attrs, seq=seq)


def seeds():
    zero_mac = [0] * 6
    yield "rtnl-links-ipv6", SELECT_RTNL, b"".join([
        bridge_link(10, "vnet100", "fabricd:lab"),
        vxlan_link(11, "vs100", 100, 4790, "fd00:255::1", 10),
        vxlan_link(12, "vx100", 100, 4789, "2001:db8::11", 10,
                   alias="fabricd:lab retire-after=1700000030"),
        bridge_link(13, "hand0", "admin: not ours"),
    ])
    yield "rtnl-fdb-ipv6", SELECT_RTNL, b"".join([
        fdb_entry(11, zero_mac, "fd00:255::2"),
        fdb_entry(11, zero_mac, "fd00:255::3"),
        fdb_entry(11, [0x02, 0, 0, 0, 0, 0x42], "fd00:255::4"),
        fdb_entry(12, zero_mac, "2001:db8::12"),
    ])
    yield "rtnl-addrs-mixed", SELECT_RTNL, b"".join([
        address(socket.AF_INET6, 64, 5, "fd00:255::1"),
        address(socket.AF_INET6, 64, 5, "fe80::1"),
        address(socket.AF_INET, 32, 5, "10.255.0.1", peer="10.255.0.9"),
    ])
    device_attrs = [attr(WGDEVICE_A_IFINDEX, u32(5)), attr(WGDEVICE_A_IFNAME, strz("wgfab0")),
                    attr(WGDEVICE_A_PRIVATE_KEY, bytes([0x40]) * 32),
                    attr(WGDEVICE_A_PUBLIC_KEY, bytes([0x41]) * 32),
                    attr(WGDEVICE_A_LISTEN_PORT, u16(51820)), attr(WGDEVICE_A_FWMARK, u32(0))]
    yield "genl-device", SELECT_GENL, genl_device(
        *device_attrs,
        nest(WGDEVICE_A_PEERS,
             peer(0x01, ("192.0.2.12", 51820), ["10.255.0.2/32"]),
             peer(0x02, ("2001:db8::13", 51821), ["fd00:255::3/128", "10.0.3.0/24"])))
    # the kernel continues a long allowed-IP list in a second message
    yield "genl-device-continued", SELECT_GENL, genl_device(
        *device_attrs,
        nest(WGDEVICE_A_PEERS, peer(0x01, ("192.0.2.12", 51820), ["10.255.0.2/32"]))
    ) + genl_device(
        attr(WGDEVICE_A_IFNAME, strz("wgfab0")),
        nest(WGDEVICE_A_PEERS, peer(0x01, allowed=["10.1.0.0/16"], full=False),
             peer(0x03, ("192.0.2.14", 51820), ["10.255.0.4/32"])), seq=2)
    key = "a8" * 32
    yield "uapi-ipv6", SELECT_UAPI, (
        f"private_key={key}\nlisten_port=51820\nfwmark=0\n"
        f"public_key={'9a' * 32}\npreshared_key={'00' * 32}\nprotocol_version=1\n"
        "endpoint=[2001:db8::12]:51820\nlast_handshake_time_sec=0\nlast_handshake_time_nsec=0\n"
        "tx_bytes=0\nrx_bytes=0\npersistent_keepalive_interval=0\n"
        "allowed_ip=fd00:255::2/128\nallowed_ip=10.0.0.0/8\n"
        f"public_key={'9b' * 32}\nendpoint=[fe80::1%lo]:51820\nallowed_ip=10.255.0.3/32\n"
        "errno=0\n\n").encode()
    yield "uapi-error", SELECT_UAPI, b"errno=-22\n\n"


def main():
    for name, select, data in seeds():
        (SEEDS / name).write_bytes(bytes([select]) + data)


if __name__ == "__main__":
    main()
