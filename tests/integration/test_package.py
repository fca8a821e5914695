# SPDX-License-Identifier: GPL-2.0-or-later
"""The Debian package, built from a fresh clone and installed in a throwaway root.

The committed tree is cloned into a temporary directory (so a file missing
from git fails here, as it would on a new machine), built twice with
`make deb` (`dpkg-buildpackage -us -uc -b`; as it is, and with a newer version in the
clone's debian/changelog), and checked:

- `make install DESTDIR=...` from the clone installs what the package holds;
- lintian reports no error;
- in a throwaway root (an overlayfs over / with its upper layer on a tmpfs,
  entered with chroot; the host's own /usr is never written): dpkg -i,
  `fabricd --version`, `systemd-analyze verify` on the unit, the man pages
  and bash completion for every subcommand and option;
- an upgrade while `fabricd run` (the installed binary) keeps a two-node
  namespace cluster up: guests ping without a loss, the restarted daemon is
  the new version and adopts the running fabric (no link re-created, no
  WireGuard session reset);
- remove keeps /etc/fabricd, purge removes it.

There is no systemd as PID 1 here, so the unit's try-restart after the
upgrade (debian/rules) is done by the test: stop, then start the installed
binary again, as `systemctl try-restart` would.
"""

import glob
import os
import re
import stat
import shutil
import subprocess
import tempfile

import pytest

from fabtest import wait_until
from fabtest.daemon import Daemon, stop_daemons
from fabtest.pinger import Pingers
from fabtest.proc import run
from fabtest.scenario import assert_sessions_kept, peer_sessions, warm_sessions

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOLS = ("git", "dpkg-buildpackage", "lintian", "chroot", "systemd-analyze")
UPGRADE_SUFFIX = "+upgrade1"
pytestmark = [pytest.mark.netns, pytest.mark.slow]


def changelog_version(tree):
    with open(f"{tree}/debian/changelog") as f:
        return re.match(r"^\S+ \(([^)]+)\)", f.readline()).group(1)


def build(tree, incremental=False):
    """`make deb` (dpkg-buildpackage -us -uc -b) in tree; the path of the .deb next to it.

    incremental: without the pre-build clean (dpkg-buildpackage -nc), so make
    rebuilds only what the change needs (a version bump: version.h, main.o).
    """
    # nocheck: the unit tests run in their own tier; this one is about the package
    env = {**os.environ, "DEB_BUILD_OPTIONS": "nocheck parallel=2"}
    if incremental:
        for stale in ("debian/debhelper-build-stamp", "debian/.debhelper"):
            subprocess.run(["rm", "-rf", f"{tree}/{stale}"], check=True)
    argv = ["make", "deb"] if not incremental else [
        "make", "deb", "DPKG_BUILDPACKAGE_FLAGS=-nc"]
    res = subprocess.run(["nice", *argv], cwd=tree, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, f"make deb failed:\n{res.stdout[-4000:]}{res.stderr}"
    version = changelog_version(tree)
    parent = os.path.dirname(tree)
    # nothing but the packages outside the tree, and nothing untracked in it
    assert sorted(os.listdir(parent)) == sorted(
        ["fabricd", f"fabricd_{version}_amd64.deb", f"fabricd-dbgsym_{version}_amd64.deb"])
    untracked = run(["git", "-C", tree, "status", "--porcelain"]).stdout
    assert untracked == "" or untracked == " M debian/changelog\n", untracked
    return f"{parent}/fabricd_{version}_amd64.deb"


def bump_version(tree):
    version = changelog_version(tree) + UPGRADE_SUFFIX
    with open(f"{tree}/debian/changelog") as f:
        old = f.read()
    with open(f"{tree}/debian/changelog", "w") as f:
        f.write(f"fabricd ({version}) unstable; urgency=medium\n\n"
                "  * A newer build, for the upgrade test.\n\n"
                " -- fabricd tests <fabricd@example.org>  Tue, 01 Dec 2026 21:00:00 +0000\n\n"
                + old)
    return version


@pytest.fixture(scope="module")
def packages():
    """{'tree', 'deb', 'version', 'deb2', 'version2'}: two builds from fresh clones."""
    if os.geteuid() != 0:
        pytest.skip("the package test needs root (chroot, mounts, namespaces)")
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        pytest.skip(f"missing tools: {', '.join(missing)} (scripts/install-deps.sh)")
    tmp = tempfile.mkdtemp(prefix="fabricd-pkg-")
    try:
        tree = f"{tmp}/v1/fabricd"
        os.makedirs(os.path.dirname(tree))
        # the committed tree only: HEAD, even when it is not a branch
        run(["git", "clone", "-q", "--no-checkout", REPO, tree])
        run(["git", "-C", tree, "fetch", "-q", REPO, "HEAD"])
        run(["git", "-C", tree, "checkout", "-q", "FETCH_HEAD"])
        deb = build(tree)
        # the newer build: a copy of the built clone with a newer version
        tree2 = f"{tmp}/v2/fabricd"
        os.makedirs(os.path.dirname(tree2))
        run(["cp", "-a", tree, tree2])
        version2 = bump_version(tree2)
        yield {"tmp": tmp, "tree": tree, "deb": deb, "version": changelog_version(tree),
               "deb2": build(tree2, incremental=True), "version2": version2}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class ThrowawayRoot:
    """An overlayfs over / whose writes go to a tmpfs; commands run in it with chroot."""

    def __init__(self, base):
        self.base = base
        self.root = f"{base}/merged"
        self.mounts = []
        os.makedirs(base)
        # a private mount of its own, so nothing below propagates to the host's peers
        self._mount(["--bind", base, base])
        run(["mount", "--make-private", base])
        self._mount(["-t", "tmpfs", "fabricd-pkg", base])
        for d in ("upper", "work", "merged"):
            os.makedirs(f"{base}/{d}")
        self._mount(["-t", "overlay", "fabricd-pkg-root", "-o",
                     f"lowerdir=/,upperdir={base}/upper,workdir={base}/work", self.root])
        self._mount(["-t", "proc", "proc", f"{self.root}/proc"])
        self._mount(["--rbind", "/dev", f"{self.root}/dev"])
        run(["mount", "--make-rslave", f"{self.root}/dev"])
        # an empty /run: no /run/systemd/system, so maintainer scripts never
        # reach the host's service manager
        self._mount(["-t", "tmpfs", "fabricd-pkg-run", f"{self.root}/run"])

    def _mount(self, args):
        run(["mount", *args])
        self.mounts.append(args[-1])

    def run(self, argv, check=True, input=None):
        return run(["chroot", self.root, *argv], check=check, input=input,
                   where="throwaway root", timeout=120)

    def path(self, p):
        return f"{self.root}{p}"

    def close(self):
        for target in reversed(self.mounts):
            subprocess.run(["umount", "-R", "-l", target], capture_output=True)
        self.mounts = []


@pytest.fixture(scope="module")
def sysroot(packages):
    root = ThrowawayRoot(f"{packages['tmp']}/root")
    try:
        yield root
    finally:
        root.close()


def deb_files(deb):
    out = run(["dpkg-deb", "-c", deb]).stdout
    return {line.split()[-1].lstrip(".") for line in out.splitlines() if not line.startswith("d")}


def test_make_install_from_fresh_clone(packages):
    dest = f"{packages['tmp']}/dest"
    res = run(["make", "-C", packages["tree"], "install", f"DESTDIR={dest}"], check=False)
    assert res.returncode == 0, res.stderr
    installed = {p[len(dest):] for p in glob.glob(f"{dest}/**", recursive=True)
                 if os.path.isfile(p)}
    packaged = {re.sub(r"\.gz$", "", p) for p in deb_files(packages["deb"])}
    # the package adds only its own changelog and copyright
    assert packaged - installed == {"/usr/share/doc/fabricd/changelog",
                                    "/usr/share/doc/fabricd/copyright"}, packaged - installed
    assert installed - packaged == set(), installed - packaged
    for want in ("/usr/sbin/fabricd", "/lib/systemd/system/fabricd.service",
                 "/usr/lib/modules-load.d/fabricd.conf",
                 "/usr/share/fabricd/cluster.schema.json",
                 "/usr/share/doc/fabricd/examples/minimal-2node.json",
                 "/usr/share/man/man8/fabricd.8", "/usr/share/man/man5/fabricd.json.5",
                 "/usr/share/bash-completion/completions/fabricd"):
        assert want in installed, f"{want} not installed"
    # the version comes from debian/changelog alone
    res = run([f"{dest}/usr/sbin/fabricd", "--version"])
    assert res.stdout.strip() == f"fabricd {packages['version']}"


def test_lintian_and_depends(packages):
    res = run(["nice", "lintian", "--no-tag-display-limit", packages["deb"]], check=False)
    errors = [line for line in res.stdout.splitlines() if line.startswith("E:")]
    assert not errors, res.stdout
    fields = run(["dpkg-deb", "-f", packages["deb"], "Depends", "Recommends"]).stdout
    for lib in ("libjansson4", "libmnl0", "libsodium23", "libnftables1"):
        assert lib in fields, fields
    assert "Recommends: wireguard-go" in fields, fields
    # loaded by `run --metrics` only (dlopen), so shlibs cannot see it
    assert "libmicrohttpd12 | libmicrohttpd12t64" in fields.split("Recommends:")[1], fields


def test_install_in_throwaway_root(packages, sysroot):
    # a fresh host has no /etc/fabricd; one this host has (make install, a demo) shows
    # through the overlay and would keep postinst from making it: gone in the overlay only
    sysroot.run(["rm", "-rf", "/etc/fabricd"])
    shutil.copy(packages["deb"], sysroot.path("/root/fabricd.deb"))
    res = sysroot.run(["dpkg", "-i", "/root/fabricd.deb"], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert not os.path.exists("/usr/sbin/fabricd") or \
        os.stat("/usr/sbin/fabricd").st_ino != os.stat(sysroot.path("/usr/sbin/fabricd")).st_ino
    res = sysroot.run(["fabricd", "--version"])
    assert res.stdout.strip() == f"fabricd {packages['version']}"
    # where the unit's definition and key go, ready for `fabricd genkey > ...` (README)
    etc = os.stat(sysroot.path("/etc/fabricd"))
    assert stat.S_ISDIR(etc.st_mode) and stat.S_IMODE(etc.st_mode) == 0o700, oct(etc.st_mode)
    res = sysroot.run(["systemd-analyze", "verify", "/lib/systemd/system/fabricd.service"],
                      check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    for page in ("8 fabricd", "5 fabricd.json"):
        res = sysroot.run(["sh", "-c", f"man --warnings -P cat {page} 2>&1 >/dev/null"])
        assert res.stdout == "", f"man {page}: {res.stdout}"


def complete(sysroot, line):
    """What bash completion offers for the last word of line."""
    words = line.split(" ")
    script = (". /usr/share/bash-completion/bash_completion; "
              ". /usr/share/bash-completion/completions/fabricd; "
              f"COMP_LINE='{line}'; COMP_POINT={len(line)}; "
              f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}; "
              "_fabricd; printf '%s\\n' \"${COMPREPLY[@]}\"")
    return set(sysroot.run(["bash", "-c", script]).stdout.split())


def test_bash_completion(packages, sysroot):
    usage = sysroot.run(["fabricd", "--help"]).stdout
    commands = re.findall(r"^  (\S+) ", usage.split("Commands:")[1], re.M)
    assert "join" in commands and "init" in commands
    assert complete(sysroot, "fabricd ") >= set(commands)
    options = set(re.findall(r"(--[a-z][a-z-]+)", usage.split("Commands:")[0])) - {"--help"}
    offered = complete(sysroot, "fabricd --")  # --version, --help
    for command in commands:
        offered |= complete(sysroot, f"fabricd {command} -")
    assert options <= offered, f"not completed: {options - offered}"
    assert complete(sysroot, "fabricd join --r") == {"--rotate-key"}
    assert complete(sysroot, "fabricd plan --j") == {"--json"}
    assert complete(sysroot, "fabricd check --j") == {"--json"}
    assert complete(sysroot, "fabricd down --cl") == {"--cluster"}
    assert complete(sysroot, "fabricd apply --wg-backend ") == {"auto", "kernel", "userspace"}


def test_upgrade_while_running(packages, sysroot, make_cluster):
    installed = sysroot.path("/usr/sbin/fabricd")
    cluster = make_cluster(2, fabricd_bin=installed)
    pve1, pve2 = cluster.nodes
    path = f"{cluster.tmpdir}/cluster.json"
    for node in cluster.nodes:
        node.key_file = f"{cluster.tmpdir}/{node.name}-etc/private.key"
    res = pve1.fabricd("init", "-c", path, "--cluster", cluster.cluster_name,
                       "--prefix", cluster.fabric_prefix, "--underlay", pve1.underlay)
    assert res.rc == 0, res
    res = pve2.fabricd("join", "-c", path)
    assert res.rc == 0, res
    # the zone, with the installed binary too: no hand-edited JSON
    res = pve1.fabricd("zone", "add", "-c", path, "tenant", "--transport", "secure",
                       "--vnet", "vnet100:100", node_options=False)
    assert res.rc == 0, res
    for node in cluster.nodes:
        node.public_key = run([installed, "pubkey"], input=open(node.key_file).read()).stdout.strip()

    daemons = {}
    for node in cluster.nodes:
        d = Daemon(cluster, node)
        d.path = path
        daemons[node.name] = d.start(wait_ready=False)
    try:
        for d in daemons.values():
            d.wait_notify("READY=1", timeout=30)
        warm_sessions(cluster.nodes)
        g1 = cluster.add_guest(pve1, "vnet100", "10.0.0.1/24")
        g2 = cluster.add_guest(pve2, "vnet100", "10.0.0.2/24")
        wait_until(lambda: g1.ping(g2), timeout=10, what="g1 -> g2")
        before = {n.name: (n.ifindexes(), peer_sessions(n)) for n in cluster.nodes}

        pingers = Pingers.between(cluster, [(g1, g2), (g2, g1)], seconds=15)
        pingers.start()
        shutil.copy(packages["deb2"], sysroot.path("/root/fabricd-new.deb"))
        res = sysroot.run(["dpkg", "-i", "/root/fabricd-new.deb"], check=False)
        assert res.returncode == 0, res.stdout + res.stderr
        assert sysroot.run(["fabricd", "--version"]).stdout.strip() == \
            f"fabricd {packages['version2']}"
        # what `systemctl try-restart fabricd` does after the upgrade
        for d in daemons.values():
            assert d.stop() == 0, d.log()
            d.start(timeout=30)
            assert os.readlink(f"/proc/{d.pid}/exe") == installed  # the new file, not "(deleted)"
            # the log of this run: nothing created or changed, the fabric taken over as it is
            d.wait_log("up to date, nothing to change (the running fabric is adopted)",
                       timeout=20)
        pingers.assert_no_loss("across the package upgrade")
        for node in cluster.nodes:
            ifindexes, sessions = before[node.name]
            assert node.ifindexes() == ifindexes, f"{node.name}: links re-created"
            assert_sessions_kept(node, sessions, peer_sessions(node))
    finally:
        stop_daemons(daemons)


def test_remove_keeps_config_purge_removes_it(packages, sysroot):
    res = sysroot.run(["fabricd", "init", "-c", "/etc/fabricd/cluster.json", "--cluster", "lab",
                       "--prefix", "10.255.0.0/24", "-n", "pve1", "--underlay", "192.0.2.11"])
    key = sysroot.path("/etc/fabricd/private.key")
    assert os.stat(key).st_mode & 0o777 == 0o600
    sysroot.run(["dpkg", "-r", "fabricd"])
    assert not os.path.exists(sysroot.path("/usr/sbin/fabricd"))
    assert os.path.isfile(sysroot.path("/etc/fabricd/cluster.json")), "remove deleted /etc/fabricd"
    assert os.path.isfile(key)
    res = sysroot.run(["dpkg", "-P", "fabricd"])
    assert not os.path.exists(sysroot.path("/etc/fabricd")), res.stdout
    res = sysroot.run(["dpkg-query", "-W", "fabricd"], check=False)
    assert res.returncode != 0, "fabricd still known to dpkg after purge"
    # /etc/fabricd a link to another place: purge takes the key there too
    sysroot.run(["dpkg", "-i", packages["deb"]])
    sysroot.run(["rm", "-rf", "/etc/fabricd"])
    os.makedirs(sysroot.path("/var/lib/fabricd-keys"), mode=0o700)
    os.symlink("/var/lib/fabricd-keys", sysroot.path("/etc/fabricd"))
    sysroot.run(["fabricd", "init", "-c", "/etc/fabricd/cluster.json", "--cluster", "lab",
                 "--prefix", "10.255.0.0/24", "-n", "pve1", "--underlay", "192.0.2.11"])
    assert os.path.isfile(sysroot.path("/var/lib/fabricd-keys/private.key"))
    sysroot.run(["dpkg", "-P", "fabricd"])
    assert not os.path.lexists(sysroot.path("/etc/fabricd"))
    assert not os.path.exists(sysroot.path("/var/lib/fabricd-keys/private.key")), \
        "purge left the private key behind a linked /etc/fabricd"


def test_install_keeps_a_link_whose_target_is_not_there_yet(packages, sysroot):
    """/etc/fabricd a link to a shared directory not mounted while apt runs: install keeps
    the link and says so (postinst's mkdir failed on it, leaving the package half-
    configured)."""
    sysroot.run(["dpkg", "-P", "fabricd"], check=False)
    sysroot.run(["rm", "-rf", "/etc/fabricd"])
    os.symlink("/mnt/fabricd-shared-not-mounted", sysroot.path("/etc/fabricd"))
    shutil.copy(packages["deb"], sysroot.path("/root/fabricd.deb"))
    try:
        res = sysroot.run(["dpkg", "-i", "/root/fabricd.deb"], check=False)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "/etc/fabricd links to /mnt/fabricd-shared-not-mounted, which is not there" \
            in res.stderr, res.stderr
        assert os.readlink(sysroot.path("/etc/fabricd")) == "/mnt/fabricd-shared-not-mounted"
        status = sysroot.run(["dpkg-query", "-W", "-f", "${Status}", "fabricd"]).stdout
        assert status == "install ok installed", status
    finally:
        sysroot.run(["dpkg", "-P", "fabricd"], check=False)
        sysroot.run(["rm", "-f", "/etc/fabricd"], check=False)
