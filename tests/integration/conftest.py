# SPDX-License-Identifier: GPL-2.0-or-later
"""Fixtures of the namespace integration tests (see README.md here).

Options:
  --fabricd-backend auto|kernel|userspace  (default: $FABRICD_WG_BACKEND or
      "userspace"); passed to every fabricd as --wg-backend. pytest reads a
      conftest's options only for the directories named on the command line,
      so give this option together with the path tests/integration (or use
      the environment variable when running all of tests/).
  $FABRICD: the fabricd binary (default: <repo>/fabricd/fabricd).

Fixtures:
  netns_env        skips unless root with ip/nsenter/unshare/wg/tcpdump (and
                   wireguard-go for the userspace backend)
  fabricd_bin      the binary; fails clearly when it is not built
  fabricd_backend  the --wg-backend value
  cluster_options  keyword arguments for SimCluster (binary + backend)
  cluster2/cluster3  bare SimClusters (nodes, switch, keys) for one module
  make_cluster     factory for clusters owned by one test
"""

import contextlib
import os
import shutil
import signal

import pytest

from fabtest import SimCluster
from fabtest.cluster import default_fabricd_bin, host_lock_path

BACKENDS = ("auto", "kernel", "userspace")
TOOLS = ("ip", "bridge", "nsenter", "unshare", "mount", "wg", "tcpdump", "ping", "sysctl")


def pytest_addoption(parser):
    group = parser.getgroup("fabricd")
    group.addoption(
        "--fabricd-backend",
        choices=BACKENDS,
        default=os.environ.get("FABRICD_WG_BACKEND", "userspace"),
        help="WireGuard backend fabricd uses in the namespace tests (default: userspace)",
    )


def pytest_configure(config):
    # A CI timeout sends SIGTERM: turn it into KeyboardInterrupt so pytest
    # still runs the fixtures' teardown and no namespace outlives the run.
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def host_node_lock():
    """`set-transport` without -n (test_set_transport.py, Daemon.set_transport) takes the
    lock of this host's name in the host's namespace: the run removes it if it made it."""
    path = host_lock_path()
    existed = os.path.exists(path)
    yield
    if not existed:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


@pytest.fixture(scope="session")
def fabricd_backend(request):
    return request.config.getoption("--fabricd-backend")


@pytest.fixture(scope="session")
def netns_env(fabricd_backend):
    """Skip unless this machine can run the namespace tests."""
    if os.geteuid() != 0:
        pytest.skip("namespace tests need root")
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if fabricd_backend == "userspace" and shutil.which("wireguard-go") is None:
        missing.append("wireguard-go")
    if missing:
        pytest.skip(f"missing tools: {', '.join(missing)}")


@pytest.fixture(scope="session")
def fabricd_bin():
    """The fabricd binary under test; fails (not skips) when it is not built."""
    path = default_fabricd_bin()
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"fabricd binary {path} is missing or not executable: run `make` at the "
                    f"repository root (or set FABRICD=/path/to/fabricd)", pytrace=False)
    return os.path.abspath(path)


@pytest.fixture(scope="session")
def cluster_options(netns_env, fabricd_bin, fabricd_backend):
    """SimCluster keyword arguments that make Node.fabricd() work."""
    return {"fabricd_bin": fabricd_bin, "wg_backend": fabricd_backend}


@pytest.fixture(scope="module")
def cluster2(cluster_options):
    """Two bare nodes (IPv4 underlay, MTU 1500) shared by one module."""
    with SimCluster(2, **cluster_options) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def cluster3(cluster_options):
    """Three bare nodes (IPv4 underlay, MTU 1500) shared by one module."""
    with SimCluster(3, **cluster_options) as cluster:
        yield cluster


@pytest.fixture
def make_cluster(cluster_options):
    """make_cluster(n_nodes=3, **SimCluster kwargs): clusters torn down after the test."""
    clusters = []

    def make(n_nodes=3, **kwargs):
        cluster = SimCluster(n_nodes, **{**cluster_options, **kwargs})
        clusters.append(cluster)
        return cluster

    yield make
    errors = []
    for cluster in reversed(clusters):
        try:
            cluster.close()
        except RuntimeError as e:
            errors.append(str(e))
    if errors:
        pytest.fail("\n".join(errors), pytrace=False)
