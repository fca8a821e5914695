#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Static flood lists versus BGP EVPN (FRR), measured on namespace clusters.

    sudo /usr/bin/python3 tests/bench/evpn_vs_static.py [--sizes 3,8] [--vnis 2]
        [--quick] [--json FILE] [--fabricd BIN]

For each size N it builds two SimClusters (tests/integration/fabtest) of N
nodes with one secure zone of V vnets: one "static", one "evpn" with zebra
and bgpd running on every node (iBGP full mesh, timers 3/9). Per cluster:

  converge     first `apply` until every node's flood lists are complete
               (static: fabricd writes them; evpn: BGP sessions and type-3)
  flood        all-zeros FDB entries per node on the zone's VXLAN devices
  fdb          all FDB entries with a remote (dst) on those devices per node,
               once every node's guest has sent a broadcast: flood + MACs
  new MAC      a new guest's first frame (the ARP of a ping), as its node's
               bridge learns it, until EVERY other node's VXLAN FDB has the
               MAC at the guest's VTEP (static: VXLAN learning from the
               flooded frame; evpn: zebra installs the type-2 route)
  MAC move     the guest leaves its node (tap gone) and appears on another:
               its first frame there until every other node points to the
               new VTEP
  node loss    the new node's underlay port goes down on the switch (it
               dies silently, no BGP notification), until every other node
               has withdrawn its flood entries on every VNI (evpn: BGP hold
               time, 9 s); static: never, fabricd's entries follow the
               definition, so the window is waited out and reported as such

Times come from `bridge -timestamp monitor fdb` in every node (one clock,
microseconds), so polling does not blur them. --quick: 3 nodes, 1 VNI, a
2 s static node-loss window (about 20 s in all, more on a loaded machine;
tests/integration/test_bench_evpn.py runs it). Prints a table; --json
writes the results. EVPN_BENCH_DEBUG=1 prints each node's last FDB events
and BGP summary after the node loss (stderr) and has FRR log BGP neighbor
events and zebra's VXLAN work; EVPN_BENCH_DEBUG=DIR also keeps those logs
in DIR.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

from fabtest import SimCluster, run, wait_until, zone  # noqa: E402
from fabtest.frr import Frr, frr_available  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MAC = "02:00:00:15:00:99"
ZEROS = "00:00:00:00:00:00"
HOLD_TIME = 9  # fabricd's peer group: timers 3 9


class FdbMonitor:
    """`bridge -timestamp monitor fdb` inside one node; events parsed from its log."""

    def __init__(self, node, path):
        self.node = node
        self.path = path
        with open(path, "w") as out:
            self.proc = node.run_bg(["bridge", "-timestamp", "monitor", "fdb"], stdout=out,
                                    stderr=subprocess.DEVNULL)

    def events(self):
        """[(time, deleted, words)] in order."""
        found, stamp = [], None
        with open(self.path) as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("Timestamp: "):
                    # "Timestamp: Wed Dec  2 03:09:16 2026 675924 usec"
                    parts = line[len("Timestamp: "):].split()
                    t = time.mktime(time.strptime(" ".join(parts[:5]), "%a %b %d %H:%M:%S %Y"))
                    stamp = t + int(parts[5]) / 1e6
                elif stamp is not None and line:
                    words = line.split()
                    deleted = words[0] == "Deleted"
                    found.append((stamp, deleted, words[1:] if deleted else words))
        return found

    def first(self, after, deleted, mac, dev, dst=None):
        """Time of the first event after `after` for mac on dev (with dst), else None."""
        for t, d, w in self.events():
            if t < after or d != deleted or w[0] != mac or f"dev {dev}" not in " ".join(w):
                continue
            if dst is None or f"dst {dst}" in " ".join(w):
                return t
        return None

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=5)


def vxlan_devs(n_vnis, control_plane):
    """A secure zone's devices: vs<VNI> (static), vx<VNI> (evpn: one device in both transports)."""
    prefix = "vx" if control_plane == "evpn" else "vs"
    return [f"{prefix}{100 + i}" for i in range(n_vnis)]



def count_entries(node, devs):
    """(all-zeros entries, entries with a dst) on devs."""
    flood = fdb = 0
    for dev in devs:
        for e in node.fdb(dev):
            if "dst" in e:
                fdb += 1
                flood += e.get("mac") == ZEROS
    return flood, fdb


def frr_debug(cluster, node):
    """With EVPN_BENCH_DEBUG: FRR logs BGP neighbor events and zebra's VXLAN work."""
    if not os.environ.get("EVPN_BENCH_DEBUG"):
        return ""
    return (f"log file /var/run/frr/fabtest-{cluster.suffix}-{node.name}/frr.log debugging\n"
            "debug bgp neighbor-events\ndebug bgp zebra\ndebug zebra vxlan\n!\n")


def keep_frr_logs(cluster, frrs):
    """With EVPN_BENCH_DEBUG=DIR (not "1"): copy each node's FRR log there before it goes."""
    where = os.environ.get("EVPN_BENCH_DEBUG")
    if not where or where == "1":
        return
    for name, f in frrs.items():
        try:
            shutil.copy(f"{f.rundir}/frr.log", f"{where}/frr-{cluster.suffix}-{name}.log")
        except OSError as e:
            print(f"evpn_vs_static: {name}'s FRR log not kept: {e}", file=sys.stderr)


def report_incomplete(cluster, frrs, devs):
    """What each node has when its flood lists do not complete (stderr)."""
    for n in cluster.nodes:
        print(f"--- {n.name}: " + ", ".join(f"{d} floods to {n.fdb_remotes(d)}" for d in devs),
              file=sys.stderr)
        if n.name in frrs:
            for cmd in ("show bgp l2vpn evpn summary", "show evpn vni"):
                print(frrs[n.name].vtysh(cmd, check=False), file=sys.stderr)


def build(control_plane, n_nodes, n_vnis, fabricd_bin):
    """A converged cluster: (cluster, frrs, extra args per node, seconds to converge)."""
    cluster = SimCluster(n_nodes, fabricd_bin=fabricd_bin, wg_backend="userspace")
    frrs = {}
    try:
        definition = cluster.definition(zones=[
            zone("z", "secure", [(f"vnet{100 + i}", 100 + i) for i in range(n_vnis)])])
        if control_plane == "evpn":
            definition["fabric"]["control_plane"] = "evpn"
            definition["fabric"]["evpn"] = {"asn": 65000}
            for n in cluster.nodes:
                frrs[n.name] = Frr(n, foreign=frr_debug(cluster, n)).start()
        path = cluster.write_definition(definition)
        t0 = time.monotonic()
        for node in cluster.nodes:
            extra = ["--frr-pathspace", frrs[node.name].pathspace] if frrs else []
            res = node.fabricd("apply", "-c", path, *extra, timeout=60)
            if res.rc != 0:
                raise RuntimeError(f"apply on {node.name} failed: {res}")
        devs = vxlan_devs(n_vnis, control_plane)
        try:
            wait_until(lambda: all(len(n.fdb_remotes(d)) == n_nodes - 1 for n in cluster.nodes
                                   for d in devs),
                       timeout=60 + 5 * n_nodes, interval=0.2, what="flood lists complete")
        except AssertionError:
            report_incomplete(cluster, frrs, devs)
            raise
        return cluster, frrs, round(time.monotonic() - t0, 3)
    except BaseException:
        for f in frrs.values():
            f.stop()
        cluster.close()
        raise


def spread(monitors, nodes, since, t0, deleted, mac, dev, dst, timeout):
    """{node: seconds after t0} once every node saw the event after `since`, else None.

    since is before the cause (the ping's start), t0 the cause as its node saw
    it: two monitors read their events a little apart, so a remote event can
    carry an earlier stamp than t0 by that jitter; it counts as 0.
    """
    def seen():
        return {n.name: monitors[n.name].first(since, deleted, mac, dev, dst) for n in nodes}
    try:
        wait_until(lambda: all(v is not None for v in seen().values()), timeout=timeout,
                   interval=0.05)
    except AssertionError:
        pass
    return {name: (None if t is None else round(max(0.0, t - t0), 3))
            for name, t in seen().items()}


def worst(per_node):
    values = list(per_node.values())
    return None if not values or None in values else max(values)


def local_learnt(monitor, mac, tap, since, timeout=5):
    """When the node's bridge learnt mac on tap (the guest's first frame)."""
    def when():
        for t, d, w in monitor.events():
            if t >= since and not d and w[0] == mac and f"dev {tap}" in " ".join(w):
                return t
        return None
    return wait_until(when, timeout=timeout, interval=0.02, what=f"{mac} learnt on {tap}")


def first_frame(guest, target):
    return subprocess.Popen(["ip", "netns", "exec", guest.ns, "ping", "-c", "1", "-W", "2", target],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def add_mac_guest(cluster, node, name):
    g = cluster.add_guest(node, "vnet100", "10.100.0.200/24", name=name)
    run(["ip", "-n", g.ns, "link", "set", "eth0", "address", MAC])
    return g


def fdb_steady(cluster, n_vnis, control_plane):
    """One guest per node, each sends a broadcast; then the FDB entries per node."""
    nodes, devs = cluster.nodes, vxlan_devs(n_vnis, control_plane)
    guests = [cluster.add_guest(n, "vnet100", f"10.100.0.{i}/24", name=f"g{i}")
              for i, n in enumerate(nodes, 1)]
    for i, g in enumerate(guests):
        peer = guests[(i + 1) % len(guests)]
        wait_until(lambda: g.ping(peer), timeout=15, what=f"{g.name} pings {peer.name}")
    want = (len(nodes) - 1) * (n_vnis + 1)  # flood entries + the other guests' MACs
    try:
        wait_until(lambda: all(count_entries(n, devs)[1] >= want for n in nodes), timeout=10,
                   interval=0.2)
    except AssertionError:
        pass  # reported as counted
    counts = {n.name: count_entries(n, devs) for n in nodes}
    return guests, {k: v[0] for k, v in counts.items()}, {k: v[1] for k, v in counts.items()}


def debug_loss(control_plane, others, monitors, frrs, still, t0):
    for n in others:
        print(f"--- {control_plane} {n.name} still={still[n.name]}", file=sys.stderr)
        for t, deleted, words in monitors[n.name].events()[-12:]:
            print(f"{t - t0:.3f} {'Deleted ' if deleted else ''}{' '.join(words)}", file=sys.stderr)
        if frrs:
            print(frrs[n.name].vtysh("show bgp l2vpn evpn summary", check=False), file=sys.stderr)


def measure(control_plane, n_nodes, n_vnis, fabricd_bin, static_loss_window):
    cluster, frrs, converge = build(control_plane, n_nodes, n_vnis, fabricd_bin)
    monitors = {}
    try:
        nodes, devs = cluster.nodes, vxlan_devs(n_vnis, control_plane)
        dev0 = devs[0]
        for n in nodes:
            monitors[n.name] = FdbMonitor(n, f"{cluster.tmpdir}/fdbmon-{n.name}.log")
        time.sleep(0.5)  # the monitors subscribe
        _, flood, fdb = fdb_steady(cluster, n_vnis, control_plane)
        b, c = nodes[1], nodes[-1]  # nodes[0] has the guest every frame goes to

        # new MAC: a guest on b, its first frame
        gb = add_mac_guest(cluster, b, "newmac")
        since = time.time()
        p = first_frame(gb, "10.100.0.1")
        t0 = local_learnt(monitors[b.name], MAC, gb.tap, since)
        new_mac = spread(monitors, [n for n in nodes if n is not b], since, t0, False, MAC, dev0,
                         b.fabric_address, timeout=10)
        p.wait()

        # MAC move: the guest stops on b and starts on c
        run(["ip", "-n", b.ns, "link", "del", gb.tap])
        gc = add_mac_guest(cluster, c, "moved")
        since = time.time()
        p = first_frame(gc, "10.100.0.1")
        t0 = local_learnt(monitors[c.name], MAC, gc.tap, since)
        move = spread(monitors, [n for n in nodes if n is not c], since, t0, False, MAC, dev0,
                      c.fabric_address, timeout=10)
        p.wait()

        # node loss: c's underlay port goes down on the switch, silently
        others = [n for n in nodes if n is not c]
        wait_until(lambda: all(c.fabric_address in n.fdb_remotes(d) for n in others
                               for d in devs),
                   timeout=30, interval=0.2, what=f"every node floods to {c.name} before its loss")
        # evpn: the hold time and slack for a loaded machine (FRR's route clearing is a work queue)
        window = HOLD_TIME + 21 if control_plane == "evpn" else static_loss_window
        t0 = time.time()
        cluster.switch.run(["ip", "link", "set", c.name, "down"])
        deadline = time.monotonic() + window
        per_dev = [spread(monitors, others, t0, t0, True, ZEROS, d, c.fabric_address,
                          timeout=max(0.0, deadline - time.monotonic())) for d in devs]
        loss = {n.name: worst({i: pd[n.name] for i, pd in enumerate(per_dev)}) for n in others}
        still = {n.name: c.fabric_address in n.fdb_remotes(dev0) for n in others}
        if os.environ.get("EVPN_BENCH_DEBUG"):
            debug_loss(control_plane, others, monitors, frrs, still, t0)
        result = {
            "control_plane": control_plane, "nodes": n_nodes, "vnis": n_vnis,
            "suffix": cluster.suffix, "converge_s": converge,
            "flood_entries_per_node": flood, "fdb_entries_per_node": fdb,
            "new_mac_s": worst(new_mac), "new_mac_per_node_s": new_mac,
            "mac_move_s": worst(move), "mac_move_per_node_s": move,
            "node_loss_s": worst(loss), "node_loss_per_node_s": loss,
            "node_loss_window_s": window,
            "node_loss_flood_entries_left": sum(still.values()),
        }
        if control_plane == "static":
            result["node_loss_note"] = (f"never: fabricd's flood entries follow the definition "
                                        f"(still on {sum(still.values())} of {len(others)} nodes "
                                        f"after {window} s)")
        return result
    finally:
        for m in monitors.values():
            m.stop()
        keep_frr_logs(cluster, frrs)
        for f in frrs.values():
            f.stop()
        cluster.close()


def fmt(value):
    return "-" if value is None else f"{value:.3f}"


def spread_text(per_node):
    values = sorted(set(per_node.values()))
    return str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"


def table(results):
    lines = ["| nodes x VNIs | control plane | converge s | flood entries/node | FDB entries/node "
             "| new MAC s | MAC move s | silent node loss s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        loss = fmt(r["node_loss_s"]) if r["control_plane"] == "evpn" else (
            f"never (> {r['node_loss_window_s']} s)")
        lines.append(f"| {r['nodes']} x {r['vnis']} | {r['control_plane']} "
                     f"| {fmt(r['converge_s'])} "
                     f"| {spread_text(r['flood_entries_per_node'])} "
                     f"| {spread_text(r['fdb_entries_per_node'])} | {fmt(r['new_mac_s'])} "
                     f"| {fmt(r['mac_move_s'])} | {loss} |")
    return "\n".join(lines)


def parse_sizes(text):
    try:
        sizes = [int(s) for s in text.split(",") if s]
    except ValueError:
        sizes = []
    if not sizes or any(s < 3 or s > 50 for s in sizes):
        raise argparse.ArgumentTypeError(f"--sizes {text!r}: give node counts 3..50, e.g. 3,8")
    return sizes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=parse_sizes, default=[3, 8],
                        help="node counts, comma-separated (default 3,8)")
    parser.add_argument("--vnis", type=int, default=2, help="vnets in the zone (default 2)")
    parser.add_argument("--quick", action="store_true",
                        help="3 nodes, 1 VNI, a 2 s static node-loss window")
    parser.add_argument("--json", metavar="FILE", help="write the results here")
    parser.add_argument("--fabricd", default=os.environ.get("FABRICD", f"{REPO}/fabricd/fabricd"))
    args = parser.parse_args()
    if args.vnis < 1 or args.vnis > 50:
        parser.error(f"--vnis {args.vnis}: give 1..50")
    reason = frr_available()
    if reason:
        sys.exit(f"evpn_vs_static: FRR is needed: {reason}")
    if os.geteuid() != 0:
        sys.exit("evpn_vs_static: run as root (it builds network namespaces)")
    sizes, vnis, window = ([3], 1, 2) if args.quick else (args.sizes, args.vnis, HOLD_TIME + 3)
    results = []
    for n in sizes:
        for cp in ("static", "evpn"):
            t = time.monotonic()
            results.append(measure(cp, n, vnis, args.fabricd, window))
            print(f"{n} nodes, {cp}: measured in {time.monotonic() - t:.1f} s", file=sys.stderr,
                  flush=True)
    print(table(results))
    if args.json:
        doc = {"bench": "evpn_vs_static", "quick": args.quick,
               "machine": {"kernel": platform.release(), "cpus": os.cpu_count(),
                           "loadavg": os.getloadavg()[0]},
               "results": results}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
