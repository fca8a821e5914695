// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_report.c - what `fabricd run` logs (daemon/report.h): a definition's
 * vnet changes (added, removed, moved to another zone, new VNI) and a
 * drift plan's lines (a recreated link with its settings collapsed, an op
 * without a link name, a drift removal, a switch stage's retirement), line
 * for line. The lookups are indexed (a cluster has 1024 vnets, a plan 66,000
 * ops); random definitions and plans, with the duplicate names a valid one
 * never has, must log what the plain scans below (the code before the
 * indexes) log.
 */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "daemon/report.h"
#include "definition/desired.h"
#include "engine/session.h"
#include "kinds/kind.h"
#include "unit.h"

struct vnet_def {
	const char *zone, *name;
	uint32_t vni;
};

/* A cluster of the zones named in zones (in order), each with its vnets of defs. */
static struct cluster *make_cluster(const char *const *zones, size_t n_zones,
				    const struct vnet_def *defs, size_t n_defs)
{
	struct cluster *c = calloc(1, sizeof(*c));

	c->zones = calloc(n_zones + 1, sizeof(*c->zones));
	c->n_zones = n_zones;
	for (size_t i = 0; i < n_zones; i++) {
		struct zone *z = &c->zones[i];

		snprintf(z->name, sizeof(z->name), "%s", zones[i]);
		z->vnets = calloc(n_defs + 1, sizeof(*z->vnets));
		for (size_t j = 0; j < n_defs; j++) {
			if (strcmp(defs[j].zone, zones[i]))
				continue;
			snprintf(z->vnets[z->n_vnets].name, sizeof(z->vnets[0].name), "%s",
				 defs[j].name);
			z->vnets[z->n_vnets++].vni = defs[j].vni;
		}
	}
	return c;
}

static char *definition_log(const struct cluster *a, const struct cluster *b, size_t *n)
{
	char *out;

	log_capture_begin();
	*n = report_definition(a, b);
	out = log_capture_end();
	return out;
}

static void test_vnets(void)
{
	static const char *const zones[] = {"red", "blue"};
	static const struct vnet_def old[] = {
	    {"red", "vnet1", 100},  {"red", "vnet2", 200},  {"red", "vnet3", 300},
	    {"blue", "vnet4", 400}, {"blue", "vnet6", 600},
	};
	static const struct vnet_def new[] = {
	    {"blue", "vnet6", 601}, {"red", "vnet1", 100},  {"red", "vnet2", 201},
	    {"blue", "vnet3", 300}, {"blue", "vnet5", 500},
	};
	struct cluster *a = make_cluster(zones, 2, old, 5), *b = make_cluster(zones, 2, new, 5);
	size_t n;
	char *out = definition_log(a, b, &n);

	CHECK_STR(out,
		  "vnet vnet4: removed from zone blue (definition changed)\n"
		  "vnet vnet2: vni 200 -> 201 (definition changed)\n"
		  "vnet vnet6: vni 600 -> 601 (definition changed)\n"
		  "vnet vnet3: zone red -> blue (definition changed)\n"
		  "vnet vnet5: added to zone blue, vni 500 (definition changed)\n",
		  "removed first, then b's vnets in its order");
	CHECK_INT(n, 5, "one count per line");
	free(out);
	out = definition_log(a, a, &n);
	CHECK(!out || !out[0], "the same definition logs nothing: %s", out);
	CHECK_INT(n, 0, "nothing changed");
	free(out);
	cluster_free(a);
	cluster_free(b);
}

/* nodes (comma-separated) into c, zone 0's members those of the indices in members. */
static void set_nodes(struct cluster *c, const char *nodes, const size_t *members, size_t n)
{
	char copy[128], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", nodes);
	c->nodes = calloc(8, sizeof(*c->nodes));
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		snprintf(c->nodes[c->n_nodes++].name, sizeof(c->nodes[0].name), "%s", t);
	c->zones[0].members = calloc(n + 1, sizeof(size_t));
	memcpy(c->zones[0].members, members, n * sizeof(size_t));
	c->zones[0].n_members = n;
}

/*
 * A zone's members, compared by node index where both definitions list the
 * same nodes in the same order (64 zones of 64 members by name were half a
 * million strcmp a reload), by name where they do not.
 */
static void test_member_changes(void)
{
	static const char *const zones[] = {"red"};
	static const size_t ab[] = {0, 1}, bc[] = {1, 2}, renumbered[] = {0, 2};
	struct cluster *a = make_cluster(zones, 1, NULL, 0), *b = make_cluster(zones, 1, NULL, 0),
		       *c = make_cluster(zones, 1, NULL, 0);
	size_t n;
	char *out;

	set_nodes(a, "pve1,pve2,pve3", ab, 2);
	set_nodes(b, "pve1,pve2,pve3", bc, 2);
	/* pve2 and pve3 swapped in the node list: pve1 and pve2 are indices 0 and 2 */
	set_nodes(c, "pve1,pve3,pve2", renumbered, 2);
	out = definition_log(a, b, &n);
	CHECK_STR(out, "zone red: nodes +pve3 -pve1 (definition changed)\n", "same nodes");
	CHECK_INT(n, 1, "one change");
	free(out);
	out = definition_log(a, c, &n);
	CHECK(!out || !out[0], "the same members in another node order: nothing (%s)", out);
	free(out);
	out = definition_log(c, b, &n);
	CHECK_STR(out, "zone red: nodes +pve3 -pve1 (definition changed)\n", "by name");
	free(out);
	cluster_free(a);
	cluster_free(b);
	cluster_free(c);
}

/*
 * FRR's part changes with fabric.evpn and the control planes: a definition
 * change of theirs alone is one (it was logged and counted as drift).
 */
static void test_evpn_changes(void)
{
	static const char *const zones[] = {"red"};
	struct cluster *a = make_cluster(zones, 1, NULL, 0), *b = make_cluster(zones, 1, NULL, 0);
	size_t n;
	char *out;

	for (struct cluster *c = a; c; c = c == a ? b : NULL) {
		c->fabric.flags = FABRIC_HAS_EVPN;
		c->fabric.control_plane = CONTROL_PLANE_EVPN;
		c->fabric.evpn.asn = 65000;
		c->zones[0].control_plane = CONTROL_PLANE_EVPN;
	}
	b->fabric.evpn.reflectors = calloc(2, sizeof(*b->fabric.evpn.reflectors));
	snprintf(b->fabric.evpn.reflectors[0], sizeof(b->fabric.evpn.reflectors[0]), "pve1");
	snprintf(b->fabric.evpn.reflectors[1], sizeof(b->fabric.evpn.reflectors[1]), "pve2");
	b->fabric.evpn.n_reflectors = 2;
	b->fabric.evpn.asn = 65001;
	b->zones[0].control_plane = CONTROL_PLANE_STATIC;
	out = definition_log(a, b, &n);
	CHECK_STR(out,
		  "fabric: evpn asn 65000 -> 65001 (definition changed)\n"
		  "fabric: evpn route_reflectors none -> pve1,pve2 (definition changed)\n"
		  "zone red: control_plane evpn -> static (definition changed)\n",
		  "each said");
	CHECK_INT(n, 3, "three changes");
	free(out);
	/* EVPN gone from the definition: said so, not "asn 65001 -> 0" */
	b->fabric.flags &= ~(unsigned int)FABRIC_HAS_EVPN;
	b->fabric.control_plane = CONTROL_PLANE_STATIC;
	b->fabric.evpn.n_reflectors = 0;
	out = definition_log(a, b, &n);
	CHECK(strstr(out, "fabric: evpn removed (asn 65000) (definition changed)\n") != NULL,
	      "removal said: %s", out);
	CHECK(strstr(out, "-> 0") == NULL, "no asn 0: %s", out);
	free(out);
	out = definition_log(b, a, &n);
	CHECK(strstr(out, "fabric: evpn added, asn 65000 (definition changed)\n") != NULL,
	      "addition said: %s", out);
	free(out);
	cluster_free(a);
	cluster_free(b);
}

/* A name twice (no valid definition has that): the first, in definition order, is the one. */
static void test_vnet_duplicates(void)
{
	static const char *const zones[] = {"red", "blue", "green"};
	static const struct vnet_def old[] = {
	    {"red", "dup", 1},
	    {"blue", "dup", 2},
	    {"green", "x", 7},
	    {"green", "x", 8},
	};
	static const struct vnet_def new[] = {
	    {"red", "x", 8},
	    {"blue", "dup", 2},
	    {"green", "dup", 1},
	};
	struct cluster *a = make_cluster(zones, 3, old, 4), *b = make_cluster(zones, 3, new, 3);
	size_t n;
	char *out = definition_log(a, b, &n);

	CHECK_STR(out,
		  "vnet x: zone green -> red (definition changed)\n"
		  "vnet x: vni 7 -> 8 (definition changed)\n"
		  "vnet dup: zone red -> blue (definition changed)\n"
		  "vnet dup: vni 1 -> 2 (definition changed)\n"
		  "vnet dup: zone red -> green (definition changed)\n",
		  "each compared with the first of its name");
	CHECK_INT(n, 5, "count");
	free(out);
	cluster_free(a);
	cluster_free(b);
}

/* The scan report.c had before its index: the reference for the random definitions. */
static const struct vnet *ref_find_vnet(const struct cluster *c, const char *name,
					const char **zone)
{
	for (size_t i = 0; i < c->n_zones; i++) {
		for (size_t j = 0; j < c->zones[i].n_vnets; j++) {
			if (!strcmp(c->zones[i].vnets[j].name, name)) {
				*zone = c->zones[i].name;
				return &c->zones[i].vnets[j];
			}
		}
	}
	return NULL;
}

static size_t ref_report_vnets(const struct cluster *a, const struct cluster *b)
{
	const char *za, *zb;
	size_t n = 0;

	for (size_t i = 0; i < a->n_zones; i++) {
		for (size_t j = 0; j < a->zones[i].n_vnets; j++) {
			const char *name = a->zones[i].vnets[j].name;

			if (!ref_find_vnet(b, name, &zb)) {
				log_info("vnet %s: removed from zone %s (definition changed)", name,
					 a->zones[i].name);
				n++;
			}
		}
	}
	for (size_t i = 0; i < b->n_zones; i++) {
		for (size_t j = 0; j < b->zones[i].n_vnets; j++) {
			const struct vnet *vb = &b->zones[i].vnets[j], *va;

			zb = b->zones[i].name;
			va = ref_find_vnet(a, vb->name, &za);
			if (!va) {
				log_info("vnet %s: added to zone %s, vni %u (definition changed)",
					 vb->name, zb, vb->vni);
				n++;
				continue;
			}
			if (strcmp(za, zb)) {
				log_info("vnet %s: zone %s -> %s (definition changed)", vb->name,
					 za, zb);
				n++;
			}
			if (va->vni != vb->vni) {
				log_info("vnet %s: vni %u -> %u (definition changed)", vb->name,
					 va->vni, vb->vni);
				n++;
			}
		}
	}
	return n;
}

static unsigned int seed = 12345;

static unsigned int rnd(unsigned int n)
{
	return (unsigned int)rand_r(&seed) % n;
}

/* Up to 4 zones (the same in both), up to 60 vnets with names from a pool of pool. */
static struct cluster *random_cluster(unsigned int pool)
{
	static const char *const zones[] = {"z0", "z1", "z2", "z3"};
	struct vnet_def defs[60];
	char names[60][16];
	size_t n = rnd(61);

	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "v%u", rnd(pool));
		defs[i] = (struct vnet_def){zones[rnd(4)], names[i], 1 + rnd(3)};
	}
	return make_cluster(zones, 4, defs, n);
}

static void test_vnets_random(void)
{
	size_t moved = 0, added = 0, removed = 0;

	for (int round = 0; round < 300; round++) {
		unsigned int pool = 1 + rnd(80);
		struct cluster *a = random_cluster(pool), *b = random_cluster(pool);
		size_t n, want_n;
		char *got = definition_log(a, b, &n), *want;

		log_capture_begin();
		want_n = ref_report_vnets(a, b);
		want = log_capture_end();
		CHECK_STR(got ? got : "", want ? want : "", "round %d", round);
		CHECK_INT(n, want_n, "round %d", round);
		moved += want && strstr(want, ": zone ");
		added += want && strstr(want, ": added to zone ");
		removed += want && strstr(want, ": removed from zone ");
		free(got);
		free(want);
		cluster_free(a);
		cluster_free(b);
	}
	CHECK(moved > 10 && added > 10 && removed > 10, "the rounds cover it: %zu %zu %zu", moved,
	      added, removed);
}

static char *plan_log(const struct plan *p, unsigned int reasons)
{
	log_capture_begin();
	report_plan(p, reasons);
	return log_capture_end();
}

static struct op *add(struct plan *p, int kind, enum op_type type, enum op_phase phase,
		      enum op_verb verb, const char *ifname)
{
	struct op *op = plan_add(p, kind, type, phase, verb, ifname);

	if (op && type == OP_VXLAN_CREATE)
		op->u.create.bridge = "vnet100";
	if (op && (type == OP_BRIDGE_CREATE || type == OP_VXLAN_CREATE))
		op->u.create.mtu = 1390;
	if (op && type == OP_FDB_ADD)
		ip_addr_parse("192.0.2.12", &op->u.fdb.dst);
	return op;
}

/* A kernel notification's plan: vx100 and bridge vnet300 deleted out of band, and more. */
static void drift_plan(struct plan *p)
{
	struct op *op;

	plan_init(p, "fabricd:test");
	/* vnet300 was deleted with its port: the port's stale twin goes first */
	op = add(p, KIND_LINK, OP_LINK_DELETE, PHASE_DELETE, VERB_DELETE, "vs300");
	op_delete_names(op, "vxlan", "vs300");
	add(p, KIND_BRIDGE, OP_BRIDGE_CREATE, PHASE_LINKS, VERB_CREATE, "vnet300");
	add(p, KIND_VXLAN, OP_VXLAN_CREATE, PHASE_VXLAN, VERB_CREATE, "vx100");
	add(p, KIND_VXLAN, OP_VXLAN_CREATE, PHASE_VXLAN, VERB_CREATE, "vs300");
	op = add(p, KIND_VXLAN, OP_LINK_CHANGE, PHASE_VXLAN, VERB_CHANGE, "vx100");
	op_detail(op, "isolated");
	add(p, KIND_FDB, OP_FDB_ADD, PHASE_NEIGH, VERB_CREATE, "vx100");
	add(p, KIND_FDB, OP_FDB_ADD, PHASE_NEIGH, VERB_CREATE, "vs300");
	/* an FDB entry of a link that was not recreated */
	add(p, KIND_FDB, OP_FDB_ADD, PHASE_NEIGH, VERB_CREATE, "vx200");
	/* a link the definition no longer has */
	op = add(p, KIND_LINK, OP_LINK_DELETE, PHASE_DELETE, VERB_DELETE, "");
	op_delete_names(op, "bridge", "vnet900");
	/* no link name: the guard's table, changed and restored */
	add(p, KIND_GUARD, OP_FIREWALL_SET, PHASE_GUARD, VERB_CHANGE, "");
	op = add(p, KIND_FABRIC, OP_LINK_CHANGE, PHASE_FABRIC_LINK, VERB_CHANGE, "wgfab0");
	op_detail(op, "mtu 1500 -> 1440");
}

static void test_plan_drift(void)
{
	struct plan p;
	char *out;

	drift_plan(&p);
	out = plan_log(&p, REASON_KERNEL);
	CHECK_STR(out,
		  "bridge vnet300: recreated (drift: missing)\n"
		  "vxlan vx100: recreated with 2 settings (drift: missing)\n"
		  "vxlan vs300: recreated with 2 settings (drift: missing)\n"
		  "fdb vx200 remote 192.0.2.12: added again (drift: missing)\n"
		  "bridge vnet900: removed (drift: not in the definition)\n"
		  "nftables table inet fabricd: restored (drift: changed out of band)\n"
		  "fabric wgfab0: mtu 1500 -> 1440 (drift: changed out of band)\n",
		  "drift, collapsed per recreated link");
	free(out);
	out = plan_log(&p, REASON_DEFINITION | REASON_KERNEL);
	CHECK(!out || !out[0], "a new definition's plan is summed up, not listed: %s", out);
	free(out);
	/* what failed, or was not tried after a failure, is not said to be repaired */
	for (size_t i = 0; i < p.n; i++) {
		if (p.ops[i].type == OP_VXLAN_CREATE && !strcmp(p.ops[i].ifname, "vx100"))
			p.ops[i].failed = true;
		if (p.ops[i].phase == PHASE_NEIGH || p.ops[i].phase == PHASE_FABRIC_LINK)
			p.ops[i].skipped = true;
	}
	out = plan_log(&p, REASON_KERNEL);
	CHECK_STR(out,
		  "bridge vnet300: recreated (drift: missing)\n"
		  "vxlan vs300: recreated with 1 setting (drift: missing)\n"
		  "bridge vnet900: removed (drift: not in the definition)\n"
		  "nftables table inet fabricd: restored (drift: changed out of band)\n",
		  "only what was done");
	free(out);
	for (size_t i = 0; i < p.n; i++)
		p.ops[i].failed = p.ops[i].skipped = false;
	out = plan_log(&p, REASON_RETIRE);
	CHECK(out && strstr(out, "vxlan vx100: isolated\n") &&
		  strstr(out, "vxlan vs300: removed\n") &&
		  strstr(out, "fdb vx100 remote 192.0.2.12: create\n"),
	      "a due switch stage lists its changes: %s", out);
	free(out);
	plan_free(&p);
}

/* Only the first create of a name is its creator; an earlier op of that name comes with it. */
static void test_plan_creator(void)
{
	struct plan p;
	struct op *op;
	char *out;

	plan_init(&p, "fabricd:test");
	op = add(&p, KIND_LINK, OP_LINK_DELETE, PHASE_DELETE, VERB_DELETE, "vx1");
	op_delete_names(op, "vxlan", "vx1");
	add(&p, KIND_VXLAN, OP_VXLAN_CREATE, PHASE_VXLAN, VERB_CREATE, "vx1");
	add(&p, KIND_VXLAN, OP_VXLAN_CREATE, PHASE_VXLAN, VERB_CREATE, "vx1");
	add(&p, KIND_BRIDGE, OP_LINK_CHANGE, PHASE_LINKS, VERB_CHANGE, "vnet1");
	add(&p, KIND_BRIDGE, OP_BRIDGE_CREATE, PHASE_LINKS, VERB_CREATE, "vnet1");
	add(&p, KIND_FABRIC, OP_WG_CREATE, PHASE_WG_CREATE, VERB_CREATE, "wgfab0");
	add(&p, KIND_FDB, OP_FDB_ADD, PHASE_NEIGH, VERB_CREATE, "");
	add(&p, KIND_FDB, OP_FDB_ADD, PHASE_NEIGH, VERB_CREATE, "");
	out = plan_log(&p, REASON_KERNEL);
	CHECK_STR(out,
		  "vxlan vx1: recreated with 2 settings (drift: missing)\n"
		  "bridge vnet1: recreated with 1 setting (drift: missing)\n"
		  "fabric wgfab0: recreated (drift: missing)\n"
		  "fdb  remote 192.0.2.12: added again (drift: missing)\n"
		  "fdb  remote 192.0.2.12: added again (drift: missing)\n",
		  "the first create is the creator, the other ops of its name count");
	free(out);
	plan_free(&p);
}

/* The scans report.c had before its index: the reference for the random plans. */
static const struct op *ref_creator(const struct plan *p, const char *ifname)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct op *op = &p->ops[i];

		if ((op->type == OP_WG_CREATE || op->type == OP_BRIDGE_CREATE ||
		     op->type == OP_VXLAN_CREATE) &&
		    !strcmp(op->ifname, ifname))
			return op;
	}
	return NULL;
}

static void ref_report_retire(const struct op *op)
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

static void ref_report_drift(const struct plan *p, const struct op *op)
{
	const struct op *made = op->ifname[0] ? ref_creator(p, op->ifname) : NULL;
	size_t with = 0;
	struct op_text t;

	if (made && made != op)
		return;
	op_describe(op, &t);
	if (made) {
		for (size_t i = 0; i < p->n; i++)
			with += &p->ops[i] != op && !strcmp(p->ops[i].ifname, op->ifname);
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

static void ref_report_plan(const struct plan *p, unsigned int reasons)
{
	bool drift = !(reasons & (REASON_STARTUP | REASON_DEFINITION));
	bool stage = (reasons & REASON_RETIRE) &&
		     (!(reasons & (REASON_KERNEL | REASON_PEERS)) || (reasons & REASON_RETRY));

	for (size_t i = 0; i < p->n; i++) {
		const struct op *op = &p->ops[i];

		if (op->phase == PHASE_RETIRE || op->phase == PHASE_SEAL || stage)
			ref_report_retire(op);
		else if (drift)
			ref_report_drift(p, op);
	}
}

/* Up to 200 ops of names from a pool of pool (and ""), of the types a drift plan has. */
static void random_plan(struct plan *p, unsigned int pool)
{
	static const struct {
		int kind;
		enum op_type type;
	} types[] = {
	    {KIND_BRIDGE, OP_BRIDGE_CREATE}, {KIND_VXLAN, OP_VXLAN_CREATE},
	    {KIND_FABRIC, OP_WG_CREATE},     {KIND_BRIDGE, OP_LINK_CHANGE},
	    {KIND_FDB, OP_FDB_ADD},	     {KIND_LINK, OP_LINK_DELETE},
	};
	static const enum op_verb verbs[] = {VERB_CREATE, VERB_CHANGE, VERB_DELETE};
	static const enum op_phase phases[] = {PHASE_DELETE, PHASE_LINKS, PHASE_VXLAN, PHASE_NEIGH,
					       PHASE_RETIRE};
	size_t n = rnd(201);

	plan_init(p, "fabricd:test");
	for (size_t i = 0; i < n; i++) {
		unsigned int t = rnd(6), k = rnd(pool + 1);
		char name[16] = "";
		struct op *op;

		if (k < pool)
			snprintf(name, sizeof(name), "l%u", k);
		op = add(p, types[t].kind, types[t].type, phases[rnd(8) < 7 ? rnd(4) : 4],
			 verbs[rnd(3)], name);
		if (types[t].type == OP_LINK_DELETE)
			op_delete_names(op, "vxlan", name[0] ? name : "gone");
	}
}

static void test_plan_random(void)
{
	static const unsigned int reasons[] = {REASON_KERNEL, REASON_PEERS | REASON_SETTLE,
					       REASON_KERNEL | REASON_RETIRE, REASON_RETIRE,
					       REASON_STARTUP};

	size_t with = 0, alone = 0, again = 0;

	for (int round = 0; round < 300; round++) {
		unsigned int why = reasons[rnd(5)];
		struct plan p;
		char *got, *want;

		random_plan(&p, 1 + rnd(40));
		got = plan_log(&p, why);
		log_capture_begin();
		ref_report_plan(&p, why);
		want = log_capture_end();
		CHECK_STR(got ? got : "", want ? want : "", "round %d, reasons %#x", round, why);
		with += want && strstr(want, ": recreated with ");
		alone += want && strstr(want, ": recreated (");
		again += want && strstr(want, ": added again ");
		free(got);
		free(want);
		plan_free(&p);
	}
	CHECK(with > 10 && alone > 10 && again > 10, "the rounds cover it: %zu %zu %zu", with,
	      alone, again);
}

/*
 * The daemon's status once converged: a definition file that is not valid
 * (the last good one in force) is said before a held vnet or a fabric that
 * does not answer, as before a plain "converged" (it was left out there).
 */
static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void test_converged_words(void)
{
	static struct session s;
	char buf[512];

	snprintf(s.node, sizeof(s.node), "%s", "pve1");
	s.want.n_vnets = 2;
	s.r.n_held = 1;
	report_converged(&s, true, buf, sizeof(buf));
	CHECK(starts(buf, "definition not valid, last good one in force; pve1: 1 of 2 vnets held"),
	      "held: %s", buf);
	report_converged(&s, false, buf, sizeof(buf));
	CHECK(starts(buf, "pve1: 1 of 2 vnets held"), "held, valid: %s", buf);
	s.r.n_held = 0;
	s.have.wg_error = true;
	report_converged(&s, true, buf, sizeof(buf));
	CHECK(strstr(buf, "definition not valid") && strstr(buf, "does not answer"), "hung: %s",
	      buf);
	s.have.wg_error = false;
	report_converged(&s, true, buf, sizeof(buf));
	CHECK(strstr(buf, "definition not valid") && strstr(buf, "converged"), "converged: %s",
	      buf);
}

int main(void)
{
	test_vnets();
	test_evpn_changes();
	test_member_changes();
	test_vnet_duplicates();
	test_vnets_random();
	test_plan_drift();
	test_plan_creator();
	test_plan_random();
	test_converged_words();
	return unit_summary("test_report");
}
