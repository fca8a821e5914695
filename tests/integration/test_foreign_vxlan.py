# SPDX-License-Identifier: GPL-2.0-or-later
"""Foreign VXLAN devices that share, or cannot share, fabricd's UDP ports.

pve1 of two nodes has, beside what the definition asks (vnet100: plain,
VNI 100; vnet200: secure, VNI 200), one VXLAN device made by hand. The
kernel's rules decide what fabricd must do before it changes anything:

- a device of the same VNI, port and family: the kernel refuses a second
  one (EEXIST), so `plan` and `apply` name it and change nothing;
- a device that is up on fabricd's port and family with other receive
  options (external/collect-metadata, vnifilter, gbp): the kernel cannot
  share its socket, so fabricd's device could not come up (EADDRINUSE):
  named, nothing changed (before 2026-12-05 `plan` promised the changes and
  `apply` failed halfway with "Address already in use");
- the same VNI over IPv6, or such a device that is down, or one on another
  port: the kernel allows it, so fabricd builds everything beside it.
"""

import pytest

from fabtest import zone

pytestmark = [pytest.mark.netns, pytest.mark.vxlan]

FOREIGN = "fvx0"
SAME_VNI = "VNI 100 on UDP port 4789 is already used by fvx0"
HELD = "UDP port {port} is held by fvx0, a VXLAN device with other receive options"

CASES = {
    "same VNI, port and family": ("id 100 dstport 4789", True, SAME_VNI),
    "external on 4789": ("external dstport 4789", True, HELD.format(port=4789)),
    "external vnifilter on 4789": ("external vnifilter dstport 4789", True,
                                   HELD.format(port=4789)),
    "gbp on 4789": ("id 5000 dstport 4789 gbp", True, HELD.format(port=4789)),
    "external on the secure port": ("external dstport 4790", True, HELD.format(port=4790)),
    "same VNI over IPv6": ("id 100 dstport 4789 remote 2001:db8::5", True, None),
    "external, down": ("external dstport 4789", False, None),
    "external on another port": ("external dstport 4800", True, None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_foreign_vxlan_device(make_cluster, case):
    args, up, refused = CASES[case]
    cluster = make_cluster(2)
    definition = cluster.definition(zones=[zone("tenant-plain", "plain", [("vnet100", 100)]),
                                           zone("tenant-secure", "secure", [("vnet200", 200)])])
    path = cluster.write_definition(definition)
    pve1 = cluster.node("pve1")
    pve1.run(["ip", "link", "add", FOREIGN, "type", "vxlan", *args.split()])
    if up:
        pve1.run(["ip", "link", "set", FOREIGN, "up"])
    before = pve1.links()
    plan = pve1.fabricd("plan", "-c", path)
    apply = pve1.fabricd("apply", "-c", path)
    if refused:
        for res in (plan, apply):
            assert res.rc == 1 and refused in res.stderr, res
            assert "nothing was changed" in res.stderr, res
        assert pve1.links() == before, "a refused apply changed links"
    else:
        assert plan.rc == 2 and apply.rc == 0, (plan, apply)
        links = pve1.links()
        assert "vx100" in links and "vs200" in links and FOREIGN in links, links
        assert pve1.fabricd("plan", "-c", path).rc == 0


@pytest.mark.parametrize("dstport", [4789, 4790])
def test_foreign_vxlan_traffic_beside_fabricd_passes_its_guard(make_cluster, dstport):
    """A VXLAN segment made by hand between pve1 and pve2 (VNI 500, say an unmanaged
    Proxmox zone) keeps working once fabricd's guard is in place, on the plain port and on
    the secure one (Proxmox's `vxlan-port 4790`): the guard drops what would enter
    fabricd's vnets, and no VNI of another device's (it used to drop every VXLAN on 4789
    that was not a member's of a plain vnet here, and every VXLAN on 4790 that did not come
    through wgfab0, and every one leaving on 4790 by another device)."""
    cluster = make_cluster(2)
    definition = cluster.definition(zones=[zone("tenant-plain", "plain", [("vnet100", 100)]),
                                           zone("tenant-secure", "secure", [("vnet200", 200)])])
    path = cluster.write_definition(definition)
    pve1, pve2 = cluster.nodes
    for node, peer, inner in ((pve1, pve2, "10.50.0.1"), (pve2, pve1, "10.50.0.2")):
        node.run(["ip", "link", "add", FOREIGN, "type", "vxlan", "id", "500", "dstport",
                  str(dstport), "local", node.underlay, "remote", peer.underlay])
        node.run(["ip", "addr", "add", f"{inner}/24", "dev", FOREIGN])
        node.run(["ip", "link", "set", FOREIGN, "up"])
    assert pve1.run(["ping", "-c", "1", "-W", "2", "10.50.0.2"], check=False).returncode == 0
    cluster.apply_all(path)
    assert pve1.fabricd("plan", "-c", path).rc == 0
    res = pve1.run(["ping", "-c", "3", "-i", "0.2", "-W", "2", "10.50.0.2"], check=False)
    assert res.returncode == 0, f"the foreign segment is cut by the guard:\n{res.stdout}"
    # fabricd's own VNIs from a stranger are still dropped (test_guard.py has the rest)
    for chain in ("plain_vxlan_in", "secure_vxlan_in"):
        assert "@th,96,24 != @node_vnis accept" in pve1.run(
            ["nft", "list", "chain", "inet", "fabricd", chain]).stdout
