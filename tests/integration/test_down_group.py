# SPDX-License-Identifier: GPL-2.0-or-later
"""`down` deletes fabricd's links as one interface group, and only them.

Every link fabricd creates (bridges, VXLAN devices) carries the interface
group 64177 (kinds/link.h LINK_GROUP_OWNED) besides its owner alias. `down`
then deletes them with one `ip link delete group`-style message, which the
kernel does in one unregistration instead of one per link (at 2048 links:
see README "Scale"). When the group holds anything down does not delete (a
link someone else put there), down falls back to deleting its own links one
by one: the stranger survives. Run with --verbose, down says which way it
took.
"""
import pytest

from fabtest import zone

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

GROUP = 64177
ZONES = [zone("tenant-p", "plain", [("vnet100", 100), ("vnet101", 101)]),
         zone("tenant-s", "secure", [("vnet200", 200)])]
OWNED = {"vnet100", "vnet101", "vnet200", "vx100", "vx101", "vs200"}


def group_of(link):
    group = link.get("group")
    return GROUP if group == str(GROUP) else group


def applied(make_cluster):
    cluster = make_cluster(2)
    pve1 = cluster["pve1"]
    config = cluster.write_definition(cluster.definition(zones=ZONES))
    cluster.apply_all(config)
    return cluster, pve1, config


def test_created_links_carry_the_group(make_cluster):
    _cluster, pve1, _config = applied(make_cluster)
    links = pve1.links()
    for name in OWNED:
        assert group_of(links[name]) == GROUP, (name, links[name].get("group"))
    assert group_of(links["eth0"]) != GROUP


def test_down_deletes_the_group_at_once(make_cluster):
    _cluster, pve1, config = applied(make_cluster)
    res = pve1.fabricd("down", "-c", config, "--verbose")
    assert res.rc == 0, str(res)
    assert f"links deleted as interface group {GROUP}" in res.stderr, res.stderr
    assert pve1.owned_links() == []
    assert not OWNED & set(pve1.links())


def test_stranger_in_the_group_survives(make_cluster):
    _cluster, pve1, config = applied(make_cluster)
    pve1.run(["ip", "link", "add", "stranger0", "type", "bridge"])
    pve1.run(["ip", "link", "set", "stranger0", "group", str(GROUP)])
    res = pve1.fabricd("down", "-c", config, "--verbose")
    assert res.rc == 0, str(res)
    assert "as interface group" not in res.stderr, res.stderr
    links = pve1.links()
    assert "stranger0" in links and group_of(links["stranger0"]) == GROUP
    assert not OWNED & set(links)
    assert pve1.owned_links() == []


def test_down_without_a_definition_by_cluster_name(make_cluster):
    """A lost or broken definition does not keep fabricd's objects on a node:
    `down --cluster NAME` removes what is marked as that cluster's (links, the
    fabric and its wireguard-go, the guard), nothing of another cluster's."""
    cluster, pve1, config = applied(make_cluster)
    broken = f"{cluster.tmpdir}/broken.json"
    with open(broken, "w") as f:
        f.write('{"broken')
    pve1.run(["ip", "link", "add", "vnet999", "type", "bridge"])
    pve1.run(["ip", "link", "set", "vnet999", "alias", "fabricd:another"])
    assert pve1.fabricd("down", "-c", broken).rc == 1
    res = pve1.fabricd("down", "-c", broken, "--cluster", "another-one")
    assert res.rc == 0, res
    assert OWNED <= set(pve1.links()), "down of another cluster removed this one's links"
    res = pve1.fabricd("down", "-c", broken, "--cluster", "Not/A-name")
    assert res.rc == 1 and "is not a cluster name" in res.stderr, res
    res = pve1.fabricd("down", "-c", broken, "--cluster", cluster.cluster_name)
    assert res.rc == 0, res
    links = pve1.links()
    assert not OWNED & set(links) and "wgfab0" not in links, sorted(links)
    assert "vnet999" in links, "down removed a link of another cluster"
    assert pve1.run(["nft", "list", "table", "inet", "fabricd"], check=False).returncode != 0
    assert not [name for _pid, name in pve1.processes() if name == "wireguard-go"]
    assert pve1.fabricd("plan", "-c", config).rc == 2
