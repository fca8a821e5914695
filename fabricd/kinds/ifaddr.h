/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kinds/ifaddr.h - interface addresses (the fabric address on wgfab0). */
#ifndef FABRICD_IFADDR_H
#define FABRICD_IFADDR_H

#include "base/addr.h"
#include "definition/desired.h"
#include "engine/plan.h"
#include "kinds/link.h"
#include "netlink/nl.h"

struct ifaddr_entry {
	int ifindex;
	struct ip_prefix prefix; /* address with its prefix length */
};

struct ifaddr_table {
	int ifindex; /* the link whose addresses the kind's parse keeps; 0: every link's */
	size_t n;
	struct ifaddr_entry *entries;
	/* the main table's unicast routes through link ifindex (engine/observe.c dumps them) */
	size_t n_routes;
	struct ip_prefix *routes;
};

void ifaddr_table_free(struct ifaddr_table *t);
int ifaddr_parse(const struct nlmsghdr *nlh, struct ifaddr_entry *e);
/* RTM_NEWADDR / RTM_DELADDR body. */
void ifaddr_put(struct nlmsghdr *nlh, int ifindex, const struct ip_prefix *p);

/*
 * ifaddr_kind (kinds/kind.h) plans the fabric address on the fabric device
 * in->link (NULL: not made yet) given its addresses (in->have->fabric_addrs):
 * adds it, removes any other (the kernel's link-local stays), and puts back
 * its prefix route when the address stayed but the route went (`ip route
 * del`): without it the fabric prefix falls to another route, and secure
 * zones and the EVPN sessions stop.
 */

#endif
