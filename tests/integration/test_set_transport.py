# SPDX-License-Identifier: GPL-2.0-or-later
"""`fabricd set-transport -c FILE ZONE plain|secure`: switching a zone without JSON editing.

No namespaces, no root: only files. What an operator relies on:
  - only the zone's "transport" value changes; every other byte (layout, key
    order, other zones) stays as written, so a diff shows one line;
  - the result passes `fabricd check`; the file keeps its mode (and owner);
  - the file is replaced by rename (a watcher sees old or new, never half),
    and no temporary file is left behind, also when the command fails;
  - a wrong zone, a wrong transport or an invalid file change nothing and
    say what to do;
  - it takes the definition's lock as join, zone and vnet do: run at the same
    moment as another edit, neither is lost; a held lock is waited for up to
    --lock-wait seconds, saying for whom.
"""

import fcntl
import json
import os
import stat
import subprocess
import time

import pytest

from fabtest import run

DEFINITION = """{
  "version": 1,
  "cluster": "lab",
  "fabric": {"prefix": "10.255.0.0/24", "listen_port": 51820},
  "nodes": [
    {"name": "pve1", "underlay": "192.0.2.11", "fabric_address": "10.255.0.1",
     "public_key": "KEY1"},
    {"name": "pve2", "underlay": "192.0.2.12", "fabric_address": "10.255.0.2",
     "public_key": "KEY2"}
  ],
  "zones": [
    {"name": "red",  "transport": "plain", "vnets": [{"name": "vnet100", "vni": 100}]},
    {"name": "blue", "mtu_policy": "max",
     "transport" : "secure",
     "vnets": [{"name": "vnet200", "vni": 200}]},
    {"name": "transport", "transport": "plain", "vnets": [{"name": "vnet300", "vni": 300}]}
  ]
}
"""


@pytest.fixture
def fabricd(fabricd_bin):
    def call(*args):
        return run([fabricd_bin, *args], check=False)
    return call


@pytest.fixture
def definition(fabricd_bin, tmp_path):
    text = DEFINITION
    for i in (1, 2):
        private = run([fabricd_bin, "genkey"]).stdout
        public = run([fabricd_bin, "pubkey"], input=private).stdout.strip()
        text = text.replace(f"KEY{i}", public)
    path = tmp_path / "cluster.json"
    path.write_text(text)
    os.chmod(path, 0o640)
    return path


def changed_lines(before, after):
    a, b = before.splitlines(), after.splitlines()
    assert len(a) == len(b)
    return [(x, y) for x, y in zip(a, b) if x != y]


def leftovers(path):
    """Files next to the definition but it and its lock (kept, as join keeps it)."""
    return sorted(p.name for p in path.parent.iterdir()
                  if p.name not in (path.name, f"{path.name}.lock"))


@pytest.mark.parametrize("zone_name,old,new", [("red", "plain", "secure"),
                                               ("blue", "secure", "plain"),
                                               ("transport", "plain", "secure")])
def test_switch_changes_one_value(fabricd, definition, zone_name, old, new):
    before = definition.read_text()
    ino = definition.stat().st_ino
    res = fabricd("set-transport", "-c", str(definition), zone_name, new)
    assert res.returncode == 0, res.stderr
    assert f"zone {zone_name}: transport {old} -> {new}" in res.stdout
    after = definition.read_text()
    [(line_before, line_after)] = changed_lines(before, after)
    assert line_after == line_before.replace(f'"{old}"', f'"{new}"', 1)
    zones = {z["name"]: z for z in json.loads(after)["zones"]}
    assert zones[zone_name]["transport"] == new
    assert stat.S_IMODE(definition.stat().st_mode) == 0o640
    assert definition.stat().st_ino != ino, "not replaced by rename"
    assert leftovers(definition) == []
    check = fabricd("check", "-c", str(definition))
    assert check.returncode == 0, check.stderr


def test_max_policy_zone_gets_an_mtu_note(fabricd, definition):
    res = fabricd("set-transport", "-c", str(definition), "blue", "plain")
    assert res.returncode == 0, res.stderr
    assert "mtu_policy max" in res.stdout


def test_same_transport_writes_nothing(fabricd, definition):
    ino = definition.stat().st_ino
    res = fabricd("set-transport", "-c", str(definition), "red", "plain")
    assert res.returncode == 0, res.stderr
    assert "already plain" in res.stdout
    assert definition.stat().st_ino == ino


def test_symlink_stays_a_symlink(fabricd, definition, tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(definition)
    res = fabricd("set-transport", "-c", str(link), "red", "secure")
    assert res.returncode == 0, res.stderr
    assert link.is_symlink()
    assert json.loads(definition.read_text())["zones"][0]["transport"] == "secure"


@pytest.mark.parametrize("args,expect", [
    (["green", "secure"], 'zone "green" is not in'),
    (["red", "encrypted"], 'transport "encrypted": use plain or secure'),
    # what is wrong, named (until 2026-12-07 the usage line alone)
    ([], "error: set-transport: give the zone and its transport (plain or secure); usage: "
     "fabricd set-transport"),
    (["red"], "error: set-transport: the transport is missing: give plain or secure after "
     "the zone; usage: fabricd set-transport"),
    (["red", "secure", "extra"], 'error: set-transport: unexpected argument "extra": it '
     "takes a zone and its transport; usage: fabricd set-transport"),
])
def test_bad_arguments_change_nothing(fabricd, definition, args, expect):
    before = definition.read_text()
    res = fabricd("set-transport", "-c", str(definition), *args)
    assert res.returncode == 1
    assert expect in res.stderr, res.stderr
    assert definition.read_text() == before
    assert leftovers(definition) == []


def test_unknown_zone_lists_the_zones(fabricd, definition):
    res = fabricd("set-transport", "-c", str(definition), "green", "secure")
    assert str(definition) in res.stderr
    assert all(f"  {z}" in res.stderr for z in ("red", "blue", "transport")), res.stderr


def test_invalid_definition_is_refused(fabricd, definition):
    broken = definition.read_text().replace('"vni": 200', '"vni": 100')
    definition.write_text(broken)
    res = fabricd("set-transport", "-c", str(definition), "red", "secure")
    assert res.returncode == 1
    assert "not a valid definition" in res.stderr and "vni" in res.stderr, res.stderr
    assert definition.read_text() == broken
    assert leftovers(definition) == []


def test_a_duplicate_key_is_named_with_the_file(fabricd, definition):
    broken = definition.read_text().replace('"vni": 200', '"vni": 200, "vni": 200', 1)
    definition.write_text(broken)
    res = fabricd("set-transport", "-c", str(definition), "red", "secure")
    assert res.returncode == 1
    assert f"vni: appears twice in one object ({definition} line" in res.stderr, res.stderr
    assert "; keep one" in res.stderr and "<input>" not in res.stderr, res.stderr
    assert definition.read_text() == broken


def test_a_switch_that_would_make_the_file_invalid_is_refused(fabricd, definition):
    """red with mtu_policy max and "mtu": 1440 fits plain (1450) but not secure (1390):
    the refusal names the key and says the switch is what breaks it, once."""
    text = definition.read_text().replace(
        '"fabric": {"prefix": "10.255.0.0/24", "listen_port": 51820}',
        '"fabric": {"prefix": "10.255.0.0/24", "listen_port": 51820, "underlay_mtu": 1500}')
    text = text.replace('{"name": "red",  "transport": "plain",',
                        '{"name": "red",  "transport": "plain", "mtu_policy": "max", "mtu": 1440,')
    definition.write_text(text)
    assert fabricd("check", "-c", str(definition)).returncode == 0
    res = fabricd("set-transport", "-c", str(definition), "red", "secure")
    assert res.returncode == 1
    assert "error: zones[0].mtu: 1440 is above the zone's computed MTU 1390" in res.stderr, \
        res.stderr
    assert f"zone red: secure transport would make {definition} invalid" in res.stderr, \
        res.stderr
    assert "did not come out" not in res.stderr and "check -c the edited" not in res.stderr
    assert definition.read_text() == text
    assert leftovers(definition) == []


def test_missing_file(fabricd, tmp_path):
    res = fabricd("set-transport", "-c", str(tmp_path / "none.json"), "red", "secure")
    assert res.returncode == 1
    assert "none.json" in res.stderr


def test_read_only_directory_changes_nothing(fabricd, definition):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only directories")
    before = definition.read_text()
    os.chmod(definition.parent, 0o555)
    try:
        res = fabricd("set-transport", "-c", str(definition), "red", "secure")
    finally:
        os.chmod(definition.parent, 0o755)
    assert res.returncode == 1
    assert "nothing was changed" in res.stderr
    assert definition.read_text() == before


def test_edits_at_the_same_moment_are_all_kept(fabricd_bin, definition):
    """set-transport beside vnet add and another set-transport, started together 12 times:
    every command succeeds and every edit is in the file (without the lock, 4 of 100 such
    pairs lost the switch while both exited 0, and 44 failed)."""
    expected = {"red": "plain", "blue": "secure"}
    for round_ in range(12):
        red = "secure" if expected["red"] == "plain" else "plain"
        blue = "plain" if expected["blue"] == "secure" else "secure"
        procs = [subprocess.Popen([fabricd_bin, *argv], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
                 for argv in (["set-transport", "-c", definition, "red", red],
                              ["vnet", "add", "-c", definition, "--zone", "transport",
                               f"v{round_}:{1000 + round_}"],
                              ["set-transport", "-c", definition, "blue", blue])]
        for p in procs:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, (p.args, out, err)
        expected.update(red=red, blue=blue)
        doc = json.loads(definition.read_text())
        zones = {z["name"]: z for z in doc["zones"]}
        assert {k: zones[k]["transport"] for k in ("red", "blue")} == expected, round_
        vnets = {v["name"] for v in zones["transport"]["vnets"]}
        assert {f"v{i}" for i in range(round_ + 1)} <= vnets, (round_, vnets)


@pytest.fixture
def held_lock(definition):
    """The definition's lock held by this process, as a hung editor would hold it."""
    fd = os.open(f"{definition}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.ftruncate(fd, 0)
    os.write(fd, b"host pveX, pid 4711, join\n")
    yield fd
    os.close(fd)


@pytest.mark.parametrize("argv", [["set-transport", "-c", "DEF", "red", "secure"],
                                  ["join", "-c", "DEF", "--underlay", "192.0.2.13", "-n", "pve3"],
                                  ["leave", "-c", "DEF", "-n", "pve2"],
                                  ["zone", "add", "-c", "DEF", "green", "--transport", "plain"],
                                  ["vnet", "remove", "-c", "DEF", "vnet300"]],
                         ids=["set-transport", "join", "leave", "zone", "vnet"])
def test_a_held_lock_is_waited_for_up_to_lock_wait(fabricd_bin, definition, held_lock, tmp_path,
                                                   argv):
    before = definition.read_text()
    argv = [str(definition) if a == "DEF" else a for a in argv]
    extra = ["--key-file", str(tmp_path / "pve3.key")] if argv[0] == "join" else []
    start = time.monotonic()
    res = run([fabricd_bin, *argv, *extra, "--lock-wait", "1"], check=False)
    took = time.monotonic() - start
    assert res.returncode == 1, res
    assert 0.9 < took < 10, took
    assert f"{definition}: waiting up to 1 s for another edit of it (host pveX, pid 4711, " \
        "join)" in res.stderr, res.stderr
    assert f"error: {definition}: another edit of the definition (host pveX, pid 4711, " \
        "join) has held its lock for more than 1 s; nothing was changed: try again when it " \
        "is done (--lock-wait SECONDS waits longer)" in res.stderr, res.stderr
    assert definition.read_text() == before


def test_a_lock_released_meanwhile_lets_the_edit_through(fabricd_bin, definition, held_lock):
    proc = subprocess.Popen([fabricd_bin, "set-transport", "-c", definition, "red", "secure"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    assert proc.poll() is None, "set-transport did not wait for the held lock"
    os.close(os.dup(held_lock))
    fcntl.flock(held_lock, fcntl.LOCK_UN)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "waiting up to 30 s for another edit of it" in err, err
    assert "zone red: transport plain -> secure" in out
    holder = (definition.parent / f"{definition.name}.lock").read_text()
    assert holder.startswith("host ") and holder.endswith(", set-transport\n"), holder


@pytest.mark.parametrize("command", ["check", "plan", "status", "render", "genkey"])
def test_lock_wait_is_refused_where_nothing_is_locked(fabricd_bin, definition, command):
    given = ["-c", definition, "-n", "pve1"] if command != "genkey" else []
    res = run([fabricd_bin, command, *given, "--lock-wait", "5"], check=False)
    assert res.returncode == 1
    assert f"error: {command}: --lock-wait is for the commands that change a node or edit " \
        f"the definition (run, apply, down, set-transport, init, join, leave, zone, vnet) " \
        f"only; {command} would ignore it" in res.stderr, res.stderr


def test_a_holder_line_left_by_an_editor_that_ended_is_not_named(fabricd_bin, definition):
    """The holder's line outlives it: a lock then held by something that writes none (an
    flock(1) around an editor, say) was named as the long-gone fabricd, inviting an
    operator to end whatever has that pid now."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    fd = os.open(f"{definition}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"host {os.uname().nodename}, pid {gone.pid}, zone add\n".encode())
        fcntl.flock(fd, fcntl.LOCK_EX)
        res = run([fabricd_bin, "set-transport", "-c", definition, "red", "secure",
                   "--lock-wait", "0"], check=False)
        assert res.returncode == 1, res
        assert f"pid {gone.pid}" not in res.stderr, res.stderr
        assert "another edit of the definition (holder not recorded)" in res.stderr, res.stderr
    finally:
        os.close(fd)


def test_a_holder_between_its_lock_and_its_line_is_named(fabricd_bin, definition):
    """An editor writes its holder line just after taking the lock: one that waits and
    read the line in between said "(holder not recorded)" of another fabricd (the soak
    saw it whenever two edits met). It looks again before saying whom it waits for."""
    fd = os.open(f"{definition}.lock", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        proc = subprocess.Popen([fabricd_bin, "set-transport", "-c", definition, "red", "secure"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.1)  # the holder's time between its flock and its line, stretched
        os.write(fd, b"host pveX, pid 4711, join\n")
        time.sleep(0.6)
        fcntl.flock(fd, fcntl.LOCK_UN)
        out, err = proc.communicate(timeout=30)
    finally:
        os.close(fd)
    assert proc.returncode == 0, err
    assert "holder not recorded" not in err, err
    assert "waiting up to 30 s for another edit of it (host pveX, pid 4711, join)" in err, err
