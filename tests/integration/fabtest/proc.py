# SPDX-License-Identifier: GPL-2.0-or-later
"""Running commands and ending the processes of a namespace.

run() sends stdout and stderr to temporary files instead of pipes: a command
that starts a daemon (wireguard-go daemonizes by default, and fabricd may
start it) leaves the daemon holding the command's stdout/stderr, and reading
a pipe until EOF would then hang until the daemon exits.
"""

import os
import re
import signal
import subprocess
import tempfile
import time


class CommandFailed(AssertionError):
    """A command exited non-zero (or timed out) where success was required."""

    def __init__(self, argv, returncode, stdout, stderr, where="host"):
        self.argv = list(argv)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.where = where
        status = "timed out" if returncode is None else f"exit {returncode}"
        super().__init__(
            f"[{where}] {' '.join(map(str, argv))}: {status}\n"
            f"stdout: {stdout.strip()}\nstderr: {stderr.strip()}"
        )


def run(argv, *, check=True, timeout=30, env=None, input=None, where="host"):
    """Run argv to completion; return a subprocess.CompletedProcess (text).

    check=True raises CommandFailed (an AssertionError, so pytest shows the
    command, its status and its output) on a non-zero exit or a timeout.
    `env` is added to the current environment; `where` only labels errors.
    """
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update({k: str(v) for k, v in env.items()})
    argv = [str(a) for a in argv]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.run(
                argv,
                input=input.encode() if isinstance(input, str) else input,
                stdin=None if input is not None else subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                timeout=timeout,
                env=full_env,
            )
            returncode = proc.returncode
        except subprocess.TimeoutExpired:
            returncode = None
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    if returncode is None:
        raise CommandFailed(argv, None, stdout, stderr, where)
    if check and returncode != 0:
        raise CommandFailed(argv, returncode, stdout, stderr, where)
    return subprocess.CompletedProcess(argv, returncode, stdout, stderr)


def _ns_id(path):
    st = os.stat(path)
    return (st.st_dev, st.st_ino)


def pids_in_namespace(ns_file, kind):
    """PIDs of live processes whose `kind` ("net" or "mnt") namespace is ns_file.

    This is what `ip netns pids NAME` does (compare /proc/PID/ns/net with the
    namespace file), generalized to mount namespaces. Zombies have no
    namespaces any more and are not listed.
    """
    try:
        wanted = _ns_id(ns_file)
    except OSError:
        return []
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if _ns_id(f"/proc/{entry}/ns/{kind}") == wanted:
                pids.append(int(entry))
        except OSError:
            continue  # exited meanwhile, or a zombie
    return pids


def process_name(pid):
    """The comm of pid, or None when it has exited."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def _alive(pid):
    # a zombie counts as gone: it holds no namespace and no resource any more
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def end_processes(pids, grace=2.0):
    """SIGTERM each pid, wait up to `grace` seconds, SIGKILL the survivors.

    Only ever called with PIDs found inside namespaces this harness created.
    Returns the PIDs that were still alive after SIGKILL (should be none).
    """
    me = os.getpid()
    pids = [p for p in pids if p != me]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.02)
    survivors = [p for p in pids if _alive(p)]
    for pid in survivors:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p) for p in survivors):
        time.sleep(0.02)
    return [p for p in survivors if _alive(p)]


def fd_recorder(path, log, then):
    """An executable at path that appends the descriptors it was started with to log ("FD
    -> TARGET" a line, then "---"), then runs the Python statements then. Python, not a
    shell: dash keeps copies of the descriptors it redirects."""
    with open(path, "w") as f:
        f.write("#!/usr/bin/python3\nimport os, sys\nheld = []\n"
                "for fd in os.listdir('/proc/self/fd'):\n"
                "    try:\n"
                "        held.append(f'{fd} -> ' + os.readlink(f'/proc/self/fd/{fd}'))\n"
                "    except OSError:\n"
                "        pass  # the listing's own\n"
                f"with open({str(log)!r}, 'a') as log:\n"
                "    log.write('\\n'.join(held) + '\\n---\\n')\n"
                f"{then}\n")
    os.chmod(path, 0o755)


def inherited(log):
    """Per run of an fd_recorder: the descriptors past stdin, stdout and stderr it was given
    (its own listing of /proc left out), as [(fd, target)]."""
    runs = [re.findall(r"(\d+) -> (.*)", run) for run in open(log).read().split("---\n")[:-1]]
    assert runs and all(runs), f"{log}: no descriptors listed"
    return [[(int(fd), what) for fd, what in run
             if int(fd) > 2 and not what.startswith("/proc/")] for run in runs]
