# SPDX-License-Identifier: GPL-2.0-or-later
"""`fabricd genkey` and `fabricd pubkey` agree byte for byte with `wg genkey`
and `wg pubkey`, and refuse what is not a key. No root needed.

$FABRICD overrides the binary (default: <repo>/fabricd/fabricd)."""
import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
KEY_ERROR = "error: stdin: not a base64 WireGuard private key (44 characters)\n"


@pytest.fixture(scope="module")
def fabricd():
    path = os.environ.get("FABRICD") or str(REPO / "fabricd" / "fabricd")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"fabricd binary {path} is missing: run `make` (or set FABRICD)",
                    pytrace=False)
    return path


@pytest.fixture(scope="module")
def wg():
    path = shutil.which("wg")
    if path is None:
        pytest.skip("wg (wireguard-tools) is not installed")
    return path


def run(cmd, stdin=""):
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=30)


def test_genkey_distinct_and_accepted_by_wg(fabricd, wg):
    keys = []
    for _ in range(5):
        r = run([fabricd, "genkey"])
        assert r.returncode == 0, r.stderr
        assert r.stderr == ""
        assert r.stdout.endswith("\n") and r.stdout.count("\n") == 1
        key = r.stdout[:-1]
        assert len(key) == 44 and key.endswith("=")
        keys.append(key)
        ours = run([fabricd, "pubkey"], r.stdout)
        theirs = run([wg, "pubkey"], r.stdout)
        assert theirs.returncode == 0, f"wg pubkey refused {key}: {theirs.stderr}"
        assert ours.returncode == 0, ours.stderr
        assert ours.stdout == theirs.stdout
    assert len(set(keys)) == 5


def test_pubkey_of_wg_keys(fabricd, wg):
    for _ in range(5):
        priv = run([wg, "genkey"]).stdout
        ours = run([fabricd, "pubkey"], priv)
        assert ours.returncode == 0, ours.stderr
        assert ours.stdout == run([wg, "pubkey"], priv).stdout


def test_pubkey_of_a_key_file(fabricd, tmp_path):
    """--key-file: the file's key, checked as every command checks a key file (it read
    stdin and ignored the option, or waited on a terminal)."""
    path = tmp_path / "node.key"
    path.write_text("dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=\n")
    os.chmod(path, 0o600)
    r = run([fabricd, "pubkey", "--key-file", str(path)])
    assert r.returncode == 0 and r.stdout == "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=\n", r
    os.chmod(path, 0o644)
    r = run([fabricd, "pubkey", "--key-file", str(path)])
    assert r.returncode == 1 and "readable by group or others" in r.stderr, r
    assert "dwdtCnMYpX08" not in r.stderr + r.stdout


def test_pubkey_known_pair(fabricd):
    # RFC 7748 section 6.1, Alice: 77076d0a... -> 8520f009..., in base64
    r = run([fabricd, "pubkey"], "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=\n"


def test_pubkey_without_newline(fabricd, wg):
    priv = run([wg, "genkey"]).stdout.strip()
    assert run([fabricd, "pubkey"], priv).stdout == run([wg, "pubkey"], priv).stdout


@pytest.mark.parametrize("stdin", [
    "",
    "\n",
    "garbage\n",
    "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo\n",    # no padding
    "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo==\n",  # 45 characters
    "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=\nx\n",
    "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=" * 2,
    "A" * 10000,
], ids=["empty", "newline", "garbage", "short", "long", "trailing", "twice", "huge"])
def test_pubkey_refuses(fabricd, stdin):
    r = run([fabricd, "pubkey"], stdin)
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr == KEY_ERROR


def test_genkey_takes_no_arguments(fabricd):
    r = run([fabricd, "genkey", "extra"])
    assert r.returncode == 1
    assert r.stdout == ""


@pytest.mark.parametrize("mode,says", [(0o600, None), (0o640, "group"), (0o644, "world")])
def test_genkey_warns_of_a_file_fabricd_would_refuse(fabricd, tmp_path, mode, says):
    """fabricd refuses a key file the group can read, so genkey says so at once."""
    path = tmp_path / "private.key"
    with open(path, "w") as out:
        os.chmod(path, mode)  # as the shell's umask would have made it
        r = subprocess.run([fabricd, "genkey"], stdout=out, stderr=subprocess.PIPE, text=True,
                           timeout=30)
    assert r.returncode == 0
    if says is None:
        assert r.stderr == ""
    else:
        assert f"warning: writing a private key to a file the {says} can read (mode " \
            f"0{mode:o}), which fabricd refuses as a key file" in r.stderr, r.stderr
    assert len(path.read_text()) == 45


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv (util-linux) to run fabricd as another user")
def test_a_key_in_memory_is_not_dumpable(fabricd):
    """A fabricd process holds private keys: it makes itself non-dumpable (no core file,
    no ptrace or /proc/PID/mem by its own user), which the kernel shows by giving its
    /proc/PID to root. Run as nobody, `pubkey` waits on its stdin."""
    proc = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                             fabricd, "pubkey"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        # setpriv execs fabricd in the same process; wait until it has
        for _ in range(200):
            exe = os.readlink(f"/proc/{proc.pid}/exe") if os.path.exists(f"/proc/{proc.pid}") else ""
            if os.path.basename(exe) == os.path.basename(fabricd):
                break
            subprocess.run(["sleep", "0.02"])
        assert os.path.basename(exe) == os.path.basename(fabricd), exe
        # exec shows in exe before main() has made itself non-dumpable (its first
        # statement, before any key is read): wait that moment out, not longer
        for _ in range(100):
            st = os.stat(f"/proc/{proc.pid}/mem")
            if st.st_uid == 0:
                break
            subprocess.run(["sleep", "0.02"])
        assert st.st_uid == 0, f"/proc/PID/mem of a fabricd run as nobody is uid {st.st_uid}"
    finally:
        proc.communicate(input=b"not a key\n", timeout=30)


def write_key(fabricd, path):
    """A new private key into path, mode 0600 before any byte is in it."""
    with open(path, "w") as f:
        os.chmod(path, 0o600)
        f.write(run([fabricd, "genkey"]).stdout)


@pytest.mark.parametrize("dir_mode,refused", [(0o700, False), (0o755, False), (0o1777, False),
                                              (0o777, True), (0o770, True)])
@pytest.mark.parametrize("through_link", [False, True])
def test_a_key_in_a_directory_others_may_write_is_refused(fabricd, tmp_path, dir_mode, refused,
                                                          through_link):
    """Whoever may write a key file's directory (without the sticky bit /tmp has) can
    rename the key away and put a link to another key of the host in its place: such
    a directory is refused like a key file others may read, also behind a link."""
    keys = tmp_path / "keys"
    keys.mkdir()
    key = keys / "private.key"
    write_key(fabricd, key)
    os.chmod(keys, dir_mode)
    path = key
    if through_link:
        path = tmp_path / "link.key"  # tmp_path is 0700: the link itself is safe
        path.symlink_to(key)
    r = run([fabricd, "pubkey", "--key-file", str(path)])
    if not refused:
        assert r.returncode == 0 and len(r.stdout) == 45, r.stderr
        return
    assert r.returncode == 1 and r.stdout == "", r.stdout
    assert (f"error: private key file {path} is in {keys}, which group or others may write "
            f"(mode 0{dir_mode:o}): they could put another file in its place; run chmod go-w "
            f"{keys}") in r.stderr, r.stderr


@pytest.mark.parametrize("open_mode,owner,refused", [
    (0o755, 0, None), (0o1777, 0, None), (0o777, 0, "mode"), (0o770, 0, "mode"),
    (0o755, 65534, "owner"), (0o1777, 65534, "owner")])
@pytest.mark.parametrize("link", [None, "to", "from"])
def test_a_key_under_a_directory_others_may_write_is_refused(fabricd, tmp_path, open_mode, owner,
                                                              refused, link):
    """As OpenSSH's StrictModes: whoever may write any directory above the key's own
    (without the sticky bit), or owns one (neither root nor fabricd's user), can rename
    the key's directory away and put one of their own in its place, holding a link to
    another key of the host; until 2026-12-07 only the key's own directory was checked.
    Links: the key under open/ reached by a link from a safe place ("to"), or a link
    under open/ to a key in a safe place ("from"); both paths are walked."""
    above = tmp_path / "open"
    keys = above / "keys"
    keys.mkdir(parents=True)
    os.chmod(keys, 0o700)
    key = keys / "private.key"
    if link == "from":
        (tmp_path / "safe").mkdir(mode=0o700)
        key = tmp_path / "safe" / "private.key"
    write_key(fabricd, key)
    path = key
    if link == "to":
        path = tmp_path / "link.key"  # tmp_path is 0700: the link itself is safe
        path.symlink_to(key)
    elif link == "from":
        path = keys / "private.key"
        path.symlink_to(key)
    os.chown(above, owner, owner)
    os.chmod(above, open_mode)
    r = run([fabricd, "pubkey", "--key-file", str(path)])
    if refused is None:
        assert r.returncode == 0 and len(r.stdout) == 45, r.stderr
        return
    assert r.returncode == 1 and r.stdout == "", r.stdout
    if refused == "mode":
        assert (f"error: private key file {path} is under {above}, which group or others "
                f"may write (mode 0{open_mode:o}): they could put a directory of their own "
                f"in the place of {keys}; run chmod go-w {above}") in r.stderr, r.stderr
    else:
        assert (f"error: private key file {path} is under {above}, which belongs to uid "
                f"{owner}, neither root nor this user (uid 0): that user could put another "
                f"directory in the place of {keys}; run chown root {above}") in r.stderr, \
            r.stderr


def test_a_key_in_a_directory_another_user_owns_is_refused(fabricd, tmp_path):
    """The key's own directory, owned by another user (who may chmod it at will)."""
    keys = tmp_path / "keys"
    keys.mkdir()
    key = keys / "private.key"
    write_key(fabricd, key)
    os.chmod(keys, 0o700)
    os.chown(keys, 65534, 65534)
    r = run([fabricd, "pubkey", "--key-file", str(key)])
    assert r.returncode == 1 and r.stdout == "", r.stdout
    assert (f"error: private key file {key} is in {keys}, which belongs to uid 65534, neither "
            f"root nor this user (uid 0): that user could put another file in the place of "
            f"{key}; run chown root {keys}") in r.stderr, r.stderr
