# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: a link someone else creates under a wanted name is never marked.

        pve1: fabricd apply and down in a loop; beside them a racer that
        creates veth links named like fabricd's bridges and VXLAN devices,
        keeps each for a moment, and deletes it again

fabricd reads the kernel, plans, and creates a missing link; its owner mark
and "up" travel in the same sendmsg. When the racer takes the name after
fabricd's read, fabricd's create fails with EEXIST. The mark must not then
land on the racer's link (a later pass would adopt or delete it): the
follow-up messages address the index the create asked for, not the name.
The racer looks at its own link's alias before deleting it and reports any
link that carries fabricd's mark.
"""

import time

import pytest

from fabtest import zone

pytestmark = [pytest.mark.netns, pytest.mark.vxlan]

RACE_SECONDS = 8
VNIS = (100, 101, 102, 103)

# holds the name briefly, then leaves it free for longer: fabricd's read
# mostly finds it free, and its create sometimes finds it taken
RACER = r"""
while :; do
  for n in "$@"; do
    if ip link add "$n" type veth peer name "rc-$n" 2>/dev/null; then
      sleep 0.05
      alias=$(ip -o link show dev "$n" type veth 2>/dev/null | grep -o 'alias fabricd:[^ ]*')
      [ -n "$alias" ] && echo "MARKED $n $alias"
      ip link del "$n" type veth 2>/dev/null
    fi
    sleep 0.1
  done
done
"""


def test_racing_creator_is_never_marked(make_cluster):
    cluster = make_cluster(2)
    pve1 = cluster.node("pve1")
    definition = cluster.definition(
        zones=[zone("red", "plain", [(f"vnet{v}", v) for v in VNIS])])
    path = cluster.write_definition(definition)
    names = [f"vnet{v}" for v in VNIS] + [f"vx{v}" for v in VNIS]
    racer = pve1.run_bg(["bash", "-c", RACER, "racer", "vnet100", "vx101"])
    applied = 0
    try:
        stop = time.monotonic() + RACE_SECONDS
        while time.monotonic() < stop:
            res = pve1.fabricd("apply", "-c", path)
            applied += res.rc == 0
            # refused (the racer holds a name) or failed at the create: both are fine
            assert res.rc in (0, 1), res
            res = pve1.fabricd("down", "-c", path)
            # a marked foreign link is what down would try to remove
            assert res.rc == 0, f"down touched a link it did not make: {res}"
    finally:
        racer.terminate()
        racer.wait(timeout=10)
    with open(racer.log_path) as f:
        log = f.read()
    assert "MARKED" not in log, f"a foreign link carried fabricd's mark:\n{log[:2000]}"
    # the racer may have been stopped holding a name: remove what it left
    for n in names:
        if (pve1.link(n) or {}).get("linkinfo", {}).get("info_kind") == "veth":
            assert not (pve1.link(n).get("ifalias") or "").startswith("fabricd:"), pve1.link(n)
            pve1.run(["ip", "link", "del", n])
    # fabricd still builds the node
    assert pve1.fabricd("apply", "-c", path).rc == 0
    assert all(pve1.link(n) for n in names)
    assert applied >= 1, "no apply got through the racer at all"
