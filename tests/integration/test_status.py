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
