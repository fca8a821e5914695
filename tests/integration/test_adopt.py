# SPDX-License-Identifier: GPL-2.0-or-later
"""Adoption: a fabricd killed after starting wireguard-go but before marking its
device leaves an unmarked wgfab0. The pid file fabricd wrote proves it started
that wireguard-go, so the next apply marks the device instead of refusing it,
keeps the WireGuard sessions, and a wireguard-go fabricd did not start stays foreign.
"""
import pytest

from fabtest import zone
from fabtest.scenario import assert_sessions_kept, peer_sessions, warm_sessions

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
