# SPDX-License-Identifier: GPL-2.0-or-later
"""Objects an operator makes by hand beside fabricd's, and one-shot readers.

fabricd owns only what carries its mark; everything else on a node must
come through apply, a transport switch and down untouched. HandObjects
makes a set of such objects on a node and later lists what became of them:

    hand-dummy0   a dummy link (a veth pair hand-dummy0/hand-dummy1 where the
                  kernel has no dummy driver, as here), alias "admin:keep", up
    hand0         bridge, alias "admin:hand-bridge", up, 198.51.100.1/24
    hvx9000       VXLAN VNI 9000, dstport 4799 (neither of fabricd's ports),
                  local = the node's underlay address, with two FDB entries:
                  00:00:00:00:00:00 dst 192.0.2.99 (head-end replication, the
                  kind fabricd manages on its own devices) and
                  02:00:00:00:90:01 dst 192.0.2.98
    inet hand     an nftables table with one chain, beside `inet fabricd`

Guest ports (Guest.tap) and objects on fabricd's own devices are added with
add_guest_port(), add_fdb() and add_address(); they are checked the same way.

KernelView reads a node once (`ip -j -d link`, `ip -j addr`, `bridge -j
fdb`), so a check of hundreds of vnets costs three commands, not hundreds.
"""

import ipaddress
import json
from dataclasses import dataclass, field

from fabtest.definition import WG_DEVICE, vnet_expectations

ZERO_MAC = "00:00:00:00:00:00"


def _json_list(text):
    return json.loads(text) if text.strip() else []


class KernelView:
    """One snapshot of a node's links, addresses, bridge FDB and nftables tables.

    The four readers run in one shell inside the node: under load, starting
    a command in a namespace costs more than the command itself.
    """

    SEPARATOR = "@@@fabtest@@@"
    READERS = ("ip -j -d link show", "ip -j addr show", "bridge -j fdb show",
               "nft list tables 2>/dev/null || true")

    def __init__(self, node):
        self.node = node
        script = f"; echo; echo {self.SEPARATOR}; ".join(self.READERS)
        parts = node.run(["sh", "-c", script]).stdout.split(f"\n{self.SEPARATOR}\n")
        assert len(parts) == len(self.READERS), f"{node.name}: unexpected reader output {parts!r}"
        links_json, addrs_json, fdb_json, nft_text = parts
        self.links = {link["ifname"]: link for link in _json_list(links_json)}
        self.addrs = {}
        for link in _json_list(addrs_json):
            self.addrs[link["ifname"]] = {
                f"{ipaddress.ip_address(a['local'])}/{a['prefixlen']}"
                for a in link.get("addr_info", []) if a.get("scope") != "link"}
        self.fdb = {}
        for entry in _json_list(fdb_json):
            self.fdb.setdefault(entry.get("ifname"), []).append(entry)
        self.nft_tables = {line.split(None, 1)[1].strip() for line in nft_text.splitlines()
                           if line.startswith("table ")}

    def ifindexes(self):
        return {name: link["ifindex"] for name, link in self.links.items()}

    def owned(self, alias):
        """Names of links whose alias is exactly alias (fabricd:<cluster>, no notes)."""
        return {name for name, link in self.links.items() if link.get("ifalias") == alias}

    def marked(self):
        """Names of links whose alias starts with "fabricd:" (any cluster, any notes)."""
        return {name for name, link in self.links.items()
                if (link.get("ifalias") or "").startswith("fabricd:")}

    def fdb_entries(self, dev):
        """{(mac, dst)} of dev's FDB entries; dst is "" for an entry without a remote."""
        return {(e.get("mac"), str(ipaddress.ip_address(e["dst"])) if "dst" in e else "")
                for e in self.fdb.get(dev, [])}

    def fdb_remotes(self, dev):
        """Sorted destinations of dev's all-zeros entries (head-end replication)."""
        return sorted((dst for mac, dst in self.fdb_entries(dev) if mac == ZERO_MAC and dst),
                      key=ipaddress.ip_address)

    def master(self, dev):
        link = self.links.get(dev)
        return link.get("master") if link else None


@dataclass
class HandObjects:
    """Objects made by hand on one node; problems() says what happened to them."""

    node: object
    ifindexes: dict = field(default_factory=dict)  # link name -> ifindex at creation
    aliases: dict = field(default_factory=dict)  # link name -> alias given by hand
    addresses: dict = field(default_factory=dict)  # link name -> {"addr/len"}
    fdb: dict = field(default_factory=dict)  # link name -> {(mac, dst)}
    nft_tables: list = field(default_factory=list)  # ["inet hand"]

    @classmethod
    def create(cls, node):
        """Make the standard set (see the module doc) on node; return the record."""
        hand = cls(node)
        run = node.run
        names = ["hand-dummy0"]
        if run(["ip", "link", "add", "hand-dummy0", "type", "dummy"], check=False).returncode:
            run(["ip", "link", "add", "hand-dummy0", "type", "veth", "peer", "name", "hand-dummy1"])
            names.append("hand-dummy1")
        run(["ip", "link", "set", "hand-dummy0", "alias", "admin:keep", "up"])
        run(["ip", "link", "add", "hand0", "type", "bridge"])
        run(["ip", "link", "set", "hand0", "alias", "admin:hand-bridge", "up"])
        run(["ip", "addr", "add", "198.51.100.1/24", "dev", "hand0"])
        run(["ip", "link", "add", "hvx9000", "type", "vxlan", "id", "9000", "dstport", "4799",
             "local", node.underlay])
        run(["ip", "link", "set", "hvx9000", "up"])
        run(["bridge", "fdb", "append", ZERO_MAC, "dev", "hvx9000", "dst", "192.0.2.99"])
        run(["bridge", "fdb", "add", "02:00:00:00:90:01", "dev", "hvx9000", "dst", "192.0.2.98"])
        run(["nft", "add table inet hand; "
             "add chain inet hand input { type filter hook input priority 10; policy accept; }"])
        hand.nft_tables.append("inet hand")
        view = KernelView(node)
        for name in names + ["hand0", "hvx9000"]:
            hand.ifindexes[name] = view.links[name]["ifindex"]
            hand.aliases[name] = view.links[name].get("ifalias")
        hand.addresses["hand0"] = {"198.51.100.1/24"}
        hand.fdb["hvx9000"] = {(ZERO_MAC, "192.0.2.99"), ("02:00:00:00:90:01", "192.0.2.98")}
        # the node's own underlay interface is foreign too
        hand.ifindexes["eth0"] = view.links["eth0"]["ifindex"]
        hand.addresses["eth0"] = set(view.addrs.get("eth0", set()))
        return hand

    def add_guest_port(self, guest):
        """Track a guest's tap (a VM port, on a fabricd bridge or not)."""
        self.ifindexes[guest.tap] = KernelView(self.node).links[guest.tap]["ifindex"]

    def add_fdb(self, dev, mac, dst=None):
        """Add an FDB entry by hand and track it.

        With dst: a VXLAN entry on dev itself (`bridge fdb add MAC dev DEV dst
        DST`); without: a static entry in dev's bridge pointing at port dev
        (`bridge fdb add MAC dev PORT master static`).
        """
        if dst:
            self.node.run(["bridge", "fdb", "add", mac, "dev", dev, "dst", dst])
        else:
            self.node.run(["bridge", "fdb", "add", mac, "dev", dev, "master", "static"])
        self.fdb.setdefault(dev, set()).add((mac, dst or ""))

    def forget_fdb(self, dev):
        """Stop tracking dev's entries (dev was removed on purpose, entries with it)."""
        self.fdb.pop(dev, None)

    def add_address(self, dev, cidr):
        """Add an address by hand on dev (fabricd's device or not) and track it."""
        self.node.run(["ip", "addr", "add", cidr, "dev", dev])
        self.addresses.setdefault(dev, set()).add(cidr)

    def forget_address(self, dev):
        self.addresses.pop(dev, None)

    def problems(self, view=None):
        """What is missing or changed, as text lines ([] when everything is intact)."""
        view = view or KernelView(self.node)
        found = []
        for name, ifindex in self.ifindexes.items():
            link = view.links.get(name)
            if link is None:
                found.append(f"{name}: gone")
            elif link["ifindex"] != ifindex:
                found.append(f"{name}: re-created (ifindex {ifindex} -> {link['ifindex']})")
            elif name in self.aliases and link.get("ifalias") != self.aliases[name]:
                found.append(f"{name}: alias {link.get('ifalias')!r}, was {self.aliases[name]!r}")
        for name, cidrs in self.addresses.items():
            missing = cidrs - view.addrs.get(name, set())
            if missing:
                found.append(f"{name}: addresses {sorted(missing)} gone")
        for name, entries in self.fdb.items():
            missing = entries - view.fdb_entries(name)
            if missing:
                found.append(f"{name}: FDB entries {sorted(missing)} gone")
        for table in self.nft_tables:
            if table not in view.nft_tables:
                found.append(f"nftables table {table}: gone")
        return found

    def assert_intact(self, view=None, when=""):
        found = self.problems(view)
        if found:
            raise AssertionError(f"{self.node.name}: hand-made objects changed {when}:\n  "
                                 + "\n  ".join(found))


def convergence_problems(view, definition, wg_dump=None):
    """Differences between a KernelView and what the definition asks of its node.

    An independent reading of DESIGN.md's table, cheap enough for hundreds of
    vnets: the owned links are exactly the expected set, each VXLAN device
    has its VNI, port, bridge and all-zeros remotes (a plain vnet's standby
    secure device none), each bridge is owned and up; with wg_dump (fabtest WgDump), wgfab0's peers are the other nodes.
    """
    node = view.node
    alias = f"fabricd:{definition['cluster']}"
    expected = {WG_DEVICE}
    problems = []
    for v in vnet_expectations(definition, node.name):
        expected.update((v.bridge, v.vxlan))
        vx = view.links.get(v.vxlan)
        if vx is None:
            problems.append(f"{v.vxlan}: missing")
            continue
        data = vx.get("linkinfo", {}).get("info_data", {})
        if data.get("id") != v.vni or data.get("port") != v.dstport:
            problems.append(f"{v.vxlan}: VNI {data.get('id')} port {data.get('port')}, "
                            f"expected {v.vni} {v.dstport}")
        if vx.get("master") != v.bridge:
            problems.append(f"{v.vxlan}: master {vx.get('master')}, expected {v.bridge}")
        remotes = tuple(view.fdb_remotes(v.vxlan))
        if remotes != v.remotes:
            problems.append(f"{v.vxlan}: remotes {list(remotes)}, expected {list(v.remotes)}")
        if v.standby:
            expected.add(v.standby)
            sb = view.links.get(v.standby)
            sb_data = (sb or {}).get("linkinfo", {}).get("info_data", {})
            if sb is None or sb_data.get("id") != v.vni or sb_data.get("port") != v.standby_port \
                    or sb.get("master") != v.bridge or view.fdb_remotes(v.standby):
                problems.append(f"{v.standby}: not the mute standby of {v.bridge}")
        br = view.links.get(v.bridge)
        if br is None or "UP" not in br.get("flags", []):
            problems.append(f"{v.bridge}: missing or down")
    owned = view.owned(alias)
    marked = view.marked()
    if owned != expected:
        problems.append(f"owned links: missing {sorted(expected - owned)}, "
                        f"left over {sorted(owned - expected)}")
    if marked != owned:
        problems.append(f"links with other fabricd marks or notes: {sorted(marked - owned)}")
    if wg_dump is not None:
        want = {n["public_key"] for n in definition["nodes"] if n["name"] != node.name}
        if set(wg_dump.peers) != want:
            problems.append(f"{WG_DEVICE}: {len(wg_dump.peers)} peers, expected {len(want)}")
    return problems
