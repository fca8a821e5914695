/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kinds/ifaddr.h - interface addresses (the fabric address on wgfab0). */
#ifndef FABRICD_IFADDR_H
#define FABRICD_IFADDR_H

#include "base/addr.h"
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

#endif
