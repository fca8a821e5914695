# SPDX-License-Identifier: GPL-2.0-or-later
"""A node whose route to a peer picks a source address other than its underlay address.

WireGuard has no source address of its own: it sends from the address the
kernel's route picks. The guard of every other node takes WireGuard only
from this node's underlay address, so on a host with a second address in the
underlay prefix (IPv6: a static address beside a SLAAC one; Linux prefers
the newer one) every handshake the node starts is dropped there
(drop_wireguard), and its secure zones work only while the other side
starts the sessions. Found by a randomized walk (incremental apply against
a from-scratch apply): after a listen port change on an IPv6 underlay the
guests of a secure vnet stayed apart for 30 s and more.

fabricd cannot choose WireGuard's source; it says so on `apply` and `plan`,
naming the peer, both addresses and what to do, and the remedy it gives
(a route to the peer with the underlay address as source) works.
"""

import json

import pytest

from fabtest import wait_until, zone

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]



def warning(node, peer):
    return (f"this host sends to node {peer.name} ({peer.underlay}) from 2001:db8::a{node.index}, "
            f"not from its underlay address {node.underlay}")


def drop_wireguard(node):
    out = node.run(["nft", "-j", "list", "counter", "inet", "fabricd", "drop_wireguard"]).stdout
    return next(item["counter"]["packets"] for item in json.loads(out)["nftables"]
                if "counter" in item)


def test_route_source_other_than_underlay_is_said_and_the_remedy_works(make_cluster):
    cluster = make_cluster(2, family=6)
    pve1, pve2 = cluster.nodes
    definition = cluster.definition(zones=[zone("t", "secure", [("vnet100", 100)])], keepalive=0)
    path = cluster.write_definition(definition)
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 0 and "sends to node" not in res.stderr, res  # one address: no warning

    # each node gets a second address in the underlay prefix, newer: the kernel's
    # preferred source, so neither node's handshakes pass the other's guard
    for node in (pve1, pve2):
        node.run(["ip", "addr", "add", f"2001:db8::a{node.index}/64", "dev", "eth0", "nodad"])
    for node, peer in ((pve1, pve2), (pve2, pve1)):
        res = node.fabricd("apply", "-c", path)
        assert res.rc == 0, res
        assert warning(node, peer) in res.stderr, res.stderr
        assert (f"ip route replace {peer.underlay} dev DEV src {node.underlay}"
                in res.stderr), res.stderr
    res = pve1.fabricd("plan", "-c", path)
    assert res.rc == 0 and warning(pve1, pve2) in res.stderr, res

    # what the warning says: the guests of a secure vnet stay apart
    g1 = cluster.add_guest(pve1, "vnet100", "10.0.0.1/24")
    g2 = cluster.add_guest(pve2, "vnet100", "10.0.0.2/24")
    assert not g1.ping(g2, count=2)
    assert drop_wireguard(pve1) + drop_wireguard(pve2) > 0

    # the remedy it names: the sessions start, and apply says nothing more
    for node, peer in ((pve1, pve2), (pve2, pve1)):
        node.run(["ip", "-6", "route", "replace", peer.underlay, "dev", "eth0",
                  "src", node.underlay])
        res = node.fabricd("apply", "-c", path)
        assert res.rc == 0 and "sends to node" not in res.stderr, res
    wait_until(lambda: g1.ping(g2), timeout=15, what="g1 -> g2 once both send from their underlay")
