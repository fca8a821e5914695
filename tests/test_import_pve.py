# SPDX-License-Identifier: GPL-2.0-or-later
"""`fabricd import-pve` end to end on the fixtures in tests/fixtures/pve/ (files
only, no root): exit status, nothing written while something does not map
(unless --partial), the result passes `fabricd check`, --key-out writes this
node's private key to a 0600 file and never prints it."""
import json
import re
import os
import pathlib
import shutil
import stat
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
FABRICD = REPO / "fabricd" / "fabricd"
PVE = REPO / "tests" / "fixtures" / "pve"
HV3_PRIVATE = "qG5JpQzeCt45Sabvpq5HSu7xCuJn7s0N9GYOgHGe7EY="


def run(*args):
    return subprocess.run([str(FABRICD), *map(str, args)], capture_output=True, text=True,
                          timeout=30)


def pve_args(set_name):
    return ["--sdn-dir", PVE / set_name / "sdn", "--corosync", PVE / set_name / "corosync.conf"]


def test_unmappable_writes_nothing(tmp_path):
    out = tmp_path / "cluster.json"
    r = run("import-pve", *pve_args("pve92"), "-o", out)
    assert r.returncode == 1
    assert "[wireguard_node: wgf_backup] role" in r.stderr
    assert "nothing written" in r.stderr
    assert not out.exists() and r.stdout == ""


def test_partial_passes_check(tmp_path):
    out = tmp_path / "cluster.json"
    r = run("import-pve", *pve_args("pve92"), "--partial", "-o", out)
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert [n["name"] for n in d["nodes"]] == ["hv1", "hv2", "hv3"]
    assert {z["name"]: z["transport"] for z in d["zones"]} == {"pub": "plain", "sec": "secure"}
    c = run("check", "-c", out)
    assert c.returncode == 0, c.stderr


def test_corosync_beside_the_sdn_directory(clean92, tmp_path):
    """Without --corosync, DIR/../corosync.conf, as run and plan take it (README, Import):
    a staged copy of /etc/pve must not be mixed with this host's live /etc/pve."""
    a = run("import-pve", "--sdn-dir", clean92 / "sdn", "--pending")
    b = run("import-pve", "--sdn-dir", clean92 / "sdn", "--corosync", clean92 / "corosync.conf",
            "--pending")
    assert a.returncode == 0 and b.returncode == 0, a.stderr
    assert a.stdout == b.stdout and "/etc/pve" not in a.stderr, a.stderr
    (clean92 / "corosync.conf").unlink()
    c = run("import-pve", "--sdn-dir", clean92 / "sdn", "--pending")
    assert f"{clean92}/corosync.conf: not found" in c.stderr, c.stderr


def test_pending_equals_running(clean92, tmp_path):
    a = run("import-pve", "--sdn-dir", clean92 / "sdn", "--corosync", clean92 / "corosync.conf",
            "--pending")
    assert a.returncode == 0, a.stderr
    b = run("import-pve", *pve_args("pve92"), "--partial")
    assert a.stdout == b.stdout


def test_key_out(clean92, tmp_path):
    key = tmp_path / "private.key"
    out = tmp_path / "cluster.json"
    r = run("import-pve", "--sdn-dir", clean92 / "sdn", "--corosync", clean92 / "corosync.conf",
            "--pending", "-o", out, "--key-out", key, "-n", "hv3")
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.read_text() == HV3_PRIVATE + "\n"
    for private in ("EF4ev8Wylwg", "ADsowbXfbWe", "qG5JpQzeCt4"):
        assert private not in r.stdout + r.stderr + out.read_text()
    # the key file is what `fabricd` reads: its public key is hv3's in the definition
    pub = subprocess.run([str(FABRICD), "pubkey"], input=key.read_text(), capture_output=True,
                         text=True).stdout.strip()
    nodes = {n["name"]: n for n in json.loads(out.read_text())["nodes"]}
    assert nodes["hv3"]["public_key"] == pub


def test_key_out_takes_the_node_name_proxmox_shows(clean92, tmp_path):
    """A node Proxmox names Hv3 is hv3 in fabricd; `-n Hv3` (its name as Proxmox and
    `hostname` show it) finds its key. It said the node "has no WireGuard key in Proxmox's
    fabric", though it has."""
    for f in [clean92 / "corosync.conf", clean92 / "priv" / "wg-keys.cfg",
              *(clean92 / "sdn").glob("*.cfg")]:
        f.write_text(f.read_text().replace("hv3", "Hv3"))
    key = tmp_path / "private.key"
    r = run("import-pve", "--sdn-dir", clean92 / "sdn", "--pending", "-o", tmp_path / "c.json",
            "--key-out", key, "-n", "Hv3")
    assert r.returncode == 0, r.stderr
    assert key.read_text() == HV3_PRIVATE + "\n"


def test_key_out_mismatch(clean92, tmp_path):
    keys = clean92 / "priv" / "wg-keys.cfg"
    text = keys.read_text()
    keys.write_text(text.replace("qG5JpQzeCt45Sabvpq5HSu7xCuJn7s0N9GYOgHGe7EY=",
                                 "EF4ev8WylwgqZwYpJgmi+7UAjbyzS3kmPjgvGGkGHHY="))
    key, out = tmp_path / "k", tmp_path / "c.json"
    r = run("import-pve", "--sdn-dir", clean92 / "sdn", "--corosync", clean92 / "corosync.conf",
            "--pending", "-o", out, "--key-out", key, "-n", "hv3")
    assert r.returncode == 1
    assert "does not match its public_key" in r.stderr
    assert not key.exists() and not out.exists()
    assert "EF4ev8Wylwg" not in r.stderr


def test_key_out_unknown_node(clean92, tmp_path):
    r = run("import-pve", *pve_args("pve92"), "--partial", "--key-out", tmp_path / "k", "-n",
            "backup")
    assert r.returncode == 1 and "has no WireGuard key" in r.stderr


def test_generate_keys_stable(tmp_path):
    keys = tmp_path / "keys"
    keys.mkdir()
    args = ["import-pve", *pve_args("pve8"), "--partial", "--generate-keys", keys]
    a, b = run(*args), run(*args)
    assert a.returncode == 0 and b.returncode == 0, a.stderr
    assert a.stdout == b.stdout, "a re-import reuses the generated keys"
    for k in ("hv1", "hv2", "hv3"):
        assert stat.S_IMODE((keys / f"{k}.key").stat().st_mode) == 0o600


def test_generate_keys_only_for_an_accepted_import(tmp_path):
    """A refused import writes no key; a key that cannot be written stops the definition."""
    keys = tmp_path / "keys"
    keys.mkdir()
    refused = run("import-pve", *pve_args("pve8"), "--generate-keys", keys, "-o",
                  tmp_path / "out.json")
    assert refused.returncode == 1 and "give --partial" in refused.stderr, refused.stderr
    assert list(keys.iterdir()) == [] and not (tmp_path / "out.json").exists()
    r = run("import-pve", *pve_args("pve8"), "--partial", "--generate-keys", tmp_path / "nodir",
            "-o", tmp_path / "out.json")
    assert r.returncode == 1 and "nodir/hv1.key: cannot write" in r.stderr, r.stderr
    assert "create that directory" in r.stderr and not (tmp_path / "out.json").exists()


def test_missing_running_config(tmp_path):
    r = run("import-pve", "--sdn-dir", tmp_path, "--corosync", PVE / "pve8" / "corosync.conf")
    assert r.returncode == 1 and "--pending" in r.stderr


def test_bad_option():
    r = run("import-pve", "--underlay-mtu", "12")
    assert r.returncode == 1 and "576..65535" in r.stderr


def test_simple_zones_followed(clean92, tmp_path):
    """--simple: each Proxmox Simple zone becomes a zone that follows it (README, Proxmox VE)."""
    sdn = clean92 / "sdn"
    with open(sdn / "zones.cfg", "a") as f:
        f.write("\nsimple: front\n\tmtu 1390\n\tipam pve\n")
    with open(sdn / "vnets.cfg", "a") as f:
        f.write("\nvnet: web\n\tzone front\n")
    args = ["import-pve", "--sdn-dir", sdn, "--corosync", clean92 / "corosync.conf", "--pending"]
    r = run(*args)
    assert r.returncode == 0 and "[simple: front]: not a VXLAN zone" in r.stderr, r.stderr
    assert "front" not in [z["name"] for z in json.loads(r.stdout)["zones"]]
    assert run(*args, "--simple", "fast").returncode == 1

    out = tmp_path / "cluster.json"
    r = run(*args, "--simple", "secure", "-o", out)
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    zones = {z["name"]: z for z in d["zones"]}
    assert zones["front"] == {"name": "front", "transport": "secure", "mtu": 1390,
                              "pve_zone": "front"}, zones["front"]
    assert zones["sec"]["vnets"] == [{"name": "blue", "vni": 700001}], "VXLAN zones as before"
    assert d["pve_sdn_dir"] == os.path.realpath(sdn)
    # check reads the deployed vnets of the followed zone: web, VNI from its name
    running = json.loads((sdn / ".running-config").read_text())
    running["zones"]["ids"]["front"] = {"type": "simple", "mtu": 1390}
    running["vnets"]["ids"]["web"] = {"type": "vnet", "zone": "front"}
    (sdn / ".running-config").write_text(json.dumps(running))
    c = run("check", "-c", out)
    assert c.returncode == 0 and "3 zones, 3 vnets" in c.stdout, c.stdout + c.stderr
    running["vnets"]["ids"]["Web2"] = {"type": "vnet", "zone": "front"}
    (sdn / ".running-config").write_text(json.dumps(running))
    c = run("check", "-c", out)
    assert c.returncode == 1 and "[vnet: Web2]: the vnet id has characters" in c.stderr, c.stderr


def test_output_that_is_not_a_regular_file(clean92, tmp_path):
    """-o into a FIFO (as /dev/stdout or /dev/null) writes into it and leaves it what it is;
    -o through a symlink replaces the file it names and keeps the link."""
    args = ["import-pve", "--sdn-dir", clean92 / "sdn", "--corosync", clean92 / "corosync.conf",
            "--pending"]
    want = run(*args).stdout
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    r = run(*args, "-o", fifo)
    got = reader.communicate(timeout=10)[0]
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a file"
    assert got == want
    target, link = tmp_path / "real.json", tmp_path / "link.json"
    target.write_text("{}")
    link.symlink_to("real.json")
    assert run(*args, "-o", link).returncode == 0
    assert link.is_symlink() and target.read_text() == want


def test_key_out_never_replaces_another_key(clean92, tmp_path):
    """A key already there (made by `fabricd join`, say) is not lost to an import."""
    key = tmp_path / "private.key"
    other = run("genkey").stdout
    key.write_text(other)
    key.chmod(0o600)
    args = ["import-pve", "--sdn-dir", clean92 / "sdn", "--corosync", clean92 / "corosync.conf",
            "--pending", "--key-out", key, "-n", "hv3"]
    r = run(*args)
    assert r.returncode == 1, r
    assert f"--key-out: {key} holds another private key; nothing written" in r.stderr, r.stderr
    assert key.read_text() == other and other.strip() not in r.stderr + r.stdout
    key.write_text(HV3_PRIVATE + "\n")  # the same key: written again, no complaint
    assert run(*args).returncode == 0
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = run(*args[:-4], "--key-out", fifo, "-n", "hv3")
    assert r.returncode == 1 and "not a regular file" in r.stderr, r.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_key_out_is_never_written_through_a_link(clean92, tmp_path):
    """A link at --key-out (planted where others may write) chose which file of the host
    got the private key: its target was replaced by the key. Refused; the link's target,
    the link and the definition stay as they were."""
    victim = tmp_path / "victim"
    victim.write_text("not a key\n")
    victim.chmod(0o644)
    key, out = tmp_path / "private.key", tmp_path / "c.json"
    key.symlink_to(victim)
    r = run("import-pve", "--sdn-dir", clean92 / "sdn", "--corosync", clean92 / "corosync.conf",
            "--pending", "-o", out, "--key-out", key, "-n", "hv3")
    assert r.returncode == 1, r
    assert f"{key}: cannot write: Too many levels of symbolic links (a symbolic link: a " \
        "private key is written into a file of its own, never through a link" in r.stderr, \
        r.stderr
    assert victim.read_text() == "not a key\n" and key.is_symlink() and not out.exists()
    assert HV3_PRIVATE[:11] not in r.stderr + r.stdout


def test_o_is_never_written_through_another_users_link_to_a_directory(clean92, tmp_path):
    """-o naming root's link to shared/sub/c.json, where sub is another user's link to a
    directory of root's: that user chose which file of root's was replaced, as with a
    link of theirs at -o itself (refused since 3ed84e9, which looked at the links of the
    last component only). Refused, naming the link; a chain of root's links is followed."""
    victim_dir, shared = tmp_path / "victim", tmp_path / "shared"
    victim_dir.mkdir()
    shared.mkdir()
    victim = victim_dir / "c.json"
    victim.write_text("root's\n")
    (shared / "sub").symlink_to(victim_dir)
    os.lchown(shared / "sub", 65534, 65534)  # nobody's
    out = tmp_path / "c.json"
    out.symlink_to("shared/sub/c.json")
    args = ["import-pve", "--sdn-dir", clean92 / "sdn", "--corosync", clean92 / "corosync.conf",
            "--pending", "-o", out]
    r = run(*args)
    assert r.returncode == 1 and f"{out}: cannot write: it is a symbolic link of another " \
        "user's (or leads through one)" in r.stderr, r
    assert victim.read_text() == "root's\n" and out.is_symlink()
    os.lchown(shared / "sub", 0, 0)  # root's: followed as ever
    r = run(*args)
    assert r.returncode == 0, r
    assert '"cluster"' in victim.read_text() and out.is_symlink()


def test_no_key_made_where_every_load_refuses_it(clean92, tmp_path):
    """--generate-keys and --key-out into a directory others may write (no sticky bit):
    every command that reads such a key refuses it, so it is not made (it was)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    r = run("import-pve", *pve_args("pve8"), "--partial", "--generate-keys", shared, "-o",
            tmp_path / "out.json")
    assert r.returncode == 1 and f"private key file {shared}/hv1.key is in {shared}, which " \
        "group or others may write (mode 0777)" in r.stderr, r.stderr
    r = run("import-pve", "--sdn-dir", clean92 / "sdn", "--corosync", clean92 / "corosync.conf",
            "--pending", "--key-out", shared / "private.key", "-n", "hv3")
    assert r.returncode == 1 and "--key-out: private key file " in r.stderr and \
        "nothing written" in r.stderr, r.stderr
    assert list(shared.iterdir()) == [] and not (tmp_path / "out.json").exists()


def test_output_where_the_file_system_decides_the_mode(tmp_path):
    """Proxmox's pmxcfs (/etc/pve, where the README puts the definition) answers any chmod
    but to 0640 with EPERM: the definition and the keys keep the mode it gives (here every
    fchmod fails, by strace's fault injection; the keys were made 0600 by open)."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    out, keys = tmp_path / "fabricd.json", tmp_path / "keys"
    keys.mkdir(mode=0o700)
    r = subprocess.run(["strace", "-f", "-o", "/dev/null", "-e", "trace=fchmod",
                        "-e", "inject=fchmod:error=EPERM", str(FABRICD), "import-pve",
                        *map(str, pve_args("pve8")), "--partial", "--generate-keys",
                        str(keys), "-o", str(out)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert run("check", "-c", out).returncode == 0
    made = list(keys.iterdir())
    assert made and all(stat.S_IMODE(k.stat().st_mode) == 0o600 for k in made), made



def clean_running(sdn, edit=None):
    """sdn/.running-config without the external node, as clean92 did to the pending files;
    edit(doc) changes it further."""
    running = sdn / ".running-config"
    doc = json.loads(running.read_text())
    del doc["fabrics"]["ids"]["wgf_backup"]
    hv1 = doc["fabrics"]["ids"]["wgf_hv1"]
    hv1["peers"] = [p for p in hv1["peers"] if "external" not in p]
    if edit:
        edit(doc)
    running.write_text(json.dumps(doc))


def test_pending_edits_not_applied_are_said(clean92, tmp_path):
    """Without --pending, .running-config (the last SDN Apply) is imported: a vnet added, a
    tag changed and a vnet deleted in the *.cfg files but not applied are each named with
    file and line (until 2026-12-07 they were left out without a word)."""
    sdn = clean92 / "sdn"
    clean_running(sdn)
    r = run("import-pve", "--sdn-dir", sdn)
    assert r.returncode == 0 and "applied yet" not in r.stderr, r.stderr
    vnets = sdn / "vnets.cfg"
    vnets.write_text("vnet: blue\n\tzone sec\n\ttag 700009\n\n"
                     "vnet: teal\n\tzone pub\n\ttag 700003\n\n")
    r = run("import-pve", "--sdn-dir", sdn)
    assert r.returncode == 0, r.stderr
    assert 'vnets.cfg:3 [vnet: blue] tag: "700009" is not applied yet: .running-config has ' \
        '"700001", which is what import-pve reads; Apply the SDN configuration in Proxmox' \
        in r.stderr, r.stderr
    assert "vnets.cfg:5 [vnet: teal]: not applied yet (not in .running-config), so not " \
        "imported" in r.stderr, r.stderr
    assert ".running-config (vnets) [vnet: green]: deleted in vnets.cfg but not applied " \
        "yet: import-pve reads the deployed one" in r.stderr, r.stderr
    d = json.loads(r.stdout)
    assert sorted((v["name"], v["vni"]) for z in d["zones"] for v in z["vnets"]) == \
        [("blue", 700001), ("green", 700002)]
    r = run("import-pve", "--sdn-dir", sdn, "--pending")
    assert r.returncode == 0 and "applied yet" not in r.stderr, r.stderr


def test_pending_nodes_edit_not_applied_is_said(clean92):
    """A zone's `nodes` edited in zones.cfg but not applied is said, as tag and peers are
    (until 2026-12-07 it was left out: the zone's members changed without a word).
    .running-config holds the node set in hash order ({"hv3":1,"hv1":1,"hv2":1}) and peers
    may be reordered: the same sets are no edit."""
    sdn = clean92 / "sdn"
    clean_running(sdn, lambda doc: doc["zones"]["ids"]["pub"].update(
        peers="203.0.113.13,203.0.113.11,203.0.113.12"))
    r = run("import-pve", "--sdn-dir", sdn)
    assert r.returncode == 0 and "applied yet" not in r.stderr, r.stderr
    zones = sdn / "zones.cfg"
    zones.write_text(zones.read_text().replace("nodes hv1,hv2,hv3", "nodes hv1,hv2"))
    r = run("import-pve", "--sdn-dir", sdn)
    assert r.returncode == 0, r.stderr
    assert 'zones.cfg:4 [vxlan: sec] nodes: "hv1,hv2" is not applied yet: .running-config ' \
        'has "' in r.stderr, r.stderr


def test_corosync_inside_the_wireguard_fabric_is_no_underlay(clean92):
    """Corosync's ring1 run inside the WireGuard fabric (ring1_addr = the node's fabric ip),
    nodes without a WireGuard endpoint address, a zone peering those fabric addresses:
    Proxmox sends the zone inside WireGuard, so it is secure and the underlay stays ring0.
    669e301 took ring1 (the link the peers name) as underlay: every node was refused as
    'inside the fabric prefix' and nothing was written (before 669e301: imported, plain)."""
    fabrics = clean92 / "sdn" / "fabrics.cfg"
    fabrics.write_text(re.sub(r"\tendpoint 203\.0\.113\.1\d\n", "", fabrics.read_text()))
    corosync = clean92 / "corosync.conf"
    text = corosync.read_text()
    for i in (1, 2, 3):
        text = text.replace(f"ring1_addr: 2001:db8:10::1{i}", f"ring1_addr: 10.250.0.{i}")
    corosync.write_text(text)
    zones = clean92 / "sdn" / "zones.cfg"
    zones.write_text(zones.read_text().replace("peers 203.0.113.11,203.0.113.12,203.0.113.13",
                                               "peers 10.250.0.1,10.250.0.2,10.250.0.3"))
    r = run("import-pve", "--sdn-dir", clean92 / "sdn", "--pending")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert {n["name"]: n["underlay"] for n in d["nodes"]} == \
        {"hv1": "203.0.113.11", "hv2": "203.0.113.12", "hv3": "203.0.113.13"}, r.stdout
    assert {z["name"]: z["transport"] for z in d["zones"]} == \
        {"pub": "secure", "sec": "secure"}, r.stdout


def test_a_zone_left_without_members_is_said(clean92):
    """A zone whose peers name no node (here an empty list) has no member: it and its
    vnets are left out, said with file and line. The warning was added after import-pve
    had printed its diagnostics, so the zone vanished without a word."""
    zones = clean92 / "sdn" / "zones.cfg"
    zones.write_text(zones.read_text().replace(
        "peers 203.0.113.11,203.0.113.12,203.0.113.13", "peers ,"))
    r = run("import-pve", "--sdn-dir", clean92 / "sdn", "--pending")
    assert r.returncode == 0, r.stderr
    assert [z["name"] for z in json.loads(r.stdout)["zones"]] == ["sec"], r.stdout
    assert "warning: zones.cfg:6 [vxlan: pub]: no imported node is a member" in r.stderr, \
        r.stderr


def test_zone_nodes_naming_a_node_not_imported_says_so(tmp_path):
    """A zone's `nodes` naming a corosync node that was not imported (here: a name with
    dots) says which node and where, as its peers do; it said "not a cluster node"."""
    root = tmp_path / "pve"
    shutil.copytree(PVE / "pve8", root)
    corosync = root / "corosync.conf"
    corosync.write_text(corosync.read_text().replace("name: hv1", "name: hv1.lab"))
    zones = root / "sdn" / "zones.cfg"
    zones.write_text(zones.read_text().replace("nodes hv1,", "nodes hv1.lab,"))
    r = run("import-pve", "--sdn-dir", root / "sdn", "--pending", "--partial")
    assert f'zones.cfg:3 [vxlan: lab] nodes: "hv1.lab" is node hv1.lab of {corosync}, ' \
        f"which was not imported (above, at {corosync}:7); the zone leaves it out" \
        in r.stderr, r.stderr
    assert "is not a cluster node" not in r.stderr, r.stderr


def test_underlay_is_the_link_the_peers_name(tmp_path):
    """Two IPv4 corosync links, ring0 a network of corosync's own, the VXLAN zone's peers on
    ring1: the underlay is ring1, where Proxmox sent the zone, not the first ring address
    (which moved the guests' traffic and WireGuard onto corosync's network, with only a
    "carries the zone over its underlay" warning)."""
    root = tmp_path / "pve"
    shutil.copytree(PVE / "pve8", root)
    corosync = root / "corosync.conf"
    text = corosync.read_text()
    for i in (1, 2, 3):
        text = text.replace(f"ring0_addr: 203.0.113.1{i}\n",
                            f"ring0_addr: 10.99.0.{i}\n    ring2_addr: 203.0.113.1{i}\n")
    corosync.write_text(text)
    r = run("import-pve", "--sdn-dir", root / "sdn", "--pending", "--partial",
            "--generate-keys", tmp_path)
    assert r.returncode == 0, r.stderr
    nodes = {n["name"]: n["underlay"] for n in json.loads(r.stdout)["nodes"]}
    assert nodes == {"hv1": "203.0.113.11", "hv2": "203.0.113.12", "hv3": "203.0.113.13"}, nodes
    assert "[vxlan: lab] peers: 203.0.113.11 is node hv1; fabricd carries" not in r.stderr, \
        r.stderr
    # the zones' peers on the IPv6 link only: that family, though ring0 is IPv4
    zones = root / "sdn" / "zones.cfg"
    zones.write_text(zones.read_text().replace(
        "\tpeers 203.0.113.11,203.0.113.12,203.0.113.13\n", "\tpeers 2001:db8:10::11\n"))
    r = run("import-pve", "--sdn-dir", root / "sdn", "--pending", "--partial",
            "--generate-keys", tmp_path)
    nodes = {n["name"]: n["underlay"] for n in json.loads(r.stdout)["nodes"]}
    assert nodes == {"hv1": "2001:db8:10::11", "hv2": "2001:db8:10::12",
                     "hv3": "2001:db8:10::13"}, (nodes, r.stderr)


def test_following_goes_on_without_a_node_not_yet_in_the_wireguard_fabric(clean92, tmp_path):
    """`pvecm add` puts a node into corosync.conf before anyone adds it to the WireGuard
    fabric: following (--sdn-dir) warns and leaves it out, where it refused the whole
    configuration (a running daemon kept the last good one). An import for a file still
    refuses it (the definition would lack a node), unless --partial."""
    running = clean92 / "sdn" / ".running-config"
    doc = json.loads(running.read_text())  # as clean92 did to the pending files
    del doc["fabrics"]["ids"]["wgf_backup"]
    hv1 = doc["fabrics"]["ids"]["wgf_hv1"]
    hv1["peers"] = [p for p in hv1["peers"] if "external" not in p]
    running.write_text(json.dumps(doc))
    key = tmp_path / "hv1.key"
    r = run("import-pve", "--sdn-dir", clean92 / "sdn", "-n", "hv1", "--key-out", key)
    assert r.returncode == 0, r.stderr
    corosync = clean92 / "corosync.conf"
    corosync.write_text(corosync.read_text().replace(
        "nodelist {\n", "nodelist {\n  node {\n    name: hv4\n    nodeid: 4\n"
        "    quorum_votes: 1\n    ring0_addr: 203.0.113.14\n  }\n", 1))
    r = run("render", "--sdn-dir", clean92 / "sdn", "-n", "hv1")
    assert r.returncode == 0, r.stderr
    assert "warning: hv4: is in corosync.conf but not in WireGuard fabric \"wgf\": left out " \
        "of fabricd's fabric until it is; add it there in Proxmox" in r.stderr, r.stderr
    assert "hv4" not in r.stdout and "203.0.113.14" not in r.stdout, r.stdout
    r = run("import-pve", "--sdn-dir", clean92 / "sdn", "-o", tmp_path / "out.json")
    assert r.returncode == 1 and "error: hv4: is in corosync.conf but not in WireGuard " \
        "fabric \"wgf\"; add it" in r.stderr, r.stderr
    # on hv4 itself: the fabric is Proxmox's to change, not a file to join
    r = run("render", "--sdn-dir", clean92 / "sdn", "-n", "hv4")
    assert r.returncode == 1 and "error: node \"hv4\" is not in" in r.stderr and \
        "add this node to Proxmox's WireGuard fabric" in r.stderr and "join" not in r.stderr, \
        r.stderr


def test_pending_simple_zone_not_yet_applied_is_said(clean92, tmp_path):
    """--pending --simple: a Simple zone only in the pending zones.cfg is written as a followed
    zone, which check, plan and run refuse until Proxmox's SDN Apply deploys it: said at import
    (until 2026-12-07 nothing said so and the first `fabricd check` failed)."""
    sdn = clean92 / "sdn"
    with open(sdn / "zones.cfg", "a") as f:
        f.write("\nsimple: front\n\tipam pve\n")
    out = tmp_path / "cluster.json"
    args = ["import-pve", "--sdn-dir", sdn, "--corosync", clean92 / "corosync.conf",
            "--pending", "--simple", "secure", "-o", out]
    r = run(*args)
    assert r.returncode == 0, r.stderr
    assert ("zones.cfg:" in r.stderr and "[simple: front]: not applied yet" in r.stderr
            and "Apply" in r.stderr), r.stderr
    assert run("check", "-c", out).returncode == 1
    running = json.loads((sdn / ".running-config").read_text())
    running["zones"]["ids"]["front"] = {"type": "simple", "ipam": "pve"}
    (sdn / ".running-config").write_text(json.dumps(running))
    r = run(*args)
    assert r.returncode == 0 and "not applied yet" not in r.stderr, r.stderr
    assert run("check", "-c", out).returncode == 0


def test_every_vnet_a_followed_zone_cannot_carry_is_named(clean92, tmp_path):
    """A followed Simple zone with several vnets fabricd cannot carry: check names each, not
    only the first (until 2026-12-07 one per run: an operator renamed one vnet, applied, and
    was told of the next)."""
    sdn = clean92 / "sdn"
    running = json.loads((sdn / ".running-config").read_text())
    running["zones"]["ids"]["front"] = {"type": "simple", "ipam": "pve"}
    for vnet in ("vs1234", "wgfab0", "Web2", "ok1"):
        running["vnets"]["ids"][vnet] = {"type": "vnet", "zone": "front"}
    running["vnets"]["ids"]["iso1"] = {"type": "vnet", "zone": "front", "isolate-ports": 1}
    (sdn / ".running-config").write_text(json.dumps(running))
    with open(sdn / "zones.cfg", "a") as f:
        f.write("\nsimple: front\n\tipam pve\n")
    out = tmp_path / "cluster.json"
    r = run("import-pve", "--sdn-dir", sdn, "--corosync", clean92 / "corosync.conf",
            "--pending", "--simple", "secure", "-o", out)
    assert r.returncode == 0, r.stderr
    c = run("check", "-c", out)
    assert c.returncode == 1, c.stdout + c.stderr
    for vnet in ("vs1234", "wgfab0", "Web2", "iso1"):
        assert f"[vnet: {vnet}]" in c.stderr, c.stderr
    assert "[vnet: ok1]" not in c.stderr, c.stderr


def test_an_empty_corosync_conf_is_named(tmp_path):
    """corosync.conf empty (half written, or pmxcfs without quorum): the error says the file
    names no node, not "no node could be imported (above)" with nothing above about it."""
    coro = tmp_path / "corosync.conf"
    coro.write_text("")
    r = run("import-pve", "--sdn-dir", PVE / "pve8" / "sdn", "--corosync", coro,
            "--generate-keys", tmp_path)
    assert r.returncode == 1, r.stderr
    assert f"{coro}: names no node (no nodelist)" in r.stderr, r.stderr
    assert "no node could be imported" not in r.stderr, r.stderr


def test_a_peer_that_is_a_node_not_imported_is_named(tmp_path):
    """A VXLAN zone's peer that is a corosync node import-pve rejects (its name, its address):
    the zone's message names that node and why, and --partial writes the zone without it
    (until 2026-12-07 the whole zone was dropped, said to peer an address "not of a cluster
    node"). A peer that is no node's address still drops its zone, and names corosync.conf's
    host-name addresses it may be."""
    root = tmp_path / "pve"
    shutil.copytree(PVE / "pve8", root)
    coro = root / "corosync.conf"
    text = coro.read_text()
    args = ["import-pve", "--sdn-dir", root / "sdn", "--corosync", coro, "--generate-keys",
            tmp_path]
    out = tmp_path / "cluster.json"
    # its name: hv2.lab.example is no fabricd node name
    coro.write_text(text.replace("name: hv2\n", "name: hv2.lab.example\n"))
    r = run(*args, "-o", out)
    assert r.returncode == 1 and not out.exists(), r.stderr
    r = run(*args, "--partial", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "is not an address of a cluster node" not in r.stderr, r.stderr
    for zone, peer in (("lab", "203.0.113.12"), ("lab6", "2001:db8:10::12")):
        assert (f"[vxlan: {zone}] peers: peer {peer} is node hv2.lab.example of {coro}, which "
                f"was not imported (above, at {coro}:14: its name is not a fabricd node name); "
                "the zone leaves it out: rename the node") in r.stderr, r.stderr
    d = json.loads(out.read_text())
    assert [n["name"] for n in d["nodes"]] == ["hv1", "hv3"]
    assert {z["name"]: [v["name"] for v in z["vnets"]] for z in d["zones"]} == \
        {"lab": ["app"], "lab6": ["v6net"]}
    assert run("check", "-c", out).returncode == 0
    # its address: inside the fabric prefix; lab6 peers it by its other link
    coro.write_text(text.replace("ring0_addr: 203.0.113.12", "ring0_addr: 10.255.0.2"))
    r = run(*args, "--partial", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "error: hv2: underlay 10.255.0.2 is inside the fabric prefix" in r.stderr, r.stderr
    assert ("[vxlan: lab6] peers: peer 2001:db8:10::12 is node hv2, which was not imported "
            "(above, at \"hv2\"); the zone leaves it out") in r.stderr, r.stderr
    assert [z["name"] for z in json.loads(out.read_text())["zones"]] == ["lab6"]
    # host names only: the peer's address is nowhere in corosync.conf, hv2 is named as maybe it
    coro.write_text(text.replace("ring0_addr: 203.0.113.12", "ring0_addr: hv2-ring")
                    .replace("ring1_addr: 2001:db8:10::12", "ring1_addr: hv2-ring6"))
    r = run(*args, "--partial", "-o", out)
    assert r.returncode == 0, r.stderr
    assert ("[vxlan: lab] peers: \"203.0.113.12\" is not an address of a cluster node "
            "(corosync.conf, WireGuard endpoint or fabric address); fabricd builds VXLAN only "
            "between its nodes; "
            "in corosync.conf, node hv2 (not imported, above) has ring0_addr \"hv2-ring\", a "
            "host name fabricd does not resolve: if this peer is that node, write its address "
            "there instead") in r.stderr, r.stderr


def test_vlan_aware_vnet_of_a_followed_simple_zone_is_said_at_import(clean92, tmp_path):
    """import-pve --simple warns of a vlan-aware vnet in a Simple zone as check and run do (one
    source, naming the vnets.cfg line and what to do); until 2026-12-07 it said nothing."""
    sdn = clean92 / "sdn"
    with open(sdn / "zones.cfg", "a") as f:
        f.write("\nsimple: front\n\tipam pve\n")
    with open(sdn / "vnets.cfg", "a") as f:
        f.write("\nvnet: web\n\tzone front\n\tvlanaware 1\n\nvnet: web2\n\tzone front\n")
    line = (sdn / "vnets.cfg").read_text().split("\n").index("vnet: web") + 1
    running = json.loads((sdn / ".running-config").read_text())
    running["zones"]["ids"]["front"] = {"type": "simple", "ipam": "pve"}
    running["vnets"]["ids"]["web"] = {"type": "vnet", "zone": "front", "vlanaware": 1}
    running["vnets"]["ids"]["web2"] = {"type": "vnet", "zone": "front"}
    (sdn / ".running-config").write_text(json.dumps(running))
    out = tmp_path / "cluster.json"
    r = run("import-pve", "--sdn-dir", sdn, "--corosync", clean92 / "corosync.conf",
            "--pending", "--simple", "secure", "-o", out)
    assert r.returncode == 0, r.stderr
    said = ("[vnet: web]: vlanaware: zone front carries it untagged (fabricd's VXLAN port is a "
            "plain port of the bridge, default PVID), so frames its guests tag with a VLAN do "
            "not reach the other nodes; make a vnet per VLAN and clear vlanaware in Proxmox")
    assert f"warning: vnets.cfg:{line} {said}" in r.stderr, r.stderr
    assert "[vnet: web2]" not in r.stderr, r.stderr
    c = run("check", "-c", out)
    assert c.returncode == 0 and f"warning: .running-config (vnets) {said}" in c.stderr, \
        c.stdout + c.stderr


def test_a_fix_in_proxmox_is_said_to_take_effect_as_it_does(clean92, tmp_path):
    """A zone's peer that is a node left out (hv4: in corosync.conf, not yet in the WireGuard
    fabric) says to fix the node, and then: `and import again` to import-pve, while a node
    that follows the files (--sdn-dir) maps them again itself when they change (until
    2026-12-08 it was told to import again too)."""
    sdn = clean92 / "sdn"

    def hv4_peer(doc):
        doc["zones"]["ids"]["pub"]["peers"] += ",203.0.113.14"

    clean_running(sdn, hv4_peer)
    coro = clean92 / "corosync.conf"
    coro.write_text(coro.read_text().replace(
        "nodelist {\n", "nodelist {\n  node {\n    name: hv4\n    nodeid: 4\n"
        "    quorum_votes: 1\n    ring0_addr: 203.0.113.14\n  }\n", 1))
    said = "[vxlan: pub] peers: peer 203.0.113.14 is node hv4, which was not imported"
    r = run("import-pve", "--sdn-dir", sdn, "--partial", "--key-out", tmp_path / "hv1.key",
            "-n", "hv1")
    (line,) = [ln for ln in r.stderr.splitlines() if said in ln]
    assert line.endswith("the zone leaves it out: fix the node and import again"), line
    r = run("render", "--sdn-dir", sdn, "-n", "hv1")
    (line,) = [ln for ln in r.stderr.splitlines() if said in ln]
    assert line.endswith("the zone leaves it out: fix the node (this node maps Proxmox's "
                         "files again when they change)"), line
