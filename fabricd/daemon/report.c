// SPDX-License-Identifier: GPL-2.0-or-later
/* report.c - the daemon's log: what changed and why, one short line each. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "daemon/report.h"
#include "definition/desired.h"
#include "base/log.h"
#include "base/util.h"
#include "engine/session.h"
#include "kinds/kind.h"

#define WHY_DEF "(definition changed)"

static const struct zone *find_zone(const struct cluster *c, const char *name)
{
	for (size_t i = 0; i < c->n_zones; i++) {
		if (!strcmp(c->zones[i].name, name))
			return &c->zones[i];
	}
	return NULL;
}

static bool has_member(const struct cluster *c, const struct zone *z, const char *node)
{
	for (size_t i = 0; i < z->n_members; i++) {
		if (!strcmp(c->nodes[z->members[i]].name, node))
			return true;
	}
	return false;
}

/* Whether a and b list the same nodes in the same order: members compare by index then. */
static bool same_nodes(const struct cluster *a, const struct cluster *b)
{
	if (a->n_nodes != b->n_nodes)
		return false;
	for (size_t i = 0; i < a->n_nodes; i++) {
		if (strcmp(a->nodes[i].name, b->nodes[i].name))
			return false;
	}
	return true;
}

/*
 * "+pve3 -pve2": members of b not in a, then members of a not in b. by_index:
 * the clusters list the same nodes (same_nodes), so a member is its index (64
 * zones of 64 members compared by name were half a million strcmp a reload).
 */
static void member_changes(const struct cluster *ca, const struct zone *a, const struct cluster *cb,
			   const struct zone *b, bool by_index, char *buf, size_t len)
{
	bool *in[2] = {NULL, NULL}; /* [0]: a's members, [1]: b's, by node index */
	size_t used = 0;

	buf[0] = '\0';
	if (by_index && (in[0] = calloc(ca->n_nodes + 1, 1)) &&
	    (in[1] = calloc(ca->n_nodes + 1, 1))) {
		for (size_t i = 0; i < a->n_members; i++)
			in[0][a->members[i]] = true;
		for (size_t i = 0; i < b->n_members; i++)
			in[1][b->members[i]] = true;
	}
	for (int pass = 0; pass < 2; pass++) {
		const struct cluster *from = pass ? ca : cb, *to = pass ? cb : ca;
		const struct zone *zf = pass ? a : b, *zt = pass ? b : a;
		const bool *in_to = in[1] ? in[pass] : NULL;

		for (size_t i = 0; i < zf->n_members && used < len; i++) {
			const char *name = from->nodes[zf->members[i]].name;

			if (in_to ? !in_to[zf->members[i]] : !has_member(to, zt, name))
				used += (size_t)snprintf(buf + used, len - used, "%s%c%s",
							 used ? " " : "", pass ? '-' : '+', name);
		}
	}
	free(in[0]);
	free(in[1]);
}

static size_t report_zones(const struct cluster *a, const struct cluster *b)
{
	char ma[32], mb[32], members[256];
	bool by_index = same_nodes(a, b);
	size_t n = 0;

	for (size_t i = 0; i < a->n_zones; i++) {
		if (!find_zone(b, a->zones[i].name)) {
			log_info("zone %s: removed " WHY_DEF, a->zones[i].name);
			n++;
		}
	}
	for (size_t i = 0; i < b->n_zones; i++) {
		const struct zone *zb = &b->zones[i], *za = find_zone(a, zb->name);

		if (!za) {
			log_info("zone %s: added, %s " WHY_DEF, zb->name,
				 transport_name(zb->transport));
			n++;
			continue;
		}
		if (za->transport != zb->transport) {
			log_info("zone %s: transport %s -> %s " WHY_DEF, zb->name,
				 transport_name(za->transport), transport_name(zb->transport));
			n++;
		}
		if (za->mtu_policy != zb->mtu_policy) {
			log_info("zone %s: mtu_policy %s -> %s " WHY_DEF, zb->name,
				 mtu_policy_name(za->mtu_policy), mtu_policy_name(zb->mtu_policy));
			n++;
		}
		snprintf(ma, sizeof(ma), "%u", za->mtu);
		snprintf(mb, sizeof(mb), "%u", zb->mtu);
		if ((za->flags & ZONE_HAS_MTU) != (zb->flags & ZONE_HAS_MTU) ||
		    ((za->flags & ZONE_HAS_MTU) && za->mtu != zb->mtu)) {
			log_info("zone %s: mtu %s -> %s " WHY_DEF, zb->name,
				 (za->flags & ZONE_HAS_MTU) ? ma : "computed",
				 (zb->flags & ZONE_HAS_MTU) ? mb : "computed");
			n++;
		}
		if (za->control_plane != zb->control_plane) {
			log_info("zone %s: control_plane %s -> %s " WHY_DEF, zb->name,
				 control_plane_name(za->control_plane),
				 control_plane_name(zb->control_plane));
			n++;
		}
		member_changes(a, za, b, zb, by_index, members, sizeof(members));
		if (members[0]) {
			log_info("zone %s: nodes %s " WHY_DEF, zb->name, members);
			n++;
		}
	}
	return n;
}

static size_t report_vnets(const struct cluster *a, const struct cluster *b)
{
	struct cluster_vnet_index ia, ib;
	const struct zone *za;
	const char *zb;
	size_t n = 0;

	cluster_vnet_index_make(a, &ia);
	cluster_vnet_index_make(b, &ib);
	for (size_t i = 0; i < a->n_zones; i++) {
		for (size_t j = 0; j < a->zones[i].n_vnets; j++) {
			const char *name = a->zones[i].vnets[j].name;

			if (!cluster_vnet_index_find(&ib, name, NULL)) {
				log_info("vnet %s: removed from zone %s " WHY_DEF, name,
					 a->zones[i].name);
				n++;
			}
		}
	}
	for (size_t i = 0; i < b->n_zones; i++) {
		for (size_t j = 0; j < b->zones[i].n_vnets; j++) {
			const struct vnet *vb = &b->zones[i].vnets[j], *va;

			zb = b->zones[i].name;
			va = cluster_vnet_index_find(&ia, vb->name, &za);
			if (!va) {
				log_info("vnet %s: added to zone %s, vni %u " WHY_DEF, vb->name, zb,
					 vb->vni);
				n++;
				continue;
			}
			if (strcmp(za->name, zb)) {
				log_info("vnet %s: zone %s -> %s " WHY_DEF, vb->name, za->name, zb);
				n++;
			}
			if (va->vni != vb->vni) {
				log_info("vnet %s: vni %u -> %u " WHY_DEF, vb->name, va->vni,
					 vb->vni);
				n++;
			}
		}
	}
	cluster_vnet_index_free(&ia);
	cluster_vnet_index_free(&ib);
	return n;
}

static size_t report_nodes(const struct cluster *a, const struct cluster *b)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n_nodes; i++) {
		if (cluster_find_node(b, a->nodes[i].name) < 0) {
			log_info("node %s: removed " WHY_DEF, a->nodes[i].name);
			n++;
		}
	}
	for (size_t i = 0; i < b->n_nodes; i++) {
		const struct node *nb = &b->nodes[i];
		int ia = cluster_find_node(a, nb->name);
		const struct node *na;
		char what[128] = "";
		size_t used = 0;

		if (ia < 0) {
			log_info("node %s: added " WHY_DEF, nb->name);
			n++;
			continue;
		}
		na = &a->nodes[ia];
#define CHANGED(cond, name)                                                                        \
	do {                                                                                       \
		if (cond)                                                                          \
			used += (size_t)snprintf(what + used, sizeof(what) - used, "%s%s",         \
						 used ? ", " : "", name);                          \
	} while (0)
		CHANGED(!ip_addr_equal(&na->underlay, &nb->underlay), "underlay");
		CHANGED(!ip_addr_equal(&na->fabric_address, &nb->fabric_address), "fabric address");
		CHANGED(memcmp(na->public_key, nb->public_key, WG_KEY_LEN), "public key");
		CHANGED(node_listen_port(a, na) != node_listen_port(b, nb), "listen port");
		CHANGED((na->flags & NODE_HAS_ENDPOINT) != (nb->flags & NODE_HAS_ENDPOINT) ||
			    strcmp(na->endpoint_host, nb->endpoint_host) ||
			    na->endpoint_port != nb->endpoint_port,
			"endpoint");
#undef CHANGED
		if (used) {
			log_info("node %s: %s changed " WHY_DEF, nb->name, what);
			n++;
		}
	}
	return n;
}

static size_t report_fabric(const struct cluster *a, const struct cluster *b)
{
	const struct fabric *fa = &a->fabric, *fb = &b->fabric;
	char pa[IP_ADDR_STRLEN], pb[IP_ADDR_STRLEN];
	size_t n = 0;

	if (!ip_addr_equal(&fa->prefix.addr, &fb->prefix.addr) ||
	    fa->prefix.len != fb->prefix.len) {
		log_info("fabric: prefix %s/%u -> %s/%u " WHY_DEF,
			 ip_addr_str(&fa->prefix.addr, pa, sizeof(pa)), fa->prefix.len,
			 ip_addr_str(&fb->prefix.addr, pb, sizeof(pb)), fb->prefix.len);
		n++;
	}
	if (fa->listen_port != fb->listen_port) {
		log_info("fabric: listen_port %u -> %u " WHY_DEF, fa->listen_port, fb->listen_port);
		n++;
	}
	if (fa->secure_port != fb->secure_port) {
		log_info("fabric: secure_port %u -> %u " WHY_DEF, fa->secure_port, fb->secure_port);
		n++;
	}
	if (fa->keepalive != fb->keepalive) {
		log_info("fabric: keepalive %u -> %u " WHY_DEF, fa->keepalive, fb->keepalive);
		n++;
	}
	if ((fa->flags & FABRIC_HAS_UNDERLAY_MTU) != (fb->flags & FABRIC_HAS_UNDERLAY_MTU) ||
	    fa->underlay_mtu != fb->underlay_mtu) {
		snprintf(pa, sizeof(pa), "%u", fa->underlay_mtu);
		snprintf(pb, sizeof(pb), "%u", fb->underlay_mtu);
		log_info("fabric: underlay_mtu %s -> %s " WHY_DEF,
			 (fa->flags & FABRIC_HAS_UNDERLAY_MTU) ? pa : "measured",
			 (fb->flags & FABRIC_HAS_UNDERLAY_MTU) ? pb : "measured");
		n++;
	}
	return n;
}

/* fabric.evpn's list as text: "pve1,pve2", "none" (a full mesh). */
static void reflectors_text(const struct evpn *e, char *buf, size_t len)
{
	size_t used = 0;

	snprintf(buf, len, "none");
	for (size_t i = 0; i < e->n_reflectors && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "",
					 e->reflectors[i]);
}

/* fabric.control_plane and fabric.evpn: FRR's part changes with them. */
static size_t report_evpn(const struct cluster *a, const struct cluster *b)
{
	const struct fabric *fa = &a->fabric, *fb = &b->fabric;
	bool ea = fa->flags & FABRIC_HAS_EVPN, eb = fb->flags & FABRIC_HAS_EVPN;
	char ra[160], rb[160];
	size_t n = 0;

	if (fa->control_plane != fb->control_plane) {
		log_info("fabric: control_plane %s -> %s " WHY_DEF,
			 control_plane_name(fa->control_plane),
			 control_plane_name(fb->control_plane));
		n++;
	}
	if (ea != eb) {
		if (eb)
			log_info("fabric: evpn added, asn %u " WHY_DEF, fb->evpn.asn);
		else
			log_info("fabric: evpn removed (asn %u) " WHY_DEF, fa->evpn.asn);
		n++;
	} else if (ea && fa->evpn.asn != fb->evpn.asn) {
		log_info("fabric: evpn asn %u -> %u " WHY_DEF, fa->evpn.asn, fb->evpn.asn);
		n++;
	}
	reflectors_text(&fa->evpn, ra, sizeof(ra));
	reflectors_text(&fb->evpn, rb, sizeof(rb));
	if (strcmp(ra, rb)) {
		log_info("fabric: evpn route_reflectors %s -> %s " WHY_DEF, ra, rb);
		n++;
	}
	return n;
}

size_t report_definition(const struct cluster *a, const struct cluster *b)
{
	return report_fabric(a, b) + report_evpn(a, b) + report_nodes(a, b) + report_zones(a, b) +
	       report_vnets(a, b);
}

static bool creates_link(const struct op *op)
{
	return op->type == OP_WG_CREATE || op->type == OP_BRIDGE_CREATE ||
	       op->type == OP_VXLAN_CREATE;
}

/*
 * A plan's ops by link name, for report_drift: each op looks up its link's
 * creator and counts the other ops of that name, and a drift of 1024
 * bridges deleted out of band plans 66,000 ops.
 */
struct op_index {
	const struct plan *p;
	/* NULL (no ops, or out of memory): the lookups scan p */
	const struct op **by_name; /* every op, by ifname, in plan order within a name */
	const struct op **made;	   /* the link creations among them, the same way */
	size_t n_made;
};

static int op_name_cmp(const void *a, const void *b)
{
	const struct op *x = *(const struct op *const *)a, *y = *(const struct op *const *)b;
	int c = strcmp(x->ifname, y->ifname);

	/* equal names in plan order (one array), so the first is the one a scan finds */
	return c ? c : x < y ? -1 : x > y;
}

static void op_index_make(const struct plan *p, struct op_index *ix)
{
	const struct op **v = p->n ? malloc(2 * p->n * sizeof(*v)) : NULL;

	*ix = (struct op_index){.p = p};
	if (!v)
		return;
	ix->by_name = v;
	ix->made = v + p->n;
	for (size_t i = 0; i < p->n; i++) {
		v[i] = &p->ops[i];
		if (creates_link(&p->ops[i]))
			ix->made[ix->n_made++] = &p->ops[i];
	}
	qsort(ix->by_name, p->n, sizeof(*v), op_name_cmp);
	qsort(ix->made, ix->n_made, sizeof(*v), op_name_cmp);
}

/* Where ops of ifname start in v (sorted by op_name_cmp) or, with after, end. */
static size_t op_bound(const struct op *const *v, size_t n, const char *ifname, bool after)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(v[mid]->ifname, ifname);

		if (c < 0 || (after && !c))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The op that created the link ifname in this plan (the first), if any. */
static const struct op *creator(const struct op_index *ix, const char *ifname)
{
	const struct plan *p = ix->p;
	size_t at;

	if (!ix->by_name) {
		for (size_t i = 0; i < p->n; i++) {
			if (creates_link(&p->ops[i]) && !strcmp(p->ops[i].ifname, ifname))
				return &p->ops[i];
		}
		return NULL;
	}
	at = op_bound(ix->made, ix->n_made, ifname, false);
	return at < ix->n_made && !strcmp(ix->made[at]->ifname, ifname) ? ix->made[at] : NULL;
}

static bool done(const struct op *op)
{
	return !op->failed && !op->skipped;
}

/* How many ops of the plan other than op have op's ifname and were done. */
static size_t same_name(const struct op_index *ix, const struct op *op)
{
	const struct plan *p = ix->p;
	size_t with = 0, end;

	if (!ix->by_name) {
		for (size_t i = 0; i < p->n; i++)
			with += &p->ops[i] != op && !strcmp(p->ops[i].ifname, op->ifname) &&
				done(&p->ops[i]);
		return with;
	}
	end = op_bound(ix->by_name, p->n, op->ifname, true);
	for (size_t i = op_bound(ix->by_name, p->n, op->ifname, false); i < end; i++)
		with += ix->by_name[i] != op && done(ix->by_name[i]);
	return with;
}

static void report_retire(const struct op *op)
{
	struct op_text t;

	op_describe(op, &t);
	if (op->verb == VERB_DELETE)
		log_info("%s: removed%s%s%s", t.object, t.detail[0] ? " (" : "", t.detail,
			 t.detail[0] ? ")" : "");
	else
		log_info("%s: %s", t.object,
			 t.detail[0] ? t.detail : op_verb_word((enum op_verb)op->verb));
}

/* "bridge vnet100: mtu 1390 -> 1290 (underlay MTU changed)" */
static void report_underlay(const struct op *op)
{
	struct op_text t;

	op_describe(op, &t);
	log_info("%s: %s (underlay MTU changed)", t.object, t.detail);
}

/* "vxlan vx100: recreated (drift: missing)", collapsing what comes with a recreated link. */
static void report_drift(const struct op_index *ix, const struct op *op)
{
	const struct op *made = op->ifname[0] ? creator(ix, op->ifname) : NULL;
	size_t with;
	struct op_text t;

	if (made && made != op)
		return; /* comes with the link's creation */
	op_describe(op, &t);
	if (made) {
		with = same_name(ix, op);
		if (with)
			log_info("%s: recreated with %zu setting%s (drift: missing)", t.object,
				 with, with == 1 ? "" : "s");
		else
			log_info("%s: recreated (drift: missing)", t.object);
		return;
	}
	switch ((enum op_verb)op->verb) {
	case VERB_CREATE:
		log_info("%s: added again (drift: missing)", t.object);
		break;
	case VERB_DELETE:
		log_info("%s: removed (drift: %s)", t.object,
			 t.detail[0] ? t.detail : "not in the definition");
		break;
	case VERB_CHANGE:
		log_info("%s: %s (drift: changed out of band)", t.object,
			 t.detail[0] ? t.detail : "restored");
		break;
	}
}

bool report_follows_underlay(const struct op *op, unsigned int reasons)
{
	/* with its IPv6 state, which an MTU back over 1280 brings anew (kinds/link.h) */
	return (reasons & REASON_UNDERLAY) && op->type == OP_LINK_CHANGE &&
	       (op->u.link.mask & ~(unsigned int)LINK_SET_NO_ADDRGEN) == LINK_SET_MTU;
}

bool report_is_stage(unsigned int reasons)
{
	return (reasons & REASON_RETIRE) &&
	       (!(reasons & (REASON_KERNEL | REASON_PEERS)) || (reasons & REASON_RETRY));
}

bool report_op_is_stage(const struct plan *p, const struct op *op, unsigned int reasons)
{
	if (op->phase == PHASE_RETIRE || op->phase == PHASE_SEAL || op->stage_end ||
	    report_is_stage(reasons))
		return true;
	if (op->kind != KIND_GUARD)
		return false;
	/* the guard's change that comes with a stage's end (a pass may end one early or late) */
	if (reasons & REASON_RETIRE)
		return true;
	for (size_t i = 0; i < p->n; i++)
		if (p->ops[i].stage_end || p->ops[i].phase == PHASE_RETIRE ||
		    p->ops[i].phase == PHASE_SEAL)
			return true;
	return false;
}

void report_plan(const struct plan *p, unsigned int reasons)
{
	/*
	 * A retry carries the failed pass's reasons: what it does is drift unless
	 * those were a start or a definition (a change made by hand while the
	 * underlay was down is repaired by a retry, and is drift all the same).
	 */
	bool drift = !(reasons & (REASON_STARTUP | REASON_DEFINITION));
	struct op_index ix = {.p = p};

	if (drift && !report_is_stage(reasons))
		op_index_make(p, &ix);
	for (size_t i = 0; i < p->n; i++) {
		const struct op *op = &p->ops[i];

		if (!done(op))
			continue; /* only what was done is reported */
		if (report_op_is_stage(p, op, reasons))
			report_retire(op);
		else if (report_follows_underlay(op, reasons))
			report_underlay(op);
		else if (drift)
			report_drift(&ix, op);
	}
	free(ix.by_name);
}

void report_applied(const struct plan *p, const char *node, unsigned int reasons)
{
	size_t created, changed, deleted;
	const char *why;

	if (reasons & REASON_DEFINITION)
		why = " " WHY_DEF;
	else if (reasons & REASON_STARTUP)
		why = " (startup)";
	else if (reasons & REASON_RETRY)
		why = " (retry)";
	else
		return; /* drift and retirement were reported change by change */
	plan_count(p, &created, &changed, &deleted);
	log_info("%s: %zu created, %zu changed, %zu removed%s", node, created, changed, deleted,
		 why);
}

/* Warns when a zone's MTU changes: guests do not learn it by themselves. */
unsigned int report_mtus(struct zone_mtus *known, const struct node_state *w,
			 const struct cluster *c, unsigned int reasons)
{
	unsigned int underlay = 0;
	struct zone_mtu *mtus;

	if (!w->mtu_known)
		return 0;
	if (known->underlay && known->underlay != w->mtu.underlay &&
	    !(reasons & REASON_DEFINITION)) {
		log_info("underlay MTU %u -> %u: the fabric and the zones follow", known->underlay,
			 w->mtu.underlay);
		underlay = REASON_UNDERLAY;
	}
	known->underlay = w->mtu.underlay;
	mtus = calloc(w->n_zones ? w->n_zones : 1, sizeof(*mtus));
	if (!mtus)
		return underlay;
	for (size_t i = 0; i < w->n_zones; i++) {
		const struct zone *z = &c->zones[w->zones[i].zone];
		unsigned int mtu = w->zones[i].mtu;
		const char *why = (reasons & REASON_DEFINITION) ? "definition changed"
				  : (reasons & REASON_RETIRE)
				      ? "a transport switch's grace period ended"
				      : "underlay MTU changed";

		snprintf(mtus[i].name, sizeof(mtus[i].name), "%s", z->name);
		mtus[i].mtu = mtu;
		for (size_t j = 0; j < known->n; j++) {
			unsigned int old = known->mtus[j].mtu;

			if (strcmp(known->mtus[j].name, z->name) || old == mtu)
				continue;
			if (mtu < old)
				log_warn("zone %s: MTU %u -> %u (%s; transport %s, mtu_policy %s): "
					 "guests must lower their MTU to %u or lose large packets",
					 z->name, old, mtu, why, transport_name(z->transport),
					 mtu_policy_name(z->mtu_policy), mtu);
			else
				log_info("zone %s: MTU %u -> %u (%s; transport %s, mtu_policy %s): "
					 "guests may raise their MTU to %u",
					 z->name, old, mtu, why, transport_name(z->transport),
					 mtu_policy_name(z->mtu_policy), mtu);
		}
	}
	free(known->mtus);
	known->mtus = mtus;
	known->n = w->n_zones;
	return underlay;
}

long report_minor_faults(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

void report_pass_times(const struct session *s, double started, double loaded, double planned,
		       long faults)
{
	log_debug("pass: %.1f ms (definition %.1f, observe %.1f, plan %.1f, apply %.1f; %ld page "
		  "faults)",
		  clock_mono_ms() - started, loaded - started, s->observe_ms, s->plan_ms,
		  clock_mono_ms() - planned, report_minor_faults() - faults);
}

/* For --verbose: "kernel, settle". */
const char *report_reason_names(unsigned int reasons, char *buf, size_t len)
{
	static const char *const names[] = {"startup", "definition", "kernel", "peers",
					    "retire",  "retry",	     "settle", "underlay"};
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && used < len; i++) {
		if (reasons & (1U << i))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 names[i]);
	}
	return buf;
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

void report_converged(const struct session *s, bool def_invalid, char *buf, size_t len)
{
	const struct node_state *w = &s->want;
	/* before whatever follows: a held vnet or a hung fabric does not hide it */
	const char *invalid = def_invalid ? "definition not valid, last good one in force; " : "";
	const char *node = s->node;

	if (s->have.wg_error)
		snprintf(buf, len,
			 "%s%s: fabric " FABRIC_IFNAME " does not answer (wireguard-go stopped "
			 "or hung?), its peers wait; the rest converged",
			 invalid, node);
	else if (s->r.n_held)
		snprintf(buf, len,
			 "%s%s: %zu of %zu vnet%s held by a conflict (another owner's link: the "
			 "log and fabricd status name it), the rest converged",
			 invalid, node, s->r.n_held, w->n_vnets, plural(w->n_vnets));
	else
		snprintf(buf, len, "%s%s: %zu zone%s, %zu vnet%s, %zu peer%s, converged", invalid,
			 node, w->n_zones, plural(w->n_zones), w->n_vnets, plural(w->n_vnets),
			 w->fabric.n_peers, plural(w->fabric.n_peers));
}
