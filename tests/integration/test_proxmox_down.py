# SPDX-License-Identifier: GPL-2.0-or-later
"""`fabricd down -c DEF` where a zone follows Proxmox and .running-config is
unreadable or broken.

down removes what fabricd owns and needs no vnet: it warns that the Proxmox
configuration could not be read and removes everything fabricd owns on the
node, leaving Proxmox's bridge. plan and apply still refuse, naming the file
and what to do (SDN "Apply" in Proxmox, or "pve_sdn_dir").

    <tmpdir>/pve/sdn/.running-config   Simple zone "front": vnets vnet1 and vnet2
    pve1: bridges vnet1 and vnet2 made by hand (Proxmox's); `fabricd apply` makes
          wgfab0 and both VXLAN ports; then the file goes (or is broken)
"""
import json
import os

import pytest

pytestmark = [pytest.mark.netns, pytest.mark.vxlan]

RANGE = (1000, 1999)


def derived_vni(vnet):
    """The VNI fabricd derives (definition/pve_follow.c): FNV-1a 32 of the id into the range."""
    h = 2166136261
    for byte in vnet.encode():
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return RANGE[0] + h % (RANGE[1] - RANGE[0] + 1)


def write_running(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


@pytest.fixture
def applied(make_cluster):
    cluster = make_cluster(2)
    sdn = os.path.join(cluster.tmpdir, "pve", "sdn")
    os.makedirs(sdn)
    running = os.path.join(sdn, ".running-config")
    write_running(running, json.dumps({
        "version": 1, "zones": {"ids": {"front": {"type": "simple", "ipam": "pve"}}},
        "vnets": {"ids": {"vnet1": {"type": "vnet", "zone": "front"},
                          "vnet2": {"type": "vnet", "zone": "front"}}},
        "subnets": {"ids": {}}, "controllers": {"ids": {}}}))
    d = cluster.definition(zones=[{"name": "front", "transport": "secure", "pve_zone": "front",
                                   "vni_range": list(RANGE)}])
    d["pve_sdn_dir"] = sdn
    config = cluster.write_definition(d)
    node = cluster.nodes[0]
    for bridge in ("vnet1", "vnet2"):  # Proxmox's, not fabricd's
        node.run(["ip", "link", "add", bridge, "type", "bridge"])
        node.run(["ip", "link", "set", bridge, "up"])
    res = node.fabricd("apply", "-c", config)
    assert res.rc == 0, res
    links = node.links()
    for dev, bridge in ((f"vs{derived_vni('vnet1')}", "vnet1"),
                        (f"vs{derived_vni('vnet2')}", "vnet2")):
        assert links.get(dev, {}).get("master") == bridge, f"no {dev} in {bridge}: {sorted(links)}"
    assert "wgfab0" in links, sorted(links)
    return cluster, node, config, running


def owned(node):
    return sorted(n for n, link in node.links().items()
                  if link.get("ifalias", "").startswith("fabricd:"))


@pytest.mark.parametrize("broken", ["missing", "not json"])
def test_down_without_running_config(applied, broken):
    cluster, node, config, running = applied
    if broken == "missing":
        os.rename(running, running + ".away")
    else:
        write_running(running, "{ this is not JSON")
    assert owned(node), "apply left nothing of fabricd's to remove"

    # plan and apply refuse: the file, and what to do
    for command in ("plan", "apply"):
        res = node.fabricd(command, "-c", config)
        assert res.rc == 1, res
        assert running in res.stderr and 'SDN "Apply"' in res.stderr, res
        assert "pve_sdn_dir" in res.stderr and "nothing was changed" in res.stderr, res
    assert owned(node), "plan or apply changed something"

    # down warns and removes everything fabricd owns; Proxmox's bridge stays
    res = node.fabricd("down", "-c", config)
    assert res.rc == 0, res
    assert "warning:" in res.stderr and running in res.stderr, res
    assert "the Proxmox configuration could not be read" in res.stderr, res
    assert "error:" not in res.stderr, res
    assert owned(node) == [], f"down left {owned(node)}"
    links = node.links()
    assert "wgfab0" not in links, sorted(links)
    assert not any(n.startswith(("vs", "vx")) for n in links), sorted(links)
    assert "vnet1" in links and "vnet2" in links, "down removed Proxmox's bridges"
    res = node.fabricd("down", "-c", config)
    assert res.rc == 0 and "warning:" in res.stderr, res  # and again: nothing left, no error


@pytest.mark.parametrize("broken", ["running-config missing", "running-config not json",
                                    "corosync.conf missing"])
def test_down_sdn_dir_without_proxmox_files(make_cluster, broken):
    """`down --sdn-dir DIR` (what the daemon tells a node taken out of the fabric to run) with
    Proxmox's files unreadable (pmxcfs without quorum or not mounted, a half-written file):
    down needs no vnet. With corosync.conf readable it takes the cluster's name from there and
    removes all fabricd owns; without it, it refuses and says `--cluster NAME` (until
    2026-12-07 both refused, "definition not valid, nothing was changed", with no way out
    named)."""
    from test_proxmox_follow import FakePve
    cluster = make_cluster(2)
    pve = FakePve(cluster)
    pve.apply("secure", {"blue": 100})
    node = cluster.nodes[0]
    res = node.fabricd("apply", "--sdn-dir", pve.sdn)
    assert res.rc == 0, res
    assert owned(node), "apply left nothing of fabricd's to remove"
    running = os.path.join(pve.sdn, ".running-config")
    if broken == "running-config missing":
        os.rename(running, running + ".away")
    elif broken == "running-config not json":
        write_running(running, '{"version":')
    else:
        os.rename(os.path.join(pve.dir, "corosync.conf"), os.path.join(pve.dir, "away.conf"))
    res = node.fabricd("down", "--sdn-dir", pve.sdn)
    if broken == "corosync.conf missing":
        assert res.rc == 1, res
        assert f"fabricd down --cluster NAME" in res.stderr, res
        assert owned(node), "down changed something"
        res = node.fabricd("down", "--cluster", cluster.cluster_name)
    else:
        assert "down needs no vnet" in res.stderr and cluster.cluster_name in res.stderr, res
        assert "error:" not in res.stderr, res
    assert res.rc == 0, res
    assert owned(node) == [], f"down left {owned(node)}"
    assert node.run(["nft", "list", "tables"]).stdout.strip() == "", "the guard stayed"
