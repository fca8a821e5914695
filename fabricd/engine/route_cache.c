// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/route_cache.c - the routes VXLAN devices keep for their remotes,
 * made stale (engine/route_cache.h says why).
 */
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "definition/evpn.h"
#include "engine/route_cache.h"

/* Writing anything bumps the family's route generation: every cached route is checked again. */
static void flush_one(const char *path)
{
	int ret = write_proc(path, "1\n");

	if (ret < 0)
		log_debug("%s: %s (no route cache flushed)", path, strerror(-ret));
}

void route_cache_flush(void)
{
	flush_one("/proc/sys/net/ipv4/route/flush");
	flush_one("/proc/sys/net/ipv6/route/flush");
}

void route_cache_refresh(const struct node_state *want)
{
	if (want && want->cluster && evpn_node_speaks(want->cluster, want->self))
		route_cache_flush();
}

void route_cache_refresh_node(const struct cluster *c, const char *node)
{
	int self = c && node ? cluster_find_node(c, node) : -1;

	if (self >= 0 && evpn_node_speaks(c, (size_t)self))
		route_cache_flush();
}
