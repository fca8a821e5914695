// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/reconcile.c - observe, diff, plan and apply one node's share. */
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kinds/bridge.h"
#include "kinds/carry.h"
#include "kinds/kind.h"
#include "kinds/fabric.h"
#include "kinds/fdb.h"
#include "kinds/frr.h"
#include "base/log.h"
#include "engine/conflicts.h"
#include "engine/converged.h"
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
	free(r->held);
	r->held = NULL;
	r->n_held = 0;
	free(r->holdable);
	r->holdable = NULL;
}

static const struct link_obs *owned_link(const struct observed *have, const char *name,
					 const char *owner)
{
	const struct link_obs *l = link_find(&have->links, name);

	return l && link_is_owned(l, owner) ? l : NULL;
}

/* The wanted vnets by bridge name and by VNI, for the removals' lookups of every owned link. */
struct vnet_index {
	const struct desired_vnet **by_name, **by_vni;
	size_t n;
};

static int by_name_cmp(const void *a, const void *b)
{
	const struct desired_vnet *x = *(const struct desired_vnet *const *)a;
	const struct desired_vnet *y = *(const struct desired_vnet *const *)b;
	int c = strcmp(x->name, y->name);

	/* ties in the definition's order: the first is the one a scan finds */
	return c ? c : x < y ? -1 : x > y;
}

static int by_vni_cmp(const void *a, const void *b)
{
	const struct desired_vnet *x = *(const struct desired_vnet *const *)a;
	const struct desired_vnet *y = *(const struct desired_vnet *const *)b;

	if (x->vni != y->vni)
		return x->vni < y->vni ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void vnet_index_free(struct vnet_index *ix)
{
	free(ix->by_name);
	free(ix->by_vni);
	memset(ix, 0, sizeof(*ix));
}

static int vnet_index_make(const struct node_state *want, struct vnet_index *ix)
{
	memset(ix, 0, sizeof(*ix));
	if (!want->n_vnets)
		return 0;
	ix->by_name = malloc(want->n_vnets * sizeof(*ix->by_name));
	ix->by_vni = malloc(want->n_vnets * sizeof(*ix->by_vni));
	if (!ix->by_name || !ix->by_vni) {
		vnet_index_free(ix);
		return -ENOMEM;
	}
	for (size_t i = 0; i < want->n_vnets; i++)
		ix->by_name[i] = ix->by_vni[i] = &want->vnets[i];
	ix->n = want->n_vnets;
	qsort(ix->by_name, ix->n, sizeof(*ix->by_name), by_name_cmp);
	qsort(ix->by_vni, ix->n, sizeof(*ix->by_vni), by_vni_cmp);
	return 0;
}

/* The first vnet (in the definition's order) whose bridge is named name, or NULL. */
static const struct desired_vnet *vnet_by_name(const struct vnet_index *ix, const char *name)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ix->by_name[mid]->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && !strcmp(ix->by_name[lo]->name, name) ? ix->by_name[lo] : NULL;
}

/* The first vnet (in the definition's order) of VNI vni, or NULL. */
static const struct desired_vnet *vnet_by_vni(const struct vnet_index *ix, uint32_t vni)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->by_vni[mid]->vni < vni)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && ix->by_vni[lo]->vni == vni ? ix->by_vni[lo] : NULL;
}

/* Whether the plan removes l already (a device made again under its name). */
static bool plan_deletes(const struct plan *p, const struct link_obs *l)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->ops[i].type == OP_LINK_DELETE && p->ops[i].ifindex == l->ifindex)
			return true;
	return false;
}

/*
 * vx<N> or vs<N> carrying another VNI than N (made or changed by hand): vnet
 * N's own plan deletes it to make it again, so it is not deleted twice.
 */
static bool deleted_by_its_vnet(const struct vnet_index *ix, const struct link_obs *l,
				const struct plan *p)
{
	char *end;
	unsigned long vni;

	if (strncmp(l->name, "vx", 2) && strncmp(l->name, "vs", 2))
		return false;
	vni = strtoul(l->name + 2, &end, 10);
	if (*end || end == l->name + 2 || vni > UINT32_MAX || !vnet_by_vni(ix, (uint32_t)vni))
		return false;
	return plan_deletes(p, l); /* rare: only such a link comes here */
}

/* Whether the plan gives a link its name back (bridge_plan): it stays. */
static bool renamed_back(const struct plan *p, const struct link_obs *l)
{
	for (size_t i = 0; i < p->n; i++) /* rare: only an unwanted owned bridge comes here */
		if (p->ops[i].type == OP_LINK_CHANGE && p->ops[i].ifindex == l->ifindex &&
		    (p->ops[i].u.link.mask & LINK_SET_NAME))
			return true;
	return false;
}

/*
 * A bridge that goes with guest ports on it (a vnet removed or renamed, or
 * down): its guests are left on no bridge, which the kernel does without a
 * word, and a bridge made again later is made empty. Says so: as a planning
 * warning (diag), or at once (NULL).
 */
static void warn_guest_ports(const struct link_table *links, const struct link_obs *bridge,
			     const char *owner, const char *why, struct diag *diag)
{
	char names[160] = "";
	size_t n = 0, len = 0;

	for (size_t i = 0; i < links->n; i++) {
		const struct link_obs *port = &links->links[i];

		if (port->master != bridge->ifindex || link_is_owned(port, owner))
			continue;
		if (n++ < 4 && len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						len ? ", " : "", port->name);
	}
	if (!n)
		return;
	if (diag)
		diag_warn(diag, bridge->name,
			  "goes (%s) with %zu port%s of guests or others on it (%s%s): they are "
			  "left on no bridge, without network; move them to another vnet's bridge "
			  "first if they need one",
			  why, n, n == 1 ? "" : "s", names, n > 4 ? ", ..." : "");
	else
		log_warn("%s: goes (%s) with %zu port%s of guests or others on it (%s%s): they "
			 "are left on no bridge, without network, also once an apply makes the "
			 "bridge again (it makes it empty): put them back then",
			 bridge->name, why, n, n == 1 ? "" : "s", names, n > 4 ? ", ..." : "");
}

/*
 * Why an owned bridge the definition does not name goes: its vnet left, or
 * (a wanted vnet's VXLAN device is its port) it was renamed by hand where
 * no daemon saw it.
 */
static const char *removal_reason(const struct vnet_index *ix, const struct observed *have,
				  const struct link_obs *bridge)
{
	for (size_t i = 0; i < have->links.n; i++) {
		const struct link_obs *port = &have->links.links[i];

		if (port->master == bridge->ifindex && !strcmp(port->kind, "vxlan") &&
		    vnet_by_vni(ix, port->vni))
			return "no vnet of the definition has its name: its vnet was removed or "
			       "renamed; a bridge renamed by hand is named back only by a daemon "
			       "that saw the rename";
	}
	return "its vnet is no longer on this node";
}

/*
 * How vnet v's retiring device l's grace period ends: over, or cut short by
 * --grace 0 or --end-grace with the seconds its note had left (plan and
 * status show them).
 */
static const char *retire_words(const struct reconcile *r, const struct desired_vnet *v,
				const struct link_obs *l, struct stage_note *note, char *buf,
				size_t len)
{
	long long left;

	if (!link_stage_note(l, r->owner, LINK_RETIRE_NOTE, note))
		return "";
	left = note->at ? note->at - r->boot_now : note->after - r->now;
	if (switch_grace(r, v) || left <= 0)
		return ", grace period over";
	snprintf(buf, len, ", grace period ended early by %s (%lld s were left)",
		 r->grace ? "--end-grace" : "--grace 0", left);
	return buf;
}

/* Whether v (one of want's vnets) is left as it is this pass (check_conflicts). */
static bool vnet_held(const struct reconcile *r, const struct node_state *want,
		      const struct desired_vnet *v)
{
	return r->held && v && v >= want->vnets && v < want->vnets + want->n_vnets &&
	       r->held[v - want->vnets];
}

/*
 * An owned bridge no vnet names that is a held vnet's (renamed by hand from
 * its name, or with its VXLAN device as a port): it is left as it is with
 * that vnet, not deleted with its guests on it.
 */
static bool held_vnets_bridge(const struct reconcile *r, const struct node_state *want,
			      const struct observed *have, const struct vnet_index *ix,
			      const struct link_obs *br)
{
	if (!r->held || strcmp(br->kind, "bridge"))
		return false;
	for (size_t i = 0; i < have->n_renamed; i++)
		if (have->renamed[i].ifindex == br->ifindex &&
		    vnet_held(r, want, vnet_by_name(ix, have->renamed[i].from)))
			return true;
	for (size_t i = 0; i < have->links.n; i++) {
		const struct link_obs *port = &have->links.links[i];

		if (port->master == br->ifindex && !strcmp(port->kind, "vxlan") &&
		    link_is_owned(port, want->owner) &&
		    vnet_held(r, want, vnet_by_vni(ix, port->vni)))
			return true;
	}
	return false;
}

/* Owned links the definition no longer wants. */
static int plan_removals(const struct reconcile *r, const struct node_state *want,
			 const struct observed *have, const struct vnet_index *ix, struct plan *p,
			 struct diag *diag)
{
	for (size_t i = 0; i < have->links.n; i++) {
		const struct link_obs *l = &have->links.links[i];
		const struct desired_vnet *v;
		struct stage_note note;
		char words[96];
		bool renamed, moved;
		struct op *op;

		if (!link_is_owned(l, want->owner) || !strcmp(l->name, FABRIC_IFNAME) ||
		    vnet_by_name(ix, l->name))
			continue;
		v = !strcmp(l->kind, "vxlan") ? vnet_by_vni(ix, l->vni) : NULL;
		if (v && (vnet_held(r, want, v) || switch_wants_device(r, v, l, have)))
			continue;
		if (!v && deleted_by_its_vnet(ix, l, p))
			continue;
		if (!v && !strcmp(l->kind, "bridge") && renamed_back(p, l))
			continue;
		if (!v && held_vnets_bridge(r, want, have, ix, l))
			continue; /* a held vnet's, renamed by hand */
		if (l == fabric_renamed(have, want->owner))
			continue; /* its name back (kinds/fabric.c) */
		/* renamed by hand: it holds its VNI and port, so it goes before one is made */
		renamed = v && strcmp(l->name, v->vxlan) && strcmp(l->name, v->other_vxlan);
		/* two swapped by hand: one is made again under its name, its removal planned */
		if (renamed && plan_deletes(p, l))
			continue;
		moved = v && switch_port_of_vnet(v, l, have);
		/*
		 * A device a vnet has left goes once the other has taken over
		 * (PHASE_RETIRE); on a node that runs EVPN, FRR 8.4's zebra crashes
		 * with two devices of one VNI, so there it goes before the new one
		 * is made.
		 */
		op = plan_add(p, KIND_LINK, OP_LINK_DELETE,
			      v && !v->one_device && !renamed ? PHASE_RETIRE : PHASE_DELETE,
			      VERB_DELETE, l->name);
		if (!op)
			return -ENOMEM;
		op_delete_names(op, l->kind, l->name);
		if (renamed)
			op_detail(op, "renamed from vnet %s's VXLAN device, which is made again",
				  v->name);
		else if (v && v->evpn)
			op_detail(op, "vnet %s: evpn has one device per VNI in both transports",
				  v->name);
		else if (v && moved && v->transport == TRANSPORT_SECURE &&
			 ip_addr_equal(&l->local, &v->local))
			op_detail(op,
				  "vnet %s left evpn: its secure device is %s now (no clear text "
				  "to take meanwhile: it went through WireGuard)",
				  v->name, v->vxlan);
		else if (v && v->one_device && moved)
			op_detail(op,
				  "vnet %s is %s: on a node that runs EVPN a VNI has one device "
				  "(FRR 8.4's zebra aborts with two)",
				  v->name, transport_name(v->transport));
		else if (v && !moved)
			op_detail(op, "not in the definition; its VNI %u is vnet %s's now", l->vni,
				  v->name);
		else if (v)
			op_detail(op, "vnet %s moved to %s transport%s", v->name,
				  transport_name(v->transport),
				  retire_words(r, v, l, &note, words, sizeof(words)));
		else
			op_detail(op, "not in the definition");
		if (!strcmp(l->kind, "bridge"))
			warn_guest_ports(&have->links, l, want->owner, removal_reason(ix, have, l),
					 diag);
		op->ifindex = l->ifindex;
	}
	return 0;
}

/* A vnet's bridge (its kind, or a takeover of an existing one) and its VXLAN devices. */
/*
 * Whether bridge br has, as a port, v's plain device sending from the
 * underlay: the old vnet there was plain, and a secure v takes none of its
 * clear text (the guard; test_vni_reuse).
 */
static bool plain_port_in(const struct kind_input *node, const struct desired_vnet *v,
			  const struct link_obs *br)
{
	const struct link_obs *l = owned_link(node->have, v->other_vxlan, node->want->owner);

	return l && l->master == br->ifindex && ip_addr_equal(&l->local, &v->other_local);
}

/*
 * A device of v's VNI in another bridge than v's (fabricd's or, with
 * "bridges": "existing", Proxmox's): the VNI was that vnet's here, and a
 * definition gave it to v in one change. Nodes that have not applied it yet
 * still send the old vnet's frames with this VNI, and they arrive in v's
 * bridge whether the device is taken over or made anew: said, as nothing
 * can tell those frames apart (nor a vnet renamed from one given to another
 * tenant). Not v's own bridge br renamed by hand, which gets its name back,
 * nor a device of another VNI under v's device's name (names swapped by hand:
 * it is made again).
 */
static void warn_vni_handed_over(const struct kind_input *node, const struct desired_vnet *v,
				 const struct link_obs *br)
{
	const char *names[2] = {v->vxlan, v->other_vxlan};

	/* a secure v's plain name: the guard takes no clear text of its VNI (test_vni_reuse) */
	for (size_t k = 0; k < (v->transport == TRANSPORT_SECURE ? 1 : 2); k++) {
		const struct link_obs *l = owned_link(node->have, names[k], node->want->owner);
		const struct link_obs *old =
		    l && l->master ? link_by_index(&node->have->links, l->master) : NULL;

		/*
		 * An operator's bridge is no vnet's (fabricd's own bridges, or with
		 * "bridges": "existing" any); a secure v's device in a plain vnet's
		 * bridge was its mute standby (no remotes) unless that one was
		 * switching: then it carried the old tenant's secure frames.
		 */
		if (!old || old == br || l->vni != v->vni || !strcmp(old->name, v->name) ||
		    strcmp(old->kind, "bridge") ||
		    (!link_is_owned(old, node->want->owner) && !v->existing_bridge) ||
		    (v->transport == TRANSPORT_SECURE && plain_port_in(node, v, old) &&
		     !fdb_has_device(&node->have->fdb, l->ifindex)))
			continue;
		diag_warn(
		    node->diag, v->name,
		    "its VNI %u was vnet %s's on this node (%s is in bridge %s): if that is "
		    "another tenant, until every node has applied this change its guests' "
		    "frames from nodes that have not arrive here; give a VNI to another vnet "
		    "only once its old vnet is gone from every node (a vnet renamed stays its "
		    "tenant's)",
		    v->vni, old->name, l->name, old->name);
		return;
	}
}

static int plan_vnet(const struct kind_input *node, const struct desired_vnet *v, struct plan *p)
{
	const struct observed *have = node->have;
	const struct link_obs *br = v->existing_bridge
					? link_find(&have->links, v->name)
					: owned_link(have, v->name, node->want->owner);
	const struct link_obs *port;
	struct kind_input in = *node;
	size_t first;
	int ret;

	if (v->existing_bridge) {
		/* never created, changed or deleted here: wait until its manager makes it */
		if (!br || strcmp(br->kind, "bridge"))
			return 0;
		/*
		 * A bridge MTU its manager set stays: fabricd's smaller port does not
		 * lower it (a bridge over the port it already has was set so).
		 */
		port = owned_link(have, v->vxlan, node->want->owner);
		if (br->mtu > v->mtu && port && port->master == br->ifindex && port->mtu <= v->mtu)
			diag_warn(node->diag, v->name,
				  "this existing bridge has MTU %u, over the %u its zone carries: "
				  "its guests' frames over %u are lost between nodes; give the "
				  "bridge (in Proxmox, its zone) MTU %u",
				  br->mtu, v->mtu, v->mtu, v->mtu);
		if ((ret = takeover_plan(v, have, p, node->diag)) < 0)
			return ret;
	} else {
		if (!br)
			br = renamed_bridge(node->want, v, have);
		in.vnet = v;
		in.link = br;
		ret = bridge_kind.plan(&in, p);
		if (ret < 0)
			return ret;
		/* a bridge that is replaced counts as new for its port */
		if (br && strcmp(br->kind, "bridge"))
			br = NULL;
	}
	warn_vni_handed_over(node, v, br);
	/* the vxlan and fdb kinds, through the switch's roles (a stage's end is theirs) */
	first = p->n;
	ret = switch_plan_vnet(node->r, v, br, have, p);
	if (ret == 0 && switch_stage_ends(node->r, v, have))
		for (size_t i = first; i < p->n; i++)
			p->ops[i].stage_end = true;
	return ret;
}

/* Conflicts first: the fabric kind adds its own, and nothing is planned after one. */
static int step_fabric(const struct kind_input *in, struct plan *p)
{
	size_t errors = in->diag->n;
	int ret;

	ret = check_conflicts(in->want, in->have, in->diag, in->r->held, in->r->holdable);
	if (ret < 0)
		return ret;
	ret = fabric_kind.plan(in, p);
	return ret < 0 ? ret : in->diag->n > errors ? -EEXIST : 0;
}

static int step_guard(const struct kind_input *in, struct plan *p)
{
	return guard_kind.plan(in, p);
}

/* After the fabric's: it reads whether the fabric device is made in this pass. */
static int step_carry(const struct kind_input *in, struct plan *p)
{
	return carry_kind.plan(in, p);
}

/* vnets first: within a phase, remotes are added to a new device before a retiring one loses them
 */
static int step_vnets(const struct kind_input *in, struct plan *p)
{
	size_t left_out = 0;
	int ret = 0;

	for (size_t i = 0; !ret && i < in->want->n_vnets; i++) {
		const struct desired_vnet *v = &in->want->vnets[i];

		if (in->r->held && in->r->held[i])
			continue; /* another owner's names: left as it is (check_conflicts) */
		if (converged_skips(in->r->converged, in->r, v, in->have))
			left_out++;
		else
			ret = plan_vnet(in, v, p);
	}
	if (left_out)
		log_debug("planned %zu of %zu vnets (the others converged, unchanged since)",
			  in->want->n_vnets - left_out, in->want->n_vnets);
	return ret;
}

static int step_removals(const struct kind_input *in, struct plan *p)
{
	struct vnet_index ix;
	int ret = vnet_index_make(in->want, &ix);

	if (ret < 0)
		return ret;
	ret = plan_removals(in->r, in->want, in->have, &ix, p, in->diag);
	vnet_index_free(&ix);
	return ret;
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
    step_carry,	   /* carry_kind */
    step_vnets,	   /* bridge_kind, then vxlan_kind and fdb_kind through engine/switch.c */
    step_removals, /* the link kind's deletes of owned links nobody wants */
    step_frr,	   /* frr_kind */
};

int plan_build(struct reconcile *r, const struct node_state *want, const struct observed *have,
	       struct plan *p, struct diag *diag)
{
	struct kind_input in = {.r = r, .want = want, .have = have, .diag = diag};
	size_t errors = diag->n;
	bool guard = false;
	int ret = 0;

	free(r->held); /* check_conflicts sets a held vnet's flag (step_fabric) */
	r->held = NULL;
	r->n_held = 0;
	if (r->hold_conflicting_vnets && want->n_vnets &&
	    !(r->held = calloc(want->n_vnets, sizeof(*r->held))))
		return -ENOMEM;
	for (size_t i = 0; !ret && i < sizeof(plan_steps) / sizeof(plan_steps[0]); i++) {
		ret = plan_steps[i](&in, p);
		guard |= plan_steps[i] == step_guard;
	}
	for (size_t i = 0; r->held && i < want->n_vnets; i++)
		r->n_held += r->held[i];
	/*
	 * A conflict stops planning, but not the guard's: it comes from the
	 * definition alone, and the daemon repairs it while the conflict lasts
	 * (session_repair_guard).
	 */
	if (ret == -EEXIST && !guard) {
		int g = step_guard(&in, p);

		if (g < 0 && g != -EEXIST)
			return g;
	}
	return ret ? ret : diag->n > errors ? -EEXIST : 0;
}

int plan_build_down(struct reconcile *r, const struct observed *have, struct plan *p)
{
	p->down = true;
	if (firewall_plan_down(have->firewall, p) < 0 || frr_plan_down(&have->frr, p) < 0 ||
	    carry_plan_down(&have->carry, p) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < have->links.n; i++) {
		const struct link_obs *l = &have->links.links[i];
		bool fabric = !strcmp(l->name, FABRIC_IFNAME);
		struct op *op;

		/* an apply killed between starting wireguard-go and marking the device */
		if (!link_is_owned(l, r->owner) && !(fabric && have->wg_adopt))
			continue;
		if (fabric) {
			op = plan_add(p, KIND_FABRIC, OP_WG_DESTROY, PHASE_WG_DESTROY, VERB_DELETE,
				      l->name);
			if (op)
				op->u.backend = r->backend;
			if (op && have->wg_adopt)
				op_detail(op, "started by fabricd, not yet marked");
		} else {
			op = plan_add(p, KIND_LINK, OP_LINK_DELETE, PHASE_DELETE, VERB_DELETE,
				      l->name);
			if (op)
				op_delete_names(op, l->kind, l->name);
			if (!strcmp(l->kind, "bridge"))
				warn_guest_ports(&have->links, l, r->owner, "down", NULL);
		}
		if (!op)
			return -ENOMEM;
		op->ifindex = l->ifindex;
	}
	return 0;
}
