# SPDX-License-Identifier: GPL-2.0-or-later
"""Pinger: continuous pings between guests, 100 per second, and their losses.

    pingers = Pingers.between(cluster, [(g1, g2), (g2, g1)], seconds=8)
    pingers.start()
    ...                                   # switch, kill daemons, break things
    pingers.assert_no_loss()              # waits for the end, then checks
    pingers.stop(settle=1.0)              # or: the pings still flow, then end them now

Each pinger is `ping -i 0.01 -w SECONDS` (an echo every 10 ms) in the
source guest's namespace, in the background, writing to a log file. It runs
for a time, not a count: on a loaded machine ping sends fewer than 100 a
second, and the test needs the pings to cover a span of time. The verdict
is per sequence number (-D prints each reply): an echo is lost when it got
no reply but a later echo did; the last ones, still in flight when ping
stops, are not. ping's summary line is kept for the report. Duplicates
(DUP!) are counted but are not loss. Where ping was told why an echo went
(an ICMP error, "Destination Host Unreachable" from the sender itself when
its ARP for the destination went unanswered), the report says so beside
the missing sequence number.

SECONDS is an upper bound where a test's work takes a time of its own: stop()
ends the pingers once that work is done (SIGINT, on which ping prints its
summary as at -w's end), after a settle time in which every pinger must still
get replies: a stopped pinger whose last reply is older than that failed.
"""

import re
import signal
import subprocess
import time
from dataclasses import dataclass, field

from .cluster import _nsenter_net

_SUMMARY = re.compile(r"(\d+) packets transmitted, (\d+) received(?:, \+(\d+) duplicates)?")
_REPLY = re.compile(r"^\[(\d+\.\d+)\] \d+ bytes from .*icmp_seq=(\d+)(?:.* time=([\d.]+) ms)?")
# an ICMP error ping was told of, e.g. "From 10.1.0.1 icmp_seq=7 Destination Host Unreachable"
# (the sender's own kernel: its neighbour resolution of the destination failed)
_ERROR = re.compile(r"^\[\d+\.\d+\] From (\S+) icmp_seq=(\d+) (.+)$")


@dataclass
class PingStats:
    label: str
    transmitted: int
    received: int
    duplicates: int
    missing: list = field(default_factory=list)  # sequence numbers without a reply
    first_reply: float = 0.0  # wall clock of the first reply (ping -D)
    interval: float = 0.01
    log_path: str = ""
    sent_at: dict = field(default_factory=dict)  # seq -> wall clock it was sent (reply - rtt)
    errors: dict = field(default_factory=dict)  # seq -> ICMP error ping printed for it

    @property
    def lost(self):
        return len(self.missing)

    def __str__(self):
        text = f"{self.label}: {self.transmitted} sent, {self.received} received"
        if self.duplicates:
            text += f", {self.duplicates} duplicates"
        if self.missing:
            # send times of the missing ones, to match against logs
            when = [f"{s}@{self.send_time(s):.2f}" for s in self.missing[:10]]
            text += f"; missing seq {', '.join(when)}"
            told = [f"seq {s} {self.errors[s]}" for s in self.missing[:10] if s in self.errors]
            if told:
                text += f"; ping was told: {', '.join(told)}"
            late = [s for s in self.sent_at if s > self.missing[0]][:1]
            if late:
                text += f"; next reply: seq {late[0]} sent at {self.sent_at[late[0]]:.2f}"
        return text

    def send_time(self, seq):
        """When seq was sent: known for answered ones; between its answered neighbours
        otherwise (ping sends slower than -i asks on a loaded machine)."""
        if seq in self.sent_at:
            return self.sent_at[seq]
        before = max((s for s in self.sent_at if s < seq), default=None)
        after = min((s for s in self.sent_at if s > seq), default=None)
        if before is None or after is None:
            return self.first_reply + (seq - 1) * self.interval
        a, b = self.sent_at[before], self.sent_at[after]
        return a + (b - a) * (seq - before) / (after - before)


class Pinger:
    """`ping -i INTERVAL -c COUNT` from guest src to dst, in the background."""

    def __init__(self, cluster, src, dst, seconds=8.0, interval=0.01, count=None):
        self.cluster = cluster
        self.src = src
        self.dst = dst
        self.interval = interval
        self.seconds = max(1, int(round(seconds + 0.49)))
        # with a count, ping sends that many and then waits (up to 5 s) for the last replies
        self.count = count
        self.label = f"{src.name} -> {getattr(dst, 'name', dst)}"
        self.proc = None

    def start(self):
        dst = getattr(self.dst, "address", self.dst)
        if self.count:
            limit = ["-c", str(self.count), "-w", str(self.seconds + 5)]
        else:
            limit = ["-w", str(self.seconds)]
        argv = ["ping", "-n", "-D", "-i", str(self.interval), *limit, "-W", "1", str(dst)]
        self.proc = self.cluster._popen(self.src.name, _nsenter_net(self.src.ns), argv, None,
                                        None, None)
        return self

    def replies(self):
        """Replies so far (the log is written as they come)."""
        try:
            with open(self.proc.log_path, errors="replace") as f:
                return sum(1 for line in f if _REPLY.match(line))
        except OSError:
            return 0

    def stop(self):
        """End ping now: SIGINT, on which it prints its summary and exits."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)

    def wait(self, timeout=None):
        """Wait for ping to finish; return PingStats."""
        timeout = timeout if timeout is not None else self.seconds + 20
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        with open(self.proc.log_path, errors="replace") as f:
            out = f.read()
        m = _SUMMARY.search(out)
        transmitted, received, dups = (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) \
            if m else (0, 0, 0)
        replies, sent_at, errors = {}, {}, {}
        for line in out.splitlines():
            e = _ERROR.match(line)
            if e:
                errors.setdefault(int(e.group(2)), f"{e.group(3)} (from {e.group(1)})")
            r = _REPLY.match(line)
            if r:
                replies.setdefault(int(r.group(2)), float(r.group(1)))
                rtt = float(r.group(3)) / 1000 if r.group(3) else 0.0
                sent_at.setdefault(int(r.group(2)), float(r.group(1)) - rtt)
        last = max(replies, default=transmitted)
        missing = [s for s in range(1, last + 1) if s not in replies]
        first = min(replies.values()) - (min(replies) - 1) * self.interval if replies else 0.0
        return PingStats(self.label, transmitted, received, dups, missing, first,
                         self.interval, self.proc.log_path, sent_at, errors)


class Pingers:
    """Several Pingers started together and judged together."""

    def __init__(self, pingers):
        self.pingers = list(pingers)
        self.results = None

    @classmethod
    def between(cls, cluster, pairs, seconds=8.0, interval=0.01, count=None):
        """One pinger per (src, dst) pair of guests."""
        return cls(Pinger(cluster, s, d, seconds, interval, count) for s, d in pairs)

    def start(self):
        for p in self.pingers:
            p.start()
        return self

    def wait_replies(self, timeout=10):
        """Return once every pinger has had a reply: the pings are under way."""
        from .wait import wait_until
        wait_until(lambda: all(p.replies() for p in self.pingers), timeout=timeout,
                   interval=0.02, what="every pinger has a reply")
        return self

    def wait(self):
        if self.results is None:
            self.results = [p.wait() for p in self.pingers]
        return self.results

    def stop(self, settle=1.0):
        """End the pingers settle seconds from now: each must have had a reply within the
        last settle seconds before it is stopped (pings that stopped flowing at the end
        would otherwise go unseen: loss counts only echoes before the last reply)."""
        time.sleep(settle)
        quiet = []
        for p in self.pingers:
            try:
                with open(p.proc.log_path, errors="replace") as f:
                    last = [m for m in map(_REPLY.match, f) if m][-1:]
            except OSError:
                last = []
            if not last or time.time() - float(last[0].group(1)) > settle:
                quiet.append(f"{p.label}: last reply "
                             + (f"{time.time() - float(last[0].group(1)):.2f} s ago"
                                if last else "never"))
            p.stop()
        self.wait()
        assert not quiet, "pings stopped getting replies:\n  " + "\n  ".join(quiet)
        return self

    def assert_no_loss(self, context=""):
        """Every echo of every pinger answered; the message lists each pinger's result."""
        results = self.wait()
        # a pinger that barely ran proves nothing
        lossy = [r for r in results if r.lost or r.received < 20]
        report = "\n  ".join(str(r) for r in results)
        assert not lossy, f"pings lost{' ' + context if context else ''}:\n  {report}"
        return results


def all_pairs(guests):
    """Every ordered pair of distinct guests (both directions)."""
    return [(a, b) for a in guests for b in guests if a is not b]
