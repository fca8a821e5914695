# SPDX-License-Identifier: GPL-2.0-or-later
"""Adoption: a fabricd killed after starting wireguard-go but before marking its
device leaves an unmarked wgfab0. The pid file fabricd wrote proves it started
that wireguard-go, so the next apply marks the device instead of refusing it,
keeps the WireGuard sessions, and a wireguard-go fabricd did not start stays foreign.
A fabricd killed before wireguard-go opened its socket leaves a link no one answers
for yet: the next apply waits for it instead of calling the device unreadable.
"""
import os
import signal

import pytest

from fabtest import zone
from fabtest.cluster import REPO_ROOT
from fabtest.scenario import assert_sessions_kept, peer_sessions, warm_sessions
from fabtest.wait import wait_until

SLOW_WIREGUARD_GO = REPO_ROOT / "build" / "release" / "tests" / "tools" / "slow_wireguard_go"

pytestmark = [pytest.mark.netns, pytest.mark.wireguard]


def test_unmarked_device_started_by_fabricd_is_adopted(make_cluster):
    cluster = make_cluster(2)
    if cluster.wg_backend != "userspace":
        pytest.skip("adoption by pid file concerns wireguard-go")
    config = cluster.write_definition(cluster.definition(
        zones=[zone("z", "secure", [("vnet900", 900)])]))
    cluster.apply_all(config)
    pve1 = cluster.nodes[0]
    warm_sessions(cluster.nodes)
    before = peer_sessions(pve1)
    ifindex = pve1.link("wgfab0")["ifindex"]
    pve1.run(["ip", "link", "set", "dev", "wgfab0", "alias", ""])  # as if killed before marking

    res = pve1.fabricd("plan", "-c", config)
    assert res.rc == 2 and "adopted" in res.stdout, res
    assert pve1.fabricd("apply", "-c", config).rc == 0
    assert pve1.link("wgfab0").get("ifalias") == "fabricd:fabtest"
    assert pve1.link("wgfab0")["ifindex"] == ifindex
    assert pve1.fabricd("plan", "-c", config).rc == 0
    assert_sessions_kept(pve1, before, peer_sessions(pve1))


def test_wireguard_go_not_started_by_fabricd_stays_foreign(make_cluster):
    cluster = make_cluster(2)
    if cluster.wg_backend != "userspace":
        pytest.skip("concerns wireguard-go")
    pve1 = cluster.nodes[0]
    pve1.run(["wireguard-go", "wgfab0"])  # daemonizes; no pid file of fabricd's
    config = cluster.write_definition(cluster.definition(zones=[]))
    res = pve1.fabricd("apply", "-c", config)
    assert res.rc == 1 and "does not own" in res.stderr, res
    assert not pve1.link("wgfab0").get("ifalias")


def test_apply_waits_for_a_wireguard_go_still_opening_its_socket(make_cluster, tmp_path):
    """CI once killed an apply 24 ms in, between wireguard-go's TUN link and its socket;
    the next apply found the link, no socket, and refused the device as unreadable."""
    cluster = make_cluster(2)
    if cluster.wg_backend != "userspace":
        pytest.skip("concerns wireguard-go")
    assert SLOW_WIREGUARD_GO.exists(), f"{SLOW_WIREGUARD_GO} is missing: run `make tools`"
    pve1 = cluster.nodes[0]
    config = cluster.write_definition(cluster.definition(
        zones=[zone("z", "secure", [("vnet901", 901)])]))
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "wireguard-go").symlink_to(SLOW_WIREGUARD_GO)
    first = pve1.run_bg([cluster.fabricd_bin, "apply", "-c", config, "-n", pve1.name,
                         "--key-file", pve1.key_file, "--wg-backend", "userspace"],
                        env={"PATH": f"{shim}:{os.environ['PATH']}", "SLOW_WG_DELAY_MS": 2500})
    wait_until(lambda: "wgfab0" in pve1.links(), timeout=10, what="the TUN link of wgfab0")
    first.send_signal(signal.SIGKILL)  # killed while wireguard-go opens its socket
    first.wait(timeout=10)
    # the window is open: the link is there, the socket is not
    assert pve1.run(["wg", "show", "wgfab0"], check=False).returncode != 0

    res = pve1.fabricd("apply", "-c", config)
    assert res.rc == 0, res
    assert pve1.link("wgfab0").get("ifalias") == "fabricd:fabtest"
    assert pve1.fabricd("plan", "-c", config).rc == 0
    assert pve1.fabricd("down", "-c", config).rc == 0
    assert "wgfab0" not in pve1.links()
