# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: `fabricd run` follows its definition file, and survives bad ones.

                 sw: br0
          +---------+---------+
        pve1                 pve2        fabricd run on both, each on its own copy
   red  vnet100 p1 ------- p2 (plain)
   blue vnet200 s1 ------- s2 (secure)

A definition written while the daemon runs is applied when it is valid and
reported (each problem once, with its JSON path) and ignored when it is not:
half-written, invalid, gone, or without this node. The last good state stays
in force: no kernel object changes and the guests' pings go on. A fixed file
is applied. SIGHUP re-reads the file; a start with a bad file fails.
"""

import fcntl
import json
import os
import signal
import time
from types import SimpleNamespace

import pytest

from fabtest import SimCluster, stays_true, wait_until, zone
from fabtest.cluster import node_lock_path
from fabtest.daemon import Daemon, start_daemons, stop_daemons, wait_guests_ping
from fabtest.pinger import Pingers, all_pairs

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

KEPT = "the last good definition stays in force"


def zones(extra_vnet=False, blue_vni=200):
    red = [("vnet100", 100)] + ([("vnet102", 102)] if extra_vnet else [])
    return [zone("red", "plain", red), zone("blue", "secure", [("vnet200", blue_vni)])]


@pytest.fixture(scope="module")
def fabric(cluster_options):
    cluster = SimCluster(2, **cluster_options)
    try:
        definition = cluster.definition(zones=zones())
        daemons = start_daemons(cluster, definition, grace=3)
        guests = {}
        for bridge, prefix, tag in (("vnet100", "10.1.0", "p"), ("vnet200", "10.2.0", "s")):
            guests[bridge] = [cluster.add_guest(n, bridge, f"{prefix}.{n.index}/24",
                                                name=f"{tag}{n.index}") for n in cluster.nodes]
        wait_guests_ping(guests.values(), daemons)
        yield SimpleNamespace(cluster=cluster, definition=definition, daemons=daemons,
                              guests=guests)
        stop_daemons(daemons)
    finally:
        cluster.close()


def kernel_state(node):
    """What must not change while a bad definition is around."""
    dump = node.wg_dump()
    return (node.ifindexes(),
            {dev: node.fdb_remotes(dev) for dev in ("vx100", "vs200")},
            {k: (p.endpoint, p.allowed_ips, p.keepalive) for k, p in dump.peers.items()},
            node.addresses("wgfab0"))


def pingers_for(fabric, seconds):
    pairs = all_pairs(fabric.guests["vnet100"]) + all_pairs(fabric.guests["vnet200"])
    return Pingers.between(fabric.cluster, pairs, seconds=seconds).start()


def wait_report(daemon, mark, *parts):
    """The log since mark once it holds KEPT and every one of parts: the daemon writes the
    line that keeps the last good definition and the problems under it one after the other."""
    def complete():
        log = daemon.log_since(mark)
        return log if KEPT in log and all(p in log for p in parts) else None
    return wait_until(complete, timeout=10, interval=0.05,
                      what=f"{daemon.node.name}: {KEPT!r} with {parts!r}")


def test_broken_definitions_change_nothing_until_fixed(fabric):
    cluster = fabric.cluster
    pve1 = cluster["pve1"]
    d1 = fabric.daemons["pve1"]
    good = json.dumps(fabric.definition, indent=2) + "\n"
    before = kernel_state(pve1)
    pingers = pingers_for(fabric, 8)

    # 1. half-written, in place (not by rename): reported, ignored
    mark = d1.mark()
    d1.write_raw(good[: len(good) // 2])
    log = wait_report(d1, mark, "invalid JSON")
    assert d1.path in log, log
    wait_until(lambda: "not valid" in (d1.status() or ""), timeout=3, what="STATUS says so")

    # 2. the same broken text saved again: not reported again (renamed into place: written
    # in place, a slow machine's daemon may read the emptied file between, another problem)
    with open(d1.path + ".tmp", "w") as f:
        f.write(good[: len(good) // 2])
    os.replace(d1.path + ".tmp", d1.path)
    # the inotify event and the periodic check (500 ms) both get their chance
    stays_true(lambda: d1.log_since(mark).count(KEPT) == 1, 1.2,
               what="the same broken file is reported once")

    # 3. valid JSON, invalid definition (a VNI used twice): each problem with its path
    mark = d1.mark()
    d1.write(cluster.definition(zones=zones(blue_vni=100)))
    log = wait_report(d1, mark, "vni", "zones[")
    assert kernel_state(pve1) == before, "a broken definition changed the kernel"

    # 4. this node left out: refused too (taking a node out is `fabricd down`'s job)
    mark = d1.mark()
    d1.write(cluster.definition(zones=zones(), nodes=["pve2"]))
    log = wait_report(d1, mark, "pve1", "fabricd down")

    # 5. the file gone: reported, nothing removed
    mark = d1.mark()
    os.unlink(d1.path)
    log = wait_report(d1, mark, "cannot open")
    assert kernel_state(pve1) == before

    # 6. fixed, with a change: applied
    mark = d1.mark()
    d1.write(cluster.definition(zones=zones(extra_vnet=True)))
    log = d1.wait_log("vnet vnet102: added to zone red, vni 102 (definition changed)", since=mark)
    wait_until(lambda: pve1.link("vx102") is not None, timeout=3, what="vx102 on pve1")
    wait_until(lambda: "not valid" not in (d1.status() or ""), timeout=3)
    assert "error" not in d1.log_since(mark), d1.log_since(mark)

    pingers.assert_no_loss("while broken definitions came and went")
    # vnet102 is plain: its bridge, vx102 and the standby vs102 are new, nothing else
    assert {k: v for k, v in pve1.ifindexes().items()
            if k not in ("vnet102", "vx102", "vs102")} == before[0]

    # back to the module's definition
    mark = d1.mark()
    d1.write(fabric.definition)
    d1.wait_log("vnet vnet102: removed from zone red", since=mark)
    wait_until(lambda: pve1.link("vnet102") is None, timeout=3)


def test_sighup_rereads_the_definition(fabric):
    d2 = fabric.daemons["pve2"]
    mark = d2.mark()
    n_ready = sum("READY=1" in m.split("\n") for m in d2.notifications())
    d2.send_signal(signal.SIGHUP)
    d2.wait_notify("RELOADING=1")
    wait_until(lambda: sum("READY=1" in m.split("\n") for m in d2.notifications()) > n_ready,
               timeout=5, what="READY=1 after SIGHUP")
    log = d2.wait_log("reloaded, no change", since=mark)
    assert f"pve2: reloading {d2.path} (SIGHUP)" in log, log


def test_a_reload_is_ready_only_once_it_was_read(fabric):
    """SIGHUP while an apply holds the node: the daemon's pass waits for the lock, and so
    does READY=1 (it came at once, before the file was read; `systemctl reload` returned
    with the reload still to come)."""
    d2 = fabric.daemons["pve2"]

    def count(line):
        return sum(line in m.split("\n") for m in d2.notifications())

    n_ready, n_reloading = count("READY=1"), count("RELOADING=1")
    mark = d2.mark()
    os.makedirs("/run/fabricd", exist_ok=True)
    with open(node_lock_path(os.stat(f"/run/netns/{d2.node.ns}").st_ino), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        d2.send_signal(signal.SIGHUP)
        wait_until(lambda: count("RELOADING=1") > n_reloading, timeout=5, what="RELOADING=1")
        stays_true(lambda: count("READY=1") == n_ready, 0.6,
                   what="no READY=1 while the reload waits for the node")
        assert "reloaded" not in d2.log_since(mark)
    wait_until(lambda: count("READY=1") > n_ready, timeout=5, what="READY=1 after the reload")
    assert "reloaded, no change" in d2.log_since(mark)


def test_rename_replacement_is_noticed(fabric):
    """Editors and cluster file systems write a new file and rename it over the old one."""
    cluster = fabric.cluster
    pve2 = cluster["pve2"]
    d2 = fabric.daemons["pve2"]
    mark = d2.mark()
    text = json.dumps(cluster.definition(zones=zones(extra_vnet=True)), indent=2)
    tmp = f"{d2.dir}/.cluster.json.swp"
    with open(tmp, "w") as f:
        f.write(text)
    start = time.monotonic()
    os.rename(tmp, d2.path)
    wait_until(lambda: pve2.link("vx102") is not None, timeout=3, interval=0.02)
    print(f"\nrename noticed and applied in {(time.monotonic() - start) * 1000:.0f} ms")
    assert "(definition changed)" in d2.log_since(mark)
    d2.write(fabric.definition)
    wait_until(lambda: pve2.link("vx102") is None, timeout=3)


def test_start_with_a_broken_definition_fails(fabric):
    cluster = fabric.cluster
    d = Daemon(cluster, "pve1", grace=3)
    d.dir = f"{cluster.tmpdir}/broken"
    os.makedirs(d.dir, exist_ok=True)
    d.path = f"{d.dir}/cluster.json"
    d.write_raw('{"version": 1, "cluster": "fabtest", "fabric": {')
    d.start(wait_ready=False)
    assert d.proc.wait(timeout=10) == 1
    log = d.log()
    assert d.path in log and "not valid" in log, log
    assert not any("READY=1" in m for m in d.notifications())


def test_a_fifo_in_place_of_the_definition_blocks_nothing(fabric):
    """A FIFO where the file was: reading it would wait for a writer, and with it every
    pass, every repair and SIGTERM. It is reported as not a file; the last good definition
    stays, drift is still repaired, and the file back is applied."""
    cluster = fabric.cluster
    pve2 = cluster["pve2"]
    d2 = fabric.daemons["pve2"]
    mark = d2.mark()
    os.unlink(d2.path)
    os.mkfifo(d2.path)
    try:
        wait_report(d2, mark, f"{d2.path}: not a regular file (a FIFO or pipe)")
        pve2.run(["ip", "link", "del", "vx100"])
        wait_until(lambda: pve2.link("vx100") is not None, timeout=5, interval=0.05,
                   what="vx100 put back with a FIFO in place of the definition")
    finally:
        os.unlink(d2.path)
    d2.write(fabric.definition)
    wait_until(lambda: "not converged" not in d2.log_since(mark) and
               pve2.fabricd("plan", "-c", d2.path).rc == 0, timeout=10, what="converged")
    assert d2.running()


def test_a_problem_that_clears_is_said_to_have_cleared(fabric):
    """The log's last word on a problem was its error: the same file back after it was
    gone, and a pass that works after failed ones, are said."""
    cluster = fabric.cluster
    pve2 = cluster["pve2"]
    d2 = fabric.daemons["pve2"]
    mark = d2.mark()
    text = open(d2.path).read()
    os.unlink(d2.path)
    wait_report(d2, mark, "cannot open")
    with open(d2.path, "w") as f:
        f.write(text)
    d2.wait_log(f"{d2.path}: valid again, the definition in force", since=mark)

    # no route to the peers: passes fail (the underlay MTU cannot be measured) until back
    mark = d2.mark()
    pve2.run(["ip", "link", "set", "eth0", "down"])
    try:
        pve2.run(["ip", "link", "del", "vx100"])  # a pass, which fails
        d2.wait_log("not converged; trying again in", since=mark)
    finally:
        pve2.run(["ip", "link", "set", "eth0", "up"])
    d2.wait_log("pve2: converged again after", since=mark, timeout=40)
    wait_until(lambda: pve2.link("vx100") is not None, timeout=5, what="vx100 back")


def test_a_file_written_in_place_is_read_once_whole(fabric):
    """`cmd > cluster.json` empties the file and writes it a moment later. The periodic check
    (for file systems without inotify) read it between, half-written, and reported it broken;
    a change it sees is read once the file stayed so for one check, and the close after the
    writing (inotify) reads it at once."""
    d2 = fabric.daemons["pve2"]
    good = json.dumps(fabric.definition, indent=2) + "\n"
    mark = d2.mark()
    for i in range(6):  # each pause has an even chance to meet a check (every 500 ms)
        with open(d2.path, "w") as f:
            f.write(good[: len(good) // 2])
            f.flush()
            time.sleep(0.25)
            f.write(good[len(good) // 2:])
        time.sleep(0.1 + 0.07 * i)

    def quiet():
        log = d2.log_since(mark)
        assert "error" not in log, f"a file being written was reported:\n{log}"
        return True
    stays_true(quiet, 1.2)


def test_an_editor_s_save_is_read_once_written(fabric):
    """An editor moves the file aside and writes a new one: created, written a moment later,
    closed. The daemon read it 30 ms after its creation, empty, and reported it broken; a
    file created is read at its writer's close."""
    d2 = fabric.daemons["pve2"]
    good = json.dumps(fabric.definition, indent=2) + "\n"
    mark = d2.mark()
    for _ in range(3):
        os.rename(d2.path, d2.path + "~")
        with open(d2.path, "w") as f:
            time.sleep(0.15)  # the editor's pause (a slow machine) between create and write
            f.write(good)
        os.unlink(d2.path + "~")
        time.sleep(0.2)

    def quiet():
        log = d2.log_since(mark)
        assert "error" not in log, f"a file being written was reported:\n{log}"
        return True
    stays_true(quiet, 1.2)
