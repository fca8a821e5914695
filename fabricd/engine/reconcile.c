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
#include "engine/reconcile.h"
#include "kinds/vxlan.h"

int reconcile_open(struct reconcile *r, const char *owner, enum wg_backend backend)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->owner, sizeof(r->owner), "%s", owner);
	r->backend = backend;
	return nl_open(&r->rtnl, NETLINK_ROUTE);
}

void reconcile_close(struct reconcile *r)
{
	nl_close(&r->rtnl);
	explicit_bzero(r->private_key, sizeof(r->private_key));
	if (r->psk) {
		explicit_bzero(r->psk, r->n_psk * sizeof(*r->psk));
		free(r->psk);
	}
	r->psk = NULL;
	r->n_psk = 0;
}

void observed_free(struct observed *o)
{
	link_table_free(&o->links);
	fdb_table_free(&o->fdb);
	ifaddr_table_free(&o->fabric_addrs);
	wg_device_free(o->wg);
	firewall_obs_free(o->firewall);
	frr_obs_free(&o->frr);
	memset(o, 0, sizeof(*o));
}

/* How long observe() waits for a wireguard-go that is still starting. */
#define WG_START_WAIT_STEPS 50
#define WG_START_WAIT_US    20000

int observe(struct reconcile *r, struct observed *o)
{
	const struct link_obs *wg;
	int ret;

	memset(o, 0, sizeof(*o));
	ret = link_dump(&r->rtnl, &o->links);
	if (ret < 0)
		goto fail;
	ret = fdb_dump(&r->rtnl, &o->fdb);
	if (ret < 0)
		goto fail;
	ret = firewall_observe(&o->firewall);
	if (ret < 0)
		goto fail;
	ret = frr_observe(r->frr_pathspace, r->owner, &o->frr);
	if (ret < 0)
		goto fail;
	wg = link_find(&o->links, FABRIC_IFNAME);
	if (!wg && r->backend == WG_BACKEND_USERSPACE &&
	    wg_started_by_fabricd(r->backend, FABRIC_IFNAME)) {
		/* a fabricd killed while starting it: let it finish, then adopt it */
		for (int i = 0; i < WG_START_WAIT_STEPS && !if_nametoindex(FABRIC_IFNAME); i++)
			usleep(WG_START_WAIT_US);
		ret = link_dump(&r->rtnl, &o->links);
		if (ret < 0)
			goto fail;
		wg = link_find(&o->links, FABRIC_IFNAME);
	}
	if (!wg)
		return 0;
	ret = ifaddr_dump(&r->rtnl, wg->ifindex, &o->fabric_addrs);
	if (ret < 0)
		goto fail;
	/* an existing device decides the backend: a TUN is wireguard-go's */
	if (!strcmp(wg->kind, "wireguard"))
		r->backend = WG_BACKEND_KERNEL;
	else if (!strcmp(wg->kind, "tun"))
		r->backend = WG_BACKEND_USERSPACE;
	o->wg_adopt = !link_is_owned(wg, r->owner) && !wg->alias[0] &&
		      wg_started_by_fabricd(r->backend, FABRIC_IFNAME);
	if ((link_is_owned(wg, r->owner) || o->wg_adopt) &&
	    wg_get(r->backend, FABRIC_IFNAME, &o->wg) < 0) {
		o->wg = NULL;
		o->wg_error = true;
	}
	return 0;
fail:
	observed_free(o);
	return ret;
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

			if (!l || link_is_owned(l, want->owner))
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
			    l->vni != v->vni || l->port != v->port || !strcmp(l->name, v->vxlan))
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

static int plan_fdb_moves_out(const struct observed *have, const struct link_obs *l, struct plan *p)
{
	char a[IP_ADDR_STRLEN];

	for (size_t i = 0; i < have->fdb.n; i++) {
		const struct fdb_entry *e = &have->fdb.entries[i];
		struct op *op;

		if (e->ifindex != l->ifindex)
			continue;
		op = plan_add(p, OP_FDB_DEL, PHASE_NEIGH, VERB_DELETE, "fdb %s remote %s", l->name,
			      ip_addr_str(&e->dst, a, sizeof(a)));
		if (!op)
			return -ENOMEM;
		op->ifindex = l->ifindex;
		op->dst = e->dst;
	}
	return 0;
}

/*
 * A VXLAN device whose vnet moved to the other transport: its remotes move to
 * the new device at once (so nothing is sent twice), but it stays in the
 * bridge, receiving from peers that have not switched yet, until its grace
 * period ends; the owner alias records when.
 */
static int plan_retire(struct reconcile *r, const struct desired_vnet *v, const struct link_obs *l,
		       const struct observed *have, struct plan *p)
{
	long long due = link_retire_after(l, r->owner);
	struct op *op;
	int ret;

	ret = plan_fdb_moves_out(have, l, p);
	if (ret < 0)
		return ret;
	if (due && r->now < due)
		return 0;
	if (!due && r->grace) {
		op = plan_add(p, OP_LINK_CHANGE, PHASE_RETIRE, VERB_CHANGE, "vxlan %s", l->name);
		if (!op)
			return -ENOMEM;
		op->change.mask = LINK_SET_ALIAS;
		snprintf(op->change.alias, sizeof(op->change.alias), "%s " LINK_RETIRE_NOTE "%lld",
			 r->owner, r->now + r->grace);
		op_detail(op, "vnet %s moved to %s transport: keeps receiving for %u s", v->name,
			  transport_name(v->transport), r->grace);
	} else {
		op = plan_add(p, OP_LINK_DELETE, PHASE_RETIRE, VERB_DELETE, "vxlan %s", l->name);
		if (!op)
			return -ENOMEM;
		op_detail(op, "vnet %s moved to %s transport%s", v->name,
			  transport_name(v->transport), due ? ", grace period over" : "");
	}
	op->ifindex = l->ifindex;
	snprintf(op->ifname, sizeof(op->ifname), "%s", l->name);
	return 0;
}

void reconcile_mark_transitions(const struct reconcile *r, struct node_state *want,
				const struct observed *have)
{
	for (size_t i = 0; i < want->n_vnets; i++) {
		struct desired_vnet *v = &want->vnets[i];
		char plain[FABRICD_IFNAME_MAX + 1];
		const struct link_obs *l;
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
		due = link_retire_after(l, r->owner);
		v->plain_retiring = r->grace && (!due || r->now < due);
	}
}

long long reconcile_next_retire(const struct reconcile *r, const struct observed *have)
{
	long long next = 0;

	for (size_t i = 0; i < have->links.n; i++) {
		long long due = link_retire_after(&have->links.links[i], r->owner);

		if (due && (!next || due < next))
			next = due;
	}
	return next;
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

static int plan_fdb(const struct desired_vnet *v, const struct link_obs *vx, bool recreated,
		    const struct observed *have, struct plan *p)
{
	char a[IP_ADDR_STRLEN];
	struct op *op;

	if (v->evpn)
		return 0; /* FRR's zebra owns an EVPN vnet's flood list and MACs: leave them */
	for (size_t r = 0; r < v->n_remotes; r++) {
		if (!recreated && fdb_has(&have->fdb, vx->ifindex, &v->remotes[r]))
			continue;
		op = plan_add(p, OP_FDB_ADD, PHASE_NEIGH, VERB_CREATE, "fdb %s remote %s", v->vxlan,
			      ip_addr_str(&v->remotes[r], a, sizeof(a)));
		if (!op)
			return -ENOMEM;
		snprintf(op->ifname, sizeof(op->ifname), "%s", v->vxlan);
		op->ifindex = recreated ? 0 : vx->ifindex;
		op->dst = v->remotes[r];
	}
	if (recreated)
		return 0;
	for (size_t i = 0; i < have->fdb.n; i++) {
		const struct fdb_entry *e = &have->fdb.entries[i];
		bool wanted = false;

		if (e->ifindex != vx->ifindex)
			continue;
		for (size_t r = 0; r < v->n_remotes && !wanted; r++)
			wanted = ip_addr_equal(&v->remotes[r], &e->dst);
		if (wanted)
			continue;
		op = plan_add(p, OP_FDB_DEL, PHASE_NEIGH, VERB_DELETE, "fdb %s remote %s", v->vxlan,
			      ip_addr_str(&e->dst, a, sizeof(a)));
		if (!op)
			return -ENOMEM;
		op->ifindex = vx->ifindex;
		op->dst = e->dst;
	}
	return 0;
}

static int plan_vnet(const struct node_state *want, const struct desired_vnet *v,
		     const struct observed *have, struct plan *p)
{
	const struct link_obs *br = owned_link(have, v->name, want->owner);
	const struct link_obs *vx = owned_link(have, v->vxlan, want->owner);
	bool recreated;
	int ret;

	ret = bridge_plan(v, br, p);
	if (ret < 0)
		return ret;
	/* a bridge that is replaced counts as new for its port */
	if (br && strcmp(br->kind, "bridge"))
		br = NULL;
	ret = vxlan_plan(v, vx, br, want->owner, p, &recreated);
	if (ret < 0)
		return ret;
	return plan_fdb(v, vx, recreated, have, p);
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

static const char *verb_action(enum op_verb v)
{
	return v == VERB_CREATE ? "create" : v == VERB_DELETE ? "remove" : "change";
}

static void report_failure(struct op *op, int err, const char *extack)
{
	op->failed = true;
	if (extack && extack[0])
		log_error("%s: %s failed: %s (kernel: %s)", op->object, verb_action(op->verb),
			  strerror(-err), extack);
	else
		log_error("%s: %s failed: %s", op->object, verb_action(op->verb), strerror(-err));
}

static void batch_error(void *cookie, int err, const char *extack, void *data)
{
	(void)data;
	if (cookie)
		report_failure(cookie, err, extack);
}

/* The ifindex of an op's link: known from the dump, or looked up now (made in this run). */
static int resolve(struct op *op, const char *name)
{
	unsigned int idx;

	if (op->ifindex)
		return op->ifindex;
	idx = if_nametoindex(name);
	if (!idx) {
		report_failure(op, -ENODEV, "");
		return 0;
	}
	return (int)idx;
}

/* A kernel booted with ipv6.disable=1 refuses AF_INET6 settings. */
static bool ipv6_enabled(void)
{
	return access("/proc/sys/net/ipv6", F_OK) == 0;
}

/* Messages per send and pause between sends with wireguard-go (see plan_apply). */
#define USERSPACE_PACE_MSGS 8
#define USERSPACE_PACE_US   2000
#define WG_SETTLE_US	    50000

/* Far above what one link message takes; keeps a create and its alias together. */
#define NL_LINK_MSG_MAX 1024

/*
 * A link change as the kernel needs it: do_setlink applies the up flag before
 * IFLA_AF_SPEC, so a link that should come up without an IPv6 link-local
 * address gets that setting in one message and goes up in the next. Returns
 * the last message (the caller commits it).
 */
static struct nlmsghdr *put_link_change(struct nl_batch *b, struct op *op, int ifindex,
					struct link_change *c)
{
	struct nlmsghdr *nlh;

	if (!ipv6_enabled())
		c->mask &= ~LINK_SET_NO_ADDRGEN;
	if ((c->mask & LINK_SET_NO_ADDRGEN) && (c->mask & LINK_SET_UP)) {
		struct link_change first = *c;

		first.mask &= ~LINK_SET_UP;
		nlh = nl_batch_msg(b, RTM_NEWLINK, 0);
		link_put_change(nlh, ifindex, op->ifname, &first);
		nl_batch_commit(b, nlh, op);
		c->mask = LINK_SET_UP;
	}
	nlh = nl_batch_msg(b, RTM_NEWLINK, 0);
	link_put_change(nlh, ifindex, op->ifname, c);
	return nlh;
}

static void encode_op(struct reconcile *r, struct nl_batch *b, struct op *op)
{
	struct nlmsghdr *nlh;
	struct link_change c;
	int idx, master;

	switch (op->type) {
	case OP_BRIDGE_CREATE:
	case OP_VXLAN_CREATE:
		/*
		 * The kernel ignores IFLA_IFALIAS when it creates a link, so the
		 * owner mark follows in the same sendmsg: a fabricd killed in
		 * between cannot leave an unmarked link.
		 */
		nl_batch_reserve(b, 3, 3 * NL_LINK_MSG_MAX);
		nlh = nl_batch_msg(b, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
		if (op->type == OP_BRIDGE_CREATE) {
			bridge_put_create(nlh, op->ifname, op->mtu);
		} else {
			master = (int)if_nametoindex(op->master);
			vxlan_put_create(nlh, op, master);
		}
		nl_batch_commit(b, nlh, op);
		memset(&c, 0, sizeof(c));
		c.mask = LINK_SET_ALIAS | LINK_SET_NO_ADDRGEN | LINK_SET_UP;
		snprintf(c.alias, sizeof(c.alias), "%s", r->owner);
		nlh = put_link_change(b, op, 0, &c);
		break;
	case OP_LINK_CHANGE:
		c = op->change;
		if ((c.mask & LINK_SET_MASTER) && !c.master) {
			c.master = (int)if_nametoindex(op->master);
			if (!c.master) {
				report_failure(op, -ENODEV, "bridge not found");
				return;
			}
		}
		nl_batch_reserve(b, 2, 2 * NL_LINK_MSG_MAX);
		nlh = put_link_change(b, op, op->ifindex, &c);
		break;
	case OP_LINK_DELETE:
		nlh = nl_batch_msg(b, RTM_DELLINK, 0);
		link_put_delete(nlh, op->ifindex, op->ifname);
		break;
	case OP_FDB_ADD:
	case OP_FDB_DEL:
		idx = resolve(op, op->ifname);
		if (!idx)
			return;
		if (op->type == OP_FDB_ADD)
			nlh = nl_batch_msg(b, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_APPEND);
		else
			nlh = nl_batch_msg(b, RTM_DELNEIGH, 0);
		fdb_put(nlh, idx, &op->dst);
		break;
	case OP_ADDR_ADD:
	case OP_ADDR_DEL:
		idx = resolve(op, op->ifname);
		if (!idx)
			return;
		if (op->type == OP_ADDR_ADD)
			nlh = nl_batch_msg(b, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
		else
			nlh = nl_batch_msg(b, RTM_DELADDR, 0);
		ifaddr_put(nlh, idx, &op->prefix);
		break;
	default:
		return;
	}
	log_debug("%c %s: %s%s%s%s", (char)op->verb, op->object, verb_action(op->verb),
		  op->detail[0] ? " (" : "", op->detail, op->detail[0] ? ")" : "");
	nl_batch_commit(b, nlh, op);
}

static bool is_wg_op(const struct op *op)
{
	return op->type == OP_WG_CREATE || op->type == OP_WG_DESTROY || op->type == OP_WG_DEVICE ||
	       op->type == OP_WG_PEER;
}

static bool is_firewall_op(const struct op *op)
{
	return op->type == OP_FIREWALL_SET || op->type == OP_FIREWALL_DELETE;
}

/*
 * wireguard-go closes its device when its link-event socket overflows, and
 * does so a moment after the burst that caused it: look twice.
 */
static bool wireguard_go_survived(void)
{
	if (!wg_exists(WG_BACKEND_USERSPACE, FABRIC_IFNAME))
		return false;
	usleep(WG_SETTLE_US);
	return wg_exists(WG_BACKEND_USERSPACE, FABRIC_IFNAME);
}

int plan_apply(struct reconcile *r, struct plan *p)
{
	int first_err = frr_check_plan(r->frr_pathspace, p);

	if (first_err)
		return first_err;

	for (int phase = 0; phase < PHASE_COUNT; phase++) {
		struct nl_batch *b = NULL;
		bool failed = false;

		for (size_t i = 0; i < p->n; i++) {
			struct op *op = &p->ops[i];
			int ret;

			if ((int)op->phase != phase)
				continue;
			if (is_firewall_op(op)) {
				log_debug("%c %s: %s%s%s%s", (char)op->verb, op->object,
					  verb_action(op->verb), op->detail[0] ? " (" : "",
					  op->detail, op->detail[0] ? ")" : "");
				ret = firewall_apply(op);
				if (ret < 0)
					report_failure(op, ret, "");
				continue;
			}
			if (op->type == OP_FRR_CONFIG) {
				ret = frr_write_and_reload(r->frr_pathspace, r->owner, op->text);
				if (ret < 0)
					report_failure(op, ret, "");
				continue;
			}
			if (is_wg_op(op)) {
				log_debug("%c %s: %s%s%s%s", (char)op->verb, op->object,
					  verb_action(op->verb), op->detail[0] ? " (" : "",
					  op->detail, op->detail[0] ? ")" : "");
				ret = fabric_apply(r, op);
				if (ret < 0)
					report_failure(op, ret, wg_last_error());
				continue;
			}
			if (!b && !(b = nl_batch_new(&r->rtnl, batch_error, NULL)))
				return -ENOMEM;
			/*
			 * wireguard-go closes its device when its link-event socket
			 * overflows (ENOBUFS), which a burst of link changes can
			 * cause: give it time to read. Kernel WireGuard needs none.
			 */
			if (r->backend == WG_BACKEND_USERSPACE && phase != PHASE_NEIGH)
				nl_batch_set_pacing(b, USERSPACE_PACE_MSGS, USERSPACE_PACE_US);
			/* names made in an earlier phase resolve: that batch has been sent */
			encode_op(r, b, op);
		}
		if (b)
			nl_batch_finish(b);
		for (size_t i = 0; i < p->n; i++) {
			if ((int)p->ops[i].phase == phase && p->ops[i].failed)
				failed = true;
		}
		if (failed) {
			/* later phases build on this one: stop here, the next apply resumes */
			first_err = -EIO;
			break;
		}
	}
	/* wireguard-go may have closed its device under a burst of link events */
	if (!first_err && r->backend == WG_BACKEND_USERSPACE && p->n && !p->down &&
	    !wireguard_go_survived())
		first_err = -ECHILD;
	return first_err;
}
