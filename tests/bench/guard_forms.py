#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What each part of the guard table costs, by perf, on one running bench lab.

`fabricd bench --reference` gives the guard's share of the CPU as it is; this
script takes the table apart to show where that share goes. It starts
`fabricd bench --streams 1 --repeat 1 --duration D` (fabricd's lab only, one
long run per path), and while each path's run goes on it replaces the table
`inet fabricd` on both nodes by hand (`nft -f`), form after form, round after
round, sampling every CPU with `perf record -a -e cpu-clock` for a window
each. The forms:

  none     no table (what remains is bridge netfilter's nf_hook_slow)
  empty    the input and output chains without rules
  input    the guard without its output rules (what the leak check costs)
  guard    the table as fabricd made it
  l4proto  the guard with `meta l4proto != udp accept` first on both hooks
  vmap     one verdict map per hook: plain members checked after a jump

It prints, per path and form, netfilter's share of the busy CPU (samples in
nf_hook_slow and nft_* times the period, over /proc/stat's busy time of the
window), one column per round. Run as root on an idle machine with a built
fabricd (`make`), iperf3, nftables and perf (linux-perf):

    sudo /usr/bin/python3 tests/bench/guard_forms.py [--window 8] [--rounds 2]

The bench removes its lab when its last run ends; the table forms exist only
inside that lab.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FABRICD = os.path.join(ROOT, "fabricd", "fabricd")
FORMS = ("none", "empty", "input", "guard", "l4proto", "vmap")
PERIOD_NS = 250000
# the bench's guest addresses per path (bench/labnet.c): the iperf3 client's target
PATH_OF_TARGET = {"192.0.2.12": "raw", "10.100.0.2": "plain", "10.200.0.2": "secure"}


def busy_seconds():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def netfilter_seconds(data):
    out = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort",
                          "sym", "-F", "sample,sym"], capture_output=True, text=True).stdout
    n = 0
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+\[.\]\s+(\S+)", line)
        if m and (m.group(2) == "nf_hook_slow" or m.group(2).startswith("nft_")):
            n += int(m.group(1))
    return n * PERIOD_NS / 1e9


def form_text(guard, form):
    """The table for one form, derived from fabricd's own (guard)."""
    if form == "guard":
        return guard
    if form in ("empty", "input"):
        hooks = "input|output" if form == "empty" else "output"
        out, skip = [], False
        for line in guard.splitlines():
            if skip and line.startswith("\t}"):
                skip = False
            if not skip:
                out.append(line)
            if re.match(rf"\s+type filter hook ({hooks})", line):
                skip = True
        return "\n".join(out) + "\n"
    if form == "l4proto":
        return re.sub(r"(type filter hook (input|output) [^\n]*\n)",
                      r"\1\t\tmeta l4proto != udp accept\n", guard)
    if form == "vmap":
        t = re.sub(r"\t\tudp dport 4789 ip saddr \. @th,96,24 @plain_members accept\n", "", guard)
        t = t.replace("\tchain plain_vxlan_in {\n",
                      "\tchain plain_vxlan_in {\n\t\tip saddr . @th,96,24 @plain_members accept\n")
        t = re.sub(r"\t\tudp dport 4789 @th,96,24 @secure_vnis [^\n]*\n"
                   r"\t\tudp dport (\d+) oifname [^\n]*\n",
                   r"\t\tudp dport vmap { 4789 : jump leak_plain, \1 : jump leak_secure }\n", t)
        return t.rstrip()[:-1] + (
            "\tchain leak_plain {\n\t\t@th,96,24 @secure_vnis counter name \"drop_leak\" drop\n"
            "\t}\n\tchain leak_secure {\n\t\toifname != \"wgfab0\" counter name \"drop_leak\" "
            "drop\n\t}\n}\n")
    return ""


def load(ns, text, check=True):
    have = subprocess.run(["ip", "netns", "exec", ns, "nft", "list", "table", "inet", "fabricd"],
                          capture_output=True).returncode == 0
    script = ("delete table inet fabricd\n" if have else "") + text
    subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=script, text=True,
                   check=check)


def client_target(prefix):
    """The target of the lab's running iperf3 client, or None."""
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[:1] == [b"iperf3"] and b"-c" in argv:
            ns = subprocess.run(["ip", "netns", "identify", pid], capture_output=True,
                                text=True).stdout.strip()
            if ns.startswith(prefix):
                return argv[argv.index(b"-c") + 1].decode()
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--window", type=int, default=8, help="seconds per perf window")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of every form per path")
    a = ap.parse_args()
    # a window also takes loading the table, perf's start and its report
    duration = (a.window + 4) * len(FORMS) * a.rounds + 30
    tmp = tempfile.mkdtemp(prefix="guard-forms-")
    log = open(os.path.join(tmp, "bench.log"), "w")
    bench = subprocess.Popen([FABRICD, "bench", "--streams", "1", "--repeat", "1", "--duration",
                              str(duration)], stdout=log, stderr=log)
    prefix = "fb%04x-" % (bench.pid & 0xFFFF)
    results, done = {}, set()
    print(f"bench {prefix}*: {duration} s per path; {a.rounds} rounds of {len(FORMS)} forms, "
          f"{a.window} s windows", file=sys.stderr)
    while bench.poll() is None and len(done) < 3:
        path = PATH_OF_TARGET.get(client_target(prefix) or "")
        if not path or path in done:
            time.sleep(0.5)
            continue
        guard = {n: subprocess.run(["ip", "netns", "exec", prefix + n, "nft", "list", "table",
                                    "inet", "fabricd"], capture_output=True, text=True).stdout
                 for n in ("n1", "n2")}
        for r in range(a.rounds):
            for form in FORMS:
                for n in ("n1", "n2"):
                    load(prefix + n, form_text(guard[n], form))
                time.sleep(1)
                data = os.path.join(tmp, "perf.data")
                b0 = busy_seconds()
                subprocess.run(["perf", "record", "-q", "-a", "-e", "cpu-clock", "-c",
                                str(PERIOD_NS), "-o", data, "--", "sleep", str(a.window)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                busy = busy_seconds() - b0
                share = 100 * netfilter_seconds(data) / busy if busy > 0 else float("nan")
                results.setdefault((path, form), []).append(share)
                print(f"{path:7} {form:8} round {r + 1}: {share:.2f} %", file=sys.stderr)
        for n in ("n1", "n2"):
            load(prefix + n, guard[n], check=False)  # the run may have ended meanwhile
        done.add(path)
    bench.wait()
    log.close()
    if bench.returncode != 0:
        print(f"fabricd bench failed: see {log.name}", file=sys.stderr)
    print("netfilter's share of the busy CPU, per form and round (perf, "
          f"{a.window} s windows)")
    for path in ("raw", "plain", "secure"):
        for form in FORMS:
            v = results.get((path, form), [])
            print(f"{path:7} {form:8} " + "  ".join(f"{x:5.2f} %" for x in v))
    return 0 if len(done) == 3 and bench.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
