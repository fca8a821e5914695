/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench/cp_watch.h - `bench --control-plane`: waits for a new vnet's flood
 * entries by the kernel's rtnetlink announcements (bench/cp_watch.c says why
 * not by dumps).
 */
#ifndef FABRICD_BENCH_CP_WATCH_H
#define FABRICD_BENCH_CP_WATCH_H

#include <net/if.h>
#include <signal.h>

#include "kinds/fdb.h"
#include "netlink/nl.h"

#define CP_WATCH_MAX_PORTS   8
#define CP_WATCH_MAX_ENTRIES 1024

struct cp_flood_watch {
	struct nl_sock s; /* in the namespace, a member of the link and neighbour groups */
	char bridge[IFNAMSIZ];
	int bridge_index; /* 0 until the bridge is announced */
	int ports[CP_WATCH_MAX_PORTS];
	size_t n_ports;
	struct fdb_entry seen[CP_WATCH_MAX_ENTRIES]; /* all-zeros entries announced, once each */
	size_t n_seen;
};

/* Listens in the namespace net_fd for bridge and its ports; before the change. 0 or -errno. */
int cp_flood_watch_open(int net_fd, const char *bridge, struct cp_flood_watch *w);
/*
 * Until want all-zeros entries were announced on the bridge's ports: 1, or 0
 * when seconds passed or *stop was set first, or -errno (-ENOBUFS: some
 * announcements were lost, count by asking instead).
 */
int cp_flood_watch_wait(struct cp_flood_watch *w, unsigned int want, double seconds,
			const volatile sig_atomic_t *stop);
void cp_flood_watch_close(struct cp_flood_watch *w);

#endif
