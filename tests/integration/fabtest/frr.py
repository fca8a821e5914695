# SPDX-License-Identifier: GPL-2.0-or-later
"""Frr: FRR's zebra and bgpd for one simulated node, in its own pathspace.

    frr = Frr(node, foreign=FOREIGN).start()   # /etc/frr/<pathspace>/frr.conf, daemons up
    node.fabricd("apply", "-c", path, "--frr-pathspace", frr.pathspace)
    frr.json("show bgp l2vpn evpn summary json")
    frr.stop()                                 # SIGTERM, then SIGKILL, by PID; dirs removed

The pathspace carries the cluster's random suffix, so test runs and a host
FRR never share a file or a socket. The daemons run in the node's network
namespace (started with -N <pathspace>); the configuration is loaded with
`vtysh -b`, as Debian's frrinit.sh does. fabricd never starts or stops them:
this is the operator's part, played by the test.
"""

import json
import os
import pwd
import grp
import shutil
import signal
import time

from .proc import end_processes, run
from .wait import wait_until

FRR_LIB = os.environ.get("FABTEST_FRR_LIB", "/usr/lib/frr")  # another place: tests of "FRR missing"
DAEMONS = ("zebra", "bgpd")


def frr_available():
    """A reason FRR cannot run here, or None."""
    for path in (f"{FRR_LIB}/zebra", f"{FRR_LIB}/bgpd", "/usr/bin/vtysh",
                 f"{FRR_LIB}/frr-reload.py"):
        if not os.path.exists(path):
            return f"{path} is missing (apt-get install frr frr-pythontools)"
    try:
        pwd.getpwnam("frr")
    except KeyError:
        return "no user frr (apt-get install frr)"
    return None


class Frr:
    """zebra + bgpd of one node; see the module doc."""

    def __init__(self, node, foreign=""):
        self.node = node
        self.pathspace = f"fabtest-{node.cluster.suffix}-{node.name}"
        self.confdir = f"/etc/frr/{self.pathspace}"
        self.rundir = f"/var/run/frr/{self.pathspace}"
        self.conf = f"{self.confdir}/frr.conf"
        self.initial = ("frr defaults datacenter\n"
                        f"hostname {node.name}\n"
                        "service integrated-vtysh-config\n!\n" + foreign)

    def _own(self, path, mode):
        os.chown(path, pwd.getpwnam("frr").pw_uid, grp.getgrnam("frr").gr_gid)
        os.chmod(path, mode)

    def start(self, timeout=10):
        for d, mode in ((self.confdir, 0o750), (self.rundir, 0o755)):
            os.makedirs(d, exist_ok=True)
            self._own(d, mode)
        if not os.path.exists(self.conf):
            self.write_conf(self.initial)
        with open(f"{self.confdir}/vtysh.conf", "w") as f:
            f.write("service integrated-vtysh-config\n")
        self.start_daemons(timeout)
        return self

    def write_conf(self, text):
        with open(self.conf, "w") as f:
            f.write(text)
        self._own(self.conf, 0o640)

    def read_conf(self):
        with open(self.conf) as f:
            return f.read()

    def start_daemons(self, timeout=10):
        self.node.run([f"{FRR_LIB}/zebra", "-N", self.pathspace, "-d", "-P", "0"])
        wait_until(lambda: os.path.exists(f"{self.rundir}/zserv.api"), timeout=timeout,
                   what=f"zebra of {self.node.name} listening")
        self.node.run([f"{FRR_LIB}/bgpd", "-N", self.pathspace, "-d", "-P", "0", "-p", "179"])
        wait_until(lambda: os.path.exists(f"{self.rundir}/bgpd.vty"), timeout=timeout,
                   what=f"bgpd of {self.node.name} listening")
        run(["vtysh", "-N", self.pathspace, "-b"], timeout=timeout, where=self.node.name)

    def pids(self):
        pids = []
        for d in DAEMONS:
            try:
                with open(f"{self.rundir}/{d}.pid") as f:
                    pid = int(f.read().strip() or 0)
            except (FileNotFoundError, ValueError):
                continue
            if pid > 0 and os.path.exists(f"/proc/{pid}"):
                pids.append(pid)
        return pids

    def stop_daemons(self):
        pids = self.pids()
        if pids:
            end_processes(pids)
        for d in DAEMONS:
            for ext in ("pid", "vty"):
                try:
                    os.unlink(f"{self.rundir}/{d}.{ext}")
                except FileNotFoundError:
                    pass

    def stop(self):
        self.stop_daemons()
        shutil.rmtree(self.confdir, ignore_errors=True)
        shutil.rmtree(self.rundir, ignore_errors=True)

    def vtysh(self, cmd, check=True):
        return run(["vtysh", "-N", self.pathspace, "-c", cmd], check=check,
                   where=self.node.name).stdout

    def json(self, cmd):
        out = self.vtysh(cmd)
        return json.loads(out) if out.strip() else {}

    def running_config(self):
        """`show running-config` without the lines that change by themselves."""
        return "\n".join(line for line in self.vtysh("show running-config").splitlines()
                         if not line.startswith(("Building", "Current configuration")))

    def established(self):
        """{peer address: state} of the EVPN BGP sessions."""
        peers = self.json("show bgp l2vpn evpn summary json").get("peers", {})
        return {addr: p.get("state") for addr, p in peers.items()}

    def remote_vteps(self, vni):
        """Sorted remote VTEPs zebra knows for vni."""
        detail = self.json(f"show evpn vni {vni} json")
        vteps = detail.get("remoteVteps")
        if not isinstance(vteps, list):  # FRR 8.4 lists them under "numRemoteVteps"
            vteps = detail.get("numRemoteVteps")
        vteps = vteps if isinstance(vteps, list) else []
        return sorted(v["ip"] if isinstance(v, dict) else v for v in vteps)
