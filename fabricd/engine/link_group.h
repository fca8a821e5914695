/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/link_group.h - a pass's link deletes in one kernel message: the
 * links of one phase moved into a group of their own (LINK_GROUP_DELETING)
 * and the group deleted, so that the kernel unregisters them together.
 */
#ifndef FABRICD_LINK_GROUP_H
#define FABRICD_LINK_GROUP_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/plan.h"
#include "engine/reconcile.h"

/* How a group delete is paced for a listener that must not overflow (wireguard-go). */
struct link_group_pacing {
	size_t max_links; /* links per group delete; 0: all at once */
	unsigned int pause_us;
	void (*wait)(const void *data); /* before each group but the first */
	const void *wait_data;
};

/*
 * Deletes the links of the phase's OP_LINK_DELETE ops as interface groups
 * when there are at least two. Returns which ops that did (NULL: none), for
 * the caller to free; the others are left to the per-link deletes, which
 * give the same result (any error, or a link in the group that is not one
 * of them, and the rest go one by one). *events counts the link messages.
 */
bool *link_group_delete(struct reconcile *r, const struct plan *p, int phase,
			const struct link_group_pacing *pace, size_t *events);

#endif
