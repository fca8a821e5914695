#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# reroute_by_mark.sh - the routing half of evpn_switch_by_mark.py without a
# bridge-family table: can the `inet` guard table itself send one VNI's
# VXLAN into another device? A `type route hook output` chain marks the
# outer packets of VNI 7 (udp dport 4789, VNI read at @th,96,24), the kernel
# routes marked local packets again, and `ip rule fwmark` sends them to
# table 4242, whose default route is the veth w0 (standing in for wgfab0).
# A postrouting rule drops that VNI's VXLAN on any other device: output-hook
# rules still see the device chosen before the mark.
#
#   sudo bash tests/experiments/reroute_by_mark.sh            # route in place
#   sudo NO_ROUTE=1 bash tests/experiments/reroute_by_mark.sh # table 4242 empty
#
# Prints the VXLAN packets seen on the underlay veth and on w0, and the
# leak rule's counter. Measured 2026-12-03 (kernel 6.18, nft 1.0.6): with
# the route 0 on the underlay, 10 of 10 on w0, counter 0; without it 0 and 0,
# the counter 13-14 (fail-closed: marked packets fall back to the main table
# and are dropped). Nothing here is part of any test command.
set -e
N=rr$$
X="ip netns exec $N"
P="ip netns exec ${N}p"
cleanup() {
	kill $T1 $T2 2>/dev/null || true
	ip netns del $N 2>/dev/null || true
	ip netns del ${N}p 2>/dev/null || true
	rm -f /tmp/$N.u.pcap /tmp/$N.w.pcap
}
trap cleanup EXIT
ip netns add $N
ip netns add ${N}p
$X ip link set lo up
$X ip link add u0 type veth peer name u0p
$X ip link add w0 type veth peer name w0p
$X ip link set u0p netns ${N}p
$X ip link set w0p netns ${N}p
$X ip addr add 10.9.0.1/24 dev u0
$X ip link set u0 up
$X ip link set w0 up
$P ip link set u0p up
$P ip link set w0p up
$X ip link add vx7 type vxlan id 7 local 10.9.0.1 dstport 4789 nolearning
$X ip link add br7 type bridge
$X ip link set vx7 master br7
$X ip link set vx7 up
$X ip link set br7 up
$X bridge fdb append 00:00:00:00:00:00 dev vx7 dst 10.9.0.2
$X ip addr add 192.168.7.1/24 dev br7
$X ip rule add fwmark 0xfab0/0xffff lookup 4242 pref 4011
[ -n "$NO_ROUTE" ] || $X ip route add default dev w0 table 4242
# nobody answers ARP for the remote VTEP here: neighbours by hand, on both paths
$X ip neigh replace 10.9.0.2 lladdr 02:00:00:00:00:02 dev u0
$X ip neigh replace 10.9.0.2 lladdr 02:00:00:00:00:03 dev w0
$X nft -f - <<NFT
table inet t {
  chain carry { type route hook output priority mangle; udp dport 4789 @th,96,24 7 meta mark set meta mark & 0xffff0000 | 0xfab0; }
  chain leak { type filter hook postrouting priority -10; udp dport 4789 @th,96,24 7 oifname != "w0" counter drop; }
}
NFT
$P tcpdump -nni u0p -c 10 udp port 4789 -w /tmp/$N.u.pcap 2>/dev/null &
T1=$!
$P tcpdump -nni w0p -c 10 udp port 4789 -w /tmp/$N.w.pcap 2>/dev/null &
T2=$!
sleep 1
# the ARP requests for 192.168.7.2 flood through vx7
$X ping -c 3 -W 0.2 192.168.7.2 >/dev/null 2>&1 || true
sleep 0.5
kill $T1 $T2 2>/dev/null || true
wait $T1 $T2 2>/dev/null || true
echo "VXLAN packets on the underlay: $(tcpdump -nr /tmp/$N.u.pcap 2>/dev/null | grep -c 'UDP\|VXLAN' || true)," \
	"on w0: $(tcpdump -nr /tmp/$N.w.pcap 2>/dev/null | grep -c 'UDP\|VXLAN' || true)"
$X nft list chain inet t leak | grep -o 'counter packets [0-9]*'
