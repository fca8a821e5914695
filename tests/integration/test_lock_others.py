# SPDX-License-Identifier: GPL-2.0-or-later
"""Scenario: a local user who is not root cannot hold fabricd's locks.

        pve1: vnet200 (secure), `fabricd run`

flock() needs no more than an open file, and a file others may read can be
opened by anyone: with its lock files made 0644 (until 2026-12-06) any local
user (here uid 65534) could open them read-only and hold them. Holding the
node's lock stopped every pass of the daemon, so a deleted guard table was
never put back (a secure VNI took clear text from the underlay for as long as
the user liked), and `apply` failed "busy"; holding the daemon's own lock kept
the daemon from starting at all; holding a definition's lock blocked
`set-transport`. The locks are now 0600 (also those an older fabricd left
0644): the user's open fails, and fabricd carries on.
"""

import os
import subprocess
import tempfile

import pytest

from fabtest import wait_until, zone
from fabtest.cluster import node_lock_path
from fabtest.daemon import Daemon

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

NOBODY = 65534
SECURE = zone("tenant-secure", "secure", [("vnet200", 200)])

# as the user: open the file read-only (all flock needs) and hold it exclusively
HOLDER = r'''
import fcntl, os, sys, time
try:
    fd = os.open(sys.argv[1], os.O_RDONLY)
except OSError as e:
    print("refused", e.errno, flush=True)
    sys.exit(0)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(60)
'''


class UserHolds:
    """uid 65534 tries to hold a lock file; .held says whether it does."""

    def __init__(self, path):
        self.proc = subprocess.Popen(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             "/usr/bin/python3", "-c", HOLDER, path],
            stdout=subprocess.PIPE, text=True)
        self.line = self.proc.stdout.readline().strip()
        self.held = self.line == "held"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.kill()  # by its PID
        self.proc.wait()
        self.proc.stdout.close()


def node_lock(node, kind=""):
    ino = os.stat(f"/run/netns/{node.ns}").st_ino
    return node_lock_path(ino).replace("/net", f"/{kind}net")


def has_guard(node):
    return node.run(["nft", "list", "table", "inet", "fabricd"], check=False).returncode == 0


@pytest.fixture
def daemon(make_cluster):
    cluster = make_cluster(1)
    d = Daemon(cluster, "pve1", extra_args=["--lock-wait", "2"])
    d.write(cluster.definition(zones=[SECURE]))
    d.start()
    yield d
    d.stop()


def test_a_user_cannot_hold_the_node_lock_and_stop_guard_repair(daemon):
    node = daemon.node
    path = node_lock(node)
    os.chmod(path, 0o644)  # as an older fabricd made it: the next pass fixes the mode
    with UserHolds(path) as user:
        pass
    wait_until(lambda: os.stat(path).st_mode & 0o777 == 0o600, timeout=5,
               what=f"{path} 0600 again")
    with UserHolds(path) as user:
        node.run(["nft", "delete", "table", "inet", "fabricd"])
        wait_until(lambda: has_guard(node), timeout=5,
                   what=f"the guard put back while uid {NOBODY} says {user.line!r}")
        assert not user.held, user.line
    res = node.fabricd("apply", "-c", daemon.path, "--lock-wait", "2")
    assert res.rc == 0, res


def test_a_user_cannot_keep_the_daemon_from_starting(daemon):
    daemon.stop()
    path = node_lock(daemon.node, "daemon.")
    assert os.stat(path).st_mode & 0o777 == 0o600, oct(os.stat(path).st_mode)
    with UserHolds(path) as user:
        daemon.start(timeout=10)
        assert not user.held, user.line


def test_a_user_cannot_hold_a_definition_s_lock(daemon):
    fabricd = daemon.cluster.fabricd_bin
    with tempfile.TemporaryDirectory(prefix="fabtest-lock-") as tmp:
        os.chmod(tmp, 0o755)  # a definition others may read, in /etc/fabricd say
        path = f"{tmp}/cluster.json"
        daemon.cluster.write_definition(daemon.cluster.definition(zones=[SECURE]), path)
        lock = f"{path}.lock"
        with open(lock, "w"):
            os.chmod(lock, 0o644)  # as an older fabricd left it
        res = subprocess.run([fabricd, "set-transport", "-c", path, "tenant-secure", "plain"],
                             capture_output=True, text=True, timeout=30)
        assert res.returncode == 0, res.stderr
        assert os.stat(lock).st_mode & 0o777 == 0o600, oct(os.stat(lock).st_mode)
        with UserHolds(lock) as user:
            res = subprocess.run([fabricd, "set-transport", "-c", path, "--lock-wait", "1",
                                  "tenant-secure", "secure"],
                                 capture_output=True, text=True, timeout=30)
            assert not user.held, user.line
        assert res.returncode == 0, res.stderr


def test_a_user_cannot_hang_a_join_on_its_key_directory(fabricd_bin):
    """init and join lock the key's directory against each other (two joins of one
    node at once); a directory others may open (0755) is one a user can lock too:
    join waited for it without end and without a word. It now waits --lock-wait."""
    with tempfile.TemporaryDirectory(prefix="fabtest-keydir-") as tmp:
        os.chmod(tmp, 0o755)
        keys = f"{tmp}/keys"
        os.mkdir(keys, 0o755)
        path = f"{tmp}/cluster.json"
        res = subprocess.run([fabricd_bin, "init", "-c", path, "--cluster", "lab", "--prefix",
                              "10.255.0.0/24", "--underlay", "192.0.2.11", "-n", "pve1",
                              "--key-file", f"{keys}/pve1.key"],
                             capture_output=True, text=True, timeout=30)
        assert res.returncode == 0, res.stderr
        with UserHolds(keys) as user:
            assert user.held, user.line  # the directory is open to it: nothing to refuse
            try:
                res = subprocess.run([fabricd_bin, "join", "-c", path, "-n", "pve2", "--underlay",
                                      "192.0.2.12", "--key-file", f"{keys}/pve2.key",
                                      "--lock-wait", "1"],
                                     capture_output=True, text=True, timeout=10)
            except subprocess.TimeoutExpired:
                pytest.fail(f"join waited more than 10 s for {keys}, which uid {NOBODY} locks")
        assert res.returncode == 1, res
        assert (f"error: {keys}: the directory of the key file is locked by another process for "
                f"more than 1 s") in res.stderr, res.stderr
        assert not os.path.exists(f"{keys}/pve2.key") and not os.path.exists(f"{keys}/pve2.key.new")
        with open(path) as f:
            assert "pve2" not in f.read()


def test_a_lock_file_another_user_made_is_refused(make_cluster):
    """A definition in a directory others may write (here a sticky one, as /tmp):
    a user made its FILE.lock in advance (0666, theirs) and holds it. Narrowing
    the mode is not theirs to undo, nor ours to do (chmod needs the owner); until
    2026-12-07 fabricd waited for them and failed "busy", now it refuses the file
    at once, naming it and what to do (replacing it would let two fabricd lock two
    different files)."""
    cluster = make_cluster(1)
    fabricd = cluster.fabricd_bin
    with tempfile.TemporaryDirectory(prefix="fabtest-lock-") as tmp:
        os.chmod(tmp, 0o1777)
        path = f"{tmp}/cluster.json"
        cluster.write_definition(cluster.definition(zones=[SECURE]), path)
        lock = f"{path}.lock"
        subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                        "/usr/bin/python3", "-c",
                        "import os, sys; os.close(os.open(sys.argv[1], os.O_CREAT | "
                        "os.O_WRONLY, 0o666)); os.chmod(sys.argv[1], 0o666)", lock],
                       check=True, timeout=30)
        assert os.stat(lock).st_uid == NOBODY
        with UserHolds(lock) as user:
            assert user.held, user.line
            res = subprocess.run([fabricd, "set-transport", "-c", path, "--lock-wait", "2",
                                  "tenant-secure", "plain"],
                                 capture_output=True, text=True, timeout=30)
        assert res.returncode == 1, res.stderr
        assert (f"{lock}: cannot open the definition's lock file: it belongs to uid {NOBODY}, "
                f"neither root nor this user (uid 0), who could hold it and stop every fabricd "
                f"that waits for it: remove it (rm {lock}; fabricd makes it again); nothing "
                f"was changed (keep the definition in a directory others may not write)"
                ) in res.stderr, res.stderr
        assert "waiting" not in res.stderr, res.stderr
        os.unlink(lock)
        res = subprocess.run([fabricd, "set-transport", "-c", path, "tenant-secure", "plain"],
                             capture_output=True, text=True, timeout=30)
        assert res.returncode == 0, res.stderr
        assert os.stat(lock).st_uid == 0 and os.stat(lock).st_mode & 0o777 == 0o600
