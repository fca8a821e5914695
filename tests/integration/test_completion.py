# SPDX-License-Identifier: GPL-2.0-or-later
"""The packaged bash completion (completion/fabricd.bash, installed as
/usr/share/bash-completion/completions/fabricd) offers a command only the
options that command reads: fabricd refuses the others ("C: --opt is for ...
only; C would ignore it"), so a completed option must not be one it refuses,
and an option it reads must be offered. Until 2026-12-07 `--lock-wait` was
offered to render, plan and status, which refuse it, and not to init, join,
leave, zone and vnet, which read it.

Each fabricd runs in an empty network namespace of the test's own with a
definition that does not exist, so none of them changes anything; what is
checked is only whether the option itself is refused. Root; a few seconds.
"""
import os
import re
import secrets
import shutil
import subprocess

import pytest

from fabtest.cluster import default_fabricd_bin

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
COMPLETION = f"{REPO}/completion/fabricd.bash"
BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"

# each command with the positional words it needs to get to option parsing
COMMANDS = {
    "check": [], "render": [], "plan": [], "apply": [], "run": [], "status": [],
    "down": [], "set-transport": ["z", "plain"], "genkey": [], "pubkey": [],
    "init": [], "join": [], "leave": [], "zone add": ["z"], "zone remove": ["z"],
    "vnet add": ["v:1"], "vnet remove": ["v"], "import-pve": [],
}
# a value for each option that takes one (a path under the test's own directory)
VALUES = {
    "--wg-backend": "userspace", "--lock-wait": "3", "--frr-pathspace": "fabtest",
    "--grace": "3", "--cluster": "fabtest", "--metrics": "127.0.0.1:1",
    "--metrics-file-interval": "5", "--probe-interval": "5", "--prefix": "10.255.0.0/24",
    "--listen-port": "51820", "--underlay": "192.0.2.1", "--transport": "plain",
    "--vnet": "v:1", "--nodes": "a", "--pve-zone": "z", "--zone": "z", "-n": "a",
    "--node": "a", "--simple": "plain", "--underlay-mtu": "1500", "--end-grace": "z",
}
PATH_OPTIONS = {"-c", "--config", "--key-file", "--psk-dir", "--ifupdown-file", "--sdn-dir",
                "--corosync", "--probe-file", "--metrics-file", "-o", "--output",
                "--key-out", "--wg-keys", "--generate-keys"}
FLAGS = {"--json", "--verbose", "--dot", "--svg", "--rotate-key", "--pending", "--partial",
         "--help"}

pytestmark = pytest.mark.netns


@pytest.fixture(scope="module")
def tools():
    """(fabricd, the argv prefix that runs a command in an empty namespace of this module)"""
    if os.geteuid() != 0:
        pytest.skip("needs root (a network namespace)")
    if not os.path.isfile(BASH_COMPLETION):
        pytest.skip("needs bash-completion (scripts/install-deps.sh)")
    # one namespace for all (creating one per command is slow on a busy host)
    ns = f"fabcomp-{secrets.token_hex(2)}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        yield default_fabricd_bin(), ["ip", "netns", "exec", ns]
    finally:
        subprocess.run(["ip", "netns", "delete", ns], check=True)


def complete(line):
    """What the completion offers for the last (empty or partial) word of line."""
    words = line.split(" ")
    script = (f". {BASH_COMPLETION}; . {COMPLETION}; "
              f"COMP_LINE='{line}'; COMP_POINT={len(line)}; "
              f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}; "
              "_fabricd; printf '%s\\n' \"${COMPREPLY[@]}\"")
    res = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    return set(res.stdout.split())


def refused(tools, tmp, command, option):
    """fabricd's own refusal of option for command, or None when it reads it."""
    fabricd, where = tools
    if option in FLAGS:
        value = []
    elif option in PATH_OPTIONS:
        value = [f"{tmp}/missing{option.replace('-', '_')}"]
    else:
        value = [VALUES[option]]
    argv = [fabricd, *command.split(), *COMMANDS[command], option, *value]
    if option == "--metrics-file-interval":  # only with the file it is the interval of
        argv += ["--metrics-file", f"{tmp}/missing.prom"]
    if option == "--corosync" and command != "import-pve":  # only with --sdn-dir
        argv += ["--sdn-dir", f"{tmp}/missing_sdn"]
    if option not in ("-c", "--config") and command != "import-pve":
        argv += ["-c", f"{tmp}/missing.json"]  # nothing to act on
    res = subprocess.run([*where, *argv], capture_output=True, text=True,
                         timeout=30, stdin=subprocess.DEVNULL)
    first = (res.stderr.strip().splitlines() or [""])[0]
    name = re.escape(command.split()[0])
    opt = rf"(?<![\w-]){re.escape(option)}(?![\w-])"
    if re.search(rf"unrecognized option '{re.escape(option)}'|invalid option -- "
                 rf"'{re.escape(option[1:])}'", first) or \
            re.match(rf"error: fabricd {name}: (unknown )?option {opt}", first) or \
            re.match(rf"error: {name}: .*{opt}", first):
        return first
    return None


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_completion_offers_only_options_the_command_reads(tools, tmp_path, command):
    offered = {w for w in complete(f"fabricd {command} -") if w.startswith("-")}
    assert offered, f"nothing offered for `fabricd {command} -`"
    bad = {}
    for option in sorted(offered - {"--help"}):
        why = refused(tools, tmp_path, command, option)
        if why:
            bad[option] = why
    assert not bad, f"`fabricd {command}` refuses options its completion offers: {bad}"


def test_lock_wait_is_offered_to_every_command_that_reads_it(tools, tmp_path):
    # fabricd's own list, from its refusal of --lock-wait elsewhere
    why = refused(tools, tmp_path, "render", "--lock-wait")
    assert why, "render no longer refuses --lock-wait: update this test"
    readers = re.search(r"\(([a-z, -]+)\)", why).group(1).split(", ")
    assert {"init", "join", "leave", "zone", "vnet", "set-transport"} <= set(readers), why
    missing = []
    for reader in readers:
        line = f"fabricd {reader} {'add ' if reader in ('zone', 'vnet') else ''}--lock-"
        if complete(line) != {"--lock-wait"}:
            missing.append(reader)
        assert refused(tools, tmp_path, line.split()[1] if reader not in ("zone", "vnet")
                       else f"{reader} add", "--lock-wait") is None, reader
    assert not missing, f"--lock-wait not completed for: {missing}"


@pytest.mark.parametrize("command", ["check", "render", "set-transport", "init", "join",
                                     "leave", "genkey", "pubkey"])
def test_frr_pathspace_is_refused_where_no_frr_is_read(tools, tmp_path, command):
    """`fabricd check --frr-pathspace X` (or init, join, ...) ignored it until 2026-12-07,
    against "a command refuses the options of other commands"; completion offered it to
    render."""
    why = refused(tools, tmp_path, command, "--frr-pathspace")
    assert why and "would ignore it" in why, f"{command} --frr-pathspace: {why}"
    assert "--frr-pathspace" not in complete(f"fabricd {command} --frr")
    for reader in ("run", "apply", "plan", "status", "down"):
        assert refused(tools, tmp_path, reader, "--frr-pathspace") is None, reader


@pytest.mark.parametrize("before", [["-c", "x.json"], ["-n", "pve1", "--verbose"],
                                    ["--json", "--config", "x.json"]],
                         ids=["config", "node-verbose", "flag-then-config"])
def test_options_before_the_command_are_completed_past(before):
    """`fabricd -c FILE check` is a command line fabricd takes (since 2026-12-07): its
    completion took the first word ("-c") for the command and offered nothing after the
    options, neither the command, nor its options, nor set-transport's transports."""
    if not os.path.isfile(BASH_COMPLETION):
        pytest.skip("needs bash-completion (scripts/install-deps.sh)")
    lead = " ".join(["fabricd", *before])
    assert {"check", "apply", "set-transport", "vnet"} <= complete(f"{lead} "), lead
    assert complete(f"{lead} ch") == {"check"}, lead
    assert complete(f"{lead} check --js") == {"--json"}, lead
    assert complete(f"{lead} set-transport red ") == {"plain", "secure"}, lead
    assert complete(f"{lead} vnet ") == {"add", "remove"}, lead
    assert "--zone" in complete(f"{lead} vnet add --"), lead
    assert "--zone" not in complete(f"{lead} vnet remove --"), lead
