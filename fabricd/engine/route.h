/* SPDX-License-Identifier: GPL-2.0-or-later */
/* engine/route.h - what the kernel's routing says about reaching the peers. */
#ifndef FABRICD_ROUTE_H
#define FABRICD_ROUTE_H

#include <stdbool.h>

#include "base/addr.h"
#include "kinds/link.h"
#include "netlink/nl.h"

struct route_hop {
	int oif;
	unsigned int mtu;   /* the route's MTU metric, 0 = none (the link's MTU applies) */
	bool local;	    /* dst is an address of this host (a route of type local) */
	struct ip_addr src; /* the source address the kernel picks (RTA_PREFSRC); family 0: none */
};

/* Asks the kernel which route it would use to reach dst (RTM_GETROUTE). */
int route_get(struct nl_sock *s, const struct ip_addr *dst, struct route_hop *hop);

/*
 * The path MTU of the route hop (route_get's answer) as wg-quick computes it:
 * the route's MTU metric when set, else the MTU of the outgoing link. 0 or
 * -ENODEV (its link is not in links).
 */
int route_hop_mtu(const struct link_table *links, const struct route_hop *hop, unsigned int *mtu);

#endif
