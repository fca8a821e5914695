#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The demo: `scripts/demo.sh` (or `make demo`) builds a three-node cluster in
# network namespaces; `scripts/demo.sh down` removes it.
set -eu
cd "$(dirname "$0")/.."
exec /usr/bin/python3 -B scripts/demo.py "${1:-up}"
