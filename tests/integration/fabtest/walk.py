# SPDX-License-Identifier: GPL-2.0-or-later
"""A randomized walk of definition edits, checked against a from-scratch oracle.

Two clusters of three nodes with the same keys and underlay addresses: on
"walk", each step's definition is applied on top of the previous ones; on
"oracle", every node is taken `down` and the definition applied from empty.
After every step (test_walk.py):
  - the normalized kernel state of each walk node equals its oracle twin's,
    apart from what legitimately depends on history (ifindexes, MACs and
    what derives from them, learned FDB entries, counters, timers);
  - `plan` on every walk node says nothing to do;
  - guests of one vnet reach each other (also a DF ping at the bridge MTU),
    guests of different vnets do not, and a capture on the underlay shows
    no secure VNI in plain VXLAN and nothing on the secure port.
Edits: vnets and zones added and removed, transport switches, zone MTU and
policy, fabric underlay_mtu, nodes leaving and joining, zone memberships,
a second underlay address, endpoints, vnet renames, VNIs moved between
vnets, fabric prefix and addresses (IPv4 and IPv6), preshared keys on and
off, keepalive, listen ports (fabric and per node), the secure port.
"""

import copy
import json
import os
import subprocess
import time
VNET_NAMES = ["red", "green", "blue", "cyan", "pink", "gold", "teal", "lime"]
VNIS = list(range(100, 110))
ZONE_NAMES = ["za", "zb", "zc"]
PREFIXES = [("10.255.0.0/24", lambda i: f"10.255.0.{i}"),
            ("10.254.0.0/24", lambda i: f"10.254.0.{i + 100}"),
            ("fd00:255::/64", lambda i: f"fd00:255::{i:x}")]


class State:
    def __init__(self):
        self.prefix = 0
        self.listen_port = 51820
        self.keepalive = None
        self.underlay_mtu = None
        self.secure_port = None
        self.nodes = {1, 2, 3}
        self.alt = set()
        self.endpoint = set()
        self.psk = False
        self.node_port = {}
        self.zones = []  # dicts: name transport policy mtu nodes vnets[(name,vni)]

    def definition(self, cluster):
        prefix, addr = PREFIXES[self.prefix]
        fabric = {"prefix": prefix, "listen_port": self.listen_port}
        if self.keepalive is not None:
            fabric["keepalive"] = self.keepalive
        if self.underlay_mtu is not None:
            fabric["underlay_mtu"] = self.underlay_mtu
        if self.secure_port is not None:
            fabric["secure_port"] = self.secure_port
        nodes = []
        for n in cluster.nodes:
            if n.index not in self.nodes:
                continue
            alt = f"192.0.2.{100 + n.index}" if ":" not in n.underlay else f"2001:db8::a{n.index}"
            under = alt if n.index in self.alt else n.underlay
            e = {"name": n.name, "underlay": under, "fabric_address": addr(n.index),
                 "public_key": n.public_key}
            if n.index in self.endpoint:
                port = self.node_port.get(n.index, self.listen_port)
                e["endpoint"] = f"[{under}]:{port}" if ":" in under else f"{under}:{port}"
            if n.index in self.node_port:
                e["listen_port"] = self.node_port[n.index]
            nodes.append(e)
        zones = []
        for z in self.zones:
            e = {"name": z["name"], "transport": z["transport"],
                 "vnets": [{"name": a, "vni": b} for a, b in z["vnets"]]}
            if z["nodes"] is not None:
                e["nodes"] = [f"pve{i}" for i in sorted(z["nodes"])]
            if z["mtu"] is not None:
                e["mtu"] = z["mtu"]
            if z["policy"] is not None:
                e["mtu_policy"] = z["policy"]
            zones.append(e)
        return {"version": 1, "cluster": "fabtest", "fabric": fabric, "nodes": nodes,
                "zones": zones}

    def vnets(self):
        return [(z, v) for z in self.zones for v in z["vnets"]]

    def members(self, z):
        return sorted(self.nodes if z["nodes"] is None else (z["nodes"] & self.nodes))


def used_names(st):
    return {v[0] for _, v in st.vnets()}


def used_vnis(st):
    return {v[1] for _, v in st.vnets()}


def edit(st, rnd):
    """Apply one random legal edit to st; return its description."""
    kinds = ["add_vnet", "add_vnet", "rm_vnet", "add_zone", "rm_zone", "switch", "switch",
             "zone_mtu", "policy", "underlay_mtu", "node", "zone_nodes", "alt", "endpoint",
             "rename", "move_vni", "prefix", "psk", "keepalive", "listen_port", "secure_port",
             "node_port"]
    while True:
        k = rnd.choice(kinds)
        d = _edit(st, rnd, k)
        if d:
            return d


def _edit(st, rnd, k):  # noqa: C901
    zones = st.zones
    if k == "add_vnet" and zones:
        names = [n for n in VNET_NAMES if n not in used_names(st)]
        vnis = [v for v in VNIS if v not in used_vnis(st)]
        if names and vnis:
            z = rnd.choice(zones)
            v = (rnd.choice(names), rnd.choice(vnis))
            z["vnets"].append(v)
            return f"add vnet {v} to {z['name']}"
    if k == "rm_vnet":
        c = [(z, v) for z, v in st.vnets() if len(z["vnets"]) > 1]
        if c:
            z, v = rnd.choice(c)
            z["vnets"].remove(v)
            return f"remove vnet {v} from {z['name']}"
    if k == "add_zone":
        names = [n for n in ZONE_NAMES if n not in {z["name"] for z in zones}]
        vn = [n for n in VNET_NAMES if n not in used_names(st)]
        vnis = [v for v in VNIS if v not in used_vnis(st)]
        if names and vn and vnis:
            z = {"name": rnd.choice(names), "transport": rnd.choice(["plain", "secure"]),
                 "policy": None, "mtu": None, "nodes": None,
                 "vnets": [(rnd.choice(vn), rnd.choice(vnis))]}
            zones.append(z)
            return f"add zone {z}"
    if k == "rm_zone" and zones:
        z = rnd.choice(zones)
        zones.remove(z)
        return f"remove zone {z['name']}"
    if k == "switch" and zones:
        z = rnd.choice(zones)
        z["transport"] = "secure" if z["transport"] == "plain" else "plain"
        return f"switch {z['name']} to {z['transport']}"
    if k == "zone_mtu" and zones:
        z = rnd.choice(zones)
        z["mtu"] = rnd.choice([x for x in (None, 1300, 1280, 1350) if x != z["mtu"]])
        return f"zone {z['name']} mtu {z['mtu']}"
    if k == "policy" and zones:
        z = rnd.choice(zones)
        z["policy"] = rnd.choice([x for x in (None, "stable", "max") if x != z["policy"]])
        return f"zone {z['name']} policy {z['policy']}"
    if k == "underlay_mtu":
        st.underlay_mtu = rnd.choice([x for x in (None, 1500, 1400) if x != st.underlay_mtu])
        return f"underlay_mtu {st.underlay_mtu}"
    if k == "node":
        i = rnd.choice([1, 2, 3])
        if i in st.nodes and len(st.nodes) > 2:
            st.nodes.discard(i)
            return f"remove node pve{i}"
        if i not in st.nodes:
            st.nodes.add(i)
            return f"add node pve{i}"
    if k == "zone_nodes" and zones:
        z = rnd.choice(zones)
        opts = [None, {1, 2}, {1, 3}, {2, 3}, {1, 2, 3}, {1}]
        z["nodes"] = rnd.choice([o for o in opts if o != z["nodes"]])
        return f"zone {z['name']} nodes {z['nodes']}"
    if k == "alt":
        i = rnd.choice(sorted(st.nodes))
        st.alt ^= {i}
        return f"node pve{i} underlay alt={i in st.alt}"
    if k == "endpoint":
        i = rnd.choice(sorted(st.nodes))
        st.endpoint ^= {i}
        return f"node pve{i} endpoint={i in st.endpoint}"
    if k == "rename":
        names = [n for n in VNET_NAMES if n not in used_names(st)]
        if st.vnets() and names:
            z, v = rnd.choice(st.vnets())
            nv = (rnd.choice(names), v[1])
            z["vnets"][z["vnets"].index(v)] = nv
            return f"rename vnet {v} -> {nv}"
    if k == "move_vni" and len(st.vnets()) >= 2:
        (za, a), (zb, b) = rnd.sample(st.vnets(), 2)
        if rnd.random() < 0.5:
            za["vnets"][za["vnets"].index(a)] = (a[0], b[1])
            zb["vnets"][zb["vnets"].index(b)] = (b[0], a[1])
            return f"swap VNIs of {a} and {b}"
        vnis = [v for v in VNIS if v not in used_vnis(st)]
        if vnis:
            nb = (b[0], a[1])
            na = (a[0], rnd.choice(vnis))
            za["vnets"][za["vnets"].index(a)] = na
            zb["vnets"][zb["vnets"].index(b)] = nb
            return f"move VNI {a[1]} from {a[0]} to {b[0]} ({a[0]} gets {na[1]})"
    if k == "prefix":
        st.prefix = rnd.choice([x for x in range(len(PREFIXES)) if x != st.prefix])
        return f"prefix {PREFIXES[st.prefix][0]}"
    if k == "psk":
        st.psk = not st.psk
        return f"psk {st.psk}"
    if k == "keepalive":
        st.keepalive = rnd.choice([x for x in (None, 0, 10) if x != st.keepalive])
        return f"keepalive {st.keepalive}"
    if k == "listen_port":
        st.listen_port = 51821 if st.listen_port == 51820 else 51820
        return f"listen_port {st.listen_port}"
    if k == "node_port":
        i = rnd.choice(sorted(st.nodes))
        if i in st.node_port:
            del st.node_port[i]
        else:
            st.node_port[i] = 51830 + i
        return f"node pve{i} listen_port {st.node_port.get(i)}"
    if k == "secure_port":
        st.secure_port = rnd.choice([x for x in (None, 4790, 4791) if x != st.secure_port])
        return f"secure_port {st.secure_port}"
    return None


# ---------------------------------------------------------------- kernel state
DROP_LINK = {"ifindex", "link_index", "stats64", "stats", "operstate", "promiscuity",
             "allmulti", "address", "perm_address", "broadcast", "addr_info", "linkmode",
             "num_tx_queues", "num_rx_queues", "gso_max_size", "gso_max_segs", "min_mtu",
             "max_mtu", "txqlen", "qdisc", "group", "link_netnsid", "parentbus", "parentdev",
             "inet6_addr_gen_mode", "tso_max_size", "tso_max_segs", "gro_max_size",
             "gso_ipv4_max_size", "gro_ipv4_max_size", "link_type"}
DROP_BRIDGE = {"bridge_id", "root_id", "hello_timer", "tcn_timer", "topology_change_timer",
               "gc_timer", "root_port", "root_path_cost", "topology_change",
               "topology_change_detected", "multi_bool_opt"}


def node_state(node):
    sh = node.run
    links = json.loads(sh(["ip", "-d", "-j", "link"]).stdout)
    names = {ln["ifname"] for ln in links}
    macs = {ln.get("address"): ln["ifname"] for ln in links}
    skip = lambda n: n.startswith("tap") or n == "lo"  # noqa: E731
    out = {"links": {}, "addrs": {}, "routes": [], "brlinks": {}, "fdb": [], "wg": None,
           "nft": None, "sysctl": {}}
    for ln in links:
        if skip(ln["ifname"]):
            continue
        ln = {k: v for k, v in ln.items() if k not in DROP_LINK}
        ln["flags"] = sorted(f for f in ln.get("flags", []) if f not in ("LOWER_UP", "NO-CARRIER", "PROMISC"))
        li = ln.get("linkinfo", {})
        if li.get("info_kind") == "bridge":
            li["info_data"] = {k: v for k, v in li.get("info_data", {}).items() if k not in DROP_BRIDGE}
        if "info_slave_data" in li:
            li["info_slave_data"] = {k: v for k, v in li["info_slave_data"].items()
                                     if k not in ("state", "id", "no", "designated_port",
                                                  "designated_cost", "designated_bridge",
                                                  "designated_root", "forward_delay_timer", "bridge_id", "root_id",
                                                  "hold_timer", "message_age_timer",
                                                  "topology_change_ack", "config_pending")}
        out["links"][ln["ifname"]] = ln
    for a in json.loads(sh(["ip", "-j", "addr"]).stdout):
        if skip(a["ifname"]):
            continue
        out["addrs"][a["ifname"]] = sorted(
            (i["local"], i["prefixlen"], i.get("scope"), i.get("noprefixroute", False))
            for i in a.get("addr_info", []) if i.get("scope") != "link")
    for fam in ("-4", "-6"):
        for r in json.loads(sh(["ip", fam, "-j", "route", "show", "table", "all"]).stdout or "[]"):
            if skip(r.get("dev", "")) or r.get("dst", "").startswith("fe80") or \
                    r.get("dst", "").startswith("ff00"):
                continue
            r.pop("expires", None)
            out["routes"].append(json.dumps(r, sort_keys=True))
    out["routes"].sort()
    for p in json.loads(sh(["bridge", "-j", "-d", "link"]).stdout or "[]"):
        if skip(p["ifname"]):
            continue
        p = {k: v for k, v in p.items() if k not in ("ifindex", "state", "operstate")}
        p["flags"] = sorted(f for f in p.get("flags", []) if f not in ("LOWER_UP", "NO-CARRIER"))
        out["brlinks"][p["ifname"]] = p
    for e in json.loads(sh(["bridge", "-j", "fdb", "show"]).stdout or "[]"):
        if skip(e.get("ifname", "")) or skip(e.get("master", "") or "") or e.get("ifname") == "eth0":
            continue
        if e.get("state") not in ("permanent", "static") and e.get("mac") != "00:00:00:00:00:00":
            continue
        if e.get("mac") == "33:33:00:00:00:6a":
            # ff02::6a (all snoopers): a bridge leaves it for good when its MTU goes
            # under 1280 and back (the kernel's doing, also with `ip link` alone)
            continue
        if e.get("mac") in macs:
            e["mac"] = "mac-of-" + macs[e["mac"]]
        elif "dst" not in e and not e["mac"].startswith(("33:33", "01:00:5e")) and e["mac"] != "00:00:00:00:00:00":
            e["mac"] = "mac-of-?"
        e.pop("used", None)
        e.pop("updated", None)
        out["fdb"].append(json.dumps(e, sort_keys=True))
    out["fdb"].sort()
    if "wgfab0" in names:
        wg = sh(["wg", "showconf", "wgfab0"], check=False).stdout
        lines = []
        for line in wg.splitlines():
            if line.startswith("PrivateKey"):
                continue
            if line.startswith("PresharedKey"):
                # compared with or without --psk-dir: without it a walked node has none,
                # as a node made anew (until 2026-12-07 it kept the last ones, unseen here)
                line = "PresharedKey = <psk>"
            lines.append(line)
        # peers as sets
        blocks, cur = [], []
        for line in lines:
            if line.startswith("[") and cur:
                blocks.append(cur)
                cur = []
            if line.strip():
                cur.append(line)
        blocks.append(cur)
        out["wg"] = [blocks[0]] + sorted(sorted(b) for b in blocks[1:])
    nft = json.loads(sh(["nft", "-j", "list", "ruleset"]).stdout or "{}")
    items = []
    for it in nft.get("nftables", []):
        if "metainfo" in it:
            continue
        (kind, body), = it.items()
        body = {k: v for k, v in body.items() if k not in ("handle", "bytes", "packets")}
        items.append(json.dumps({kind: body}, sort_keys=True))
    out["nft"] = sorted(items)
    txt = sh(["sh", "-c", "for f in /proc/sys/net/ipv6/conf/*/disable_ipv6 "
              "/proc/sys/net/ipv4/conf/*/rp_filter /proc/sys/net/ipv6/conf/*/mtu; do "
              "echo $f $(cat $f); done"]).stdout
    for line in txt.splitlines():
        f, v = line.split()
        dev = f.split("/")[6]
        if skip(dev):
            continue
        out["sysctl"][f] = v
    return out


def diff(a, b, path=""):
    res = []
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a:
                res.append(f"{path}/{k}: only in oracle: {json.dumps(b[k])[:300]}")
            elif k not in b:
                res.append(f"{path}/{k}: only in walk: {json.dumps(a[k])[:300]}")
            else:
                res += diff(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, list) and isinstance(b, list) and all(isinstance(x, str) for x in a + b):
        for x in sorted(set(a) - set(b)):
            res.append(f"{path}: only walk: {x[:300]}")
        for x in sorted(set(b) - set(a)):
            res.append(f"{path}: only oracle: {x[:300]}")
    elif a != b:
        res.append(f"{path}: walk {json.dumps(a)[:300]} != oracle {json.dumps(b)[:300]}")
    return res


# ---------------------------------------------------------------- the two clusters
def next_definition(world, st, rnd):
    """Apply 1 to 3 random edits to st that `fabricd check` accepts; their description."""
    before = copy.deepcopy(st)
    for _ in range(20):
        d = "; ".join(edit(st, rnd) for _ in range(rnd.choice([1, 1, 2, 3])))
        path = world.walk.write_definition(st.definition(world.walk),
                                           f"{world.walk.tmpdir}/try.json")
        if world.walk.nodes[0].fabricd("check", "-c", path, node_options=False).rc == 0:
            return st, d
        st = copy.deepcopy(before)
    raise AssertionError("no valid edit in 20 tries")


class World:
    def __init__(self, walk, oracle):
        """walk, oracle: two bare 3-node SimClusters of one family."""
        self.walk = walk
        self.oracle = oracle
        family = 6 if ":" in walk.nodes[0].underlay else 4
        psk = subprocess.run(["wg", "genpsk"], capture_output=True, text=True).stdout.strip()
        for a, b in zip(self.walk.nodes, self.oracle.nodes):
            with open(a.key_file) as f:
                key = f.read()
            with open(b.key_file, "w") as f:
                f.write(key)
            b.public_key = a.public_key
        for c in (self.walk, self.oracle):
            c.psk_dirs = {}
            for n in c.nodes:
                if family == 4:
                    n.run(["ip", "addr", "add", f"192.0.2.{100 + n.index}/24", "dev", "eth0"])
                else:
                    n.run(["ip", "addr", "add", f"2001:db8::a{n.index}/64", "dev", "eth0", "nodad"])
                d = f"{c.tmpdir}/psk-{n.name}"
                os.mkdir(d, 0o700)
                for p in c.nodes:
                    if p is not n:
                        fd = os.open(f"{d}/{p.name}", os.O_WRONLY | os.O_CREAT, 0o600)
                        os.write(fd, (psk + "\n").encode())
                        os.close(fd)
                c.psk_dirs[n.name] = d
        self.guests = {}  # (node index, vnet name) -> Guest
        self.prev_nodes = set()

    def args(self, c, n, st):
        a = ["--grace", "0"]
        if st.psk:
            a += ["--psk-dir", c.psk_dirs[n.name]]
        return a

    def step(self, st, rnd):
        problems = []
        dw = st.definition(self.walk)
        pw = self.walk.write_definition(dw)
        po = self.oracle.write_definition(st.definition(self.oracle))
        self.pin_sources(st)
        order = list(self.walk.nodes)
        rnd.shuffle(order)
        for n in order:
            if n.index in st.nodes:
                r = n.fabricd("apply", "-c", pw, *self.args(self.walk, n, st))
                if r.rc != 0:
                    problems.append(f"walk apply {n.name}: {r}")
            elif n.index in self.prev_nodes:
                r = n.fabricd("down", "-c", pw)
                if r.rc != 0:
                    problems.append(f"walk down {n.name}: {r}")
        self.prev_nodes = set(st.nodes)
        for n in self.oracle.nodes:
            r = n.fabricd("down", "-c", po)
            if r.rc != 0:
                problems.append(f"oracle down {n.name}: {r}")
            if n.index in st.nodes:
                r = n.fabricd("apply", "-c", po, *self.args(self.oracle, n, st))
                if r.rc != 0:
                    problems.append(f"oracle apply {n.name}: {r}")
        for n in self.walk.nodes:
            if n.index in st.nodes:
                r = n.fabricd("plan", "-c", pw, *self.args(self.walk, n, st))
                if r.rc != 0:
                    problems.append(f"walk plan {n.name} not empty: {r}")
        for a, b in zip(self.walk.nodes, self.oracle.nodes):
            for d in diff(node_state(a), node_state(b)):
                problems.append(f"{a.name} state {d}")
        problems += self.connectivity(st)
        return problems

    def pin_sources(self, st):
        """Each node sends from its definition's underlay address (see test_underlay_source)."""
        for c in (self.walk, self.oracle):
            for n in c.nodes:
                v6 = ":" in n.underlay
                alt = lambda m: f"2001:db8::a{m.index}" if v6 else f"192.0.2.{100 + m.index}"  # noqa: E731
                own = alt(n) if n.index in st.alt else n.underlay
                for p in c.nodes:
                    if p is not n:
                        for addr in (p.underlay, alt(p)):
                            n.run(["ip", "route", "replace", addr, "dev", "eth0", "src", own])

    def guest(self, node, vnet):
        key = (node.index, vnet)
        br = node.link(vnet)
        if br is None:
            return None
        g = self.guests.get(key)
        if g is None:
            k = VNET_NAMES.index(vnet)
            g = self.walk.add_guest(node, vnet, f"10.0.{k}.{node.index}/16",
                                    name=f"g{node.index}{vnet[:3]}")
            self.guests[key] = g
        else:
            mtu = str(br["mtu"])
            node.run(["ip", "link", "set", g.tap, "nomaster"], check=False)
            node.run(["ip", "link", "set", g.tap, "mtu", mtu, "master", vnet, "up"])
            g.run(["ip", "link", "set", "eth0", "mtu", mtu])
            g.mtu = int(mtu)
        return g

    def connectivity(self, st):
        problems = []
        nodes = {n.index: n for n in self.walk.nodes}
        per_vnet = {}
        for z, (vname, vni) in st.vnets():
            members = st.members(z)
            gs = [self.guest(nodes[i], vname) for i in members]
            if None in gs:
                problems.append(f"vnet {vname}: missing bridge on a member {members}")
                continue
            per_vnet[vname] = (z, vni, gs)
        secure_vnis = [vni for z, vni, gs in per_vnet.values() if z["transport"] == "secure"]
        with self.walk.capture() as cap:
            for vname, (z, vni, gs) in per_vnet.items():
                for g in gs[1:]:
                    ok = wait_until_ok(lambda: gs[0].ping(g), 8)  # noqa: B023
                    if not ok:
                        t0 = time.time()
                        late = wait_until_ok(lambda: gs[0].ping(g), 10)  # noqa: B023
                        problems.append(f"vnet {vname}: {gs[0]} cannot ping {g} for 8 s; then ok={late} "
                                        f"after {time.time() - t0:.1f}s more")
                        continue
                    mtu = gs[0].mtu
                    if not gs[0].ping(g, size=mtu - 28, df=True):
                        problems.append(f"vnet {vname}: DF ping at {mtu} fails {gs[0]} -> {g}")
            vs = list(per_vnet.items())
            for (va, (_, _, ga)), (vb, (_, _, gb)) in zip(vs, vs[1:]):
                far = [g for g in gb if g.node is not ga[0].node] or gb
                if ga[0].ping(far[0], timeout=1):
                    problems.append(f"vnets {va} and {vb} are joined: {ga[0]} pings {far[0]}")
        for vni in secure_vnis:
            n = cap.count(f"udp port 4789 and (udp[12:4] >> 8) = {vni}")
            if n:
                problems.append(f"secure VNI {vni} in clear text on the underlay: {n} packets")
        sp = st.secure_port or 4790
        n = cap.count(f"udp port {sp}")
        if n:
            problems.append(f"secure port {sp} in clear on the underlay: {n} packets")
        return problems


def wait_until_ok(fn, timeout):
    """fn() until true or timeout seconds: whether it became true."""
    end = time.time() + timeout
    while True:
        if fn():
            return True
        if time.time() > end:
            return False


