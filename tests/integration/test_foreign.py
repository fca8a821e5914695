# SPDX-License-Identifier: GPL-2.0-or-later
"""Foreign state: what an operator or a hypervisor made by hand survives fabricd.

fabricd changes only objects that carry its mark. On pve1, beside its own
objects, there are (handmade.HandObjects plus what the tests add):

    hand-dummy0, hand0 (198.51.100.1/24), hvx9000 with FDB entries,
    nftables table inet hand                       links of their own
    tap<N>i0 on vnet100, vnet101, vnet200          guest ports on fabricd's bridges
    10.100.0.254/24 on vnet100                     a host address on a fabricd bridge
    02:00:00:00:01:00 on vx100 -> 192.0.2.50       non-zero MAC entries on fabricd's
    02:00:00:00:02:00 on vs200 -> 10.255.0.50      VXLAN devices
    02:00:00:00:03:00 static on tap of vnet200     a static entry in a fabricd bridge

Each must survive every apply, a vnet removal, a transport switch (with
--grace 0 and with the default grace) and down, except where the object it
lives on is removed by design:
  - a removed vnet's bridge goes, so its guest port is detached: the port
    itself stays (plan and apply warn, naming the port);
  - a switched vnet's old VXLAN device goes (at once with --grace 0, after
    the grace otherwise), and entries made on that device go with it;
  - down removes every owned device: guest ports are detached, entries on
    owned devices go with them; everything on foreign links stays.
"""

import pytest

from fabtest import vnet, zone
from handmade import HandObjects, KernelView, convergence_problems

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

BRIDGE_ADDRESS = "10.100.0.254/24"
VX_ENTRY = ("02:00:00:00:01:00", "192.0.2.50")
VS_ENTRY = ("02:00:00:00:02:00", "10.255.0.50")
PORT_ENTRY = "02:00:00:00:03:00"


def foreign_zones(plain_transport="plain", drop=()):
    """tenant-a (vnet100, vnet101; `plain_transport`) and tenant-b (vnet200, secure)."""
    a = [v for v in (vnet("vnet100", 100), vnet("vnet101", 101)) if v["name"] not in drop]
    return [zone("tenant-a", plain_transport, a), zone("tenant-b", "secure", [vnet("vnet200", 200)])]


class ForeignSetup:
    """A two-node cluster, pve1 with hand-made objects beside fabricd's (module doc)."""

    def __init__(self, make_cluster):
        self.cluster = make_cluster(2)
        self.pve1, self.pve2 = self.cluster.nodes
        self.hand = HandObjects.create(self.pve1)
        self.definition = None
        self.path = None
        self.apply(foreign_zones())
        self.guests = {}  # bridge -> Guest
        for i, bridge in enumerate(("vnet100", "vnet101", "vnet200"), start=1):
            guest = self.cluster.add_guest(self.pve1, bridge, f"10.{i}.0.1/24")
            self.hand.add_guest_port(guest)
            self.guests[bridge] = guest
        self.hand.add_address("vnet100", BRIDGE_ADDRESS)
        self.hand.add_fdb("vx100", *VX_ENTRY)
        self.hand.add_fdb("vs200", *VS_ENTRY)
        self.hand.add_fdb(self.guests["vnet200"].tap, PORT_ENTRY)

    def apply(self, zones, *args):
        """Write the definition with zones and apply it on both nodes (pve1 with args)."""
        self.definition = self.cluster.definition(zones=zones)
        self.path = self.cluster.write_definition(self.definition)
        for node in (self.pve2, self.pve1):
            res = node.fabricd("apply", "-c", self.path, *(args if node is self.pve1 else ()))
            assert res.rc == 0, f"{node.name}: {res}"

    def assert_state(self, when, attached, retiring=()):
        """pve1 converged (plan empty), hand-made objects intact, guest ports where expected.

        attached: {bridge: guest bridge expected to still hold its guest port};
        the others' ports must exist, unattached. retiring: old VXLAN devices
        in their grace period (owned, with a retire note).
        """
        plan = self.pve1.fabricd("plan", "-c", self.path)
        assert plan.rc == 0, f"{when}: plan not empty: {plan}"
        view = KernelView(self.pve1)
        problems = convergence_problems(view, self.definition, self.pve1.wg_dump())
        if retiring:
            note = f"links with other fabricd marks or notes: {sorted(retiring)}"
            assert note in problems, f"{when}: expected {sorted(retiring)} retiring: {problems}"
            problems.remove(note)
        assert problems == [], f"{when}: pve1 not converged: {problems}"
        self.hand.assert_intact(view, when=when)
        for bridge, guest in self.guests.items():
            want = bridge if bridge in attached else None
            assert view.master(guest.tap) == want, (
                f"{when}: guest port {guest.tap} has master {view.master(guest.tap)}, "
                f"expected {want}")
        return view


@pytest.fixture
def setup(make_cluster):
    return ForeignSetup(make_cluster)


ALL_BRIDGES = ("vnet100", "vnet101", "vnet200")


def test_foreign_objects_survive_reapply_vnet_removal_and_down(setup):
    setup.assert_state("after the guests and hand entries were added", ALL_BRIDGES)

    res = setup.pve1.fabricd("apply", "-c", setup.path)
    assert res.rc == 0, str(res)
    setup.assert_state("after a second apply", ALL_BRIDGES)

    tap = setup.guests["vnet101"].tap
    warning = (f"warning: vnet101: goes (its vnet is no longer on this node) with 1 port of "
               f"guests or others on it ({tap}): they are left on no bridge")
    planned = setup.pve1.fabricd("plan", "-c", setup.cluster.write_definition(
        setup.cluster.definition(zones=foreign_zones(drop=("vnet101",)))))
    assert planned.rc == 2 and warning in planned.stderr, planned
    assert "vnet100" not in planned.stderr and "vnet200" not in planned.stderr, planned
    setup.apply(foreign_zones(drop=("vnet101",)))
    view = setup.assert_state("after removing vnet101", ("vnet100", "vnet200"))
    assert "vnet101" not in view.links and "vx101" not in view.links

    res = setup.pve1.fabricd("down", "-c", setup.path)
    assert res.rc == 0, str(res)
    for bridge in ("vnet100", "vnet200"):
        assert f"warning: {bridge}: goes (down) with 1 port of guests or others on it " \
            f"({setup.guests[bridge].tap}): they are left on no bridge, without network, " \
            "also once an apply makes the bridge again" in res.stderr, res
    view = KernelView(setup.pve1)
    assert view.marked() == set(), f"owned links left after down: {sorted(view.marked())}"
    # entries and the address lived on fabricd's devices, which are gone now
    for dev in ("vnet100", "vx100", "vs200", setup.guests["vnet200"].tap):
        setup.hand.forget_fdb(dev)
    setup.hand.forget_address("vnet100")
    setup.hand.assert_intact(view, when="after down")
    assert all(view.master(g.tap) is None for g in setup.guests.values())


def test_a_bridge_renamed_by_hand_is_not_named_back_by_a_one_shot_apply(setup):
    """In the kernel's state alone a bridge renamed by hand looks like a vnet removed and
    its VNI given to a new vnet: naming it back would put the old tenant's guests into the
    new one (test_vni_reuse.py). A one-shot plan makes the vnet's bridge anew and says
    whose ports the renamed one takes with it (the daemon, which saw the rename, names it
    back: test_daemon_drift.py)."""
    # one ip, three requests: Debian 12's kernel renames only a link that is down
    setup.pve1.run(["sh", "-c", "printf 'link set vnet100 down\\nlink set vnet100 name "
                    "hand100\\nlink set hand100 up\\n' | ip -batch -"])
    planned = setup.pve1.fabricd("plan", "-c", setup.path)
    assert planned.rc == 2, planned
    assert "+ bridge vnet100: create (mtu 1390)" in planned.stdout, planned
    assert "- bridge hand100: remove (not in the definition)" in planned.stdout, planned
    assert f"warning: hand100: goes (no vnet of the definition has its name: its vnet was " \
        f"removed or renamed; a bridge renamed by hand is named back only by a daemon that " \
        f"saw the rename) with 1 port of guests or others on it " \
        f"({setup.guests['vnet100'].tap})" in planned.stderr, planned


@pytest.mark.parametrize("grace", ["0", "default"])
def test_foreign_objects_survive_a_transport_switch(setup, grace):
    args = ("--grace", "0") if grace == "0" else ()
    before = KernelView(setup.pve1).ifindexes()

    # tenant-a: plain -> secure; vx100/vx101 give way to vs100/vs101
    setup.apply(foreign_zones("secure"), *args)
    if args:
        setup.hand.forget_fdb("vx100")  # the device goes at once, entries made on it too
    retiring = () if args else ("vx100", "vx101")
    view = setup.assert_state(f"after the switch to secure (grace {grace})", ALL_BRIDGES, retiring)
    for bridge in ALL_BRIDGES:
        assert view.ifindexes()[bridge] == before[bridge], f"{bridge} was re-created"
    assert view.fdb_entries("vs200") >= {VS_ENTRY}, "the other zone's hand entry was touched"
    if args:
        assert "vx100" not in view.links
    else:
        # still receiving during the grace period: only the remotes moved
        assert view.fdb_entries("vx100") >= {VX_ENTRY}
        assert view.fdb_remotes("vx100") == []

    # and back: secure -> plain
    setup.apply(foreign_zones("plain"), *args)
    if not args:
        # wanted again within its grace period: the same vx100, hand entry and all,
        # listening while vs100 still sends until its own grace period ends
        view = KernelView(setup.pve1)
        assert view.ifindexes()["vx100"] == before["vx100"]
        assert view.fdb_entries("vx100") >= {VX_ENTRY}
        assert " secure-until=" in view.links["vs100"]["ifalias"], view.links["vs100"]
        setup.hand.assert_intact(view, when="while vs100 holds")
        res = setup.pve1.fabricd("apply", "-c", setup.path, "--grace", "0")  # the stage ends
        assert res.rc == 0, str(res)
    view = setup.assert_state(f"after the switch back to plain (grace {grace})", ALL_BRIDGES)
    for bridge in ALL_BRIDGES:
        assert view.ifindexes()[bridge] == before[bridge], f"{bridge} was re-created"
    if not args:
        assert view.ifindexes()["vx100"] == before["vx100"]
        assert view.fdb_entries("vx100") >= {VX_ENTRY}

    res = setup.pve1.fabricd("down", "-c", setup.path)
    assert res.rc == 0, str(res)
    for bridge in ("vnet100", "vnet200"):
        assert f"warning: {bridge}: goes (down) with 1 port of guests or others on it " \
            f"({setup.guests[bridge].tap}): they are left on no bridge, without network, " \
            "also once an apply makes the bridge again" in res.stderr, res
    view = KernelView(setup.pve1)
    assert view.marked() == set(), f"owned links left after down: {sorted(view.marked())}"
    for dev in ("vnet100", "vx100", "vs200", setup.guests["vnet200"].tap):
        setup.hand.forget_fdb(dev)
    setup.hand.forget_address("vnet100")
    setup.hand.assert_intact(view, when="after down")
