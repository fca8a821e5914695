# SPDX-License-Identifier: GPL-2.0-or-later
"""Error paths that need a node (scripts/error-coverage.py found no test reaching them):
the daemon given a definition of another cluster name. Each checks the message (what it
names, what to do), that the daemon keeps running, and that nothing was changed."""

import json

import pytest

from fabtest import stays_true, zone
from fabtest.daemon import Daemon

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]


def test_daemon_refuses_a_cluster_rename(make_cluster):
    """A new "cluster" would disown every object fabricd made: the daemon keeps the last
    good definition and says how to rename (down --cluster OLD, then start again)."""
    cluster = make_cluster(2)
    pve1 = cluster["pve1"]
    definition = cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])])
    d1 = Daemon(cluster, pve1, grace=3)
    d1.write(definition)
    d1.start()
    try:
        before = pve1.ifindexes()
        old = definition["cluster"]
        renamed = json.loads(json.dumps(definition))
        renamed["cluster"] = old + "-new"
        mark = d1.mark()
        d1.write(renamed)
        log = d1.wait_log("the last good definition stays in force",
                          f'cluster: the cluster name changed from "{old}" to "{old}-new", '
                          "which would disown every object fabricd made here; stop fabricd, "
                          f"run `fabricd down --cluster {old}`, then start fabricd again",
                          since=mark)
        assert f"error: {d1.path}: not used" in log, log
        stays_true(lambda: d1.running(), 1.0, what="the daemon keeps running")
        assert pve1.ifindexes() == before, "a refused rename changed the kernel"
        assert "vnet100" in pve1.owned_links(old) and not pve1.owned_links(old + "-new")
    finally:
        d1.stop()
        d1.check_log()

