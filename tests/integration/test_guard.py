# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: the nftables guard (table `inet fabricd`) against VXLAN injection.

    sw-fdXXXX: br0 192.0.2.99/24  <- the injector (raw socket, any source) and captures
      |            |            |
    pve1         pve2         pve3
    vnet100 (plain, pve1+pve2)         p1 ---- p2
    vnet200 (secure, every node)       s1 ---- s2
    vnet300 (plain -> secure -> plain, pve1+pve2, the switch test)   f1 ---- f2

An injected packet is a VXLAN header with a VNI and an inner Ethernet frame to
a guest's MAC carrying a UDP datagram to the guest's address, port 9999. The
guest runs tcpdump for that port: whatever reaches it was delivered. The
guard's counters are read from `fabricd status --json` on the target node.

What must hold (the issue): a secure zone's VNI injected from the underlay
(to 4789 or to the secure port, from any address, even a member's) never
reaches a guest and raises a counter; plain VXLAN from an address that is not
a member of that zone is dropped and counted; plain VXLAN from a member is
delivered; a secure zone's VXLAN never leaves a node in clear text, also
while its transport is switched; `down` removes the table.
"""

import fcntl
import json
import os
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest

from fabtest import wait_quiet, wait_until, zone
from fabtest.inject import delivered_to, guest_mac, write_injector

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "schemas" /
                     "status.schema.json").read_text())
STRANGER = "192.0.2.99"  # an underlay address no node has: the switch's own
COUNT = 5

PLAIN = zone("tenant-plain", "plain", [("vnet100", 100)], nodes=["pve1", "pve2"])
SECURE = zone("tenant-secure", "secure", [("vnet200", 200)])


def flip(transport):
    return zone("tenant-flip", transport, [("vnet300", 300)], nodes=["pve1", "pve2"])


@pytest.fixture(scope="module")
def guarded(cluster3):
    cluster = cluster3
    definition = cluster.definition(zones=[PLAIN, SECURE, flip("plain")])
    path = cluster.write_definition(definition)
    cluster.apply_all(path)
    guests = {}
    for name, bridge, subnet, nodes in (("p", "vnet100", "10.0.1", (1, 2)),
                                        ("s", "vnet200", "10.0.2", (1, 2)),
                                        ("f", "vnet300", "10.0.3", (1, 2))):
        for i in nodes:
            guests[f"{name}{i}"] = cluster.add_guest(f"pve{i}", bridge, f"{subnet}.{i}/24",
                                                     name=f"{name}{i}")
    for a, b in (("p1", "p2"), ("s1", "s2"), ("f1", "f2")):
        wait_until(lambda: guests[a].ping(guests[b]), timeout=15, what=f"{a} -> {b}")
    cluster.switch.run(["ip", "addr", "add", f"{STRANGER}/24", "dev", "br0"])
    return SimpleNamespace(cluster=cluster, path=path, guests=guests,
                           injector=write_injector(cluster))


# --- helpers -----------------------------------------------------------------------


def delivered(fabric, guest, send):
    """Probes that reached guest while send() ran."""
    return delivered_to(fabric.cluster, guest, send)


def inject_from_switch(fabric, src, node, dport, vni, guest, count=COUNT):
    """Send count probes from the switch, with any source address."""
    fabric.cluster.switch.run(["/usr/bin/python3", fabric.injector, "raw", src, node.underlay,
                               str(dport), str(vni), guest_mac(guest), guest.address, str(count)])


def inject_from_node(fabric, sender, dst, dport, vni, guest, count=COUNT):
    """Send count probes from a node's own stack (its own address, its own guard)."""
    sender.run(["/usr/bin/python3", fabric.injector, "udp", "-", dst, str(dport), str(vni),
                guest_mac(guest), guest.address, str(count)])


def status(node, path):
    res = node.fabricd("status", "-c", path, "--json")
    assert res.rc == 0, res
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, SCHEMA)
    return doc


def counters(node, path):
    guard = status(node, path)["guard"]
    assert guard["present"] and guard["owned"], guard
    return {name: c["packets"] for name, c in guard["counters"].items()}


def nft(node, *args, check=True):
    return node.run(["nft", *args], check=check)


def table_json(node):
    out = nft(node, "-j", "list", "table", "inet", "fabricd").stdout
    return json.loads(out)["nftables"]


def set_elements(node, name):
    for item in table_json(node):
        s = item.get("set")
        if s and s["name"] == name:
            return s.get("elem", [])
    raise AssertionError(f"{node.name}: no set {name} in inet fabricd")


# --- the table ------------------------------------------------------------------------


def test_every_node_has_the_table_from_its_share(guarded):
    pve1, pve2, pve3 = guarded.cluster.nodes
    members = sorted((e["concat"][0], e["concat"][1]) for e in set_elements(pve1, "plain_members"))
    assert members == [("192.0.2.12", 100), ("192.0.2.12", 300)]
    assert set_elements(pve1, "secure_vnis") == [200]
    assert sorted(set_elements(pve1, "wireguard_peers_ip")) == ["192.0.2.12", "192.0.2.13"]
    # pve3 is in no plain zone: no plain VXLAN is accepted there at all
    assert set_elements(pve3, "plain_members") == []
    assert sorted(set_elements(pve3, "wireguard_peers_ip")) == ["192.0.2.11", "192.0.2.12"]
    listing = nft(pve1, "list", "table", "inet", "fabricd").stdout
    assert 'comment "fabricd:fabtest ' in listing
    # a member's plain VXLAN is taken by the first rule; one lookup by port sends the rest of
    # fabricd's traffic to its port's chain; secure VXLAN only through WireGuard; every rule
    # with fabricd's comment (its mark)
    mark = r' comment "fabricd [0-9a-f]{6}"'
    assert re.search(r'chain input \{\s+type filter hook input priority filter - 10; policy accept;\s+'
                     r'udp dport 4789 ip saddr \. @th,96,24 @plain_members accept' + mark + r'\s+'
                     r'udp dport vmap \{ 4789 : jump plain_vxlan_in, 4790 : jump secure_vxlan_in, '
                     r'51820 : jump wireguard_in \}' + mark + r'\s+\}', listing), listing
    assert re.search(r'chain output \{\s+type filter hook output priority filter - 10; policy accept;\s+'
                     r'udp dport 4789 @th,96,24 @secure_vnis counter name "drop_leak" drop' + mark
                     + r'\s+udp dport 4790 oifname != "wgfab0" @th,96,24 @node_vnis counter name '
                     r'"drop_leak" drop' + mark
                     + r'\s+\}', listing), listing
    assert re.search(r'chain secure_vxlan_in \{\s+'
                     r'iifname "wgfab0" ip saddr \. @th,96,24 @fabric_members accept' + mark + r'\s+'
                     r'@th,96,24 != @node_vnis accept' + mark + r'\s+'
                     r'counter name "drop_secure" drop' + mark + r'\s+\}', listing), listing
    # the members' fabric addresses, per vnet of the node, whatever the zone's transport
    fabric_members = sorted(tuple(e["concat"]) for e in set_elements(pve1, "fabric_members"))
    assert fabric_members == [("10.255.0.2", 100), ("10.255.0.2", 200), ("10.255.0.2", 300),
                              ("10.255.0.3", 200)], fabric_members


def test_plan_after_apply_finds_nothing(guarded):
    for node in guarded.cluster.nodes:
        res = node.fabricd("plan", "-c", guarded.path)
        assert res.rc == 0, f"{node.name}: {res}"


def test_another_inet_table_is_not_part_of_the_guard(guarded):
    """Its chains, rules, sets and counters are the kernel's too, in the same family."""
    pve1 = guarded.cluster.node("pve1")
    nft(pve1, "add", "table", "inet", "hand")
    try:
        nft(pve1, "add", "chain", "inet", "hand", "input",
            "{ type filter hook input priority 0; policy accept; }")
        nft(pve1, "add", "chain", "inet", "hand", "other")
        nft(pve1, "add", "rule", "inet", "hand", "input", "counter")
        nft(pve1, "add", "set", "inet", "hand", "plain_members", "{ type ipv4_addr; }")
        nft(pve1, "add", "element", "inet", "hand", "plain_members", "{ 192.0.2.99 }")
        nft(pve1, "add", "counter", "inet", "hand", "drop_plain")
        res = pve1.fabricd("plan", "-c", guarded.path)
        assert res.rc == 0, res
    finally:
        nft(pve1, "delete", "table", "inet", "hand")


# --- injection ------------------------------------------------------------------------


@pytest.mark.parametrize("src", [STRANGER, "192.0.2.12"], ids=["stranger", "spoofed-member"])
def test_secure_vni_on_the_plain_port_is_dropped(guarded, src):
    pve1 = guarded.cluster.node("pve1")
    s1 = guarded.guests["s1"]
    before = counters(pve1, guarded.path)
    got = delivered(guarded, s1, lambda: inject_from_switch(guarded, src, pve1, 4789, 200, s1))
    after = counters(pve1, guarded.path)
    assert got == 0, f"{got} probes into the secure zone reached s1"
    assert after["drop_plain"] - before["drop_plain"] == COUNT, (before, after)


@pytest.mark.parametrize("src", [STRANGER, "192.0.2.12", "10.255.0.2"],
                         ids=["stranger", "member-underlay", "member-fabric-address"])
def test_secure_port_from_the_underlay_is_dropped(guarded, src):
    pve1 = guarded.cluster.node("pve1")
    s1 = guarded.guests["s1"]
    before = counters(pve1, guarded.path)
    got = delivered(guarded, s1, lambda: inject_from_switch(guarded, src, pve1, 4790, 200, s1))
    after = counters(pve1, guarded.path)
    assert got == 0, f"{got} probes reached s1 around WireGuard"
    assert after["drop_secure"] - before["drop_secure"] == COUNT, (before, after)


def test_without_the_guard_the_same_probe_reaches_the_secure_guest(guarded):
    """The probe is a real attack: with the table gone, the kernel delivers it. apply repairs."""
    cluster = guarded.cluster
    pve1 = cluster.node("pve1")
    s1 = guarded.guests["s1"]
    try:
        nft(pve1, "delete", "table", "inet", "fabricd")
        res = pve1.fabricd("plan", "-c", guarded.path)
        assert res.rc == 2 and "+ nftables table inet fabricd" in res.stdout, res
        got = delivered(guarded, s1,
                        lambda: inject_from_switch(guarded, STRANGER, pve1, 4790, 200, s1))
        assert got == COUNT, f"unguarded: expected the {COUNT} probes at s1, saw {got}"
    finally:
        cluster.apply_all(guarded.path, nodes=[pve1])
    got = delivered(guarded, s1, lambda: inject_from_switch(guarded, STRANGER, pve1, 4790, 200, s1))
    assert got == 0


@pytest.mark.parametrize("sender", ["stranger", "pve3"])
def test_plain_zone_from_a_non_member_is_dropped(guarded, sender):
    cluster = guarded.cluster
    pve1 = cluster.node("pve1")
    p1 = guarded.guests["p1"]
    before = counters(pve1, guarded.path)
    if sender == "stranger":
        send = lambda: inject_from_switch(guarded, STRANGER, pve1, 4789, 100, p1)  # noqa: E731
    else:
        # a node of the cluster, but not of this zone
        send = lambda: inject_from_node(guarded, cluster.node("pve3"), pve1.underlay, 4789,  # noqa: E731
                                        100, p1)
    got = delivered(guarded, p1, send)
    after = counters(pve1, guarded.path)
    assert got == 0, f"{got} probes from {sender} reached p1"
    assert after["drop_plain"] - before["drop_plain"] == COUNT, (before, after)


def test_plain_zone_from_a_member_is_delivered(guarded):
    cluster = guarded.cluster
    pve1, pve2 = cluster.node("pve1"), cluster.node("pve2")
    p1 = guarded.guests["p1"]
    before = counters(pve1, guarded.path)
    got = delivered(guarded, p1,
                    lambda: inject_from_node(guarded, pve2, pve1.underlay, 4789, 100, p1))
    after = counters(pve1, guarded.path)
    assert got == COUNT, f"the guard broke a plain zone: {got} of {COUNT} probes from pve2"
    assert after["drop_plain"] == before["drop_plain"]
    assert guarded.guests["p1"].ping(guarded.guests["p2"], count=3)


def test_only_members_of_a_zone_reach_it_through_wireguard(make_cluster):
    """WireGuard authenticates a node of the cluster, not a member of the zone: pve3, in
    neither zone, sends VXLAN through its own wgfab0 to pve1's fabric address, on the
    secure port, into the secure zone and into the plain zone (whose standby secure
    device receives for a switch). Both are dropped and counted; a member's is delivered."""
    cluster = make_cluster(3)
    zones = [zone("pair-secure", "secure", [("vnet500", 500)], nodes=["pve1", "pve2"]),
             zone("pair-plain", "plain", [("vnet600", 600)], nodes=["pve1", "pve2"])]
    path = cluster.write_definition(cluster.definition(zones=zones))
    cluster.apply_all(path)
    pve1, pve2, pve3 = cluster.nodes
    fabric = SimpleNamespace(cluster=cluster, injector=write_injector(cluster))
    guests = {vni: cluster.add_guest("pve1", f"vnet{vni}", f"10.0.{vni % 256}.1/24",
                                     name=f"m{vni}") for vni in (500, 600)}
    assert "vs600" in pve1.links(), "the plain zone's standby secure device receives"
    wait_until(lambda: pve3.run(["ping", "-c", "1", "-W", "1", pve1.fabric_address],
                                check=False).returncode == 0,
               timeout=15, what="pve3 -> pve1 over WireGuard")
    for vni, guest in guests.items():
        before = counters(pve1, path)
        got = delivered(fabric, guest, lambda: inject_from_node(
            fabric, pve3, pve1.fabric_address, 4790, vni, guest))
        after = counters(pve1, path)
        assert got == 0, f"pve3 is not in the zone of VNI {vni}: {got} probes reached it"
        assert after["drop_secure"] - before["drop_secure"] == COUNT, (vni, before, after)
    member = delivered(fabric, guests[500], lambda: inject_from_node(
        fabric, pve2, pve1.fabric_address, 4790, 500, guests[500]))
    assert member == COUNT, f"a member's secure VXLAN: {member} of {COUNT} delivered"


def test_nothing_forwarded_goes_into_the_fabric(make_cluster):
    """An IPv6 fabric on a node that forwards IPv6 (as hosts that route their guests do):
    a guest of the plain zone on pve1 sends, to its bridge's MAC, secure VXLAN forged with
    pve1's fabric address, to pve2's, with the secure zone's VNI. pve1 forwarded it into
    wgfab0 and WireGuard carried it as pve1's: pve2's guard took it (a member's fabric
    address, through wgfab0) into a zone the guest is not in. The forward chain drops it,
    counted; the nodes' own secure traffic is untouched."""
    cluster = make_cluster(2, fabric_family=6)
    zones = [zone("plain-a", "plain", [("vnet100", 100)]),
             zone("secure-b", "secure", [("vnet200", 200)])]
    path = cluster.write_definition(cluster.definition(zones=zones))
    cluster.apply_all(path)
    pve1, pve2 = cluster.nodes
    fabric = SimpleNamespace(cluster=cluster, injector=write_injector(cluster))
    attacker = cluster.add_guest(pve1, "vnet100", "10.0.1.1/24", name="a1")
    victim = cluster.add_guest(pve2, "vnet200", "10.0.2.2/24", name="v2")
    peer = cluster.add_guest(pve1, "vnet200", "10.0.2.1/24", name="v1")
    wait_until(lambda: peer.ping(victim), timeout=15, what="v1 -> v2 over secure")
    pve1.run(["sysctl", "-q", "-w", "net.ipv6.conf.all.forwarding=1"])
    # the guest takes pve1's fabric address and sends to pve2's through its bridge's MAC
    bridge_mac = pve1.link("vnet100")["address"]
    for command in (["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=0",
                     "net.ipv6.conf.eth0.disable_ipv6=0"],
                    ["ip", "-6", "addr", "add", f"{pve1.fabric_address}/128", "dev", "eth0",
                     "nodad"],
                    ["ip", "-6", "route", "add", f"{pve2.fabric_address}/128", "dev", "eth0"],
                    ["ip", "-6", "neigh", "replace", pve2.fabric_address, "lladdr", bridge_mac,
                     "dev", "eth0"]):
        attacker.run(command)
    before = counters(pve1, path)
    got = delivered(fabric, victim, lambda: attacker.run(
        ["/usr/bin/python3", fabric.injector, "udp", "-", pve2.fabric_address, "4790", "200",
         guest_mac(victim), victim.address, str(COUNT)]))
    after = counters(pve1, path)
    assert got == 0, f"a plain zone's guest reached the secure zone through wgfab0: {got}"
    assert after["drop_forwarded"] - before["drop_forwarded"] == COUNT, \
        (before, after)
    assert peer.ping(victim, count=3)


def test_wireguard_port_from_a_stranger_is_dropped(guarded):
    cluster = guarded.cluster
    pve1 = cluster.node("pve1")
    before = counters(pve1, guarded.path)
    inject_from_switch(guarded, STRANGER, pve1, 51820, 1, guarded.guests["s1"])
    after = counters(pve1, guarded.path)
    assert after["drop_wireguard"] - before["drop_wireguard"] == COUNT, (before, after)
    # the nodes' own WireGuard is untouched
    assert guarded.guests["s1"].ping(guarded.guests["s2"], count=3)


def test_secure_vxlan_never_leaves_in_clear_text(guarded):
    """A local sender on pve1 tries both ways out: plain VXLAN with the secure VNI, and
    the secure port over the underlay. The output chain stops both; the switch sees nothing."""
    cluster = guarded.cluster
    pve1, pve2 = cluster.node("pve1"), cluster.node("pve2")
    s2 = guarded.guests["s2"]
    before = counters(pve1, guarded.path)
    with cluster.capture(f"({vni_filter(200)}) or udp port 4790") as underlay:
        inject_from_node(guarded, pve1, pve2.underlay, 4789, 200, s2)
        inject_from_node(guarded, pve1, pve2.underlay, 4790, 200, s2)
    after = counters(pve1, guarded.path)
    assert underlay.count() == 0, underlay.summary()
    assert after["drop_leak"] - before["drop_leak"] == 2 * COUNT, (before, after)


def test_status_shows_the_counters(guarded):
    pve1 = guarded.cluster.node("pve1")
    doc = status(pve1, guarded.path)
    assert doc["in_sync"] is True, doc["drift"]
    guard = doc["guard"]
    assert guard["table"] == "inet fabricd"
    assert set(guard["counters"]) == {"drop_plain", "drop_secure", "drop_wireguard", "drop_leak",
                                      "drop_forwarded"}
    assert guard["counters"]["drop_plain"]["packets"] > 0
    text = pve1.fabricd("status", "-c", guarded.path)
    assert text.rc == 0 and "guard inet fabricd: dropped plain " in text.stdout, text


def test_tampering_is_drift_and_apply_repairs_it_keeping_counts(guarded):
    cluster = guarded.cluster
    pve1 = cluster.node("pve1")
    before = counters(pve1, guarded.path)
    nft(pve1, "flush", "chain", "inet", "fabricd", "input")
    res = pve1.fabricd("plan", "-c", guarded.path)
    assert res.rc == 2 and "~ nftables table inet fabricd" in res.stdout, res
    nft(pve1, "add", "element", "inet", "fabricd", "plain_members", "{ 192.0.2.99 . 100 }")
    cluster.apply_all(guarded.path, nodes=[pve1])
    assert pve1.fabricd("plan", "-c", guarded.path).rc == 0
    # an element alone: few are named, so the operator sees whom the drift let in
    nft(pve1, "add", "element", "inet", "fabricd", "plain_members", "{ 192.0.2.99 . 100 }")
    res = pve1.fabricd("plan", "-c", guarded.path)
    assert res.rc == 2 and "set elements: 0 added, 1 removed, in one transaction (rules and " \
        "counters kept), 192.0.2.99 . 100 from plain_members" in res.stdout, res
    cluster.apply_all(guarded.path, nodes=[pve1])
    assert pve1.fabricd("plan", "-c", guarded.path).rc == 0
    assert ["192.0.2.99", 100] not in [e["concat"] for e in set_elements(pve1, "plain_members")]
    assert counters(pve1, guarded.path)["drop_plain"] >= before["drop_plain"]


# Each chain's rules as plan shows them: verdict and the mark of fabricd's comment on the rule
# (a hash of its text, kinds/guard_chains.c); "by hand" for a rule nft wrote from other text.
PLAIN_IN = "accept(61f959) accept(22c8c2) accept(a213c1) drop(67bd31)"
VMAP = "vmap{4789:jump:plain_vxlan_in,4790:jump:secure_vxlan_in,51820:jump:wireguard_in}(ce1eae)"

IN_PLACE = {
    # a stranger's plain VXLAN of a member's VNI let in
    "drop-made-accept": ("plain_vxlan_in", " drop", "accept",
                         "chain plain_vxlan_in, rules: accept(61f959) accept(22c8c2) accept(a213c1) "
                         "accept(by hand), where the definition makes chain plain_vxlan_in, "
                         f"rules: {PLAIN_IN}"),
    # the same verdict, another match: plain VXLAN of every VNI but one let in from anyone
    "accept-made-another-accept": (
        "plain_vxlan_in", "node_vnis", "@th,96,24 != 999 accept",
        "chain plain_vxlan_in, rules: accept(61f959) accept(22c8c2) accept(by hand) drop(67bd31), "
        f"where the definition makes chain plain_vxlan_in, rules: {PLAIN_IN}"),
    # the same, with fabricd's comment copied onto the new rule (as `nft list` gives it
    # to someone who edits the listing and loads it again): its expressions tell
    "accept-made-another-accept-with-the-comment": (
        "plain_vxlan_in", "node_vnis", '@th,96,24 != 999 accept comment "fabricd a213c1"',
        "chain plain_vxlan_in, rules: accept(61f959) accept(22c8c2) accept(altered) "
        f"drop(67bd31), where the definition makes chain plain_vxlan_in, rules: {PLAIN_IN}"),
    # every plain VXLAN let in, the port chain never reached
    "vmap-target-made-accept": (
        "input", "vmap", "udp dport vmap { 4789 : accept, 4790 : jump secure_vxlan_in, "
        "51820 : jump wireguard_in }",
        "rules: accept(8b05ef) vmap{4789:accept,4790:jump:secure_vxlan_in,51820:jump:wireguard_in}"
        "(by hand), where the definition makes chain input: filter input -10 accept, rules: "
        f"accept(8b05ef) {VMAP}"),
    # secure VXLAN let out past WireGuard, counted but not dropped
    "leak-drop-removed": ("output", "4790", 'udp dport 4790 oifname != "wgfab0" counter',
                          "rules: drop(9a2957) -(by hand), where the definition makes chain output: "
                          "filter output -10 accept, rules: drop(9a2957) drop(254902)"),
}


@pytest.mark.parametrize("case", sorted(IN_PLACE))
def test_a_rule_replaced_in_place_is_drift(guarded, case):
    """As many rules as rendered, one of them replaced (nft replace rule), with another verdict
    or the same: plan names the chain with each rule's verdict and mark, and apply puts the
    table back."""
    chain, marker, rule, detail = IN_PLACE[case]
    pve1 = guarded.cluster.node("pve1")
    before = pve1.run(["nft", "list", "chain", "inet", "fabricd", chain]).stdout
    listed = pve1.run(["nft", "-a", "list", "chain", "inet", "fabricd", chain]).stdout
    handle = [line.split()[-1] for line in listed.splitlines() if marker in line][0]
    nft(pve1, "replace", "rule", "inet", "fabricd", chain, "handle", handle, rule)
    res = pve1.fabricd("plan", "-c", guarded.path)
    assert res.rc == 2 and detail in res.stdout, res
    guarded.cluster.apply_all(guarded.path, nodes=[pve1])
    assert pve1.fabricd("plan", "-c", guarded.path).rc == 0
    assert pve1.run(["nft", "list", "chain", "inet", "fabricd", chain]).stdout == before


def test_every_chain_changed_by_hand_is_named(guarded):
    """Two chains' drops deleted: the plan names both (until 2026-12-07 only the first, so
    the secure port's drop gone by hand went unsaid behind the leak rule's)."""
    pve1 = guarded.cluster.node("pve1")
    for chain, marker in (("output", "9a2957"), ("secure_vxlan_in", "drop_secure")):
        listed = pve1.run(["nft", "-a", "list", "chain", "inet", "fabricd", chain]).stdout
        handle = [line.split()[-1] for line in listed.splitlines() if marker in line][0]
        nft(pve1, "delete", "rule", "inet", "fabricd", chain, "handle", handle)
    res = pve1.fabricd("plan", "-c", guarded.path)
    assert res.rc == 2 and "kernel copy differs: chain output: filter output -10 accept, " \
        "rules: drop(254902), where the definition makes chain output: filter output -10 " \
        "accept, rules: drop(9a2957) drop(254902), and chain secure_vxlan_in differs too)" \
        in res.stdout, res
    guarded.cluster.apply_all(guarded.path, nodes=[pve1])
    assert pve1.fabricd("plan", "-c", guarded.path).rc == 0


def table_handle(node):
    """The table's handle: a replaced table gets a new one."""
    for item in table_json(node):
        if "table" in item:
            return item["table"]["handle"]
    raise AssertionError(f"{node.name}: no table inet fabricd")


def test_a_new_vnet_changes_set_elements_only(guarded):
    """One more plain vnet: its members go into plain_members (and fabric_members, for its
    standby secure device), its VNI into node_vnis, in one transaction; the
    table (its handle, rules and counters) stays. A deleted element comes back the same way.
    Removing the vnet again takes its members out by the same kind of delta."""
    cluster = guarded.cluster
    pve1 = cluster.node("pve1")
    handle, before = table_handle(pve1), counters(pve1, guarded.path)
    more = zone("tenant-more", "plain", [("vnet400", 400)], nodes=["pve1", "pve2"])
    path = cluster.write_definition(cluster.definition(zones=[PLAIN, SECURE, flip("plain"), more]),
                                    f"{cluster.tmpdir}/more.json")
    try:
        res = pve1.fabricd("plan", "-c", path)
        assert res.rc == 2 and "set elements: 3 added, 0 removed" in res.stdout, res
        assert pve1.fabricd("apply", "-c", path).rc == 0
        assert table_handle(pve1) == handle, "the table was replaced for one vnet"
        members = [tuple(e["concat"]) for e in set_elements(pve1, "plain_members")]
        assert ("192.0.2.12", 400) in members
        assert ("10.255.0.2", 400) in [tuple(e["concat"])
                                       for e in set_elements(pve1, "fabric_members")]
        assert 400 in set_elements(pve1, "node_vnis")
        assert counters(pve1, path)["drop_plain"] >= before["drop_plain"]
        # someone deletes a member: drift, repaired by the same delta
        nft(pve1, "delete", "element", "inet", "fabricd", "plain_members", "{ 192.0.2.12 . 100 }")
        res = pve1.fabricd("plan", "-c", path)
        assert res.rc == 2 and "set elements: 1 added" in res.stdout, res
        assert pve1.fabricd("apply", "-c", path).rc == 0
        assert table_handle(pve1) == handle
        assert ["192.0.2.12", 100] in [e["concat"] for e in set_elements(pve1, "plain_members")]
        assert pve1.fabricd("plan", "-c", path).rc == 0
        res = pve1.fabricd("plan", "-c", guarded.path)
        assert res.rc == 2 and "set elements: 0 added, 3 removed" in res.stdout, res
    finally:
        assert pve1.fabricd("apply", "-c", guarded.path).rc == 0
    assert table_handle(pve1) == handle, "the table was replaced to remove one vnet"
    members = [tuple(e["concat"]) for e in set_elements(pve1, "plain_members")]
    assert ("192.0.2.12", 400) not in members and ("192.0.2.12", 100) in members
    assert pve1.fabricd("plan", "-c", guarded.path).rc == 0
    # a delta's removal is "add" then "delete" (kinds/guard.c delta_text): it must not
    # fail on an element already gone, which a bare "delete element" does
    gone = "{ 192.0.2.12 . 400 }"
    bare = nft(pve1, "delete", "element", "inet", "fabricd", "plain_members", gone, check=False)
    assert bare.returncode != 0
    pair = (f"add element inet fabricd plain_members {gone}\n"
            f"delete element inet fabricd plain_members {gone}\n")
    assert pve1.run(["nft", "-f", "-"], input=pair, check=False).returncode == 0
    assert pve1.fabricd("plan", "-c", guarded.path).rc == 0
    assert ("192.0.2.12", 400) not in [tuple(e["concat"]) for e in set_elements(pve1, "plain_members")]


# --- a transport switch --------------------------------------------------------------------


def vni_filter(vni, src=None):
    """Plain VXLAN carrying vni (the VNI is the 3 bytes at UDP payload offset 4)."""
    f = f"udp dst port 4789 and (udp[12:4] & 0xffffff00) = {vni << 8:#x}"
    return f"src host {src} and {f}" if src else f


GRACE = 8  # seconds the old device stays in the bridge after the switch


def switch_definition(guarded, transport):
    cluster = guarded.cluster
    if transport == "plain":
        return guarded.path
    return cluster.write_definition(cluster.definition(zones=[PLAIN, SECURE, flip("secure")]),
                                    f"{cluster.tmpdir}/flip.json")


def from_node(underlay, node):
    """The packets of a capture that node sent."""
    return [p for p in underlay.packets() if f"{node.underlay}." in p.split(">")[0]]


def test_switching_to_secure_with_a_grace_period(guarded):
    """plain -> secure as the daemon does it (old device kept for GRACE s): while the old
    plain device retires, the members' plain VXLAN of the VNI is still taken in (a stranger
    is dropped), so nodes that have not switched yet keep reaching it, but none of it leaves.
    Once it is gone, nothing of it on the underlay, nothing taken in clear."""
    cluster = guarded.cluster
    pve1, pve2 = cluster.node("pve1"), cluster.node("pve2")
    f1, f2 = guarded.guests["f1"], guarded.guests["f2"]
    secure = switch_definition(guarded, "secure")
    for node in (pve1, pve2):
        res = node.fabricd("apply", "-c", secure, "--grace", str(GRACE))
        assert res.rc == 0, res
    assert "vx300" in pve1.links() and "vs300" in pve1.links(), "grace: both devices"
    # sealed at once: nothing of VNI 300 leaves in clear text (the output chain drops
    # secure_vnis on 4789); the members' plain VXLAN is still taken in until vx300 goes
    assert set_elements(pve1, "secure_vnis") == [200, 300], "VNI 300 sealed on output"
    before = counters(pve1, secure)
    got = delivered(guarded, f1,
                    lambda: inject_from_switch(guarded, STRANGER, pve1, 4789, 300, f1))
    member = delivered(guarded, f1,
                       lambda: inject_from_switch(guarded, "192.0.2.12", pve1, 4789, 300, f1))
    assert "vx300" in pve1.links(), f"injected after the grace period of {GRACE} s"
    assert got == 0, "a stranger's plain VXLAN reached f1 during the grace period"
    assert member == COUNT, "a member's plain VXLAN is still delivered during the grace period"
    assert counters(pve1, secure)["drop_plain"] - before["drop_plain"] == COUNT

    # the grace period ends, the old devices go, the guard turns VNI 300 secure
    def old_devices_gone():
        cluster.apply_all(secure)
        return all("vx300" not in node.links() for node in (pve1, pve2))
    wait_until(old_devices_gone, timeout=GRACE + 10, interval=1, what="vx300 retired")
    for node in (pve1, pve2):
        assert set_elements(node, "secure_vnis") == [200, 300]
        assert node.fabricd("plan", "-c", secure).rc == 0
    before = counters(pve1, secure)
    got = delivered(guarded, f1,
                    lambda: inject_from_switch(guarded, "192.0.2.12", pve1, 4789, 300, f1))
    assert got == 0 and counters(pve1, secure)["drop_plain"] - before["drop_plain"] == COUNT
    with cluster.capture(vni_filter(300)) as underlay:
        wait_until(lambda: f1.ping(f2), timeout=15, what="f1 -> f2 over the secure transport")
        assert f1.ping(f2, count=10)
    assert underlay.count() == 0, underlay.summary()

    # and back: secure -> plain; the guard stays, and the zone works in clear again
    with cluster.capture(vni_filter(300)) as underlay:
        for node in (pve1, pve2):
            assert node.fabricd("apply", "-c", guarded.path, "--grace", "0").rc == 0
            assert node.run(["nft", "list", "table", "inet", "fabricd"]).returncode == 0
        wait_until(lambda: f1.ping(f2), timeout=15, what="f1 -> f2 over the plain transport")
    assert underlay.count() > 0, "the plain zone should be VXLAN on 4789 again"
    for node in (pve1, pve2):
        assert set_elements(node, "secure_vnis") == [200]
        assert node.fabricd("plan", "-c", guarded.path).rc == 0


def test_switching_to_secure_without_grace_is_strict_at_once(guarded):
    """plain -> secure with --grace 0: from pve1's apply on, it neither sends nor takes
    VNI 300 in clear text, even though pve2 has not switched yet."""
    cluster = guarded.cluster
    pve1, pve2 = cluster.node("pve1"), cluster.node("pve2")
    f1, f2 = guarded.guests["f1"], guarded.guests["f2"]
    secure = switch_definition(guarded, "secure")
    wait_until(lambda: f1.ping(f2), timeout=15, what="f1 -> f2 over the plain transport")
    with cluster.capture(vni_filter(300)) as underlay:
        res = pve1.fabricd("apply", "-c", secure, "--grace", "0")
        assert res.rc == 0, res
        assert set_elements(pve1, "secure_vnis") == [200, 300]
        f1.ping(f2, count=3, timeout=1)  # pve2 has not switched: fails, must not leak
        # pve2 answers those pings in plain VXLAN (and its guest may ask ARP), which pve1
        # drops and counts too: late on a slow machine (the QEMU tier), so the baseline
        # waits until that has settled, and the count is at least the injected frames
        wait_quiet(lambda: counters(pve1, secure)["drop_plain"], quiet=1.0, timeout=15,
                   interval=0.2, what="pve2's plain replies dropped and counted")
        before = counters(pve1, secure)
        got = delivered(guarded, f1,
                        lambda: inject_from_switch(guarded, "192.0.2.12", pve1, 4789, 300, f1))
        assert got == 0 and counters(pve1, secure)["drop_plain"] - before["drop_plain"] >= COUNT
        res = pve2.fabricd("apply", "-c", secure, "--grace", "0")
        assert res.rc == 0, res
        wait_until(lambda: f1.ping(f2), timeout=15, what="f1 -> f2 over the secure transport")
    leaked = from_node(underlay, pve1)
    assert leaked == [], "pve1 sent VNI 300 in clear after switching:\n" + "\n".join(leaked)
    cluster.apply_all(guarded.path)
    wait_until(lambda: f1.ping(f2), timeout=15, what="f1 -> f2 over the plain transport")


def blocked_stderr():
    """A pipe already full, as stderr: the first line a process writes there holds it up
    until the test reads the pipe (the write end is the caller's to close)."""
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: one page
    os.set_blocking(w, False)
    try:
        while True:
            os.write(w, b"x" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(w, True)  # the flag is the file's: the child would not wait otherwise
    return r, w


def test_a_switch_keeps_what_the_guard_counted_for_other_zones(guarded):
    """A switch's pass replaces the table (twice when one zone leaves secure and another
    enters it) and carries its counters over. They were read when the pass was planned, so
    what the old table dropped while the pass ran (its links change first) was lost, and
    the counters went back: here a stranger's plain VXLAN of the other zone tenant-plain,
    dropped while `apply` (its --verbose stderr held up) is between its plan and the
    table's replacement. The counts the table took since the plan must be kept."""
    cluster = guarded.cluster
    pve1 = cluster.node("pve1")
    p1 = guarded.guests["p1"]
    secure = switch_definition(guarded, "secure")
    before = counters(pve1, secure)["drop_plain"]
    r, w = blocked_stderr()
    argv = pve1.nsenter() + [cluster.fabricd_bin, "apply", "-c", secure, "-n", "pve1",
                             "--key-file", pve1.key_file, "--wg-backend", cluster.wg_backend,
                             "--grace", "0", "--verbose"]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=w)
    os.close(w)
    try:
        def held():
            with open(f"/proc/{proc.pid}/syscall") as f:
                return f.read().startswith("1 0x2 ")  # write(2, ...): the pipe is full
        wait_until(held, timeout=10, interval=0.01, what="apply held up at its first line")
        inject_from_switch(guarded, STRANGER, pve1, 4789, 100, p1)
        wait_until(lambda: counters(pve1, secure)["drop_plain"] >= before + COUNT, timeout=5,
                   interval=0.1, what="the stranger's probes counted")
    finally:
        with os.fdopen(r, "rb") as pipe:
            err = pipe.read()  # until apply exits
        rc = proc.wait(timeout=30)
    assert rc == 0, err.decode(errors="replace")[-2000:]
    after = counters(pve1, secure)["drop_plain"]
    cluster.apply_all(guarded.path, nodes=[pve1])  # tenant-flip plain again
    assert after >= before + COUNT, f"drop_plain {before} -> {after}: counts lost in the switch"


# --- an IPv6 underlay ---------------------------------------------------------------------


def test_ipv6_underlay_members_delivered_others_dropped(make_cluster):
    cluster = make_cluster(3, family=6)
    path = cluster.write_definition(cluster.definition(zones=[PLAIN, SECURE]))
    cluster.apply_all(path)
    fabric = SimpleNamespace(cluster=cluster, path=path, injector=write_injector(cluster))
    pve1, pve2, pve3 = cluster.nodes
    p1 = cluster.add_guest(pve1, "vnet100", "10.0.1.1/24", name="p1")
    p2 = cluster.add_guest(pve2, "vnet100", "10.0.1.2/24", name="p2")
    s1 = cluster.add_guest(pve1, "vnet200", "10.0.2.1/24", name="s1")
    s3 = cluster.add_guest(pve3, "vnet200", "10.0.2.3/24", name="s3")
    wait_until(lambda: p1.ping(p2), timeout=15, what="p1 -> p2 (plain, IPv6 underlay)")
    wait_until(lambda: s1.ping(s3), timeout=15, what="s1 -> s3 (secure, IPv6 underlay)")
    members = [e["concat"] for e in set_elements(pve1, "plain_members")]
    assert members == [["2001:db8::12", 100]], members
    assert sorted(set_elements(pve1, "wireguard_peers_ip6")) == ["2001:db8::12", "2001:db8::13"]
    before = counters(pve1, path)
    got = delivered(fabric, p1,
                    lambda: inject_from_node(fabric, pve3, pve1.underlay, 4789, 100, p1))
    assert got == 0 and counters(pve1, path)["drop_plain"] - before["drop_plain"] == COUNT
    got = delivered(fabric, p1,
                    lambda: inject_from_node(fabric, pve2, pve1.underlay, 4789, 100, p1))
    assert got == COUNT, f"a member's plain VXLAN over IPv6: {got} of {COUNT} delivered"
    for node in cluster.nodes:
        assert node.fabricd("plan", "-c", path).rc == 0


# --- down -------------------------------------------------------------------------------------


def test_down_removes_the_table(make_cluster):
    cluster = make_cluster(2)
    path = cluster.write_definition(cluster.definition(zones=[zone("t", "secure",
                                                                   [("vnet200", 200)])]))
    cluster.apply_all(path)
    for node in cluster.nodes:
        assert "fabricd" in nft(node, "list", "tables").stdout
    cluster.fabricd_all("down", path)
    for node in cluster.nodes:
        assert nft(node, "list", "tables").stdout.strip() == "", f"{node.name}: table left"
        doc = status(node, path)
        assert doc["guard"]["present"] is False


def test_a_table_fabricd_did_not_make_is_never_replaced(make_cluster):
    cluster = make_cluster(2)
    pve1 = cluster.node("pve1")
    nft(pve1, "add", "table", "inet", "fabricd")
    path = cluster.write_definition(cluster.definition(zones=[]))
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 1 and "inet fabricd" in res.stderr and "not owned" in res.stderr, res
    assert pve1.link("wgfab0") is None, "nothing may be built without the guard"
    res = pve1.fabricd("down", "-c", path)
    assert res.rc == 0, res
    assert "fabricd" in nft(pve1, "list", "tables").stdout, "down removed a foreign table"


def test_a_node_reached_at_an_ipv6_endpoint_in_an_ipv4_cluster(make_cluster):
    """README, MTU: where pve3's endpoint is an IPv6 literal in an IPv4 cluster, its peers
    reach it over IPv6, from their own IPv6 addresses, which no definition has: pve3's
    guard takes WireGuard over IPv6 from anywhere (it dropped all of it, and pve3 was cut
    off where IPv4 did not reach it; WireGuard authenticates what it takes)."""
    cluster = make_cluster(3)
    if cluster.family != 4:
        pytest.skip("an IPv4 cluster")
    pve1, pve2, pve3 = cluster.nodes
    for n in cluster.nodes:
        n.run(["ip", "addr", "add", f"2001:db8:6::{10 + n.index}/64", "dev", "eth0", "nodad"])
    # the underlay carries no IPv4 between pve1 and pve3: only pve3's endpoint reaches it
    cluster.switch.run(["nft", "-f", "-"], input=(
        "table bridge fabtest_cutv4 { chain forward { type filter hook forward priority 0;\n"
        f"ip saddr {pve1.underlay} ip daddr {pve3.underlay} drop\n"
        f"ip saddr {pve3.underlay} ip daddr {pve1.underlay} drop\n}}\n}}\n"))
    definition = cluster.definition(zones=[zone("blue", "secure", [("vnet200", 200)])])
    definition["nodes"][2]["endpoint"] = "[2001:db8:6::13]:51820"
    path = cluster.write_definition(definition)
    cluster.apply_all(path)
    wireguard_in = nft(pve3, "list", "chain", "inet", "fabricd", "wireguard_in").stdout
    assert "meta nfproto ipv6 accept" in wireguard_in, wireguard_in
    assert "meta nfproto" not in nft(pve1, "list", "chain", "inet", "fabricd",
                                     "wireguard_in").stdout
    b1 = cluster.add_guest(pve1, "vnet200", "10.2.0.1/24")
    b3 = cluster.add_guest(pve3, "vnet200", "10.2.0.3/24")
    wait_until(lambda: b1.ping(b3), timeout=25, what="pve1's guest -> pve3's, over IPv6")
    res = pve1.fabricd("plan", "-c", path)
    assert res.rc == 0, res
    # pve3 learned pve1's IPv6 address from its packets (roaming): what a one-shot plan
    # shows as a change of the endpoint, and only that (the guard is in sync)
    res = pve3.fabricd("plan", "-c", path)
    assert res.rc in (0, 2) and all(line.startswith("~ peer pve1: change (endpoint [2001:db8:6")
                                    for line in res.stdout.splitlines()), res


def test_a_new_tables_large_allow_list_is_loaded_over_netlink(make_cluster):
    """A table that does not exist yet: the sets plain_members and fabric_members, 39 peers
    x 60 vnets = 2,340 elements each (a plain vnet's standby secure device receives from
    the fabric), are loaded after the table in chunks of 2,048 over fabricd's own netlink
    (engine/guard_delta.c), not parsed by libnftables (most of a build's user CPU at 64
    nodes x 1024 vnets); every element lands and plan then finds nothing to do."""
    cluster = make_cluster(2)
    pve1 = cluster["pve1"]
    definition = cluster.definition()
    for index in range(3, 41):
        private = pve1.run(["wg", "genkey"]).stdout
        public = pve1.run(["wg", "pubkey"], input=private).stdout.strip()
        definition["nodes"].append({"name": f"pve{index}", "underlay": f"192.0.2.{100 + index}",
                                    "fabric_address": f"10.255.0.{index}", "public_key": public})
    definition["zones"] = [zone("wide", "plain", [(f"w{i}", 7000 + i) for i in range(60)])]
    path = cluster.write_definition(definition)
    res = pve1.fabricd("apply", "-c", path, "--verbose", timeout=120)
    assert res.rc == 0, res
    assert "loaded in 5 transactions (4 of them set elements over netlink)" in res.stderr, \
        res.stderr[-3000:]
    assert len(set_elements(pve1, "plain_members")) == 39 * 60
    assert len(set_elements(pve1, "fabric_members")) == 39 * 60
    assert pve1.fabricd("plan", "-c", path).rc == 0


@pytest.mark.parametrize("family", [4, 6], ids=["ipv4", "ipv6"])
def test_large_sets_are_declared_with_a_size_kept_while_it_fits(make_cluster, family):
    """A set of 1,024 elements or more is declared with a size (the kernel then keeps it
    in a hash of fixed size, whose dump is linear; the resizable one's is quadratic: half
    of a no-op plan's CPU at 64 nodes x 1024 vnets, README "Scale"). The size is kept
    while what a delta adds fits and it is not 8 times too big; past that the table is
    declared anew in one transaction, and every time the plan afterwards is empty. IPv6:
    20-byte keys (address . VNI) in the same kind of set."""
    cluster = make_cluster(2, family=family, fabric_family=family)
    pve1 = cluster["pve1"]
    definition = cluster.definition()
    for index in range(3, 34):  # 32 other nodes
        private = pve1.run(["wg", "genkey"]).stdout
        public = pve1.run(["wg", "pubkey"], input=private).stdout.strip()
        underlay, fabric = ((f"192.0.2.{100 + index}", f"10.255.0.{index}") if family == 4 else
                            (f"2001:db8::{100 + index:x}", f"fd00:255::{index:x}"))
        definition["nodes"].append({"name": f"pve{index}", "underlay": underlay,
                                    "fabric_address": fabric, "public_key": public})

    def declare(n_vnets):
        definition["zones"] = [zone("wide", "plain", [(f"w{i}", 7000 + i) for i in range(n_vnets)])]
        return cluster.write_definition(definition)

    def sets():
        found = {}
        for item in table_json(pve1):
            s = item.get("set")
            if s:
                found[s["name"]] = (s.get("size"), len(s.get("elem", [])))
        return found

    def apply_and_settle(path, n_vnets, size):
        res = pve1.fabricd("apply", "-c", path, timeout=120)
        assert res.rc == 0, res
        now = sets()
        assert now["plain_members"] == (size, 32 * n_vnets), now
        assert now["fabric_members"] == (size, 32 * n_vnets), now
        assert now["node_vnis"] == (None, n_vnets), now
        again = pve1.fabricd("plan", "-c", path)
        assert again.rc == 0, again

    apply_and_settle(declare(32), 32, 2048)  # 1,024 elements: 2,048
    path = declare(33)  # 1,056: fits, a delta
    res = pve1.fabricd("plan", "-c", path)
    assert res.rc == 2 and "set elements: 65 added, 0 removed" in res.stdout, res
    apply_and_settle(path, 33, 2048)
    path = declare(65)  # 2,080: past 2,048, declared anew
    res = pve1.fabricd("plan", "-c", path)
    assert "set plain_members declared for 2048 elements, 2080 wanted (now 8192): replaced " \
        "in one transaction, counters kept" in res.stdout, res
    apply_and_settle(path, 65, 8192)
    path = declare(8)  # 256 in 8,192: under an eighth, and small: no size
    res = pve1.fabricd("plan", "-c", path)
    assert "set plain_members declared for 8192 elements, 256 wanted (now 0)" in res.stdout, res
    apply_and_settle(path, 8, None)
