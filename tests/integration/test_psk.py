# SPDX-License-Identifier: GPL-2.0-or-later
"""Preshared keys: --psk-dir gives every peer pair one more symmetric key.

Both nodes of a pair hold the same key in a file named after the other node;
fabricd sets it per peer (never by replacing the peer list), plans nothing
once it is in place, refuses a key file others can read, and never shows a
key: not in its output, not on any command line.
"""
import json
import os
import subprocess

import pytest

from fabtest import zone
from fabtest.daemon import Daemon
from fabtest.wait import wait_until

pytestmark = [pytest.mark.netns, pytest.mark.wireguard]


def _write_key(path, key):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key + "\n")


@pytest.fixture(scope="module")
def psk_cluster(cluster2):
    """Two nodes, a secure zone, one preshared key shared by the pair."""
    pve1, pve2 = cluster2.nodes
    psk = subprocess.run(["wg", "genpsk"], capture_output=True, text=True,
                         check=True).stdout.strip()
    dirs = {}
    for node, peer in ((pve1, pve2), (pve2, pve1)):
        d = os.path.join(cluster2.tmpdir, f"psk-{node.name}")
        os.makedirs(d, mode=0o700, exist_ok=True)
        _write_key(os.path.join(d, peer.name), psk)
        dirs[node.name] = d
    config = cluster2.write_definition(cluster2.definition(
        zones=[zone("tenant", "secure", [("vnet700", 700)])]))
    return cluster2, config, psk, dirs


def test_psk_is_set_on_both_sides_and_traffic_flows(psk_cluster):
    cluster, config, psk, dirs = psk_cluster
    outputs = []
    for node in cluster.nodes:
        res = node.fabricd("apply", "-c", config, "--psk-dir", dirs[node.name], "--verbose")
        assert res.rc == 0, res
        outputs.append(res.stdout + res.stderr)
    for node in cluster.nodes:
        dump = node.wg_dump()
        assert [p.preshared_key for p in dump.peers.values()] == [psk]
    pve1, pve2 = cluster.nodes
    g1 = cluster.add_guest(pve1, "vnet700", "10.70.0.1/24")
    cluster.add_guest(pve2, "vnet700", "10.70.0.2/24")
    assert wait_until(lambda: g1.ping("10.70.0.2", count=1, timeout=2), timeout=15,
                      what="ping over a session with a preshared key")
    for node in cluster.nodes:
        res = node.fabricd("plan", "-c", config, "--psk-dir", dirs[node.name])
        assert res.rc == 0, f"plan after apply must be empty:\n{res}"
        outputs.append(res.stdout + res.stderr)
        res = node.fabricd("status", "-c", config, "--json")
        outputs.append(res.stdout + res.stderr)
    for text in outputs:
        assert psk not in text, "a preshared key was printed"


def test_psk_never_on_a_command_line(psk_cluster):
    """While apply runs, no /proc/*/cmdline holds a key (wireguard-go gets it over its socket)."""
    cluster, config, psk, dirs = psk_cluster
    pve1 = cluster.nodes[0]
    private = open(pve1.key_file).read().strip()
    # a fresh peer state makes apply send the key again
    pve1.run(["wg", "set", "wgfab0", "peer", cluster.nodes[1].public_key, "remove"])
    proc = pve1.run_bg([cluster.fabricd_bin, "apply", "-c", config, "-n", pve1.name,
                        "--key-file", pve1.key_file, "--wg-backend", cluster.wg_backend,
                        "--psk-dir", dirs[pve1.name]])
    seen = []
    while proc.poll() is None:
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    seen.append(open(f"/proc/{pid}/cmdline", "rb").read())
                except OSError:
                    pass
    assert proc.returncode == 0
    # a scan that never saw apply running proves nothing about its command line
    binary = os.path.basename(cluster.fabricd_bin).encode()
    saw_fabricd = [c for c in seen if c.split(b"\0")[0].endswith(binary) and b"apply" in c]
    assert saw_fabricd, f"the /proc scan saw no fabricd apply among {len(seen)} command lines"

    for cmdline in seen:
        assert psk.encode() not in cmdline and private.encode() not in cmdline
    assert [p.preshared_key for p in pve1.wg_dump().peers.values()] == [psk]


def test_psk_file_others_can_read_is_refused(psk_cluster):
    cluster, config, psk, dirs = psk_cluster
    pve1, pve2 = cluster.nodes
    path = os.path.join(dirs[pve1.name], pve2.name)
    os.chmod(path, 0o644)
    try:
        res = pve1.fabricd("apply", "-c", config, "--psk-dir", dirs[pve1.name])
    finally:
        os.chmod(path, 0o600)
    assert res.rc == 1
    assert path in res.stderr and "chmod 600" in res.stderr
    assert psk not in res.stdout + res.stderr


def test_missing_psk_file_is_an_error_not_a_silent_downgrade(psk_cluster):
    cluster, config, psk, dirs = psk_cluster
    pve1 = cluster.nodes[0]
    empty = os.path.join(cluster.tmpdir, "psk-empty")
    os.makedirs(empty, mode=0o700, exist_ok=True)
    res = pve1.fabricd("apply", "-c", config, "--psk-dir", empty)
    assert res.rc == 1
    assert "pve2" in res.stderr and empty in res.stderr
    # nothing changed: the session keeps its key
    assert [p.preshared_key for p in pve1.wg_dump().peers.values()] == [psk]


def _psks(node):
    return [p.preshared_key for p in node.wg_dump().peers.values()]


def test_without_psk_dir_the_keys_go_in_apply_plan_and_the_daemon(psk_cluster):
    """Without --psk-dir a peer has no preshared key, as a device made anew has none: until
    2026-12-07 the keys of an earlier apply with --psk-dir stayed (plan saw nothing), so
    a node that rebooted afterwards came back without its key while its peers kept theirs,
    and the pair could not handshake. plan shows the removal, apply makes it and says so,
    plan is then empty; the daemon does the same."""
    cluster, config, psk, dirs = psk_cluster
    pve1, pve2 = cluster.nodes
    res = pve1.fabricd("plan", "-c", config)
    assert res.rc == 2 and "preshared key removed (no --psk-dir)" in res.stdout, res
    for node in cluster.nodes:
        res = node.fabricd("apply", "-c", config)
        assert res.rc == 0, res
        assert f"warning: apply {node.name}: 1 peer of wgfab0 loses its preshared key: " \
            "without --psk-dir fabricd sets none; give --psk-dir DIR to keep them" \
            in res.stderr, res
        assert _psks(node) == ["(none)"]
        res = node.fabricd("plan", "-c", config)
        assert res.rc == 0 and "warning" not in res.stderr, f"plan after apply:\n{res}"
    # and back: --psk-dir sets them again; a daemon without it removes them
    res = pve1.fabricd("plan", "-c", config, "--psk-dir", dirs[pve1.name])
    assert res.rc == 2 and "preshared key" in res.stdout and psk not in res.stdout, res
    assert pve1.fabricd("apply", "-c", config, "--psk-dir", dirs[pve1.name]).rc == 0
    assert _psks(pve1) == [psk]
    daemon = Daemon(cluster, pve1)
    daemon.write(json.load(open(config)))
    try:
        daemon.start()
        assert _psks(pve1) == ["(none)"], daemon.log()
    finally:
        daemon.stop()
