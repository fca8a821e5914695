# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: a transport switch that loses nothing and never sends clear text.

                       sw: br0   <- capture of every VXLAN packet, timestamped
          +---------------+---------------+
        pve1            pve2            pve3
   red  vnet100 r1a r1b vnet100 r2a r2b vnet100 r3a r3b   switched (plain <-> secure)
   blue vnet200 b1      vnet200 b2      vnet200 b3        secure, never touched

Each case switches red on the three nodes one after another, seconds apart,
with the daemon (`fabricd run`, each node its own copy) or with one-shot
`fabricd apply` (and a later `apply` for the stages that fall due), while
red guests ping guests on every other node 100 times a second, every red
guest's neighbour entries are probed again by broadcast several times a
second (so ARP runs across the switch all the time; FAST_ARP), and the blue
guests ping each other. What must hold:

1. never clear text: from the moment a node has applied `secure` for red
   (its apply returned, or its daemon logged the pass), the capture shows no
   VXLAN packet of VNI 100 from that node's underlay address, and its guard
   never had to drop one (drop_leak unchanged): nothing even tried;
2. zero loss: every echo answered, in red and in blue;
3. other zones untouched: every link but vx100/vs100 keeps its ifindex,
   MTU, master and alias, and WireGuard its sessions;
4. at the end of the grace period every node matches the definition.

Back-and-forth cases switch red to secure and back to plain, and to plain
and back to secure, before the grace period ends. Injection during and after the grace period is in
test_injection_window (req. 3 of the issue) and in test_guard.py.
"""

import json
import os
import re
import threading
import time
from types import SimpleNamespace

import pytest

from fabtest import SimCluster, node_problems, wait_until, zone
from fabtest.daemon import run_at, start_daemons, stop_daemons
from fabtest.inject import delivered_to, guest_mac, write_injector
from fabtest.pinger import Pingers
from fabtest.scenario import assert_sessions_kept, peer_sessions, warm_sessions

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

GRACE = 6
ZONE_MTU = 1390
FABRIC_MTU = 1440
SWITCHED = {"vx100", "vs100"}
STRANGER = "192.0.2.99"
# Echoes a second per pinger: 100 on the host (wireguard-go); 50 in the QEMU tier.
# There, 18 pingers at 100/s are at the emulated guest's limit: with the host busy
# (one CPU hog beside QEMU, as on a slower CI machine) each one-shot apply took
# 2-4 s and every pair lost echoes while one ran, the untouched blue zone and pairs
# of nodes that were not applying alike, with no drop seen by skb:kfree_skb (WireGuard
# frees what overflows its decrypt ring without that tracepoint); without the hog,
# and with no switch at all, 0 lost (10 of 10 cases, and the whole tier).
PINGS_PER_SECOND = 50 if os.environ.get("FABRICD_VM") else 100
# There a one-shot apply takes 2-4 s, so the later applies (the retire stage) end up
# to 8 s after they would on the host: the pings run that much longer to cover them.
SLOW_APPLY_SECONDS = 8 if os.environ.get("FABRICD_VM") else 0
_PASS_DONE = re.compile(r"\d+ created, \d+ changed, \d+ removed \(definition changed\)")
_PACKET = re.compile(r"^(\d+\.\d+) IP (\d+\.\d+\.\d+\.\d+)\.\d+ > [\d.]+\.4789: VXLAN.*vni (\d+)")

# (steps: [(seconds after the first, node, transport)], slow)
CASES = {
    "daemon": [
        ([(0, "pve1", "secure"), (1, "pve2", "secure"), (2, "pve3", "secure")], False),
        ([(0, "pve3", "plain"), (1.5, "pve1", "plain"), (2, "pve2", "plain")], False),
        ([(0, "pve2", "secure"), (0.7, "pve3", "secure"), (1.4, "pve1", "secure"),
          (2.5, "pve3", "plain"), (3, "pve1", "plain"), (3.5, "pve2", "plain")], False),
        ([(0, "pve1", "plain"), (1, "pve3", "plain"), (1.5, "pve2", "plain"),
          (2.5, "pve2", "secure"), (3, "pve1", "secure"), (3.5, "pve3", "secure")], True),
    ],
    "apply": [
        ([(0, "pve2", "secure"), (1, "pve3", "secure"), (2, "pve1", "secure")], False),
        ([(0, "pve1", "plain"), (1, "pve3", "plain"), (2, "pve2", "plain")], False),
        ([(0, "pve3", "secure"), (1, "pve2", "secure"), (1.5, "pve1", "secure"),
          (2.5, "pve1", "plain"), (3, "pve2", "plain"), (3.5, "pve3", "plain")], False),
        ([(0, "pve2", "plain"), (0.5, "pve1", "plain"), (1.5, "pve3", "plain"),
          (2.5, "pve3", "secure"), (3, "pve2", "secure"), (3.5, "pve1", "secure")], True),
    ],
}


def definition_of(cluster, red):
    return cluster.definition(zones=[zone("red", red, [("vnet100", 100)]),
                                     zone("blue", "secure", [("vnet200", 200)])])


def case_id(steps):
    return "-".join(f"{n}:{t[0]}@{d:g}" for d, n, t in steps)


@pytest.fixture(scope="module")
def fabric(request, cluster_options):
    cluster = SimCluster(3, **cluster_options)
    daemons = {}
    try:
        paths = {t: cluster.write_definition(definition_of(cluster, t),
                                             path=f"{cluster.tmpdir}/{t}.json")
                 for t in ("plain", "secure")}
        if request.param == "daemon":
            daemons = start_daemons(cluster, definition_of(cluster, "plain"), grace=GRACE)
        else:
            cluster.apply_all(paths["plain"])
        red = {n.name: [cluster.add_guest(n, "vnet100", f"10.1.0.{n.index + k}/24",
                                          name=f"r{n.index}{'ab'[k // 10]}") for k in (0, 10)]
               for n in cluster.nodes}
        keep_arp_busy([g for gs in red.values() for g in gs])
        blue = [cluster.add_guest(n, "vnet200", f"10.2.0.{n.index}/24", name=f"b{n.index}")
                for n in cluster.nodes]
        pairs = red_pairs(red) + [(a, b) for a in blue for b in blue if a is not b]
        for a, b in pairs:
            wait_until(lambda: a.ping(b), timeout=25, what=f"{a.name} -> {b.name}")
        warm_sessions(cluster.nodes)
        yield SimpleNamespace(cluster=cluster, mode=request.param, daemons=daemons,
                              paths=paths, red=red, pairs=pairs, transport="plain")
        if daemons:
            stop_daemons(daemons)
    finally:
        cluster.close()


def red_pairs(red):
    """Both guests of each node ping their namesake on every other node."""
    return [(red[a][k], red[b][k]) for a in red for b in red if a != b for k in (0, 1)]


def link_state(node):
    """What a switch of red must not change: every other link's identity and settings."""
    return {name: (l["ifindex"], l.get("mtu"), l.get("master"), l.get("ifalias"))
            for name, l in node.links().items() if name not in SWITCHED}


def leak_drops(fabric, node):
    path = (fabric.daemons[node.name].path if fabric.daemons
            else fabric.paths[fabric.transport])
    res = node.fabricd("status", "-c", path, "--json")
    assert res.rc == 0, res
    return json.loads(res.stdout)["guard"]["counters"]["drop_leak"]["packets"]


# How red guests keep ARP running across the switch: their neighbour entries go stale
# every 100-300 ms and are probed again by broadcast, while the entry stays in use
# (no unicast probes, three broadcast ones). The kernel does this without a loss of
# its own; deleting entries instead (`ip neigh flush` every 200 ms, as this test
# did) loses an echo now and then on a bare veth pair, no fabricd involved: a packet
# sent while its entry is deleted is queued on the dying entry and freed with it
# (1 lost of 20,000 in each of two runs with flushes every 20 ms, 0 of 20,000 in
# each of two runs without, and 0 of 20,000 with these settings).
FAST_ARP = {"base_reachable_time_ms": 200, "delay_first_probe_time": 0,
            "ucast_solicit": 0, "mcast_resolicit": 3, "retrans_time_ms": 100}


# broadcast ARP inside plain VXLAN of VNI 100 (the inner frame starts 16 bytes into UDP)
RED_ARP_BROADCAST = ("udp port 4789 and udp[12:4] & 0xffffff00 = 0x6400 and "
                     "udp[28:2] = 0x0806 and udp[16:4] = 0xffffffff")


def keep_arp_busy(guests):
    """Every guest's neighbour entries are re-probed by broadcast ARP several times a second."""
    for g in guests:
        g.run(["sysctl", "-q", "-w"] +
              [f"net.ipv4.neigh.eth0.{key}={value}" for key, value in FAST_ARP.items()])


class PassWatch:
    """When each daemon logged a finished pass for a definition change (wall clock)."""

    def __init__(self, daemons):
        self.daemons = daemons
        self.marks = {n: d.mark() for n, d in daemons.items()}
        self.times = {n: [] for n in daemons}
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            for name, d in self.daemons.items():
                n = len(_PASS_DONE.findall(d.log_since(self.marks[name])))
                while len(self.times[name]) < n:
                    self.times[name].append(time.time())
            time.sleep(0.01)

    def stop(self):
        self.running = False
        self.thread.join()


def switch_step(fabric, node, transport):
    """Switches node; returns the wall-clock time it had applied (one-shot mode)."""
    if fabric.mode == "daemon":
        fabric.daemons[node].set_transport("red", transport)
        return None
    res = fabric.cluster.node(node).fabricd("apply", "-c", fabric.paths[transport],
                                            "--grace", str(GRACE))
    assert res.rc == 0, res
    return time.time()


def secure_windows(steps, applied, t_start, t_end):
    """{node: [(from, to)]}: wall-clock spans during which node had applied secure
    (from the start, when the case starts secure)."""
    windows = {}
    if steps[0][2] == "plain":
        for _d, node, _t in steps:
            first = next(i for i, st in enumerate(steps) if st[1] == node)
            windows[node] = [(t_start, applied[first])]  # it keeps sending secure after that
    for i, (_delay, node, transport) in enumerate(steps):
        if transport != "secure":
            continue
        later = [j for j in range(i + 1, len(steps)) if steps[j][1] == node]
        windows.setdefault(node, []).append((applied[i], applied[later[0]] if later else t_end))
    return windows


def clear_text_after_switch(capture, nodes, windows):
    """Captured VXLAN packets of VNI 100 a node sent while it had applied secure."""
    by_addr = {n.underlay: n.name for n in nodes}
    leaks = []
    for line in capture.packets("udp dst port 4789"):
        m = _PACKET.match(line)
        if not m or int(m.group(3)) != 100 or m.group(2) not in by_addr:
            continue
        t, node = float(m.group(1)), by_addr[m.group(2)]
        if any(lo <= t <= hi for lo, hi in windows.get(node, [])):
            leaks.append(line.splitlines()[0])
    return leaks


def run_case(fabric, steps):
    cluster = fabric.cluster
    spread = max(d for d, _, _ in steps)
    seconds = spread + GRACE + 3 + SLOW_APPLY_SECONDS
    before = {n.name: (link_state(n), peer_sessions(n), leak_drops(fabric, n))
              for n in cluster.nodes}
    # a fixed count: every echo gets its time to be answered, none is cut off at the end
    pingers = Pingers.between(cluster, fabric.pairs, seconds=seconds,
                              interval=1 / PINGS_PER_SECOND,
                              count=int(seconds * PINGS_PER_SECOND))
    watch = PassWatch(fabric.daemons) if fabric.daemons else None
    with cluster.capture("udp port 4789") as underlay:
        t_start = time.time()
        pingers.start()
        pingers.wait_replies()
        t0 = time.monotonic()
        wall_t0 = time.time()
        done = run_at([(0.5 + d, lambda n=n, t=t: switch_step(fabric, n, t))
                       for d, n, t in steps], t0=t0)
        if fabric.mode == "apply":
            # the stages that fall due are performed by a later one-shot apply, once
            # the node's grace period (counted from its own apply) has ended: where
            # applies are slow (the QEMU tier) a node's switch returns late
            last = {n: t for _, n, t in steps}
            since_t0 = time.time() - time.monotonic() + t0  # wall clock of t0
            ended = {n: r - since_t0 for (_, r), (_, n, _) in zip(done, steps)}
            done += run_at([(max(0.5 + spread, ended[n]) + GRACE + 1.5,
                             lambda n=n, t=t: switch_step(fabric, n, t))
                            for n, t in last.items()], t0=t0)
        try:
            results = pingers.assert_no_loss(f"while red switched ({case_id(steps)})")
        except AssertionError as e:
            # a rare lost echo: its send time (in the message) against each switch call
            calls = ", ".join(f"{wall_t0 + started:.2f}" + (f"-{ended:.2f}" if ended else "")
                              for started, ended in done)
            raise AssertionError(f"{e}\n  switch calls (wall clock, start-end): {calls}"
                                 ) from None
        t_end = time.time()
    if watch:
        watch.stop()
        seen = {n: list(ts) for n, ts in watch.times.items()}
        applied = [seen[n].pop(0) for _, n, _ in steps]
    else:
        applied = [t for _, t in done]
    arp = underlay.count(RED_ARP_BROADCAST)
    print(f"\n{case_id(steps)} ({fabric.mode}): " +
          ", ".join(f"{r.label} {r.received}/{r.transmitted}" for r in results) +
          f"; {arp} broadcast ARP requests of red in clear VXLAN")
    if steps[0][2] == "secure" or steps[-1][2] == "plain":
        # red is plain for seconds at the start or the end: its ARP must have run then
        # (secure -> plain -> secure within the grace period may never send in clear)
        assert arp >= 3, f"red's ARP did not run in clear VXLAN: {arp} broadcasts (FAST_ARP)"
    leaks = clear_text_after_switch(underlay, cluster.nodes, secure_windows(steps, applied, t_start, t_end))
    assert leaks == [], "VNI 100 left a switched node in clear text:\n" + "\n".join(leaks)
    final = steps[-1][2]
    fabric.transport = final
    for node in cluster.nodes:
        links, sessions, drops = before[node.name]
        wait_until(lambda: not node_problems(node, definition_of(cluster, final),
                                             zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU),
                   timeout=GRACE + 5, what=f"{node.name} converged after the grace period")
        assert link_state(node) == links, f"{node.name}: links other than vx100/vs100 changed"
        assert_sessions_kept(node, sessions, peer_sessions(node))
        assert leak_drops(fabric, node) == drops, f"{node.name}: the guard dropped a leak"


def start_from(fabric, transport):
    """Brings red to transport on every node (pytest may order the cases any way)."""
    if fabric.transport == transport:
        return
    cluster = fabric.cluster
    if fabric.daemons:
        for d in fabric.daemons.values():
            d.set_transport("red", transport)
    else:
        for node in cluster.nodes:
            res = node.fabricd("apply", "-c", fabric.paths[transport], "--grace", "0")
            assert res.rc == 0, res
    for node in cluster.nodes:
        wait_until(lambda: not node_problems(node, definition_of(cluster, transport),
                                             zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU),
                   timeout=GRACE + 5, what=f"{node.name}: red {transport} to start from")
    fabric.transport = transport


def all_cases():
    for mode, cases in CASES.items():
        for steps, slow in cases:
            yield pytest.param(mode, steps, marks=[pytest.mark.slow] if slow else [],
                               id=f"{mode}-{case_id(steps)}")


@pytest.mark.parametrize("fabric,steps", list(all_cases()), indirect=["fabric"])
def test_switch_loses_nothing_and_never_leaks(fabric, steps):
    start_from(fabric, "plain" if steps[0][2] == "secure" else "secure")
    run_case(fabric, steps)


@pytest.mark.parametrize("fabric", ["apply"], indirect=True)
def test_injection_window(fabric):
    """A stranger's plain VXLAN into VNI 100 is never delivered; a member's forged one
    only until the switched node's grace period ends."""
    assert fabric.transport == "plain"
    cluster = fabric.cluster
    pve1, pve2 = cluster.node("pve1"), cluster.node("pve2")
    guest = fabric.red["pve1"][0]
    injector = write_injector(cluster)
    cluster.switch.run(["ip", "addr", "replace", f"{STRANGER}/24", "dev", "br0"])

    def inject(src):
        cluster.switch.run(["/usr/bin/python3", injector, "raw", src, pve1.underlay, "4789",
                            "100", guest_mac(guest), guest.address, "5"])

    res = pve1.fabricd("apply", "-c", fabric.paths["secure"], "--grace", str(GRACE))
    assert res.rc == 0, res
    t_switch = time.monotonic()
    assert delivered_to(cluster, guest, lambda: inject(STRANGER)) == 0, "stranger delivered"
    assert delivered_to(cluster, guest, lambda: inject(pve2.underlay)) == 5, \
        "a member's plain VXLAN must still be taken in during the grace period"
    assert time.monotonic() - t_switch < GRACE, "the grace period ended during the check"
    for node in cluster.nodes[1:]:
        assert node.fabricd("apply", "-c", fabric.paths["secure"], "--grace", str(GRACE)).rc == 0

    def retired():
        cluster.apply_all(fabric.paths["secure"])
        return "vx100" not in pve1.links()
    wait_until(retired, timeout=GRACE + 5, interval=0.5, what="vx100 retired on pve1")
    # deadlines are whole seconds of CLOCK_BOOTTIME: up to one second early
    assert time.monotonic() - t_switch >= GRACE - 1, "vx100 went before its grace period ended"
    assert delivered_to(cluster, guest, lambda: inject(pve2.underlay)) == 0, \
        "a member's plain VXLAN delivered after the grace period"
    fabric.transport = "secure"
    for node in cluster.nodes:
        assert node.fabricd("apply", "-c", fabric.paths["plain"], "--grace", "0").rc == 0
    fabric.transport = "plain"


def test_a_muted_plain_device_sending_again_is_muted_under_the_seal(make_cluster):
    """pve1 has applied `secure` for red (grace period running): its old vx100 receives
    only, and the guard seals VNI 100. Someone makes vx100 a sender again (flooding on,
    a flood entry to pve2). The repair planned the guard's early table again (unsealed,
    as for a switch's first pass), then the mute, then the seal: during that apply the
    guests' frames left pve1 in clear text. The repair mutes it under the seal."""
    cluster = make_cluster(2)
    definition = {t: cluster.definition(zones=[zone("red", t, [("vnet100", 100)])])
                  for t in ("plain", "secure")}
    plain = cluster.write_definition(definition["plain"], f"{cluster.tmpdir}/plain.json")
    secure = cluster.write_definition(definition["secure"], f"{cluster.tmpdir}/secure.json")
    cluster.apply_all(plain)
    pve1, pve2 = cluster.nodes
    r1 = cluster.add_guest(pve1, "vnet100", "10.1.0.1/24", name="r1")
    r2 = cluster.add_guest(pve2, "vnet100", "10.1.0.2/24", name="r2")
    wait_until(lambda: r1.ping(r2), timeout=25, what="r1 -> r2")
    assert pve1.fabricd("apply", "-c", secure, "--grace", "60").rc == 0
    # unknown unicast from r1, flooded to every port that floods, all the time
    r1.run(["ip", "neigh", "replace", "10.1.0.77", "lladdr", "02:00:00:00:00:77", "dev", "eth0"])
    flood = cluster._popen(r1.name, ["nsenter", f"--net=/run/netns/{r1.ns}"],
                           ["ping", "-n", "-q", "-i", "0.002", "-w", "8", "10.1.0.77"],
                           None, None, None)
    try:
        with cluster.capture(f"udp dst port 4789 and src host {pve1.underlay}") as cap:
            pve1.run(["bridge", "link", "set", "dev", "vx100", "flood", "on"])
            pve1.run(["bridge", "fdb", "append", "00:00:00:00:00:00", "dev", "vx100",
                      "dst", pve2.underlay])
            time.sleep(0.5)
            plan = pve1.fabricd("plan", "-c", secure, "--grace", "60")
            res = pve1.fabricd("apply", "-c", secure, "--grace", "60")
            time.sleep(0.5)
    finally:
        flood.kill()
        flood.wait()
    assert plan.rc == 2 and "~ vxlan vx100: change (mute" in plan.stdout, plan
    assert "nftables" not in plan.stdout, f"the seal was lifted for the repair: {plan}"
    assert res.rc == 0, res
    assert cap.count() == 0, f"clear text of red left pve1: {cap.summary()}"
    assert pve1.fabricd("plan", "-c", secure, "--grace", "60").rc == 0
