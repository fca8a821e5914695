# SPDX-License-Identifier: GPL-2.0-or-later
"""Crash safety: SIGKILL `apply` and `down` at 50 points each, then run them again.

A node's fabricd can die at any moment (OOM killer, power, an operator's
kill -9). The next run must converge from whatever was left: exit 0, an
empty plan, exactly the owned links the definition asks for (nothing left
over, nothing doubled), every hand-made object untouched; after `down`,
nothing owned at all.

One cycle of the loop below::

    [clean node] --apply, SIGKILL after t_i--> [partial] --apply--> [converged]
       a guest port is plugged into fabricd's bridge cp0 (a VM starts), then
       check: exit 0, plan empty, owned links exact, FDB remotes, peers, hand-made intact
    [converged] --down, SIGKILL after s_i--> [partial] --down--> [clean node]
       check: exit 0, nothing owned or marked, no wireguard-go, no `inet fabricd`,
              hand-made objects (and the unplugged guest port) intact

t_i and s_i spread over (0, D) of a full apply and a full down of the same
definition, measured first: i*D/50 plus a seeded jitter below D/50. Each
interrupted run is also the reset of the other one (a killed-then-finished
down empties the node for the next killed apply), so 50 kills of each cost
50 applies and 50 downs, not twice that: a down is the slow half, as the
kernel takes tens of milliseconds to unregister each link.

The vnet count is FABTEST_CRASH_VNETS (default 16: 8 plain + 8 secure;
the loop takes 1.5-5 minutes here depending on the machine's load, and a
down costs about 90 ms per vnet in the kernel, so 150 vnets take about
15 minutes); FABTEST_CRASH_KILLS (default 50) and FABTEST_CRASH_SEED vary
the rest. The summary (kills that hit a running fabricd, failure modes and
how often) is printed and recorded as the test's properties.

A failure is recorded with the kill point, what the kill hit and the state
of /run/wireguard; the node is then brought back (fabricd down; an unmarked
wgfab0 fabricd does not adopt has its wireguard-go ended by PID) so that
the remaining kill points still count, and the test fails at the end with
every failure listed. Modes seen with the userspace backend:
  - "unowned wgfab0 (not adopted)": killed after wireguard-go was forked,
    before its PID file was written; nothing proves it is fabricd's;
  - "wgfab0 appeared between observe and create": killed after the PID
    file, before wireguard-go made its TUN link; the next apply sees no
    wgfab0, plans a create, and by then finds the TUN link or the socket of
    the orphaned wireguard-go ("a wireguard-go already runs for it" / "a
    network interface of that name exists");
  - "wgfab0 gone after apply exited 0": wireguard-go's link-event socket
    overflowed (ENOBUFS) under the burst of link changes and it closed the
    device after fabricd's check that it still runs; seen also as
    "wireguard-go refused the change" (EINVAL) when it closes while fabricd
    is configuring it, even after a kill that hit nothing;
  - "'wireguard-go exited' error" from a down that finds wgfab0 already gone.
None of them is worked around here.
"""

import os
import random
import signal
import time
from collections import Counter
from dataclasses import dataclass, field

import pytest

from fabtest import wait_until, zone
from fabtest.proc import end_processes
from handmade import HandObjects, KernelView, convergence_problems

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan, pytest.mark.slow]

N_VNETS = int(os.environ.get("FABTEST_CRASH_VNETS", "16"))
N_KILLS = int(os.environ.get("FABTEST_CRASH_KILLS", "50"))
SEED = int(os.environ.get("FABTEST_CRASH_SEED", "20240611"))
RUN_TIMEOUT = 300  # seconds for one complete apply or down
UNOWNED_WG = "a link named wgfab0 exists that fabricd does not own"


def crash_zones(n_vnets):
    """Half the vnets in a plain zone (VNIs 1000+), half in a secure one (2000+)."""
    n_plain = n_vnets // 2
    return [
        zone("crash-plain", "plain", [(f"cp{i}", 1000 + i) for i in range(n_plain)]),
        zone("crash-secure", "secure", [(f"cs{i}", 2000 + i) for i in range(n_vnets - n_plain)]),
    ]


def fabricd_argv(node, command, config):
    """The argv Node.fabricd() would run, for a background run."""
    return [node.cluster.fabricd_bin, command, "-c", config, *node.node_options(command)]


def process_comm(pid):
    """The comm of pid ("nsenter" before the exec, "fabricd" after), None when gone."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


@dataclass
class KillOutcome:
    """What one SIGKILL hit."""

    delay: float
    state: str  # "mid-way" (fabricd running), "before exec" (still nsenter), "after exit"
    returncode: int


def timed_run(node, command, config):
    """Run `fabricd COMMAND` in the background to completion; (seconds, returncode, log)."""
    start = time.monotonic()
    proc = node.run_bg(fabricd_argv(node, command, config))
    rc = proc.wait(timeout=RUN_TIMEOUT)
    return time.monotonic() - start, rc, proc.log_path


def run_and_kill(node, command, config, delay):
    """Start `fabricd COMMAND`, SIGKILL it after delay seconds; a KillOutcome.

    nsenter execs fabricd in place (no fork), so the Popen's pid is
    fabricd's once the exec is done; its comm tells which one was killed.
    """
    proc = node.run_bg(fabricd_argv(node, command, config))
    time.sleep(delay)  # deliberate: the kill point
    comm = process_comm(proc.pid)
    running = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    rc = proc.wait(timeout=RUN_TIMEOUT)
    if rc != -signal.SIGKILL or not running:
        state = "after exit"
    elif comm == "fabricd":
        state = "mid-way"
    else:
        state = "before exec"
    return KillOutcome(delay, state, rc)


def kill_delays(duration, n, rng):
    """n delays spread over (0, duration): i*duration/n plus jitter below duration/n."""
    step = duration / n
    return [i * step + rng.uniform(0.05, 0.95) * step for i in range(n)]


def wireguard_go(node):
    return [pid for pid, name in node.processes() if name == "wireguard-go"]


@dataclass
class Tally:
    """Kill outcomes and failures of one command's 50 kills."""

    command: str
    kills: list = field(default_factory=list)
    failures: list = field(default_factory=list)  # (iteration, delay, mode, detail)
    unrecoverable: list = field(default_factory=list)  # why the loop had to stop

    def summary(self):
        states = Counter(k.state for k in self.kills)
        modes = Counter(f[2] for f in self.failures)
        return (f"{self.command}: {len(self.kills)} kills, {states['mid-way']} mid-way, "
                f"{states['before exec']} before exec, {states['after exit']} after exit; "
                f"failures: {dict(modes) or 'none'}")


def failure_mode(text):
    """A short name for what went wrong, to count recurring failures."""
    if UNOWNED_WG in text:
        return "unowned wgfab0 (not adopted)"
    if ("a wireguard-go already runs for it" in text
            or "a network interface of that name exists and no wireguard-go answers" in text):
        return "wgfab0 appeared between observe and create"
    if "wireguard-go refused the change" in text:
        return "wireguard-go refused the change"
    if "wireguard-go exited while the changes were made" in text:
        return "'wireguard-go exited' error"
    if "missing ['wgfab0']" in text or "wgfab0: missing" in text:
        return "wgfab0 gone after apply exited 0"
    if "plan not empty" in text:
        return "plan not empty"
    if "hand-made" in text:
        return "hand-made object touched"
    if "exit" in text:
        return "non-zero exit"
    return "state differs"


def wireguard_state(node):
    """The userspace backend's run files and processes, for failure reports."""
    files = node.run(["sh", "-c", "cd /run/wireguard && for f in *; do echo \"$f: $(cat $f 2>/dev/null)\"; "
                      "done"], check=False).stdout.split("\n")
    return f"/run/wireguard: {[f for f in files if f]}, wireguard-go pids {wireguard_go(node)}"


def check_converged(node, definition, config, hand):
    """Problems after a completed apply (text lines; [] = converged)."""
    problems = []
    plan = node.fabricd("plan", "-c", config, timeout=RUN_TIMEOUT)
    if plan.rc != 0:
        problems.append(f"plan not empty (exit {plan.rc}): {plan.stdout.strip()[:2000]} "
                        f"{plan.stderr.strip()[:500]}")
    view = KernelView(node)
    problems += convergence_problems(view, definition, node.wg_dump())
    problems += [f"hand-made: {p}" for p in hand.problems(view)]
    return problems


def check_clean(node, hand):
    """Problems after a completed down (text lines; [] = nothing of fabricd's left)."""
    view = KernelView(node)
    problems = []
    if view.marked():
        problems.append(f"links still marked fabricd:*: {sorted(view.marked())}")
    if "wgfab0" in view.links:
        problems.append(f"wgfab0 left (alias {view.links['wgfab0'].get('ifalias')!r})")
    if wireguard_go(node):
        problems.append(f"wireguard-go still running: {wireguard_go(node)}")
    if "inet fabricd" in view.nft_tables:
        problems.append("nftables table inet fabricd left")
    problems += [f"hand-made: {p}" for p in hand.problems(view)]
    return problems


def recover(node, config, hand):
    """After a recorded failure, bring the node back to clean so the loop can go on.

    First fabricd's own down, twice if need be (a down that finds wgfab0
    already gone may report "wireguard-go exited" although it finished). An
    unmarked wgfab0 that fabricd did not adopt survives that (as far as
    fabricd can tell it is not fabricd's): then its wireguard-go, a process
    fabricd started inside this test's node, is ended by PID, which removes
    the TUN link. The failure stays recorded; this only keeps the remaining
    kill points meaningful. Returns the problems left (the loop stops when
    there are any).
    """
    for _ in range(2):
        res = node.fabricd("down", "-c", config, timeout=RUN_TIMEOUT)
        if res.rc == 0:
            break
    else:
        return [f"recovery: down failed twice: {res}"]
    if "wgfab0" in KernelView(node).links or wireguard_go(node):
        end_processes(wireguard_go(node))
        wait_until(lambda: "wgfab0" not in node.links(), what="unmarked wgfab0 gone")
    return check_clean(node, hand)


def test_sigkill_apply_and_down_at_50_points(make_cluster, record_property):
    cluster = make_cluster(2)
    pve1, pve2 = cluster.nodes
    hand = HandObjects.create(pve1)
    definition = cluster.definition(zones=crash_zones(N_VNETS))
    config = cluster.write_definition(definition)
    res = pve2.fabricd("apply", "-c", config, timeout=RUN_TIMEOUT)  # a live peer, left alone
    assert res.rc == 0, str(res)

    # a first apply and down start wireguard-go and nftables once (slower than
    # later runs); then one full apply and one full down from the state the
    # loop starts from: their durations set the kill points
    for command in ("apply", "down", "apply"):
        res = pve1.fabricd(command, "-c", config, timeout=RUN_TIMEOUT)
        assert res.rc == 0, f"{command}: {res}"
    guest = cluster.add_guest(pve1, "cp0", "10.99.0.1/24")  # a VM port on a fabricd bridge
    hand.add_guest_port(guest)
    assert pve1.fabricd("down", "-c", config, timeout=RUN_TIMEOUT).rc == 0
    apply_s, rc, log = timed_run(pve1, "apply", config)
    assert rc == 0, f"apply failed: {open(log).read()}"
    assert convergence_problems(KernelView(pve1), definition) == []
    down_s, rc, log = timed_run(pve1, "down", config)
    assert rc == 0, f"down failed: {open(log).read()}"
    assert check_clean(pve1, hand) == []

    rng = random.Random(SEED)
    apply_delays = kill_delays(apply_s, N_KILLS, rng)
    down_delays = kill_delays(down_s, N_KILLS, rng)
    applies, downs = Tally("apply"), Tally("down")
    started = time.monotonic()

    def record(tally, i, delay, problems):
        """Count a failure; bring the node back to clean. False when that is impossible."""
        problems = problems + [f"killed {tally.kills[-1].state}", wireguard_state(pve1)]
        detail = "\n    ".join(problems)
        tally.failures.append((i, delay, failure_mode(detail), detail))
        left = recover(pve1, config, hand)
        tally.unrecoverable += left
        return not left

    for i in range(N_KILLS):
        # --- apply, killed, then again; a VM plugged into cp0 (not drift) -------------
        applies.kills.append(run_and_kill(pve1, "apply", config, apply_delays[i]))
        res = pve1.fabricd("apply", "-c", config, timeout=RUN_TIMEOUT)
        problems = [f"apply after the kill: exit {res.rc}: {res.stderr.strip()}"] if res.rc else []
        if not problems:
            pve1.run(["ip", "link", "set", guest.tap, "master", "cp0"])
            problems = check_converged(pve1, definition, config, hand)
        if problems:
            if not record(applies, i, apply_delays[i], problems):
                break
            # converge again without a kill, so that this cycle's down is killed too
            res = pve1.fabricd("apply", "-c", config, timeout=RUN_TIMEOUT)
            if res.rc != 0:
                applies.unrecoverable.append(f"apply after recovery: {res}")
                break

        # --- down, killed, then again --------------------------------------------
        downs.kills.append(run_and_kill(pve1, "down", config, down_delays[i]))
        res = pve1.fabricd("down", "-c", config, timeout=RUN_TIMEOUT)
        problems = [f"down after the kill: exit {res.rc}: {res.stderr.strip()}"] if res.rc else []
        if not problems:
            problems = check_clean(pve1, hand)
        if problems and not record(downs, i, down_delays[i], problems):
            break

    elapsed = time.monotonic() - started
    summary = (f"{N_VNETS} vnets (seed {SEED}): full apply {apply_s:.2f} s, full down "
               f"{down_s:.2f} s, loop {elapsed:.0f} s\n  {applies.summary()}\n  {downs.summary()}")
    print(summary)
    record_property("crash_summary", summary)
    failures = [f"{t.command} #{i} (kill after {d:.3f} s) [{mode}]: {detail}"
                for t in (applies, downs) for i, d, mode, detail in t.failures]
    failures += [f"loop stopped: {why}" for t in (applies, downs) for why in t.unrecoverable]
    assert not failures, summary + "\n" + "\n".join(failures)
    assert len(applies.kills) == len(downs.kills) == N_KILLS, summary
    mid_way = Counter(k.state for k in applies.kills + downs.kills)["mid-way"]
    # the kill points are spread over running time: most must hit a running fabricd
    assert mid_way >= N_KILLS, summary

    # the end: apply once more, then down removes everything owned
    assert pve1.fabricd("apply", "-c", config, timeout=RUN_TIMEOUT).rc == 0
    res = pve1.fabricd("down", "-c", config, timeout=RUN_TIMEOUT)
    assert res.rc == 0, str(res)
    assert check_clean(pve1, hand) == []


def test_down_removes_a_wgfab0_started_by_fabricd_but_not_yet_marked(make_cluster):
    """An apply killed after it started wireguard-go, before it marked wgfab0: the device
    has no alias, its wireguard-go is the one fabricd's PID file names. apply adopts it;
    down (without an apply first) removes it and ends that wireguard-go."""
    cluster = make_cluster(2)
    if cluster.wg_backend != "userspace":
        pytest.skip("the PID file that proves it fabricd's is wireguard-go's")
    pve1 = cluster.node("pve1")
    definition = cluster.definition(zones=[zone("za", "secure", [("vnet100", 100)])])
    config = cluster.write_definition(definition)
    assert pve1.fabricd("apply", "-c", config).rc == 0
    pids = wireguard_go(pve1)
    assert pids, "no wireguard-go after apply"
    pve1.run(["ip", "link", "set", "dev", "wgfab0", "alias", ""])  # as before the marking
    assert not pve1.link("wgfab0").get("ifalias"), pve1.link("wgfab0")
    res = pve1.fabricd("down", "-c", config)
    assert res.rc == 0, res
    wait_until(lambda: "wgfab0" not in pve1.links() and not wireguard_go(pve1), timeout=10,
               what=f"wgfab0 and wireguard-go {pids} gone after down: {res.stdout}")
    assert pve1.fabricd("down", "-c", config).rc == 0
