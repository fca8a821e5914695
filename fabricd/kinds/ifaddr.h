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
};

void ifaddr_table_free(struct ifaddr_table *t);
int ifaddr_parse(const struct nlmsghdr *nlh, struct ifaddr_entry *e);
/* RTM_NEWADDR / RTM_DELADDR body. */
void ifaddr_put(struct nlmsghdr *nlh, int ifindex, const struct ip_prefix *p);

/*
 * ifaddr_kind (kinds/kind.h) plans the fabric address on the fabric device
 * in->link (NULL: not made yet) given its addresses (in->have->fabric_addrs):
 * adds it, removes any other (the kernel's link-local stays).
 */

#endif
