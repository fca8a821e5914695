# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: a node behind NAT roams, and the daemon lets WireGuard follow it.

                 sw: br0 + nftables (bridge family) acting as pve2's NAT:
          +------ pve2's WireGuard port 51820 appears as 40000, later 40001;
          |       the real port is not reachable from outside (dropped)
        pve1                 pve2        fabricd run on both
        wgfab0 10.255.0.1    wgfab0 10.255.0.2

pve2 pings pve1 through the fabric. pve1 learns pve2's translated endpoint
from pve2's authenticated packets (WireGuard roaming). Mid-stream the NAT
changes the port. The definition still says 192.0.2.12:51820, which no
longer reaches pve2: a daemon that "repairs" the learned endpoint back to it
breaks pve1's replies every time it does. Pings must continue, pve1 must
end on the new port, and the daemon must not have touched the endpoint; a
new endpoint in the definition, though, is set at once.
"""

import json
import time

import pytest

from fabtest import wait_until
from fabtest.daemon import start_daemons, stop_daemons
from fabtest.pinger import Pinger

pytestmark = [pytest.mark.netns, pytest.mark.wireguard]

NAT = """
table bridge fdnat {{
  chain portmap {{
    type filter hook forward priority 0;
    ip daddr {inside} udp dport 51820 drop
    ip saddr {inside} udp sport 51820 udp sport set {port}
    ip daddr {inside} udp dport {port} udp dport set 51820
  }}
}}
"""


def nat(cluster, inside, port, replace=False):
    rules = NAT.format(inside=inside, port=port)
    if replace:
        rules = "flush chain bridge fdnat portmap\n" + rules
    cluster.switch.run(["nft", "-f", "-"], input=rules)


def test_roaming_behind_nat_is_followed_not_fought(make_cluster):
    cluster = make_cluster(2)
    pve1, pve2 = cluster.nodes
    definition = cluster.definition(zones=[])
    daemons = start_daemons(cluster, definition, grace=3)
    try:
        def endpoint_on_pve1():
            return pve1.wg_dump().peers[pve2.public_key].endpoint

        # a first handshake: wireguard-go retries one after 5 s, and a loaded machine
        # (the QEMU tier beside this test) has lost two in a row (wait_guests_ping's budget)
        wait_until(lambda: pve2.run(["ping", "-c1", "-W1", pve1.fabric_address], check=False)
                   .returncode == 0, timeout=20, what="fabric up")
        nat(cluster, pve2.underlay, 40000)
        wait_until(lambda: pve2.run(["ping", "-c1", "-W1", pve1.fabric_address], check=False)
                   .returncode == 0 and endpoint_on_pve1() == f"{pve2.underlay}:40000",
                   timeout=10, what="pve1 follows pve2 to port 40000")
        mark = daemons["pve1"].mark()
        pinger = Pinger(cluster, pve2, pve1.fabric_address, seconds=5, interval=0.05).start()
        time.sleep(2)  # the input of the scenario: the NAT changes its port mid-stream
        nat(cluster, pve2.underlay, 40001, replace=True)
        stats = pinger.wait()
        assert stats.received >= 40, stats
        assert len(stats.missing) <= 1, f"pings lost while pve2 roamed: {stats}"
        assert endpoint_on_pve1() == f"{pve2.underlay}:40001"
        log = daemons["pve1"].log_since(mark)
        assert f"{pve2.underlay}:51820" not in log, f"the daemon reset the roamed endpoint:\n{log}"
        assert daemons["pve1"].running()
        # status agrees with the daemon: a roamed endpoint with a live session is not drift
        res = pve1.fabricd("status", "-c", daemons["pve1"].path, "--json")
        doc = json.loads(res.stdout)
        (peer,) = doc["fabric"]["peers"]
        assert peer["endpoint"] == f"{pve2.underlay}:40001", peer
        assert peer.get("definition_endpoint") == f"{pve2.underlay}:51820", (peer, doc["drift"])
        assert doc["in_sync"] is True and doc["drift"] == [], doc["drift"]
        text = pve1.fabricd("status", "-c", daemons["pve1"].path).stdout
        assert f"roamed: WireGuard learned it from the peer's packets (the definition says " \
            f"{pve2.underlay}:51820" in text and "DRIFT" not in text, text
        # plan still shows it: a one-shot apply sets the definition's endpoint
        assert pve1.fabricd("plan", "-c", daemons["pve1"].path).rc == 2
        # a changed endpoint in the definition is set, roaming or not
        definition["nodes"][1]["endpoint"] = f"{pve2.underlay}:40002"
        daemons["pve1"].write(definition)
        wait_until(lambda: endpoint_on_pve1() == f"{pve2.underlay}:40002", timeout=5,
                   what="the definition's new endpoint is set")
    finally:
        stop_daemons(daemons)
