/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/conflicts.h - what stops a node's plan before any change
 * (engine/conflicts.c), and the vnet bridges renamed by hand that get their
 * names back.
 */
#ifndef FABRICD_CONFLICTS_H
#define FABRICD_CONFLICTS_H

#include <stdbool.h>

#include "base/diag.h"
#include "definition/desired.h"
#include "engine/observe.h"

/*
 * Adds to diag every conflict of want with the kernel's state have (each
 * an error naming the object and what to do). 0 or -ENOMEM.
 *
 * held (want->n_vnets flags, or NULL): the daemon's way. A conflict of one
 * vnet's own (a name or VNI of its devices taken) sets held[i] and is a
 * warning instead, where holdable (NULL: everywhere) allows: that vnet is
 * left as it is, the rest is planned. The fabric's, a port's and the
 * guard's still stop everything.
 */
int check_conflicts(const struct node_state *want, const struct observed *have, struct diag *diag,
		    bool *held, const bool *holdable);

/*
 * Vnet v's bridge when the daemon saw it renamed by hand (have->renamed):
 * it gets its name back, with its guests' ports. NULL for none.
 */
const struct link_obs *renamed_bridge(const struct node_state *want, const struct desired_vnet *v,
				      const struct observed *have);

#endif
