# SPDX-License-Identifier: GPL-2.0-or-later
"""SimCluster: hypervisor nodes, an underlay switch and guests in namespaces.

See the package docstring for the picture. Naming, so that a demo and any
number of test runs can share one machine:
  - every namespace is "<role>-<suffix>" (sw-fd3a2c, pve1-fd3a2c, g1-fd3a2c),
    the suffix "fd" + 4 random hex digits, claimed by creating the private
    directory /run/fabtest-<suffix> (mkdir fails if another run has it);
  - veth pairs are created directly inside their namespaces, so no interface
    name of this harness ever exists in the root namespace;
  - teardown removes only what this object recorded creating.

Each node also has its own mount namespace, kept alive by a bind mount on
/run/fabtest-<suffix>/<node>.mnt, with a private tmpfs on /run/wireguard:
wireguard-go puts its control socket in /run/wireguard/<dev>.sock, a path
all network namespaces share, so two nodes' wgfab0 would collide without it.
Node commands run as `nsenter --mount=<file> --net=/run/netns/<ns> CMD`.
nsenter opens both namespace files before entering either, so the paths
resolve in the root mount namespace; inside a node mount namespace the
working directory is "/" and /run/netns is a stale private copy, which is
why every path handed to a node command is absolute and why the harness
creates links that span namespaces (veth) with `ip -n` from the root.

Teardown (close(), also at interpreter exit, also when construction fails
half-way) always runs every step and only then reports what failed:
  1. end every process inside a node's mount namespace or inside any network
     namespace of this cluster, by PID (the `ip netns pids` test: compare
     /proc/PID/ns/{net,mnt}); this catches daemonized wireguard-go too;
  2. unmount and remove the mount-namespace files, then the private dir;
  3. delete the network namespaces; remove the temporary directory.
"""

import atexit
import ipaddress
import json
import os
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .capture import Capture
from .proc import end_processes, pids_in_namespace, process_name, run

REPO_ROOT = Path(__file__).resolve().parents[3]
NETNS_DIR = "/run/netns"
NODE_LOCK_DIR = "/run/fabricd"  # engine/lock.h
SANITIZER_MARKERS = ("AddressSanitizer", "LeakSanitizer", "runtime error:")


def node_lock_path(netns_inode):
    """fabricd's node lock in the network namespace with that inode (engine/lock.c):
    one per namespace, whatever -n a command is given."""
    return f"{NODE_LOCK_DIR}/net{netns_inode}.lock"


def host_lock_path():
    """The node lock `set-transport` takes on this host: this namespace's."""
    return node_lock_path(os.stat("/proc/self/ns/net").st_ino)


def default_fabricd_bin():
    """$FABRICD, else <repo>/fabricd/fabricd."""
    return os.environ.get("FABRICD") or str(REPO_ROOT / "fabricd" / "fabricd")


def _nsenter_net(ns):
    return ["nsenter", f"--net={NETNS_DIR}/{ns}"]


def _unlink(path):
    """Remove path if it exists; [] or the one error, for a teardown's list."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        return [f"rm {path}: {e}"]
    return []


def _write_file(path, text, mode):
    """Write text to path with mode, atomically (a daemon may watch the file)."""
    tmp = f"{path}.tmp{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)  # O_CREAT's mode is filtered by the umask
    os.replace(tmp, path)


# The commands that read --key-file and --wg-backend (README, Commands): others refuse them.
KEY_FILE_COMMANDS = ("run", "apply", "plan", "status", "init", "join")
WG_BACKEND_COMMANDS = ("run", "apply", "plan", "status", "down")


@dataclass
class WgPeer:
    """One peer line of `wg show DEV dump`."""

    public_key: str
    preshared_key: str
    endpoint: str
    allowed_ips: list
    latest_handshake: int
    rx_bytes: int
    tx_bytes: int
    keepalive: str  # seconds as text, or "off"


@dataclass
class WgDump:
    """`wg show DEV dump` of one device (private key left out on purpose)."""

    public_key: str
    listen_port: int
    fwmark: str
    peers: dict = field(default_factory=dict)  # public key -> WgPeer

    @classmethod
    def parse(cls, text):
        lines = [line.split("\t") for line in text.splitlines() if line.strip()]
        _private, public, port, fwmark = lines[0][:4]
        dump = cls(public_key=public, listen_port=int(port), fwmark=fwmark)
        for f in lines[1:]:
            dump.peers[f[0]] = WgPeer(
                public_key=f[0],
                preshared_key=f[1],
                endpoint=f[2],
                allowed_ips=[] if f[3] == "(none)" else f[3].split(","),
                latest_handshake=int(f[4]),
                rx_bytes=int(f[5]),
                tx_bytes=int(f[6]),
                keepalive=f[7],
            )
        return dump


@dataclass
class PingResult:
    """Outcome of Guest.ping(); true when every echo got its reply."""

    ok: bool
    transmitted: int
    received: int
    output: str

    def __bool__(self):
        return self.ok


class Switch:
    """The underlay switch: namespace sw-<suffix> with bridge br0."""

    bridge = "br0"

    def __init__(self, cluster, ns):
        self.cluster = cluster
        self.ns = ns
        self.name = "switch"

    def run(self, argv, check=True, timeout=30, env=None, input=None):
        return run(_nsenter_net(self.ns) + list(argv), check=check, timeout=timeout,
                   env=env, input=input, where=self.name)

    def run_bg(self, argv, env=None, stdout=None, stderr=None):
        return self.cluster._popen(self.name, _nsenter_net(self.ns), argv, env, stdout, stderr)


class Node:
    """One hypervisor node: network namespace + mount namespace + key."""

    def __init__(self, cluster, index, name, ns, mount_file, underlay, fabric_address):
        self.cluster = cluster
        self.index = index
        self.name = name
        self.ns = ns
        self.mount_file = mount_file
        self.underlay = underlay  # address text, e.g. "192.0.2.11"
        self.fabric_address = fabric_address
        self.key_file = None
        self.public_key = None

    def __repr__(self):
        return f"<Node {self.name} ns={self.ns} underlay={self.underlay}>"

    # --- running commands -------------------------------------------------
    def nsenter(self):
        """The argv prefix that runs a command inside this node."""
        return ["nsenter", f"--mount={self.mount_file}", f"--net={NETNS_DIR}/{self.ns}"]

    def run(self, argv, check=True, timeout=30, env=None, input=None):
        """Run argv inside the node; a CompletedProcess (raises CommandFailed if check)."""
        return run(self.nsenter() + list(argv), check=check, timeout=timeout, env=env,
                   input=input, where=self.name)

    def run_bg(self, argv, env=None, stdout=None, stderr=None):
        """Start argv inside the node; a Popen (output to a log file in the run's directory)."""
        return self.cluster._popen(self.name, self.nsenter(), argv, env, stdout, stderr)

    def node_options(self, command):
        """-n NODE, and --key-file and --wg-backend where command reads them (the others
        refuse them)."""
        argv = ["-n", self.name]
        if command in KEY_FILE_COMMANDS:
            argv += ["--key-file", self.key_file]
        if command in WG_BACKEND_COMMANDS:
            argv += ["--wg-backend", self.cluster.wg_backend]
        return argv

    def fabricd(self, command, *args, timeout=30, env=None, node_options=True):
        """Run `fabricd COMMAND ARGS -n NODE --key-file KEY --wg-backend B` here.

        Returns (rc, stdout, stderr). Fails the test at once if stderr holds a
        sanitizer report. node_options=False leaves out -n/--key-file/--wg-backend;
        each goes only to the commands that read it (the others refuse it).
        """
        binary = self.cluster.fabricd_bin
        if not binary:
            pytest.fail("SimCluster was created without fabricd_bin")
        argv = [binary, command, *args]
        if node_options:
            argv += self.node_options(command)
        res = self.run(argv, check=False, timeout=timeout, env=env)
        for marker in SANITIZER_MARKERS:
            if marker in res.stderr:
                pytest.fail(f"sanitizer report from `fabricd {command}` on {self.name}:\n{res.stderr}",
                            pytrace=False)
        return FabricdResult(res.returncode, res.stdout, res.stderr)

    def capture(self, iface, bpf=""):
        """A Capture of iface inside this node (e.g. "wgfab0" or "eth0")."""
        return self.cluster._capture(self.run_bg, iface, bpf, f"capture {self.name}")

    # --- reading the kernel ---------------------------------------------------
    def ip_json(self, *args):
        """Parsed `ip -j ARGS` inside the node."""
        out = self.run(["ip", "-j", *args]).stdout
        return json.loads(out) if out.strip() else []

    def links(self):
        """{ifname: link} from `ip -j -d link show`."""
        return {link["ifname"]: link for link in self.ip_json("-d", "link", "show")}

    def link(self, name):
        """One link of `ip -j -d link show`, or None when it does not exist."""
        return self.links().get(name)

    def ifindexes(self):
        """{ifname: ifindex} of every link."""
        return {name: link["ifindex"] for name, link in self.links().items()}

    def addresses(self, dev):
        """{"addr/prefixlen"} of the non-link-local addresses on dev (empty if no dev)."""
        result = set()
        for link in self.ip_json("addr", "show"):
            if link.get("ifname") != dev:
                continue
            for a in link.get("addr_info", []):
                if a.get("scope") != "link":
                    result.add(f"{ipaddress.ip_address(a['local'])}/{a['prefixlen']}")
        return result

    def route_dev(self, dst):
        """The device `ip route get DST` picks, or None when there is no route."""
        res = self.run(["ip", "-j", "route", "get", dst], check=False)
        if res.returncode != 0 or not res.stdout.strip():
            return None
        routes = json.loads(res.stdout)
        return routes[0].get("dev") if routes else None

    def fdb(self, dev):
        """`bridge -j fdb show dev DEV` entries (empty when dev does not exist)."""
        if self.link(dev) is None:
            return []
        out = self.run(["bridge", "-j", "fdb", "show", "dev", dev]).stdout
        return json.loads(out) if out.strip() else []

    def fdb_remotes(self, dev):
        """Sorted destinations of dev's all-zeros (head-end replication) FDB entries."""
        dsts = [e["dst"] for e in self.fdb(dev) if e.get("mac") == "00:00:00:00:00:00" and "dst" in e]
        return sorted((str(ipaddress.ip_address(d)) for d in dsts), key=ipaddress.ip_address)

    def wg_dump(self, dev="wgfab0"):
        """WgDump of `wg show DEV dump` (kernel or userspace WireGuard), None if none."""
        res = self.run(["wg", "show", dev, "dump"], check=False)
        if res.returncode != 0 or not res.stdout.strip():
            return None
        return WgDump.parse(res.stdout)

    def owned_links(self, cluster_name=None):
        """Names of links whose alias is fabricd:<cluster_name> (any cluster if None)."""
        want = f"fabricd:{cluster_name}" if cluster_name else None
        return sorted(
            name for name, link in self.links().items()
            if (link.get("ifalias") or "").startswith("fabricd:")
            and (want is None or link.get("ifalias") == want)
        )

    def processes(self):
        """[(pid, comm)] of the live processes inside this node's network namespace."""
        found = []
        for pid in pids_in_namespace(f"{NETNS_DIR}/{self.ns}", "net"):
            name = process_name(pid)
            if name is not None:
                found.append((pid, name))
        return found


@dataclass
class FabricdResult:
    """(rc, stdout, stderr) of one fabricd run; unpacks like a tuple."""

    rc: int
    stdout: str
    stderr: str

    def __iter__(self):
        return iter((self.rc, self.stdout, self.stderr))

    def __str__(self):
        return f"exit {self.rc}\nstdout: {self.stdout.strip()}\nstderr: {self.stderr.strip()}"


class Guest:
    """A VM stand-in: a namespace whose eth0 is a veth to a tap on a vnet bridge."""

    def __init__(self, name, ns, node, bridge, cidr, mtu, tap):
        self.name = name
        self.ns = ns
        self.node = node
        self.bridge = bridge
        self.cidr = cidr
        self.address = str(ipaddress.ip_interface(cidr).ip)
        self.mtu = mtu
        self.tap = tap  # the node end, enslaved to the bridge

    def __repr__(self):
        return f"<Guest {self.name} {self.cidr} on {self.node.name}/{self.bridge}>"

    def run(self, argv, check=True, timeout=30):
        return run(_nsenter_net(self.ns) + list(argv), check=check, timeout=timeout, where=self.name)

    def ping(self, dst, count=1, size=None, df=False, timeout=None):
        """ping dst from this guest; a PingResult, true when all `count` replies came.

        size is ping's -s (ICMP payload: IPv4 packet = size + 28); df=True
        sends with DF and no local fragmentation (-M do). `timeout` (seconds)
        bounds the whole ping (-w), default about one second per echo.
        """
        dst = getattr(dst, "address", dst)
        deadline = timeout if timeout is not None else max(2, int(count * 0.2) + 2)
        argv = ["ping", "-n", "-c", str(count), "-i", "0.2", "-W", "1", "-w", str(deadline)]
        if size is not None:
            argv += ["-s", str(size)]
        if df:
            argv += ["-M", "do"]
        res = self.run(argv + [str(dst)], check=False, timeout=deadline + 10)
        out = res.stdout + res.stderr
        transmitted = received = 0
        for line in out.splitlines():
            if "packets transmitted" in line:
                parts = line.replace(",", "").split()
                transmitted, received = int(parts[0]), int(parts[3])
        return PingResult(res.returncode == 0, transmitted, received, out)


class SimCluster:
    """N hypervisor nodes on one underlay switch, in namespaces; see the module doc.

    family: 4 (192.0.2.0/24) or 6 (2001:db8::/64) for the underlay;
    fabric_family: 4 (10.255.0.0/24) or 6 (fd00:255::/64) for the fabric.
    fabricd_bin / wg_backend: used by Node.fabricd().
    """

    def __init__(self, n_nodes=3, family=4, underlay_mtu=1500, fabric_family=4,
                 cluster_name="fabtest", fabricd_bin=None, wg_backend="userspace",
                 node_prefix="pve"):
        if family not in (4, 6) or fabric_family not in (4, 6):
            raise ValueError("family and fabric_family are 4 or 6")
        self.family = family
        self.fabric_family = fabric_family
        self.underlay_mtu = underlay_mtu
        self.cluster_name = cluster_name
        self.fabricd_bin = fabricd_bin
        self.wg_backend = wg_backend
        self.node_prefix = node_prefix
        self.nodes = []
        self.guests = []
        self.switch = None
        self.suffix = None
        self.private_dir = None
        self.tmpdir = None
        # what this object created, for teardown (in creation order)
        self._netns = []
        self._lock_inodes = set()  # of the namespaces closed: leftovers() looks for their locks
        self._mount_files = []
        self._private_mounted = False
        self._popens = []
        self._n_logs = 0
        self._closed = False
        try:
            self._claim_suffix()
            self.tmpdir = tempfile.mkdtemp(prefix=f"fabtest-{self.suffix}-")
            self._make_switch()
            for _ in range(n_nodes):
                self.add_node()
        except BaseException:
            self.close()
            raise
        atexit.register(self.close)

    # --- context manager --------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __getitem__(self, name):
        return self.node(name)

    def node(self, name):
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(f"no node {name!r} in {[n.name for n in self.nodes]}")

    @property
    def fabric_prefix(self):
        return "10.255.0.0/24" if self.fabric_family == 4 else "fd00:255::/64"

    # --- building ---------------------------------------------------------------
    def _claim_suffix(self):
        os.makedirs(NETNS_DIR, exist_ok=True)
        for _ in range(100):
            suffix = "fd" + secrets.token_hex(2)
            if any(ns.endswith("-" + suffix) for ns in os.listdir(NETNS_DIR)):
                continue
            path = f"/run/fabtest-{suffix}"
            try:
                os.mkdir(path, 0o700)  # the claim: fails if another run has this suffix
            except FileExistsError:
                continue
            self.suffix, self.private_dir = suffix, path
            # a private bind mount of its own: `unshare --mount=FILE` refuses
            # a FILE on a shared mount (it would propagate, and loop)
            run(["mount", "--bind", path, path])
            self._private_mounted = True
            run(["mount", "--make-private", path])
            return
        raise RuntimeError("no free fabtest suffix after 100 tries")

    def _add_netns(self, role):
        ns = f"{role}-{self.suffix}"
        run(["ip", "netns", "add", ns])
        self._netns.append(ns)
        run(["ip", "-n", ns, "link", "set", "lo", "up"])
        return ns

    def _make_switch(self):
        ns = self._add_netns("sw")
        # the switch only forwards: no IPv6 of its own (no RS/MLD noise in captures)
        run(_nsenter_net(ns) + ["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                                "net.ipv6.conf.default.disable_ipv6=1"])
        run(["ip", "-n", ns, "link", "add", Switch.bridge, "mtu", self.underlay_mtu,
             "type", "bridge", "mcast_snooping", "0"])
        run(["ip", "-n", ns, "link", "set", Switch.bridge, "up"])
        self.switch = Switch(self, ns)

    def _underlay_address(self, index):
        return f"192.0.2.{10 + index}" if self.family == 4 else f"2001:db8::{10 + index}"

    def _fabric_address(self, index):
        return f"10.255.0.{index}" if self.fabric_family == 4 else f"fd00:255::{index:x}"

    def add_node(self):
        """Add the next node (pve<N>): namespaces, eth0 on the switch, key. Returns it."""
        index = max((n.index for n in self.nodes), default=0) + 1
        name = f"{self.node_prefix}{index}"
        ns = self._add_netns(name)
        sw = self.switch.ns
        mtu = str(self.underlay_mtu)
        run(["ip", "-n", ns, "link", "add", "eth0", "mtu", mtu, "type", "veth",
             "peer", "name", name, "mtu", mtu, "netns", sw])
        run(["ip", "-n", sw, "link", "set", name, "master", Switch.bridge, "up"])
        underlay = self._underlay_address(index)
        prefixlen = 24 if self.family == 4 else 64
        run(["ip", "-n", ns, "addr", "add", f"{underlay}/{prefixlen}", "dev", "eth0"]
            + (["nodad"] if self.family == 6 else []))
        run(["ip", "-n", ns, "link", "set", "eth0", "up"])

        mount_file = f"{self.private_dir}/{name}.mnt"
        open(mount_file, "w").close()
        self._mount_files.append(mount_file)
        run(["unshare", f"--mount={mount_file}", "--propagation", "private", "true"])
        node = Node(self, index, name, ns, mount_file, underlay, self._fabric_address(index))
        # wireguard-go's control sockets of this node only (/run/wireguard
        # exists on Debian; mkdir -p only covers machines where it does not)
        node.run(["sh", "-c", "mkdir -p /run/wireguard && "
                  "mount -t tmpfs -o mode=0755 fabtest-wg /run/wireguard"])
        # fabricd's default --ifupdown-file, /etc/network/interfaces.d/fabricd, of
        # this node only: a node with "bridges": "existing" wrote the machine's own,
        # and every other node then removed it as stale, racing (concurrent runs,
        # and the QEMU guest, which sees the host's /etc through 9p: its unlink
        # failed with ENOENT and the daemon's first convergence with it)
        node.run(["sh", "-c", "[ ! -d /etc/network/interfaces.d ] || "
                  "mount -t tmpfs -o mode=0755 fabtest-ifupdown /etc/network/interfaces.d"])

        private_key = run(["wg", "genkey"]).stdout.strip()
        node.key_file = f"{self.tmpdir}/{name}.key"
        _write_file(node.key_file, private_key + "\n", 0o600)
        node.public_key = run(["wg", "pubkey"], input=private_key + "\n").stdout.strip()
        self.nodes.append(node)
        return node

    def add_guest(self, node, bridge, ip_cidr, mtu=None, name=None):
        """A guest on node's bridge (which must exist), like a VM's tap.

        The node end (tap<N>i0) is enslaved to bridge; both ends get mtu
        (default: the bridge's MTU, as a hypervisor does). The guest has
        IPv6 turned off, so it sends nothing on its own.
        """
        node = self.node(node) if isinstance(node, str) else node
        br = node.link(bridge)
        if br is None:
            raise AssertionError(f"{node.name} has no bridge {bridge!r} for a guest (did apply run?)")
        mtu = str(mtu or br["mtu"])
        index = len(self.guests) + 1
        name = name or f"g{index}"
        tap = f"tap{index}i0"
        ns = self._add_netns(name)
        run(_nsenter_net(ns) + ["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                                "net.ipv6.conf.default.disable_ipv6=1"])
        run(["ip", "-n", ns, "link", "add", "eth0", "mtu", mtu, "type", "veth",
             "peer", "name", tap, "mtu", mtu, "netns", node.ns])
        run(["ip", "-n", node.ns, "link", "set", tap, "master", bridge, "up"])
        run(["ip", "-n", ns, "addr", "add", ip_cidr, "dev", "eth0"])
        run(["ip", "-n", ns, "link", "set", "eth0", "up"])
        guest = Guest(name, ns, node, bridge, ip_cidr, int(mtu), tap)
        self.guests.append(guest)
        return guest

    # --- the cluster definition -----------------------------------------------
    def definition(self, zones=(), nodes=None, underlay_mtu=None, keepalive=None,
                   listen_port=51820, secure_port=None):
        """A version-1 definition of this cluster (DESIGN.md) as a dict.

        nodes: names or Nodes to include (default: all). underlay_mtu,
        keepalive, secure_port: written only when given, so fabricd's
        defaults (and its underlay MTU detection) are what gets tested.
        """
        selected = self.nodes if nodes is None else [
            self.node(n) if isinstance(n, str) else n for n in nodes]
        fabric = {"prefix": self.fabric_prefix, "listen_port": listen_port}
        if keepalive is not None:
            fabric["keepalive"] = keepalive
        if underlay_mtu is not None:
            fabric["underlay_mtu"] = underlay_mtu
        if secure_port is not None:
            fabric["secure_port"] = secure_port
        return {
            "version": 1,
            "cluster": self.cluster_name,
            "fabric": fabric,
            "nodes": [
                {"name": n.name, "underlay": n.underlay, "fabric_address": n.fabric_address,
                 "public_key": n.public_key}
                for n in selected
            ],
            "zones": json.loads(json.dumps(list(zones))),  # a deep copy
        }

    def write_definition(self, definition, path=None):
        """Write definition as JSON (mode 0644, atomically); return the absolute path."""
        path = path or f"{self.tmpdir}/cluster.json"
        _write_file(path, json.dumps(definition, indent=2) + "\n", 0o644)
        return path

    def fabricd_all(self, command, config, *args, nodes=None, expect_rc=0):
        """Run `fabricd COMMAND -c config ARGS` on nodes (default all); assert the exit status."""
        selected = self.nodes if nodes is None else [
            self.node(n) if isinstance(n, str) else n for n in nodes]
        failures = []
        results = {}
        for node in selected:
            res = node.fabricd(command, "-c", config, *args)
            results[node.name] = res
            if expect_rc is not None and res.rc != expect_rc:
                failures.append(f"{node.name}: {res}")
        if failures:
            raise AssertionError(f"fabricd {command} (expected exit {expect_rc}) failed:\n"
                                 + "\n".join(failures))
        return results

    def apply_all(self, config, nodes=None):
        """`fabricd apply -c config` on nodes (default all); assert exit 0 on each."""
        return self.fabricd_all("apply", config, nodes=nodes)

    # --- captures and processes -----------------------------------------------
    def capture(self, bpf="", iface=None):
        """A Capture on the underlay switch's bridge (or another iface of the switch)."""
        return self._capture(self.switch.run_bg, iface or Switch.bridge, bpf, "capture switch")

    def _capture(self, spawn, iface, bpf, label):
        self._n_logs += 1
        return Capture(spawn, iface, f"{self.tmpdir}/capture{self._n_logs}.pcap", bpf, label)

    def _popen(self, where, prefix, argv, env, stdout, stderr):
        full_env = None
        if env:
            full_env = dict(os.environ)
            full_env.update({k: str(v) for k, v in env.items()})
        log = None
        if stdout is None or stderr is None:
            self._n_logs += 1
            log = open(f"{self.tmpdir}/{where}-{Path(str(argv[0])).name}-{self._n_logs}.log", "w")
        proc = subprocess.Popen([str(a) for a in list(prefix) + list(argv)], stdin=subprocess.DEVNULL,
                                stdout=stdout if stdout is not None else log,
                                stderr=stderr if stderr is not None else log, env=full_env)
        if log is not None:
            proc.log_path = log.name
            log.close()  # the child has its own copy
        self._popens.append(proc)
        return proc

    def processes(self):
        """[(pid, comm)] of live processes in any namespace of this cluster."""
        pids = set()
        for ns in self._netns:
            pids.update(pids_in_namespace(f"{NETNS_DIR}/{ns}", "net"))
        for f in self._mount_files:
            pids.update(pids_in_namespace(f, "mnt"))
        return sorted((p, process_name(p)) for p in pids if process_name(p) is not None)

    # --- keeping a cluster past this process (the demo) -------------------------
    def detach(self, state_path):
        """Keep everything running after this process exits; record what to remove.

        The record (JSON) is what close() needs; attach(state_path).close() tears
        the cluster down later, from another process.
        """
        state = {"suffix": self.suffix, "private_dir": self.private_dir, "tmpdir": self.tmpdir,
                 "netns": self._netns, "mount_files": self._mount_files,
                 "private_mounted": self._private_mounted}
        _write_file(state_path, json.dumps(state, indent=2) + "\n", 0o600)
        atexit.unregister(self.close)
        self._popens = []  # processes are found again by namespace, not as children
        self._closed = True  # this object no longer tears down

    @classmethod
    def attach(cls, state_path):
        """A SimCluster that can only tear down what detach() recorded."""
        with open(state_path) as f:
            state = json.load(f)
        self = cls.__new__(cls)
        self.suffix, self.private_dir, self.tmpdir = (state["suffix"], state["private_dir"],
                                                      state["tmpdir"])
        self._netns, self._mount_files = state["netns"], state["mount_files"]
        self._private_mounted = state["private_mounted"]
        self._popens, self._closed, self._lock_inodes = [], False, set()
        self.nodes, self.guests = [], []
        return self

    # --- teardown -------------------------------------------------------------
    def close(self):
        """Remove everything this cluster created; see the module doc. Idempotent."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        errors = []

        # 1. processes, by PID: daemons may fork, so look again until none is left
        for _ in range(5):
            pids = [pid for pid, _name in self.processes()]
            if not pids:
                break
            survivors = end_processes(pids)
            if survivors:
                errors.append(f"processes survived SIGKILL: {survivors}")
        for proc in self._popens:
            try:
                proc.wait(timeout=2)  # reap our own children
            except subprocess.TimeoutExpired:
                errors.append(f"pid {proc.pid} did not exit")

        # 2. mount namespaces and the private directory
        for f in reversed(self._mount_files):
            res = run(["umount", f], check=False)
            if res.returncode != 0 and os.path.ismount(f):
                errors.append(f"umount {f}: {res.stderr.strip()}")
            errors += _unlink(f)
        if self._private_mounted:
            res = run(["umount", self.private_dir], check=False)
            if res.returncode != 0:
                errors.append(f"umount {self.private_dir}: {res.stderr.strip()}")
        if self.private_dir:
            try:
                os.rmdir(self.private_dir)
            except FileNotFoundError:
                pass
            except OSError as e:
                errors.append(f"rmdir {self.private_dir}: {e}")

        # 3. network namespaces (guests first, the switch last), fabricd's node locks in
        # them, the temporary dir
        for ns in reversed(self._netns):
            errors += self._remove_node_locks(ns)
            res = run(["ip", "netns", "del", ns], check=False)
            if res.returncode != 0:
                errors.append(f"ip netns del {ns}: {res.stderr.strip()}")
        if self.tmpdir and not os.environ.get("FABTEST_KEEP_TMP"):
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        if errors:
            raise RuntimeError(f"teardown of SimCluster {self.suffix} incomplete:\n  " + "\n  ".join(errors))

    def _remove_node_locks(self, ns):
        """Remove fabricd's files of namespace ns: its locks (netINODE.lock,
        daemon.netINODE.lock, engine/lock.h), a daemon's default probe file
        (probe.netINODE.json) and the guard's rule prints (guard.netINODE.prints,
        engine/guard_prints.c; `down` removes them, a namespace deleted without one
        does not).

        fabricd never removes one itself (a writer waiting on the old inode would
        lock a file nobody else finds); here every process of the namespace has
        ended, so none holds or waits. Returns the errors."""
        try:
            inode = os.stat(os.path.join(NETNS_DIR, ns)).st_ino
        except FileNotFoundError:
            return []
        self._lock_inodes.add(inode)
        return [e for path in self._node_locks({inode}) for e in _unlink(path)]

    @staticmethod
    def _node_locks(inodes):
        if not inodes or not os.path.isdir(NODE_LOCK_DIR):
            return []
        suffixes = tuple(node_lock_path(i)[len(NODE_LOCK_DIR) + 1:] for i in inodes)
        files = {f"{kind}.net{i}.{ext}" for i in inodes
                 for kind, ext in (("probe", "json"), ("guard", "prints"))}
        return [os.path.join(NODE_LOCK_DIR, name) for name in sorted(os.listdir(NODE_LOCK_DIR))
                if name.endswith(suffixes) or name in files]

    def leftovers(self):
        """What of this cluster still exists (names, mounts, dirs); [] after close()."""
        if self.suffix is None:
            return []
        found = []
        if os.path.isdir(NETNS_DIR):
            found += [f"netns {ns}" for ns in os.listdir(NETNS_DIR) if ns.endswith("-" + self.suffix)]
        with open("/proc/self/mountinfo") as f:
            found += [f"mount {line.split()[4]}" for line in f
                      if f"fabtest-{self.suffix}" in line.split()[4]]
        if os.path.exists(self.private_dir):
            found.append(f"dir {self.private_dir}")
        if self.tmpdir and os.path.exists(self.tmpdir) and not os.environ.get("FABTEST_KEEP_TMP"):
            found.append(f"dir {self.tmpdir}")
        found += [f"file {p}" for p in self._node_locks(self._lock_inodes)]
        return found
