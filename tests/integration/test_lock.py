# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: the per-node lock serializes every writer of a node.

                 sw: br0
          +---------+---------+
        pve1                 pve2        fabricd run on both
   red  vnet100  vx100 (plain)
        wgfab0

While `fabricd run` keeps pve1 converged, `apply` of its definition and of
another one (vnet101 instead of vnet100) run on pve1 in two loops at once. Without a lock their passes interleave (one creates what
the other deletes, a create meets EEXIST, a delete meets ENODEV) and leave a
half-built node or fail. With it every command succeeds and, once the loops
stop, the daemon brings pve1 back to the definition. A lock held by someone
else makes a writer fail after --lock-wait naming the holder's PID and
command, while `plan`, `status` and `check` do not wait at all. A second
daemon for a node refuses to start (the daemon's own lifetime lock).
"""

import contextlib
import fcntl
import os
import signal
import subprocess
import threading
import time

import pytest

from fabtest import SimCluster, assert_node_converged, wait_until, zone
from fabtest.cluster import node_lock_path
from fabtest.daemon import start_daemons, stop_daemons

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

ZONE_MTU = 1390
LOOP_SECONDS = 6


def lock_path(node):
    """The node's lock file, as engine/lock.h names it."""
    return node_lock_path(os.stat(f"/run/netns/{node.ns}").st_ino)


@contextlib.contextmanager
def held_lock(node, holder):
    """Hold node's lock as another writer would, its holder line saying holder."""
    os.makedirs("/run/fabricd", exist_ok=True)
    with open(lock_path(node), "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.truncate(0)
        f.write(f"{holder}\n")
        f.flush()
        yield


@pytest.fixture(scope="module")
def fabric(cluster_options):
    cluster = SimCluster(2, **cluster_options)
    try:
        definition = cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])])
        daemons = start_daemons(cluster, definition, grace=3)
        yield cluster, definition, daemons
        stop_daemons(daemons)
    finally:
        cluster.close()


def test_concurrent_writers_are_serialized(fabric):
    cluster, definition, daemons = fabric
    pve1 = cluster.node("pve1")
    config = daemons["pve1"].path
    results = []
    stop = time.monotonic() + LOOP_SECONDS

    other = cluster.write_definition(
        cluster.definition(zones=[zone("red", "plain", [("vnet101", 101)])]),
        f"{cluster.tmpdir}/other.json")

    def loop(path):
        while time.monotonic() < stop:
            res = pve1.fabricd("apply", "-c", path, timeout=60)
            results.append((path, res))

    threads = [threading.Thread(target=loop, args=(p,)) for p in (config, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = [f"{c}: {res}" for c, res in results if res.rc != 0]
    assert len(results) >= 4, results
    assert not failed, f"{len(failed)} of {len(results)} commands failed:\n" + "\n".join(failed[:5])
    # the last one may have been the other definition's: the daemon puts its own back
    wait_until(lambda: pve1.link("vnet100") and pve1.link("vx100") and pve1.link("wgfab0"),
               timeout=10, what="daemon rebuilds pve1")
    wait_until(lambda: not pve1.fabricd("plan", "-c", config).rc, timeout=10,
               what="pve1 converged (empty plan)")
    assert_node_converged(pve1, definition, ZONE_MTU)
    assert daemons["pve1"].running()


def test_held_lock_names_its_holder_and_readers_never_wait(fabric):
    cluster, definition, daemons = fabric
    pve1 = cluster.node("pve1")
    config = daemons["pve1"].path
    holder = f"{os.getpid()} test-holder"
    with held_lock(pve1, holder):
        t0 = time.monotonic()
        res = pve1.fabricd("apply", "-c", config, "--lock-wait", "1")
        waited = time.monotonic() - t0
        assert res.rc == 1, res
        assert holder in res.stderr, res
        assert 0.9 <= waited < 5, waited
        for command in ("plan", "status", "check"):
            t0 = time.monotonic()
            res = pve1.fabricd(command, "-c", config)
            assert res.rc == 0, res
            assert time.monotonic() - t0 < 1.0, f"{command} waited for the lock"
        assert pve1.link("vnet100"), "a refused down changed something"
    # released: the next writer goes through at once
    res = pve1.fabricd("apply", "-c", config, "--lock-wait", "1")
    assert res.rc == 0, res


def test_a_holder_line_left_by_a_process_that_ended_is_not_named(fabric):
    """The line outlives its writer: a program that holds the lock without writing one
    (flock(1)) was named as the fabricd that held it last."""
    cluster, definition, daemons = fabric
    pve1 = cluster.node("pve1")
    gone = subprocess.Popen(["true"])
    gone.wait()
    with held_lock(pve1, f"{gone.pid} run"):
        res = pve1.fabricd("apply", "-c", daemons["pve1"].path, "--lock-wait", "0")
        assert res.rc == 1, res
        assert f"{gone.pid} run" not in res.stderr, res
        assert "(pid and command: not recorded; fuser -v on the lock file names it)" in \
            res.stderr, res


def test_a_writer_killed_mid_write_leaves_no_temporary_file(fabric):
    """A file fabricd replaces (guard prints, probe state, FRR's pending reload) is written
    beside it as NAME.fabricd-tmp.PID and renamed; a writer killed in between left that file
    in /run/fabricd for good. The next writer holding the lock removes those of dead pids;
    one of a live process stays."""
    cluster, definition, daemons = fabric
    pve1 = cluster.node("pve1")
    gone = subprocess.Popen(["true"])
    gone.wait()
    live = subprocess.Popen(["sleep", "60"])
    base = f"/run/fabricd/{cluster.node_prefix}-test.prints"
    dead_temp, live_temp = f"{base}.fabricd-tmp.{gone.pid}", f"{base}.fabricd-tmp.{live.pid}"
    try:
        os.makedirs("/run/fabricd", exist_ok=True)
        for path in (dead_temp, live_temp, f"{base}.fabricd-tmp.x{gone.pid}"):
            with open(path, "w") as f:
                f.write("half")
        res = pve1.fabricd("apply", "-c", daemons["pve1"].path, "--lock-wait", "5")
        assert res.rc == 0, res
        assert not os.path.exists(dead_temp)
        assert os.path.exists(live_temp)
        assert os.path.exists(f"{base}.fabricd-tmp.x{gone.pid}"), "not such a name: kept"
    finally:
        live.kill()
        live.wait()
        for path in (dead_temp, live_temp, f"{base}.fabricd-tmp.x{gone.pid}"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def test_the_lock_is_the_namespace_s_whatever_the_node_is_called(fabric):
    """The lock guards the kernel's state of a namespace: a `down` given another spelling
    of the node than the daemon's (a typo, a host name) waits like any other writer; a
    -n that is no node name is refused before anything is read, locked or created."""
    cluster, definition, daemons = fabric
    pve1 = cluster.node("pve1")
    config = daemons["pve1"].path
    daemons["pve1"].stop()  # down beside a daemon is refused before the lock is taken
    try:
        with held_lock(pve1, f"{os.getpid()} test-holder"):
            res = pve1.run([cluster.fabricd_bin, "down", "-c", config, "-n", "pve9",
                            "--wg-backend", cluster.wg_backend, "--lock-wait", "1"],
                           check=False)
            assert res.returncode == 1 and f"{os.getpid()} test-holder" in res.stderr, res
            assert pve1.link("vnet100"), "a down under another name went past the lock"
    finally:
        daemons["pve1"].start()
    target = f"{cluster.tmpdir}/escaped"
    for bad in (f"../../..{target}", "Pve1", "-x", "a" * 64):
        for command in ("down", "set-transport"):
            argv = [cluster.fabricd_bin, command, "-c", config, "-n", bad]
            argv += ["red", "plain"] if command == "set-transport" else []
            res = pve1.run(argv, check=False)
            assert res.returncode == 1 and "is not a node name" in res.stderr, (bad, res)
    assert not [f for f in os.listdir(cluster.tmpdir) if f.startswith("escaped")]
    assert pve1.link("vnet100")


def test_down_beside_the_daemon_is_refused(fabric):
    """The daemon would build again what down removes, and the guests' ports would stay
    on no bridge (until 2026-12-06 down went ahead with a warning): refused, naming the
    daemon, nothing changed. With the daemon stopped, down works."""
    cluster, definition, daemons = fabric
    pve1 = cluster.node("pve1")
    config = daemons["pve1"].path
    before = pve1.ifindexes()
    res = pve1.fabricd("down", "-c", config, "--lock-wait", "1")
    assert res.rc == 1, res
    assert f"down pve1: waiting up to 1 s for the daemon (pid and command: " \
        f"{daemons['pve1'].pid} run) to stop" in res.stderr, res
    assert f"error: down pve1: a daemon (pid and command: {daemons['pve1'].pid} run) keeps " \
        "this node and would build again what down removes, with the guests' ports left on " \
        "no bridge; nothing was changed: stop it first (systemctl stop fabricd), then run " \
        "down" in res.stderr, res
    assert pve1.ifindexes() == before, "a refused down changed something"
    # down --cluster of the daemon's own cluster is the same down; another's is not
    res = pve1.run([cluster.fabricd_bin, "down", "--cluster", cluster.cluster_name, "-n",
                    "pve1", "--wg-backend", cluster.wg_backend, "--lock-wait", "0"], check=False)
    assert res.returncode == 1 and "keeps this node and would build again" in res.stderr, res
    res = pve1.run([cluster.fabricd_bin, "down", "--cluster", "older", "-n", "pve1",
                    "--wg-backend", cluster.wg_backend], check=False)
    assert res.returncode == 0, res
    assert f"keeps this node for cluster {cluster.cluster_name}: down removes only what " \
        "cluster older's fabricd owns" in res.stderr, res
    assert pve1.ifindexes() == before, "down of another cluster changed this one's"
    # a daemon being stopped (SIGTERM sent, not yet gone) is waited for: down then works
    pve2 = cluster.node("pve2")
    d2 = daemons["pve2"]
    try:
        d2.send_signal(signal.SIGTERM)
        res = pve2.fabricd("down", "-c", d2.path)
        assert res.rc == 0 and "keeps this node" not in res.stderr, res
        assert pve2.owned_links() == [], pve2.owned_links()
    finally:
        d2.proc.wait(timeout=30)
        d2.start()


def test_down_beside_a_daemon_that_names_no_cluster_is_refused(fabric):
    """A daemon of a build before 2026-12-06 writes no cluster into its lock: down --cluster
    cannot tell whose it keeps, so it is refused like any down (it went ahead, taking the
    node the daemon would rebuild)."""
    cluster, definition, daemons = fabric
    pve1 = cluster.node("pve1")
    daemons["pve1"].stop()
    path = lock_path(pve1).replace("/net", "/daemon.net")
    try:
        with open(path, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.truncate(0)
            f.write(f"{os.getpid()} run\n")
            f.flush()
            res = pve1.run([cluster.fabricd_bin, "down", "--cluster", cluster.cluster_name,
                            "-n", "pve1", "--wg-backend", cluster.wg_backend,
                            "--lock-wait", "0"], check=False)
            assert res.returncode == 1 and "keeps this node and would build again" in \
                res.stderr, res
            assert pve1.link("vnet100"), "down went past a daemon of unknown cluster"
    finally:
        daemons["pve1"].start()


def second_run(cluster, node, config, *extra):
    """`fabricd run` for node beside the harness's daemons."""
    return node.run_bg([cluster.fabricd_bin, "run", "-c", config, "-n", node.name,
                        "--key-file", node.key_file, "--wg-backend", cluster.wg_backend, *extra])


def read_log(proc):
    with open(proc.log_path) as lf:
        return lf.read()


def test_a_second_daemon_for_the_node_refuses_to_start(fabric):
    """Two daemons would undo each other's passes (each takes the node lock per pass
    only): the second one stops at once, naming the first; the first keeps the node."""
    cluster, definition, daemons = fabric
    pve1 = cluster.node("pve1")
    config = daemons["pve1"].path
    proc = second_run(cluster, pve1, config)
    rc = proc.wait(timeout=10)
    log = read_log(proc)
    assert rc == 1, log
    assert f"another fabricd run (pid and command: {daemons['pve1'].pid} run) already keeps " \
        "this node" in log, log
    assert "/daemon.net" in log and "up to date" not in log, log
    assert daemons["pve1"].running()
    assert pve1.fabricd("plan", "-c", config).rc == 0


def test_daemon_stopped_while_waiting_for_the_lock_exits_at_once(fabric):
    """SIGTERM reaches a `fabricd run` that waits for the node (its signals are blocked)."""
    cluster, definition, daemons = fabric
    pve1 = cluster.node("pve1")
    config = daemons["pve1"].path
    daemons["pve1"].stop()  # one daemon per node: this one is the test's
    try:
        with held_lock(pve1, f"{os.getpid()} other-holder"):
            proc = second_run(cluster, pve1, config, "--lock-wait", "60")
            wait_until(lambda: "waiting for another fabricd" in read_log(proc), timeout=10,
                       what="the daemon waits for the lock")
            t0 = time.monotonic()
            proc.terminate()
            rc = proc.wait(timeout=10)
            stopped_in = time.monotonic() - t0
        log = read_log(proc)
        assert rc == 0, log
        assert stopped_in < 2, f"took {stopped_in:.1f} s to stop (--lock-wait 60)"
        assert "stopped while waiting for another fabricd" in log and f"{os.getpid()} other-holder" in log
        assert "first convergence failed" not in log
    finally:
        daemons["pve1"].start()
    wait_until(lambda: not pve1.fabricd("plan", "-c", config).rc, timeout=10,
               what="pve1 converged (empty plan)")


def test_a_full_run_directory_is_said_once_not_at_every_pass(fabric):
    """/run full (here a 64 KiB tmpfs filled, over /run/fabricd in pve1's mount namespace):
    the daemon's pass cannot write its holder line into the node lock. It goes on, and
    says so once, not at every pass (until 2026-12-07 a warning per pass: two per repair,
    one a minute idle, forever); room again, once that the line is recorded."""
    cluster, definition, daemons = fabric
    pve1, daemon = cluster.node("pve1"), daemons["pve1"]
    inode = os.stat(f"/run/netns/{pve1.ns}").st_ino
    said = "cannot record the lock's holder"
    prints = f"guard.net{inode}.prints"
    # filled aside, then moved over /run/fabricd at once: the guard's prints kept, the lock
    # made anew (empty); no probe file (one written meanwhile and then removed, as one that
    # cannot be written is, would make room)
    full = f"{daemon.dir}/full"
    mark = daemon.mark()  # a pass may come before the first repair (the probes')
    pve1.run(["sh", "-c", f"mkdir -p {full} && mount -t tmpfs -o size=64k fabtest-full {full} "
              f"&& cp /run/fabricd/{prints} {full}/ && "
              f"{{ dd if=/dev/zero of={full}/fill bs=1k 2>/dev/null; true; }} && "
              f"mount --move {full} /run/fabricd"])
    try:
        for repairs in (1, 2, 3):  # each a pass, and a settling pass after it
            pve1.run(["ip", "link", "set", "vnet100", "down"])
            wait_until(lambda: daemon.log_since(mark).count("bridge vnet100: down -> up")
                       == repairs and "UP" in pve1.run(["ip", "-br", "link", "show",
                                                        "vnet100"]).stdout,
                       timeout=5, interval=0.02, what="vnet100 repaired with /run full")
        log = daemon.log_since(mark)
        assert log.count(said) == 1, log
        assert "No space left on device" in log and "not converged" not in log, log
    finally:
        pve1.run(["umount", "/run/fabricd"])
    pve1.run(["ip", "link", "set", "vnet100", "down"])
    daemon.wait_log("the lock's holder is recorded in", since=mark)
    wait_until(lambda: not pve1.fabricd("plan", "-c", daemon.path).rc, timeout=10,
               what="pve1 converged (empty plan)")


def test_teardown_removes_the_node_locks(cluster_options):
    """fabricd leaves its lock files (removing one races a waiting writer); a test's
    cluster removes those of its namespaces once nothing runs there."""
    cluster = SimCluster(2, **cluster_options)
    try:
        config = cluster.write_definition(
            cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])]))
        cluster.apply_all(config)
        locks = [lock_path(n) for n in cluster.nodes]
        assert all(os.path.exists(p) for p in locks), locks
        cluster.fabricd_all("down", config)
    finally:
        cluster.close()
    assert [p for p in locks if os.path.exists(p)] == []
    assert cluster.leftovers() == []


def test_teardown_leaves_no_file_of_its_namespaces_in_run_fabricd(cluster_options):
    """Without a `down`, a node's namespace leaves fabricd's files named after its inode in
    /run/fabricd: locks, and the guard's rule prints (guard.net<inode>.prints, written
    with the table). The teardown removes them all: before 2026-12-06 the prints stayed,
    one more file per node of every test run, and a later namespace given the same inode
    found another's prints."""
    cluster = SimCluster(2, **cluster_options)
    try:
        config = cluster.write_definition(
            cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])]))
        cluster.apply_all(config)
        inodes = [os.stat(f"/run/netns/{n.ns}").st_ino for n in cluster.nodes]
        prints = [f"/run/fabricd/guard.net{i}.prints" for i in inodes]
        assert all(os.path.exists(p) for p in prints), prints
    finally:
        cluster.close()
    left = [name for name in os.listdir("/run/fabricd")
            if any(f"net{i}." in name for i in inodes)]
    assert left == []
    assert cluster.leftovers() == []
