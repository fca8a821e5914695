# SPDX-License-Identifier: GPL-2.0-or-later
"""Fixtures of the tests in tests/ (the namespace tests have tests/integration/conftest.py)."""
import pathlib
import shutil

import pytest

PVE = pathlib.Path(__file__).resolve().parent / "fixtures" / "pve"


def pytest_addoption(parser):
    parser.addoption(
        "--skip-backend-neutral", action="store_true",
        help="leave out the tests marked backend_neutral (the QEMU tier's selection, "
             "tests/vm/focused.txt: they ran on the host already)")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--skip-backend-neutral"):
        return
    kept, left = [], []
    for item in items:
        (left if item.get_closest_marker("backend_neutral") else kept).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


@pytest.fixture
def clean92(tmp_path):
    """Proxmox set B (tests/fixtures/pve/pve92) without its external node: it maps
    completely."""
    root = tmp_path / "pve"
    shutil.copytree(PVE / "pve92", root)
    fabrics = root / "sdn" / "fabrics.cfg"
    text = fabrics.read_text()
    text = text.replace('\tpeers type=external,node=backup,iface=wg0,'
                        'allowed_ips="10.251.0.0/24,10.252.0.0/24"\n', "")
    fabrics.write_text(text[:text.index("wireguard_node: wgf_backup")])
    return root
