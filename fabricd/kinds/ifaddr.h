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
	size_t n;
	struct ifaddr_entry *entries;
};

void ifaddr_table_free(struct ifaddr_table *t);
int ifaddr_parse(const struct nlmsghdr *nlh, struct ifaddr_entry *e);
/* RTM_NEWADDR / RTM_DELADDR body. */
void ifaddr_put(struct nlmsghdr *nlh, int ifindex, const struct ip_prefix *p);

/*
 * Plans the fabric address on the fabric device l (NULL: not made yet) given
 * its addresses: adds it, removes any other (the kernel's link-local stays).
 */
int ifaddr_plan(const struct node_state *want, const struct link_obs *l,
		const struct ifaddr_table *addrs, struct plan *p);

#endif
