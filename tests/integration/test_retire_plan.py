# SPDX-License-Identifier: GPL-2.0-or-later
"""The stages of a transport switch are ordinary plan ops (issues #10, #12).

Two nodes, zone red (vnet100), switched with one-shot `apply --grace 4` on
pve1 and no daemon running. Each later stage happens only when a command
plans and applies it:

plain -> secure
  - the apply makes the standby vs100 send and mutes vx100 at once (no
    learning, no flooding: nothing of red leaves in clear text), and marks
    vx100 with its deadline;
  - `plan` lists the deletion with its due time; nothing is due yet, so it
    exits 0, also when asked with another --grace (the recorded one decides);
  - nothing happens to vx100 by itself; after the deadline `plan` shows the
    deletion as due and `apply` performs it; then nothing is left to plan.
secure -> plain
  - vs100 keeps sending until the deadline (note "secure-until="), vx100
    listens; `plan` lists the swap for later; after the deadline `apply`
    makes vx100 send and vs100 the mute standby again.
"""

import json
import re
from pathlib import Path

import jsonschema
import pytest

from fabtest import port_role, wait_until, zone

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

GRACE = 4
LATER_REMOVE = re.compile(r"^later, in (\d+) s: - vxlan vx100: remove \(vnet vnet100 moved to "
                          r"secure transport, grace period over; the guard then drops its "
                          r"members' plain VXLAN of VNI 100\)", re.M)
DUE_REMOVE = re.compile(r"^- vxlan vx100: remove", re.M)
LATER_SWAP = re.compile(r"^later, in (\d+) s: ~ vxlan vx100: change \(sends: takes the flood "
                        r"remotes", re.M)
DUE_SWAP = re.compile(r"^~ vxlan vs100: change \(.*mute", re.M)
PLAN_SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "schemas" /
                          "plan.schema.json").read_text())
STATUS_SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "schemas" /
                            "status.schema.json").read_text())


def vnet_switch(node, path):
    """vnet100's "switch" in `status --json` (checked against the schema), and the text's
    vnet100 line."""
    res = node.fabricd("status", "-c", path, "--json")
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, STATUS_SCHEMA)
    (vnet,) = [v for z in doc["zones"] for v in z["vnets"] if v["name"] == "vnet100"]
    text = node.fabricd("status", "-c", path).stdout
    (line,) = [ln for ln in text.splitlines() if ln.strip().startswith("vnet vnet100 ")]
    return vnet["switch"], line


def plan_json(node, path, *args):
    """`plan --json`: its exit status and its document, checked against the schema."""
    res = node.fabricd("plan", "-c", path, "--json", *args)
    assert res.rc in (0, 2), res
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, PLAN_SCHEMA)
    assert doc["node"] == node.name and doc["in_sync"] == (res.rc == 0), res
    return res.rc, doc


def text_lines(change):
    """A change of plan --json as plan prints it: "+ vxlan vx100: create (...)"."""
    sign = {"create": "+", "change": "~", "remove": "-"}[change["change"]]
    detail = f" ({change['detail']})" if change["detail"] else ""
    return f"{sign} {change['object']}: {change['change']}{detail}"


def test_plan_lists_and_apply_performs_the_switch_stages(make_cluster):
    cluster = make_cluster(2)
    pve1 = cluster["pve1"]
    plain = cluster.write_definition(
        cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])]))
    rc, doc = plan_json(pve1, plain)
    text = pve1.fabricd("plan", "-c", plain)
    assert rc == 2 and text.rc == 2 and doc["later"] == [], doc
    assert [text_lines(c) for c in doc["changes"]] == text.stdout.splitlines(), \
        "plan --json lists what plan prints, in its order"
    cluster.apply_all(plain)
    assert plan_json(pve1, plain)[1]["changes"] == []
    assert port_role(pve1.link("vx100")) == "sends" and port_role(pve1.link("vs100")) == "mute"
    secure = cluster.write_definition(
        cluster.definition(zones=[zone("red", "secure", [("vnet100", 100)])]),
        path=f"{cluster.tmpdir}/secure.json")

    res = pve1.fabricd("apply", "-c", secure, "--grace", str(GRACE))
    assert res.rc == 0, res
    alias = pve1.link("vx100")["ifalias"]
    assert re.search(rf" retire-after=\d+ grace={GRACE} at=\d+$", alias), alias
    assert port_role(pve1.link("vs100")) == "sends", "the standby sends at once"
    assert port_role(pve1.link("vx100")) == "mute", "the plain device is mute at once"
    assert pve1.fdb_remotes("vx100") == [] and pve1.fdb_remotes("vs100") == ["10.255.0.2"]
    switch, line = vnet_switch(pve1, secure)
    assert switch and switch["stage"] == "retire" and switch["device"] == "vx100", switch
    assert 0 <= switch["ends_in_s"] <= GRACE + 1 and switch["grace_s"] == GRACE, switch
    assert "switching (moved to secure" in line and "vx100" in line, line

    for grace in (GRACE, 30):  # the recorded grace decides, not the one asked now
        res = pve1.fabricd("plan", "-c", secure, "--grace", str(grace))
        assert res.rc == 0, f"nothing is due yet:\n{res}"
        remove = LATER_REMOVE.search(res.stdout)
        assert remove, f"plan lacks the later deletion:\n{res.stdout}"
        assert int(remove.group(1)) <= GRACE + 1, res.stdout  # the deadline rounds up to a whole second
    # --grace 0 ends it now: plan shows the removal with the seconds the note had left
    res = pve1.fabricd("plan", "-c", secure, "--grace", "0")
    early = re.search(r"^- vxlan vx100: remove \(vnet vnet100 moved to secure transport, "
                      r"grace period ended early by --grace 0 \((\d+) s were left\)",
                      res.stdout, re.M)
    assert res.rc == 2 and early, res
    assert 0 < int(early.group(1)) <= GRACE + 1, res.stdout
    rc, doc = plan_json(pve1, secure)
    (later,) = doc["later"]
    assert rc == 0 and doc["changes"] == [], doc
    assert later["change"] == "remove" and later["object"] == "vxlan vx100", later
    assert 0 <= later["due_in_s"] <= GRACE + 1, later

    def due(pattern, path):
        res = pve1.fabricd("plan", "-c", path)
        return res.stdout if res.rc == 2 and pattern.search(res.stdout) else None

    wait_until(lambda: due(DUE_REMOVE, secure), timeout=GRACE + 3, interval=0.2,
               what="the deletion due")
    assert pve1.link("vx100"), "removed outside the plan"
    assert pve1.fabricd("apply", "-c", secure).rc == 0
    assert pve1.link("vx100") is None, "vx100 removed by the apply after its deadline"
    switch, line = vnet_switch(pve1, secure)
    assert switch is None and "switching" not in line, (switch, line)
    res = pve1.fabricd("plan", "-c", secure)
    assert res.rc == 0 and "vx100" not in res.stdout, res

    # and back: secure keeps sending until the deadline, then the devices swap
    res = pve1.fabricd("apply", "-c", plain, "--grace", str(GRACE))
    assert res.rc == 0, res
    assert re.search(rf" secure-until=\d+ grace={GRACE} at=\d+$", pve1.link("vs100")["ifalias"])
    switch, line = vnet_switch(pve1, plain)
    assert switch and switch["stage"] == "hold" and switch["device"] == "vs100", switch
    assert port_role(pve1.link("vs100")) == "sends" and port_role(pve1.link("vx100")) == "listens"
    assert pve1.fdb_remotes("vx100") == [], "vx100 does not send yet"
    res = pve1.fabricd("plan", "-c", plain)
    assert res.rc == 0 and LATER_SWAP.search(res.stdout), res
    wait_until(lambda: due(DUE_SWAP, plain), timeout=GRACE + 3, interval=0.2,
               what="the swap due")
    assert pve1.fabricd("apply", "-c", plain).rc == 0
    assert port_role(pve1.link("vx100")) == "sends" and port_role(pve1.link("vs100")) == "mute"
    assert pve1.fdb_remotes("vx100") == ["192.0.2.12"] and pve1.fdb_remotes("vs100") == []
    assert pve1.link("vs100")["ifalias"] == "fabricd:fabtest"
    assert pve1.fabricd("plan", "-c", plain).rc == 0


def test_plan_says_why_the_guard_is_loaded_whole_during_a_switch(make_cluster):
    """Two zones switching opposite ways in one change: the guard's set elements change
    while a vnet is switching, so the table is loaded whole (engine: deltas during a
    switch lost pings on kernel 6.1); plan says that, not that the kernel's copy has
    objects the definition does not make (it has none)."""
    cluster = make_cluster(2)
    pve1 = cluster["pve1"]
    before = cluster.write_definition(cluster.definition(zones=[
        zone("red", "plain", [("vnet100", 100)]), zone("blue", "secure", [("vnet200", 200)])]))
    after = cluster.write_definition(cluster.definition(zones=[
        zone("red", "secure", [("vnet100", 100)]), zone("blue", "plain", [("vnet200", 200)])]),
        path=f"{cluster.tmpdir}/after.json")
    cluster.apply_all(before)
    res = pve1.fabricd("plan", "-c", after)
    guard = [line for line in res.stdout.splitlines() if "table inet fabricd" in line]
    assert res.rc == 2 and guard, res
    assert not any("kernel copy" in line for line in guard), res.stdout
    assert any("set elements of a vnet switching transport" in line for line in guard), \
        res.stdout


def test_a_device_made_again_in_its_retire_stage_has_its_note_from_the_start(make_cluster):
    """vx100 must be made again as the switch to secure begins (here: learning turned off
    by hand, which the kernel cannot turn on on a live device; from EVPN to static it is
    the EVPN device): it is made with its retire note at once, so a second apply has
    nothing to do (it used to write the note then, and the grace period began a pass late)."""
    cluster = make_cluster(2)
    pve1 = cluster["pve1"]
    plain = cluster.write_definition(
        cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])]))
    cluster.apply_all(plain)
    pve1.run(["ip", "link", "set", "vx100", "type", "vxlan", "nolearning"])
    secure = cluster.write_definition(
        cluster.definition(zones=[zone("red", "secure", [("vnet100", 100)])]),
        path=f"{cluster.tmpdir}/secure.json")
    before = pve1.link("vx100")["ifindex"]
    res = pve1.fabricd("apply", "-c", secure, "--grace", "30")
    assert res.rc == 0, res
    vx = pve1.link("vx100")
    assert vx["ifindex"] != before, "vx100 was not made again"
    assert re.search(r" retire-after=\d+ grace=30 at=\d+$", vx["ifalias"]), vx["ifalias"]
    res = pve1.fabricd("plan", "-c", secure)
    assert res.rc == 0 and LATER_REMOVE.search(res.stdout), res


def test_a_hold_noted_by_an_older_fabricd_is_kept(make_cluster):
    """fabricd before 2026-12-02 noted the secure device's hold (secure -> plain) as
    `retire-after=<epoch>` alone. A node upgraded in the middle of such a switch took the
    note for none and muted vs100 at once: the members that had not switched lost the
    zone (487 echoes sent, 5 received, when an upgrade found it)."""
    cluster = make_cluster(2)
    pve1 = cluster.node("pve1")
    secure = cluster.write_definition(
        cluster.definition(zones=[zone("red", "secure", [("vnet100", 100)])]),
        path=f"{cluster.tmpdir}/secure.json")
    cluster.apply_all(secure)
    plain = cluster.write_definition(
        cluster.definition(zones=[zone("red", "plain", [("vnet100", 100)])]),
        path=f"{cluster.tmpdir}/plain.json")
    assert pve1.fabricd("apply", "-c", plain, "--grace", "30").rc == 0
    epoch = re.search(r" secure-until=(\d+) ", pve1.link("vs100")["ifalias"]).group(1)
    pve1.run(["ip", "link", "set", "vs100", "alias",
              f"fabricd:{cluster.cluster_name} retire-after={epoch}"])
    res = pve1.fabricd("plan", "-c", plain)
    assert res.rc == 0, f"the old note is a hold in progress, nothing to do now:\n{res}"
    assert re.search(r"^later, in \d+ s: ~ vxlan vx100: change \(sends", res.stdout, re.M), res
    assert port_role(pve1.link("vs100")) == "sends"


def test_end_grace_ends_the_switches_of_the_zones_it_names_only(make_cluster):
    """`--grace 0` ends every zone's grace period: an operator who knows every member of
    red has switched, while blue is still switching on the others, could not end red's
    alone. `--end-grace red` does: red's old device goes now (plan says so, with the
    seconds its note had left), blue's stays until its note's deadline; blue's secure ->
    plain hold likewise. A zone the definition has not is a typo, said; the daemon
    refuses the option (it would end every later switch of the zone at once too)."""
    cluster = make_cluster(2)
    pve1 = cluster["pve1"]
    zones = [("red", 100, "plain", "secure"), ("blue", 200, "plain", "secure"),
             ("green", 300, "secure", "plain")]
    before = cluster.write_definition(cluster.definition(zones=[
        zone(name, first, [(f"vnet{vni}", vni)]) for name, vni, first, _ in zones]))
    after = cluster.write_definition(cluster.definition(zones=[
        zone(name, then, [(f"vnet{vni}", vni)]) for name, vni, _, then in zones]),
        path=f"{cluster.tmpdir}/after.json")
    cluster.apply_all(before)
    assert pve1.fabricd("apply", "-c", after, "--grace", "30").rc == 0
    for dev in ("vx100", "vx200"):
        assert re.search(r" retire-after=\d+ grace=30 at=\d+$", pve1.link(dev)["ifalias"])
    assert re.search(r" secure-until=\d+ ", pve1.link("vs300")["ifalias"])

    res = pve1.fabricd("plan", "-c", after, "--end-grace", "red,green")
    assert res.rc == 2, res
    early = re.search(r"^- vxlan vx100: remove \(vnet vnet100 moved to secure transport, "
                      r"grace period ended early by --end-grace \((\d+) s were left\)",
                      res.stdout, re.M)
    assert early and 0 < int(early.group(1)) <= 31, res.stdout
    assert re.search(r"^~ vxlan vs300: change \(.*mute", res.stdout, re.M), res.stdout
    assert re.search(r"^later, in \d+ s: - vxlan vx200: remove", res.stdout, re.M), res.stdout
    assert not re.search(r"^- vxlan vx200", res.stdout, re.M), res.stdout

    res = pve1.fabricd("apply", "-c", after, "--end-grace", "red,green")
    assert res.rc == 0, res
    assert pve1.link("vx100") is None, "red's switch ended"
    assert port_role(pve1.link("vs300")) == "mute" and port_role(pve1.link("vx300")) == "sends"
    assert re.search(r" retire-after=\d+ grace=30 at=\d+$", pve1.link("vx200")["ifalias"]), \
        "blue's switch goes on"
    res = pve1.fabricd("plan", "-c", after)
    assert res.rc == 0 and re.search(r"^later, in \d+ s: - vxlan vx200: remove", res.stdout,
                                     re.M), res

    res = pve1.fabricd("plan", "-c", after, "--end-grace", "red,purple")
    assert res.rc == 1 and '--end-grace: the definition has no zone "purple"' in res.stderr, res
    res = pve1.fabricd("run", "-c", after, "--end-grace", "red")
    assert res.rc == 1 and "run: --end-grace is for apply, plan and status" in res.stderr, res
