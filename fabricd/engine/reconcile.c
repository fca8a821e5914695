// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/reconcile.c - observe, diff, plan and apply one node's share. */
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kinds/bridge.h"
#include "kinds/kind.h"
#include "kinds/fabric.h"
#include "kinds/frr.h"
#include "base/log.h"
#include "engine/guard_io.h"
#include "netlink/ifindex.h"
#include "engine/reconcile.h"
#include "engine/switch.h"
#include "engine/takeover.h"
#include "kinds/vxlan.h"

int reconcile_open(struct reconcile *r, const char *owner, enum wg_backend backend)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->owner, sizeof(r->owner), "%s", owner);
	r->backend = backend;
	r->rtnl = nl_route_shared();
	return r->rtnl ? 0 : -errno;
}

void reconcile_close(struct reconcile *r)
{
	r->rtnl = NULL; /* the process keeps the socket for the next pass */
	explicit_bzero(r->private_key, sizeof(r->private_key));
	if (r->psk) {
		explicit_bzero(r->psk, r->n_psk * sizeof(*r->psk));
		free(r->psk);
	}
	r->psk = NULL;
	r->n_psk = 0;
	free(r->endpoint_moved);
	r->endpoint_moved = NULL;
	r->n_endpoint_moved = 0;
}

static const struct link_obs *owned_link(const struct observed *have, const char *name,
					 const char *owner)
{
	const struct link_obs *l = link_find(&have->links, name);

	return l && link_is_owned(l, owner) ? l : NULL;
}

/* Wanted names held by links fabricd does not own, and VNIs held by foreign devices. */
static void check_conflicts(const struct node_state *want, const struct observed *have,
			    struct diag *diag)
{
	char path[64];

	for (size_t i = 0; i < want->n_vnets; i++) {
		const struct desired_vnet *v = &want->vnets[i];
		const char *names[3] = {v->name, v->vxlan, v->standby ? v->other_vxlan : NULL};

		for (size_t k = 0; k < 3; k++) {
			const struct link_obs *l =
			    names[k] ? link_find(&have->links, names[k]) : NULL;

			if (!l || link_is_owned(l, want->owner) || (k == 0 && v->existing_bridge))
				continue;
			snprintf(path, sizeof(path), "%s %s", k ? "vxlan" : "bridge", names[k]);
			diag_add(diag, path,
				 "a link named %s exists that fabricd does not own (kind %s, alias "
				 "\"%s\"); delete or rename it, or rename the vnet",
				 names[k], l->kind[0] ? l->kind : "unknown", l->alias);
		}
		for (size_t j = 0; j < have->links.n; j++) {
			const struct link_obs *l = &have->links.links[j];

			bool standby_port = v->standby && l->port == v->other_port;

			if (strcmp(l->kind, "vxlan") || link_is_owned(l, want->owner) ||
			    l->vni != v->vni || (l->port != v->port && !standby_port) ||
			    !strcmp(l->name, standby_port ? v->other_vxlan : v->vxlan) ||
			    takeover_applies(v, l, have))
				continue;
			snprintf(path, sizeof(path), "vxlan %s",
				 standby_port ? v->other_vxlan : v->vxlan);
			diag_add(diag, path,
				 "VNI %u on UDP port %u is already used by %s, which fabricd does "
				 "not own; delete that device",
				 v->vni, l->port, l->name);
		}
	}
}

static const struct desired_vnet *vnet_by_vni(const struct node_state *want, uint32_t vni)
{
	for (size_t i = 0; i < want->n_vnets; i++) {
		if (want->vnets[i].vni == vni)
			return &want->vnets[i];
	}
	return NULL;
}

/* Owned links the definition no longer wants. */
static int plan_removals(const struct reconcile *r, const struct node_state *want,
			 const struct observed *have, struct plan *p)
{
	for (size_t i = 0; i < have->links.n; i++) {
		const struct link_obs *l = &have->links.links[i];
		const struct desired_vnet *v;
		struct stage_note note;
		struct op *op;

		if (!link_is_owned(l, want->owner) || !strcmp(l->name, FABRIC_IFNAME) ||
		    desired_find_vnet(want, l->name))
			continue;
		v = !strcmp(l->kind, "vxlan") ? vnet_by_vni(want, l->vni) : NULL;
		if (v && switch_wants_device(r, v, l, have))
			continue;
		/*
		 * A device a vnet has left goes once the other has taken over
		 * (PHASE_RETIRE); EVPN: FRR 8.4's zebra crashes with two devices of
		 * one VNI, so there it goes before the new one is made.
		 */
		op = plan_add(p, KIND_LINK, OP_LINK_DELETE,
			      v && !v->evpn ? PHASE_RETIRE : PHASE_DELETE, VERB_DELETE, l->name);
		if (!op)
			return -ENOMEM;
		op_delete_names(op, l->kind, l->name);
		if (v && v->evpn)
			op_detail(op, "vnet %s moved to %s transport (evpn: before the new device)",
				  v->name, transport_name(v->transport));
		else if (v)
			op_detail(op, "vnet %s moved to %s transport%s", v->name,
				  transport_name(v->transport),
				  link_stage_note(l, r->owner, LINK_RETIRE_NOTE, &note)
				      ? ", grace period over"
				      : "");
		else
			op_detail(op, "not in the definition");
		op->ifindex = l->ifindex;
	}
	return 0;
}

/* A vnet's bridge (its kind, or a takeover of an existing one) and its VXLAN devices. */
static int plan_vnet(const struct kind_input *node, const struct desired_vnet *v, struct plan *p)
{
	const struct observed *have = node->have;
	const struct link_obs *br = v->existing_bridge
					? link_find(&have->links, v->name)
					: owned_link(have, v->name, node->want->owner);
	struct kind_input in = *node;
	int ret;

	if (v->existing_bridge) {
		/* never created, changed or deleted here: wait until its manager makes it */
		if (!br || strcmp(br->kind, "bridge"))
			return 0;
		if ((ret = takeover_plan(v, have, p)) < 0)
			return ret;
	} else {
		in.vnet = v;
		in.link = br;
		ret = bridge_kind.plan(&in, p);
		if (ret < 0)
			return ret;
		/* a bridge that is replaced counts as new for its port */
		if (br && strcmp(br->kind, "bridge"))
			br = NULL;
	}
	/* the vxlan and fdb kinds, through the switch's roles */
	return switch_plan_vnet(node->r, v, br, have, p);
}

/* Conflicts first: the fabric kind adds its own, and nothing is planned after one. */
static int step_fabric(const struct kind_input *in, struct plan *p)
{
	size_t errors = in->diag->n;
	int ret;

	check_conflicts(in->want, in->have, in->diag);
	ret = fabric_kind.plan(in, p);
	return ret < 0 ? ret : in->diag->n > errors ? -EEXIST : 0;
}

static int step_guard(const struct kind_input *in, struct plan *p)
{
	return guard_kind.plan(in, p);
}

/* vnets first: within a phase, remotes are added to a new device before a retiring one loses them
 */
static int step_vnets(const struct kind_input *in, struct plan *p)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < in->want->n_vnets; i++)
		ret = plan_vnet(in, &in->want->vnets[i], p);
	return ret;
}

static int step_removals(const struct kind_input *in, struct plan *p)
{
	return plan_removals(in->r, in->want, in->have, p);
}

static int step_frr(const struct kind_input *in, struct plan *p)
{
	int ret = frr_kind.plan(in, p);

	if (!ret)
		frr_warn_plan(in->r->frr_pathspace, p, in->diag);
	return ret;
}

/* The kinds in plan order: within a phase, ops run in the order they were planned. */
static int (*const plan_steps[])(const struct kind_input *, struct plan *) = {
    step_fabric,   /* fabric_kind (and ifaddr_kind), after the name conflicts */
    step_guard,	   /* guard_kind */
    step_vnets,	   /* bridge_kind, then vxlan_kind and fdb_kind through engine/switch.c */
    step_removals, /* the link kind's deletes of owned links nobody wants */
    step_frr,	   /* frr_kind */
};

int plan_build(struct reconcile *r, const struct node_state *want, const struct observed *have,
	       struct plan *p, struct diag *diag)
{
	struct kind_input in = {.r = r, .want = want, .have = have, .diag = diag};
	size_t errors = diag->n;
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(plan_steps) / sizeof(plan_steps[0]); i++)
		ret = plan_steps[i](&in, p);
	return ret ? ret : diag->n > errors ? -EEXIST : 0;
}

int plan_build_down(struct reconcile *r, const struct observed *have, struct plan *p)
{
	p->down = true;
	if (firewall_plan_down(have->firewall, p) < 0 || frr_plan_down(have->frr.block, p) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < have->links.n; i++) {
		const struct link_obs *l = &have->links.links[i];
		bool fabric = !strcmp(l->name, FABRIC_IFNAME);
		struct op *op;

		if (!link_is_owned(l, r->owner))
			continue;
		if (fabric) {
			op = plan_add(p, KIND_FABRIC, OP_WG_DESTROY, PHASE_WG_DESTROY, VERB_DELETE,
				      l->name);
			if (op)
				op->u.backend = r->backend;
		} else {
			op = plan_add(p, KIND_LINK, OP_LINK_DELETE, PHASE_DELETE, VERB_DELETE,
				      l->name);
			if (op)
				op_delete_names(op, l->kind, l->name);
		}
		if (!op)
			return -ENOMEM;
		op->ifindex = l->ifindex;
	}
	return 0;
}
