/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/observe.h - what the kernel has: the dumps a pass reads (each kind
 * parses its own messages) and the observed state the planner diffs against.
 */
#ifndef FABRICD_OBSERVE_H
#define FABRICD_OBSERVE_H

#include <stdbool.h>

#include "engine/frr.h"
#include "kinds/carry.h"
#include "kinds/fdb.h"
#include "kinds/guard.h"
#include "kinds/ifaddr.h"
#include "kinds/link.h"
#include "netlink/nl.h"
#include "wireguard/wg.h"

struct reconcile;

/* A link of fabricd's the kernel renamed: its index and the name it had first. */
struct link_rename {
	int ifindex;
	char from[16];
};

struct observed {
	struct link_table links;
	struct fdb_table fdb;
	struct ifaddr_table fabric_addrs; /* addresses on the fabric device */
	struct wg_device *wg;		  /* NULL when the fabric device is absent */
	struct firewall_obs *firewall;	  /* the `inet fabricd` table; NULL when absent */
	bool wg_error;			  /* present but not readable */
	bool wg_adopt; /* unmarked, but started by fabricd (killed before marking it) */

	/* frr.conf and fabricd's block in it */
	struct frr_obs frr;
	/* the carry's rules, route and the fabric device's rp_filter */
	struct carry_obs carry;

	/*
	 * fabricd's links renamed by hand while the daemon watched, as its
	 * notifications told, until they have their names back (borrowed from
	 * the daemon's view; a one-shot command cannot tell a rename from a link
	 * made anew, and has none).
	 */
	size_t n_renamed;
	const struct link_rename *renamed;
};
/* Dumps every link of this network namespace into t (replacing its contents). */
int link_dump(struct nl_sock *s, struct link_table *t);
/* The all-zeros FDB entries of every VXLAN device. */
int fdb_dump(struct nl_sock *s, struct fdb_table *t);
/* Addresses of one link (ifindex), both families. */
int ifaddr_dump(struct nl_sock *s, int ifindex, struct ifaddr_table *t);

/* The carry's rules, its table's routes and the fabric device's rp_filter (ifindex 0: none). */
int carry_dump(struct nl_sock *s, int fabric_ifindex, struct carry_obs *c);

/* Reads everything a pass plans against; decides the backend from an existing device. */
int observe(struct reconcile *r, struct observed *o);
/*
 * What observe reads after the links, FDB and guard (in o already): frr.conf,
 * the fabric device's addresses and WireGuard state. 0 or -errno; the caller
 * frees o on error. The daemon's cached view (engine/view.h) reads this every pass.
 */
int observe_rest(struct reconcile *r, struct observed *o);
void observed_free(struct observed *o);

#endif
