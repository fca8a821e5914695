# SPDX-License-Identifier: GPL-2.0-or-later
"""fabricd init / join / leave: a cluster bootstrapped on a shared definition.

- test_parallel_joins: init, then 8 joins at the same moment on one file in
  one directory: 9 members, unique fabric addresses, 0600 key files whose
  public keys are the definition's, `check` passes; then 4 leaves and 4 new
  joins at the same moment.
- test_cli_errors: every error path of the three commands: exit 1, a
  message that names the file / option / JSON path and what to do, and the
  definition unchanged.
- test_rotate_key, test_no_route: --rotate-key; the underlay address when no
  route tells it.
- test_cluster_from_init_and_join: three namespace nodes; init on pve1 and
  join on pve2 (names, underlay addresses from the routes, fabric
  addresses and keys all chosen by fabricd), `fabricd run` on both reading
  the one shared file, then pve3 joins the running cluster and starts its
  daemon: full-mesh handshakes, guests ping across all nodes; pve2 rotates
  its key under the running daemons and the sessions come back; then pve3
  leaves and the other daemons remove its peer and FDB entries.
"""

import json
import os
import shutil
import stat
import subprocess

import pytest

from fabtest import wait_until
from fabtest.daemon import Daemon, stop_daemons
from fabtest.proc import run
from fabtest.scenario import warm_sessions

PREFIX = "10.255.0.0/24"


def fabricd(binary, *args, check_rc=None):
    res = subprocess.run([binary, *args], capture_output=True, text=True, timeout=30)
    if check_rc is not None:
        assert res.returncode == check_rc, f"fabricd {' '.join(args)}: {res.stderr}"
    return res


def key_args(tmp, name):
    return ["-n", name, "--key-file", f"{tmp}/{name}/private.key"]


def public_key_of(binary, key_file):
    with open(key_file) as f:
        return subprocess.run([binary, "pubkey"], stdin=f, capture_output=True, text=True,
                              check=True).stdout.strip()


def assert_members(binary, tmp, path, names):
    """The definition lists exactly names, each with its own key and address; check passes."""
    with open(path) as f:
        definition = json.load(f)
    nodes = definition["nodes"]
    assert sorted(n["name"] for n in nodes) == sorted(names), nodes
    addresses = [n["fabric_address"] for n in nodes]
    assert len(set(addresses)) == len(addresses), f"duplicate fabric addresses: {addresses}"
    for n in nodes:
        key_file = f"{tmp}/{n['name']}/private.key"
        mode = stat.S_IMODE(os.stat(key_file).st_mode)
        assert mode == 0o600, f"{key_file}: mode {mode:o}"
        assert n["public_key"] == public_key_of(binary, key_file), n["name"]
    res = fabricd(binary, "check", "-c", path)
    assert res.returncode == 0, res.stderr
    return definition


def start_all(procs):
    return [(name, p, *p.communicate(timeout=60)) for name, p in procs]


def test_parallel_joins(fabricd_bin, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    path = str(shared / "cluster.json")
    tmp = str(tmp_path)
    fabricd(fabricd_bin, "init", "-c", path, "--cluster", "lab", "--prefix", PREFIX,
            "--underlay", "192.0.2.11", *key_args(tmp, "pve1"), check_rc=0)

    def spawn(command, i):
        extra = ["--underlay", f"192.0.2.{10 + i}"] if command == "join" else []
        argv = [fabricd_bin, command, "-c", path, *extra]
        argv += key_args(tmp, f"pve{i}") if command == "join" else ["-n", f"pve{i}"]
        return (f"pve{i}", subprocess.Popen(argv, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True))

    # all 8 started before any is waited for: they meet at the lock
    results = start_all([spawn("join", i) for i in range(2, 10)])
    failed = [f"{name}: {err}" for name, p, out, err in results if p.returncode != 0]
    assert not failed, "\n".join(failed)
    definition = assert_members(fabricd_bin, tmp, path, [f"pve{i}" for i in range(1, 10)])
    assert sorted(n["fabric_address"] for n in definition["nodes"]) == sorted(
        f"10.255.0.{i}" for i in range(1, 10))
    # no temporary file left behind, only the definition and its lock
    assert sorted(os.listdir(shared)) == ["cluster.json", "cluster.json.lock"]

    # 4 leave while 4 others join: the freed addresses are taken again
    results = start_all([spawn("leave", i) for i in (2, 4, 6, 8)]
                        + [spawn("join", i) for i in range(10, 14)])
    failed = [f"{name}: {err}" for name, p, out, err in results if p.returncode != 0]
    assert not failed, "\n".join(failed)
    names = [f"pve{i}" for i in (1, 3, 5, 7, 9, 10, 11, 12, 13)]
    assert_members(fabricd_bin, tmp, path, names)


# (name, argv after the binary, what stderr must say); {path}, {tmp} filled in
ERRORS = [
    # which option is missing, named (until 2026-12-07 the usage line alone)
    ("init without --prefix", ["init", "-c", "{path}", "--cluster", "lab"],
     "error: --prefix is missing: give the fabric's prefix (such as 10.255.0.0/24): "
     "fabricd init -c FILE --cluster NAME --prefix CIDR"),
    ("init without --cluster", ["init", "-c", "{path}", "--prefix", PREFIX],
     "error: --cluster is missing: give the cluster's name (such as lab): fabricd init"),
    ("init without either", ["init", "-c", "{path}"],
     "error: --cluster and --prefix are missing: give the cluster's name (such as lab) "
     "and the fabric's prefix"),
    ("init bad port", ["init", "-c", "{new}", "--cluster", "lab", "--prefix", PREFIX,
                       "--listen-port", "0", "--underlay", "192.0.2.11"], "--listen-port \"0\""),
    ("init host bits", ["init", "-c", "{new}", "--cluster", "lab", "--prefix", "10.255.0.1/24",
                        "--underlay", "192.0.2.11"], "--prefix: \"10.255.0.1/24\" is not a prefix"),
    ("init bad cluster", ["init", "-c", "{new}", "--cluster", "Lab!", "--prefix", PREFIX,
                          "--underlay", "192.0.2.11"], "cluster"),
    ("init bad underlay", ["init", "-c", "{new}", "--cluster", "lab", "--prefix", PREFIX,
                           "--underlay", "banana"], "--underlay \"banana\""),
    ("init exists", ["init", "-c", "{path}", "--cluster", "lab", "--prefix", PREFIX,
                     "--underlay", "192.0.2.11"], "fabricd join -c"),
    ("init no directory", ["init", "-c", "{tmp}/nodir/c.json", "--cluster", "lab",
                           "--prefix", PREFIX, "--underlay", "192.0.2.11"],
     "give a definition in an existing directory"),
    ("join missing", ["join", "-c", "{new}", "--underlay", "192.0.2.12"], "fabricd init"),
    ("join invalid", ["join", "-c", "{invalid}", "--underlay", "192.0.2.12"], "fabricd check"),
    ("join other key", ["join", "-c", "{path}", "-n", "pve1", "--underlay", "192.0.2.11",
                        "--key-file", "{tmp}/other.key"], "nodes[0].public_key"),
    ("join other key: the way out", ["join", "-c", "{path}", "-n", "pve1", "--underlay",
                                     "192.0.2.11", "--key-file", "{tmp}/other.key"],
     "--rotate-key"),
    ("join same underlay", ["join", "-c", "{path}", "-n", "pve3", "--underlay", "192.0.2.12",
                            "--key-file", "{tmp}/pve3.key"], "nodes[2].underlay"),
    ("join other family", ["join", "-c", "{path}", "-n", "pve3", "--underlay", "2001:db8::13",
                           "--key-file", "{tmp}/pve3.key"], "nodes[2].underlay"),
    ("join key readable", ["join", "-c", "{path}", "-n", "pve3", "--underlay", "192.0.2.13",
                           "--key-file", "{tmp}/open.key"], "chmod 600"),
    ("join key unwritable", ["join", "-c", "{path}", "-n", "pve3", "--underlay", "192.0.2.13",
                             "--key-file", "/proc/fabricd-test/private.key"],
     "give another --key-file"),
    ("join bad name", ["join", "-c", "{path}", "-n", "PVE3", "--underlay", "192.0.2.13",
                       "--key-file", "{tmp}/pve3.key"], "nodes[2].name"),
    ("leave zone's only member", ["leave", "-c", "{zoned}", "-n", "pve2"], "zones[0].nodes"),
    ("leave missing", ["leave", "-c", "{new}", "-n", "pve1"], "give the shared definition"),
    ("leave last node", ["leave", "-c", "{single}", "-n", "pve1"],
     "the only node of the definition"),
    ("stray argument", ["join", "-c", "{path}", "extra"], 'join: unexpected argument "extra"'),
    ("name too long", ["join", "-c", "{path}", "-n", "n" * 64, "--underlay", "192.0.2.13"],
     "longer than 63 characters: give a shorter one with -n NODE"),
    # zone / vnet (cli/zone.c, definition/zone_edit.c)
    ("zone add without --transport", ["zone", "add", "-c", "{path}", "blue"],
     "--transport is missing: give plain"),
    ("zone add bad transport", ["zone", "add", "-c", "{path}", "blue", "--transport", "fast"],
     "--transport \"fast\": give plain"),
    ("zone add bad --vnet", ["zone", "add", "-c", "{path}", "blue", "--transport", "plain",
                             "--vnet", "vnet200"], "--vnet: \"vnet200\" is not NAME:VNI"),
    ("zone add bad VNI", ["zone", "add", "-c", "{path}", "blue", "--transport", "plain",
                          "--vnet", "vnet200:two"], "the VNI \"two\" is not a number"),
    ("zone add VNI range", ["zone", "add", "-c", "{path}", "blue", "--transport", "plain",
                            "--vnet", "vnet200:16777216"], "zones[0].vnets[0].vni"),
    ("zone add VNI taken", ["zone", "add", "-c", "{zoned}", "blue", "--transport", "plain",
                            "--vnet", "vnet200:100"], "zones[1].vnets[0].vni"),
    ("zone add vnet name taken", ["zone", "add", "-c", "{zoned}", "blue", "--transport",
                                  "plain", "--vnet", "vnet100:200"], "zones[1].vnets[0].name"),
    ("zone add bad name", ["zone", "add", "-c", "{path}", "Blue", "--transport", "plain"],
     "zones[0].name"),
    ("zone add unknown node", ["zone", "add", "-c", "{path}", "blue", "--transport", "plain",
                               "--nodes", "pve1,pve9"], "zones[0].nodes[1]: \"pve9\" is not a node"),
    ("zone add empty --nodes", ["zone", "add", "-c", "{path}", "blue", "--transport", "plain",
                                "--nodes", ","], "leave --nodes out to put the zone on every node"),
    ("zone add exists", ["zone", "add", "-c", "{zoned}", "solo", "--transport", "secure"],
     "zones[0]: zone solo already exists (transport plain"),
    ("zone add exists: the way out", ["zone", "add", "-c", "{zoned}", "solo", "--transport",
                                      "plain", "--vnet", "vnet101:101"], "fabricd vnet add --zone solo"),
    ("zone add missing definition", ["zone", "add", "-c", "{new}", "blue", "--transport", "plain"],
     "no such definition: nothing was changed; create it with `fabricd init`"),
    ("zone add invalid definition", ["zone", "add", "-c", "{invalid}", "blue", "--transport",
                                     "plain"], "fabricd check -c FILE"),
    # what is wrong, named before the usage (until 2026-12-07 the usage alone)
    ("zone add two names", ["zone", "add", "-c", "{path}", "blue", "green", "--transport",
                            "plain"],
     'error: zone add: unexpected argument "green": one zone per command\nerror: usage: '
     "fabricd zone add"),
    ("zone add no name", ["zone", "add", "-c", "{path}", "--transport", "plain"],
     "error: zone add: the zone's name is missing\nerror: usage: fabricd zone add"),
    ("zone remove with --transport", ["zone", "remove", "-c", "{zoned}", "solo", "--transport",
                                      "plain"],
     "error: zone remove: --transport, --vnet, --nodes and --pve-zone are for zone add; zone "
     "remove takes the zone's name alone\nerror: usage: fabricd zone add"),
    ("zone unknown action", ["zone", "rename", "-c", "{path}", "blue"],
     "zone \"rename\": use zone add or zone remove"),
    ("zone no action", ["zone", "-c", "{path}"], "usage: fabricd zone add"),
    ("zone unknown option", ["zone", "add", "-c", "{path}", "blue", "--mtu", "1400"],
     "error: fabricd zone: unknown option --mtu (see fabricd zone --help)"),
    ("vnet add unknown zone", ["vnet", "add", "-c", "{zoned}", "--zone", "nope", "vnet200:200"],
     "zones: there is no zone \"nope\" (zones: solo)"),
    ("vnet add without --zone", ["vnet", "add", "-c", "{zoned}", "vnet200:200"],
     "error: vnet add: --zone is missing: give the zone the vnets go into\nusage: fabricd "
     "vnet add"),
    ("vnet add bad NAME:VNI", ["vnet", "add", "-c", "{zoned}", "--zone", "solo", "vnet200"],
     "vnet add: \"vnet200\" is not NAME:VNI"),
    ("vnet add VNI taken", ["vnet", "add", "-c", "{zoned}", "--zone", "solo", "vnet200:100"],
     "zones[0].vnets[1].vni: 100 is also the VNI of zones[0].vnets[0]"),
    ("vnet add missing definition", ["vnet", "add", "-c", "{new}", "--zone", "solo", "v:1"],
     "create it with `fabricd init`"),
    ("vnet remove nothing", ["vnet", "remove", "-c", "{zoned}"], "usage: fabricd vnet add"),
    # a single-valued option given twice: refused (the last one won unseen until 2026-12-07)
    ("vnet add --zone twice", ["vnet", "add", "-c", "{zoned}", "--zone", "solo", "--zone",
                               "other", "vnet200:200"],
     'error: --zone given twice ("solo", then "other"): give it once'),
    ("zone add --transport twice", ["zone", "add", "-c", "{path}", "blue", "--transport",
                                    "secure", "--transport", "plain"],
     'error: --transport given twice ("secure", then "plain"): give it once'),
    ("zone add --nodes twice", ["zone", "add", "-c", "{path}", "blue", "--transport", "plain",
                                "--nodes", "pve1", "--nodes", "pve2"],
     "error: --nodes given twice: give one comma-separated list, such as --nodes pve1,pve2"),
    ("zone add -c twice", ["zone", "add", "-c", "{zoned}", "-c", "{path}", "blue",
                           "--transport", "plain"], 'error: -c given twice ("{zoned}", then'),
    ("zone add -c empty", ["zone", "add", "-c", "", "blue", "--transport", "plain"],
     'error: -c "": give a value'),
    ("vnet remove invalid definition", ["vnet", "remove", "-c", "{invalid}", "vnet100"],
     "fabricd check -c FILE"),
    ("vnet unknown action", ["vnet", "list", "-c", "{zoned}"],
     "vnet \"list\": use vnet add or vnet remove"),
    # a key twice in the file: named with the file and what to do (not jansson's bare words)
    *[(f"{' '.join(cmd)} duplicate key", [*cmd, "-c", "{dup}", *rest],
       "error: zones[0].transport: appears twice in one object ({dup} line")
      for cmd, rest in ((["zone", "add"], ["blue", "--transport", "plain"]),
                        (["zone", "remove"], ["solo"]),
                        (["vnet", "add"], ["--zone", "solo", "vnet200:200"]),
                        (["vnet", "remove"], ["vnet100"]),
                        (["join"], ["-n", "pve3", "--underlay", "192.0.2.13", "--key-file",
                                    "{tmp}/pve3.key"]),
                        (["leave"], ["-n", "pve2"]))],
    # -c a directory: named, and what to do (it said only "nothing was changed")
    *[(f"{cmd[0]} on a directory", [*cmd[:1], "-c", "{tmp}", *cmd[1:]],
       "{tmp}: cannot read it: Is a directory; nothing was changed: give the definition "
       "file with -c FILE")  # and no {tmp}.lock made beside it
      for cmd in (["init", "--cluster", "lab", "--prefix", PREFIX, "--underlay", "192.0.2.13",
                   "-n", "pve3", "--key-file", "{tmp}/pve3.key"],
                  ["join", "-n", "pve3", "--underlay", "192.0.2.13", "--key-file",
                   "{tmp}/pve3.key"],
                  ["leave", "-n", "pve2"],
                  ["zone", "add", "blue", "--transport", "plain"],
                  ["vnet", "remove", "vnet100"])],
    ("no lock possible", ["join", "-c", "/proc/fabricd-test.json", "-n", "pve3", "--underlay",
                          "192.0.2.13", "--key-file", "{tmp}/pve3.key"],
     "cannot open the definition's lock file"),
]


@pytest.fixture
def two_node_files(fabricd_bin, tmp_path):
    tmp = str(tmp_path)
    files = {"tmp": tmp, "path": f"{tmp}/cluster.json", "new": f"{tmp}/new.json",
             "invalid": f"{tmp}/invalid.json", "zoned": f"{tmp}/zoned.json",
             "single": f"{tmp}/single.json", "dup": f"{tmp}/dup.json"}
    fabricd(fabricd_bin, "init", "-c", files["path"], "--cluster", "lab", "--prefix", PREFIX,
            "--underlay", "192.0.2.11", *key_args(tmp, "pve1"), check_rc=0)
    fabricd(fabricd_bin, "init", "-c", files["single"], "--cluster", "lab", "--prefix", PREFIX,
            "--underlay", "192.0.2.11", *key_args(tmp, "pve1"), check_rc=0)
    fabricd(fabricd_bin, "join", "-c", files["path"], "--underlay", "192.0.2.12",
            *key_args(tmp, "pve2"), check_rc=0)
    with open(files["path"]) as src, open(files["zoned"], "w") as dst:
        dst.write(src.read())
    # pve2 is the only member of zone solo (for the leave refusal)
    fabricd(fabricd_bin, "zone", "add", "-c", files["zoned"], "solo", "--transport", "plain",
            "--vnet", "vnet100:100", "--nodes", "pve2", check_rc=0)
    with open(files["invalid"], "w") as f:
        f.write('{"version": 1}\n')
    with open(files["zoned"]) as src, open(files["dup"], "w") as dst:
        dst.write(src.read().replace('"transport": "plain"',
                                     '"transport": "plain", "transport": "plain"', 1))
    for name, mode in (("other.key", 0o600), ("open.key", 0o644)):
        key = subprocess.run([fabricd_bin, "genkey"], capture_output=True, text=True,
                             check=True).stdout
        with open(f"{tmp}/{name}", "w") as f:
            f.write(key)
        os.chmod(f"{tmp}/{name}", mode)
    return files


@pytest.mark.parametrize("command,extra", [
    ("init", ["--cluster", "lab", "--prefix", PREFIX, "-n", "pve3"]),  # the file exists
    ("join", ["-n", "pve3", "--underlay", "192.0.2.12"]),  # pve2's underlay
])
def test_a_refused_member_leaves_no_key_directory(fabricd_bin, two_node_files, command, extra):
    """A refused init or join made its new key in KEY.new, and the key's directory with it
    (/etc/fabricd by default): both go again, the directory only if it made it."""
    files = two_node_files
    keys = f"{files['tmp']}/keys-{command}"
    res = fabricd(fabricd_bin, command, "-c", files["path"], *extra, "--key-file",
                  f"{keys}/private.key")
    assert res.returncode == 1, res
    assert not os.path.exists(keys), f"{command}: left {os.listdir(keys)} in {keys}"
    os.makedirs(keys)  # there before: kept, empty
    res = fabricd(fabricd_bin, command, "-c", files["path"], *extra, "--key-file",
                  f"{keys}/private.key")
    assert res.returncode == 1 and os.listdir(keys) == [], res


@pytest.mark.parametrize("name,argv,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_cli_errors(fabricd_bin, two_node_files, name, argv, message):
    files = two_node_files
    before = {k: open(v).read() for k, v in files.items() if os.path.isfile(v)}
    res = fabricd(fabricd_bin, *[a.format(**files) for a in argv])
    assert res.returncode == 1, f"{name}: exit {res.returncode}\n{res.stdout}{res.stderr}"
    message = message.format(**files)
    assert message in res.stderr, f"{name}: {message!r} not in:\n{res.stderr}"
    after = {k: open(v).read() for k, v in files.items() if os.path.isfile(v)}
    assert before == after, f"{name}: a definition changed"
    assert not os.path.exists(files["new"]), f"{name}: created {files['new']}"
    assert not os.path.exists(files["tmp"] + ".lock"), f"{name}: locked the directory"
    # a refused join or init leaves no key behind either (it waits in KEY.new until then)
    left = [f for f in os.listdir(files["tmp"]) if f == "pve3.key" or f.endswith(".new")]
    assert left == [], f"{name}: left {left}"


def test_joins_of_one_node_at_once_agree_with_its_key_file(fabricd_bin, tmp_path):
    """A join (or --rotate-key) of one node run twice at the same moment (configuration
    management started twice): both wrote KEY.new, so the key file ended up other than
    the definition's, or gone (17 of 20 rounds). They now take turns on the key's
    directory: the definition's public key is always the key file's."""
    tmp = str(tmp_path)
    path = f"{tmp}/cluster.json"
    key_file = f"{tmp}/pve2/private.key"
    for rnd in range(6):
        for leftover in (path, key_file):
            if os.path.exists(leftover):
                os.unlink(leftover)
        fabricd(fabricd_bin, "init", "-c", path, "--cluster", "lab", "--prefix", PREFIX,
                "--underlay", "192.0.2.11", *key_args(tmp, "pve1"), check_rc=0)
        for extra in ([], ["--rotate-key"]):
            argv = [fabricd_bin, "join", "-c", path, "--underlay", "192.0.2.12", *extra,
                    *key_args(tmp, "pve2")]
            results = start_all([(str(i), subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
                for i in range(2)])
            failed = [err for _, p, _, err in results if p.returncode != 0]
            assert not failed, f"round {rnd} {extra}: {failed}"
            assert_members(fabricd_bin, tmp, path, ["pve1", "pve2"])
            assert not os.path.exists(key_file + ".new")


def test_another_host_with_a_members_name_is_told_to_take_its_own(fabricd_bin, two_node_files):
    """A reinstalled or cloned host named like a member, at another address, was told to
    use --rotate-key, which then gave pve2's entry (still at pve2's address) its key and
    cut the real pve2 off. Another key and another address: refused either way."""
    tmp, path = two_node_files["tmp"], two_node_files["path"]
    text = open(path).read()
    for extra in ([], ["--rotate-key"]):
        res = fabricd(fabricd_bin, "join", "-c", path, "--underlay", "192.0.2.99", *extra,
                      "-n", "pve2", "--key-file", f"{tmp}/clone/private.key", check_rc=1)
        assert "node pve2 is already a member, listed with underlay 192.0.2.12 and another " \
            "public key, and this host's underlay address is 192.0.2.99" in res.stderr, res
        assert "give it a name of its own with -n NODE" in res.stderr and \
            "give --underlay 192.0.2.12" in res.stderr, res
        assert open(path).read() == text and not os.path.exists(f"{tmp}/clone"), extra
    # the member itself may still rotate where it is listed
    fabricd(fabricd_bin, "join", "-c", path, "--underlay", "192.0.2.12", "--rotate-key",
            *key_args(tmp, "pve2"), check_rc=0)


def test_rotate_key_and_unchanged(fabricd_bin, two_node_files):
    files = two_node_files
    tmp, path = files["tmp"], files["path"]
    key_file = f"{tmp}/pve2/private.key"
    with open(path) as f:
        text = f.read()
    old_public = public_key_of(fabricd_bin, key_file)
    # the same key again: nothing changes, byte for byte
    res = fabricd(fabricd_bin, "join", "-c", path, "--underlay", "192.0.2.12",
                  *key_args(tmp, "pve2"), check_rc=0)
    assert "already a member" in res.stdout
    assert open(path).read() == text
    # --rotate-key: a new 0600 key whose public key replaces the old one
    res = fabricd(fabricd_bin, "join", "-c", path, "--rotate-key", "--underlay", "192.0.2.12",
                  *key_args(tmp, "pve2"), check_rc=0)
    assert "new key" in res.stdout
    new_public = public_key_of(fabricd_bin, key_file)
    assert new_public != old_public
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    with open(key_file) as f:
        private = f.read().strip()
    assert private not in res.stdout + res.stderr
    definition = assert_members(fabricd_bin, tmp, path, ["pve1", "pve2"])
    assert definition["nodes"][1]["public_key"] == new_public
    assert not os.path.exists(key_file + ".new")
    # leave of a node that is not a member: nothing to do
    res = fabricd(fabricd_bin, "leave", "-c", path, "-n", "pve7", check_rc=0)
    assert "not a member" in res.stdout
    # a node in no zone's own node list leaves with no word of zones
    res = fabricd(fabricd_bin, "leave", "-c", path, "-n", "pve2", check_rc=0)
    assert "node pve2 left; the other nodes' daemons remove its peer" in res.stdout, res.stdout


def test_a_link_at_key_new_is_never_followed(fabricd_bin, two_node_files):
    """join writes a new key into KEY.new first: a link planted there (by whoever may write
    the key's directory, such as a sticky /tmp) made fabricd replace the file it named with
    the private key, then turned the key file into that link. Refused, nothing changed."""
    tmp, path = two_node_files["tmp"], two_node_files["path"]
    victim = f"{tmp}/victim"
    with open(victim, "w") as f:
        f.write("not a key\n")
    text = open(path).read()
    for name, extra in (("pve2", ["--rotate-key", "--underlay", "192.0.2.12"]),
                        ("pve3", ["--underlay", "192.0.2.13"])):
        key_file = f"{tmp}/{name}/private.key"
        os.makedirs(os.path.dirname(key_file), exist_ok=True)
        before = open(key_file).read() if os.path.exists(key_file) else None
        os.symlink(victim, key_file + ".new")
        res = fabricd(fabricd_bin, "join", "-c", path, *extra, *key_args(tmp, name),
                      check_rc=1)
        assert f"{key_file}.new is a symbolic link: a private key is written into a file " \
            "of its own, never through a link" in res.stderr, res.stderr
        assert open(victim).read() == "not a key\n" and open(path).read() == text, name
        assert os.path.islink(key_file + ".new") and not os.path.islink(key_file), name
        assert (open(key_file).read() if os.path.exists(key_file) else None) == before, name


def test_no_new_key_in_a_directory_every_load_refuses(fabricd_bin, two_node_files):
    """A key directory others may write (mode 0775) is refused by every command that reads
    the key; join made a new key there all the same and put its public key into the shared
    definition, for a node whose daemon then refused its own key. Refused first now:
    nothing written, for a join and for --rotate-key."""
    tmp, path = two_node_files["tmp"], two_node_files["path"]
    text = open(path).read()
    for name, extra in (("pve3", ["--underlay", "192.0.2.13"]),
                        ("pve2", ["--rotate-key", "--underlay", "192.0.2.12"])):
        key_dir = f"{tmp}/{name}"
        os.makedirs(key_dir, exist_ok=True)
        before = sorted(os.listdir(key_dir))
        os.chmod(key_dir, 0o775)
        res = fabricd(fabricd_bin, "join", "-c", path, *extra, *key_args(tmp, name),
                      check_rc=1)
        assert f"private key file {key_dir}/private.key is in {key_dir}, which group or " \
            "others may write (mode 0775)" in res.stderr and "nothing was changed" \
            in res.stderr, res.stderr
        assert open(path).read() == text and sorted(os.listdir(key_dir)) == before, name


@pytest.mark.skipif(shutil.which("strace") is None,
                    reason="strace not installed (scripts/install-deps.sh)")
def test_rotate_key_renames_are_made_durable(fabricd_bin, two_node_files):
    """After the definition names the new public key, the key file's rename must survive a
    power cut, or the node is left with a definition whose key it does not have: each rename
    into the key directory is followed by an fsync of that directory (it had none)."""
    tmp, path = two_node_files["tmp"], two_node_files["path"]
    key_dir = f"{tmp}/pve2"
    res = subprocess.run(["strace", "-f", "-e", "trace=rename,renameat,renameat2,openat,fsync",
                          fabricd_bin, "join", "-c", path, "--rotate-key", "--underlay",
                          "192.0.2.12", *key_args(tmp, "pve2")],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    lines = res.stderr.splitlines()
    renames = [i for i, line in enumerate(lines)
               if line.lstrip("[pid 0123456789] ").startswith("rename") and f'"{key_dir}/' in line
               and line.rstrip().endswith("= 0")]
    assert len(renames) >= 2, "\n".join(lines)  # the new key written, then put in place
    for i in renames:
        opened = [line.rsplit("= ", 1)[1] for line in lines[i + 1:]
                  if f'"{key_dir}"' in line and "O_DIRECTORY" in line and "= -" not in line]
        assert opened, f"no open of {key_dir} after: {lines[i]}"
        assert any(line.startswith(f"fsync({opened[0]})") for line in lines[i + 1:]), \
            f"the key directory not synced after: {lines[i]}"


def test_zone_and_vnet_commands(fabricd_bin, two_node_files):
    """zone/vnet add and remove: each edit valid, the same edit again changes nothing."""
    files = two_node_files
    tmp, path = files["tmp"], files["path"]

    def zones():
        with open(path) as f:
            return json.load(f)["zones"]

    res = fabricd(fabricd_bin, "zone", "add", "-c", path, "tenant", "--transport", "secure",
                  "--vnet", "vnet100:100", "--vnet", "vnet101:101", check_rc=0)
    assert "on every node" in res.stdout and "(secure, 2 vnets, " in res.stdout, res.stdout
    assert zones() == [{"name": "tenant", "transport": "secure",
                        "vnets": [{"name": "vnet100", "vni": 100},
                                  {"name": "vnet101", "vni": 101}]}]
    with open(path) as f:
        text = f.read()
    # again (or with a subset of its vnets): byte for byte the same file
    for extra in (["--vnet", "vnet100:100", "--vnet", "vnet101:101"], ["--vnet", "vnet101:101"]):
        res = fabricd(fabricd_bin, "zone", "add", "-c", path, "tenant", "--transport", "secure",
                      *extra, check_rc=0)
        assert "nothing to change" in res.stdout
        assert open(path).read() == text
    res = fabricd(fabricd_bin, "zone", "add", "-c", path, "office", "--transport", "plain",
                  "--nodes", "pve2", "--vnet", "vnet199:199", check_rc=0)
    assert "zone office added (plain, 1 vnet, on the nodes listed)" in res.stdout, res.stdout
    fabricd(fabricd_bin, "vnet", "add", "-c", path, "--zone", "office", "vnet200:200",
            "vnet201:201", check_rc=0)
    # a node list is a set: the same zone asked with its nodes in another order is unchanged
    fabricd(fabricd_bin, "zone", "add", "-c", path, "pair", "--transport", "plain",
            "--nodes", "pve1,pve2", check_rc=0)
    with open(path) as f:
        text = f.read()
    res = fabricd(fabricd_bin, "zone", "add", "-c", path, "pair", "--transport", "plain",
                  "--nodes", "pve2,pve1", check_rc=0)
    assert "nothing to change" in res.stdout and open(path).read() == text, res.stdout
    for nodes in ("pve1,pve1", "pve1"):
        res = fabricd(fabricd_bin, "zone", "add", "-c", path, "pair", "--transport", "plain",
                      "--nodes", nodes, check_rc=1)
        assert "zone pair already exists" in res.stderr and open(path).read() == text, res
    fabricd(fabricd_bin, "zone", "remove", "-c", path, "pair", check_rc=0)
    # a node that joins now is a member of tenant (no node list), not of office
    fabricd(fabricd_bin, "join", "-c", path, "--underlay", "192.0.2.13", *key_args(tmp, "pve3"),
            check_rc=0)
    assert zones()[1] == {"name": "office", "transport": "plain", "nodes": ["pve2"],
                          "vnets": [{"name": "vnet199", "vni": 199},
                                    {"name": "vnet200", "vni": 200},
                                    {"name": "vnet201", "vni": 201}]}
    res = fabricd(fabricd_bin, "render", "-c", path, "-n", "pve3", check_rc=0)
    assert "vnet100" in res.stdout and "vnet200" not in res.stdout, res.stdout
    res = fabricd(fabricd_bin, "vnet", "remove", "-c", path, "vnet201", "vnet999", check_rc=0)
    assert "1 vnet removed (no zone has vnet999: left as it was)" in res.stdout, res.stdout
    res = fabricd(fabricd_bin, "vnet", "remove", "-c", path, "vnet999", "vnet998", check_rc=0)
    assert "no zone has vnet999, vnet998; nothing to change" in res.stdout, res.stdout
    res = fabricd(fabricd_bin, "zone", "remove", "-c", path, "tenant", check_rc=0)
    assert "with its 2 vnets" in res.stdout
    res = fabricd(fabricd_bin, "zone", "remove", "-c", path, "tenant", check_rc=0)
    assert "there is no zone tenant" in res.stdout
    assert [z["name"] for z in zones()] == ["office"]
    fabricd(fabricd_bin, "check", "-c", path, check_rc=0)
    # the lock file is the only thing left next to the definition
    assert not [n for n in os.listdir(tmp) if n.startswith("cluster.json.")
                and n != "cluster.json.lock"]


def test_no_route(fabricd_bin, two_node_files, netns_env):
    """Without --underlay and without a route, init and join say to give --underlay."""
    files = two_node_files
    tmp = files["tmp"]
    for argv in (["init", "-c", files["new"], "--cluster", "lab", "--prefix", PREFIX],
                 ["join", "-c", files["path"]]):
        res = run(["unshare", "--net", fabricd_bin, *argv, *key_args(tmp, "pve5")], check=False)
        assert res.returncode == 1, res.stdout
        assert "give it with --underlay ADDR" in res.stderr, res.stderr
    assert not os.path.exists(files["new"])
    # the only other node's address is one of this host's: no way to tell
    script = ("ip link set lo up && ip addr add 192.0.2.11/32 dev lo && "
              f"exec {fabricd_bin} join -c {files['single']} -n pve5 --key-file {tmp}/pve5.key")
    res = run(["unshare", "--net", "sh", "-c", script], check=False)
    assert res.returncode == 1, res.stdout
    assert "(they are addresses of this host); give it with --underlay ADDR" in res.stderr, \
        res.stderr


@pytest.mark.netns
@pytest.mark.wireguard
def test_cluster_from_init_and_join(make_cluster):
    cluster = make_cluster(3)
    pve1, pve2, pve3 = cluster.nodes
    shared = f"{cluster.tmpdir}/shared"
    os.makedirs(shared)
    path = f"{shared}/cluster.json"
    for node in cluster.nodes:
        # no key yet: init/join generate it
        node.key_file = f"{cluster.tmpdir}/{node.name}-etc/private.key"
    # pve1 finds its underlay address from its default route
    pve1.run(["ip", "route", "add", "default", "dev", "eth0"])
    res = pve1.fabricd("init", "-c", path, "--cluster", cluster.cluster_name,
                       "--prefix", cluster.fabric_prefix)
    assert res.rc == 0, res
    # a zone without --nodes is on every node, so the nodes that join later carry it too
    res = pve1.fabricd("zone", "add", "-c", path, "tenant", "--transport", "secure",
                       "--vnet", "vnet100:100", node_options=False)
    assert res.rc == 0, res
    # pve2 finds its underlay address from the route towards pve1
    res = pve2.fabricd("join", "-c", path)
    assert res.rc == 0, res

    daemons = {}

    def start(node):
        d = Daemon(cluster, node)
        d.path = path  # every node reads the one shared file
        daemons[node.name] = d.start(timeout=30)

    try:
        for node in (pve1, pve2):
            start(node)
        # pve3 joins a running cluster: pve1 and pve2 add it on their own
        res = pve3.fabricd("join", "-c", path)
        assert res.rc == 0, res
        start(pve3)
        with open(path) as f:
            definition = json.load(f)
        assert [(n["name"], n["underlay"], n["fabric_address"])
                for n in definition["nodes"]] == [
            (n.name, n.underlay, n.fabric_address) for n in cluster.nodes]
        for node in cluster.nodes:
            assert stat.S_IMODE(os.stat(node.key_file).st_mode) == 0o600
            node.public_key = public_key_of(cluster.fabricd_bin, node.key_file)
        warm_sessions(cluster.nodes)
        for node in cluster.nodes:
            peers = node.wg_dump().peers
            others = {n.public_key for n in cluster.nodes if n is not node}
            assert set(peers) == others, f"{node.name}: peers {set(peers)}"
            assert all(p.latest_handshake > 0 for p in peers.values()), node.name
        guests = [cluster.add_guest(n, "vnet100", f"10.0.0.{i}/24")
                  for i, n in enumerate(cluster.nodes, 1)]
        for a in guests:
            for b in guests:
                if a is not b:
                    wait_until(lambda: a.ping(b), timeout=10, what=f"{a.name} -> {b.name}")

        # pve2 gets a new key while every daemon runs: the others change their
        # peer, pve2's daemon its device, and the sessions come back by themselves
        res = pve2.fabricd("join", "-c", path, "--rotate-key")
        assert res.rc == 0, res
        old_key, pve2.public_key = pve2.public_key, public_key_of(cluster.fabricd_bin,
                                                                  pve2.key_file)
        assert old_key != pve2.public_key
        for node in (pve1, pve3):
            wait_until(lambda: set(node.wg_dump().peers) == {pve2.public_key,
                                                             ({pve1, pve3} - {node}).pop().public_key},
                       timeout=10, what=f"{node.name}: peer pve2 with its new key")
        wait_until(lambda: pve2.wg_dump().public_key == pve2.public_key, timeout=10,
                   what="pve2: wgfab0 runs the new key")
        # the definition waiting for the new key is tried as soon as the key is there; the
        # last good one met the new key first, and its passes failed for a second or two
        log = daemons["pve2"].log()
        assert "does not match the private key" not in log, log
        warm_sessions(cluster.nodes)
        wait_until(lambda: guests[0].ping(guests[1]), timeout=10, what="g1 -> g2 after rotation")

        res = pve3.fabricd("leave", "-c", path)
        assert res.rc == 0, res
        for node in (pve1, pve2):
            wait_until(lambda: pve3.public_key not in node.wg_dump().peers, timeout=10,
                       what=f"{node.name}: peer pve3 removed")
            wait_until(lambda: pve3.fabric_address not in node.fdb_remotes("vs100"), timeout=10,
                       what=f"{node.name}: FDB entry to pve3 removed")
        assert guests[0].ping(guests[1])
        # on the node that left: its daemon stopped, `down` with the definition as it is
        # now (no copy of the old one is needed) removes what fabricd owns there
        daemons["pve3"].stop()
        assert pve3.owned_links() != []
        res = pve3.fabricd("down", "-c", path)
        assert res.rc == 0 and 'node "pve3" is not in' in res.stderr \
            and "it left the cluster?" in res.stderr, res
        assert pve3.owned_links() == [], pve3.owned_links()
        assert pve3.run(["nft", "list", "table", "inet", "fabricd"], check=False).returncode != 0
        assert "wireguard-go" not in [name for _, name in pve3.processes()]
    finally:
        stop_daemons(daemons)


def test_init_where_the_file_system_decides_the_mode(fabricd_bin, tmp_path):
    """Proxmox's pmxcfs (/etc/pve, where the README puts the definition) refuses any chmod
    but to 0640 with EPERM: init's new file keeps the mode the file system gives. Every
    fchmod after the key's (the first: the key lives in /etc/fabricd, not on pmxcfs) fails
    here as pmxcfs's would (strace's fault injection)."""
    import shutil
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    path = tmp_path / "fabricd.json"
    res = run(["strace", "-f", "-o", "/dev/null", "-e", "trace=fchmod",
               "-e", "inject=fchmod:error=EPERM:when=2+",
               fabricd_bin, "init", "-c", str(path), "--cluster", "lab", "--prefix", PREFIX,
               "--underlay", "192.0.2.11", *key_args(tmp_path, "pve1")], check=False)
    assert res.returncode == 0, res.stderr
    assert json.loads(path.read_text())["nodes"][0]["name"] == "pve1"
    assert stat.S_IMODE(os.stat(tmp_path / "pve1" / "private.key").st_mode) == 0o600
    assert fabricd(fabricd_bin, "check", "-c", str(path)).returncode == 0


def test_init_fills_an_empty_file_made_ahead(fabricd_bin, tmp_path):
    """A file made ahead for its mode (`install -m 0640 /dev/null FILE`) is filled by init,
    keeping that mode (it said "a definition already exists; use join", and join then
    failed on its empty JSON: join now says to init); a file with anything in it is still
    refused."""
    path = tmp_path / "fabricd.json"
    path.write_text("\n")
    os.chmod(path, 0o640)
    res = fabricd(fabricd_bin, "join", "-c", str(path), "--underlay", "192.0.2.12",
                  *key_args(tmp_path, "pve2"), check_rc=1)
    assert f"{path}: empty: nothing was changed; create the cluster in it with `fabricd init" \
        in res.stderr, res.stderr
    assert path.read_text() == "\n" and not (tmp_path / "pve2").exists()
    init = ["init", "-c", str(path), "--cluster", "lab", "--prefix", PREFIX,
            "--underlay", "192.0.2.11", *key_args(tmp_path, "pve1")]
    fabricd(fabricd_bin, *init, check_rc=0)
    assert json.loads(path.read_text())["nodes"][0]["name"] == "pve1"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    res = fabricd(fabricd_bin, *init, check_rc=1)
    assert "a definition already exists" in res.stderr, res.stderr


def test_prefix_for_one_node_is_warned(fabricd_bin, tmp_path):
    path = tmp_path / "f.json"
    res = fabricd(fabricd_bin, "init", "-c", str(path), "--cluster", "lab", "--prefix",
                  "10.9.2.0/32", "--underlay", "192.0.2.11", *key_args(tmp_path, "pve1"),
                  check_rc=0)
    assert "10.9.2.0/32 holds one node's address, this one's: no node can join" in res.stderr
    assert "(such as a /24)" in res.stderr, res.stderr
    res = fabricd(fabricd_bin, "init", "-c", str(tmp_path / "v6.json"), "--cluster", "lab",
                  "--prefix", "fd00:9::/128", "--underlay", "192.0.2.11",
                  *key_args(tmp_path, "pve2"), check_rc=0)
    assert "fd00:9::/128 holds one node's address" in res.stderr
    assert "(such as a /64)" in res.stderr, res.stderr


def test_leave_says_what_a_rejoin_does_not_restore(fabricd_bin, tmp_path):
    """leave takes the node out of zones' own node lists; a later join does not put it back,
    and zone add cannot (the zone differs): both say how, without removing the zone."""
    path = str(tmp_path / "f.json")
    fabricd(fabricd_bin, "init", "-c", path, "--cluster", "lab", "--prefix", PREFIX,
            "--underlay", "192.0.2.11", *key_args(tmp_path, "pve1"), check_rc=0)
    fabricd(fabricd_bin, "join", "-c", path, "--underlay", "192.0.2.12",
            *key_args(tmp_path, "pve2"), check_rc=0)
    fabricd(fabricd_bin, "zone", "add", "-c", path, "red", "--transport", "plain",
            "--nodes", "pve1,pve2", "--vnet", "vnet100:100", check_rc=0)
    res = fabricd(fabricd_bin, "leave", "-c", path, "-n", "pve2", check_rc=0)
    assert "does not put it back into those zones' node lists" in res.stdout, res.stdout
    assert "node pve2 left (and the node lists of 1 zone);" in res.stdout, res.stdout
    fabricd(fabricd_bin, "join", "-c", path, "--underlay", "192.0.2.12",
            *key_args(tmp_path, "pve2"), check_rc=0)
    res = fabricd(fabricd_bin, "zone", "add", "-c", path, "red", "--transport", "plain",
                  "--nodes", "pve1,pve2", "--vnet", "vnet100:100", check_rc=1)
    assert "change its node list by editing zones[0].nodes" in res.stderr, res.stderr


def test_init_through_a_link_to_a_file_not_made_yet_keeps_the_link(fabricd_bin, tmp_path):
    """cluster.json -> shared/fabricd.json, the file not there yet (the first node of a
    shared directory): init makes the target, keeps the link, and locks next to the target
    (it replaced the link with a local file, and locked next to the link)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    link = tmp_path / "cluster.json"
    link.symlink_to("shared/fabricd.json")
    fabricd(fabricd_bin, "init", "-c", str(link), "--cluster", "lab", "--prefix", PREFIX,
            "--underlay", "192.0.2.11", *key_args(tmp_path, "pve1"), check_rc=0)
    assert link.is_symlink() and os.readlink(link) == "shared/fabricd.json"
    assert json.loads((shared / "fabricd.json").read_text())["nodes"][0]["name"] == "pve1"
    assert (shared / "fabricd.json.lock").exists() and not (tmp_path / "cluster.json.lock").exists()
    # a join through the link edits the shared file too
    fabricd(fabricd_bin, "join", "-c", str(link), "--underlay", "192.0.2.12",
            *key_args(tmp_path, "pve2"), check_rc=0)
    assert len(json.loads((shared / "fabricd.json").read_text())["nodes"]) == 2
    assert link.is_symlink()
    # a chain of links, as long as the kernel follows (it stopped after 8 and wrote the 9th)
    chain = tmp_path / "L0"
    chain.symlink_to("shared/chained.json")
    for i in range(1, 12):
        (tmp_path / f"L{i}").symlink_to(f"L{i - 1}")
    fabricd(fabricd_bin, "init", "-c", str(tmp_path / "L11"), "--cluster", "lab", "--prefix",
            PREFIX, "--underlay", "192.0.2.11", *key_args(tmp_path, "pve3"), check_rc=0)
    assert (shared / "chained.json").is_file()
    assert all((tmp_path / f"L{i}").is_symlink() for i in range(12))


def test_rotation_between_its_steps_is_no_error_unless_it_stalls(make_cluster):
    """A daemon's pass between `join --rotate-key`'s two steps (the definition already
    names the new key, KEY.new not yet renamed over KEY) is a legal edit under way: it
    logs what it waits for, no "error:" (two error lines per rotation before). A rotation
    left between its steps (KEY.new 5 s old) is still an error. The steps are taken by
    hand here, so the daemon surely sees the state between them."""
    from fabtest.definition import zone
    cluster = make_cluster(2)
    pve1, pve2 = cluster.nodes
    path = cluster.write_definition(cluster.definition(
        zones=[zone("t", "secure", [("vnet100", 100)])]))
    daemons = {}
    try:
        for node in cluster.nodes:
            d = Daemon(cluster, node)
            d.path = path
            daemons[node.name] = d.start(timeout=30)
        d2 = daemons["pve2"]

        def rotate_first_step():
            """join's first step: KEY.new (0600), then the definition naming its key."""
            private = run(["wg", "genkey"]).stdout.strip()
            public = run(["wg", "pubkey"], input=private + "\n").stdout.strip()
            fd = os.open(pve2.key_file + ".new", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(private + "\n")
            definition = json.load(open(path))
            definition["nodes"][1]["public_key"] = public
            cluster.write_definition(definition, path)
            return public

        mark = d2.mark()
        public = rotate_first_step()
        d2.wait_log("between its two steps", since=mark)
        os.rename(pve2.key_file + ".new", pve2.key_file)
        wait_until(lambda: pve2.wg_dump().public_key == public, timeout=10,
                   what="pve2: wgfab0 runs the new key")
        wait_until(lambda: public in pve1.wg_dump().peers, timeout=10, what="pve1: new peer key")
        log = d2.log_since(mark)
        assert "error:" not in log, log
        assert "not applied on this node yet" in log, log

        # cut short: KEY.new stays; once it is ROTATION_STEP_S (5 s) old, an error says so
        mark = d2.mark()
        public = rotate_first_step()
        log = d2.wait_log("error: nodes[1].public_key is the key in", "cannot be applied",
                          since=mark, timeout=15)
        assert f"run `fabricd join -c FILE` again to finish it" in log, log
        os.rename(pve2.key_file + ".new", pve2.key_file)
        wait_until(lambda: pve2.wg_dump().public_key == public, timeout=10,
                   what="pve2: wgfab0 runs the second new key")
    finally:
        stop_daemons(daemons)


def test_a_stalled_rotation_whose_key_new_is_ahead_of_the_clock_is_an_error(make_cluster):
    """KEY.new's age tells a rotation under way (under 5 s) from one cut short. With its time
    ahead of the clock (the clock set back since: a boot before NTP), the age was negative,
    so "under way" for as long as the clock lagged: an hour here, an info line every retry
    and never the error that says to finish it."""
    import time
    from fabtest.definition import zone
    cluster = make_cluster(2)
    pve2 = cluster.node("pve2")
    path = cluster.write_definition(cluster.definition(
        zones=[zone("t", "plain", [("vnet100", 100)])]))
    d = Daemon(cluster, pve2)
    d.path = path
    d2 = d.start(timeout=30)
    try:
        private = run(["wg", "genkey"]).stdout.strip()
        public = run(["wg", "pubkey"], input=private + "\n").stdout.strip()
        fd = os.open(pve2.key_file + ".new", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(private + "\n")
        ahead = time.time() + 3600
        os.utime(pve2.key_file + ".new", (ahead, ahead))
        mark = d2.mark()
        definition = json.load(open(path))
        definition["nodes"][1]["public_key"] = public
        cluster.write_definition(definition, path)
        log = d2.wait_log("error: nodes[1].public_key is the key in", "cannot be applied",
                          since=mark, timeout=3)
        assert "run `fabricd join -c FILE` again to finish it" in log, log
    finally:
        stop_daemons({"pve2": d2})


def test_leave_of_a_route_reflector(fabricd_bin, tmp_path):
    """A node named in fabric.evpn.route_reflectors leaves: with another reflector left, leave
    takes it out of the list as out of the zones' node lists; the only reflector is refused,
    saying what to do. Both were refused with "n1 is not a node of this cluster; name a node
    from nodes" (the edited file's check), though n1 was one."""
    path = str(tmp_path / "f.json")
    fabricd(fabricd_bin, "init", "-c", path, "--cluster", "lab", "--prefix", PREFIX,
            "--underlay", "192.0.2.11", *key_args(tmp_path, "pve1"), check_rc=0)
    for i in (2, 3):
        fabricd(fabricd_bin, "join", "-c", path, "--underlay", f"192.0.2.1{i}",
                *key_args(tmp_path, f"pve{i}"), check_rc=0)

    def write(reflectors):
        with open(path) as f:
            definition = json.load(f)
        definition["fabric"].update(control_plane="evpn",
                                    evpn={"asn": 65000, "route_reflectors": reflectors})
        definition["zones"] = [{"name": "z", "transport": "plain",
                                "vnets": [{"name": "vnet100", "vni": 100}]}]
        with open(path, "w") as f:
            json.dump(definition, f, indent=2)
        with open(path) as f:
            return f.read()

    text = write(["pve1"])
    res = fabricd(fabricd_bin, "leave", "-c", path, "-n", "pve1", check_rc=1)
    assert "fabric.evpn.route_reflectors[0]: node pve1 is the only route reflector" in res.stderr
    assert "name another reflector first" in res.stderr and "not a node" not in res.stderr, \
        res.stderr
    assert open(path).read() == text
    write(["pve2", "pve1"])
    res = fabricd(fabricd_bin, "leave", "-c", path, "-n", "pve1", check_rc=0)
    assert "node pve1 left (and fabric.evpn.route_reflectors)" in res.stdout, res.stdout
    with open(path) as f:
        definition = json.load(f)
    assert definition["fabric"]["evpn"]["route_reflectors"] == ["pve2"]
    assert [n["name"] for n in definition["nodes"]] == ["pve2", "pve3"]
    fabricd(fabricd_bin, "check", "-c", path, check_rc=0)


def test_a_definition_that_cannot_be_replaced_says_what_to_do(fabricd_bin, two_node_files):
    """The lock file there, but the temporary file cannot be written next to the definition
    (an immutable directory), or the definition cannot be replaced (an immutable file): the
    error names the file and says what to do (it said only "nothing was changed")."""
    files = two_node_files
    path, tmp = files["path"], files["tmp"]
    if run(["chattr", "+i", path], check=False).returncode != 0:
        pytest.skip("this file system has no immutable attribute")
    try:
        text = open(path).read()
        for argv in (["zone", "add", "-c", path, "blue", "--transport", "plain"],
                     ["join", "-c", path, "--underlay", "192.0.2.13",
                      *key_args(tmp, "pve3")]):
            res = fabricd(fabricd_bin, *argv, check_rc=1)
            assert f"{path}: cannot replace it: Operation not permitted; nothing was changed: " \
                   "an edit renames a new file over it; allow that" in res.stderr, res.stderr
        run(["chattr", "-i", path])
        run(["chattr", "+i", tmp])
        res = fabricd(fabricd_bin, "zone", "add", "-c", path, "blue", "--transport", "plain",
                      check_rc=1)
        assert ": cannot write it: Operation not permitted; nothing was changed: an edit " \
               "writes a new file next to the definition" in res.stderr, res.stderr
        assert open(path).read() == text
    finally:
        run(["chattr", "-i", tmp], check=False)
        run(["chattr", "-i", path], check=False)


def test_a_definition_that_cannot_be_read_says_what_to_do(fabricd_bin, two_node_files):
    """A read error that is not the operator's -c (EIO: the disk, the network file system)
    points at the file system, not at -c FILE (it said to give the definition file)."""
    import shutil
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    path = two_node_files["path"]
    text = open(path).read()
    res = run(["strace", "-f", "-o", "/dev/null", "-P", path, "-e", "trace=read",
               "-e", "inject=read:error=EIO", fabricd_bin, "zone", "add", "-c", path, "blue",
               "--transport", "plain"], check=False)
    assert res.returncode == 1, res.stderr
    assert f"{path}: cannot read it: Input/output error; nothing was changed: check the file " \
           "system it is on (dmesg), then try again" in res.stderr, res.stderr
    assert open(path).read() == text


def test_a_private_key_pasted_as_a_public_key_is_said(fabricd_bin, two_node_files, netns_env):
    """The private key pasted into the definition in the place of a public key (this node's
    or another's) is known to every node that reads it: said as such, with the way out
    (it was "does not match", or nothing at all in another node's place)."""
    tmp, path = two_node_files["tmp"], two_node_files["path"]
    key_file = f"{tmp}/pve1/private.key"
    private = open(key_file).read().strip()
    ns = f"fpk{os.getpid() & 0xffff:04x}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for slot in (0, 1):
            definition = json.load(open(path))
            definition["nodes"][slot]["public_key"] = private
            leaked = f"{tmp}/leaked{slot}.json"
            with open(leaked, "w") as f:
                json.dump(definition, f)
            res = subprocess.run(["ip", "netns", "exec", ns, fabricd_bin, "plan", "-c", leaked,
                                  "-n", "pve1", "--key-file", key_file],
                                 capture_output=True, text=True, timeout=30)
            assert res.returncode == 1, res
            assert f"nodes[{slot}].public_key is the private key in {key_file}, not its " \
                "public key: every node that reads the definition has it now; give this " \
                "node a new key with `fabricd join -c FILE --rotate-key`" in res.stderr, res
            assert private not in res.stdout + res.stderr
    finally:
        subprocess.run(["ip", "netns", "delete", ns])
