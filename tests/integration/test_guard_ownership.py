# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: fabricd deletes `inet fabricd` only once it knows the table is its own.

        pve1 (one node is enough: the guard is per node)
        nftables: inet fabricd   <- someone else's, or fabricd's own

Replacing the guard is one transaction that starts with `delete table inet
fabricd`, so a table that fabricd failed to read must never be planned as
missing. The listing is made unreadable by a preloaded shim that turns
fabricd's `list table inet fabricd` into a command nft refuses (the
transaction that would delete the table still reaches the kernel untouched):
apply must fail, build nothing, and leave the table exactly as it was.
"""

import json
import os
import shutil
import subprocess

import pytest

from fabtest import wait_until, zone

pytestmark = [pytest.mark.netns]

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <linux/netlink.h>
struct mnl_socket;
struct mnl_socket *mnl_socket_open2(int bus, int flags)
{
	struct mnl_socket *(*real)(int, int) = dlsym(RTLD_NEXT, "mnl_socket_open2");
	if (bus == NETLINK_NETFILTER) {
		errno = EACCES;
		return NULL;
	}
	return real(bus, flags);
}
"""


@pytest.fixture(scope="module")
def unreadable_listing(tmp_path_factory):
    cc = shutil.which("cc")
    if not cc:
        pytest.skip("no C compiler for the listing shim")
    d = tmp_path_factory.mktemp("nftshim")
    (d / "shim.c").write_text(SHIM)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(d / "shim.so"), str(d / "shim.c"), "-ldl"],
                   check=True)
    # a sanitized fabricd wants its runtime first; the shim does not care
    return {"LD_PRELOAD": str(d / "shim.so"), "ASAN_OPTIONS": "verify_asan_link_order=0"}


def nft_table(node):
    res = node.run(["nft", "-j", "list", "table", "inet", "fabricd"], check=False)
    return json.loads(res.stdout)["nftables"] if res.returncode == 0 else None


def test_foreign_table_with_unreadable_listing_is_untouched(make_cluster, unreadable_listing):
    cluster = make_cluster(2)
    pve1 = cluster.node("pve1")
    pve1.run(["nft", "add table inet fabricd { comment \"someone else\"; }"])
    pve1.run(["nft", "add chain inet fabricd theirs { type filter hook input priority 0; }"])
    pve1.run(["nft", "add rule inet fabricd theirs udp dport 4789 counter accept"])
    before = nft_table(pve1)
    path = cluster.write_definition(cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])]))
    res = pve1.fabricd("apply", "-c", path, env=unreadable_listing)
    assert res.rc == 1, res
    assert "inet fabricd: cannot be read" in res.stderr, res
    assert nft_table(pve1) == before, "a table fabricd could not read was replaced"
    assert pve1.link("wgfab0") is None and pve1.link("vnet100") is None, "built without a guard"
    res = pve1.fabricd("down", "-c", path, env=unreadable_listing)
    assert res.rc == 1 and nft_table(pve1) == before, res
    # readable again: the ownership check refuses it as before
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 1 and "not owned" in res.stderr, res
    assert nft_table(pve1) == before


def test_own_table_with_unreadable_listing_is_untouched(make_cluster, unreadable_listing):
    cluster = make_cluster(2)
    pve1 = cluster.node("pve1")
    path = cluster.write_definition(cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])]))
    assert pve1.fabricd("apply", "-c", path).rc == 0
    before = nft_table(pve1)
    assert before
    # a changed definition would replace the guard, if fabricd could read it
    path = cluster.write_definition(cluster.definition(zones=[zone("red", "plain", [("vnet100", 100), ("vnet101", 101)])]))
    res = pve1.fabricd("apply", "-c", path, env=unreadable_listing)
    assert res.rc == 1, res
    assert nft_table(pve1) == before, "the guard changed although it could not be read"
    assert pve1.link("vnet101") is None
    assert pve1.fabricd("apply", "-c", path).rc == 0
    assert pve1.link("vnet101") is not None


def test_another_table_of_the_guards_name_is_a_conflict_status_shows(make_cluster):
    """A table `inet fabricd` that is not fabricd's (put there after fabricd's went): apply
    refuses and changes nothing, as before; status showed nothing at all (exit 1), where
    it shows every other conflict with the node's state; the way out it named ("rename
    it") does not exist in nftables."""
    cluster = make_cluster(2)
    pve1 = cluster.node("pve1")
    path = cluster.write_definition(cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])]))
    assert pve1.fabricd("apply", "-c", path).rc == 0
    pve1.run(["nft", "delete table inet fabricd; add table inet fabricd "
              "{ comment \"someone-else\"; }"])
    before = nft_table(pve1)
    said = ("nftables table inet fabricd: exists but is not owned by fabricd:fabtest (comment "
            "\"someone-else\"); fabricd never replaces a table it did not make: move what it "
            "holds to a table of another name and remove it (nft delete table inet fabricd)")
    res = pve1.fabricd("apply", "-c", path)
    assert res.rc == 1 and f"error: {said}" in res.stderr and "rename" not in res.stderr, res
    assert nft_table(pve1) == before
    res = pve1.fabricd("status", "-c", path)
    assert res.rc == 0 and "CONFLICTS that stop every change" in res.stdout, res
    assert f"conflict: {said}" in res.stdout and "vnet vnet100" in res.stdout, res
    doc = json.loads(pve1.fabricd("status", "-c", path, "--json").stdout)
    assert doc["guard"]["present"] is True and doc["guard"]["owned"] is False, doc["guard"]
    assert doc["in_sync"] is False and any(said in c for c in doc["conflicts"]), doc


def test_the_daemon_reports_no_guard_when_another_takes_its_name(make_cluster):
    """The same under `fabricd run --metrics-file`: the daemon leaves that table alone
    and says the guard is gone (fabricd_guard_present 0; it stayed 1, a table of that
    name being there), until the table is fabricd's again."""
    from fabtest.daemon import Daemon

    cluster = make_cluster(2)
    pve1 = cluster.node("pve1")
    metrics = f"{cluster.tmpdir}/pve1.prom"
    daemon = Daemon(cluster, pve1, extra_args=["--metrics-file", metrics,
                                               "--metrics-file-interval", "1",
                                               "--probe-interval", "0"])
    daemon.write(cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])]))
    daemon.start()
    try:
        def present():
            with open(metrics) as f:
                lines = [line for line in f if line.startswith("fabricd_guard_present ")]
            return lines[0].split()[1] if lines else None
        wait_until(lambda: present() == "1", timeout=10, what="guard present")
        pve1.run(["nft", "delete table inet fabricd; add table inet fabricd "
                  "{ comment \"someone-else\"; }"])
        wait_until(lambda: present() == "0", timeout=10, what="no guard of this cluster")
        assert "someone-else" in pve1.run(["nft", "list", "table", "inet", "fabricd"]).stdout
        pve1.run(["nft", "delete", "table", "inet", "fabricd"])
        wait_until(lambda: present() == "1", timeout=10, what="the guard made again")
    finally:
        daemon.stop()
