/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine/takeover.h - taking over a vnet another manager built (Proxmox's
 * VXLAN zone: bridge V with the guests' taps and vxlan_V under it). Only a
 * port the definition names ("replaces") is touched, and only while it is
 * a VXLAN device of the vnet's VNI in the vnet's bridge: fabricd deletes it
 * and creates its own device in its place in the same batch, so the guests'
 * ports and the bridge stay, and a node not yet taken over still talks to it
 * (plain fabricd VXLAN and Proxmox's are the same on the wire).
 */
#ifndef FABRICD_TAKEOVER_H
#define FABRICD_TAKEOVER_H

#include <stdbool.h>

#include "definition/desired.h"
#include "base/diag.h"
#include "engine/plan.h"
#include "engine/reconcile.h"

/* Whether l is the port v takes over (so its VNI is no conflict). */
bool takeover_applies(const struct desired_vnet *v, const struct link_obs *l,
		      const struct observed *have);

/*
 * Plans the deletion of the port v takes over, when it is there, and warns
 * (diag) when its UDP port is not the one v's device uses. 0 or -ENOMEM.
 */
int takeover_plan(const struct desired_vnet *v, const struct observed *have, struct plan *p,
		  struct diag *diag);

#endif
