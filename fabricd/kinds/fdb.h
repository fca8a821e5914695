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

/*
 * One all-zeros entry with a remote, as a message carries it. One with
 * extras (engine/plan.h: `bridge fdb append ... dst A vni 101`) sends a
 * tenant's frames somewhere fabricd did not mean: it is never taken for the
 * wanted remote, and is removed.
 */
struct fdb_entry {
	int ifindex;
	struct ip_addr dst;
	struct fdb_extra x;
};

/* An IPv6 remote in the table (its extras are always none: see odd). */
struct fdb_v6 {
	int ifindex;
	struct ip_addr dst;
};

/*
 * The all-zeros entries of a namespace. 64 nodes x 1024 vnets are 64,512 of
 * them, kept by the daemon between passes: IPv4 remotes (an IPv4 underlay,
 * nearly always) are ifindex << 32 | address in host order, 8 bytes each,
 * IPv6 ones whole. Sorted (fdb_table_sort), a device's entries are
 * contiguous in each array, IPv4 ones first, each by address: lookups
 * bisect. Unsorted (as a dump appends them), lookups scan.
 */
struct fdb_table {
	size_t n; /* n_v4 + n_v6 */
	uint64_t *v4;
	size_t n_v4;
	struct fdb_v6 *v6;
	size_t n_v6;
	/* entries with extras (changed by hand, so hardly ever any): in no order, not in n */
	struct fdb_entry *odd;
	size_t n_odd;
	/* zebra's MAC entries (struct fdb_mac), sorted by device and MAC too; not in n */
	struct fdb_mac *macs;
	size_t n_macs;
	bool sorted;
};

/*
 * A MAC entry FRR's zebra put on a device (extern_learn): its own table's,
 * with a remote (`bridge fdb show`: MAC dst A self extern_learn), or the
 * bridge's for that port (master, no remote). Only EVPN devices' are looked
 * at: a stale one (zebra died and missed the withdrawal) goes.
 */
struct fdb_mac {
	int ifindex;
	uint8_t mac[6];
	bool master;
	struct ip_addr dst; /* family 0 when master */
};

/* A device's entries one after the other (fdb_next), in the table's order. */
struct fdb_cursor {
	int ifindex;
	size_t v4, v6; /* the next entry of each array to look at */
};

void fdb_table_free(struct fdb_table *t);
/* Appends e (the table is then unsorted; one with extras goes to odd). 0 or -ENOMEM. */
int fdb_table_add(struct fdb_table *t, const struct fdb_entry *e);
/* Appends m to macs. 0 or -ENOMEM. */
int fdb_table_add_mac(struct fdb_table *t, const struct fdb_mac *m);
/*
 * Adds what nlh is to t, if it is an entry t keeps (an all-zeros one, or
 * zebra's MAC entry) of device ifindex (any when 0). 0 or -ENOMEM.
 */
int fdb_table_take(struct fdb_table *t, const struct nlmsghdr *nlh, int ifindex);
/* Orders the entries so that fdb_has and the plans find a device's entries by bisection. */
void fdb_table_sort(struct fdb_table *t);
/* A remote without extras (what fabricd makes) of device ifindex. */
bool fdb_has(const struct fdb_table *t, int ifindex, const struct ip_addr *dst);
/* Any entry of device ifindex, odd ones included. */
bool fdb_has_device(const struct fdb_table *t, int ifindex);
void fdb_cursor_start(const struct fdb_table *t, int ifindex, struct fdb_cursor *c);
/*
 * The MAC entries of device ifindex in sorted table t: *first and the count,
 * by MAC, each one's own before the bridge's (master) for the same MAC.
 */
size_t fdb_macs_of(const struct fdb_table *t, int ifindex, const struct fdb_mac **first);
/* The device's next entry into *dst; false when there is none. */
bool fdb_next(const struct fdb_table *t, struct fdb_cursor *c, struct ip_addr *dst);
/*
 * Replaces the entries of device ifindex in sorted table t with those of
 * fresh (sorted, that device's only). 0 or -ENOMEM (t unchanged).
 */
int fdb_table_replace_device(struct fdb_table *t, int ifindex, const struct fdb_table *fresh);

/* 1 when nlh is an all-zeros entry with a remote (filled into e, extras too), 0 otherwise. */
int fdb_parse(const struct nlmsghdr *nlh, struct fdb_entry *e);
/* An all-zeros entry with a remote (what fabricd makes); its device in *ifindex. */
bool fdb_msg_is_remote(const struct nlmsghdr *nlh, int *ifindex);
/* 1 when nlh is zebra's MAC entry (struct fdb_mac, filled into m), 0 otherwise. */
int fdb_parse_mac(const struct nlmsghdr *nlh, struct fdb_mac *m);

/* RTM_NEWNEIGH (append) or RTM_DELNEIGH body for an all-zeros entry (its extras: a delete of
 * an odd one names them, or the kernel looks for the remote without them). */
void fdb_put(struct nlmsghdr *nlh, int ifindex, const struct op_fdb *remote);

struct vxlan_port;
/*
 * An EVPN device's flood entry to dst that is stale: to no member of its zone
 * in either transport and (with_zebra) to no VTEP zebra holds (want->zebra).
 */
bool fdb_evpn_stray(const struct vxlan_port *want, const struct ip_addr *dst, bool with_zebra);
/*
 * Zebra's MAC entry m (its own table's, with a remote) on an EVPN device that
 * is stale: to no member of the zone in either transport and (with_zebra)
 * for a MAC zebra does not hold for the VNI (want->zebra_macs).
 */
bool fdb_evpn_stray_mac(const struct vxlan_port *want, const struct fdb_mac *m, bool with_zebra);

/*
 * fdb_kind (kinds/kind.h) plans the remotes of device in->port (kinds/vxlan.h)
 * on its link in->link: adds the missing ones (all of them when
 * in->recreated, the device then starts empty), removes the others. An EVPN
 * device's are zebra's: only stale ones go (fdb_evpn_stray).
 */

#endif
