#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a plain vnet's mute secure standby costs, standing, at V plain vnets.

    sudo /usr/bin/python3 tests/bench/standby_cost.py [--vnis 1000] [--baseline BIN]

Applies one node's share of a 3-node definition with V vnets in one plain
zone (the other two nodes need not exist) in a fresh SimCluster, with this
tree's fabricd and, with --baseline, with another fabricd binary (for
example one built from the commit before the standby), and reports for each:
links, VXLAN devices, all-zeros FDB entries, the guard's rules and set
elements, the kernel memory the build took (Slab + Percpu from
/proc/meminfo, before and after), the apply's time and peak RSS, and the
time of a second, empty apply (medians of --rounds alternating runs, after
the kernel has settled from the previous one). Not part of the test suite;
prints JSON.
"""

import argparse
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

from fabtest import SimCluster, run, zone  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def meminfo_kib():
    with open("/proc/meminfo") as f:
        fields = dict(line.split(":", 1) for line in f)
    return sum(int(fields[k].split()[0]) for k in ("Slab", "Percpu"))


def settled_meminfo_kib():
    """Slab + Percpu once the kernel has finished tearing down earlier namespaces."""
    last = meminfo_kib()
    for _ in range(60):
        time.sleep(2)
        now = meminfo_kib()
        if abs(now - last) < 512:
            return now
        last = now
    return last


def timed_apply(node, path):
    t0 = time.monotonic()
    res = node.run(["/usr/bin/time", "-v", node.cluster.fabricd_bin, "apply", "-c", path, "-n",
                    node.name, "--key-file", node.key_file, "--wg-backend",
                    node.cluster.wg_backend], check=False, timeout=900)
    seconds = time.monotonic() - t0
    assert res.returncode == 0, res.stderr[-3000:]
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", res.stderr)
    return round(seconds, 2), int(rss.group(1)) if rss else None


def measure(binary, n_vnis):
    cluster = SimCluster(1, fabricd_bin=binary, wg_backend="userspace")
    try:
        node = cluster.nodes[0]
        definition = cluster.definition(zones=[zone(
            "tenants", "plain", [(f"t{i}", 10000 + i) for i in range(n_vnis)])])
        # two more members that need not exist: every vnet gets two remotes
        for k in (2, 3):
            extra = dict(definition["nodes"][0], name=f"ghost{k}", underlay=f"192.0.2.{200 + k}",
                         fabric_address=f"10.255.0.{200 + k}")
            extra["public_key"] = run(["wg", "pubkey"], input=run(["wg", "genkey"]).stdout).stdout.strip()
            definition["nodes"].append(extra)
        path = cluster.write_definition(definition)
        mem0 = settled_meminfo_kib()
        seconds, rss = timed_apply(node, path)
        mem1 = settled_meminfo_kib()
        again, _ = timed_apply(node, path)
        links = node.ip_json("-d", "link", "show")
        vxlan = [link for link in links if link.get("linkinfo", {}).get("info_kind") == "vxlan"]
        fdb = [e for e in json.loads(node.run(["bridge", "-j", "fdb", "show"]).stdout)
               if e.get("mac") == "00:00:00:00:00:00" and "dst" in e]
        table = node.run(["nft", "list", "table", "inet", "fabricd"]).stdout
        rules = len(re.findall(r"^\t\t(?!type |elements|typeof)\S", table, re.M))
        elements = table.count(" . ")
        return {"vnets": n_vnis, "links": len(links), "vxlan_devices": len(vxlan),
                "fdb_all_zeros": len(fdb), "guard_rules": rules, "guard_set_elements": elements,
                "kernel_kib": mem1 - mem0, "apply_s": seconds, "apply_peak_rss_kib": rss,
                "empty_apply_s": again}
    finally:
        cluster.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vnis", type=int, default=1000)
    ap.add_argument("--baseline", help="another fabricd binary to compare with")
    ap.add_argument("--rounds", type=int, default=2)
    binaries = {"with_standby": f"{REPO}/fabricd/fabricd"}
    args = ap.parse_args()
    if args.baseline:
        binaries["baseline"] = os.path.abspath(args.baseline)
    runs = {name: [] for name in binaries}
    for _ in range(args.rounds):  # alternating, so both see the same machine
        for name, binary in binaries.items():
            runs[name].append(measure(binary, args.vnis))
    result = {}
    for name, rs in runs.items():
        best = dict(rs[0])
        for key in ("apply_s", "empty_apply_s", "kernel_kib", "apply_peak_rss_kib"):
            best[key] = sorted(r[key] for r in rs)[len(rs) // 2]  # the median (upper)
        result[name] = dict(best, rounds=rs)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
