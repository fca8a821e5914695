# SPDX-License-Identifier: GPL-2.0-or-later
"""The retire stage of a transport switch is ordinary plan ops (issue #10).

Two nodes, zone red (vnet100) switched plain -> secure on pve1 with one-shot
`apply --grace 4` and no daemon running. The old device vx100 then goes
through its stages only when a command plans and applies them:

  - right after the switch, `plan` lists both later steps with their due
    times: the bridge port turning receive-only (half the grace) and the
    deletion (the whole grace); nothing is due yet, so it exits 0;
  - `plan` asked with another --grace keeps the grace the deadline was set
    with (recorded in the alias, #11 item 9);
  - nothing happens to vx100 by itself: its port still learns when the
    receive-only step falls due, and `plan` then shows it as due;
  - `apply` performs it (learning and flooding off), and after the deadline
    the next `apply` removes vx100; then nothing is left to plan.
"""

import re

import pytest

from fabtest import wait_until, zone

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

GRACE = 4
LATER_QUIET = re.compile(r"^later, in (\d+) s: ~ vxlan vx100: change \(receive-only until it is "
                         r"removed in (\d+) s", re.M)
LATER_REMOVE = re.compile(r"^later, in (\d+) s: - vxlan vx100: remove \(vnet vnet100 moved to "
                          r"secure transport, grace period over\)", re.M)
DUE_QUIET = re.compile(r"^~ vxlan vx100: change \(receive-only", re.M)
DUE_REMOVE = re.compile(r"^- vxlan vx100: remove", re.M)


def port_flags(node, dev):
    data = node.link(dev)["linkinfo"]["info_slave_data"]
    return {k: data[k] for k in ("learning", "flood", "mcast_flood", "bcast_flood")}


def test_plan_lists_and_apply_performs_the_retire_stage(make_cluster):
    cluster = make_cluster(2)
    pve1 = cluster["pve1"]
    plain = cluster.write_definition(
        cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])]))
    cluster.apply_all(plain)
    secure = cluster.write_definition(
        cluster.definition(zones=[zone("red", "secure", [("vnet100", 100)])]),
        path=f"{cluster.tmpdir}/secure.json")

    res = pve1.fabricd("apply", "-c", secure, "--grace", str(GRACE))
    assert res.rc == 0, res
    alias = pve1.link("vx100")["ifalias"]
    assert re.search(rf" retire-after=\d+ grace={GRACE} at=\d+$", alias), alias
    assert pve1.link("vs100"), "the new device is made at once"

    for grace in (GRACE, 30):  # the recorded grace decides, not the one asked now
        res = pve1.fabricd("plan", "-c", secure, "--grace", str(grace))
        assert res.rc == 0, f"nothing is due yet:\n{res}"
        quiet, remove = LATER_QUIET.search(res.stdout), LATER_REMOVE.search(res.stdout)
        assert quiet and remove, f"plan lacks the later retire steps:\n{res.stdout}"
        assert int(quiet.group(1)) <= GRACE // 2 < int(remove.group(1)) <= GRACE, res.stdout
    assert all(port_flags(pve1, "vx100").values()), "the old port still learns and floods"

    def due(pattern):
        res = pve1.fabricd("plan", "-c", secure)
        return res.stdout if res.rc == 2 and pattern.search(res.stdout) else None

    out = wait_until(lambda: due(DUE_QUIET), timeout=GRACE, interval=0.2,
                     what="the receive-only step due")
    assert LATER_REMOVE.search(out), f"the deletion is still later:\n{out}"
    assert all(port_flags(pve1, "vx100").values()), "changed outside the plan"
    assert pve1.fabricd("apply", "-c", secure).rc == 0
    assert not any(port_flags(pve1, "vx100").values()), "receive-only after apply"

    wait_until(lambda: due(DUE_REMOVE), timeout=GRACE, interval=0.2, what="the deletion due")
    assert pve1.link("vx100"), "removed outside the plan"
    assert pve1.fabricd("apply", "-c", secure).rc == 0
    assert pve1.link("vx100") is None, "vx100 removed by the apply after its deadline"
    res = pve1.fabricd("plan", "-c", secure)
    assert res.rc == 0 and "vx100" not in res.stdout, res
