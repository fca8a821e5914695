# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: a VNI handed from one vnet to another is not a transport switch.

                       sw: br0
          +--------------+--------------+
        pve1           pve2           pve3 (stays on the old definition)
   A: tenant-plain  vnet100 (VNI 100, plain)     tenant-secure vnet200 (VNI 200, secure)
   B: tenant-secure vnet200 (VNI 200), vnet250 (VNI 100): the plain tenant is gone and its
      VNI is given to a new secure vnet

vnet250 was never plain, so nothing of a switch's grace period applies to it:
the removed vnet's plain device vx100 goes at once (it is not put into the
new secure bridge), the guard takes no plain VXLAN of VNI 100, and a guest
of the old plain tenant on a node still on A cannot reach the new secure
tenant in clear text, whatever --grace says. (Before 2026-12-05 fabricd took
the old device for the new vnet's "other transport" by its name vx100 and
kept it for the grace period: the old tenant's guest reached the new one.)
"""

import pytest

from fabtest import wait_until, zone

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]


def test_a_new_secure_vnet_on_a_removed_plain_vni_takes_no_clear_text(make_cluster):
    cluster = make_cluster(3)
    before = cluster.definition(zones=[zone("tenant-plain", "plain", [("vnet100", 100)]),
                                       zone("tenant-secure", "secure", [("vnet200", 200)])])
    after = cluster.definition(zones=[zone("tenant-secure", "secure",
                                           [("vnet200", 200), ("vnet250", 100)])])
    path_before = cluster.write_definition(before, f"{cluster.tmpdir}/before.json")
    path_after = cluster.write_definition(after, f"{cluster.tmpdir}/after.json")
    cluster.apply_all(path_before)
    old_tenant = cluster.add_guest("pve3", "vnet100", "10.9.0.3/24")
    was_there = cluster.add_guest("pve1", "vnet100", "10.9.0.11/24")
    wait_until(lambda: old_tenant.ping(was_there), timeout=15, what="vnet100 pve3 -> pve1")
    pve1, pve2 = cluster.node("pve1"), cluster.node("pve2")

    plan = pve1.fabricd("plan", "-c", path_after, "--grace", "30")
    assert plan.rc == 2, plan
    assert "moved to secure transport" not in plan.stdout and "later" not in plan.stdout, plan
    assert "- vxlan vx100: remove (not in the definition; its VNI 100 is vnet vnet250's now)" \
        in plan.stdout, plan.stdout
    # the guard takes no clear text of VNI 100 for the secure vnet: nothing to warn of
    assert "was vnet vnet100's" not in plan.stderr, plan.stderr
    for node in (pve1, pve2):
        res = node.fabricd("apply", "-c", path_after, "--grace", "30")
        assert res.rc == 0, res
        assert "vx100" not in node.links(), f"{node.name} kept the old tenant's device"
        again = node.fabricd("plan", "-c", path_after, "--grace", "30")
        assert again.rc == 0 and "later" not in again.stdout, again

    new_tenant = cluster.add_guest("pve1", "vnet250", "10.9.0.1/24")
    peer = cluster.add_guest("pve2", "vnet250", "10.9.0.2/24")
    wait_until(lambda: new_tenant.ping(peer), timeout=15, what="vnet250 pve1 -> pve2")
    reached = old_tenant.ping(new_tenant, count=3)
    assert reached.received == 0, "the old plain tenant reached the new secure vnet in clear text"


@pytest.mark.parametrize("old_transport", ["plain", "secure"])
def test_a_vni_given_to_another_vnet_in_one_change_is_said(make_cluster, old_transport):
    """vold removed and its VNI given to vnew in one edit (both plain, or secure -> plain):
    until every node has applied it, the old tenant's frames from nodes that have not
    arrive in the new tenant's bridge (the same VNI; nothing tells them apart). plan and
    apply say so, naming both vnets (they said nothing)."""
    cluster = make_cluster(2)
    before = cluster.definition(zones=[zone("old", old_transport, [("vold", 201)])])
    after = cluster.definition(zones=[zone("new", "plain", [("vnew", 201)])])
    path_before = cluster.write_definition(before, f"{cluster.tmpdir}/before.json")
    path_after = cluster.write_definition(after, f"{cluster.tmpdir}/after.json")
    cluster.apply_all(path_before)
    pve1 = cluster.node("pve1")
    device = "vx201" if old_transport == "plain" else "vs201"
    for command in ("plan", "apply"):
        res = pve1.fabricd(command, "-c", path_after)
        assert res.rc == (2 if command == "plan" else 0), res
        assert f"warning: vnew: its VNI 201 was vnet vold's on this node ({device} is in " \
            "bridge vold): if that is another tenant, until every node has applied this " \
            "change its guests' frames from nodes that have not arrive here; give a VNI to " \
            "another vnet only once its old vnet is gone from every node" in res.stderr, res
    res = pve1.fabricd("plan", "-c", path_after)
    assert res.rc == 0 and "warning" not in res.stderr, res


def test_a_vni_handed_over_between_existing_bridges_is_said_too(make_cluster):
    """Zones on Proxmox's bridges ("bridges": "existing"): the same handover, said the same
    way (the old bridge is not fabricd's, and it was passed over in silence)."""
    cluster = make_cluster(2)
    zones = []
    for name, vnet in (("old", "vold"), ("new", "vnew")):
        z = zone(name, "plain", [(vnet, 201)])
        z["bridges"] = "existing"
        zones.append(z)
    before = cluster.write_definition(cluster.definition(zones=[zones[0]]),
                                      f"{cluster.tmpdir}/before.json")
    after = cluster.write_definition(cluster.definition(zones=[zones[1]]),
                                     f"{cluster.tmpdir}/after.json")
    pve1 = cluster.node("pve1")
    for bridge in ("vold", "vnew"):
        pve1.run(["ip", "link", "add", bridge, "type", "bridge"])
        pve1.run(["ip", "link", "set", bridge, "up"])
    assert pve1.fabricd("apply", "-c", before).rc == 0
    res = pve1.fabricd("plan", "-c", after)
    assert res.rc == 2 and "vx201: change (into bridge vnew)" in res.stdout, res
    assert "warning: vnew: its VNI 201 was vnet vold's on this node (vx201 is in bridge vold)" \
        in res.stderr, res


def test_a_vni_of_a_vnet_in_its_switch_to_secure_is_said_when_handed_over(make_cluster):
    """The old plain vnet in the middle of its switch to secure: its secure device sends (has
    remotes) beside the retiring plain one. A new secure vnet on that VNI takes the old
    tenant's secure frames from nodes that have not applied: warned (the plain port in the
    old bridge made it pass for a mute standby)."""
    cluster = make_cluster(2)
    plain = cluster.write_definition(cluster.definition(zones=[zone("za", "plain",
                                                                    [("vold", 401)])]),
                                     f"{cluster.tmpdir}/plain.json")
    secure = cluster.write_definition(cluster.definition(zones=[zone("za", "secure",
                                                                     [("vold", 401)])]),
                                      f"{cluster.tmpdir}/secure.json")
    after = cluster.write_definition(cluster.definition(zones=[zone("zb", "secure",
                                                                    [("vnew", 401)])]),
                                     f"{cluster.tmpdir}/after.json")
    cluster.apply_all(plain)
    for node in cluster.nodes:
        assert node.fabricd("apply", "-c", secure, "--grace", "120").rc == 0
    pve1 = cluster.node("pve1")
    assert pve1.link("vx401") and pve1.fdb_remotes("vs401"), "not mid-switch"
    res = pve1.fabricd("plan", "-c", after, "--grace", "120")
    assert "warning: vnew: its VNI 401 was vnet vold's on this node (vs401 is in bridge " \
        "vold)" in res.stderr, res


def test_a_device_an_operator_put_in_a_bridge_of_theirs_is_no_handover(make_cluster):
    """vx501 moved by hand into the operator's own bridge (no vnet's): drift to repair, not
    a VNI handed over; no such warning."""
    cluster = make_cluster(2)
    path = cluster.write_definition(cluster.definition(zones=[zone("za", "plain",
                                                                   [("vh", 501)])]),
                                    f"{cluster.tmpdir}/def.json")
    cluster.apply_all(path)
    pve1 = cluster.node("pve1")
    pve1.run(["ip", "link", "add", "opbr0", "type", "bridge"])
    pve1.run(["ip", "link", "set", "vx501", "master", "opbr0"])
    res = pve1.fabricd("plan", "-c", path)
    assert res.rc == 2 and "vx501: change (into bridge vh)" in res.stdout, res
    assert "was vnet" not in res.stderr, res
