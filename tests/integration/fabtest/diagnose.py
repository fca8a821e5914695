# SPDX-License-Identifier: GPL-2.0-or-later
"""What a test prints when pings were lost during a transport switch, so that
one failure on a loaded machine can be explained without a second one.

    try:
        pingers.assert_no_loss("...")
    except AssertionError as e:
        raise AssertionError(f"{e}\\n{switch_report(cluster, daemons, 'vnet2')}") from None

Per node: WireGuard handshake age and counters per peer (a lost handshake
costs 5 s, REKEY_TIMEOUT, per attempt), the bridge's ports with their
learning/flood/isolated flags, its learned guest MACs and the VXLAN devices'
all-zeros remotes, and the daemon's passes and plan lines (the daemons run
with --verbose: `pass at <wall clock>`), to match against the missing
sequence numbers' send times the pinger report gives.
"""
import json
import time

_PLAN = ("pass at", "transport", "receive-only", "removed", "error", "not converged",
         "+ vxlan", "- vxlan", "fdb v")


def _wireguard(cluster, node):
    names = {n.public_key: n.name for n in cluster.nodes}
    dump = node.wg_dump()
    if dump is None:
        return ["  wgfab0: none"]
    now = time.time()
    lines = []
    for key, p in sorted(dump.peers.items(), key=lambda kv: names.get(kv[0], kv[0])):
        age = f"{now - p.latest_handshake:.1f} s ago" if p.latest_handshake else "never"
        lines.append(f"  wg peer {names.get(key, key)}: handshake {age}, rx {p.rx_bytes}, "
                     f"tx {p.tx_bytes}, endpoint {p.endpoint}")
    return lines


def _bridge(node, bridge):
    lines = []
    res = node.run(["bridge", "-j", "-d", "link", "show"], check=False)
    for port in json.loads(res.stdout) if res.returncode == 0 and res.stdout.strip() else []:
        if port.get("master") != bridge:
            continue
        flags = {k: port.get(k) for k in ("state", "learning", "flood", "isolated")}
        lines.append(f"  port {port['ifname']}: {flags}")
        for e in node.fdb(port["ifname"]):
            if e.get("mac") == "00:00:00:00:00:00":
                lines.append(f"    remote {e.get('dst')}")
            elif "master" in e and "permanent" not in e.get("state", ""):
                lines.append(f"    learned {e['mac']}")
            elif e.get("dst"):
                lines.append(f"    vxlan fdb {e['mac']} -> {e.get('dst')}")
    return lines


def switch_report(cluster, daemons, bridge):
    """Text: the state of every node and what its daemon did (see the module doc)."""
    out = [f"--- switch report at {time.time():.3f} (wall clock) ---"]
    for node in cluster.nodes:
        out.append(f"{node.name}:")
        out += _wireguard(cluster, node)
        out += _bridge(node, bridge)
        d = daemons.get(node.name)
        if d is not None:
            out += [f"  log: {line}" for line in d.log_lines()
                    if any(word in line for word in _PLAN) and "kernel:" not in line]
    return "\n".join(out)
