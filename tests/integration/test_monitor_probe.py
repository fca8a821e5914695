# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: data-path probes find MTU black holes and cut VXLAN paths; the picture.

                      sw: br0  (port pve3: MTU lowered / VXLAN dropped here)
          +--------------+--------------+
        pve1           pve2           pve3        fabricd run on each, a probe round every ~1 s
   red  vnet100 vx100 (plain, MTU 1390)      guests on pve1 and pve3
   blue vnet200 vs200 (secure, MTU 1390)     guests on pve1 and pve3

The probes are what a guest's frames are: an Ethernet frame of the zone MTU
from the vnet bridge through VXLAN (and WireGuard for blue) to the peer's
bridge and back. Lowering the MTU of pve3's switch port to 1400 makes both
zones black holes between pve3 and the others; `status` must name the pair
and the largest size that passes, which must be what a guest can really send
(`ping -M do`). Dropping plain VXLAN to pve3 at the switch leaves WireGuard
alone (fresh handshakes) but cuts red: the probe must say so. Both clear
when the fault goes. `status --svg` draws every node and link.
"""

import base64
import json
import os
import re
import shutil
import time
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest

from fabtest import SimCluster, wait_until, zone
from fabtest.daemon import Daemon, stop_daemons

prometheus_parser = pytest.importorskip("prometheus_client.parser")

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

ZONE_MTU = 1390
LOWERED = 1400
PORT = 9464
UNWRITABLE = "/nonexistent-fabtest-dir/fabricd.prom"
REPORT_LIMIT = 30  # seconds, the bound for a report to appear or clear
SCRAPE = ("import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("
          "'http://127.0.0.1:%d/metrics', timeout=5).read().decode())" % PORT)


# What passes a 1400-byte port: the kernel forwards up to MTU + 4 (room for a VLAN
# tag), and WireGuard pads; the test does not guess, it checks the size found
# against a guest's own `ping -M do` in each zone.
PLAUSIBLE = range(LOWERED - 130, LOWERED - 50 + 4 + 1)


@pytest.fixture(scope="module")
def fabric(cluster_options):
    cluster = SimCluster(3, **cluster_options)
    try:
        definition = cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)]),
                                               zone("blue", "secure", [("vnet200", 200)])])
        daemons = {}
        for node in cluster.nodes:
            args = ["--probe-interval", "1", "--probe-file", f"{cluster.tmpdir}/{node.name}/probe.json"]
            if node.name == "pve1":
                args += ["--metrics", f"127.0.0.1:{PORT}"]
            if node.name == "pve2":  # an error path: the daemon warns once and goes on
                args += ["--metrics-file", UNWRITABLE, "--metrics-file-interval", "1"]
            daemons[node.name] = Daemon(cluster, node, grace=3, extra_args=args)
            daemons[node.name].write(definition)
        for d in daemons.values():
            d.start(wait_ready=False)
        for d in daemons.values():
            d.wait_notify("READY=1", timeout=20)
        guests = {}
        for bridge, prefix in (("vnet100", "10.1.0"), ("vnet200", "10.2.0")):
            guests[bridge] = (cluster.add_guest("pve1", bridge, f"{prefix}.1/24"),
                              cluster.add_guest("pve3", bridge, f"{prefix}.3/24"))
        for a, b in guests.values():
            wait_until(lambda: a.ping(b), timeout=25, what=f"{a.name} -> {b.name}")
        yield SimpleNamespace(cluster=cluster, definition=definition, daemons=daemons,
                              guests=guests)
        stop_daemons(daemons)
    finally:
        cluster.close()


def status(fabric, node="pve1", *args):
    n = fabric.cluster.node(node)
    d = fabric.daemons[node]
    res = n.fabricd("status", "-c", d.path, "--probe-file", f"{d.dir}/probe.json", *args)
    assert res.rc == 0, res
    return res.stdout


def probes(fabric, node="pve1"):
    """{(peer, zone): result} from `status --json`."""
    j = json.loads(status(fabric, node, "--json"))
    assert j["probes"] is not None, "no probe results yet"
    assert not j["probes"]["stale"]
    return {(r["peer"], r["zone"]): r for r in j["probes"]["results"]}


def all_healthy(fabric, node="pve1"):
    got = probes(fabric, node)
    peers = [n.name for n in fabric.cluster.nodes if n.name != node]
    for peer in peers:
        for z in ("red", "blue"):
            r = got.get((peer, z))
            assert r is not None, f"no probe {node} -> {peer} in {z}: {sorted(got)}"
            assert r["reachable"] and not r["black_hole"], r
            assert r["largest"] == ZONE_MTU and r["mtu"] == ZONE_MTU, r
    return got


def scrape(fabric):
    text = fabric.cluster.node("pve1").run(["/usr/bin/python3", "-c", SCRAPE]).stdout
    samples = {}
    for fam in prometheus_parser.text_string_to_metric_families(text):
        for s in fam.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples


def probe_metric(samples, name, peer, zone_name, transport):
    return samples.get((name, frozenset({"peer": peer, "zone": zone_name,
                                         "transport": transport}.items())))


def test_healthy_paths_pass_at_the_zone_mtu_quietly(fabric):
    wait_until(lambda: all_healthy(fabric), timeout=REPORT_LIMIT, interval=0.5,
               what="every probe from pve1 passes at the zone MTU")
    # every node's: a node's first rounds may find a peer not yet reachable (its first
    # WireGuard handshake can take 5 s, README), and its "pass again" must come before
    # the quiet window below
    for node in ("pve2", "pve3"):
        wait_until(lambda: all_healthy(fabric, node), timeout=10, interval=0.5,
                   what=f"every probe from {node} passes")
    text = status(fabric)
    assert "pve1 -> pve2, zone red (plain): ok, 1390-byte frames pass" in text, text
    # round trips as a person reads them (was 0.13699999999999998: 17 digits)
    rtts = re.findall(r'"rtt_ms": ([0-9.e+-]+)', status(fabric, "pve1", "--json"))
    assert rtts and all(len(r.replace(".", "").lstrip("0")) <= 6 for r in rtts), rtts
    assert "pve1 -> pve3, zone blue (secure): ok" in text, text
    # the metrics take the probe results on their next refresh (once a second)
    def metrics_agree():
        samples = scrape(fabric)
        return (probe_metric(samples, "fabricd_probe_reachable", "pve3", "blue",
                             "secure") == 1 and
                probe_metric(samples, "fabricd_probe_largest_passing_bytes", "pve2", "red",
                             "plain") == ZONE_MTU)
    wait_until(metrics_agree, timeout=5, interval=0.5,
               what="the metrics show the healthy probes status showed")
    # a healthy path is quiet: no probe line once every path is healthy (the
    # first rounds may log "no reply" while a peer's daemon is still starting)
    logged = {name: len(d.log()) for name, d in fabric.daemons.items()}
    time.sleep(3)  # three probe rounds at --probe-interval 1: a bounded quiet window
    for name, d in fabric.daemons.items():
        assert "probe " not in d.log()[logged[name]:], d.log()


def test_svg_names_every_node_and_link(fabric):
    wait_until(lambda: all_healthy(fabric), timeout=REPORT_LIMIT, interval=0.5)
    dot = status(fabric, "pve1", "--dot")
    assert dot.startswith('graph "fabtest" {'), dot
    svg = status(fabric, "pve1", "--svg")
    root = ET.fromstring(svg)
    ns = {"svg": "http://www.w3.org/2000/svg"}
    titles = {t.text for t in root.iter("{http://www.w3.org/2000/svg}title")}
    for name in ("pve1", "pve2", "pve3", "zones legend"):
        assert name in titles, titles
    for link in ("pve1--pve2", "pve1--pve3", "pve2--pve3"):
        assert link in titles, titles
    edges = {g.find("svg:title", ns).text: g for g in root.iter("{http://www.w3.org/2000/svg}g")
             if g.get("class") == "edge"}
    # pve1's own links are measured (green), the others not seen from pve1 (grey)
    assert 'stroke="forestgreen"' in ET.tostring(edges["pve1--pve3"]).decode()
    assert "not seen from pve1" in "".join(edges["pve2--pve3"].itertext())
    text = "".join(root.itertext())
    assert "red: plain, MTU 1390, vnets vnet100" in text, text
    assert "blue: secure, MTU 1390, vnets vnet200" in text, text


def test_svg_without_graphviz_says_what_to_do(fabric):
    pve1, d = fabric.cluster.node("pve1"), fabric.daemons["pve1"]
    bin_dir = f"{fabric.cluster.tmpdir}/no-graphviz"  # wireguard-go only, no dot
    os.makedirs(bin_dir, exist_ok=True)
    if shutil.which("wireguard-go") and not os.path.exists(f"{bin_dir}/wireguard-go"):
        os.symlink(shutil.which("wireguard-go"), f"{bin_dir}/wireguard-go")
    res = pve1.run(["env", f"PATH={bin_dir}", fabric.cluster.fabricd_bin, "status", "-c",
                    d.path, "-n", "pve1", "--wg-backend", fabric.cluster.wg_backend, "--svg"],
                   check=False)
    assert res.returncode == 1, res
    assert "Graphviz's dot is not installed: install graphviz, or use --dot" in res.stderr, res


def test_unwritable_metrics_file_is_reported_once(fabric):
    d2 = fabric.daemons["pve2"]
    wait_until(lambda: f"metrics: cannot write {UNWRITABLE}" in d2.log(), timeout=5)
    time.sleep(2.5)  # two more refreshes (input of the test): they must not log again
    assert d2.log().count("metrics: cannot write") == 1, d2.log()
    assert d2.running()


def test_a_probe_file_run_did_not_write_is_named(fabric):
    """status given a --probe-file that is not run's results says so, with what to do (it said
    only "probes: none", as for a daemon that does not probe); the real file is shown."""
    n = fabric.cluster.node("pve1")
    d = fabric.daemons["pve1"]
    wrong = f"{d.dir}/wrong-probe.json"
    todo = "not the probe results `fabricd run` writes: give the --probe-file that run writes"
    for text, what in (('{"probes": [', f"{wrong}:2:0: "),
                       ('{"probes": [], "probes": []}', "duplicate object key"),
                       ('{"updated": 1}', f'{wrong}: no "probes" array: ')):
        with open(wrong, "w") as f:
            f.write(text + "\n")
        res = n.fabricd("status", "-c", d.path, "--probe-file", wrong)
        assert res.rc == 0 and "probes: none" in res.stdout, res
        assert what in res.stderr and todo in res.stderr, res.stderr
    os.unlink(wrong)
    res = n.fabricd("status", "-c", d.path, "--probe-file", wrong)
    assert res.rc == 0 and "probe" not in res.stderr, res.stderr  # no file: not an error
    # a directory is said to be one (until 2026-12-07: "or remove this file")
    os.mkdir(wrong)
    res = n.fabricd("status", "-c", d.path, "--probe-file", wrong)
    os.rmdir(wrong)
    assert res.rc == 0 and "probes: none" in res.stdout, res
    assert f"{wrong}: a directory, not the probe results" in res.stderr, res.stderr
    assert "give the --probe-file that run writes (a file; /run/fabricd/probe.net" in res.stderr
    assert "remove this file" not in res.stderr, res.stderr
    wait_until(lambda: "probes (by fabricd run" in status(fabric), timeout=10)
    res = n.fabricd("status", "-c", d.path, "--probe-file", f"{d.dir}/probe.json")
    assert "probe" not in res.stderr, res.stderr


def set_port_mtu(fabric, mtu):
    fabric.cluster.switch.run(["ip", "link", "set", "pve3", "mtu", str(mtu)])


def test_mtu_black_hole_reported_with_the_size_that_passes(fabric):
    wait_until(lambda: all_healthy(fabric), timeout=REPORT_LIMIT, interval=0.5)
    d1 = fabric.daemons["pve1"]
    mark = d1.mark()
    set_port_mtu(fabric, LOWERED)
    try:
        def reported():
            got = probes(fabric)
            for z in ("red", "blue"):
                r = got[("pve3", z)]
                assert r["reachable"] and r["black_hole"] and r["largest"] in PLAUSIBLE, r
                assert r["mtu"] == ZONE_MTU
            assert not got[("pve2", "red")]["black_hole"] and not got[("pve2", "blue")]["black_hole"]
            return got
        got = wait_until(reported, timeout=REPORT_LIMIT, interval=0.5, what="black hole in status")
        passes = {z: got[("pve3", z)]["largest"] for z in ("red", "blue")}
        text = status(fabric)
        for z, transport in (("red", "plain"), ("blue", "secure")):
            assert (f"pve1 -> pve3, zone {z} ({transport}): MTU BLACK HOLE: {ZONE_MTU}-byte "
                    f"frames are lost, {passes[z]} bytes pass") in text, text
        assert "pve1 -> pve2, zone red (plain): ok" in text, text

        def in_metrics():  # the snapshot is at most a second behind the probe file
            samples = scrape(fabric)
            for z, transport in (("red", "plain"), ("blue", "secure")):
                assert probe_metric(samples, "fabricd_probe_mtu_black_hole", "pve3", z,
                                    transport) == 1
                assert probe_metric(samples, "fabricd_probe_largest_passing_bytes", "pve3", z,
                                    transport) == passes[z]
            assert probe_metric(samples, "fabricd_probe_mtu_black_hole", "pve2", "red",
                                "plain") == 0
            return True
        wait_until(in_metrics, timeout=5, interval=0.3, what="black hole in the metrics")
        # the size found is what a guest can really send (IPv4 ping: size + 28), not a byte more
        for bridge, z in (("vnet100", "red"), ("vnet200", "blue")):
            a, b = fabric.guests[bridge]
            assert a.ping(b, size=passes[z] - 28, df=True, count=2), f"{z}: {passes[z]} lost"
            assert not a.ping(b, size=passes[z] - 27, df=True, count=2), f"{z}: {passes[z] + 1} passed"
        print(f"\nport MTU {LOWERED}: red passes {passes['red']}, blue passes {passes['blue']}")
        log = d1.wait_log("MTU black hole", since=mark, timeout=5)
        assert log.count("probe pve1 -> pve3, zone red (plain): MTU black hole") == 1, log
    finally:
        set_port_mtu(fabric, 1500)
    wait_until(lambda: all_healthy(fabric), timeout=REPORT_LIMIT, interval=0.5,
               what="the black hole report clears")
    d1.wait_log("probe pve1 -> pve3, zone red (plain): frames of 1390 bytes pass again",
                since=mark, timeout=5)


def test_cut_vxlan_path_reported_while_handshakes_stay_fresh(fabric):
    wait_until(lambda: all_healthy(fabric), timeout=REPORT_LIMIT, interval=0.5)
    sw = fabric.cluster.switch
    pve1, pve3 = fabric.cluster.node("pve1"), fabric.cluster.node("pve3")
    sw.run(["nft", "-f", "-"], input=(
        "table bridge fabtest_cut {\n"
        "  chain forward { type filter hook forward priority 0;\n"
        f"    ip saddr {pve3.underlay} udp dport 4789 drop\n"
        f"    ip daddr {pve3.underlay} udp dport 4789 drop\n"
        "  }\n}\n"))
    try:
        def reported():
            got = probes(fabric)
            red, blue = got[("pve3", "red")], got[("pve3", "blue")]
            assert not red["reachable"], red
            assert blue["reachable"] and not blue["black_hole"], blue
            assert got[("pve2", "red")]["reachable"]
            return got
        wait_until(reported, timeout=REPORT_LIMIT, interval=0.5, what="cut path in status")
        assert "pve1 -> pve3, zone red (plain): UNREACHABLE" in status(fabric)
        peer = pve1.wg_dump().peers[pve3.public_key]
        assert 0 < time.time() - peer.latest_handshake < 180, "the WireGuard session is not fresh"

        def in_metrics():  # the snapshot is at most a second behind the probe file
            samples = scrape(fabric)
            assert probe_metric(samples, "fabricd_probe_reachable", "pve3", "red", "plain") == 0
            assert probe_metric(samples, "fabricd_probe_reachable", "pve3", "blue", "secure") == 1
            hs = samples[("fabricd_peer_latest_handshake_timestamp_seconds",
                          frozenset({("peer", "pve3")}))]
            assert time.time() - hs < 180, hs
            return True
        wait_until(in_metrics, timeout=5, interval=0.3, what="cut path in the metrics")
        fabric.daemons["pve1"].wait_log("probe pve1 -> pve3, zone red (plain): no reply",
                                        timeout=5)
    finally:
        sw.run(["nft", "delete", "table", "bridge", "fabtest_cut"])
    wait_until(lambda: all_healthy(fabric), timeout=REPORT_LIMIT, interval=0.5,
               what="the cut path report clears")


def test_a_round_asks_every_zone_at_once(fabric):
    """A peer that answers no probe costs its timeouts once a round, not once a zone.

    Eight zones and pve3's daemon stopped (its fabric stays, so WireGuard and
    VXLAN still carry the frames, but nothing answers): every zone reports pve3
    unreachable, and pve1 checked all eight within a few seconds of each other.
    Measured zone after zone, each zone's unanswered probes took 4 s (the full
    size twice, then a small one twice, a second each), 28 s from first to last.
    """
    extra = [zone(f"z{i}", "secure" if i % 2 else "plain", [(f"vnet3{i}", 300 + i)])
             for i in range(6)]
    names = ["red", "blue"] + [f"z{i}" for i in range(6)]
    wider = fabric.cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)]),
                                             zone("blue", "secure", [("vnet200", 200)]),
                                             *extra])
    pve3 = fabric.daemons["pve3"]
    try:
        for d in fabric.daemons.values():
            d.write(wider)

        def every_zone(reachable):
            got = probes(fabric)
            for z in names:
                r = got.get(("pve3", z))
                assert r is not None and r["reachable"] == reachable, (z, r)
                assert got[("pve2", z)]["reachable"], got[("pve2", z)]
            return got
        wait_until(lambda: every_zone(True), timeout=REPORT_LIMIT, interval=0.5,
                   what="eight zones healthy")
        pve3.stop()
        got = wait_until(lambda: every_zone(False), timeout=REPORT_LIMIT, interval=0.5,
                         what="pve3 unreachable in every zone")
        checked = [got[("pve3", z)]["checked_at"] for z in names]
        assert max(checked) - min(checked) <= 3, f"zone by zone: checked at {checked}"
    finally:
        for d in fabric.daemons.values():
            d.write(fabric.definition)
        if not pve3.running():
            pve3.start()
    wait_until(lambda: all_healthy(fabric), timeout=REPORT_LIMIT, interval=0.5,
               what="pve3 answers again")


def test_default_probe_file_is_each_node_s(make_cluster):
    """Without --probe-file each node (network namespace) has its own file, as its node
    lock: daemons of simulated nodes on one host do not overwrite each other's results,
    and `status` finds its node's without being told where."""
    cluster = make_cluster(2)
    definition = cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])])
    daemons = {}
    try:
        for node in cluster.nodes:
            daemons[node.name] = Daemon(cluster, node, grace=3,
                                        extra_args=["--probe-interval", "1"])
            daemons[node.name].write(definition)
            daemons[node.name].start()

        def own(node):
            res = node.fabricd("status", "--json", "-c", daemons[node.name].path)
            probes = json.loads(res.stdout)["probes"] if res.rc == 0 else None
            return probes and probes["results"] and probes

        for node in cluster.nodes:
            got = wait_until(lambda: own(node), timeout=20, what=f"{node.name}'s probe results")
            ino = os.stat(f"/run/netns/{node.ns}").st_ino
            assert got["file"] == f"/run/fabricd/probe.net{ino}.json", got
            assert {r["peer"] for r in got["results"]} == {
                n.name for n in cluster.nodes if n is not node}, got
            assert not got["stale"], got
        # a daemon that stopped leaves its results marked: stale at once, not after a minute
        stop_daemons(daemons)
        for node in cluster.nodes:
            got = own(node)
            assert got and got["stale"], got
        # down takes them away with the fabric: they showed paths that are gone as "ok"
        pve1 = cluster.node("pve1")
        assert pve1.fabricd("down", "-c", daemons["pve1"].path).rc == 0
        assert not os.path.exists(
            f"/run/fabricd/probe.net{os.stat(f'/run/netns/{pve1.ns}').st_ino}.json")
        res = pve1.fabricd("status", "-c", daemons["pve1"].path)
        assert res.rc == 0 and "probes: none" in res.stdout, res
        assert own(cluster.node("pve2")), "pve2's results went with pve1's down"
        # a daemon started without probes renews nothing: the stopped one's results go (a
        # running daemon's status said STALE: "is it still running?")
        pve2 = cluster.node("pve2")
        quiet = Daemon(cluster, pve2, grace=3, extra_args=["--probe-interval", "0"])
        quiet.write(definition)
        quiet.start()
        try:
            res = pve2.fabricd("status", "-c", quiet.path)
            assert res.rc == 0 and "probes: none" in res.stdout and "STALE" not in res.stdout, \
                res
        finally:
            quiet.stop()
        # only this node's results go: a --probe-file that holds anything else stays
        notes = f"{cluster.tmpdir}/operator-notes.txt"
        with open(notes, "w") as f:
            f.write("not fabricd's\n")
        quiet = Daemon(cluster, pve2, grace=3, extra_args=["--probe-interval", "0",
                                                           "--probe-file", notes])
        quiet.write(definition)
        quiet.start()
        quiet.stop()
        assert open(notes).read() == "not fabricd's\n"
    finally:
        stop_daemons(daemons)


def test_results_it_cannot_write_are_not_shown_as_current(make_cluster):
    """The probe file's file system full: the daemon removes the last round's results
    (status showed them as this round's, "ok" for a path cut since), says so once, and
    writes them again, saying so, once there is room."""
    cluster = make_cluster(2)
    pve1 = cluster.node("pve1")
    room = f"{cluster.tmpdir}/probe-room"
    os.makedirs(room)
    # in pve1's mount namespace, where its daemon and status run
    pve1.run(["mount", "-t", "tmpfs", "-o", "size=64k", "fabtest-probe", room])
    definition = cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])])
    daemons = {}
    try:
        for node in cluster.nodes:
            args = ["--probe-interval", "1"]
            if node is pve1:
                args += ["--probe-file", f"{room}/probe.json"]
            daemons[node.name] = Daemon(cluster, node, grace=3, extra_args=args)
            daemons[node.name].write(definition)
            daemons[node.name].start()
        d = daemons["pve1"]

        def shown():
            res = pve1.fabricd("status", "--json", "-c", d.path, "--probe-file",
                               f"{room}/probe.json")
            assert res.rc == 0, res
            return json.loads(res.stdout)["probes"]

        wait_until(lambda: shown() and shown()["results"], timeout=20, what="pve1's results")
        mark = d.mark()
        pve1.run(["sh", "-c", f"dd if=/dev/zero of={room}/fill bs=1k count=100 2>/dev/null; true"])
        d.wait_log("probe: cannot write", since=mark, timeout=10)
        assert shown() is None
        text = pve1.fabricd("status", "-c", d.path, "--probe-file", f"{room}/probe.json")
        assert "probes: none" in text.stdout and "cannot write it" in text.stdout, text
        time.sleep(2.5)  # more rounds: said once
        assert d.log_since(mark).count("probe: cannot write") == 1, d.log_since(mark)
        pve1.run(["rm", f"{room}/fill"])
        d.wait_log("probe: " + f"{room}/probe.json written again", since=mark, timeout=10)
        wait_until(lambda: shown() and shown()["results"] and not shown()["stale"],
                   timeout=10, what="pve1's results again")
    finally:
        stop_daemons(daemons)
        pve1.run(["umount", room], check=False)


def probing_daemons(cluster, definition, grace, interval):
    """A daemon on every node with probes every interval s into TMPDIR/NODE.probe."""
    daemons = {}
    for node in cluster.nodes:
        daemons[node.name] = Daemon(cluster, node, grace=grace, extra_args=[
            "--probe-interval", str(interval), "--probe-file",
            f"{cluster.tmpdir}/{node.name}.probe"])
        daemons[node.name].write(definition)
        daemons[node.name].start()
    return daemons


def zone_probe(cluster, daemon, zone_name):
    """The first probe result of zone_name in status --json on daemon's node, or None."""
    node = daemon.node
    res = node.fabricd("status", "--json", "-c", daemon.path, "--probe-file",
                       f"{cluster.tmpdir}/{node.name}.probe")
    probes = json.loads(res.stdout)["probes"] if res.rc == 0 else None
    results = [r for r in (probes or {}).get("results", []) if r["zone"] == zone_name]
    return results[0] if results else None


def switch_measured_zone(cluster, daemon, old, new):
    """Zone red measured reachable over old on daemon's node, then switched to new there:
    its probe (a function) and the monotonic time of the switch."""
    def red_probe():
        return zone_probe(cluster, daemon, "red")

    first = wait_until(red_probe, timeout=20, what="red measured")
    assert first["transport"] == old and first["reachable"], first
    assert daemon.set_transport("red", new).returncode == 0
    switched = time.monotonic()
    daemon.wait_log(f"zone red: transport {old} -> {new}", timeout=10)
    return red_probe, switched


def test_probe_names_the_transport_that_carries_the_frames(make_cluster):
    """A switch back to plain holds: the secure device sends until the grace period
    ends. The probe of that time measures the secure path and says so; once the hold
    ends it measures the plain path afresh (here pve2 never followed: it is cut)."""
    cluster = make_cluster(2)
    secure = cluster.definition(zones=[zone("red", "secure", [("vnet100", 100)])])
    daemons = {}
    try:
        daemons = probing_daemons(cluster, secure, grace=6, interval=1)
        red_probe, t0 = switch_measured_zone(cluster, daemons["pve1"], "secure", "plain")
        switched = int(time.time())
        held = wait_until(lambda: (r := red_probe()) and r["checked_at"] > switched and r,
                          timeout=4, what="a probe during the hold")
        assert time.monotonic() - t0 < 6, "the hold ended before a probe came"
        assert held["transport"] == "secure" and held["reachable"], held
        cut = wait_until(lambda: (r := red_probe()) and r["transport"] == "plain" and r,
                         timeout=20, what="the plain path measured after the hold")
        assert not cut["reachable"], f"pve2 stayed secure, the plain path is cut: {cut}"
    finally:
        stop_daemons(daemons)


def test_the_end_of_a_grace_period_is_measured_at_once(make_cluster):
    """pve1 switches red to secure, pve2 never does: pve2's plain frames reach pve1 until
    its grace period ends and its plain device goes. That path is measured then, not at
    the next round (10 s here), which status showed as ok meanwhile; nor is the old result
    shown while that round runs (a round with a peer that does not answer takes seconds)."""
    cluster = make_cluster(2)
    pve1 = cluster.node("pve1")
    plain = cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])])
    daemons = {}
    try:
        daemons = probing_daemons(cluster, plain, grace=4, interval=10)
        red_probe, _ = switch_measured_zone(cluster, daemons["pve1"], "plain", "secure")
        # the new transport measured at once too: pve2's standby takes it, pve2 answers plain
        during = wait_until(lambda: (r := red_probe()) and r["transport"] == "secure" and r,
                            timeout=6, what="the secure path measured at the switch")
        assert during["reachable"], during
        wait_until(lambda: "vx100" not in pve1.links(), timeout=10, what="pve1's grace ends")
        gone = time.monotonic()
        shown_as_ok = []

        def measured_cut():
            r = red_probe()
            if r and r["reachable"] and time.monotonic() - gone > 1:
                shown_as_ok.append(r)  # the result of before, the daemon's pass long done
            return r and not r["reachable"] and r
        cut = wait_until(measured_cut, timeout=8, interval=0.2,
                         what="the cut path measured when the grace ended")
        assert time.monotonic() - gone < 6, cut
        assert not shown_as_ok, f"status showed the path as ok after the grace ended: {shown_as_ok}"
    finally:
        stop_daemons(daemons)


def test_a_changed_path_leaves_the_file_while_a_round_runs(make_cluster):
    """pve3's daemon stopped: it answers no probe, so each round of pve1's waits seconds for
    it. Zone red's MTU changes meanwhile: its old results (at the old MTU) leave the state
    file at once, not when the round under way ends (until 2026-12-06: up to 5 s)."""
    cluster = make_cluster(3)
    definition = cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)]),
                                           zone("blue", "plain", [("vnet200", 200)])])
    daemons = {}
    try:
        daemons = probing_daemons(cluster, definition, grace=3, interval=1)
        d = daemons["pve1"]
        wait_until(lambda: zone_probe(cluster, d, "red"), timeout=20, what="red measured")
        daemons["pve3"].stop()
        time.sleep(3)  # rounds that wait for pve3 now
        lowered = json.loads(json.dumps(definition))
        lowered["zones"][0]["mtu"] = 1300
        mark = d.mark()
        d.write(lowered)
        d.wait_log("zone red: MTU 1390 -> 1300", since=mark, timeout=10)
        changed = time.monotonic()
        path = f"{cluster.tmpdir}/pve1.probe"
        old = []
        while time.monotonic() - changed < 5:
            with open(path) as f:
                results = json.load(f)["probes"]
            if time.monotonic() - changed > 0.5:
                old += [r for r in results if r["zone"] == "red" and r["mtu"] == 1390]
            time.sleep(0.1)
        assert not old, f"red's results at the old MTU still in the file: {old[:2]}"
        assert [r for r in results if r["zone"] == "blue"], f"blue's results went: {results}"
    finally:
        stop_daemons(daemons)


SILENT_PEERS = 16


def test_peers_that_do_not_answer_cost_one_broadcast_a_zone(make_cluster):
    """Peers whose MAC the probe does not know (they never answered: down, cut off)
    are asked small by one broadcast a zone, not one each: every broadcast goes to
    each remote of the zone's VXLAN device (head-end replication), so one a peer cost
    2 x P x P frames a zone and round (node n1 of the control-plane bench, whose 63
    peers do not exist: 8,100 frames a second). With P silent peers a round now sends
    2 broadcasts at the zone MTU and 2 small ones, P copies each."""
    cluster = make_cluster(1)
    pve1 = cluster.nodes[0]
    definition = cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])])
    for i in range(SILENT_PEERS):
        definition["nodes"].append({
            "name": f"silent{i}", "underlay": f"192.0.2.{200 + i}",
            "fabric_address": f"10.255.0.{200 + i}",
            "public_key": base64.b64encode(bytes([i + 1]) * 32).decode()})
    probe_file = f"{cluster.tmpdir}/pve1.probe"
    d = Daemon(cluster, pve1, extra_args=["--probe-interval", "0.5", "--probe-file", probe_file])
    d.write(definition)
    d.start()

    def sent():
        link = json.loads(pve1.run(["ip", "-s", "-j", "link", "show", "vx100"]).stdout)[0]
        return link["stats64"]["tx"]["packets"]

    def updated():
        return os.path.exists(probe_file) and os.stat(probe_file).st_ino

    try:
        wait_until(updated, timeout=20, what="a first probe round")
        last = updated()  # the next round starts with every peer measured once
        wait_until(lambda: updated() != last, timeout=20, what="a probe round")
        rounds, before, last = 2, sent(), updated()
        for _ in range(rounds):
            wait_until(lambda: updated() != last, timeout=20, what="a probe round")
            last = updated()
        per_round = (sent() - before) / rounds
        with open(probe_file) as f:
            results = json.load(f)["probes"]
        assert len(results) == SILENT_PEERS and not any(r["reachable"] for r in results)
        print(f"{SILENT_PEERS} silent peers: {per_round:.0f} VXLAN frames a round")
        # 4 requests a round, a copy to each remote: 64; one small request a peer: 544
        assert per_round <= 6 * SILENT_PEERS, f"{per_round:.0f} frames a round"
    finally:
        d.stop()
