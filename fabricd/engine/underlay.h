/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/underlay.h - what this node's underlay is, asked of the kernel's
 * routing: the MTU it carries towards the other nodes, and whether the
 * definition's underlay address of this node is one of this host's.
 */
#ifndef FABRICD_UNDERLAY_H
#define FABRICD_UNDERLAY_H

#include <stddef.h>

#include "base/diag.h"
#include "definition/model.h"
#include "kinds/link.h"
#include "netlink/nl.h"

/*
 * One pass's look at the underlay, one RTM_GETROUTE per other node (and one
 * towards this node's own address), the answers shared by:
 *  - the underlay MTU into mtu: fabric.underlay_mtu when given, with a
 *    warning (once per value a process sees) when a path to some other node
 *    carries less (the MTUs built from it are black holes for the largest
 *    frames); else the smallest path MTU towards the other nodes, as wg-quick
 *    computes it per endpoint (1500, with a warning, for a cluster of one);
 *  - a warning (once per address a process sees) when this node's underlay
 *    address is not an address of this host: its VXLAN devices send from it.
 *    When it is, a warning (once per node and address) when the route towards
 *    another node picks another source address: WireGuard sends from that
 *    one, and the other node's guard drops it.
 * 0, or -errno with the node it cannot reach (MTU not given) in diag.
 */
int underlay_survey(struct nl_sock *rtnl, const struct cluster *c, size_t self,
		    const struct link_table *links, unsigned int *mtu, struct diag *diag);

#endif
