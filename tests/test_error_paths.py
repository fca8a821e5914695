# SPDX-License-Identifier: GPL-2.0-or-later
"""Error paths no other test reached (scripts/error-coverage.py lists them): each
case provokes one error from the command line or a definition, and checks the
exit status (1: DESIGN.md), the object, option or JSON path the message names,
the hint it gives, and that nothing was written. Files only, no root."""
import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
FABRICD = pathlib.Path(os.environ.get("FABRICD", REPO / "fabricd" / "fabricd"))
MINIMAL = REPO / "examples" / "minimal-2node.json"
PVE = REPO / "tests" / "fixtures" / "pve"


def run(*args, **kwargs):
    if not FABRICD.exists():
        pytest.fail(f"{FABRICD} is missing: run make first")
    return subprocess.run([str(FABRICD), *map(str, args)], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, **kwargs)


def assert_error(r, *pieces):
    """Exit status 1, nothing on stdout, every piece in one "error: " line of stderr."""
    assert r.returncode == 1, r
    assert r.stdout == "", r
    errors = [line for line in r.stderr.splitlines() if line.startswith("error: ")]
    assert any(all(p in line for p in pieces) for line in errors), (pieces, r.stderr)
    assert "Sanitizer" not in r.stderr and "runtime error:" not in r.stderr, r.stderr


# --- options (cli/main.c, engine/session.c) ----------------------------------------------

OPTIONS = [
    # (id, argv after the binary, pieces of the error line)
    ("grace-word", ["plan", "-c", MINIMAL, "-n", "pve1", "--grace", "soon"],
     ['--grace "soon"', "give whole seconds, 0..86400"]),
    ("lock-wait-range", ["apply", "-c", MINIMAL, "-n", "pve1", "--lock-wait", "3601"],
     ['--lock-wait "3601"', "give whole seconds, 0..3600"]),
    ("wg-backend", ["plan", "-c", MINIMAL, "-n", "pve1", "--wg-backend", "fast"],
     ['--wg-backend "fast"', "use auto, kernel or userspace"]),
    ("unknown-command", ["chek", "-c", MINIMAL], ['unknown command "chek"', "see fabricd --help"]),
]


@pytest.mark.parametrize("argv,pieces", [c[1:] for c in OPTIONS], ids=[c[0] for c in OPTIONS])
def test_bad_option_is_named_with_its_remedy(argv, pieces):
    assert_error(run(*argv), *pieces)


# --- bench's options (cli/bench.c): refused before anything is built ----------------------

BENCH = [
    ("duration-zero", ["--duration", "0"], ['--duration "0"', "from 1 to 600"]),
    ("repeat-word", ["--repeat", "many"], ['--repeat "many"', "from 1 to 50"]),
    ("streams-zero", ["--streams", "1,0"], ['--streams "0"', "from 1 to 128"]),
    ("streams-twice", ["--streams", "4,1,4"], ['--streams "4,1,4": 4 is given twice']),
    ("streams-too-many", ["--streams", ",".join(map(str, range(1, 10)))],
     ["at most 8 stream counts"]),
    ("streams-empty", ["--streams", ","], ['--streams ",": give stream counts such as 1,4,8']),
    ("wg-backend", ["--wg-backend", "fast"], ['--wg-backend "fast": use auto, kernel or userspace']),
    ("stray-argument", ["--quick", "now"], ['unexpected argument "now": see fabricd bench --help']),
    ("svg-with-control-plane", ["--control-plane", "--svg", "/nonexistent/x.svg"],
     ["--svg is for the data-plane bench, not --control-plane"]),
    ("nodes-without-control-plane", ["--nodes", "4"], ["--nodes and --vnis go with --control-plane"]),
    ("nodes-one", ["--control-plane", "--nodes", "1"], ['--nodes "1"', "from 2 to 1000"]),
    ("vnis-beyond", ["--control-plane", "--vnis", "16385"], ['--vnis "16385"', "from 2 to 16384"]),
    ("too-many-arguments", ["--quick"] * 63, ["bench: too many arguments"]),
    # an output it cannot write: refused before measuring (--control-plane wrote its report
    # only after all of it, then failed; a directory passed the data-plane's check too)
    ("control-plane-json-nowhere", ["--control-plane", "--quick", "--json", "/nonexistent/r.json"],
     ["--json /nonexistent/r.json: cannot write in its directory", "give a writable path"]),
    ("control-plane-json-directory", ["--control-plane", "--quick", "--json", "/"],
     ["--json /: is a directory: give the path of a file to write"]),
    ("svg-directory", ["--quick", "--svg", "/"],
     ["--svg /: is a directory: give the path of a file to write"]),
]


@pytest.mark.parametrize("argv,pieces", [c[1:] for c in BENCH], ids=[c[0] for c in BENCH])
def test_bench_option_is_refused_before_building_anything(argv, pieces):
    assert_error(run("bench", *argv), *pieces)


# --- the definition (definition/config.c, definition/verify.c) ----------------------------

@pytest.fixture
def minimal():
    return json.loads(MINIMAL.read_text())


def write(tmp_path, doc, name="cluster.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
    return path


def test_zone_that_is_not_an_object(minimal, tmp_path):
    minimal["zones"].append(5)
    assert_error(run("check", "-c", write(tmp_path, minimal)),
                 "zones[1]: 5 is an integer; give an object with name, transport and vnets")


def test_check_of_a_node_the_file_does_not_name(minimal, tmp_path):
    path = write(tmp_path, minimal)
    assert run("check", "-c", path, "-n", minimal["nodes"][0]["name"]).returncode == 0
    assert_error(run("check", "-c", path, "-n", "pve9"),
                 "nodes: node \"pve9\" (-n) is not in the definition", "fabricd join")
    res = run("check", "-c", path, "-n", "pve9", "--json")
    assert res.returncode == 1 and json.loads(res.stdout)["ok"] is False, res.stdout


@pytest.mark.parametrize("node", ["PVE1", "pve1 ", "pve1.example.org"])
def test_check_of_what_is_no_node_name(node):
    """check -n says what render, plan and apply say of it (it said only "not in the
    definition", where the node's name in lower case is)."""
    assert_error(run("check", "-c", MINIMAL, "-n", node),
                 f'nodes: -n "{node}" is not a node name (lower-case letters, digits and',
                 "give the node's name in the definition with -n NODE")


def test_file_larger_than_16_mib(minimal, tmp_path):
    path = write(tmp_path, json.dumps(minimal) + " " * (16 * 1024 * 1024 + 1))
    assert_error(run("check", "-c", path),
                 f"{path}: larger than 16 MiB; this is not a cluster definition")


def test_ipv6_fabric_needs_1280_on_wgfab0(minimal, tmp_path):
    minimal["fabric"].update(prefix="fd00:255::/64", underlay_mtu=1300)
    for i, node in enumerate(minimal["nodes"], 1):
        node["fabric_address"] = f"fd00:255::{i}"
    assert_error(run("check", "-c", write(tmp_path, minimal)),
                 "fabric.underlay_mtu: 1300 leaves wgfab0 1240 bytes, under the 1280 an IPv6 "
                 "fabric (fabric.prefix) needs: give at least 1340, or an IPv4 fabric prefix")


@pytest.mark.parametrize("mtu", [575, 65536])
def test_underlay_mtu_out_of_range(minimal, tmp_path, mtu):
    minimal["fabric"]["underlay_mtu"] = mtu
    assert_error(run("check", "-c", write(tmp_path, minimal)),
                 f"fabric.underlay_mtu: {mtu} is out of range; give an integer 576..65535")


def test_underlay_mtu_under_1280_with_an_ipv6_underlay(tmp_path):
    """An IPv4 underlay may be given under 1280 (as it may be measured); an IPv6 link never
    is, so such a value is a typo: until 2026-12-07 1280 was the floor for both."""
    definition = json.loads((REPO / "examples" / "ipv6-underlay.json").read_text())
    definition["fabric"]["underlay_mtu"] = 1000
    assert_error(run("check", "-c", write(tmp_path, definition)),
                 "fabric.underlay_mtu: 1000 is under 1280, the smallest MTU of an IPv6 link",
                 "give the real underlay MTU")


# --- definition edits (cli/zone.c, cli/join.c, cli/set_transport.c) ----------------------

@pytest.mark.parametrize("name", ["vnet100:100", "VNET100", "vnet-name-too-long"])
def test_vnet_remove_refuses_what_is_no_vnet_name(tmp_path, name):
    """A typo of the form (NAME:VNI as vnet add takes it, capitals) is refused with exit 1:
    "no zone has vnet100:100; nothing to change" and exit 0 hid that nothing was removed."""
    path = write(tmp_path, MINIMAL.read_text())
    r = run("vnet", "remove", "-c", path, name)
    assert_error(r, f'vnet remove: "{name}" is not a vnet name: give NAME (at most 15 of a-z, '
                 "0-9 and -; no :VNI)")
    assert path.read_text() == MINIMAL.read_text()


def test_vnet_remove_of_a_name_given_twice_removes_it_once(tmp_path):
    path = write(tmp_path, MINIMAL.read_text())
    r = run("vnet", "remove", "-c", path, "vnet100", "vnet100")
    assert r.returncode == 0, r
    assert r.stdout == f"{path}: 1 vnet removed; running daemons follow\n", r.stdout
    assert json.loads(path.read_text())["zones"][0]["vnets"] == []


def test_zone_add_takes_at_most_256_vnets(tmp_path):
    path = write(tmp_path, MINIMAL.read_text())
    before = path.read_text()
    vnets = [a for i in range(257) for a in ("--vnet", f"v{i}:{1000 + i}")]
    assert_error(run("zone", "add", "-c", path, "blue", "--transport", "plain", *vnets),
                 "--vnet: at most 256 vnets in one command")
    assert path.read_text() == before


def test_zone_add_takes_at_most_256_nodes(tmp_path):
    path = write(tmp_path, MINIMAL.read_text())
    before = path.read_text()
    nodes = ",".join(f"n{i}" for i in range(257))
    assert_error(run("zone", "add", "-c", path, "blue", "--transport", "plain", "--nodes", nodes),
                 "--nodes: at most 256 nodes")
    assert path.read_text() == before


def test_vnet_remove_takes_at_most_256_names(tmp_path):
    path = write(tmp_path, MINIMAL.read_text())
    before = path.read_text()
    assert_error(run("vnet", "remove", "-c", path, *(f"v{i}" for i in range(257))),
                 "vnet remove: at most 256 vnets in one command")
    assert path.read_text() == before


def test_join_without_underlay_needs_a_valid_definition(tmp_path):
    """Without --underlay, join reads the nodes' addresses from the file first; a file that
    is not JSON is named with the line and column, as check names it."""
    path = write(tmp_path, '{"version": 1}')
    key = tmp_path / "pve3.key"
    r = run("join", "-c", path, "-n", "pve3", "--key-file", key)
    assert_error(r, f"{path}: not a valid definition: nothing was changed; fix it first "
                    f"(fabricd check -c {path})")
    assert "node pve3 did not join" in r.stderr
    assert path.read_text() == '{"version": 1}'
    path.write_text("{")
    r = run("join", "-c", path, "-n", "pve3", "--key-file", key)
    assert_error(r, f"{path}:1:1: invalid JSON: ", "fix the syntax at this line and column")
    assert "node pve3 did not join" in r.stderr and path.read_text() == "{"


def in_mount_namespace(script, **kwargs):
    """sh -c script in a private mount namespace (root): its mounts go with it."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare --mount")
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-ec", script],
                          capture_output=True, text=True, timeout=60, **kwargs)


def test_set_transport_in_a_read_only_directory(tmp_path):
    """Root writes anywhere but on a read-only mount (test_set_transport.py skips as root)."""
    path = write(tmp_path, MINIMAL.read_text())
    before = path.read_text()
    r = in_mount_namespace(f"mount --bind {tmp_path} {tmp_path}; "
                           f"mount -o remount,bind,ro {tmp_path}; "
                           f"exec {FABRICD} set-transport -c {path} lan secure -n pve1 "
                           f"--lock-wait 0")
    assert_error(r, f"{path}.lock: cannot open the definition's lock file: Read-only file "
                 "system; nothing was changed (an edit writes next to the definition: edit it "
                 "where its directory is writable)")
    assert path.read_text() == before


def test_set_transport_on_a_full_file_system(tmp_path):
    full = tmp_path / "full"
    full.mkdir()
    path = full / "cluster.json"
    r = in_mount_namespace(f"mount -t tmpfs -o size=8k tmpfs {full}; "
                           f"cp {MINIMAL} {path}; "
                           f"head -c 65536 /dev/zero > {full}/filler 2>/dev/null || true; "
                           f"{FABRICD} set-transport -c {path} lan secure -n pve1 --lock-wait 0 "
                           f"|| rc=$?; cmp {MINIMAL} {path} >&2; ls {full} | sed 's/^/left: /' >&2; "
                           f"exit $rc")
    assert_error(r, f"{path}.tmp.", "cannot write it: No space left on device; nothing was "
                 "changed")
    left = [line for line in r.stderr.splitlines() if line.startswith("left: ")]
    # unchanged, no temporary; the lock stays, as join's does
    assert left == ["left: cluster.json", "left: cluster.json.lock", "left: filler"], r.stderr


def test_set_transport_on_a_mount_point(tmp_path):
    """A definition bind-mounted over (a container's file): rename(2) over it fails."""
    path = write(tmp_path, MINIMAL.read_text())
    source = write(tmp_path, MINIMAL.read_text(), "source.json")
    r = in_mount_namespace(f"mount --bind {source} {path}; "
                           f"exec {FABRICD} set-transport -c {path} lan secure -n pve1 "
                           f"--lock-wait 0")
    assert_error(r, f"{path}: cannot replace it: Device or resource busy; nothing was changed")
    assert path.read_text() == MINIMAL.read_text() == source.read_text()


def test_zone_add_on_a_mount_point(tmp_path):
    path = write(tmp_path, MINIMAL.read_text())
    source = write(tmp_path, MINIMAL.read_text(), "source.json")
    r = in_mount_namespace(f"mount --bind {source} {path}; "
                           f"exec {FABRICD} zone add -c {path} blue --transport plain")
    assert_error(r, f"{path}: cannot replace it: Device or resource busy; nothing was changed")
    assert "zone add: nothing was changed" in r.stderr
    assert path.read_text() == MINIMAL.read_text()


def test_set_transport_where_the_key_is_spelled_with_escapes(tmp_path):
    """Valid JSON that the one-line edit cannot find: refused, the file kept as it was."""
    text = MINIMAL.read_text().replace('"transport": "plain"', '"transp\\u006frt": "plain"')
    assert "\\u006f" in text
    path = write(tmp_path, text)
    assert run("check", "-c", path).returncode == 0
    r = run("set-transport", "-c", path, "lan", "secure", "-n", "pve1", "--lock-wait", "0")
    assert_error(r, f'zone lan: its "transport" could not be located in {path}',
                 "nothing was changed: edit the file by hand")
    assert path.read_text() == text


def test_set_transport_on_a_directory_says_what_to_do(tmp_path):
    r = run("set-transport", "-c", tmp_path, "lan", "secure", "-n", "pve1", "--lock-wait", "0")
    assert_error(r, f"{tmp_path}: cannot read it: Is a directory;", "give the definition")


# --- keys (cli/keys.c) ---------------------------------------------------------------------

def test_genkey_to_a_full_disk():
    with open("/dev/full", "w") as full:
        r = subprocess.run([str(FABRICD), "genkey"], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=30)
    assert r.returncode == 1, r.stderr
    assert "error: stdout: No space left on device" in r.stderr, r.stderr


def test_pubkey_from_a_directory():
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        r = subprocess.run([str(FABRICD), "pubkey"], stdin=fd, capture_output=True, text=True,
                           timeout=30)
    finally:
        os.close(fd)
    assert r.returncode == 1 and r.stdout == "", r
    assert "error: stdin: Is a directory" in r.stderr, r.stderr


# --- import-pve (definition/pve_*.c, cli/import_pve.c) ------------------------------------

HV3_IFACE = ("\tinterfaces name=wg0,listen_port=51820,"
             "public_key=cjoBx7KKqGdVr5vfh3wqOtBnahLsnSq4LZIPjxOMLGc=,ip=10.249.0.3/24\n")
HV2_PEERS = ("peers type=internal,node=hv1,node_iface=wg0,iface=wg0\n"
             "\tpeers type=internal,node=hv3,node_iface=wg0,iface=wg0,endpoint")



def edit(root, name, old, new):
    path = root / name
    text = path.read_text()
    assert old in text, (name, old)
    path.write_text(text.replace(old, new, 1))


def import_pve(root, *extra):
    out = root / "out.json"
    r = run("import-pve", "--sdn-dir", root / "sdn", "--corosync", root / "corosync.conf",
            "--pending", "-o", out, *extra)
    return r, out


def test_clean92_imports(clean92):
    """The cases below fail by their one edit, not by the fixture."""
    r, out = import_pve(clean92)
    assert r.returncode == 0 and out.exists(), r.stderr


IMPORTS = [
    # (id, [(file, old, new), ...], pieces of the error line)
    ("keepalive-range", [("sdn/fabrics.cfg", "persistent_keepalive 25",
                          "persistent_keepalive 70000")],
     ["fabrics.cfg:3 [wireguard_fabric: wgf] persistent_keepalive:",
      '"70000" is not 0..65535 seconds']),
    ("node-twice", [("sdn/fabrics.cfg", "wireguard_node: wgf_hv3",
                     "wireguard_node: wgf_hv2\n\tinterfaces name=wg0,listen_port=51820,"
                     "public_key=i32TTagWOLQLkCY2+3CdDU1hUQ3yIyCrw9ovEPb/9VI=\n"
                     "\tip 10.250.0.7\n\trole internal\n\nwireguard_node: wgf_hv3")],
     ["[wireguard_node: wgf_hv2]", 'node "hv2" appears twice in the fabric']),
    ("peer-without-node", [("sdn/fabrics.cfg", HV2_PEERS,
                            HV2_PEERS.replace("type=internal,node=hv1,node_iface=wg0,", "", 1))],
     ["[wireguard_node: wgf_hv2] peers:", '"iface=wg0" needs type=internal|external and node=']),
    ("peer-not-key-value", [("sdn/fabrics.cfg", HV2_PEERS,
                             HV2_PEERS.replace("node=hv1,node_iface=wg0,iface=wg0", "node", 1))],
     ["[wireguard_node: wgf_hv2] peers:", '"type=internal,node": "node" is not key=value']),
    ("peer-unknown-node", [("sdn/fabrics.cfg", HV2_PEERS, HV2_PEERS.replace("hv1", "hv9", 1))],
     ["[wireguard_node: wgf_hv2] peers:", 'peer "hv9" is not an internal node of this fabric']),
    ("node-without-interface", [("sdn/fabrics.cfg", HV3_IFACE, "")],
     ["[wireguard_node: wgf_hv3] interfaces:",
      "missing: the node has no WireGuard interface; add one"]),
    ("interface-not-key-value", [("sdn/fabrics.cfg", "listen_port=51820,public_key=cjo",
                                  "listen_port,public_key=cjo")],
     ["[wireguard_node: wgf_hv3] interfaces:", '"listen_port" is not key=value']),
    ("zone-id", [("sdn/zones.cfg", "vxlan: pub", "vxlan: pub_1")],
     ["zones.cfg:6 [vxlan: pub_1]", "zone id is not a fabricd zone name; rename the zone"]),
    ("zone-id-case", [("sdn/zones.cfg", "vxlan: pub\n", "vxlan: Sec\n")],
     ['zones "Sec" and "sec" are both "sec" in fabricd (names are lowercase); rename one']),
    ("corosync-node-name", [("corosync.conf", "name: hv3", "name: hv_3")],
     ["corosync.conf:22 [nodelist node hv_3]",
      'node "hv_3" is not a valid fabricd node name', "rename the node"]),
    ("no-underlay", [("corosync.conf", "ring0_addr: 203.0.113.13\n    ring1_addr: 2001:db8:10::13",
                      "ring0_addr: hv3.example"),
                     ("sdn/fabrics.cfg", "endpoint 203.0.113.13", "endpoint hv3.example")],
     ["hv3: no underlay address: neither a corosync ringN_addr nor the WireGuard endpoint is "
      "an IP address; write one in corosync.conf"]),
    ("corosync-block", [("corosync.conf", "quorum {", "{")],
     ['corosync.conf:31: "{" without a block name']),
    ("corosync-value", [("corosync.conf", "provider: corosync_votequorum", "provider:")],
     ['corosync.conf:32: "provider:" without a value']),
    ("two-fabrics", [("sdn/zones.cfg", "vxlan: pub\n",
                      "vxlan: sec2\n\tfabric wgf2\n\tnodes hv1,hv2,hv3\n\nvxlan: pub\n"),
                     ("sdn/fabrics.cfg", "wireguard_fabric: wgf\n",
                      "wireguard_fabric: wgf2\n\tip_prefix 10.240.0.0/24\n\n"
                      "wireguard_fabric: wgf\n")],
     ['[vxlan: sec2] fabric: zone uses WireGuard fabric "wgf2" while another zone uses "wgf"',
      'move the zone to "wgf"']),
]


@pytest.mark.parametrize("edits,pieces", [c[1:] for c in IMPORTS], ids=[c[0] for c in IMPORTS])
def test_import_that_does_not_map_names_the_section(clean92, edits, pieces):
    for name, old, new in edits:
        edit(clean92, name, old, new)
    r, out = import_pve(clean92)
    assert_error(r, *pieces)
    assert not out.exists()


def test_import_nodeid_beyond_the_default_prefix(clean92):
    """Without fabric addresses in Proxmox, node N gets .N of 10.255.0.0/24: 300 does not fit."""
    edit(clean92, "corosync.conf", "nodeid: 3", "nodeid: 300")
    fabrics = clean92 / "sdn" / "fabrics.cfg"
    fabrics.write_text(re.sub(r"\t(ip_prefix|ip) .*\n", "", fabrics.read_text()))
    r, out = import_pve(clean92)
    assert_error(r, "hv3: nodeid 300 does not fit 10.255.0.0/24",
                 "give the WireGuard fabric an ip_prefix and each node an ip in Proxmox")
    assert not out.exists()


def test_import_key_out_with_a_keys_file_of_another_kind(clean92, tmp_path):
    key, other = tmp_path / "k", tmp_path / "keys.json"
    other.write_text('{"not": "section config"}\n')
    r, out = import_pve(clean92, "--key-out", key, "-n", "hv3", "--wg-keys", other)
    assert_error(r, f"--key-out: {other}: not a section-config file",
                 "give that file with --wg-keys FILE")
    assert not key.exists() and not out.exists()


def test_import_key_out_without_keys_file(clean92, tmp_path):
    key = tmp_path / "k"
    r, out = import_pve(clean92, "--key-out", key, "-n", "hv3", "--wg-keys", tmp_path / "none.cfg")
    assert_error(r, f"{tmp_path / 'none.cfg'}: cannot read: No such file or directory",
                 "(give --wg-keys FILE)")
    assert not key.exists() and not out.exists()


def test_import_key_out_node_missing_from_keys_file(clean92, tmp_path):
    keys = tmp_path / "keys.cfg"
    keys.write_text("node: hv1\n\tprivate_keys name=wg0,"
                    "key=EF4ev8WylwgqZwYpJgmi+7UAjbyzS3kmPjgvGGkGHHY=\n")
    key = tmp_path / "k"
    r, out = import_pve(clean92, "--key-out", key, "-n", "hv3", "--wg-keys", keys)
    assert_error(r, "--key-out: wg-keys.cfg has no private_keys name=wg0 for node hv3")
    assert not key.exists() and not out.exists()
    assert "EF4ev8Wylwg" not in r.stderr


def test_import_stray_argument(clean92):
    r, out = import_pve(clean92, "stray")
    assert_error(r, 'import-pve: unexpected argument "stray"')
    assert not out.exists()


def test_import_output_that_cannot_be_written(clean92, tmp_path):
    out = tmp_path / "nodir" / "cluster.json"
    r = run("import-pve", "--sdn-dir", clean92 / "sdn", "--corosync", clean92 / "corosync.conf",
            "--pending", "-o", out)
    assert_error(r, f"{out}: cannot write: No such file or directory; create its directory first")
    assert not out.parent.exists()


def test_import_simple_without_sdn_directory(tmp_path):
    r = run("import-pve", "--simple", "secure", "--sdn-dir", tmp_path / "sdn")
    assert_error(r, f"--sdn-dir {tmp_path / 'sdn'}: No such file or directory",
                 "give Proxmox's SDN directory")


def test_import_generate_keys_into_a_file(tmp_path):
    not_a_dir = tmp_path / "keys"
    not_a_dir.write_text("")
    r = run("import-pve", "--sdn-dir", PVE / "pve8" / "sdn", "--corosync",
            PVE / "pve8" / "corosync.conf", "--partial", "--generate-keys", not_a_dir)
    assert r.returncode == 1, r
    assert f"error: --generate-keys {not_a_dir}: not a directory; give the directory that " \
        "holds" in r.stderr, r.stderr
    assert not_a_dir.read_text() == ""


def test_import_section_file_that_cannot_be_read(clean92):
    zones = clean92 / "sdn" / "zones.cfg"
    zones.unlink()
    zones.mkdir()
    r, out = import_pve(clean92)
    assert_error(r, f"{zones}: cannot read: Is a directory; it is Proxmox's SDN file zones.cfg")
    assert not out.exists()


def test_sdn_dir_without_wireguard_keys_has_nothing_to_follow():
    """render/plan/run --sdn-dir on a cluster with no WireGuard fabric (PVE 8): no keys."""
    r = run("render", "--sdn-dir", PVE / "pve8" / "sdn", "--corosync",
            PVE / "pve8" / "corosync.conf", "-n", "hv1")
    assert_error(r, "hv1: Proxmox has no WireGuard key for this node, so --sdn-dir has none "
                    "to follow", "`fabricd import-pve --generate-keys DIR -o FILE`")


# --- files a command could not replace (cli/member.c, engine/lock.c) ------------------------

def test_rotate_key_that_cannot_replace_the_key_file(tmp_path):
    """join --rotate-key writes the definition, then renames KEY.new over KEY: when that
    fails (the key file a mount point here) it says the definition already has the new
    key and which file to rename."""
    path, key = tmp_path / "cluster.json", tmp_path / "pve1.key"
    r = run("init", "-c", path, "--cluster", "lab", "--prefix", "10.255.0.0/24", "-n", "pve1",
            "--underlay", "192.0.2.11", "--key-file", key)
    assert r.returncode == 0, r
    old_key = key.read_text()
    r = in_mount_namespace(f"mount --bind {key} {key}; "
                           f"exec {FABRICD} join -c {path} -n pve1 --underlay 192.0.2.11 "
                           f"--key-file {key} --rotate-key")
    assert_error(r, f"{key}: cannot replace it with the new key in {key}.new: Device or "
                    f"resource busy; the definition has the new public key: rename {key}.new "
                    f"to {key} by hand")
    assert key.read_text() == old_key
    new_public = run("pubkey", "--key-file", f"{key}.new").stdout.strip()
    assert json.loads(path.read_text())["nodes"][0]["public_key"] == new_public


def test_node_lock_on_a_read_only_run_directory(tmp_path):
    path = write(tmp_path, MINIMAL.read_text())
    r = in_mount_namespace("mkdir -p /run/fabricd; mount --bind /run/fabricd /run/fabricd; "
                           "mount -o remount,bind,ro /run/fabricd; "
                           f"exec unshare --net {FABRICD} apply -c {path} -n pve1")
    assert_error(r, "node pve1: cannot open the lock /run/fabricd/net",
                 ".lock: Read-only file system; commands that change the node need "
                 "/run/fabricd writable (a tmpfs, as /run is)")
    assert path.read_text() == MINIMAL.read_text()
