# SPDX-License-Identifier: GPL-2.0-or-later
"""`fabricd status`: what an operator reads (text) and what programs read (JSON).

The JSON must match schemas/status.schema.json, report every peer with its
handshake and traffic, every zone and vnet of the node, and list drift
(what `plan` would change) when the kernel was changed behind fabricd's back.
"""
import json
import os
from pathlib import Path

import jsonschema
import pytest

from fabtest import zone
from fabtest.wait import wait_until

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "schemas" /
                     "status.schema.json").read_text())


@pytest.fixture(scope="module")
def applied(cluster2):
    zones = [zone("office", "plain", [("vnet810", 810)]),
             zone("tenant", "secure", [("vnet820", 820)])]
    config = cluster2.write_definition(cluster2.definition(zones=zones))
    cluster2.apply_all(config)
    return cluster2, config


def status_json(node, config):
    res = node.fabricd("status", "-c", config, "--json")
    assert res.rc == 0, res
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, SCHEMA)
    return doc


def test_status_json_describes_the_node(applied):
    cluster, config = applied
    pve1, pve2 = cluster.nodes
    # a handshake needs traffic or the first keepalive
    pve1.run(["ping", "-c", "1", "-W", "2", pve2.fabric_address], check=False)
    doc = wait_until(lambda: (d := status_json(pve1, config))["fabric"]["peers"][0]
                     ["latest_handshake_age"] is not None and d, timeout=10,
                     what="a handshake in status")
    assert doc["node"] == "pve1" and doc["in_sync"] is True and doc["drift"] == []
    fabric = doc["fabric"]
    if os.environ.get("FABRICD_VM"):
        # the QEMU tier boots a kernel with WireGuard: `auto` must choose it
        assert fabric["backend"] == "kernel"
    assert fabric["present"] and fabric["mtu"] == 1440 and fabric["listen_port"] == 51820
    assert fabric["addresses"] == [f"{pve1.fabric_address}/24"]
    (peer,) = fabric["peers"]
    assert peer["node"] == "pve2" and peer["public_key"] == pve2.public_key
    assert peer["endpoint"] == f"{pve2.underlay}:51820"
    assert peer["allowed_ips"] == [f"{pve2.fabric_address}/32"]
    assert peer["rx_bytes"] > 0 and peer["tx_bytes"] > 0
    zones = {z["name"]: z for z in doc["zones"]}
    assert zones["office"]["transport"] == "plain" and zones["office"]["mtu"] == 1390
    vnet = zones["tenant"]["vnets"][0]
    assert vnet["vxlan"]["name"] == "vs820" and vnet["vxlan"]["port"] == 4790
    assert vnet["vxlan"]["remotes"] == [pve2.fabric_address]
    assert vnet["bridge"]["present"] and vnet["bridge"]["owned"]
    assert "standby" not in vnet, "a secure vnet has no standby"
    # a plain vnet's mute secure standby is shown (it was only in the metrics)
    plain = zones["office"]["vnets"][0]
    assert plain["vxlan"]["name"] == "vx810" and plain["vxlan"]["remotes"] == [pve2.underlay]
    standby = plain["standby"]
    assert standby["name"] == "vs810" and standby["present"] and standby["owned"], standby
    assert standby["port"] == 4790 and standby["remotes"] == [], standby
    text = pve1.fabricd("status", "-c", config).stdout
    assert f"vxlan vx810 -> {pve2.underlay}, standby vs810\n" in text, text


def test_status_reports_drift(applied):
    cluster, config = applied
    pve1 = cluster.nodes[0]
    pve1.run(["ip", "link", "set", "vnet810", "mtu", "1300"])
    doc = status_json(pve1, config)
    assert doc["in_sync"] is False
    assert any(d["object"] == "bridge vnet810" and "1300 -> 1390" in d["detail"]
               for d in doc["drift"]), doc["drift"]
    text = pve1.fabricd("status", "-c", config)
    assert text.rc == 0 and "DRIFT" in text.stdout and "bridge vnet810" in text.stdout
    assert pve1.fabricd("apply", "-c", config).rc == 0
    assert status_json(pve1, config)["in_sync"] is True


def test_status_shows_a_node_whose_wanted_name_is_taken(applied):
    """A link fabricd does not own holding a vnet's name stops plan and apply; status
    still shows the node, the foreign link as not owned, and the conflicts."""
    cluster, config = applied
    pve1 = cluster.nodes[0]
    definition = json.loads(Path(config).read_text())
    definition["zones"][0]["vnets"] += [{"name": "vnet811", "vni": 811},
                                        {"name": "vnet812", "vni": 812}]
    taken = cluster.write_definition(definition, path=f"{cluster.tmpdir}/taken.json")
    pve1.run(["ip", "link", "add", "vnet811", "type", "bridge"])
    pve1.run(["ip", "link", "add", "vx812", "type", "bridge"])
    try:
        res = pve1.fabricd("plan", "-c", taken)
        assert res.rc == 1, res
        # the way out names what fixes it: a bridge is named after its vnet, a VXLAN
        # device after its VNI
        assert "bridge vnet811: a link named vnet811 exists that fabricd does not own " \
            "(kind bridge" in res.stderr and "or rename the vnet" in res.stderr, res
        assert "vxlan vx812: a link named vx812 exists that fabricd does not own (kind " \
            "bridge" in res.stderr and "or give the vnet another VNI" in res.stderr, res
        doc = status_json(pve1, taken)
        assert doc["in_sync"] is False, doc
        assert len(doc["conflicts"]) == 2, doc["conflicts"]
        assert any("a link named vnet811 exists" in c for c in doc["conflicts"])
        vnets = {v["name"]: v for z in doc["zones"] for v in z["vnets"]}
        assert vnets["vnet811"]["bridge"]["present"] is True, vnets["vnet811"]
        assert vnets["vnet811"]["bridge"]["owned"] is False, vnets["vnet811"]
        assert vnets["vnet810"]["bridge"]["owned"] is True
        assert doc["fabric"]["present"] and doc["fabric"]["peers"], doc["fabric"]
        text = pve1.fabricd("status", "-c", taken)
        assert text.rc == 0 and "conflict: bridge vnet811: a link named vnet811" in text.stdout, \
            text
        # the text says whose it is where it shows the vnet, as the JSON's "owned" does
        assert "vnet vnet811 vni 811: bridge DOWN (NOT fabricd's: see the conflict)" in \
            text.stdout, text
        assert "vnet vnet810 vni 810: bridge up, vxlan vx810 ->" in text.stdout, text
        assert "vxlan vx812 (NOT fabricd's: see the conflict)" in text.stdout, text
        assert status_json(pve1, config)["conflicts"] == []
    finally:
        pve1.run(["ip", "link", "del", "vnet811"])
        pve1.run(["ip", "link", "del", "vx812"])


def test_status_shows_a_node_whose_underlay_is_down(applied):
    """No route to the other nodes: apply cannot measure the underlay MTU and stops;
    status still shows the node as the kernel has it, and says why it cannot plan."""
    cluster, config = applied
    pve1 = cluster.nodes[0]
    pve1.run(["ip", "link", "set", "eth0", "down"])
    try:
        res = pve1.fabricd("plan", "-c", config)
        assert res.rc == 1 and "node pve2: no route to its underlay address" in res.stderr, res
        doc = status_json(pve1, config)
        assert doc["in_sync"] is False, doc
        (why,) = doc["conflicts"]
        assert why.startswith("node pve2: no route to its underlay address"), why
        assert doc["underlay_mtu"] is None, doc  # not measured (render says null too)
        assert doc["fabric"]["present"] and {z["name"] for z in doc["zones"]} == \
            {"office", "tenant"}, doc
        # the zones' MTU is not known without the underlay's (it was shown as 0)
        assert [z["mtu"] for z in doc["zones"]] == [None, None], doc["zones"]
        text = pve1.fabricd("status", "-c", config)
        assert text.rc == 0 and "conflict: node pve2: no route" in text.stdout, text
        # unknown, and what the guests have meanwhile: the kernel keeps the MTU in force
        assert "zone office: transport plain, mtu unknown, its bridges keep 1390 (stable)" \
            in text.stdout, text
        # a conflict, not drift; and status changed nothing, so it does not say so
        assert "CONFLICTS that stop every change" in text.stdout, text
        assert "DRIFT" not in text.stdout and "nothing was changed" not in text.stderr, text
        # said once, in the output (stderr had each conflict again)
        assert "no route" not in text.stderr, text
        dot = pve1.fabricd("status", "-c", config, "--dot")
        assert dot.rc == 0 and "office: plain, MTU unknown" in dot.stdout, dot
    finally:
        pve1.run(["ip", "link", "set", "eth0", "up"])
    wait_until(lambda: status_json(pve1, config)["in_sync"], timeout=10,
               what="pve1 in sync again with eth0 up")


def test_status_with_a_foreign_link_named_like_the_fabric(applied):
    """A bridge called wgfab0 is not the fabric: status says what holds the name instead
    of a WireGuard device with listen port 0, and no apply-only message."""
    cluster, config = applied
    pve1 = cluster.nodes[0]
    assert pve1.fabricd("down", "-c", config).rc == 0
    pve1.run(["ip", "link", "add", "wgfab0", "type", "bridge"])
    try:
        doc = status_json(pve1, config)
        fabric = doc["fabric"]
        assert not fabric["present"] and fabric["held_by"] == "bridge", fabric
        assert fabric["mtu"] is None and fabric["listen_port"] is None, fabric
        assert fabric["peers"] == [] and fabric["addresses"] == [], fabric
        assert any("a link named wgfab0 exists" in c for c in doc["conflicts"]), doc
        text = pve1.fabricd("status", "-c", config)
        assert text.rc == 0, text
        assert "fabric wgfab0: absent; a bridge device that is not fabricd's has the name" \
            in text.stdout, text
        assert "listen port" not in text.stdout, text
        assert "planning failed" not in text.stderr and "nothing was changed" not in \
            text.stderr, text
        # a bridge cannot be adopted as the fabric: the advice is to remove it
        res = pve1.fabricd("plan", "-c", config)
        assert res.rc == 1 and "(kind bridge, alias" in res.stderr and \
            "delete or rename it: only a WireGuard device can be the fabric" in res.stderr, res
        assert "to let fabricd adopt it" not in res.stderr, res
        # given fabricd's alias all the same: said, not taken for a hung wireguard-go
        pve1.run(["ip", "link", "set", "wgfab0", "alias", "fabricd:fabtest"])
        res = pve1.fabricd("plan", "-c", config)
        assert res.rc == 1 and "only a WireGuard device can be the fabric: delete it" in \
            res.stderr and "wireguard-go" not in res.stderr, res
    finally:
        pve1.run(["ip", "link", "del", "wgfab0"])
    cluster.apply_all(config)
    assert status_json(pve1, config)["in_sync"]


def test_a_key_file_apply_would_refuse_is_a_conflict(applied):
    """The node's key file replaced by another key: apply refuses it, so plan fails the same
    way and status shows a conflict, not "in sync" (both read the kernel only, before)."""
    cluster, config = applied
    pve1 = cluster.nodes[0]
    kept = Path(pve1.key_file).read_text()
    other = pve1.run(["wg", "genkey"]).stdout
    try:
        Path(pve1.key_file).write_text(other)
        want = "nodes[0].public_key: does not match the private key in " + pve1.key_file
        res = pve1.fabricd("plan", "-c", config)
        assert res.rc == 1 and want in res.stderr, res
        doc = status_json(pve1, config)
        assert doc["in_sync"] is False and any(c.startswith(want) for c in doc["conflicts"]), doc
        text = pve1.fabricd("status", "-c", config)
        assert text.rc == 0 and "CONFLICTS that stop every change" in text.stdout, text
        assert "conflict: " + want in text.stdout and "in sync" not in text.stdout, text
        assert other.strip() not in text.stdout + text.stderr + res.stdout + res.stderr
        # emptied: not "write a new key" (it cannot match), but put it back or rotate
        Path(pve1.key_file).write_text("")
        res = pve1.fabricd("plan", "-c", config)
        assert res.rc == 1 and "is empty: nodes[0] (pve1) has a public key already" in \
            res.stderr and "genkey" not in res.stderr, res
        # no key file at all: the same, with how to put it back
        os.unlink(pve1.key_file)
        doc = status_json(pve1, config)
        assert any("cannot read private key file" in c for c in doc["conflicts"]), doc
        assert pve1.fabricd("plan", "-c", config).rc == 1
    finally:
        Path(pve1.key_file).write_text(kept)
        os.chmod(pve1.key_file, 0o600)
    assert status_json(pve1, config)["in_sync"]
    assert pve1.fabricd("plan", "-c", config).rc == 0


def test_every_node_without_a_route_is_named(make_cluster):
    """A cut underlay loses every peer: the conflict named only the first of them."""
    cluster = make_cluster(3)
    config = cluster.write_definition(cluster.definition(
        zones=[zone("office", "plain", [("vnet830", 830)])]))
    pve1 = cluster.nodes[0]
    pve1.run(["ip", "link", "set", "eth0", "down"])
    res = pve1.fabricd("plan", "-c", config)
    assert res.rc == 1, res
    for peer in ("pve2", "pve3"):
        assert f"node {peer}: no route to its underlay address" in res.stderr, res
    doc = status_json(pve1, config)
    assert len([c for c in doc["conflicts"] if "no route" in c]) == 2, doc["conflicts"]


@pytest.mark.backend_neutral
@pytest.mark.parametrize("port_mtu, key, words", [
    (1500, "ports_over_mtu", "MTU 1500 OVER the zone's 1390: its frames over 1390 are dropped, "
     "not sent to the other nodes (give it MTU 1390)"),
    (1200, "ports_under_mtu", "MTU 1200 UNDER the zone's 1390: frames over 1200 sent to it are "
     "dropped (give it MTU 1390)"),
], ids=["over", "under"])
def test_a_guest_port_off_the_zone_mtu_is_named(applied, port_mtu, key, words):
    """A guest whose tap is over its zone's MTU loses its larger frames at the VXLAN port;
    one under it gets none of the larger frames sent to it (the bridge forwards no frame
    larger than the port's MTU). Neither is counted anywhere (`ip -s link` of neither the
    bridge nor the port); until 2026-12-07 status said nothing of the first, and named
    only the first until later that day."""
    cluster, config = applied
    pve1, pve2 = cluster.nodes
    odd = cluster.add_guest(pve1, "vnet810", "10.81.0.1/24", mtu=port_mtu)
    fits = cluster.add_guest(pve2, "vnet810", "10.81.0.2/24")
    other = "ports_under_mtu" if key == "ports_over_mtu" else "ports_over_mtu"
    try:
        assert fits.mtu == 1390
        wait_until(lambda: odd.ping(fits), timeout=10, what="the two guests")
        sender, receiver = (odd, fits) if port_mtu > 1390 else (fits, odd)
        assert not sender.ping(receiver, size=max(port_mtu, 1390) - 28, df=True), \
            "the larger frames crossed"
        doc = status_json(pve1, config)
        vnets = {v["name"]: v for z in doc["zones"] for v in z["vnets"]}
        assert vnets["vnet810"]["bridge"][key] == [{"name": odd.tap, "mtu": port_mtu}], \
            vnets["vnet810"]
        assert other not in vnets["vnet810"]["bridge"], vnets["vnet810"]
        assert key not in vnets["vnet820"]["bridge"], vnets["vnet820"]
        assert key not in status_json(pve2, config)["zones"][0]["vnets"][0]["bridge"]
        text = pve1.fabricd("status", "-c", config)
        assert text.rc == 0 and f"; port {odd.tap} {words}" in text.stdout, text
        pve1.run(["ip", "link", "set", odd.tap, "mtu", "1390"])
        assert key not in status_json(pve1, config)["zones"][0]["vnets"][0]["bridge"]
    finally:
        for guest in (odd, fits):
            guest.node.run(["ip", "link", "del", guest.tap], check=False)
