# SPDX-License-Identifier: GPL-2.0-or-later
"""valgrind over the commands that change a node: apply, a second apply,
plan, status --json, a transport switch and down, on a node of a real
simulated cluster (netlink, wireguard-go's UAPI, libnftables), not only over
`check` (test_check.py). No invalid read or write, no uninitialised value
reaching a decision or a system call, every heap block freed.

One report is not fabricd's and is suppressed (tests/valgrind.supp):
libnftnl sends its batch buffer with the padding of its netlink headers
uninitialised (sendmsg from nftnl_batch's pages, reached through
libnftables' nft_run_cmd_from_buffer).
"""
import os
import shutil

import pytest

from fabtest import zone

pytestmark = [pytest.mark.netns, pytest.mark.wireguard, pytest.mark.vxlan]

SUPPRESSIONS = os.path.join(os.path.dirname(__file__), "..", "valgrind.supp")


def _asan(binary):
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


def valgrind(node, *args, timeout=240):
    """fabricd ARGS on node under valgrind; its report and exit status."""
    binary = node.cluster.fabricd_bin
    log = os.path.join(node.cluster.tmpdir, f"valgrind-{node.name}-{args[0]}.log")
    argv = ["valgrind", "--leak-check=full", "--errors-for-leak-kinds=all",
            "--show-leak-kinds=all", "--child-silent-after-fork=yes", "--error-exitcode=99",
            f"--suppressions={os.path.abspath(SUPPRESSIONS)}", f"--log-file={log}",
            binary, *args, *node.node_options(args[0])]
    res = node.run(argv, check=False, timeout=timeout)
    with open(log) as f:
        # "--PID--" lines are valgrind's own notes (a syscall it does not know: pidfd_open)
        report = "".join(line for line in f if not line.startswith("--"))
    return res.returncode, report, res.stdout + res.stderr


@pytest.mark.parametrize("steps", [["apply", "apply", "plan", "status", "switch", "down"]],
                         ids=["apply-plan-status-switch-down"])
def test_node_commands_are_valgrind_clean(cluster2, steps):
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    if _asan(cluster2.fabricd_bin):
        pytest.skip("fabricd is an ASan build (valgrind cannot run it)")
    pve1, pve2 = cluster2.nodes
    zones = [zone("tenant", "plain", [("vnet410", 410), ("vnet411", 411)]),
             zone("other", "secure", [("vnet420", 420)])]
    config = cluster2.write_definition(cluster2.definition(zones=zones))
    switched = cluster2.write_definition(cluster2.definition(zones=[
        zone("tenant", "secure", [("vnet410", 410), ("vnet411", 411)]), zones[1]]),
        path=f"{cluster2.tmpdir}/switched.json")
    assert pve2.fabricd("apply", "-c", config).rc == 0
    try:
        for step in steps:
            args = {"apply": ["apply", "-c", config],
                    "plan": ["plan", "-c", config],
                    "status": ["status", "--json", "-c", config],
                    "switch": ["apply", "-c", switched, "--grace", "0"],
                    "down": ["down", "-c", config]}[step]
            rc, report, output = valgrind(pve1, *args)
            assert rc != 99, f"{step}: valgrind found errors:\n{report[:8000]}"
            assert rc in (0, 2) if step == "plan" else rc == 0, f"{step}: rc {rc}\n{output}"
            assert "All heap blocks were freed" in report, f"{step}:\n{report[-6000:]}"
        assert pve1.run(["ip", "-o", "link", "show", "wgfab0"], check=False).returncode != 0, \
            "down under valgrind left wgfab0"
    finally:
        pve1.fabricd("down", "-c", config)
        pve2.fabricd("down", "-c", config)
