# SPDX-License-Identifier: GPL-2.0-or-later
"""fabricd check: the examples pass, broken definitions fail with their JSON
path, the schema accepts every example, and valgrind finds no leak.

Runs the built binary (fabricd/fabricd, or $FABRICD); no root needed."""
import copy
import json
import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.json"))


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture(scope="session")
def fabricd(repo):
    path = pathlib.Path(os.environ.get("FABRICD", repo / "fabricd" / "fabricd"))
    if not path.exists():
        pytest.fail(f"{path} is missing: run make first")
    return path


@pytest.fixture(scope="session")
def schema(repo):
    jsonschema = pytest.importorskip("jsonschema")
    with open(repo / "schemas" / "cluster.schema.json") as f:
        doc = json.load(f)
    jsonschema.Draft202012Validator.check_schema(doc)
    return jsonschema.Draft202012Validator(doc, format_checker=jsonschema.FormatChecker())


@pytest.fixture
def minimal():
    with open(REPO / "examples" / "minimal-2node.json") as f:
        return json.load(f)


def check(fabricd, path, *extra):
    return subprocess.run([str(fabricd), "check", "-c", str(path), *extra],
                          capture_output=True, text=True, timeout=60)


def write(tmp_path, doc, name="cluster.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
    return path


def test_examples_exist():
    names = {p.name for p in EXAMPLES}
    assert {"minimal-2node.json", "vxlan-3node.json", "ipv6-underlay.json",
            "jumbo-9000.json"} <= names


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_passes(fabricd, example):
    r = check(fabricd, example)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{example}: ok (")
    assert "error:" not in r.stderr


def test_ok_line_counts(fabricd, repo):
    r = check(fabricd, repo / "examples" / "vxlan-3node.json")
    assert r.stdout == f"{repo / 'examples' / 'vxlan-3node.json'}: ok (3 nodes, 3 zones, 4 vnets)\n"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_matches_schema(schema, example):
    with open(example) as f:
        errors = [e.message for e in schema.iter_errors(json.load(f))]
    assert errors == []


def set_path(doc, path, value):
    *head, last = path
    for key in head:
        doc = doc[key]
    if value is KeyError:
        del doc[last]
    else:
        doc[last] = value


BROKEN = [
    # (id, JSON path to change, new value, path expected in stderr, message piece)
    ("vni-zero", ["zones", 0, "vnets", 0, "vni"], 0, "zones[0].vnets[0].vni", "out of range"),
    ("vni-string", ["zones", 0, "vnets", 0, "vni"], "100", "zones[0].vnets[0].vni",
     "is a string"),
    ("dup-node", ["nodes", 1, "name"], "pve1", "nodes[1].name", "also the name of nodes[0]"),
    ("outside-prefix", ["nodes", 1, "fabric_address"], "10.254.0.2",
     "nodes[1].fabric_address", "outside fabric.prefix"),
    ("unknown-key", ["fabric", "colour"], "blue", "fabric.colour", "unknown key"),
    ("no-listen-port", ["fabric", "listen_port"], KeyError, "fabric.listen_port", "missing"),
    ("bad-key", ["nodes", 0, "public_key"], "not-a-key", "nodes[0].public_key",
     "not a WireGuard public key"),
    ("mixed-family", ["nodes", 1, "underlay"], "2001:db8::12", "nodes[1].underlay",
     "one family"),
    ("long-vnet", ["zones", 0, "vnets", 0, "name"], "vnet-name-too-long",
     "zones[0].vnets[0].name", "at most 15 bytes"),
    ("vnet-all", ["zones", 0, "vnets", 0, "name"], "all", "zones[0].vnets[0].name",
     "cannot be an interface name"),
    ("bad-transport", ["zones", 0, "transport"], "wireguard", "zones[0].transport",
     "\"plain\" or \"secure\""),
    # addresses no peer can send to: a multicast remote would make head-end
    # replication a multicast group
    ("underlay-unspecified", ["nodes", 0, "underlay"], "0.0.0.0", "nodes[0].underlay",
     "(unspecified) is not an address the other nodes can send to"),
    ("underlay-loopback", ["nodes", 0, "underlay"], "127.0.0.1", "nodes[0].underlay",
     "(loopback)"),
    ("underlay-multicast", ["nodes", 0, "underlay"], "239.1.1.1", "nodes[0].underlay",
     "(multicast)"),
    ("underlay-broadcast", ["nodes", 0, "underlay"], "255.255.255.255", "nodes[0].underlay",
     "(broadcast)"),
    ("endpoint-link-local", ["nodes", 1, "endpoint"], "[fe80::12]:51820", "nodes[1].endpoint",
     "(link-local)"),
    ("endpoint-multicast", ["nodes", 1, "endpoint"], "[ff02::1]:51820", "nodes[1].endpoint",
     "(multicast)"),
    ("endpoint-port-digits", ["nodes", 1, "endpoint"], "203.0.113.5:051820",
     "nodes[1].endpoint", ""),
    # the fabric prefix is routed into wgfab0 on every node
    ("prefix-loopback", ["fabric", "prefix"], "127.0.0.0/24", "fabric.prefix",
     "is loopback address space"),
    ("prefix-multicast", ["fabric", "prefix"], "239.255.0.0/24", "fabric.prefix",
     "is multicast address space"),
    ("prefix-everything", ["fabric", "prefix"], "::/0", "fabric.prefix", "is every address"),
]


@pytest.mark.parametrize("case", BROKEN, ids=lambda c: c[0])
def test_broken_fails_with_path(fabricd, minimal, tmp_path, case):
    _, path, value, where, piece = case
    set_path(minimal, path, value)
    r = check(fabricd, write(tmp_path, minimal))
    assert r.returncode == 1
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines and all(line.startswith(("error: ", "warning: ")) for line in lines), r.stderr
    assert any(line.startswith(f"error: {where}: ") and piece in line for line in lines), r.stderr


def test_every_error_reported(fabricd, minimal, tmp_path):
    minimal["version"] = 2
    minimal["nodes"][0]["name"] = "PVE1"
    minimal["zones"][0]["vnets"][0]["vni"] = 0
    r = check(fabricd, write(tmp_path, minimal))
    assert r.returncode == 1
    for where in ("version", "nodes[0].name", "zones[0].vnets[0].vni"):
        assert f"error: {where}: " in r.stderr


def test_private_key_rejected(fabricd, schema, minimal, tmp_path):
    minimal["nodes"][0]["private_key"] = "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="
    r = check(fabricd, write(tmp_path, minimal))
    assert r.returncode == 1
    assert "error: nodes[0].private_key: " in r.stderr
    assert "/etc/fabricd/private.key" in r.stderr
    assert list(schema.iter_errors(minimal)), "the schema must reject it too"


def test_preshared_key_rejected(fabricd, minimal, tmp_path):
    minimal["fabric"]["PresharedKey"] = "x"
    r = check(fabricd, write(tmp_path, minimal))
    assert r.returncode == 1
    assert "error: fabric.PresharedKey: private and preshared keys never belong" in r.stderr


def test_syntax_error_line_column(fabricd, tmp_path):
    path = write(tmp_path, '{\n  "version": 1,\n  "cluster": "lab"\n  "fabric": {}\n}\n')
    r = check(fabricd, path)
    assert r.returncode == 1
    assert f"error: {path}:4:" in r.stderr
    assert "invalid JSON" in r.stderr


def test_duplicate_key_rejected(fabricd, repo, tmp_path):
    text = (repo / "examples" / "minimal-2node.json").read_text()
    path = write(tmp_path, text.replace('"version": 1,', '"version": 1, "version": 1,', 1))
    r = check(fabricd, path)
    assert r.returncode == 1
    assert f"error: version: appears twice in one object ({path} line 2); keep one" in r.stderr, r


def test_missing_file(fabricd, tmp_path):
    """The path and how to make one: without -c it is the default path, and the message said
    "check the file given with -c" (none was given) until 2026-12-07."""
    r = check(fabricd, tmp_path / "nope.json")
    assert r.returncode == 1 and r.stdout == ""
    assert (f"error: {tmp_path}/nope.json: cannot open: No such file or directory; give the "
            "definition with -c FILE, or make it: `fabricd init -c FILE --cluster NAME "
            "--prefix CIDR`") in r.stderr, r.stderr
    r = check(fabricd, tmp_path)
    assert r.returncode == 1 and f"error: {tmp_path}: cannot read: Is a directory; give the " \
        "definition file with -c FILE" in r.stderr, r.stderr


def test_warning_keeps_success(fabricd, minimal, tmp_path):
    minimal["zones"][0]["mtu"] = 1200
    r = check(fabricd, write(tmp_path, minimal))
    assert r.returncode == 0, r.stderr
    assert "warning: zones[0].mtu: " in r.stderr and "1280" in r.stderr


def test_json_output(fabricd, repo, minimal, tmp_path):
    r = check(fabricd, repo / "examples" / "minimal-2node.json", "--json")
    assert r.returncode == 0
    assert json.loads(r.stdout) == {"ok": True, "errors": [], "warnings": []}
    minimal["zones"][0]["vnets"][0]["vni"] = 0
    minimal["zones"][0]["mtu"] = 1000
    r = check(fabricd, write(tmp_path, minimal), "--json")
    assert r.returncode == 1
    out = json.loads(r.stdout)
    assert out["ok"] is False
    assert any(e.startswith("zones[0].vnets[0].vni: ") for e in out["errors"])
    assert any(w.startswith("zones[0].mtu: ") for w in out["warnings"])


def sanitized(binary):
    # valgrind cannot run an ASan build (make SANITIZE=1)
    return b"__asan_init" in pathlib.Path(binary).read_bytes()


@pytest.mark.parametrize("example", EXAMPLES + ["broken"],
                         ids=lambda p: p if isinstance(p, str) else p.name)
def test_valgrind_clean(fabricd, minimal, tmp_path, example):
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    if sanitized(fabricd):
        pytest.skip("fabricd is an ASan build")
    if example == "broken":
        minimal["nodes"][1]["name"] = "pve1"
        minimal["bogus"] = True
        example = write(tmp_path, minimal)
    r = subprocess.run(["valgrind", "--leak-check=full", "--errors-for-leak-kinds=all",
                        "--error-exitcode=99", str(fabricd), "check", "-c", str(example)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1), r.stderr[-4000:]
    assert "All heap blocks were freed" in r.stderr, r.stderr[-4000:]


def test_pve_zone_schema_and_check_agree(fabricd, schema, minimal, tmp_path):
    """A zone following a Proxmox Simple zone: the schema and check accept and refuse alike."""
    sdn = tmp_path / "sdn"
    sdn.mkdir()
    (sdn / ".running-config").write_text(json.dumps({
        "version": 2, "zones": {"ids": {"front": {"type": "simple"}}},
        "vnets": {"ids": {"web": {"type": "vnet", "zone": "front"},
                          "db": {"type": "vnet", "zone": "front"}}}}))
    minimal["pve_sdn_dir"] = str(sdn)
    minimal["zones"].append({"name": "front", "transport": "secure", "pve_zone": "front",
                             "vni_range": [5000, 5999], "vnets": [{"name": "db", "vni": 42}]})
    assert [e.message for e in schema.iter_errors(minimal)] == []
    r = check(fabricd, write(tmp_path, minimal))
    assert r.returncode == 0 and "2 zones, 3 vnets" in r.stdout, r.stdout + r.stderr
    for change, where in [({"bridges": "own"}, "zones[1].bridges"),
                          ({"pve_zone": "front-1"}, "zones[1].pve_zone"),
                          ({"vni_range": [0, 2]}, "zones[1].vni_range"),
                          ({"vni_range": [9, 2]}, "zones[1].vni_range")]:
        bad = json.loads(json.dumps(minimal))
        bad["zones"][1].update(change)
        if change != {"vni_range": [9, 2]}:  # first <= last: check alone can say it
            assert list(schema.iter_errors(bad)), f"the schema must reject {change}"
        r = check(fabricd, write(tmp_path, bad))
        assert r.returncode == 1 and f"error: {where}: " in r.stderr, r.stderr
    del minimal["zones"][1]["pve_zone"]
    assert list(schema.iter_errors(minimal)), "vni_range without pve_zone"
    r = check(fabricd, write(tmp_path, minimal))
    assert r.returncode == 1 and "error: zones[1].vni_range: is for a zone" in r.stderr


def run(fabricd, *args):
    return subprocess.run([str(fabricd), *map(str, args)], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args", [
    ("check", "{def}"),                      # the file without -c: not the default file
    ("check", "{def}", "-c", "{def}"),
    ("check", "-c", "{def}", "extra"),
    ("render", "-c", "{def}", "stray", "-n", "pve1"),
    ("plan", "-c", "{def}", "-n", "pve1", "stray"),
    ("apply", "-c", "{def}", "-n", "pve1", "stray"),
    ("down", "-c", "{def}", "-n", "pve1", "stray"),
    ("status", "-c", "{def}", "-n", "pve1", "stray"),
    ("run", "-c", "{def}", "-n", "pve1", "stray"),
    ("genkey", "stray"),
    ("pubkey", "stray"),
    ("join", "-c", "{def}", "stray"),
    ("leave", "-c", "{def}", "stray"),
    ("init", "-c", "{def}", "--cluster", "x", "--prefix", "10.1.0.0/24", "stray"),
], ids=lambda a: "-".join(x for x in a if x != "{def}"))
def test_unexpected_argument_is_an_error(fabricd, repo, args):
    """An argument a command does not read fails it, before anything is read or changed."""
    path = repo / "examples" / "minimal-2node.json"
    r = run(fabricd, *(str(path) if a == "{def}" else a for a in args))
    assert r.returncode == 1, r
    culprit = str(path) if args[1] == "{def}" else "stray" if "stray" in args else "extra"
    assert f'{args[0]}: unexpected argument "{culprit}"' in r.stderr, r.stderr
    assert "takes options only" in r.stderr and r.stdout == "", r


@pytest.mark.parametrize("command", ["apply", "down", "run", "set-transport", "genkey"])
def test_json_where_there_is_none_is_an_error(fabricd, repo, command):
    definition = [] if command == "genkey" else ["-c", repo / "examples" / "minimal-2node.json"]
    r = run(fabricd, command, *definition, "--json")
    assert r.returncode == 1, r
    assert f"{command}: --json is not an output of {command}" in r.stderr, r.stderr


def test_options_may_follow_arguments(fabricd, minimal, tmp_path):
    """`set-transport ZONE MODE --grace 0`: getopt reads options wherever they stand."""
    path = write(tmp_path, minimal)
    zone = minimal["zones"][0]
    other = "plain" if zone["transport"] == "secure" else "secure"
    # without -n: the host's own lock, which conftest's host_node_lock removes after the run
    r = run(fabricd, "set-transport", zone["name"], other, "-c", path, "--lock-wait", "0")
    assert r.returncode == 0, r
    assert json.loads(path.read_text())["zones"][0]["transport"] == other


@pytest.mark.parametrize("before,after", [
    (["-c", "{def}"], ["check"]),
    (["--json", "--config={def}"], ["check"]),
    (["-n", "pve2", "-c", "{def}"], ["render", "--json"]),
    (["-c", "{def}"], ["set-transport", "lan", "secure", "--lock-wait", "0", "-n", "pve1"]),
    (["-c", "{def}"], ["vnet", "add", "--zone", "lan", "vnet7:7"]),
], ids=["check", "check-json", "render", "set-transport", "vnet-add"])
def test_options_may_precede_the_command(fabricd, minimal, tmp_path, before, after):
    """`fabricd -c FILE check` is `fabricd check -c FILE`: same output, same exit status,
    same edit (until 2026-12-07 it said: unknown command "-c")."""
    results = []
    for order in ("first", "last"):
        path = write(tmp_path, minimal, f"{order}.json")
        opts = [str(path) if a == "{def}" else a.replace("{def}", str(path)) for a in before]
        argv = opts + after if order == "first" else after[:1] + opts + after[1:]
        r = run(fabricd, *argv)
        assert r.returncode == 0, r
        results.append((r.stdout.replace(str(path), "FILE"), json.loads(path.read_text())))
    assert results[0] == results[1]


@pytest.mark.parametrize("args,message", [
    (["-c"], 'error: "-c" before the command: it needs a value; give the command first'),
    (["--quick", "bench"], 'error: "--quick" before the command: not an option every command '
     "shares; give the command first: fabricd COMMAND [OPTIONS]"),
    (["-c", "x.json"], 'error: no command after "x.json": give one, such as fabricd check -c'),
], ids=["no-value", "not-shared", "no-command"])
def test_options_before_no_command_say_so(fabricd, args, message):
    r = run(fabricd, *args)
    assert r.returncode == 1 and message in r.stderr and r.stdout == "", r


NOWHERE = "/nonexistent/fabricd-test/cluster.json"
UNKNOWN_OPTION_COMMANDS = ["check", "render", "plan", "apply", "run", "status", "down", "genkey",
                           "pubkey", "set-transport", "init", "join", "leave", "zone", "vnet",
                           "import-pve", "bench"]


@pytest.mark.parametrize("command", UNKNOWN_OPTION_COMMANDS)
def test_an_unknown_option_is_one_line_naming_it(fabricd, command):
    """An unknown option is said in one line naming it and the command, on stderr, exit 1
    (until 2026-12-07 getopt's line was followed by the whole usage text)."""
    r = run(fabricd, command, "--foo")
    help_of = f"fabricd {command}" if command in ("zone", "vnet", "import-pve", "bench") \
        else "fabricd"
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr == (f"error: fabricd {command}: unknown option --foo (see {help_of} "
                        "--help)\n"), r.stderr


@pytest.mark.parametrize("args,message", [
    (["apply", "-vx"], "fabricd apply: unknown option -x (see fabricd --help)"),
    (["plan", "--json=yes"], "fabricd plan: option --json takes no value (see fabricd --help)"),
    (["status", "--config"], "fabricd status: option --config needs a value (see fabricd"),
    (["render", "-n"], "fabricd render: option -n needs a value (see fabricd --help)"),
    (["run", "--pro", "x"], "fabricd run: option --pro is ambiguous (--probe-interval, "
     "--probe-file): give it whole"),
    (["bench", "--json"], "fabricd bench: option --json needs a value (see fabricd bench"),
    (["import-pve", "-x"], "fabricd import-pve: unknown option -x (see fabricd import-pve"),
], ids=["letter", "stray-value", "long-no-value", "short-no-value", "ambiguous", "bench",
        "import-pve"])
def test_a_refused_option_is_one_line(fabricd, args, message):
    r = run(fabricd, *args)
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr.startswith(f"error: {message}") and r.stderr.count("\n") == 1, r.stderr


@pytest.mark.parametrize("args,option", [
    (["zone", "list", "-n", "pve1"], "-n"),
    (["vnet", "remove", "-c", NOWHERE, "--key-file=/k", "vnet1"], "--key-file"),
    (["import-pve", "--wg-backend", "kernel"], "--wg-backend"),
    (["bench", "--grace", "5"], "--grace"),
], ids=["zone", "vnet", "import-pve", "bench"])
def test_a_node_commands_option_elsewhere_is_named_as_such(fabricd, args, option):
    """zone, vnet, import-pve and bench have options of their own: one of the node commands'
    there said "unknown option" until 2026-12-07, as if fabricd had none such."""
    r = run(fabricd, *args)
    command = args[0]
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr == (f"error: fabricd {command}: {option} is an option of the commands that "
                        "work on a node (run, apply, plan, status, ...: see fabricd --help), "
                        f"not of {command}; leave it out (see fabricd {command} --help)\n"), \
        r.stderr


@pytest.mark.parametrize("args,message", [
    (["check", "-c", "a.json", "--config=b.json"], '-c given twice ("a.json", then "b.json")'),
    (["-c", "a.json", "check", "-c", "b.json"], '-c given twice ("a.json", then "b.json")'),
    (["render", "-n", "pve1", "-n", "pve2"], '-n given twice ("pve1", then "pve2")'),
    (["apply", "-c", NOWHERE, "--key-file", "/a.key", "--key-file", "/b.key"],
     '--key-file given twice ("/a.key", then "/b.key")'),
    (["plan", "-c", NOWHERE, "--wg-backend", "kernel", "--wg-backend", "userspace"],
     '--wg-backend given twice ("kernel", then "userspace")'),
    (["status", "-c", NOWHERE, "--probe-file", "/a", "--probe-file", "/b"],
     '--probe-file given twice ("/a", then "/b")'),
    (["apply", "-c", NOWHERE, "--grace", "5", "--grace", "0"], '--grace given twice ("5", then'),
    (["init", "-c", NOWHERE, "--prefix", "10.1.0.0/24", "--cluster", "a", "--cluster", "b"],
     '--cluster given twice ("a", then "b")'),
    (["import-pve", "-o", "a.json", "--output", "b.json"], '-o given twice ("a.json", then'),
    (["import-pve", "--sdn-dir", "/a", "--sdn-dir", "/b"], '--sdn-dir given twice ("/a", then'),
    (["bench", "--json", "a.json", "--json", "b.json", "--help"],
     '--json given twice ("a.json", then'),
], ids=["check-c", "c-before-and-after", "render-n", "apply-key-file", "plan-wg-backend",
        "status-probe-file", "apply-grace", "init-cluster", "import-pve-o", "import-pve-sdn-dir",
        "bench-json"])
def test_a_single_valued_option_given_twice_is_refused(fabricd, args, message):
    """`-c a.json -c b.json` worked on b.json, silently (until 2026-12-07; zone and vnet
    refused theirs since 8fbb59e): refused, before anything is read or changed (NOWHERE:
    a binary without the check fails at once too, touching nothing)."""
    r = run(fabricd, *args)
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr.startswith(f"error: {message}"), r.stderr
    assert r.stderr.endswith(": give it once\n") and r.stderr.count("\n") == 1, r.stderr


def test_the_same_value_twice_is_harmless(fabricd, repo):
    example = repo / "examples" / "minimal-2node.json"
    r = run(fabricd, "check", "-c", example, "--config", example, "-n", "pve1", "-n", "pve1")
    assert r.returncode == 0, r


def run_in(cwd, fabricd, *args):
    return subprocess.run([str(fabricd), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_one_file_written_two_ways_is_the_same_value(fabricd, repo, tmp_path):
    """`-c a.json -c ./a.json` (a wrapper's default and the operator's own) name one file:
    refused as "given twice" until 2026-12-07. One not there yet counts by its directory;
    two files are still two values."""
    r = run_in(repo, fabricd, "check", "-c", "examples/minimal-2node.json", "-c",
               repo / "examples" / "minimal-2node.json",
               "-c", "./examples/../examples/minimal-2node.json")
    assert r.returncode == 0, r
    r = run_in(tmp_path, fabricd, "import-pve", "--sdn-dir", NOWHERE, "-o", "new.json",
               "-o", tmp_path / "new.json")
    assert r.returncode == 1 and "given twice" not in r.stderr, r
    assert not (tmp_path / "new.json").exists()
    r = run_in(repo, fabricd, "check", "-c", "examples/minimal-2node.json",
               "-c", "examples/vxlan-3node.json")
    assert r.returncode == 1 and "-c given twice" in r.stderr, r


@pytest.mark.parametrize("args", [["help"], ["-v", "--help"], ["-c", "x.json", "-h"]])
def test_help_as_a_word_or_after_options(fabricd, args):
    r = run(fabricd, *args)
    assert r.returncode == 0 and r.stdout.startswith("Usage: fabricd COMMAND"), r


def test_the_host_name_is_a_node_name_whatever_its_case(fabricd, repo):
    """Host names ignore case, node names are lower case: a host called PVE1.Example.org is
    node pve1 for every command that defaults -n to it (render here; import-pve, join and
    the node commands share the one function)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare --uts to set a host name")
    example = repo / "examples" / "minimal-2node.json"
    r = subprocess.run(["unshare", "--uts", "sh", "-c",
                        f"hostname PVE1.Example.org && exec {fabricd} render -c {example} --json"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["node"] == "pve1"


@pytest.mark.parametrize("pair", [("--json", "--dot"), ("--json", "--svg"), ("--dot", "--svg")])
def test_status_takes_one_output_form(fabricd, repo, pair):
    r = run(fabricd, "status", "-c", repo / "examples" / "minimal-2node.json", "-n", "pve1", *pair)
    assert r.returncode == 1 and "status: give one of --json, --dot and --svg" in r.stderr, r


@pytest.mark.parametrize("args", [["check", "-c", "examples/minimal-2node.json"],
                                  ["check", "--json", "-c", "examples/minimal-2node.json"],
                                  ["render", "-c", "examples/minimal-2node.json", "-n", "pve1"],
                                  ["--version"], ["--help"], ["check", "--help"],
                                  ["zone", "--help"], ["vnet", "add", "--help"],
                                  ["bench", "--help"], ["import-pve", "--help"]],
                         ids=["check", "check-json", "render", "version", "help", "check-help",
                              "zone-help", "vnet-help", "bench-help", "import-pve-help"])
def test_output_that_cannot_be_written_fails(fabricd, repo, args):
    """A full disk (/dev/full) must not leave a truncated output behind exit status 0:
    programs read --json. A command's --help too (until 2026-12-07 `check --help`,
    `zone --help` and `vnet add --help` exited 0 with nothing written)."""
    with open("/dev/full", "w") as full:
        r = subprocess.run([str(fabricd), *args], cwd=repo, stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=30)
    assert r.returncode == 1, r.stderr
    assert "stdout: No space left on device: the output is incomplete" in r.stderr, r.stderr


def test_cluster_option_only_where_it_means_something(fabricd, repo):
    r = run(fabricd, "plan", "-c", repo / "examples" / "minimal-2node.json", "-n", "pve1",
            "--cluster", "other")
    assert r.returncode == 1, r
    assert "plan: --cluster is for init (the new cluster's name) and down" in r.stderr, r.stderr


@pytest.mark.parametrize("args,message", [
    (["render", "-n", "pve1", "--dot"], "render: --dot and --svg are for status only"),
    (["check", "--svg"], "check: --dot and --svg are for status only"),
    (["plan", "-n", "pve1", "--metrics", "127.0.0.1:9999"],
     "plan: --metrics and --metrics-file are for run only"),
    (["apply", "-n", "pve1", "--probe-file", "/tmp/x"],
     "apply: --probe-file is for run, status and down (which removes it) only"),
    (["check", "--probe-interval", "5"], "check: --probe-interval is for run only"),
    (["check", "--grace", "5"], "check: --grace is for run, apply, plan and status"),
    (["status", "-n", "pve1", "--psk-dir", "/tmp/x"],
     "status: --psk-dir is for run, apply and plan only; status would ignore it"),
    (["genkey", "--key-file", "/tmp/x"],
     "genkey: --key-file is not read by genkey; it prints the key: write the file with"),
    (["genkey", "--ifupdown-file", "/tmp/x"],
     "genkey: --ifupdown-file is for run, apply and down (which write it) only"),
    (["check", "--rotate-key"], "check: --rotate-key is for join only; check would ignore it"),
    (["join", "--listen-port", "5555"], "join: --prefix and --listen-port are for init"),
    (["plan", "-n", "pve1", "--underlay", "192.0.2.1"], "plan: --underlay is for init and join"),
], ids=["render-dot", "check-svg", "plan-metrics", "apply-probe-file", "check-probe-interval",
        "check-grace", "status-psk-dir", "genkey-key-file", "genkey-ifupdown-file", "check-rotate-key",
        "join-listen-port", "plan-underlay"])
def test_an_option_the_command_does_not_read_is_an_error(fabricd, repo, args, message):
    """README: a command refuses an argument it does not read rather than ignoring it."""
    r = run(fabricd, args[0], "-c", repo / "examples" / "minimal-2node.json", *args[1:])
    assert r.returncode == 1 and message in r.stderr, r


@pytest.mark.parametrize("command,option", [
    (c, "--key-file") for c in ("check", "render", "down", "set-transport", "leave")] + [
    (c, "--wg-backend") for c in ("check", "render", "set-transport", "init", "join", "leave")],
    ids=lambda v: v)
def test_key_file_and_wg_backend_only_where_they_are_read(fabricd, command, option):
    """--key-file is read by run, apply, plan, status, init, join and pubkey, --wg-backend by
    run, apply, plan, status and down; the others ignored them silently until 2026-12-07
    (`render --key-file K` checked no key): refused now, before -c is read (NOWHERE)."""
    value = "/nonexistent/private.key" if option == "--key-file" else "kernel"
    r = run(fabricd, command, "-c", NOWHERE, option, value)
    readers = ("run, apply, plan, status, init, join, pubkey" if option == "--key-file"
               else "run, apply, plan, status, down; bench has its own")
    assert r.returncode == 1 and r.stdout == "", r
    assert f"error: {command}: {option} is for the commands that " in r.stderr, r.stderr
    assert f"({readers}) only; {command} would ignore it" in r.stderr, r.stderr


def test_corosync_without_sdn_dir_and_c_beside_sdn_dir(fabricd, repo):
    """--corosync goes with --sdn-dir: alone it was ignored (render read -c FILE); -c FILE
    beside --sdn-dir is not read, and now says so (both were silent until 2026-12-07)."""
    pve = repo / "tests" / "fixtures" / "pve" / "pve92"
    example = repo / "examples" / "minimal-2node.json"
    r = run(fabricd, "render", "-c", example, "-n", "pve1", "--corosync", pve / "corosync.conf")
    assert r.returncode == 1 and r.stdout == "" and (
        "error: render: --corosync goes with --sdn-dir DIR (the definition from Proxmox); "
        "without it render reads -c FILE and would ignore --corosync") in r.stderr, r
    r = run(fabricd, "render", "-c", example, "--sdn-dir", pve / "sdn", "-n", "hv1")
    assert (f"warning: render: --sdn-dir takes the definition from Proxmox's SDN "
            f"configuration, so -c {example} is not read; leave -c out") in r.stderr, r.stderr


@pytest.mark.parametrize("args,message", [
    (["run", "--metrics-file", "/tmp/x", "--metrics-file-interval", value],
     f'--metrics-file-interval "{value}": give seconds, 0.5..3600 (default 10)')
    for value in ("0", "0.1", "abc", "3601", "")] + [
    (["apply", "--metrics-file-interval", "5"],
     "apply: --metrics-file-interval is for run (with --metrics-file) only; apply would "
     "ignore it"),
    (["run", "--metrics-file-interval", "5"],
     "run: --metrics-file-interval is how often --metrics-file is written; give "
     "--metrics-file PATH too, or leave the interval out"),
], ids=["zero", "tenth", "abc", "3601", "empty", "apply", "run-without-file"])
def test_metrics_file_interval_errors(fabricd, repo, args, message):
    """run --metrics-file-interval SECONDS, 0.5..3600: anything else is refused, as is the
    option where nothing would read it (another command, or run without --metrics-file);
    the daemon never starts."""
    r = run(fabricd, args[0], "-c", repo / "examples" / "minimal-2node.json", "-n", "pve1",
            *args[1:])
    assert r.returncode == 1 and message in r.stderr, r


@pytest.mark.parametrize("args,message", [
    (["genkey", "-c", "x"], "genkey: -c, -n, --wg-backend and --cluster are not read by genkey: "
     "it reads nothing and prints a key"),
    (["pubkey", "-n", "pve1"], "pubkey: -c, -n, --wg-backend and --cluster are not read by "
     "pubkey: it reads a private key and prints a key"),
    (["pubkey", "--wg-backend", "kernel"], "pubkey: -c, -n, --wg-backend and --cluster"),
    (["genkey", "--cluster", "lab"], "genkey: -c, -n, --wg-backend and --cluster"),
    (["pubkey", "--key-file", ""], "--key-file \"\": give a value"),
    (["plan", "--psk-dir", ""], "--psk-dir \"\": give a value"),
    (["genkey", "extra"], "genkey takes options only (it prints a new private key)"),
    (["pubkey", "extra"], "pubkey takes options only (the private key from stdin or --key-file)"),
], ids=["genkey-c", "pubkey-n", "pubkey-backend", "genkey-cluster", "empty-key-file",
        "empty-psk-dir", "genkey-arg", "pubkey-arg"])
def test_key_commands_refuse_what_they_do_not_read(fabricd, args, message):
    """genkey and pubkey read no definition, node or backend: given one, they refuse it
    (they ignored it); an empty option value is refused, not taken for a file."""
    r = run(fabricd, *args)
    assert r.returncode == 1 and message in r.stderr and r.stdout == "", r


def test_messages_for_odd_input(fabricd, minimal, tmp_path):
    """A byte order mark, an empty -c, --version with more, a definition of one node
    and one zone, a broken definition for down."""
    path = write(tmp_path, "\ufeff" + json.dumps(minimal))
    r = check(fabricd, path)
    assert r.returncode == 1 and f"error: {path}: starts with a UTF-8 byte order mark" \
        in r.stderr, r
    r = run(fabricd, "check", "-c", "")
    assert r.returncode == 1 and r.stderr == "error: -c \"\": give the definition file's path\n", r
    r = run(fabricd, "--version", "extra")
    assert r.returncode == 1 and "--version takes nothing after it" in r.stderr, r
    one = dict(minimal, nodes=minimal["nodes"][:1], zones=[dict(minimal["zones"][0],
                                                                nodes=[minimal["nodes"][0]["name"]])])
    one["zones"][0]["vnets"] = one["zones"][0]["vnets"][:1]
    r = check(fabricd, write(tmp_path, one, "one.json"))
    assert r.returncode == 0 and r.stdout.endswith(": ok (1 node, 1 zone, 1 vnet)\n"), r
    r = run(fabricd, "down", "-c", write(tmp_path, "{", "broken.json"), "-n", "pve1")
    assert r.returncode == 1 and "fabricd down --cluster NAME" in r.stderr, r


@pytest.mark.parametrize("where, key, value", [
    ("version", ("version",), 1),
    ("fabric.listen_port", ("fabric", "listen_port"), 51820),
    ("zones[0].vnets[0].vni", ("zones", 0, "vnets", 0, "vni"), 100),
    ("zones[0].mtu", ("zones", 0, "mtu"), 1400),
])
def test_integral_real_is_an_integer(fabricd, schema, minimal, tmp_path, where, key, value):
    """100.0 is an integer to JSON Schema (what a YAML converter or jq writes): check agrees,
    with the same range; 100.5 is refused by both, by its JSON path."""
    def with_value(text):
        doc = copy.deepcopy(minimal)
        target = doc
        for k in key[:-1]:
            target = target[k]
        target[key[-1]] = "@@"
        return json.dumps(doc, indent=2).replace('"@@"', text)

    whole = with_value(f"{value}.0")
    assert [e.message for e in schema.iter_errors(json.loads(whole))] == []
    r = check(fabricd, write(tmp_path, whole))
    assert r.returncode == 0, r.stderr
    half = with_value(f"{value}.5")
    assert list(schema.iter_errors(json.loads(half))), f"the schema must refuse {value}.5"
    r = check(fabricd, write(tmp_path, half))
    assert r.returncode == 1 and f"error: {where}: {value}.5 is " in r.stderr, r.stderr
    if key[-1] == "vni":
        r = check(fabricd, write(tmp_path, with_value("16777216.0")))
        assert r.returncode == 1 and f"error: {where}: 16777216.0 is out of range" in r.stderr


def output_schema(repo, name):
    jsonschema = pytest.importorskip("jsonschema")
    with open(repo / "schemas" / name) as f:
        doc = json.load(f)
    jsonschema.Draft202012Validator.check_schema(doc)
    return jsonschema.Draft202012Validator(doc)


def test_check_json_follows_its_schema(fabricd, repo, minimal, tmp_path):
    """check --json: valid, with errors and with warnings, each as schemas/check.schema.json."""
    validator = output_schema(repo, "check.schema.json")
    broken = copy.deepcopy(minimal)
    broken["zones"][0]["vnets"][0]["vni"] = 0
    warned = copy.deepcopy(minimal)
    warned["zones"][0]["mtu"] = 1200
    for doc, name, ok in ((minimal, "ok.json", True), (broken, "broken.json", False),
                          (warned, "warned.json", True), ("{", "syntax.json", False)):
        r = check(fabricd, write(tmp_path, doc, name), "--json")
        out = json.loads(r.stdout)
        assert [e.message for e in validator.iter_errors(out)] == [], (name, out)
        assert out["ok"] is ok and r.returncode == (0 if ok else 1), (name, out)
    assert list(validator.iter_errors({"ok": True, "errors": [], "warnings": [], "x": 1}))


def test_render_json_follows_its_schema(fabricd, repo, tmp_path):
    """render --json of every example (with its standby devices), and with the underlay MTU
    left to the kernel (MTUs null), as schemas/render.schema.json."""
    validator = output_schema(repo, "render.schema.json")
    seen = set()
    for example in EXAMPLES:
        doc = json.loads(example.read_text())
        unknown = copy.deepcopy(doc)
        unknown["fabric"].pop("underlay_mtu", None)
        for variant in (doc, unknown):
            path = write(tmp_path, variant)
            for node in [n["name"] for n in doc["nodes"]][:2]:
                r = subprocess.run([str(fabricd), "render", "-c", str(path), "-n", node, "--json"],
                                   capture_output=True, text=True, timeout=60)
                assert r.returncode == 0, r.stderr
                out = json.loads(r.stdout)
                assert [e.message for e in validator.iter_errors(out)] == [], (example, node)
                seen.add(out["underlay_mtu_source"])
                seen.update("standby" for z in out["zones"] for v in z["vnets"] if "standby" in v)
    assert seen == {"definition", "kernel", "standby"}, seen


@pytest.mark.parametrize("args,message", [
    (["--json", "/tmp/out.json", "bench", "--quick"],
     'unknown command "/tmp/out.json" after "--json": options before the command take no '
     "value of bench's own; give them after it (see fabricd --help)"),
    (["-c", "x.json", "chek"], 'unknown command "chek" after "x.json" (see fabricd --help)'),
], ids=["bench-json-first", "typo-after-options"])
def test_an_unknown_command_after_options_is_named(fabricd, args, message):
    """The word after the options is the command: one that is no command is said as such
    (until 2026-12-07 `fabricd --json FILE bench` ran FILE as the command and named bench's
    --quick as its unknown option; nothing was measured, but nothing said why)."""
    r = run(fabricd, *args)
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr == f"error: {message}\n", r.stderr


def test_a_relative_definition_in_a_directory_every_user_may_write_names_it(fabricd,
                                                                           tmp_path):
    """-c cluster.json (no slash) in a working directory every user may write: the warning
    named the file as that directory, and said to chmod the file (12b1394)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shutil.copy(EXAMPLES[0], shared / "cluster.json")
    shared.chmod(0o777)
    r = subprocess.run([fabricd, "check", "-c", "cluster.json"], capture_output=True, text=True,
                       cwd=shared)
    assert r.returncode == 0 and f"warning: cluster.json: it is in {shared}, which every " \
        f"user may write (mode 0777)" in r.stderr and f"run chmod o-w {shared}\n" in r.stderr, \
        r.stderr


def test_a_definition_every_user_may_write_is_warned(fabricd, tmp_path):
    """The definition names every node's WireGuard peers, their keys and endpoints: a file
    every user may write, or one in a directory they may write (no sticky bit), lets any
    of them choose who reads a secure zone's traffic. It was read without a word."""
    src = EXAMPLES[0]
    shared = tmp_path / "shared"
    shared.mkdir()
    path = shared / "cluster.json"
    shutil.copy(src, path)
    r = subprocess.run([fabricd, "check", "-c", path], capture_output=True, text=True)
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    path.chmod(0o666)
    r = subprocess.run([fabricd, "check", "-c", path], capture_output=True, text=True)
    assert r.returncode == 0 and f"warning: {path}: every user may write it (mode 0666)" \
        in r.stderr and f"run chmod o-w {path}" in r.stderr, r.stderr
    path.chmod(0o644)
    for mode, warned in ((0o777, True), (0o1777, False), (0o775, False)):
        shared.chmod(mode)
        r = subprocess.run([fabricd, "check", "-c", path], capture_output=True, text=True)
        assert r.returncode == 0 and (f"warning: {path}: it is in {shared}, which every user "
                                      f"may write (mode {mode:04o})" in r.stderr) == warned, \
            (oct(mode), r.stderr)
