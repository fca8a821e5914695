# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/bench/evpn_vs_static.py --quick: the static-versus-EVPN benchmark's output.

One run per module (3 nodes, 1 VNI, each control plane on its own cluster,
zebra and bgpd on every EVPN node: about 20 s). The checks are on shape and
sanity, not speed: both control planes measured, every node's flood entries
are (nodes - 1) x VNIs (fabricd's or zebra's), the FDB holds at least the
flood entries plus the other guests' MACs, a new MAC and a MAC move reach
every other node within seconds (EVPN: within 0.5 s, the issue's bound),
an EVPN node that dies silently is withdrawn after the BGP hold time (9 s
after its last keepalive; a loaded machine adds to it) and a static one
never is; the table names both rows; nothing of the run is left
(namespaces, FRR pathspaces). The errors (options, not root, no FRR) are
said.
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from fabtest.frr import frr_available

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
BENCH = REPO / "tests" / "bench" / "evpn_vs_static.py"

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan, pytest.mark.frr]


@pytest.fixture(scope="module")
def quick(netns_env, fabricd_bin, tmp_path_factory):
    reason = frr_available()
    if reason:
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("evpnbench") / "evpn.json"
    res = subprocess.run([sys.executable, str(BENCH), "--quick", "--json", str(out),
                          "--fabricd", str(fabricd_bin)],
                         capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, f"bench failed:\n{res.stdout}\n{res.stderr}"
    return json.loads(out.read_text()), res.stdout


def rows(doc):
    return {r["control_plane"]: r for r in doc["results"]}


def test_both_control_planes_measured_on_three_nodes(quick):
    doc, _ = quick
    assert doc["bench"] == "evpn_vs_static" and doc["quick"] is True
    assert sorted(rows(doc)) == ["evpn", "static"]
    for r in doc["results"]:
        assert (r["nodes"], r["vnis"]) == (3, 1), r
        assert sorted(r["flood_entries_per_node"]) == ["pve1", "pve2", "pve3"], r
        assert 0 < r["converge_s"] < 60, r


def test_flood_and_fdb_entries_per_node(quick):
    doc, _ = quick
    for r in doc["results"]:
        want = (r["nodes"] - 1) * r["vnis"]
        assert set(r["flood_entries_per_node"].values()) == {want}, r
        # flood entries plus at least the other nodes' guests' MACs
        for node, n in r["fdb_entries_per_node"].items():
            assert n >= want + r["nodes"] - 1, (node, r)


def test_new_mac_and_move_reach_every_other_node(quick):
    doc, _ = quick
    for r in doc["results"]:
        for key in ("new_mac", "mac_move"):
            per_node = r[f"{key}_per_node_s"]
            assert len(per_node) == r["nodes"] - 1, (key, r)
            assert all(v is not None and 0 <= v for v in per_node.values()), (key, r)
            assert r[f"{key}_s"] == max(per_node.values())
            assert r[f"{key}_s"] < (0.5 if r["control_plane"] == "evpn" else 2), (key, r)


def test_silent_node_loss_evpn_hold_time_static_never(quick):
    doc, _ = quick
    ev, st = rows(doc)["evpn"], rows(doc)["static"]
    assert all(v is not None for v in ev["node_loss_per_node_s"].values()), ev
    # keepalives every 3 s, hold time 9 s: the last one came 0 to 3 s before the loss
    assert 5 <= ev["node_loss_s"] <= ev["node_loss_window_s"], f"EVPN withdraws a dead node: {ev}"
    assert ev["node_loss_flood_entries_left"] == 0, ev
    assert st["node_loss_s"] is None and set(st["node_loss_per_node_s"].values()) == {None}, st
    assert st["node_loss_flood_entries_left"] == 2 and st["node_loss_note"].startswith("never"), st


def test_table_and_cleanup(quick):
    doc, stdout = quick
    assert "| nodes x VNIs | control plane |" in stdout, stdout
    assert "| 3 x 1 | static |" in stdout and "| 3 x 1 | evpn |" in stdout, stdout
    assert "never (> 2 s)" in stdout, stdout
    for r in doc["results"]:
        suffix = r["suffix"]
        assert suffix.startswith("fd"), r
        netns = [n for n in os.listdir("/run/netns") if n.endswith(f"-{suffix}")]
        frr = [d for p in ("/etc/frr", "/var/run/frr") if os.path.isdir(p)
               for d in os.listdir(p) if d.startswith(f"fabtest-{suffix}-")]
        assert not netns and not frr, f"{r['control_plane']} run left: {netns} {frr}"
        assert not os.path.exists(f"/run/fabtest-{suffix}"), suffix


@pytest.mark.parametrize("args, message", [
    (["--sizes", "2"], "--sizes '2': give node counts 3..50"),
    (["--sizes", "x"], "--sizes 'x': give node counts 3..50"),
    (["--vnis", "0"], "--vnis 0: give 1..50"),
])
def test_option_errors_name_the_option(args, message):
    res = subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True,
                         timeout=30)
    assert res.returncode == 2 and message in res.stderr, res


def test_not_root_is_said():
    if frr_available():
        pytest.skip(frr_available())  # said first, tested below
    res = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                          sys.executable, str(BENCH), "--quick"], capture_output=True, text=True,
                         timeout=30)
    assert res.returncode == 1 and "run as root (it builds network namespaces)" in res.stderr, res


def test_frr_missing_is_said(tmp_path):
    res = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True, text=True,
                         timeout=30, env={**os.environ, "FABTEST_FRR_LIB": str(tmp_path)})
    assert res.returncode == 1, res
    assert f"FRR is needed: {tmp_path}/zebra is missing (apt-get install frr frr-pythontools)" \
        in res.stderr, res
