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
#include "kinds/fabric.h"
#include "kinds/frr.h"
#include "base/log.h"
#include "engine/guard_io.h"
#include "netlink/ifindex.h"
#include "engine/reconcile.h"
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
		const char *names[2] = {v->name, v->vxlan};

		for (size_t k = 0; k < 2; k++) {
			const struct link_obs *l = link_find(&have->links, names[k]);

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

			if (strcmp(l->kind, "vxlan") || link_is_owned(l, want->owner) ||
			    l->vni != v->vni || l->port != v->port || !strcmp(l->name, v->vxlan) ||
			    takeover_applies(v, l, have))
				continue;
			snprintf(path, sizeof(path), "vxlan %s", v->vxlan);
			diag_add(diag, path,
				 "VNI %u on UDP port %u is already used by %s, which fabricd does "
				 "not own; delete that device",
				 v->vni, v->port, l->name);
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

/*
 * The retire stage of a VXLAN device that a vnet has left (a transport
 * switch), as ordinary plan ops:
 *
 * The old device stays in the bridge until its retire deadline, recorded in
 * its alias with the grace period it was set with (kinds/link.h). In the
 * first half of the grace period it still carries the unicast its learned
 * bridge entries point at, which keeps traffic flowing to peers that have not
 * switched yet. From half way, when every node has switched (if they noticed
 * the change within grace/2 of each other), its bridge port turns
 * receive-only: learning and flooding off and its learned entries flushed.
 * The bridge then sends everything through the new device, the peers learn
 * the new path from that traffic, and what they still send the old way is
 * received. When the old device is deleted nothing uses it any more, so the
 * switch loses nothing.
 *
 * Measured without the receive-only stage: one ping in two lost (100/s both
 * ways) when the first node deletes its old device, because the peers still
 * send to it along entries they learned from it.
 *
 * So the grace period must cover the spread between the nodes noticing the
 * change twice over, plus two seconds because deadlines are whole seconds:
 * the default 30 s allows for nodes that switch up to 14 s apart.
 *
 * Steps not yet due go to plan.later with their due time: `plan` lists them,
 * the daemon wakes for them, and any pass after that time (a one-shot apply
 * as well as the daemon's) plans and performs them.
 */

/* l's deadline in CLOCK_BOOTTIME seconds and the grace it was set with; 0 without a note. */
static long long retire_due(const struct reconcile *r, const struct link_obs *l,
			    unsigned int *grace)
{
	struct retire_note n;
	long long due;

	*grace = r->grace;
	if (!link_retire_note(l, r->owner, &n))
		return 0;
	if (n.grace)
		*grace = n.grace;
	if (n.at)
		return n.at;
	/* a note from before at= was recorded: its wall-clock deadline, as of now */
	due = n.after - r->now + r->boot_now;
	return due > 0 ? due : 1;
}

static struct op *retire_op(struct plan *p, long long due, long long now, enum op_type type,
			    enum op_verb verb, const struct link_obs *l)
{
	struct op *op = due > now
			    ? plan_add_later(p, due, due - now, type, verb, "vxlan %s", l->name)
			    : plan_add(p, type, PHASE_RETIRE, verb, "vxlan %s", l->name);

	if (op) {
		op->ifindex = l->ifindex;
		snprintf(op->ifname, sizeof(op->ifname), "%s", l->name);
	}
	return op;
}

/* The receive-only step (from half the grace period) and the deletion at the deadline. */
static int plan_retire_steps(struct reconcile *r, const struct desired_vnet *v,
			     const struct link_obs *l, long long due, unsigned int grace,
			     struct plan *p)
{
	long long quiet_at = due - grace / 2;
	struct op *op;

	if (!strcmp(l->slave_kind, "bridge") && !l->receive_only && r->boot_now < due) {
		op = retire_op(p, quiet_at, r->boot_now, OP_LINK_CHANGE, VERB_CHANGE, l);
		if (!op)
			return -ENOMEM;
		op->change.mask = LINK_SET_RECEIVE_ONLY;
		op->change.receive_only = true;
		op_detail(op,
			  "receive-only until it is removed in %lld s (bridge traffic moves to the "
			  "new transport)",
			  due - (quiet_at > r->boot_now ? quiet_at : r->boot_now));
	}
	op = retire_op(p, due, r->boot_now, OP_LINK_DELETE, VERB_DELETE, l);
	if (!op)
		return -ENOMEM;
	op_detail(op, "vnet %s moved to %s transport, grace period over", v->name,
		  transport_name(v->transport));
	return 0;
}

/*
 * A VXLAN device whose vnet moved to the other transport: its remotes move to
 * the new device at once (so nothing is sent twice), then the retire stage.
 */
static int plan_retire(struct reconcile *r, const struct desired_vnet *v, const struct link_obs *l,
		       const struct observed *have, struct plan *p)
{
	unsigned int grace;
	long long due = retire_due(r, l, &grace);
	struct op *op;
	int ret;

	ret = fdb_plan_moves_out(&have->fdb, l, p);
	if (ret < 0)
		return ret;
	if (due)
		return plan_retire_steps(r, v, l, due, grace, p);
	if (!r->grace) {
		op = retire_op(p, 0, 0, OP_LINK_DELETE, VERB_DELETE, l);
		if (!op)
			return -ENOMEM;
		op_detail(op, "vnet %s moved to %s transport", v->name,
			  transport_name(v->transport));
		return 0;
	}
	op = retire_op(p, 0, 0, OP_LINK_CHANGE, VERB_CHANGE, l);
	if (!op)
		return -ENOMEM;
	op->change.mask = LINK_SET_ALIAS;
	snprintf(op->change.alias, sizeof(op->change.alias),
		 "%s " LINK_RETIRE_NOTE "%lld grace=%u at=%lld", r->owner, r->now + r->grace,
		 r->grace, r->boot_now + r->grace);
	op_detail(op, "vnet %s moved to %s transport: keeps receiving for %u s", v->name,
		  transport_name(v->transport), r->grace);
	return plan_retire_steps(r, v, l, r->boot_now + r->grace, r->grace, p);
}

void reconcile_mark_transitions(const struct reconcile *r, struct node_state *want,
				const struct observed *have)
{
	for (size_t i = 0; i < want->n_vnets; i++) {
		struct desired_vnet *v = &want->vnets[i];
		char plain[FABRICD_IFNAME_MAX + 1];
		const struct link_obs *l;
		unsigned int grace;
		long long due;

		v->plain_retiring = false;
		if (v->transport != TRANSPORT_SECURE || v->evpn)
			continue; /* an EVPN vnet's old device goes at once (plan_removals) */
		desired_vxlan_name(plain, v->vni, TRANSPORT_PLAIN);
		l = link_find(&have->links, plain);
		if (!l || !link_is_owned(l, r->owner) || strcmp(l->kind, "vxlan") ||
		    l->vni != v->vni)
			continue;
		/* the same rule as plan_retire: kept unless its grace period is over */
		due = retire_due(r, l, &grace);
		v->plain_retiring = r->grace && (!due || r->boot_now < due);
	}
}

/* Owned links the definition no longer wants. */
static int plan_removals(struct reconcile *r, const struct node_state *want,
			 const struct observed *have, struct plan *p)
{
	for (size_t i = 0; i < have->links.n; i++) {
		const struct link_obs *l = &have->links.links[i];
		const struct desired_vnet *v;
		struct op *op;
		int ret;

		if (!link_is_owned(l, want->owner) || !strcmp(l->name, FABRIC_IFNAME) ||
		    desired_find_vnet(want, l->name))
			continue;
		v = !strcmp(l->kind, "vxlan") ? vnet_by_vni(want, l->vni) : NULL;
		if (v && !strcmp(v->vxlan, l->name))
			continue;
		/* EVPN: FRR 8.4's zebra crashes with two devices of one VNI: break before make */
		if (v && !v->evpn) {
			ret = plan_retire(r, v, l, have, p);
			if (ret < 0)
				return ret;
			continue;
		}
		op = plan_add(p, OP_LINK_DELETE, PHASE_DELETE, VERB_DELETE, "%s %s",
			      l->kind[0] ? l->kind : "link", l->name);
		if (!op)
			return -ENOMEM;
		if (v)
			op_detail(op, "vnet %s moved to %s transport (evpn: before the new device)",
				  v->name, transport_name(v->transport));
		else
			op_detail(op, "not in the definition");
		op->ifindex = l->ifindex;
		snprintf(op->ifname, sizeof(op->ifname), "%s", l->name);
	}
	return 0;
}

static int plan_vnet(const struct node_state *want, const struct desired_vnet *v,
		     const struct observed *have, struct plan *p)
{
	const struct link_obs *br = v->existing_bridge ? link_find(&have->links, v->name)
						       : owned_link(have, v->name, want->owner);
	const struct link_obs *vx = owned_link(have, v->vxlan, want->owner);
	bool recreated;
	int ret;

	if (v->existing_bridge) {
		/* never created, changed or deleted here: wait until its manager makes it */
		if (!br || strcmp(br->kind, "bridge"))
			return 0;
		if ((ret = takeover_plan(v, have, p)) < 0)
			return ret;
	} else {
		ret = bridge_plan(v, br, p);
		if (ret < 0)
			return ret;
		/* a bridge that is replaced counts as new for its port */
		if (br && strcmp(br->kind, "bridge"))
			br = NULL;
	}
	ret = vxlan_plan(v, vx, br, want->owner, p, &recreated);
	if (ret < 0)
		return ret;
	if (vx && !recreated && vx->receive_only && !strcmp(vx->slave_kind, "bridge")) {
		/* switched back before its deadline: the port is ours to open again */
		struct op *op =
		    plan_add(p, OP_LINK_CHANGE, PHASE_RETIRE, VERB_CHANGE, "vxlan %s", vx->name);

		if (!op)
			return -ENOMEM;
		op->ifindex = vx->ifindex;
		snprintf(op->ifname, sizeof(op->ifname), "%s", vx->name);
		op->change.mask = LINK_SET_RECEIVE_ONLY;
		op_detail(op, "learning and flooding on again (back in use)");
	}
	return fdb_plan(v, vx, recreated, &have->fdb, p);
}

int plan_build(struct reconcile *r, const struct node_state *want, const struct observed *have,
	       struct plan *p, struct diag *diag)
{
	size_t errors = diag->n;
	int ret;

	check_conflicts(want, have, diag);
	ret = fabric_plan(r, want, have, p, diag);
	if (ret < 0 || diag->n > errors)
		return ret < 0 ? ret : -EEXIST;
	ret = firewall_plan(want, have->firewall, p);
	if (ret < 0)
		return ret;
	/* vnets first: within a phase, remotes are added to a new device before a retiring one
	 * loses them */
	for (size_t i = 0; !ret && i < want->n_vnets; i++)
		ret = plan_vnet(want, &want->vnets[i], have, p);
	if (!ret)
		ret = plan_removals(r, want, have, p);
	if (!ret)
		ret = frr_plan(want, have->frr.conf, have->frr.block, p, diag);
	if (!ret)
		frr_warn_plan(r->frr_pathspace, p, diag);
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
		if (fabric)
			op = plan_add(p, OP_WG_DESTROY, PHASE_WG_DESTROY, VERB_DELETE, "fabric %s",
				      l->name);
		else
			op = plan_add(p, OP_LINK_DELETE, PHASE_DELETE, VERB_DELETE, "%s %s",
				      l->kind[0] ? l->kind : "link", l->name);
		if (!op)
			return -ENOMEM;
		op->ifindex = l->ifindex;
		op->backend = r->backend;
		snprintf(op->ifname, sizeof(op->ifname), "%s", l->name);
	}
	return 0;
}
