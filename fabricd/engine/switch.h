/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/switch.h - a vnet's VXLAN devices and the stages of a transport
 * switch, as ordinary plan ops (engine/switch.c explains the mechanism).
 */
#ifndef FABRICD_SWITCH_H
#define FABRICD_SWITCH_H

#include <stdbool.h>

#include "definition/desired.h"
#include "engine/observe.h"
#include "engine/plan.h"
#include "kinds/link.h"

struct reconcile;

/*
 * Reads each vnet's switch stage from its devices' notes and this pass's
 * clock and marks what the guard needs (desired_vnet.plain_receiving and
 * plain_sending).
 */
void switch_mark_stages(const struct reconcile *r, struct node_state *want,
			const struct observed *have);

/*
 * Plans vnet v's VXLAN devices (the one that sends, and the standby or the
 * one being left) and their remotes; bridge: the vnet's bridge if kept.
 */
int switch_plan_vnet(const struct reconcile *r, const struct desired_vnet *v,
		     const struct link_obs *bridge, const struct observed *have, struct plan *p);

/*
 * Whether l is a port of vnet v's bridge. A device named like v's but in
 * another bridge is another vnet's that had v's VNI (removed, or given
 * another VNI in the same change): never v's, so no switch of v's.
 */
bool switch_port_of_vnet(const struct desired_vnet *v, const struct link_obs *l,
			 const struct observed *have);

/*
 * True when vnet v's switch stage ends in this pass (its note's deadline has
 * passed): what the pass plans for v is the stage's end, not a repair.
 */
bool switch_stage_ends(const struct reconcile *r, const struct desired_vnet *v,
		       const struct observed *have);

/* The grace period of vnet v's switches: 0 where --grace 0 or --end-grace ends it. */
unsigned int switch_grace(const struct reconcile *r, const struct desired_vnet *v);

/* True when vnet v wants a device named like l this pass (not to be removed). */
bool switch_wants_device(const struct reconcile *r, const struct desired_vnet *v,
			 const struct link_obs *l, const struct observed *have);

#endif
