# SPDX-License-Identifier: GPL-2.0-or-later
"""The fabricd demo: a three-node cluster simulated in network namespaces.

  demo.py up     build it, apply the definition on every node, start guests,
                 show status and ping across a plain and a secure vnet
  demo.py down   remove everything the demo made

It uses the test harness (tests/integration/fabtest): one namespace per node
with its own mount namespace for wireguard-go, an underlay switch, and one
namespace per guest. Every name carries a random suffix, so the demo can run
beside the test suite. One demo runs at a time per state file:
FABRICD_DEMO_STATE (default /run/fabricd-demo.json; the text it printed is
kept beside it, .txt) names another, for a second demo or a test's own.
"""

import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "integration"))

from fabtest import SimCluster, zone  # noqa: E402
from fabtest.cluster import default_fabricd_bin  # noqa: E402
from fabtest.wait import wait_until  # noqa: E402

STATE = Path(os.environ.get("FABRICD_DEMO_STATE", "/run/fabricd-demo.json"))
INFO = STATE.with_suffix(".txt")


def say(text=""):
    print(text, flush=True)


def step(text):
    say(f"\n== {text}")


def show(result):
    for line in (result.stdout + result.stderr).rstrip().splitlines():
        say(f"   {line}")


def down_command():
    """How to tear this demo down, with its state file when it is not the default."""
    env = f"FABRICD_DEMO_STATE={STATE} " if "FABRICD_DEMO_STATE" in os.environ else ""
    return f"{env}scripts/demo.sh down"


def up():
    try:
        # claimed at once, empty until built: two demos started together cannot share it
        os.close(os.open(STATE, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:
        say(f"A demo is already running (see {INFO}). Remove it first: {down_command()} "
            f"(or run another with FABRICD_DEMO_STATE=ANOTHER.json)")
        return 1
    step("building three hypervisor nodes on one underlay switch (network namespaces)")
    try:
        cluster = SimCluster(n_nodes=3, cluster_name="demo", wg_backend="userspace",
                             fabricd_bin=default_fabricd_bin())
    except BaseException:
        STATE.unlink(missing_ok=True)
        raise
    try:
        return build(cluster)
    except BaseException:
        say("\nthe demo failed; removing what it built")
        cluster.close()
        STATE.unlink(missing_ok=True)
        raise


def build(cluster):
    pve1, pve2, pve3 = cluster.nodes
    for n in cluster.nodes:
        say(f"   {n.name}: namespace {n.ns}, underlay {n.underlay}, fabric {n.fabric_address}")
    zones = [
        zone("office", "plain", [("vnet100", 100)]),
        zone("tenant-a", "secure", [("vnet200", 200)]),
        zone("backup", "plain", [("vnet300", 300)], nodes=[pve1, pve3]),
    ]
    config = cluster.write_definition(cluster.definition(zones=zones))
    say(f"   definition: {config}")

    step("fabricd check, then fabricd apply on every node")
    show(pve1.fabricd("check", "-c", config, node_options=False))
    for n in cluster.nodes:
        res = n.fabricd("apply", "-c", config)
        show(res)
        if res.rc != 0:
            raise RuntimeError(f"apply on {n.name} failed")

    step("guests: one per node in vnet100 (plain) and vnet200 (secure)")
    guests = {}
    for i, n in enumerate(cluster.nodes, start=1):
        guests[(n.name, "vnet100")] = cluster.add_guest(n, "vnet100", f"10.100.0.{i}/24")
        guests[(n.name, "vnet200")] = cluster.add_guest(n, "vnet200", f"10.200.0.{i}/24")
    for (node, vnet), g in sorted(guests.items()):
        say(f"   {g.ns}: {g.cidr} on {node}/{vnet}, mtu {g.mtu}")

    step("WireGuard handshakes between the nodes")
    for n in cluster.nodes:
        wait_until(lambda n=n: all(p.latest_handshake for p in n.wg_dump().peers.values()),
                   timeout=15, what=f"{n.name}: handshakes with every peer")
    say("   every node has a session with every other node")

    step("fabricd status on pve1")
    show(pve1.fabricd("status", "-c", config))

    step("pings between guests")
    for vnet, net, kind in (("vnet100", "10.100.0", "plain VXLAN"),
                            ("vnet200", "10.200.0", "VXLAN inside WireGuard")):
        src = guests[("pve1", vnet)]
        for i in (2, 3):
            ok = wait_until(lambda: src.ping(f"{net}.{i}", count=1, timeout=2), timeout=10,
                            what=f"{vnet} ping")
            say(f"   {vnet} ({kind}): {src.cidr} -> {net}.{i}: {'ok' if ok else 'FAILED'}")
        mtu = src.mtu
        big = src.ping(f"{net}.2", count=1, size=mtu - 28, df=True, timeout=2)
        too_big = src.ping(f"{net}.2", count=1, size=mtu - 27, df=True, timeout=2)
        say(f"   {vnet}: largest unfragmented ping {mtu} bytes: {'ok' if big else 'FAILED'};"
            f" {mtu + 1} bytes: "
            f"{'refused by the guest (its MTU is the zone MTU)' if not too_big else 'passed?!'}")
    # a vnet100 guest given an address in vnet200's subnet: its ARP never reaches vnet200
    other = guests[("pve2", "vnet200")]
    stranger = guests[("pve1", "vnet100")]
    stranger.run(["ip", "addr", "add", "10.200.0.99/24", "dev", "eth0"])
    isolated = not stranger.ping("10.200.0.2", count=1, timeout=1)
    stranger.run(["ip", "addr", "del", "10.200.0.99/24", "dev", "eth0"])
    say(f"   a vnet100 guest with an address in vnet200's subnet -> {other.cidr}: "
        f"{'no answer, the vnets are separate layer-2 networks' if isolated else 'REACHABLE?!'}")

    step("what the underlay sees while vnet200 (secure) carries traffic")
    with cluster.capture() as cap:
        guests[("pve1", "vnet200")].ping("10.200.0.2", count=5, timeout=3)
    # VNI 200 in the VXLAN header (bytes 4-6 after UDP's 8): vnet200's own frames
    vni200 = cap.count("udp port 4789 and udp[12:4] = 0x0000c800")
    say(f"   WireGuard packets: {cap.wireguard_count()}; vnet200 (VNI 200) as plain VXLAN: "
        f"{vni200}, secure VXLAN in clear (4790): {cap.secure_vxlan_count()}; "
        f"other plain VXLAN (the plain vnets' own multicast reports): "
        f"{cap.vxlan_count() - vni200}")

    cluster.detach(STATE)
    fabricd = cluster.fabricd_bin or REPO / "fabricd/fabricd"

    def on(node, command):
        return (f"nsenter --mount={node.mount_file} --net=/run/netns/{node.ns} {fabricd} "
                f"{command} -c {config} -n {node.name} --key-file {node.key_file}")

    applies = "\n".join(f"  {on(n, 'apply')}" for n in cluster.nodes)
    info = f"""
The demo cluster keeps running. Look around:
  {on(pve1, 'status')}
  nsenter --mount={pve1.mount_file} --net=/run/netns/{pve1.ns} wg show
  ip -n {pve1.ns} -d link show vs200
  bridge -n {pve1.ns} fdb show dev vx100
  ip netns exec {guests[('pve1', 'vnet200')].ns} ping 10.200.0.3
Change it: edit {config}, see what a node would do, then apply on every node:
  {on(pve1, 'plan')}
{applies}
Tear it down:
  {down_command()}
"""
    INFO.write_text(info)
    say(info)
    return 0


def down():
    if not STATE.exists():
        say("no demo is running")
        return 0
    if STATE.stat().st_size == 0:
        say(f"a demo is being built ({STATE} claimed, not written yet): try again when "
            f"it is up")
        return 1
    cluster = SimCluster.attach(STATE)
    cluster.close()
    STATE.unlink()
    INFO.unlink(missing_ok=True)
    say(f"demo {cluster.suffix} removed")
    return 0


def main():
    if os.geteuid() != 0:
        say("the demo needs root (network namespaces)")
        return 1
    command = sys.argv[1] if len(sys.argv) > 1 else "up"
    if command == "up":
        return up()
    if command == "down":
        return down()
    say("usage: demo.py up|down")
    return 1


if __name__ == "__main__":
    sys.exit(main())
