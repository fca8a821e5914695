/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/probe_entry.h - the probe thread's entries (one per peer and zone:
 * its target, results, what was logged) and a sorted index of them by
 * (zone, peer), for configure and the merge of a round (daemon/probe.c).
 */
#ifndef FABRICD_DAEMON_PROBE_ENTRY_H
#define FABRICD_DAEMON_PROBE_ENTRY_H

#include <net/ethernet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/probe.h"

/* what the log said last of an entry's path */
enum reported { REP_NONE, REP_OK, REP_BLACK_HOLE, REP_UNREACHABLE };

struct entry {
	struct probe_result r;
	uint8_t mac[ETH_ALEN]; /* the peer bridge's, learned from its replies */
	bool mac_known;
	enum reported reported;
	unsigned int reported_size;
	/* during a round */
	bool got;	/* answered the last request */
	double got_rtt; /* its round trip */
	bool full;	/* answered at the zone MTU */
	bool small;	/* answered at SMALL_SIZE */
};

/*
 * An index of es's entries (only the measured ones if measured_only), sorted
 * by (zone, peer). by is NULL when there is nothing to index or no memory:
 * then entry_find scans. Free by with free().
 */
struct entry_index {
	const struct entry *es;
	size_t n;
	bool measured_only;
	const struct entry **by;
	size_t n_by;
};

struct entry_index entry_index_make(const struct entry *es, size_t n, bool measured_only);
/* The last indexed entry with t's (peer, zone), or NULL. */
const struct entry *entry_find(const struct entry_index *x, const struct probe_target *t);
/* By zone, then peer. */
int probe_target_cmp(const struct probe_target *a, const struct probe_target *b);
/* The same path measured: a zone that changed transport, MTU or grace is another one. */
bool probe_same_path(const struct probe_target *a, const struct probe_target *b);

#endif
