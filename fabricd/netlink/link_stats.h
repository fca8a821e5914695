/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * netlink/link_stats.h - every link's counters (IFLA_STATS64) in one dump,
 * for the metrics: what `ip -s link` shows.
 */
#ifndef FABRICD_NETLINK_LINK_STATS_H
#define FABRICD_NETLINK_LINK_STATS_H

#include <linux/if_link.h>
#include <stddef.h>

#include "netlink/nl.h"

struct link_stats {
	char name[16];
	struct rtnl_link_stats64 stats;
};

struct link_stats_table {
	size_t n;
	struct link_stats *links;
};

/* Dumps the counters of every link into t (replacing its contents). 0 or -errno. */
int link_stats_dump(struct nl_sock *s, struct link_stats_table *t);
const struct link_stats *link_stats_find(const struct link_stats_table *t, const char *name);
void link_stats_free(struct link_stats_table *t);

#endif
