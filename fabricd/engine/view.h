/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/view.h - the daemon's observed view, kept between passes: the link
 * table, the all-zeros FDB entries and the guard's table, as the last pass
 * saw them, with what the notifications since then said changed.
 *
 * A notification does not carry the whole truth (a bridge port change
 * arrives as an AF_BRIDGE message without the link's kind; deleting a whole
 * FDB entry notifies only its first remote), so it only marks its object
 * dirty: a link's ifindex, a VXLAN device's FDB entries, the guard. A pass
 * reads those objects again (one RTM_GETLINK per link, one FDB dump
 * filtered to the device) and plans from the view without dumping the rest.
 * Everything is read again at the first pass, after ENOBUFS on the
 * notification socket, after a failed pass, when too many objects are dirty
 * for single reads to be cheaper, and every VIEW_FULL_S seconds.
 */
#ifndef FABRICD_VIEW_H
#define FABRICD_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "engine/observe.h"

struct reconcile;
struct plan;

#define VIEW_FULL_S    60 /* a full re-read at least this often (seconds) */
#define VIEW_DIRTY_MAX 64 /* more dirty links or FDB devices than this: dump them all */

struct obs_view {
	/*
	 * Kept as the pass left them, not packed: a pass that unpacked 0.9 MiB
	 * of links and 1.5 MiB of FDB entries touched that many fresh pages,
	 * and on a VM each first touch of a page the process gave back is a
	 * fault the host serves (README, "Scale"). Compact instead: 8 bytes an
	 * IPv4 flood entry (kinds/fdb.h), a link's alias as long as it is
	 * (kinds/link.h).
	 */
	struct link_table links; /* ordered by ifindex */
	struct fdb_table fdb;	 /* sorted (fdb_table_sort) */
	struct firewall_obs *firewall;
	bool links_ok, fdb_ok, guard_ok; /* false: dumped again at the next pass */
	bool guard_cached;		 /* this pass's guard came from the view */
	/*
	 * The nftables generation the kept guard was read at (gen_known): the
	 * periodic full re-read keeps the guard while it has not moved, where
	 * dumping its 64,512 set elements was half of that read's CPU time.
	 * Not kept past a notification of the table, an overflow or a failure.
	 */
	bool gen_known;
	uint32_t gen;
	long long full_at; /* CLOCK_MONOTONIC s of the last full re-read */
	size_t n_dirty_links, n_dirty_fdb;
	int dirty_links[VIEW_DIRTY_MAX], dirty_fdb[VIEW_DIRTY_MAX];
	/*
	 * The last view_observe: whether it kept the links and FDB entries (no
	 * full read), and then the links and devices it read again
	 * (engine/converged.h plans only their vnets and the changed ones).
	 */
	bool changes_known;
	size_t n_pass_changed;
	int pass_changed[2 * VIEW_DIRTY_MAX];
	/* for tests and --verbose */
	unsigned long full_reads, link_gets, fdb_gets;
	/* the planning warnings last printed: each said once while it lasts */
	struct diag_said said;
	/* fabricd's links renamed by hand, until they have their first name back (observe.h) */
	size_t n_renamed, cap_renamed;
	struct link_rename *renamed;
	/* links the last passes made, by index and name, until read back (a rename needs both) */
	size_t n_made, cap_made;
	struct link_rename *made;
};

void view_init(struct obs_view *v);
void view_free(struct obs_view *v);
/* Everything is read again at the next pass (ENOBUFS, a failed pass). */
void view_invalidate(struct obs_view *v);
/* The guard's table changed (an nftables notification for `inet fabricd`). */
void view_guard_changed(struct obs_view *v);
/* One rtnetlink notification: marks what it concerns dirty. */
void view_notify(struct obs_view *v, const struct nlmsghdr *nlh);
/*
 * Whether nlh is a bridge port's AF_BRIDGE notification that says nothing
 * new: the port is in the kept view, not dirty, and its flags, MTU, master
 * and port options are as the view has them. The kernel sends one for every
 * port forward_delay (15 s) after it starts forwarding even without STP, for
 * each of a node's 1,536 VXLAN ports after a start or build: no pass is due
 * for those. A notification that does differ marks the link as before.
 */
bool view_port_unchanged(const struct obs_view *v, const struct nlmsghdr *nlh);
/* Whether the periodic full re-read is due (now: CLOCK_MONOTONIC s). */
bool view_full_due(const struct obs_view *v, long long now);

/*
 * The observed state for a pass: the view brought up to date (dirty objects
 * read again, or everything), lent to o, plus what is read every pass (the
 * fabric device's addresses and WireGuard state, frr.conf). view_reclaim
 * takes it back before o is freed. 0 or -errno (the view is then invalid).
 */
int view_observe(struct obs_view *v, struct reconcile *r, struct observed *o);
void view_reclaim(struct obs_view *v, struct observed *o);
/*
 * The links p made (its applied creates), noted by index and name: one renamed
 * before the view read it back is still known as renamed.
 */
void view_note_made(struct obs_view *v, const struct plan *p);
/*
 * Whether plan p replaces the guard's whole table from a cached guard: the
 * counters it carries over are then stale, and the pass plans again with the
 * guard read anew (the guard is invalidated here).
 */
bool view_guard_stale(struct obs_view *v, const struct plan *p);

#endif
