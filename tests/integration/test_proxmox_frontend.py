# SPDX-License-Identifier: GPL-2.0-or-later
"""Proxmox VE stays the front end (issue 13, part 2).

Proxmox builds the vnet bridges of a Simple zone on every node with ifupdown2
(here Debian's ifupdown2 reading Proxmox-shaped files); fabricd carries them
between the nodes (zone "bridges": "existing"): it adds its VXLAN device as
a port of each bridge and never creates, changes or deletes the bridge.
Every `ifreload -a` (each SDN "Apply") removes the ports its configuration does
not list unless they match bridge-ports-condone-regex (Proxmox:
^(tap|veth|fwpr)); fabricd therefore writes /etc/network/interfaces.d/fabricd
with one extra `iface <bridge>` stanza widening the regex to vx<VNI>/vs<VNI>.

    pveN (netns + mount ns; /etc/network, /run/network, /var/tmp/network private)
      /etc/network/interfaces           lo, "source /etc/network/interfaces.d/*"
      /etc/network/interfaces.d/sdn     Proxmox's: auto vnet1 / bridge_ports none ...
      /etc/network/interfaces.d/fabricd fabricd's: iface vnet1 / condone regex
      vnet1 (Proxmox) <- tapNi0 (guest), vs100 (fabricd, secure)
      vnet2 (Proxmox) <- tapNi0 (guest), vx200 (fabricd, plain)

Checked: guests on three nodes ping in both transports; `ifreload -a` run on
every node, again and again and after Proxmox adds a vnet, loses no ping; the
bridges keep their ifindex (never recreated) and carry no fabricd mark; the
control (without fabricd's file) shows ifreload does remove the port.
"""
import os
import time

import pytest

from fabtest import zone
from fabtest.daemon import run_at, start_daemons, stop_daemons
from fabtest.diagnose import switch_report
from fabtest.pinger import Pingers
from fabtest.scenario import warm_sessions
from fabtest.proxmox import IFRELOAD, ifupdown, ports, proxmox_node, simple_vnet, write_sdn
from fabtest.wait import wait_until

pytestmark = [pytest.mark.netns, pytest.mark.vxlan]

MTU = 1390  # fabricd's stable MTU on a 1500 underlay; set as the Simple zone's mtu


def sdn_file(vnets):
    return "".join(simple_vnet(name, MTU) for name in vnets)


def bridge_ids(cluster, names):
    return {(n.name, b): n.link(b)["ifindex"] for n in cluster.nodes for b in names}


@pytest.fixture
def frontend(make_cluster):
    if not os.path.exists(IFRELOAD):
        pytest.skip("Debian's ifupdown2 is not installed")
    cluster = make_cluster(3)
    etcs = {n.name: proxmox_node(cluster, n, sdn_file(["vnet1", "vnet2"])) for n in cluster.nodes}
    zones = [dict(zone("front", "secure", [("vnet1", 100)]), bridges="existing"),
             dict(zone("frontp", "plain", [("vnet2", 200)]), bridges="existing")]
    config = cluster.write_definition(cluster.definition(zones=zones))
    return cluster, etcs, zones, config


def test_ifreload_keeps_fabricd_ports(frontend):
    cluster, etcs, zones, config = frontend
    ids = bridge_ids(cluster, ["vnet1", "vnet2"])
    cluster.apply_all(config)
    for n in cluster.nodes:
        # vnet2 is plain: vx200 and its mute standby vs200 (both names are condoned)
        assert ports(n, "vnet1") == ["vs100"] and ports(n, "vnet2") == ["vs200", "vx200"], \
            n.links()
        text = open(os.path.join(etcs[n.name], "interfaces.d", "fabricd")).read()
        assert "iface vnet1\n\tbridge-ports-condone-regex" in text, text
        for b in ("vnet1", "vnet2"):
            assert not n.link(b).get("ifalias", "").startswith("fabricd:"), "never marked"
    sec = [cluster.add_guest(n, "vnet1", f"10.0.1.{i + 1}/24") for i, n in
           enumerate(cluster.nodes)]
    pln = [cluster.add_guest(n, "vnet2", f"10.0.2.{i + 1}/24") for i, n in
           enumerate(cluster.nodes)]
    for a, b in [(sec[0], sec[1]), (sec[1], sec[2]), (pln[0], pln[1]), (pln[2], pln[0])]:
        wait_until(lambda: a.ping(b), timeout=25)

    pairs = [(sec[0], sec[1]), (sec[2], sec[0]), (pln[0], pln[1]), (pln[1], pln[2])]
    seconds = 30
    pingers = Pingers.between(cluster, pairs, seconds=seconds).start()
    started = time.monotonic()
    reload_times = []
    for version in (2, 3):
        for n in cluster.nodes:
            reload_times.append(ifupdown(n, "ifreload"))
    # Proxmox adds a vnet (SDN "Apply" on every node), then fabricd carries it
    for n in cluster.nodes:
        write_sdn(etcs[n.name], sdn_file(["vnet1", "vnet2", "vnet3"]), 4)
        reload_times.append(ifupdown(n, "ifreload"))
    zones[0]["vnets"].append({"name": "vnet3", "vni": 101})
    config = cluster.write_definition(cluster.definition(zones=zones))
    cluster.apply_all(config)
    for n in cluster.nodes:
        reload_times.append(ifupdown(n, "ifreload"))
    busy = time.monotonic() - started
    assert busy < seconds - 1, f"the reloads took {busy:.1f} s, longer than the pings ran"
    pingers.stop()
    pingers.assert_no_loss("across ifreload -a on every node")
    print(f"ifreload -a took {min(reload_times):.2f}..{max(reload_times):.2f} s "
          f"({len(reload_times)} runs in {busy:.1f} s), no ping lost")

    assert bridge_ids(cluster, ["vnet1", "vnet2"]) == ids, "Proxmox's bridges were recreated"
    for n in cluster.nodes:
        assert "vs100" in ports(n, "vnet1") and "vx200" in ports(n, "vnet2")
        assert ports(n, "vnet3") == ["vs101"], n.links()
    new = [cluster.add_guest(n, "vnet3", f"10.0.3.{i + 1}/24") for i, n in
           enumerate(cluster.nodes)]
    wait_until(lambda: new[0].ping(new[2]), timeout=25)
    assert not new[0].ping(sec[1]), "vnets stay apart"

    # down: fabricd's ports and file go, Proxmox's bridges and guests stay
    cluster.fabricd_all("down", config)
    for n in cluster.nodes:
        assert [p for p in ports(n, "vnet1") if not p.startswith("tap")] == []
        assert n.link("vnet1") is not None
        assert not os.path.exists(os.path.join(etcs[n.name], "interfaces.d", "fabricd"))


def test_control_ifreload_removes_unlisted_port(frontend):
    """Without fabricd's stanza ifreload does remove the port: the file is what keeps it."""
    cluster, etcs, _zones, config = frontend
    pve1 = cluster.nodes[0]
    cluster.apply_all(config, nodes=[pve1])
    os.unlink(os.path.join(etcs[pve1.name], "interfaces.d", "fabricd"))
    ifupdown(pve1, "ifreload")
    assert ports(pve1, "vnet1") == [], "ifreload should remove a port it does not condone"
    # the next apply puts back both the file and the port (the daemon does so on its tick)
    assert pve1.fabricd("apply", "-c", config).rc == 0
    assert ports(pve1, "vnet1") == ["vs100"]
    ifupdown(pve1, "ifreload")
    assert ports(pve1, "vnet1") == ["vs100"]
    # a vnet whose bridge Proxmox has not made yet is waited for, not created
    res = pve1.fabricd("plan", "-c", cluster.write_definition(cluster.definition(zones=[
        dict(zone("later", "secure", [("vnet7", 700)]), bridges="existing")])))
    assert "bridge vnet7" not in res.stdout and pve1.link("vnet7") is None, res


def test_daemon_toggles_a_zone_under_ifreload(frontend):
    """The per-zone toggle: `set-transport` on each node's copy, `fabricd run` switches
    plain -> secure make-before-break while Proxmox's ifreload -a runs on every node."""
    cluster, etcs, zones, _config = frontend
    grace = 4
    # verbose: a failure's report (fabtest/diagnose.py) shows when each pass ran
    daemons = start_daemons(cluster, cluster.definition(zones=zones), grace=grace,
                            verbose=True)
    try:
        pln = [cluster.add_guest(n, "vnet2", f"10.0.2.{i + 1}/24") for i, n in
               enumerate(cluster.nodes)]
        for a, b in [(pln[0], pln[1]), (pln[1], pln[2]), (pln[2], pln[0])]:
            wait_until(lambda: a.ping(b), timeout=25)
        # a switched node sends secure at once: every WireGuard session must be up, as it
        # is on a running cluster (a first initiation lost at startup is retried after 5 s)
        warm_sessions(cluster.nodes)
        pingers = Pingers.between(cluster, [(pln[0], pln[1]), (pln[1], pln[2]),
                                            (pln[2], pln[0])], seconds=grace + 8).start()
        run_at([(0.5 + 0.4 * i, lambda d=d: d.set_transport("frontp", "secure"))
                for i, d in enumerate(daemons.values())])
        for n in cluster.nodes:  # while both devices are in the bridge
            ifupdown(n, "ifreload")
        for n, g in zip(cluster.nodes, pln):
            wait_until(lambda: ports(n, "vnet2") == sorted(["vs200", g.tap]),
                       timeout=grace + 5, what=f"{n.name}: vx200 retired, vs200 kept")
            ifupdown(n, "ifreload")
            assert "vs200" in ports(n, "vnet2")
        try:
            pingers.stop()
            pingers.assert_no_loss("while frontp switched plain -> secure under ifreload")
        except AssertionError as e:
            raise AssertionError(f"{e}\n{switch_report(cluster, daemons, 'vnet2')}") from None
    finally:
        stop_daemons(daemons)
