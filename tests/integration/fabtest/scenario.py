# SPDX-License-Identifier: GPL-2.0-or-later
"""The zones most scenarios share, and checks that span several nodes.

standard_zones() on a three-node cluster (pve1..pve3)::

    zone            transport  nodes            vnets (VNI)
    tenant-plain    plain      all              vnet100 (100), vnet101 (101)
    tenant-secure   secure     all              vnet200 (200), vnet201 (201)
    tenant-pair     secure     pve1, pve2       vnet300 (300)
"""

from .definition import zone
from .wait import wait_until


def standard_zones(pair=("pve1", "pve2")):
    """A plain zone, a secure zone (both on every node) and a secure zone on `pair`."""
    return [
        zone("tenant-plain", "plain", [("vnet100", 100), ("vnet101", 101)]),
        zone("tenant-secure", "secure", [("vnet200", 200), ("vnet201", 201)]),
        zone("tenant-pair", "secure", [("vnet300", 300)], nodes=list(pair)),
    ]


def ping_fabric(node, peer, timeout=20):
    """Wait until node reaches peer's fabric address through wgfab0.

    An initiation that reached the peer before it knew this node is retried by
    WireGuard only after REKEY_TIMEOUT (5 s), so allow for a few retries.
    """
    wait_until(lambda: node.run(["ping", "-n", "-c", "1", "-W", "1", peer.fabric_address]),
               timeout=timeout, what=f"{node.name} -> {peer.name} fabric address")


def warm_sessions(nodes):
    """Make every pair of nodes complete a WireGuard handshake and exchange data."""
    for node in nodes:
        for peer in nodes:
            if peer is not node:
                ping_fabric(node, peer)


def peer_sessions(node):
    """{peer public key: (latest handshake, rx bytes)} from `wg show wgfab0 dump`."""
    dump = node.wg_dump()
    assert dump is not None, f"{node.name}: no wgfab0"
    return {key: (p.latest_handshake, p.rx_bytes) for key, p in dump.peers.items()}


def assert_sessions_kept(node, before, after):
    """Every peer of `before` still in `after` with its session: counters not reset.

    Removing and re-adding a peer (replacing the peer list) zeroes its
    handshake time and byte counters; keeping it only lets them grow.
    """
    for key, (handshake, rx) in before.items():
        assert key in after, f"{node.name}: peer {key} disappeared"
        new_handshake, new_rx = after[key]
        assert new_handshake >= handshake > 0 and new_rx >= rx > 0, (
            f"{node.name}: session with {key} was reset "
            f"(handshake {handshake} -> {new_handshake}, rx {rx} -> {new_rx})")
