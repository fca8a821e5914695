# SPDX-License-Identifier: GPL-2.0-or-later
"""The guard's set-element deltas over netlink (engine/guard_delta.c).

A delta is what the daemon sends whenever a vnet or node comes or goes; it
goes to the kernel as one nftables transaction built by fabricd itself
(NEWSETELEM/DELSETELEM between batch begin and end), and only what that code
leaves goes through libnftables. Here, in a namespace of its own, a table
with the guard's set names and types, and tests/tools/guard_delta sending
deltas as kinds/guard.c writes them:

- added elements land, in every key shape (IPv4 . VNI, VNI, IPv6);
- fabricd's removal form (add, then delete, in one transaction) removes;
- a transaction the kernel refuses changes nothing, not even its first part;
- a missing table is refused with the kernel's errno;
- lines of another shape and oversized deltas are left to libnftables
  ("rc=1"), and firewall_apply then runs them through nft;
- firewall_apply reports a refused delta with the kernel's errno;
- a new table's chunk of allow-list elements (firewall_load_steps' one line,
  no mark) goes over netlink too ("load"): libnftables parsing them took
  most of the user CPU of a build from empty at 64 nodes x 1024 vnets.
"""

import json
import os
import pathlib
import subprocess

import pytest

pytestmark = [pytest.mark.netns]

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
TOOL = REPO / "build" / "release" / "tests" / "tools" / "guard_delta"
MARK = "# inet fabricd: set elements only\n"
TABLE = """table inet fabricd {
    set plain_members { typeof ip saddr . @th,96,24; }
    set fabric_members { typeof ip saddr . @th,96,24; }
    set secure_vnis { typeof @th,96,24; }
    set wireguard_peers_ip { type ipv4_addr; }
    set wireguard_peers_ip6 { type ipv6_addr; }
}
"""


@pytest.fixture
def ns():
    name = "gd%x%s" % (os.getpid() & 0xffff, os.urandom(2).hex())
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "netns", "exec", name, "nft", "-f", "-"], input=TABLE, text=True,
                       check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def tool(ns, mode, text):
    if not TOOL.exists():
        pytest.fail(f"{TOOL} is missing: run `make tools`")
    res = subprocess.run(["ip", "netns", "exec", ns, str(TOOL), mode], input=text, text=True,
                         capture_output=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip(), res.stderr


def elements(ns, set_name):
    res = subprocess.run(["ip", "netns", "exec", ns, "nft", "-j", "list", "set", "inet",
                          "fabricd", set_name], capture_output=True, text=True, check=True)
    s = [x["set"] for x in json.loads(res.stdout)["nftables"] if "set" in x][0]
    out = set()
    for e in s.get("elem", []):
        out.add(" . ".join(str(p) for p in e["concat"]) if isinstance(e, dict) else str(e))
    return out


def test_added_elements_land_in_every_shape(ns):
    out, _ = tool(ns, "send", MARK +
                  "add element inet fabricd plain_members { 192.0.2.12 . 100, 192.0.2.13 . 70000 }\n"
                  "add element inet fabricd secure_vnis { 200, 16777215 }\n"
                  "add element inet fabricd wireguard_peers_ip6 { 2001:db8::1 }\n")
    assert out == "rc=0", out
    assert elements(ns, "plain_members") == {"192.0.2.12 . 100", "192.0.2.13 . 70000"}
    assert elements(ns, "secure_vnis") == {"200", "16777215"}
    assert elements(ns, "wireguard_peers_ip6") == {"2001:db8::1"}
    # adding what is there changes nothing and is no error (no NLM_F_EXCL), as with nft
    out, _ = tool(ns, "send", MARK + "add element inet fabricd secure_vnis { 200 }\n")
    assert out == "rc=0", out
    assert elements(ns, "secure_vnis") == {"200", "16777215"}


def test_removal_form_removes(ns):
    tool(ns, "send", MARK + "add element inet fabricd wireguard_peers_ip { 198.51.100.1, "
         "198.51.100.2 }\n")
    out, _ = tool(ns, "send", MARK +
                  "add element inet fabricd wireguard_peers_ip { 198.51.100.2, 198.51.100.9 }\n"
                  "delete element inet fabricd wireguard_peers_ip { 198.51.100.2, 198.51.100.9 }\n")
    assert out == "rc=0", out
    assert elements(ns, "wireguard_peers_ip") == {"198.51.100.1"}


def test_refused_transaction_changes_nothing(ns):
    # the delete of an element that is not there fails the whole transaction: the add too
    out, _ = tool(ns, "send", MARK +
                  "add element inet fabricd secure_vnis { 300 }\n"
                  "delete element inet fabricd secure_vnis { 301 }\n")
    assert out.startswith("rc=-2 "), out  # ENOENT, with the kernel's words after it
    assert elements(ns, "secure_vnis") == set()


def test_missing_table_is_refused(ns):
    subprocess.run(["ip", "netns", "exec", ns, "nft", "delete", "table", "inet", "fabricd"],
                   check=True)
    out, _ = tool(ns, "send", MARK + "add element inet fabricd secure_vnis { 300 }\n")
    assert out.startswith("rc=-2"), out


@pytest.mark.parametrize("text", [
    "add element inet fabricd secure_vnis { 300 }\n",  # no mark: not a delta
    MARK + "flush set inet fabricd secure_vnis\n",
    MARK + "add element inet fabricd someone_elses { 300 }\n",
    MARK + "add element inet other secure_vnis { 300 }\n",
    MARK + "add element inet fabricd secure_vnis { not-a-vni }\n",
    MARK + "add element inet fabricd secure_vnis { }\n",
    MARK + "add element inet fabricd secure_vnis { "
    + ", ".join(str(v) for v in range(1, 2100)) + " }\n",
])
def test_other_shapes_are_left_to_nft(ns, text):
    out, _ = tool(ns, "send", text)
    assert out == "rc=1", out
    assert elements(ns, "secure_vnis") == set(), "nothing sent"


def test_apply_sends_what_netlink_leaves_through_nft(ns):
    big = ", ".join(str(v) for v in range(1, 2100))
    out, err = tool(ns, "apply", MARK + "add element inet fabricd secure_vnis { " + big + " }\n")
    assert out == "rc=0", (out, err)
    assert len(elements(ns, "secure_vnis")) == 2099
    assert "refused" not in err, "left to nft, not refused"


def members_chunk(set_name, first_octet, count):
    """count elements of set_name as firewall_load_steps writes a chunk: one line, no mark."""
    keys = [f"{first_octet}.0.{i // 200}.{i % 200 + 1} . {100 + i % 200}" for i in range(count)]
    return "add element inet fabricd %s { %s }\n" % (set_name, ", ".join(keys)), keys


def test_a_new_tables_chunk_is_loaded_over_netlink(ns):
    for set_name, octet in (("plain_members", 198), ("fabric_members", 10)):
        text, keys = members_chunk(set_name, octet, 2048)
        out, _ = tool(ns, "load", text)
        assert out == "rc=0", out
        assert elements(ns, set_name) == set(keys)
    # more than one send holds: left to nft (firewall_apply runs it), nothing sent
    text, _ = members_chunk("plain_members", 172, 2049)
    out, _ = tool(ns, "load", text)
    assert out == "rc=1", out
    assert len(elements(ns, "plain_members")) == 2048


def test_apply_reports_a_refused_delta(ns):
    subprocess.run(["ip", "netns", "exec", ns, "nft", "delete", "table", "inet", "fabricd"],
                   check=True)
    out, err = tool(ns, "apply", MARK + "add element inet fabricd secure_vnis { 300 }\n")
    assert out == "rc=-2", (out, err)
    assert ("nftables table inet fabricd: the kernel refused the change of its set elements: "
            "No such file or directory; the table changed since it was read: apply again") \
        in err, err
