# SPDX-License-Identifier: GPL-2.0-or-later
"""fabtest - a fabricd cluster simulated in network namespaces.

One SimCluster is one throwaway copy of this picture (suffix ``fdXXXX`` is
random per cluster, so a demo and several test runs can share the machine)::

  +----------------------------------------------------------------+
  | sw-fdXXXX (underlay switch): bridge br0, MTU = underlay MTU    |
  |     port pve1             port pve2             port pve3      |  <- capture()
  +-------|---------------------|---------------------|------------+
          | veth                | veth                | veth
  +-------|----------+  +-------|----------+  +-------|----------+
  | pve1-fdXXXX      |  | pve2-fdXXXX      |  | pve3-fdXXXX      |
  | eth0 192.0.2.11  |  | eth0 192.0.2.12  |  | eth0 192.0.2.13  |
  | .................|  | .................|  | .................|
  | wgfab0 10.255.0.1|  | wgfab0 10.255.0.2|  | wgfab0 10.255.0.3|  <- built by
  | vx100      vs200 |  | vx100      vs200 |  | vx100      vs200 |     fabricd
  | vnet100  vnet200 |  | vnet100  vnet200 |  | vnet100  vnet200 |
  | .................|  | .................|  | .................|
  |  tap1i0          |  |  tap2i0          |  |          tap3i0  |
  +---|--------------+  +---|--------------+  +------------|-----+
      | veth                | veth                         | veth
  +---|------+          +---|------+                   +---|------+
  | g1-fdXXXX|          | g2-fdXXXX|                   | g3-fdXXXX|  guests
  | eth0     |          | eth0     |                   | eth0     |
  | 10.0.0.1 |          | 10.0.0.2 |                   | 10.0.0.3 |
  +----------+          +----------+                   +----------+

Each node namespace pveN-fdXXXX also has a mount namespace of its own (kept
by a bind mount on /run/fabtest-fdXXXX/pveN.mnt) with a private tmpfs on
/run/wireguard, where that node's wireguard-go puts its control socket.

Between the dotted lines is what fabricd builds (the self-test builds it by
hand); the harness builds everything else: the switch, the node namespaces
with eth0, the keys, the definition file and the guests with their taps,
and it checks fabricd's work with ip, bridge, wg and tcpdump.

Modules:
  cluster     SimCluster, Node, Switch, Guest (namespaces, guests, fabricd runner)
  capture     Capture: tcpdump as a context manager, packet counts
  definition  zone()/vnet() builders and what a node should have per DESIGN.md
  diagnose    switch_report(): WireGuard sessions, bridge ports and daemon passes when pings were lost
  jsoncmp     json_subset(): subset comparison for ``ip -j`` / ``status --json``
  proc        run(): subprocess with file-backed output (daemons cannot hang it)
  scenario    standard_zones() and multi-node checks (sessions kept, fabric pings)
  wait        wait_until(): polling instead of sleeping; stays_true(), wait_quiet()
"""

from .capture import Capture
from .cluster import Guest, Node, PingResult, SimCluster, Switch, WgDump, WgPeer
from .definition import (
    FabricExpectation,
    VnetExpectation,
    assert_node_converged,
    fabric_expectation,
    node_problems,
    owned_link_names,
    port_role,
    vnet,
    vnet_expectations,
    zone,
)
from .jsoncmp import assert_json_subset, json_subset
from .proc import CommandFailed, run
from .wait import WaitTimeout, stays_true, wait_quiet, wait_until

__all__ = [
    "Capture",
    "CommandFailed",
    "FabricExpectation",
    "Guest",
    "Node",
    "PingResult",
    "SimCluster",
    "Switch",
    "VnetExpectation",
    "WaitTimeout",
    "WgDump",
    "WgPeer",
    "assert_json_subset",
    "assert_node_converged",
    "fabric_expectation",
    "json_subset",
    "node_problems",
    "owned_link_names",
    "port_role",
    "run",
    "vnet",
    "vnet_expectations",
    "wait_until",
    "stays_true",
    "wait_quiet",
    "zone",
]
