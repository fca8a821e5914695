# SPDX-License-Identifier: GPL-2.0-or-later
"""Cluster-definition builders and what DESIGN.md says a node must then have.

zone()/vnet() build the "zones" part of a definition; SimCluster.definition()
adds "fabric" and "nodes". The expectation helpers are an independent,
deliberately simple reading of DESIGN.md ("What a node builds"), used to
check the kernel after `fabricd apply`; MTU values are never computed here,
tests pass the numbers DESIGN.md gives.
"""

import ipaddress
from dataclasses import dataclass, field

PLAIN_PORT = 4789
SECURE_PORT = 4790
WG_DEVICE = "wgfab0"


def vnet(name, vni):
    """One vnet entry: {"name": name, "vni": vni}."""
    return {"name": name, "vni": vni}


def zone(name, transport, vnets, nodes=None, mtu=None, mtu_policy=None):
    """One zone entry; vnets are vnet() dicts or (name, vni) tuples."""
    entry = {
        "name": name,
        "transport": transport,
        "vnets": [vnet(*v) if isinstance(v, tuple) else dict(v) for v in vnets],
    }
    if nodes is not None:
        entry["nodes"] = [getattr(n, "name", n) for n in nodes]
    if mtu is not None:
        entry["mtu"] = mtu
    if mtu_policy is not None:
        entry["mtu_policy"] = mtu_policy
    return entry


def _ip(text):
    return ipaddress.ip_address(text)


def _norm(text):
    return str(ipaddress.ip_address(text))


def _nodes_by_name(definition):
    return {n["name"]: n for n in definition["nodes"]}


def zone_members(definition, zone_entry):
    """Names of the nodes of a zone (default: every node), definition order."""
    names = zone_entry.get("nodes")
    return list(names) if names is not None else [n["name"] for n in definition["nodes"]]


@dataclass(frozen=True)
class VnetExpectation:
    """The VXLAN device, bridge and FDB remotes one vnet needs on one node."""

    zone: str
    transport: str
    bridge: str
    vxlan: str
    vni: int
    dstport: int
    local: str
    remotes: tuple = ()
    # a plain vnet's standby secure device (mute; not under EVPN), or None
    standby: str = None
    standby_port: int = None
    standby_local: str = None


def _evpn(definition, z):
    plane = z.get("control_plane", definition["fabric"].get("control_plane", "static"))
    return plane == "evpn"


def vnet_expectations(definition, node_name):
    """Every vnet node_name must carry, in definition order."""
    nodes = _nodes_by_name(definition)
    me = nodes[node_name]
    secure_port = definition["fabric"].get("secure_port", SECURE_PORT)
    result = []
    for z in definition.get("zones", []):
        members = zone_members(definition, z)
        if node_name not in members:
            continue
        secure = z["transport"] == "secure"
        # an EVPN zone has one device in both transports (README "EVPN control plane"):
        # secure moves its VTEP to the fabric address and carries the rest into WireGuard
        evpn = _evpn(definition, z)
        # its VTEP moves live, within one family (desired.c)
        same_family = _ip(me["fabric_address"]).version == _ip(me["underlay"]).version
        key = "fabric_address" if secure and (same_family or not evpn) else "underlay"
        remotes = tuple(sorted((_norm(nodes[m][key]) for m in members if m != node_name), key=_ip))
        standby = not secure and not evpn
        for v in z["vnets"]:
            result.append(
                VnetExpectation(
                    zone=z["name"],
                    transport=z["transport"],
                    bridge=v["name"],
                    vxlan=("vs" if secure and not evpn else "vx") + str(v["vni"]),
                    vni=v["vni"],
                    dstport=secure_port if secure and not evpn else PLAIN_PORT,
                    local=_norm(me[key]),
                    remotes=remotes,
                    standby=f"vs{v['vni']}" if standby else None,
                    standby_port=secure_port if standby else None,
                    standby_local=_norm(me["fabric_address"]) if standby else None,
                )
            )
    return result


@dataclass
class FabricExpectation:
    """The WireGuard device one node needs: address, port and peers."""

    address: str
    prefixlen: int
    listen_port: int
    # public key -> {"endpoint": "ip:port" / "[ip6]:port", "allowed_ips": [...], "keepalive": "25"|"off"}
    peers: dict = field(default_factory=dict)


def _endpoint(node, fabric):
    if "endpoint" in node:
        return node["endpoint"]
    port = node.get("listen_port", fabric["listen_port"])
    addr = _ip(node["underlay"])
    return f"[{addr}]:{port}" if addr.version == 6 else f"{addr}:{port}"


def share_evpn_zone(definition, a, b):
    """Whether nodes a and b are members of one EVPN zone (its VXLAN may go through WireGuard)."""
    return any(_evpn(definition, z) and {a, b} <= set(zone_members(definition, z))
               for z in definition.get("zones", []))


def fabric_expectation(definition, node_name):
    """What `wg show wgfab0 dump` and the fabric address must say on node_name."""
    fabric = definition["fabric"]
    nodes = _nodes_by_name(definition)
    me = nodes[node_name]
    prefix = ipaddress.ip_network(fabric["prefix"])
    keepalive = fabric.get("keepalive", 25)
    peers = {}
    for name, n in nodes.items():
        if name == node_name:
            continue
        addr = _ip(n["fabric_address"])
        allowed = [f"{addr}/{addr.max_prefixlen}"]
        if share_evpn_zone(definition, node_name, name):
            under = _ip(n["underlay"])
            allowed.append(f"{under}/{under.max_prefixlen}")
        peers[n["public_key"]] = {
            "endpoint": _endpoint(n, fabric),
            "allowed_ips": allowed,  # the fabric address first
            "keepalive": str(keepalive) if keepalive else "off",
        }
    return FabricExpectation(
        address=_norm(me["fabric_address"]),
        prefixlen=prefix.prefixlen,
        listen_port=me.get("listen_port", fabric["listen_port"]),
        peers=peers,
    )


def owned_link_names(definition, node_name):
    """Names of every link fabricd should own on node_name."""
    names = {WG_DEVICE}
    for v in vnet_expectations(definition, node_name):
        names.update((v.bridge, v.vxlan))
        if v.standby:
            names.add(v.standby)
    return names


def port_role(link):
    """'sends', 'listens' or 'mute' from a bridge port's learning and flooding."""
    data = link.get("linkinfo", {}).get("info_slave_data", {})
    flood = [data.get(k) for k in ("flood", "mcast_flood", "bcast_flood")]
    if all(flood):
        return "sends"
    if not any(flood):
        return "listens" if data.get("learning") else "mute"
    return f"mixed {data}"


def standby_problems(node, v, links, alias):
    """What is wrong with a plain vnet's standby secure device (engine/switch.c)."""
    sb = links.get(v.standby)
    if sb is None:
        return [f"{v.standby}: missing (standby of {v.bridge})"]
    problems = []
    data = sb.get("linkinfo", {}).get("info_data", {})
    local = data.get("local") or data.get("local6")
    want = {"id": v.vni, "port": v.standby_port}
    got = {k: data.get(k) for k in want}
    if got != want or local is None or _norm(local) != v.standby_local:
        problems.append(f"{v.standby}: {got} local {local}, expected {want} local {v.standby_local}")
    if sb.get("master") != v.bridge or sb.get("ifalias") != alias or "UP" not in sb.get("flags", []):
        problems.append(f"{v.standby}: master {sb.get('master')} alias {sb.get('ifalias')!r} "
                        f"flags {sb.get('flags')}, expected in {v.bridge}, {alias!r}, up")
    if port_role(sb) != "mute":
        problems.append(f"{v.standby}: bridge port {port_role(sb)}, expected mute")
    if node.fdb_remotes(v.standby):
        problems.append(f"{v.standby}: has flood remotes {node.fdb_remotes(v.standby)}")
    return problems


def _normalize_endpoint(text):
    host, _, port = text.rpartition(":")
    host = host.strip("[]")
    try:
        addr = _ip(host)
    except ValueError:
        return text
    return f"[{addr}]:{port}" if addr.version == 6 else f"{addr}:{port}"


def node_problems(node, definition, zone_mtu, fabric_mtu=None):
    """Differences between node's kernel state and the definition, as text lines.

    zone_mtu: the expected bridge MTU, one int for every zone or a dict
    {zone name: MTU}. fabric_mtu: expected wgfab0 MTU (None: not checked).
    """
    problems = []
    alias = f"fabricd:{definition['cluster']}"
    links = node.links()

    # the fabric device and its address
    fab = fabric_expectation(definition, node.name)
    wg_link = links.get(WG_DEVICE)
    if wg_link is None:
        problems.append(f"{WG_DEVICE}: missing")
    else:
        if wg_link.get("ifalias") != alias:
            problems.append(f"{WG_DEVICE}: alias {wg_link.get('ifalias')!r}, expected {alias!r}")
        if fabric_mtu is not None and wg_link.get("mtu") != fabric_mtu:
            problems.append(f"{WG_DEVICE}: MTU {wg_link.get('mtu')}, expected {fabric_mtu}")
        if "UP" not in wg_link.get("flags", []):
            problems.append(f"{WG_DEVICE}: not up")
        # the prefix length on the device is fabricd's choice (the fabric
        # prefix, or /32 plus routes); what counts is the address and that
        # every peer's fabric address is routed into the device
        have_addrs = node.addresses(WG_DEVICE)
        if fab.address not in {a.split("/")[0] for a in have_addrs}:
            problems.append(f"{WG_DEVICE}: address {fab.address} missing (has {sorted(have_addrs)})")
        for peer in fab.peers.values():
            peer_addr = peer["allowed_ips"][0].split("/")[0]
            dev = node.route_dev(peer_addr)
            if dev != WG_DEVICE:
                problems.append(f"route to peer fabric address {peer_addr} goes to {dev}, not {WG_DEVICE}")
        dump = node.wg_dump()
        if dump is None:
            problems.append(f"{WG_DEVICE}: `wg show {WG_DEVICE} dump` failed")
        else:
            if dump.public_key != node.public_key:
                problems.append(f"{WG_DEVICE}: public key {dump.public_key}, expected {node.public_key}")
            if dump.listen_port != fab.listen_port:
                problems.append(f"{WG_DEVICE}: listen port {dump.listen_port}, expected {fab.listen_port}")
            if set(dump.peers) != set(fab.peers):
                problems.append(
                    f"{WG_DEVICE}: peers {sorted(dump.peers)}, expected {sorted(fab.peers)}"
                )
            for key, want in fab.peers.items():
                have = dump.peers.get(key)
                if have is None:
                    continue
                got = {
                    "endpoint": _normalize_endpoint(have.endpoint),
                    "allowed_ips": sorted(have.allowed_ips),
                    "keepalive": have.keepalive,
                }
                want = dict(want, endpoint=_normalize_endpoint(want["endpoint"]),
                            allowed_ips=sorted(want["allowed_ips"]))
                if got != want:
                    problems.append(f"{WG_DEVICE} peer {key}: {got}, expected {want}")

    # per vnet: VXLAN device, bridge, FDB
    for v in vnet_expectations(definition, node.name):
        mtu = zone_mtu[v.zone] if isinstance(zone_mtu, dict) else zone_mtu
        vx = links.get(v.vxlan)
        br = links.get(v.bridge)
        if vx is None:
            problems.append(f"{v.vxlan}: missing")
        else:
            info = vx.get("linkinfo", {})
            data = info.get("info_data", {})
            local = data.get("local") or data.get("local6")
            if info.get("info_kind") != "vxlan":
                problems.append(f"{v.vxlan}: kind {info.get('info_kind')}, expected vxlan")
            if data.get("id") != v.vni:
                problems.append(f"{v.vxlan}: VNI {data.get('id')}, expected {v.vni}")
            if data.get("port") != v.dstport:
                problems.append(f"{v.vxlan}: dstport {data.get('port')}, expected {v.dstport}")
            if local is None or _norm(local) != v.local:
                problems.append(f"{v.vxlan}: local {local}, expected {v.local}")
            if vx.get("master") != v.bridge:
                problems.append(f"{v.vxlan}: master {vx.get('master')}, expected {v.bridge}")
            if vx.get("ifalias") != alias:
                problems.append(f"{v.vxlan}: alias {vx.get('ifalias')!r}, expected {alias!r}")
            if "UP" not in vx.get("flags", []):
                problems.append(f"{v.vxlan}: not up")
            remotes = tuple(node.fdb_remotes(v.vxlan))
            if remotes != v.remotes:
                problems.append(f"{v.vxlan}: all-zeros FDB remotes {list(remotes)}, "
                                f"expected {list(v.remotes)}")
        if v.standby:
            problems += standby_problems(node, v, links, alias)
        if br is None:
            problems.append(f"{v.bridge}: missing")
        else:
            kind = br.get("linkinfo", {}).get("info_kind")
            if kind != "bridge":
                problems.append(f"{v.bridge}: kind {kind}, expected bridge")
            if br.get("mtu") != mtu:
                problems.append(f"{v.bridge}: MTU {br.get('mtu')}, expected {mtu} (zone {v.zone})")
            if br.get("ifalias") != alias:
                problems.append(f"{v.bridge}: alias {br.get('ifalias')!r}, expected {alias!r}")
            if "UP" not in br.get("flags", []):
                problems.append(f"{v.bridge}: not up")

    # nothing owned beyond what the definition asks for
    owned = {name for name, link in links.items() if link.get("ifalias") == alias}
    extra = owned - owned_link_names(definition, node.name)
    if extra:
        problems.append(f"links owned ({alias}) but not in the definition: {sorted(extra)}")
    return problems


def assert_node_converged(node, definition, zone_mtu, fabric_mtu=None):
    """Assert node_problems() is empty; the message lists every difference."""
    problems = node_problems(node, definition, zone_mtu, fabric_mtu)
    if problems:
        raise AssertionError(f"{node.name} does not match the definition:\n  " + "\n  ".join(problems))
