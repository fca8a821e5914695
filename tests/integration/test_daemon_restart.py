# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: stopping and restarting `fabricd run` disturbs nothing.

                 sw: br0
          +---------+---------+
        pve1                 pve2        fabricd run on both
   red  vnet100 p1 ------- p2 (plain)
   blue vnet200 s1 ------- s2 (secure)

While the guests ping each other at 100/s in both zones, pve1's daemon is
stopped with SIGTERM and started again, and pve2's is killed with SIGKILL
and started again. Stopping leaves the dataplane up, and a start adopts what
is there: no ping lost, no link re-created (same ifindexes), no WireGuard
peer removed or re-keyed (same latest-handshake times, counters only grow),
the same wireguard-go processes, and the restarted daemon says it had
nothing to change.

Also here: a restart in the middle of a transport switch picks up the
retiring device and removes it on time; the service manager protocol
(READY=1, STATUS=, RELOADING=1, STOPPING=1, also on an abstract socket);
and the systemd unit.
"""

import configparser
import os
import shutil
import signal
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from fabtest import assert_node_converged, node_problems, run, wait_until, zone
from fabtest.cluster import REPO_ROOT
from fabtest.daemon import start_daemons, stop_daemons, wait_guests_ping
from fabtest.pinger import Pingers, all_pairs
from fabtest.scenario import assert_sessions_kept, peer_sessions, warm_sessions

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

ZONE_MTU = 1390
FABRIC_MTU = 1440
ADOPTED = "up to date, nothing to change (the running fabric is adopted)"


def zones(blue="secure"):
    return [zone("red", "plain", [("vnet100", 100)]), zone("blue", blue, [("vnet200", 200)])]


@pytest.fixture
def fabric(make_cluster):
    cluster = make_cluster(2)
    definition = cluster.definition(zones=zones())
    daemons = start_daemons(cluster, definition, grace=4)
    guests = {}
    for bridge, prefix, tag in (("vnet100", "10.1.0", "p"), ("vnet200", "10.2.0", "s")):
        guests[bridge] = [cluster.add_guest(n, bridge, f"{prefix}.{n.index}/24",
                                            name=f"{tag}{n.index}") for n in cluster.nodes]
    wait_guests_ping([p for a, b in guests.values() for p in ((a, b), (b, a))], daemons)
    warm_sessions(cluster.nodes)
    yield SimpleNamespace(cluster=cluster, definition=definition, daemons=daemons, guests=guests)
    stop_daemons(daemons)


def wireguard_go(node):
    return sorted(pid for pid, name in node.processes() if name == "wireguard-go")


def handshakes(node):
    return {key: peer.latest_handshake for key, peer in node.wg_dump().peers.items()}


def test_restart_with_sigterm_and_sigkill_loses_nothing(fabric):
    cluster = fabric.cluster
    pve1, pve2 = cluster.nodes
    before = {n.name: (n.ifindexes(), peer_sessions(n), handshakes(n), wireguard_go(n))
              for n in cluster.nodes}
    pingers = Pingers.between(cluster, all_pairs(fabric.guests["vnet100"]) +
                              all_pairs(fabric.guests["vnet200"]), seconds=7).start()

    d1, d2 = fabric.daemons["pve1"], fabric.daemons["pve2"]
    pingers.wait_replies()  # the pings are under way
    assert d1.stop(signal.SIGTERM) == 0
    assert "pve1: stopping on SIGTERM; the fabric stays up" in d1.log()
    assert "STOPPING=1" in d1.notifications()
    time.sleep(1)  # the scenario's input: stopped for a second, the dataplane carries on alone
    d1.start()
    assert ADOPTED in d1.log(), d1.log()
    assert d2.kill() == -signal.SIGKILL
    time.sleep(1)  # the scenario's input: dead for a second
    d2.start()
    assert ADOPTED in d2.log(), d2.log()

    results = pingers.assert_no_loss("across the restarts")
    for node in cluster.nodes:
        ifindexes, sessions, shakes, wg_pids = before[node.name]
        assert node.ifindexes() == ifindexes, f"{node.name}: links were re-created"
        assert_sessions_kept(node, sessions, peer_sessions(node))
        now = handshakes(node)
        age = time.time() - min(shakes.values())
        if age < 110:  # WireGuard itself re-keys every 120 s of traffic
            assert now == shakes, f"{node.name}: handshakes renewed by the restart: {shakes} -> {now}"
        if cluster.wg_backend == "userspace":
            assert wireguard_go(node) == wg_pids, f"{node.name}: wireguard-go was restarted"
        assert_node_converged(node, fabric.definition, zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU)
    print("\n" + "\n".join(str(r) for r in results))
    print("handshakes:", {n.name: handshakes(n) for n in cluster.nodes})


def test_restart_during_a_switch_adopts_the_holding_device(fabric):
    """SIGKILL while a switched zone is in its grace period (secure -> plain: vs200
    still sends until it ends): the new daemon neither re-creates nor forgets the
    stage, and ends it on time (vx200 sends, vs200 becomes the mute standby)."""
    cluster = fabric.cluster
    pve1 = cluster["pve1"]
    d1 = fabric.daemons["pve1"]
    pingers = Pingers.between(cluster, all_pairs(fabric.guests["vnet200"]), seconds=8).start()
    pingers.wait_replies()
    for d in fabric.daemons.values():
        d.set_transport("blue", "plain")
    wait_until(lambda: "secure-until=" in (pve1.link("vs200") or {}).get("ifalias", ""),
               timeout=3, what="vs200 holding until the end of the grace period")
    vs200 = pve1.link("vs200")["ifindex"]
    d1.kill()
    d1.start()
    assert pve1.link("vs200")["ifindex"] == vs200, "the holding device was re-created"
    assert "secure-until=" in pve1.link("vs200")["ifalias"], "the stage was forgotten"
    wait_until(lambda: pve1.link("vs200")["ifalias"] == "fabricd:fabtest",
               timeout=d1.grace + 6, what="vs200 standby again after the grace period")
    pingers.assert_no_loss("while blue switched secure -> plain across a restart")
    assert "vxlan vs200: mute: receives only" in d1.log(), d1.log()
    assert "drift" not in d1.log(), d1.log()
    definition = cluster.definition(zones=zones(blue="plain"))
    for node in cluster.nodes:
        wait_until(lambda: not node_problems(node, definition, zone_mtu=ZONE_MTU,
                                             fabric_mtu=FABRIC_MTU), timeout=5,
                   what=f"{node.name} converged")
        assert pve1.link("vs200")["ifindex"] == vs200, "vs200 stays, as the standby"


def test_service_manager_protocol(fabric):
    d1 = fabric.daemons["pve1"]
    messages = d1.notifications()
    ready = [m for m in messages if "READY=1" in m.split("\n")]
    assert ready, messages
    assert "STATUS=pve1: 2 zones, 2 vnets, 1 peer, converged" in ready[0].split("\n"), ready
    d1.send_signal(signal.SIGHUP)
    d1.wait_notify("RELOADING=1")
    reloading = [m for m in d1.notifications() if "RELOADING=1" in m]
    assert any(p.startswith("MONOTONIC_USEC=") for p in reloading[0].split("\n")), reloading
    wait_until(lambda: [m for m in d1.notifications() if "READY=1" in m.split("\n")][1:],
               timeout=5, what="READY=1 after the reload")
    assert d1.stop() == 0
    assert d1.notifications()[-1] == "STOPPING=1"


def test_notify_socket_may_be_abstract(fabric):
    """systemd passes "@name" for an abstract socket (in the daemon's network namespace)."""
    pve1 = fabric.cluster["pve1"]
    d1 = fabric.daemons["pve1"]
    d1.stop()
    name = f"fabtest-{fabric.cluster.suffix}-notify"
    listener = pve1.run_bg(["python3", "-u", "-c",
                            "import socket, sys\n"
                            "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                            f"s.bind('\\0{name}')\n"
                            "print('bound', flush=True)\n"
                            "while True:\n"
                            "    print(repr(s.recv(4096).decode()), flush=True)\n"])
    wait_until(lambda: "bound" in Path(listener.log_path).read_text(), timeout=5)
    d1.proc = pve1.run_bg(d1.argv(), env={"NOTIFY_SOCKET": "@" + name})
    wait_until(lambda: "READY=1" in Path(listener.log_path).read_text(), timeout=10,
               what="READY=1 on the abstract socket")
    os.kill(d1.pid, signal.SIGTERM)
    assert d1.proc.wait(timeout=10) == 0
    wait_until(lambda: "STOPPING=1" in Path(listener.log_path).read_text(), timeout=5)
    listener.kill()
    listener.wait()
    d1.start()  # for the fixture's teardown


def test_systemd_unit(fabricd_bin, tmp_path):
    path = REPO_ROOT / "hooks" / "fabricd.service"
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str
    unit.read(path)
    service = unit["Service"]
    assert service["Type"] == "notify"
    assert service["ExecStart"].startswith("/usr/sbin/fabricd run -c /etc/fabricd/cluster.json")
    assert service["ExecReload"] == "/bin/kill -HUP $MAINPID"
    assert service["Restart"] == "on-failure"
    # wireguard-go runs in fabricd's cgroup: the default KillMode would kill it on
    # stop or restart, and stopping fabricd must leave the dataplane up
    assert service["KillMode"] == "process"
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    # sandboxed, but not from what it does: no device policy (wireguard-go opens
    # /dev/net/tun), /etc writable (the ifupdown file), AF_PACKET for the probe
    assert service["NoNewPrivileges"] == "yes" and service["ProtectSystem"] == "yes"
    assert "AF_PACKET" in service["RestrictAddressFamilies"].split()
    for absent in ("PrivateDevices", "DevicePolicy", "DeviceAllow", "ProtectClock",
                   "CapabilityBoundingSet", "ProtectKernelTunables", "PrivateNetwork"):
        assert absent not in service, absent
    if shutil.which("systemd-analyze"):
        # verify checks that ExecStart exists: point it at the binary under test;
        # the man pages of Documentation= are checked by test_package.py, where
        # they are installed (here they are not)
        copy = tmp_path / "fabricd.service"
        copy.write_text(path.read_text().replace("/usr/sbin/fabricd", fabricd_bin))
        res = run(["systemd-analyze", "verify", "--man=no", str(copy)], check=False)
        assert res.returncode == 0 and not res.stderr.strip(), res.stderr
