/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * firewall.h - the nftables guard, table `inet fabricd`: plain VXLAN only
 * from member nodes' underlay addresses, secure VXLAN only through the fabric
 * device, the WireGuard port only from the nodes; everything else to those
 * ports dropped and counted. Replaced atomically in one transaction.
 */
#ifndef FABRICD_FIREWALL_H
#define FABRICD_FIREWALL_H

#include "desired.h"
#include "diag.h"
#include "plan.h"

struct reconcile;
struct observed;

/* What the kernel has of the table (opaque to the planner). */
struct firewall_obs;

/* Reads the table; *out NULL when it does not exist. 0 or -errno. */
int firewall_observe(struct firewall_obs **out);
void firewall_obs_free(struct firewall_obs *fw);

/* Plans OP_FIREWALL_SET when the table differs from what want needs. */
int firewall_plan(const struct node_state *want, const struct firewall_obs *have,
		  struct plan *p);
/* Plans OP_FIREWALL_DELETE when the table exists (down). */
int firewall_plan_down(const struct firewall_obs *have, struct plan *p);

/* Runs an OP_FIREWALL_* op. 0 or -errno (logged by the caller). */
int firewall_apply(struct op *op);

#endif
