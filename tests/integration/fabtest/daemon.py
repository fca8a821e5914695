# SPDX-License-Identifier: GPL-2.0-or-later
"""Daemon: `fabricd run` on one simulated node, with its own copy of the definition.

    daemons = start_daemons(cluster, definition, grace=6)   # one per node, all READY
    d = daemons["pve1"]
    d.set_transport("red", "secure")     # `fabricd set-transport` on pve1's copy only
    d.write(definition)                  # replace pve1's copy atomically (rename)
    d.wait_log("zone red: transport")    # poll the daemon's log
    d.stop()                             # SIGTERM by PID; d.kill() sends SIGKILL
    d.start()                            # again, on the same copy

Each node reads its own copy (<tmpdir>/<node>/cluster.json), so a test
decides when each node notices a change, as nodes of a real cluster notice a
file on a cluster file system at slightly different times.

Readiness is what systemd sees for Type=notify: the harness binds a datagram
socket, passes it as NOTIFY_SOCKET and collects every message (READY=1,
STATUS=..., RELOADING=1, STOPPING=1). start() returns once READY=1 came.
Any sanitizer report in the daemon's output fails the test (stop() and
check_log()). FABTEST_DAEMON_VERBOSE=1 runs every daemon with --verbose.
"""

import contextlib
import os
import signal
import socket
import time

import pytest

from .cluster import SANITIZER_MARKERS
from .proc import run
from .wait import wait_until


class Daemon:
    """One `fabricd run` on one node; see the module doc."""

    def __init__(self, cluster, node, grace=6, verbose=None, extra_args=(), env=None):
        self.cluster = cluster
        self.node = cluster.node(node) if isinstance(node, str) else node
        self.grace = grace
        # FABTEST_DAEMON_VERBOSE=1 logs each kernel change (kept with FABTEST_KEEP_TMP=1)
        self.verbose = bool(os.environ.get("FABTEST_DAEMON_VERBOSE")) if verbose is None else verbose
        self.extra_args = list(extra_args)
        self.env = dict(env or {})  # added to the daemon's environment
        self.dir = f"{cluster.tmpdir}/{self.node.name}"
        os.makedirs(self.dir, exist_ok=True)
        self.path = f"{self.dir}/cluster.json"
        self.proc = None
        self.logs = []  # log files of earlier runs, oldest first
        self.messages = []  # notify datagrams of the current run
        self._sock = None
        self._runs = 0

    def __repr__(self):
        return f"<Daemon {self.node.name} pid={self.pid}>"

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    # --- the definition copy ------------------------------------------------
    def write(self, definition):
        """Replace this node's copy atomically (write a temporary file, rename)."""
        return self.cluster.write_definition(definition, self.path)

    def write_raw(self, text):
        """Overwrite this node's copy in place, as a careless editor does (not atomic)."""
        with open(self.path, "w") as f:
            f.write(text)

    def set_transport(self, zone, transport):
        """`fabricd set-transport -c <copy> ZONE TRANSPORT`; returns its CompletedProcess."""
        res = run([self.cluster.fabricd_bin, "set-transport", "-c", self.path, zone, transport],
                  check=False, where=self.node.name)
        assert res.returncode == 0, f"set-transport on {self.node.name}: {res.stderr}"
        return res

    # --- the process ----------------------------------------------------------
    def argv(self):
        argv = [self.cluster.fabricd_bin, "run", "-c", self.path, "-n", self.node.name,
                "--key-file", self.node.key_file, "--wg-backend", self.cluster.wg_backend,
                "--grace", str(self.grace)]
        return argv + (["--verbose"] if self.verbose else []) + self.extra_args

    def start(self, timeout=15, wait_ready=True):
        """Start the daemon; return once it reported READY=1 (unless wait_ready=False)."""
        assert self.proc is None or self.proc.poll() is not None, f"{self} already runs"
        if self.proc is not None:
            self.logs.append(self.proc.log_path)
        self._runs += 1
        sock_path = f"{self.dir}/notify{self._runs}.sock"
        self._close_socket()
        # an earlier Daemon of this node (another test of the module) may have left it
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sock_path)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(sock_path)
        self._sock.setblocking(False)
        self.messages = []
        self.proc = self.node.run_bg(self.argv(), env=dict(self.env, NOTIFY_SOCKET=sock_path))
        if wait_ready:
            self.wait_notify("READY=1", timeout=timeout)
        return self

    def notifications(self):
        """Every datagram received so far from the current run, oldest first."""
        while self._sock is not None:
            try:
                self.messages.append(self._sock.recv(4096).decode())
            except BlockingIOError:
                break
        return list(self.messages)

    def wait_notify(self, line, timeout=10):
        """Wait until some datagram holds `line` (e.g. "READY=1"); return that datagram."""
        def seen():
            if self.proc.poll() is not None:
                pytest.fail(f"fabricd run on {self.node.name} exited {self.proc.returncode} "
                            f"before sending {line}:\n{self.log()}", pytrace=False)
            for msg in self.notifications():
                if line in msg.split("\n"):
                    return msg
            return None
        return wait_until(seen, timeout=timeout, interval=0.02,
                          what=f"{self.node.name}: notify {line}")

    def status(self):
        """The last STATUS= the daemon sent."""
        found = None
        for msg in self.notifications():
            for part in msg.split("\n"):
                if part.startswith("STATUS="):
                    found = part[len("STATUS="):]
        return found

    def send_signal(self, sig):
        os.kill(self.pid, sig)

    def stop(self, sig=signal.SIGTERM, timeout=10):
        """Send sig (by PID) and wait for the exit; return the exit status."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.send_signal(sig)
        rc = self.proc.wait(timeout=timeout)
        self.check_log()
        return rc

    def kill(self):
        """SIGKILL: no chance to clean up or to say goodbye."""
        return self.stop(signal.SIGKILL)

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def cpu_seconds(self):
        """User + system CPU time the daemon has used so far."""
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _close_socket(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    # --- the log ----------------------------------------------------------------
    def log(self, all_runs=False):
        """The current run's output (stdout and stderr); all_runs adds earlier runs."""
        paths = (self.logs if all_runs else []) + ([self.proc.log_path] if self.proc else [])
        text = ""
        for p in paths:
            with open(p, errors="replace") as f:
                text += f.read()
        return text

    def log_lines(self):
        return self.log().splitlines()

    def mark(self):
        """A position in the current log; log_since(mark) is what came after."""
        return len(self.log())

    def log_since(self, mark):
        return self.log()[mark:]

    def wait_log(self, *texts, since=0, timeout=10):
        """Wait until the log (after `since`) contains every one of texts; return that part.

        A message and the lines that follow it (an error's list of problems) are separate
        writes: wait for each line asserted on, not for the first alone."""
        def found():
            part = self.log_since(since)
            missing = [t for t in texts if t not in part]
            assert not missing, f"not yet {missing!r} in the log since the mark:\n{part}"
            return part
        wanted = " and ".join(repr(t) for t in texts)
        return wait_until(found, timeout=timeout, interval=0.05,
                          what=f"{self.node.name}: log lines containing {wanted}")

    def check_log(self):
        """Fail the test on a sanitizer report in the daemon's output."""
        text = self.log(all_runs=True)
        for marker in SANITIZER_MARKERS:
            if marker in text:
                pytest.fail(f"sanitizer report from fabricd run on {self.node.name}:\n{text}",
                            pytrace=False)


def start_daemons(cluster, definition, nodes=None, **kwargs):
    """Write each node's copy of definition and start `fabricd run` there; {name: Daemon}."""
    selected = cluster.nodes if nodes is None else [
        cluster.node(n) if isinstance(n, str) else n for n in nodes]
    daemons = {}
    for node in selected:
        d = Daemon(cluster, node, **kwargs)
        d.write(definition)
        daemons[node.name] = d.start(wait_ready=False)
    for d in daemons.values():
        d.wait_notify("READY=1", timeout=20)
    return daemons


def wait_guests_ping(pairs, daemons, timeout=20):
    """Wait until each (a, b) guest pair pings; on a timeout the failure carries
    each daemon's log tail and `wg show` on its node, so a first contact that
    did not happen (a handshake, a guard, a pass) says why. The budget is for a
    first WireGuard handshake on a loaded machine: wireguard-go retries one
    after 5 s, and the QEMU tier may hold both cores meanwhile."""
    for a, b in pairs:
        try:
            wait_until(lambda: a.ping(b), timeout=timeout, what=f"{a.name} -> {b.name}")
        except AssertionError as e:
            state = []
            for d in daemons.values():
                # a handshake, the guard's drops, the flood entries: where a first contact stops
                extra = {cmd[0] + " " + cmd[1]: d.node.run(cmd, check=False) for cmd in (
                    ["wg", "show"], ["nft", "list", "counters", "table", "inet", "fabricd"],
                    ["bridge", "fdb", "show", "nomaster"],
                    ["ip", "-s", "link", "show", "type", "vxlan"])}
                state.append(f"--- {d.node.name}: log tail\n{d.log()[-2500:]}\n" + "".join(
                    f"--- {d.node.name}: {name}\n{res.stdout}{res.stderr}"
                    for name, res in extra.items()))
            raise AssertionError(f"{e}\n" + "\n".join(state)) from None


def stop_daemons(daemons):
    """SIGTERM every running daemon; assert each exited 0."""
    failures = []
    for d in daemons.values():
        if d.running():
            rc = d.stop()
            if rc != 0:
                failures.append(f"{d.node.name}: exit {rc}\n{d.log()}")
    assert not failures, "\n".join(failures)


def run_at(schedule, t0=None):
    """Call fn() at t0 + delay for each (delay, fn) in schedule, in time order.

    Returns [(seconds after t0 it ran, result)]. Sleeps are fine here: the
    delays are the test's input, not a guess at how long something takes.
    """
    t0 = time.monotonic() if t0 is None else t0
    done = []
    for delay, fn in sorted(schedule, key=lambda item: item[0]):
        pause = t0 + delay - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        done.append((round(time.monotonic() - t0, 3), fn()))
    return done
