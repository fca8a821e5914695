/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * netlink/link_stats.h - every link's counters in one RTM_GETSTATS dump
 * (IFLA_STATS_LINK_64 only), for the metrics: what `ip -s link` shows,
 * without the kernel filling each link's whole description (at 2,000 links
 * an RTM_GETLINK dump a second was most of an idle daemon's CPU).
 */
#ifndef FABRICD_NETLINK_LINK_STATS_H
#define FABRICD_NETLINK_LINK_STATS_H

#include <linux/if_link.h>
#include <stdbool.h>
#include <stddef.h>

#include "netlink/nl.h"

struct link_stats {
	int ifindex;
	struct rtnl_link_stats64 stats;
};

struct link_stats_table {
	size_t n, cap;
	struct link_stats *links; /* sorted by ifindex, as the kernel dumps them */
	int ioctl_fd;		  /* names to indexes (SIOCGIFINDEX), once ioctl_tried */
	bool ioctl_tried;
};

/* Dumps the counters of every link into t (replacing its contents). 0 or -errno. */
int link_stats_dump(struct nl_sock *s, struct link_stats_table *t);
/* The counters of the link called name, NULL when there is none. */
const struct link_stats *link_stats_find(struct link_stats_table *t, const char *name);
/*
 * The counters of the link with index ifindex, NULL when there is none: no
 * system call (by name it costs an ioctl; the metrics look up 1,536 devices
 * a second at 1024 vnets).
 */
const struct link_stats *link_stats_find_index(const struct link_stats_table *t, int ifindex);
void link_stats_free(struct link_stats_table *t);

#endif
