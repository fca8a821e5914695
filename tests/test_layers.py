# SPDX-License-Identifier: GPL-2.0-or-later
"""The layers that must do no network I/O stay that way: the object files
built from fabricd/base/, fabricd/definition/ and fabricd/kinds/ may not
reference a socket, DNS, sleep, libmnl socket, libnftables or fabricd
netlink-socket call (`nm -u`). A kind parses, diffs and encodes; sending is
the engine's (see fabricd/README.md)."""
import pathlib
import re
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
PURE_LAYERS = ["base", "definition", "kinds"]
FORBIDDEN = {
    "socket", "connect", "bind", "send", "sendmsg", "sendto", "recv", "recvmsg", "recvfrom",
    "getaddrinfo", "getaddrinfo_a", "gethostbyname", "nanosleep", "clock_nanosleep", "usleep",
    "sleep", "poll", "select", "if_nametoindex", "if_indextoname", "nl_open", "nl_request", "nl_dump", "nl_genl_family",
}
FORBIDDEN_PREFIXES = ("mnl_socket_", "nft_run_cmd_", "nft_ctx_", "nl_batch_")
# Layers whose functions may do I/O; a pure layer calls none of them, except the op list
# (engine/plan.c, no I/O) and the backend's name.
IO_LAYERS = ["engine", "netlink", "wireguard", "daemon"]
PURE_EXCEPTIONS = {"engine/plan.c"}
ALLOWED_CALLS = {"wg_backend_name"}


def _objects(layer):
    """One object per source file of the layer (stale objects of moved files are ignored)."""
    for src in sorted((REPO / "fabricd" / layer).glob("*.c")):
        yield src, REPO / "build" / "release" / "fabricd" / layer / (src.stem + ".o")


def _nm(obj, *flags):
    out = subprocess.run(["nm", *flags, str(obj)], capture_output=True, text=True, check=True)
    return {line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()}


def _forbidden(obj, io_functions=frozenset()):
    names = _nm(obj, "-u")
    return sorted(n for n in names
                  if n in FORBIDDEN or n.startswith(FORBIDDEN_PREFIXES) or n in io_functions)


def _io_functions():
    """Every function the I/O layers define."""
    names = set()
    for layer in IO_LAYERS:
        for src, obj in _objects(layer):
            if str(src.relative_to(REPO / "fabricd")) not in PURE_EXCEPTIONS:
                names |= _nm(obj, "--defined-only", "-g")
    return names - ALLOWED_CALLS


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) not installed")
@pytest.mark.parametrize("layer", PURE_LAYERS)
def test_layer_does_no_network_io(layer):
    subprocess.run(["make", "-s", "all"], cwd=REPO, check=True, capture_output=True)
    io_functions = _io_functions()
    bad = {}
    for src, obj in _objects(layer):
        assert obj.exists(), f"{obj} not built from {src}"
        found = _forbidden(obj, io_functions)
        if found:
            bad[str(src.relative_to(REPO))] = found
    assert not bad, ("network I/O in a layer that must have none; move it to fabricd/engine/ "
                     f"(or netlink/, wireguard/): {bad}")


def test_forbidden_list_catches_a_socket_call(tmp_path):
    """The check itself: an object calling socket() and usleep() is caught."""
    src = tmp_path / "io.c"
    src.write_text("#include <sys/socket.h>\n#include <unistd.h>\n"
                   "int f(void);\nint f(void) { usleep(1); return socket(AF_INET, SOCK_DGRAM, 0); }\n")
    obj = tmp_path / "io.o"
    subprocess.run(["cc", "-c", "-o", str(obj), str(src)], check=True)
    assert _forbidden(obj) == ["socket", "usleep"]


def test_no_function_over_80_lines():
    """STYLE.md: a function does one thing; scripts/long-functions.py names any that grew."""
    r = subprocess.run([str(REPO / "scripts" / "long-functions.py")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout
