# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: a zone switches transport under `fabricd run`, and nothing is lost.

                       sw: br0   <- capture
          +---------------+---------------+
        pve1            pve2            pve3        each: fabricd run --grace 7
   red  vnet100 r1      vnet100 r2      vnet100 r3   plain <-> secure, switched
   blue vnet200 b1      vnet200 b2                   secure, never touched

Each node reads its own copy of the definition; a case runs `fabricd
set-transport` on the copies in a given order, 0 to 2 s apart, while every
red guest pings every other red guest and the blue guests ping each other,
100 echoes per second each way. Cases alternate plain -> secure and secure
-> plain; over the twelve, every order of the three nodes is used in each
direction (the second six are marked slow).

The grace period must exceed the spread between the nodes noticing the
change (fabricd/engine/switch.c): 7 s for a spread of 2 s.

After each switch: no ping lost in either zone; the nodes match the new
definition (after plain -> secure vx100 is gone; after secure -> plain vs100
stays as the standby, listening); only vx100/vs100 and their FDB
entries changed (every other link has its ifindex, the bridges their MTU,
WireGuard its sessions); each daemon logged the change with its reason; and
a capture on the underlay shows red's traffic as VXLAN on UDP 4789 (plain)
or only as WireGuard (secure).
"""

import os
import re
import time
from types import SimpleNamespace

import pytest

from fabtest import Capture, SimCluster, assert_node_converged, node_problems, wait_until, zone
from fabtest.daemon import run_at, start_daemons, stop_daemons, wait_guests_ping
from fabtest.pinger import Pingers, all_pairs
from fabtest.scenario import assert_sessions_kept, peer_sessions, warm_sessions

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

GRACE = 7
HOLD = 6  # the max-policy test's grace period: long enough to look at the hold
ZONE_MTU = 1390  # stable policy: the same under both transports
FABRIC_MTU = 1440
SWITCHED = {"vx100", "vs100"}

# (order: {node: seconds after the first}, slow)
CASES = [
    ({"pve1": 0, "pve2": 1, "pve3": 2}, False),
    ({"pve3": 0, "pve2": 1, "pve1": 2}, False),
    ({"pve2": 0, "pve1": 0.5, "pve3": 2}, False),
    ({"pve1": 0, "pve3": 0, "pve2": 2}, False),
    ({"pve3": 0, "pve1": 1.5, "pve2": 2}, False),
    ({"pve2": 0, "pve3": 1, "pve1": 1.2}, False),
    ({"pve3": 0, "pve2": 1.5, "pve1": 2}, True),
    ({"pve1": 0, "pve2": 0.7, "pve3": 1.4}, True),
    ({"pve1": 0, "pve3": 1, "pve2": 2}, True),
    ({"pve2": 0, "pve1": 1, "pve3": 2}, True),
    ({"pve2": 0, "pve3": 0.3, "pve1": 2}, True),
    ({"pve3": 0, "pve1": 0, "pve2": 0}, True),
]


def case_id(case):
    order, _slow = case
    return "-".join(f"{n}@{t:g}" for n, t in sorted(order.items(), key=lambda i: i[1]))


def definition_of(cluster, red):
    return cluster.definition(zones=[zone("red", red, [("vnet100", 100)]),
                                     zone("blue", "secure", [("vnet200", 200)],
                                          nodes=["pve1", "pve2"])])


@pytest.fixture(scope="module")
def fabric(cluster_options):
    cluster = SimCluster(3, **cluster_options)
    try:
        daemons = start_daemons(cluster, definition_of(cluster, "plain"), grace=GRACE)
        red = [cluster.add_guest(n, "vnet100", f"10.1.0.{n.index}/24", name=f"r{n.index}")
               for n in cluster.nodes]
        blue = [cluster.add_guest(n, "vnet200", f"10.2.0.{n.index}/24", name=f"b{n.index}")
                for n in cluster.nodes[:2]]
        wait_guests_ping(all_pairs(red) + all_pairs(blue), daemons)
        warm_sessions(cluster.nodes)
        yield SimpleNamespace(cluster=cluster, daemons=daemons, red=red, blue=blue,
                              transport="plain")
        stop_daemons(daemons)
    finally:
        cluster.close()


def snapshot(cluster):
    return {n.name: (n.ifindexes(), peer_sessions(n)) for n in cluster.nodes}


def capture_red(fabric):
    """A short capture on the underlay while red guests ping each other (blue idle)."""
    r1, r2 = fabric.red[0], fabric.red[1]
    wait_until(lambda: r1.ping(r2), timeout=5, what="r1 -> r2")
    with fabric.cluster.capture() as underlay:
        assert r1.ping(r2, count=5)
    return underlay


@pytest.mark.parametrize("case", [pytest.param(c, marks=[pytest.mark.slow] if c[1] else [],
                                               id=case_id(c)) for c in CASES])
def test_switch_loses_nothing(fabric, case):
    order, _slow = case
    cluster = fabric.cluster
    old, new = fabric.transport, "secure" if fabric.transport == "plain" else "plain"
    fabric.transport = new  # what the copies say from now on, whatever the outcome
    t0 = time.monotonic()
    before = snapshot(cluster)
    marks = {name: d.mark() for name, d in fabric.daemons.items()}
    pingers = Pingers.between(cluster, all_pairs(fabric.red) + all_pairs(fabric.blue),
                              seconds=max(order.values()) + GRACE + 2.5)

    pingers.start()
    wait_until(lambda: all(p.proc.poll() is None for p in pingers.pingers), timeout=2)
    run_at([(0.5 + delay, lambda d=fabric.daemons[name]: d.set_transport("red", new))
            for name, delay in order.items()])
    results = pingers.assert_no_loss(f"while red switched {old} -> {new} ({case_id(case)})")
    print(f"\n{old} -> {new} {case_id(case)}: " +
          ", ".join(f"{r.label} {r.received}/{r.transmitted}" for r in results))
    t_pings = time.monotonic()

    definition = definition_of(cluster, new)
    for node in cluster.nodes:
        # secure: vx100 goes after the grace period; plain: vs100 stays as the standby
        wait_until(lambda: SWITCHED & set(node.owned_links("fabtest")) == (
            {"vs100"} if new == "secure" else SWITCHED) and not node_problems(
                node, definition, zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU),
                   timeout=GRACE + 3, what=f"{node.name}: at the end of the grace period")
        assert_node_converged(node, definition, zone_mtu=ZONE_MTU, fabric_mtu=FABRIC_MTU)
        ifindexes, sessions = before[node.name]
        now = node.ifindexes()
        kept = {k: v for k, v in ifindexes.items() if k not in SWITCHED}
        assert {k: now.get(k) for k in kept} == kept, f"{node.name}: other links re-created"
        assert_sessions_kept(node, sessions, peer_sessions(node))
        log = fabric.daemons[node.name].log_since(marks[node.name])
        assert f"zone red: transport {old} -> {new} (definition changed)" in log, log
        assert "error" not in log, log

    t_checks = time.monotonic()
    underlay = capture_red(fabric)
    red_plain = [p for p in underlay.packets(Capture.VXLAN) if "vni 100" in p]
    # five echoes and replies crossed; the very last may still be on its way to the capture
    if new == "secure":
        assert red_plain == [], underlay.summary()
        assert underlay.wireguard_count() >= 8, underlay.summary()
    else:
        assert len(red_plain) >= 8, underlay.summary()
    print(f"\ntimes: pings {t_pings - t0:.1f} s, node checks {t_checks - t_pings:.1f} s, "
          f"capture {time.monotonic() - t_checks:.1f} s")


def test_max_policy_switch_warns_guests_to_lower_their_mtu(make_cluster):
    cluster = make_cluster(2)

    def green(transport):
        return cluster.definition(zones=[zone("green", transport, [("vnet300", 300)],
                                              mtu_policy="max")])

    daemons = start_daemons(cluster, green("plain"), grace=HOLD)
    pve1 = cluster["pve1"]
    assert pve1.link("vnet300")["mtu"] == 1450
    for d in daemons.values():
        d.set_transport("green", "secure")
    for d in daemons.values():
        d.wait_log("zone green: MTU 1450 -> 1390")
    log = daemons["pve1"].log()
    assert "warning: zone green: MTU 1450 -> 1390" in log and "must lower their MTU to 1390" in log, log
    wait_until(lambda: pve1.link("vnet300")["mtu"] == 1390, what="vnet300 at MTU 1390")

    # Back to plain: secure still sends for the grace period, so the zone keeps the secure
    # MTU until then (frames at 1450 would not fit WireGuard), and guests hear of 1450 when
    # the plain device sends. Before 2026-12-05 the bridges went to 1450 at the switch and
    # a guest that raised its MTU as told lost every DF frame above 1390 for the hold.
    guests = [cluster.add_guest(n, "vnet300", f"10.3.0.{i + 1}/24", mtu=1390)
              for i, n in enumerate(("pve1", "pve2"))]
    wait_guests_ping([guests], daemons)  # the first contact: logs and wg show if it fails
    marks = {name: d.mark() for name, d in daemons.items()}
    for d in daemons.values():
        d.set_transport("green", "plain")
    for name, d in daemons.items():
        d.wait_log("(definition changed)", since=marks[name])
    switched = time.monotonic()
    links = pve1.links()
    assert [links[k]["mtu"] for k in ("vnet300", "vx300", "vs300")] == [1390] * 3, links
    assert "may raise" not in daemons["pve1"].log_since(marks["pve1"])
    plan = pve1.fabricd("plan", "-c", daemons["pve1"].path, "--grace", str(HOLD))
    assert "~ bridge vnet300: change (mtu 1390 -> 1450 with its VXLAN devices" in plan.stdout, plan
    assert guests[0].ping(guests[1], count=3, size=1390 - 28, df=True), "1390 during the hold"
    assert time.monotonic() - switched < HOLD, "the checks took longer than the hold"
    for name, d in daemons.items():
        d.wait_log("zone green: MTU 1390 -> 1450 (a transport switch's grace period ended",
                   since=marks[name], timeout=HOLD + 10)
    assert "may raise their MTU to 1450" in daemons["pve1"].log()
    wait_until(lambda: pve1.link("vnet300")["mtu"] == 1450, what="vnet300 back at MTU 1450")
    for g in guests:
        g.node.run(["ip", "link", "set", g.tap, "mtu", "1450"])
        g.run(["ip", "link", "set", "eth0", "mtu", "1450"])
    wait_until(lambda: guests[0].ping(guests[1], count=3, size=1450 - 28, df=True),
               timeout=10, what="1450 once plain sends")
    stop_daemons(daemons)


def drift_repairs(path):
    """{kind: count} of fabricd_drift_repairs_total in a metrics file ({} before it exists)."""
    if not os.path.exists(path):
        return {}
    return {m.group(1): int(m.group(2)) for m in re.finditer(
        r'^fabricd_drift_repairs_total\{kind="([^"]+)"\} (\d+)$', open(path).read(), re.M)}


def metered_pair(make_cluster, grace):
    """Two nodes (red plain, blue secure) under daemons; pve1's with a metrics file."""
    cluster = make_cluster(2)
    definition = cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)]),
                                           zone("blue", "secure", [("vnet200", 200)])])
    prom = f"{cluster.tmpdir}/pve1-drift.prom"
    daemons = start_daemons(cluster, definition, grace=grace, nodes=["pve2"])
    daemons.update(start_daemons(cluster, definition, grace=grace, nodes=["pve1"],
                                 extra_args=["--metrics-file", prom,
                                             "--metrics-file-interval", "1"]))
    return cluster, cluster.node("pve1"), prom, daemons


def test_a_stage_applied_by_a_retry_is_not_drift(make_cluster):
    """pve1 switches red to secure (grace 3 s); its underlay goes down before the grace
    ends, so the stage's pass fails and is retried once the underlay is back. What that
    retry does is the stage's (the plain device and its guard entry go), never drift:
    nothing logged as "(drift", nothing counted."""
    cluster, pve1, prom, daemons = metered_pair(make_cluster, grace=3)
    d = daemons["pve1"]
    try:
        wait_until(lambda: drift_repairs(prom), timeout=10, what="pve1's metrics file")
        before = drift_repairs(prom)
        mark = d.mark()
        d.set_transport("red", "secure")
        switched = time.monotonic()
        wait_until(lambda: pve1.link("vs100"), timeout=10, what="vs100 made")
        pve1.run(["ip", "link", "set", "eth0", "down"])
        try:
            d.wait_log("not converged; trying again", since=mark, timeout=20)
            time.sleep(max(0.0, switched + 5 - time.monotonic()))  # the stage falls due
            assert pve1.link("vx100"), "the stage went through with the underlay down"
        finally:
            pve1.run(["ip", "link", "set", "eth0", "up"])
        wait_until(lambda: not pve1.link("vx100"), timeout=40, what="vx100 gone after the grace")
        d.wait_log("converged again after", since=mark, timeout=20)
        log = d.log_since(mark)
        assert "(drift" not in log, log
        assert drift_repairs(prom) == before, f"{log}\n{drift_repairs(prom)} != {before}"
    finally:
        stop_daemons(daemons)


def test_a_stage_beside_unrelated_link_changes_is_not_drift(make_cluster):
    """blue switched secure -> plain (grace 2 s) while a guest's port (not fabricd's) goes
    down and up every 0.1 s, as VMs starting and stopping make it: the pass that ends the
    stage also answers those notifications. What it does for the stage (vx200 sends again,
    vs200 mute) is the stage's, never drift (until 2026-12-06 the whole pass was counted
    as drift repairs when kernel notifications came with it)."""
    cluster, pve1, prom, daemons = metered_pair(make_cluster, grace=2)
    d = daemons["pve1"]
    guest = cluster.add_guest(pve1, "vnet100", "10.1.0.1/24", name="flap1")
    try:
        wait_until(lambda: drift_repairs(prom), timeout=10, what="pve1's metrics file")
        before = drift_repairs(prom)
        mark = d.mark()
        d.set_transport("blue", "plain")
        end = time.monotonic() + 6
        while time.monotonic() < end:
            guest.run(["ip", "link", "set", "eth0", "down"])
            time.sleep(0.05)
            guest.run(["ip", "link", "set", "eth0", "up"])
            time.sleep(0.05)
        d.wait_log("vxlan vs200: mute", since=mark, timeout=10)
        time.sleep(1)
        log = d.log_since(mark)
        assert "vxlan vx200: sends" in log, log
        assert "(drift" not in log, log
        assert drift_repairs(prom) == before, f"{log}\n{drift_repairs(prom)} != {before}"
    finally:
        stop_daemons(daemons)
