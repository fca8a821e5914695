// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/takeover.c - replacing a foreign VXLAN port of a vnet's bridge (see takeover.h). */
#include <errno.h>
#include <string.h>

#include "engine/takeover.h"
#include "kinds/kind.h"
#include "kinds/link.h"

bool takeover_applies(const struct desired_vnet *v, const struct link_obs *l,
		      const struct observed *have)
{
	const struct link_obs *br;

	if (!v->existing_bridge || !v->replaces || strcmp(l->name, v->replaces) ||
	    strcmp(l->kind, "vxlan") || l->vni != v->vni)
		return false;
	br = link_find(&have->links, v->name);
	return br && !strcmp(br->kind, "bridge") && l->master == br->ifindex;
}

int takeover_plan(const struct desired_vnet *v, const struct observed *have, struct plan *p,
		  struct diag *diag)
{
	const struct link_obs *old = v->replaces ? link_find(&have->links, v->replaces) : NULL;
	struct op *op;

	if (!old || !takeover_applies(v, old, have))
		return 0;
	/* in the VXLAN phase, just before its successor is created: the gap stays short */
	op = plan_add(p, KIND_LINK, OP_LINK_DELETE, PHASE_VXLAN, VERB_DELETE, NULL);
	if (!op)
		return -ENOMEM;
	op_delete_names(op, "vxlan", old->name);
	op->ifindex = old->ifindex;
	op_detail(op, "taken over: %s replaces it in bridge %s (\"replaces\")", v->vxlan, v->name);
	/* the nodes not yet taken over still send to the old port, and listen on it */
	if (v->transport == TRANSPORT_SECURE)
		diag_warn(diag, old->name,
			  "is Proxmox's plain VXLAN, and %s is secure (inside WireGuard): until "
			  "every node of vnet %s is taken over, this node and the others cannot "
			  "reach each other in it; take the zone over plain first and switch it "
			  "to secure after (README, Taking over)",
			  v->vxlan, v->name);
	else if (old->port && old->port != v->port)
		diag_warn(diag, old->name,
			  "uses UDP port %u, and %s will use %u: until every node of vnet %s is "
			  "taken over, this node and the others cannot reach each other in it; "
			  "take them over together, or give the zone port %u in Proxmox "
			  "(vxlan-port) and apply that first",
			  old->port, v->vxlan, v->port, v->name, v->port);
	return 0;
}
