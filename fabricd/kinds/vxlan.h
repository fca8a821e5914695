/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kinds/vxlan.h - the VXLAN device of a vnet: vx<VNI> (plain, port 4789, from the
 * underlay address) or vs<VNI> (secure, fabric.secure_port, from the fabric
 * address), an isolated port of the vnet's bridge.
 */
#ifndef FABRICD_VXLAN_H
#define FABRICD_VXLAN_H

#include "definition/desired.h"
#include "kinds/link.h"
#include "engine/plan.h"

/* RTM_NEWLINK body creating the device of op (OP_VXLAN_CREATE), down, in bridge master. */
void vxlan_put_create(struct nlmsghdr *nlh, const struct op *op, int master);

/*
 * Plans the device of vnet v. have: the owned link of that name or NULL;
 * bridge: the vnet's bridge link if it exists and is kept (NULL otherwise);
 * owner: the owner alias (a device that was retiring gets it back).
 * *recreated is set when the device is (re)created, so its FDB starts empty.
 */
int vxlan_plan(const struct desired_vnet *v, const struct link_obs *have,
	       const struct link_obs *bridge, const char *owner, struct plan *p, bool *recreated);

#endif
