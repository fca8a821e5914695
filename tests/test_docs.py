# SPDX-License-Identifier: GPL-2.0-or-later
"""The definition's man page (man/fabricd.json.5) names every key the schema accepts: the
format's reference for operators, which fell behind the schema (control_plane, evpn,
replaces were missing)."""
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def schema_keys(node, found):
    """Every property name in the schema, at any depth."""
    if isinstance(node, dict):
        for key, sub in node.get("properties", {}).items():
            found.add(key)
            schema_keys(sub, found)
        for key, sub in node.items():
            if key != "properties":
                schema_keys(sub, found)
    elif isinstance(node, list):
        for sub in node:
            schema_keys(sub, found)
    return found


def test_the_man_page_names_every_key_of_the_schema():
    schema = json.loads((REPO / "schemas" / "cluster.schema.json").read_text())
    page = (REPO / "man" / "fabricd.json.5").read_text().replace("\\-", "-")
    named = set(re.findall(r"[a-z_]+", page))
    missing = sorted(schema_keys(schema, set()) - named)
    assert not missing, f"man/fabricd.json.5 does not name {missing}"
