/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kinds/fdb.h - head-end replication entries: one all-zeros bridge FDB entry per
 * remote member on a VXLAN device (`bridge fdb append 00:00:00:00:00:00 dev
 * vx100 dst 192.0.2.12`). Only these entries are read and changed; learned
 * and hand-made entries are left alone.
 */
#ifndef FABRICD_FDB_H
#define FABRICD_FDB_H

#include <stdbool.h>

#include "base/addr.h"
#include "definition/desired.h"
#include "engine/plan.h"
#include "kinds/link.h"
#include "netlink/nl.h"

struct fdb_entry {
	int ifindex;
	struct ip_addr dst;
};

struct fdb_table {
	size_t n;
	struct fdb_entry *entries;
	/* entries ordered by ifindex, then address (fdb_table_sort): lookups bisect */
	bool sorted;
};

void fdb_table_free(struct fdb_table *t);
/* Orders the entries so that fdb_has and the plans find a device's entries by bisection. */
void fdb_table_sort(struct fdb_table *t);
bool fdb_has(const struct fdb_table *t, int ifindex, const struct ip_addr *dst);

/* 1 when nlh is an all-zeros entry with a remote (filled into e), 0 otherwise. */
int fdb_parse(const struct nlmsghdr *nlh, struct fdb_entry *e);
/* An all-zeros entry with a remote (what fabricd makes); its device in *ifindex. */
bool fdb_msg_is_remote(const struct nlmsghdr *nlh, int *ifindex);

/* RTM_NEWNEIGH (append) or RTM_DELNEIGH body for an all-zeros entry. */
void fdb_put(struct nlmsghdr *nlh, int ifindex, const struct ip_addr *dst);

/*
 * fdb_kind (kinds/kind.h) plans the remotes of device in->port (kinds/vxlan.h)
 * on its link in->link: adds the missing ones (all of them when
 * in->recreated, the device then starts empty), removes the others. An EVPN
 * device's are zebra's: left alone.
 */

#endif
