# SPDX-License-Identifier: GPL-2.0-or-later
"""A pass deletes the links it removes as interface groups, and only them.

The kernel waits for RCU once per link it unregisters alone (about 30 ms
here); a group of links deleted in one RTM_DELLINK waits once. `apply` (and
the daemon's passes) therefore move the links one phase deletes into
interface group 64178 (kinds/link.h LINK_GROUP_DELETING), check with a dump
that the group holds exactly them, and delete the group; while wireguard-go
runs, in groups of 8 links (its link-event pacing). A link someone else put
in that group is never deleted: the links then go one by one, and a warning
names the stranger. Either way everything removed is gone and the next plan
is empty.
"""
import pytest

from fabtest import zone

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

DELETING = 64178
N_VNETS = 40
GONE = zone("tenant-gone", "plain", [(f"gone{i}", 3000 + i) for i in range(N_VNETS)])
KEPT = zone("tenant-kept", "secure", [("kept1", 4001), ("kept2", 4002)])
# a plain vnet of a stable-MTU zone has its secure standby as well
GONE_LINKS = ({f"gone{i}" for i in range(N_VNETS)} | {f"vx{3000 + i}" for i in range(N_VNETS)}
              | {f"vs{3000 + i}" for i in range(N_VNETS)})
KEPT_LINKS = {"kept1", "kept2", "vs4001", "vs4002"}


def remove_zone(make_cluster, stranger=False):
    """pve1 with both zones, then `apply --verbose` of the kept zone alone."""
    cluster = make_cluster(2)
    pve1 = cluster["pve1"]
    config = cluster.write_definition(cluster.definition(zones=[GONE, KEPT]))
    cluster.apply_all(config, nodes=["pve1"])
    assert GONE_LINKS | KEPT_LINKS <= set(pve1.links())
    if stranger:
        pve1.run(["ip", "link", "add", "stranger0", "type", "bridge"])
        pve1.run(["ip", "link", "set", "stranger0", "group", str(DELETING)])
    config = cluster.write_definition(cluster.definition(zones=[KEPT]))
    res = pve1.fabricd("apply", "-c", config, "--verbose")
    assert res.rc == 0, str(res)
    links = pve1.links()
    assert not GONE_LINKS & set(links), sorted(GONE_LINKS & set(links))
    assert KEPT_LINKS <= set(links), sorted(KEPT_LINKS - set(links))
    assert not [n for n, l in links.items() if n != "stranger0" and l.get("group") == str(DELETING)]
    plan = pve1.fabricd("plan", "-c", config)
    assert plan.rc == 0, f"not converged after the removal:\n{plan}"
    return res, links, cluster.wg_backend


def test_removed_zone_goes_as_groups(make_cluster):
    res, _links, backend = remove_zone(make_cluster)
    grouped = [line for line in res.stderr.splitlines()
               if f"deleted as interface group {DELETING}" in line]
    sizes = [int(line.split("links: ")[1].split()[0]) for line in grouped]
    assert sum(sizes) == len(GONE_LINKS), res.stderr
    if backend == "userspace":
        # wireguard-go runs: groups of at most 8 links (its link-event pacing)
        assert max(sizes) <= 8, res.stderr
    else:
        # kernel WireGuard needs no pacing: all 120 links in one RTM_DELLINK
        assert sizes == [len(GONE_LINKS)], res.stderr
    # the plan's text is unchanged: every link's delete is still shown
    removes = [line for line in res.stderr.splitlines() if line.endswith(": remove (not in the definition)")]
    assert len(removes) == len(GONE_LINKS), res.stderr
    assert "not fabricd's" not in res.stderr, res.stderr


def test_stranger_in_the_deleting_group_survives(make_cluster):
    res, links, _backend = remove_zone(make_cluster, stranger=True)
    assert f"deleted as interface group {DELETING}" not in res.stderr, res.stderr
    warned = [line for line in res.stderr.splitlines() if "stranger0" in line]
    assert warned and "not fabricd's" in warned[0], res.stderr
    assert "stranger0" in links and links["stranger0"].get("group") == str(DELETING)
