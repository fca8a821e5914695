# SPDX-License-Identifier: GPL-2.0-or-later
"""Fixtures of the tests in tests/ (the namespace tests have tests/integration/conftest.py)."""
import pathlib
import shutil

import pytest

PVE = pathlib.Path(__file__).resolve().parent / "fixtures" / "pve"


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
