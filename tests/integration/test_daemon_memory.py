# SPDX-License-Identifier: GPL-2.0-or-later
"""Resource limits of the daemon: memory and descriptors stay bounded across reloads.

The definition names 64 nodes (two simulated, the other 62 only peers), so
each reload parses, validates and plans a definition of real size. It is
replaced 600 times (by rename, as editors and cluster file systems do),
alternating between two valid versions that differ by a vnet, so every
reload is a real change with a kernel pass behind it. Over the last 500
reloads:
- the heap in use between passes (`fabricd_heap_in_use_bytes`, malloc's own
  count, read from --metrics-file) must not grow by 8 KiB or more in both
  halves (250 reloads each): a leak of 33 bytes or more per reload would. It
  is exact where RSS moves in 4 KiB pages and with the allocator's
  fragmentation (RSS once grew 24 KiB, then 8 KiB, with every block freed);
  a one-time step (a cache filled once) shows in one half only. The daemon
  runs with glibc's per-thread cache off (GLIBC_TUNABLES), as malloc counts
  the freed chunks that cache holds as in use: with it the count drifted by
  70 KiB over 500 reloads, without it 260208 -> 260240 -> 260208 bytes;
- the resident set may step once but grow at most 256 KiB in all;
- the daemon holds the same number of file descriptors at the middle and
  the end, and has not loaded libmicrohttpd (only --metrics needs it: with
  GnuTLS behind it, it cost every daemon 2.7 MiB of RSS).
And no private key shows up in its log.
"""
import base64
import os
import time

import pytest

from fabtest import zone
from fabtest.daemon import start_daemons
from fabtest.wait import wait_until

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.slow]

WARMUP = 100
MEASURED = 500
HALF_LIMIT_BYTES = 8192  # per 250 reloads: 33 bytes a reload
RSS_LIMIT_KIB = 256  # one-time steps of the resident set
NODES = 64


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def sample_rss(pid, n=20, interval=0.05):
    """n readings of pid's VmRSS, interval seconds apart."""
    readings = []
    for _ in range(n):
        readings.append(vm_rss_kib(pid))
        time.sleep(interval)
    return readings


def heap_reading(path):
    """(file's mtime, fabricd_heap_in_use_bytes) of a --metrics-file."""
    with open(path) as f:
        mtime = os.fstat(f.fileno()).st_mtime_ns
        for line in f:
            if line.startswith("fabricd_heap_in_use_bytes "):
                return mtime, int(line.split()[1])
    raise AssertionError(f"{path} has no fabricd_heap_in_use_bytes")


def sample_heap(path, n=3):
    """The heap of n consecutive refreshes of the metrics file (one a second)."""
    readings = []
    last = None
    while len(readings) < n:
        reading = wait_until(lambda: (r := heap_reading(path))[0] != last and r,
                             timeout=10, interval=0.05, what=f"a new {path}")
        last = reading[0]
        readings.append(reading[1])
    return readings


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def with_peers(cluster, definition):
    """definition with nodes added up to NODES: peers of pve1 that never answer."""
    for i in range(len(definition["nodes"]) + 1, NODES + 1):
        definition["nodes"].append({
            "name": f"peer{i}", "underlay": f"192.0.2.{100 + i}",
            "fabric_address": f"10.255.0.{100 + i}",
            "public_key": base64.b64encode(bytes([i]) * 32).decode()})
    return definition


def test_memory_is_bounded_across_reloads(make_cluster):
    cluster = make_cluster(2)
    pve1 = cluster.nodes[0]
    one = with_peers(cluster, cluster.definition(zones=[zone("a", "plain", [("vnet1", 1)])]))
    two = with_peers(cluster, cluster.definition(zones=[zone("a", "plain", [("vnet1", 1),
                                                                             ("vnet2", 2)])]))
    metrics_file = f"{cluster.tmpdir}/pve1-heap.prom"
    daemons = start_daemons(cluster, one, nodes=[pve1],
                            extra_args=["--metrics-file", metrics_file, "--metrics-file-interval", "1",
                                        "--probe-interval", "0"],
                            env={"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"})
    d = daemons["pve1"]

    def reload(i):
        d.write(two if i % 2 else one)
        want_vnet2 = bool(i % 2)
        # each reload converges before the next: a real pass per change
        try:
            wait_until(lambda: ("vnet2" in pve1.links()) == want_vnet2, timeout=10,
                       interval=0.01, what=f"reload {i} applied")
        except AssertionError:
            print(d.log()[-3000:])
            raise

    # a reading may fall into a pass (a settle pass follows each change): the floor
    # of each window counts, as a leak raises it and what a pass frees does not
    heaps, rss, fds = [], [], []
    for i in range(1, WARMUP + MEASURED + 1):
        reload(i)
        if i in (WARMUP, WARMUP + MEASURED // 2, WARMUP + MEASURED):
            heaps.append(min(sample_heap(metrics_file)))
            rss.append(min(sample_rss(d.pid)))
            fds.append(open_fds(d.pid))
    print(f"daemon ({NODES} nodes) after {WARMUP}, {WARMUP + MEASURED // 2} and "
          f"{WARMUP + MEASURED} reloads: heap {heaps} bytes, VmRSS {rss} KiB, fds {fds}")
    assert all(h > 0 for h in heaps), f"no heap count in the metrics: {heaps}"
    warm, mid, end = heaps
    # a leak grows both halves alike; a one-time step only one of them
    assert min(mid - warm, end - mid) < HALF_LIMIT_BYTES, \
        f"heap grew {warm} -> {mid} -> {end} bytes over {MEASURED} reloads"
    assert rss[2] - rss[0] <= RSS_LIMIT_KIB, f"RSS grew {rss} KiB over {MEASURED} reloads"
    assert fds[1] == fds[2], f"open descriptors {fds[1]} -> {fds[2]} over {MEASURED // 2} reloads"
    # without --metrics the HTTP server's library (and GnuTLS behind it) is not loaded
    with open(f"/proc/{d.pid}/maps") as f:
        assert "libmicrohttpd" not in f.read(), "libmicrohttpd mapped without --metrics"
    private = open(pve1.key_file).read().strip()
    assert private not in d.log(all_runs=True)
    d.stop()
