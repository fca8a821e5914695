// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_plan.c - the planner against a recorded kernel state.
 *
 * tests/fixtures/nl/two-node/ holds what node pve1 of cluster.json looked
 * like after `fabricd apply` (recorded with tests/tools/nlrecord: raw
 * rtnetlink dumps and the wireguard-go UAPI answer). Parsed back, it must
 * plan nothing; each change of the definition or of the kernel state must
 * plan exactly the ops that change, and touch nothing else.
 */
#include <errno.h>
#include <linux/if_bridge.h>
#include <linux/fib_rules.h>
#include <linux/netconf.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "definition/config.h"
#include "definition/desired.h"
#include "engine/reconcile.h"
#include "engine/switch.h"
#include "kinds/carry.h"
#include "kinds/fabric.h"
#include "kinds/guard.h"
#include "kinds/kind.h"
#include "unit.h"

/* What op changes, as `plan` shows it. */
static const char *detail_of(const struct op *op)
{
	static struct op_text t;

	op_describe(op, &t);
	return t.detail;
}

/* What op acts on, as `plan` shows it ("vxlan vx100"). */
static const char *object_of(const struct op *op)
{
	static struct op_text t;

	op_describe(op, &t);
	return t.object;
}

/* The alias a link change sets ("" when none). */
static const char *alias_of(const struct op *op)
{
	return (op->u.link.mask & LINK_SET_ALIAS) && op->text ? op->text : "";
}

#include "wireguard/uapi.h"

#define FIXTURE "tests/fixtures/nl/two-node/"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = calloc(1, (size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* Calls fn for each netlink message of a recorded dump. */
static void for_each_msg(const char *path, void (*fn)(const struct nlmsghdr *, void *), void *data)
{
	size_t len = 0;
	char *buf = slurp(path, &len);
	int left = (int)len;

	CHECK(buf != NULL, "fixture %s", path);
	for (const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
	     buf && mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left))
		fn(nlh, data);
	free(buf);
}

/* A recorded link's alias replaced, as the kernel would report it after a change. */
static void __attribute__((format(printf, 2, 3)))
set_alias(struct link_obs *l, const char *fmt, ...)
{
	char alias[LINK_ALIAS_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(alias, sizeof(alias), fmt, ap);
	va_end(ap);
	CHECK_INT(link_set_alias(l, alias), 0, "alias of %s", l->name);
}

static void add_link(const struct nlmsghdr *nlh, void *data)
{
	struct link_table *t = data;
	struct link_obs l;

	if (link_parse(nlh, &l) < 0)
		return;
	CHECK_INT(link_own_alias(&l), 0, "the fixture's alias, owned by its table");
	t->links = realloc(t->links, (t->n + 1) * sizeof(*t->links));
	t->links[t->n++] = l;
}

static void add_fdb(const struct nlmsghdr *nlh, void *data)
{
	struct fdb_table *t = data;
	struct fdb_entry e;

	if (fdb_parse(nlh, &e) <= 0)
		return;
	CHECK_INT(fdb_table_add(t, &e), 0, "an FDB entry of the fixture");
}

struct addr_ctx {
	int ifindex;
	struct ifaddr_table *t;
};

static void add_addr(const struct nlmsghdr *nlh, void *data)
{
	struct addr_ctx *ctx = data;
	struct ifaddr_entry e;

	if (ifaddr_parse(nlh, &e) < 0 || e.ifindex != ctx->ifindex)
		return;
	ctx->t->entries = realloc(ctx->t->entries, (ctx->t->n + 1) * sizeof(*ctx->t->entries));
	ctx->t->entries[ctx->t->n++] = e;
}

/*
 * Every test runs twice: on the tables as the recording fills them (in dump
 * order, searched linearly), and as engine/observe.c leaves them (the links
 * indexed by name, the FDB entries sorted), which the lookups bisect.
 */
static bool as_observed;

struct fixture {
	struct cluster *c;
	struct reconcile r;
	struct observed have;
	struct node_state want; /* of the last plan_for: its ops borrow from it */
};

/*
 * The recording predates the standby devices (engine/switch.c): a plain
 * vnet's secure device, mute, as fabricd makes it next to vx100.
 */
static void add_standby(struct fixture *f, const char *plain, const char *name)
{
	const struct link_obs *vx = link_find(&f->have.links, plain);
	struct link_obs vs;

	CHECK(vx != NULL, "recorded %s", plain);
	if (!vx)
		return;
	vs = *vx;
	snprintf(vs.name, sizeof(vs.name), "%s", name);
	vs.ifindex = 1000;
	vs.port = f->c->fabric.secure_port;
	vs.local = f->c->nodes[0].fabric_address;
	vs.port_learning = false;
	vs.port_flood = 0;
	CHECK_INT(link_own_alias(&vs), 0, "its own copy of the alias");
	f->have.links.links =
	    realloc(f->have.links.links, (f->have.links.n + 1) * sizeof(*f->have.links.links));
	f->have.links.links[f->have.links.n++] = vs;
}

/*
 * The recording predates the prefix route check (kinds/ifaddr.c): the
 * route the kernel made with the fabric address, as observe.c reads it.
 */
static void add_prefix_route(struct fixture *f)
{
	struct ifaddr_table *t = &f->have.fabric_addrs;

	CHECK(t->n > 0, "a recorded fabric address");
	if (!t->n)
		return;
	t->routes = realloc(t->routes, (t->n_routes + 1) * sizeof(*t->routes));
	t->routes[t->n_routes++] = ip_prefix_network(&t->entries[0].prefix);
}

/*
 * The recording predates the VXLAN ports as permanent multicast router ports
 * (kinds/vxlan.c): as fabricd now makes them.
 */
static void add_mcast_router(struct fixture *f)
{
	for (size_t i = 0; i < f->have.links.n; i++) {
		struct link_obs *l = &f->have.links.links[i];

		if (!strcmp(l->kind, "vxlan") && !strcmp(l->slave_kind, "bridge"))
			l->port_mcast_router = MDB_RTR_TYPE_PERM;
	}
}

static void fixture_load(struct fixture *f)
{
	struct addr_ctx actx;
	const struct link_obs *wg;
	struct diag d;
	size_t len = 0;
	char *uapi;

	memset(f, 0, sizeof(*f));
	diag_init(&d);
	CHECK_INT(config_load_file(FIXTURE "cluster.json", &f->c, &d), 0, "fixture definition");
	diag_free(&d);
	snprintf(f->r.owner, sizeof(f->r.owner), "fabricd:%s", f->c->name);
	f->r.backend = WG_BACKEND_USERSPACE;
	f->r.grace = 30;
	f->r.now = 1000;
	memcpy(f->r.public_key, f->c->nodes[0].public_key, WG_KEY_LEN);
	for_each_msg(FIXTURE "links.nl", add_link, &f->have.links);
	for_each_msg(FIXTURE "fdb.nl", add_fdb, &f->have.fdb);
	wg = link_find(&f->have.links, "wgfab0");
	CHECK(wg != NULL, "recorded wgfab0");
	actx.ifindex = wg ? wg->ifindex : -1;
	actx.t = &f->have.fabric_addrs;
	for_each_msg(FIXTURE "addrs.nl", add_addr, &actx);
	add_prefix_route(f);
	uapi = slurp(FIXTURE "wgfab0.uapi", &len);
	f->have.wg = calloc(1, sizeof(*f->have.wg));
	CHECK_INT(wg_uapi_parse_get(uapi, f->have.wg), 0, "recorded UAPI answer");
	free(uapi);
	add_mcast_router(f);
	add_standby(f, "vx100", "vs100");
	/* the recording leaves the private key out; the device runs pve1's */
	memcpy(f->have.wg->public_key, f->c->nodes[0].public_key, WG_KEY_LEN);
	f->have.wg->flags |= WGDEVICE_HAS_PUBLIC_KEY;
}

static void fixture_free(struct fixture *f)
{
	desired_free(&f->want);
	free(f->r.psk);
	observed_free(&f->have);
	cluster_free(f->c);
}

/* Plans pve1 of f->c against f->have; returns plan_build's result. */
static int plan_for(struct fixture *f, struct plan *p, struct diag *d)
{
	int ret;

	plan_init(p, f->r.owner);
	desired_free(&f->want);
	ret = desired_build(f->c, 0, 1500, &f->want, d);
	if (ret < 0)
		return ret;
	if (as_observed) {
		/* after each test's changes to the tables, as a fresh dump would be */
		CHECK_INT(link_table_index(&f->have.links), 0, "link index");
		fdb_table_sort(&f->have.fdb);
	}
	ret = plan_build(&f->r, &f->want, &f->have, p, d);
	/*
	 * The recording predates the nftables guard, so every plan would also
	 * create it; the guard's own planning is tested in test_firewall.c and
	 * tests/integration/test_guard.py. Here: links, FDB, addresses, peers.
	 */
	size_t kept = 0;

	for (size_t i = 0; i < p->n; i++) {
		if (p->ops[i].type != OP_FIREWALL_SET && p->ops[i].type != OP_FIREWALL_DELETE)
			p->ops[kept++] = p->ops[i];
		else {
			free(p->ops[i].text);
			free(p->ops[i].note);
		}
	}
	p->n = kept;
	return ret;
}

static size_t count_ops(const struct plan *p, enum op_type type)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += p->ops[i].type == type;
	return n;
}

static bool all_objects_mention(const struct plan *p, const char *text)
{
	for (size_t i = 0; i < p->n; i++) {
		if (!strstr(object_of(&p->ops[i]), text))
			return false;
	}
	return true;
}

static void test_converged(void)
{
	struct fixture f;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	diag_init(&d);
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK_INT(p.n, 0, "a converged node plans nothing");
	if (p.n)
		plan_print(&p, stderr);
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/*
 * A VXLAN port that is not (or no longer) a permanent multicast router port,
 * or that someone left up but disabled: one change of that port, and of
 * nothing else.
 */
static void test_port_options(void)
{
	struct fixture f;
	struct link_obs *vx;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	diag_init(&d);
	vx = (struct link_obs *)link_find(&f.have.links, "vx100");
	CHECK(vx != NULL, "recorded vx100");
	if (!vx) {
		fixture_free(&f);
		return;
	}
	vx->port_mcast_router = MDB_RTR_TYPE_TEMP_QUERY; /* the kernel's default */
	vx->port_state_known = true;
	vx->port_state = BR_STATE_DISABLED;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK_INT(p.n, 1, "one op");
	if (p.n == 1) {
		CHECK_STR(object_of(&p.ops[0]), "vxlan vx100", "on vx100");
		CHECK_INT(p.ops[0].u.link.mask & (LINK_SET_MCAST_ROUTER | LINK_SET_FORWARDING),
			  LINK_SET_MCAST_ROUTER | LINK_SET_FORWARDING, "both");
		CHECK(strstr(detail_of(&p.ops[0]), "multicast router port") &&
			  strstr(detail_of(&p.ops[0]), "forwarding again"),
		      "said: %s", detail_of(&p.ops[0]));
	}
	plan_free(&p);
	/* a disabled port of a bridge that is down is the kernel's doing: only the bridge */
	vx->port_mcast_router = MDB_RTR_TYPE_PERM;
	((struct link_obs *)link_find(&f.have.links, "vnet100"))->flags &= ~IFF_UP;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK(p.n == 1 && !strcmp(object_of(&p.ops[0]), "bridge vnet100"), "the bridge up");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

static void test_add_vnet(void)
{
	struct fixture f;
	struct plan p;
	struct diag d;
	struct zone *z;

	fixture_load(&f);
	diag_init(&d);
	z = &f.c->zones[0];
	z->vnets = realloc(z->vnets, (z->n_vnets + 1) * sizeof(*z->vnets));
	memset(&z->vnets[z->n_vnets], 0, sizeof(z->vnets[0])); /* every field, "replaces" too */
	snprintf(z->vnets[z->n_vnets].name, sizeof(z->vnets[0].name), "vnet300");
	z->vnets[z->n_vnets++].vni = 300;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK_INT(count_ops(&p, OP_BRIDGE_CREATE), 1, "one bridge");
	CHECK_INT(count_ops(&p, OP_VXLAN_CREATE), 2, "vx300 and its standby vs300");
	CHECK_INT(count_ops(&p, OP_FDB_ADD), 1, "one remote");
	CHECK(all_objects_mention(&p, "300"), "only vnet300's objects change");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/* The ops of p (or p->later) on object, of a type; the first one, or NULL. */
static const struct op *find_op(const struct op *ops, size_t n, enum op_type type,
				const char *object)
{
	for (size_t i = 0; i < n; i++) {
		if (ops[i].type == type && !strcmp(object_of(&ops[i]), object))
			return &ops[i];
	}
	return NULL;
}

/* The first OP_LINK_CHANGE on object whose mask has bit, or NULL. */
static const struct op *find_change(const struct plan *p, const char *object, unsigned int bit)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->ops[i].type == OP_LINK_CHANGE && !strcmp(object_of(&p->ops[i]), object) &&
		    (p->ops[i].u.link.mask & bit))
			return &p->ops[i];
	}
	return NULL;
}

/* Counts ops of a type on one object. */
static size_t count_on(const struct plan *p, enum op_type type, const char *object)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += p->ops[i].type == type && strstr(object_of(&p->ops[i]), object) != NULL;
	return n;
}

/*
 * vnet200 secure -> plain: secure keeps sending until the grace period ends
 * (everyone can receive it); vx200 is made listening. Without a grace period
 * vx200 sends at once and vs200 becomes the standby.
 */
static void test_switch_to_plain(unsigned int grace)
{
	const struct op *op;
	struct fixture f;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	f.r.grace = grace;
	diag_init(&d);
	f.c->zones[1].transport = TRANSPORT_PLAIN;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK_INT(count_ops(&p, OP_VXLAN_CREATE), 1, "vx200 is made");
	CHECK_INT(count_on(&p, OP_FDB_ADD, "vx200"), grace ? 0 : 1, "vx200's remote");
	CHECK_INT(count_on(&p, OP_FDB_DEL, "vs200"), grace ? 0 : 1, "vs200's remote");
	CHECK_INT(count_ops(&p, OP_BRIDGE_CREATE) + count_ops(&p, OP_LINK_DELETE), 0,
		  "the bridge stays, nothing goes");
	CHECK_INT(count_ops(&p, OP_WG_PEER) + count_ops(&p, OP_WG_DEVICE), 0, "fabric untouched");
	CHECK(all_objects_mention(&p, "200"), "only vnet200's devices change");
	op = find_change(&p, "vxlan vx200", LINK_SET_FLOOD);
	CHECK(grace ? op && !op->u.link.flood && op->phase == PHASE_VXLAN : !op,
	      "vx200 listens (no flooding) while vs200 holds");
	op = find_change(&p, "vxlan vs200", LINK_SET_ALIAS);
	CHECK(grace ? op && !strcmp(alias_of(op), "fabricd:lab secure-until=1031 grace=30 at=31")
		    : !op,
	      "hold note on vs200: %s", op ? alias_of(op) : "none");
	op = find_change(&p, "vxlan vs200", LINK_SET_FLOOD);
	CHECK(grace ? !op
		    : op && !op->u.link.flood && !op->u.link.learning &&
			  (op->u.link.mask & LINK_SET_FLUSH) && op->phase == PHASE_RETIRE,
	      "vs200 turns mute standby only after vx200 took over");
	CHECK_INT(p.n_later, grace ? 2 : 0, "the swap is due later");
	CHECK_INT(plan_next_due(&p), grace ? 31 : 0, "at the end of the grace period");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/*
 * vnet100 plain -> secure: the standby vs100 sends at once; vx100 turns mute
 * (receives only, learned entries flushed) after vs100 has its remote, and
 * goes when the grace period ends.
 */
static void test_switch_to_secure(unsigned int grace)
{
	const struct op *op;
	struct fixture f;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	f.r.grace = grace;
	diag_init(&d);
	f.c->zones[0].transport = TRANSPORT_SECURE;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK_INT(count_ops(&p, OP_VXLAN_CREATE), 0, "the standby is there already");
	CHECK_INT(count_on(&p, OP_FDB_ADD, "vs100"), 1, "vs100 takes the remote");
	CHECK(all_objects_mention(&p, "100"), "only vnet100's devices change");
	op = find_change(&p, "vxlan vs100", LINK_SET_FLOOD);
	CHECK(op && op->u.link.flood && op->phase == PHASE_VXLAN, "vs100 floods at once");
	if (!grace) {
		op = find_op(p.ops, p.n, OP_LINK_DELETE, "vxlan vx100");
		CHECK(op && op->phase == PHASE_RETIRE,
		      "no grace: vx100 goes after vs100 took over");
		goto out;
	}
	CHECK_INT(count_on(&p, OP_FDB_DEL, "vx100"), 1, "vx100 loses its remote");
	CHECK_INT(count_ops(&p, OP_LINK_DELETE), 0, "vx100 stays for the grace period");
	op = find_change(&p, "vxlan vx100", LINK_SET_ALIAS);
	CHECK(op && !strcmp(alias_of(op), "fabricd:lab retire-after=1031 grace=30 at=31"),
	      "retire note on vx100");
	op = find_change(&p, "vxlan vx100", LINK_SET_FLUSH);
	CHECK(op && !op->u.link.learning && !op->u.link.flood && op->phase == PHASE_RETIRE,
	      "vx100 mute once vs100 sends");
	op = find_op(p.later, p.n_later, OP_LINK_DELETE, "vxlan vx100");
	CHECK(op && op->due == 31, "vx100 removed at the end of the grace period");
out:
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/* Plans f at boot_now; whether vx100 goes now, and the next due time. */
static void check_retire_at(struct fixture *f, long long boot_now, bool delete_now,
			    long long next_due)
{
	const struct op *del, *later_del;
	struct plan p;
	struct diag d;

	diag_init(&d);
	f->r.boot_now = boot_now;
	CHECK_INT(plan_for(f, &p, &d), 0, "plan at %lld", boot_now);
	del = find_op(p.ops, p.n, OP_LINK_DELETE, "vxlan vx100");
	later_del = find_op(p.later, p.n_later, OP_LINK_DELETE, "vxlan vx100");
	CHECK(!!del == delete_now && !!later_del == !delete_now, "at %lld: deletion", boot_now);
	CHECK(!find_change(&p, "vxlan vx100", LINK_SET_ALIAS | LINK_SET_FLOOD | LINK_SET_LEARNING),
	      "at %lld: a mute device stays as it is", boot_now);
	CHECK_INT(plan_next_due(&p), next_due, "next wake-up at %lld", boot_now);
	plan_free(&p);
	diag_free(&d);
}

/* The recorded note decides, whatever --grace is now. */
static void test_retire_stage(void)
{
	struct fixture f;
	struct link_obs *vx;

	fixture_load(&f);
	f.c->zones[0].transport = TRANSPORT_SECURE; /* vnet100: plain -> secure, a while ago */
	vx = (struct link_obs *)link_find(&f.have.links, "vx100");
	CHECK(vx != NULL && !strcmp(vx->slave_kind, "bridge") && vx->port_learning,
	      "recorded vx100, a learning bridge port");
	if (!vx) {
		fixture_free(&f);
		return;
	}
	set_alias(vx, "%s retire-after=1030 grace=10 at=110", f.r.owner);
	vx->port_learning = false;
	vx->port_flood = 0;
	f.r.now = 1020;
	f.r.grace = 60;
	check_retire_at(&f, 100, false, 110);
	check_retire_at(&f, 109, false, 110);
	check_retire_at(&f, 110, true, 0);
	/* a note from before grace= and at=: its epoch deadline (boottime 110 here) */
	set_alias(vx, "%s retire-after=1030", f.r.owner);
	f.r.grace = 30;
	check_retire_at(&f, 100, false, 110);
	fixture_free(&f);
}

/*
 * vnet100 plain, vs100 holding with "secure-until=1030 grace=10 at=110":
 * vs100 sends until 110, vx100 listens; then they swap.
 */
static void test_hold_stage(void)
{
	const struct op *op;
	struct link_obs *vs;
	struct fixture f;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	vs = (struct link_obs *)link_find(&f.have.links, "vs100");
	set_alias(vs, "%s secure-until=1030 grace=10 at=110", f.r.owner);
	vs->port_flood = LINK_FLOOD_ALL;
	vs->port_learning = true;
	f.r.now = 1020;
	diag_init(&d);
	f.r.boot_now = 105;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan while holding");
	CHECK(!find_change(&p, "vxlan vs100", LINK_SET_ALIAS | LINK_SET_FLOOD),
	      "vs100 keeps sending, its note kept");
	CHECK_INT(count_on(&p, OP_FDB_ADD, "vs100"), 1, "with the members' fabric addresses");
	op = find_change(&p, "vxlan vx100", LINK_SET_FLOOD);
	CHECK(op && !op->u.link.flood, "vx100 listens");
	CHECK_INT(count_on(&p, OP_FDB_DEL, "vx100"), 1, "and has no remotes");
	CHECK_INT(plan_next_due(&p), 110, "the swap at 110");
	plan_free(&p);

	f.r.boot_now = 110;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan at the end");
	op = find_change(&p, "vxlan vs100", LINK_SET_FLOOD);
	CHECK(op && !op->u.link.flood && !op->u.link.learning &&
		  (op->u.link.mask & LINK_SET_FLUSH) && op->phase == PHASE_RETIRE,
	      "vs100 back to the mute standby, its learned entries flushed");
	op = find_change(&p, "vxlan vs100", LINK_SET_ALIAS);
	CHECK(op && !strcmp(alias_of(op), "fabricd:lab"), "its note goes");
	CHECK(p.n == 2 && p.n_later == 0, "vx100 as recorded sends: nothing else");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/*
 * A run killed between creating the standby vs100 and setting its port
 * options leaves it with the new port's defaults (learning, flooding) but no
 * remotes: it never sent, so it becomes the mute standby, no hold stage.
 */
static void test_standby_left_by_a_killed_run(void)
{
	const struct op *op;
	struct link_obs *vs;
	struct fixture f;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	vs = (struct link_obs *)link_find(&f.have.links, "vs100");
	vs->port_flood = LINK_FLOOD_ALL;
	vs->port_learning = true;
	diag_init(&d);
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK(!find_change(&p, "vxlan vs100", LINK_SET_ALIAS), "no hold note");
	op = find_change(&p, "vxlan vs100", LINK_SET_FLOOD);
	CHECK(op && !op->u.link.flood && !op->u.link.learning, "made mute");
	CHECK(!find_change(&p, "vxlan vx100", LINK_SET_FLOOD), "vx100 keeps sending");
	CHECK_INT(p.n_later, 0, "no stage");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/* Back to plain before vx100's grace period ended: vs100 holds, vx100 listens again. */
static void test_switch_back(void)
{
	const struct op *op;
	struct link_obs *vx, *vs;
	struct fdb_entry remote = {0};
	bool sorted;
	struct fixture f;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	vx = (struct link_obs *)link_find(&f.have.links, "vx100");
	vs = (struct link_obs *)link_find(&f.have.links, "vs100");
	set_alias(vx, "%s retire-after=1030 grace=30 at=110", f.r.owner);
	vx->port_learning = false;
	vx->port_flood = 0;
	vs->port_flood = LINK_FLOOD_ALL;
	vs->port_learning = true;
	/* vs100 sends: it has pve2's fabric address as its remote */
	sorted = f.have.fdb.sorted;
	remote.ifindex = vs->ifindex;
	ip_addr_parse("10.255.0.2", &remote.dst);
	CHECK_INT(fdb_table_add(&f.have.fdb, &remote), 0, "vs100's remote");
	if (sorted)
		fdb_table_sort(&f.have.fdb); /* as observe leaves it */
	f.r.now = 1000;
	f.r.boot_now = 100;
	diag_init(&d);
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	op = find_change(&p, "vxlan vs100", LINK_SET_ALIAS);
	CHECK(op && !strcmp(alias_of(op), "fabricd:lab secure-until=1031 grace=30 at=131"),
	      "vs100 holds for a new grace period: %s", op ? alias_of(op) : "none");
	op = find_change(&p, "vxlan vx100", LINK_SET_ALIAS);
	CHECK(op && !strcmp(alias_of(op), "fabricd:lab"), "vx100 no longer retiring");
	op = find_change(&p, "vxlan vx100", LINK_SET_LEARNING);
	CHECK(op && op->u.link.learning && op->phase == PHASE_VXLAN &&
		  !(op->u.link.mask & LINK_SET_FLOOD),
	      "vx100 listens again (learning, no flooding)");
	CHECK_INT(count_ops(&p, OP_LINK_DELETE), 0, "nothing goes");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

static void test_remove_node(void)
{
	struct fixture f;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	diag_init(&d);
	f.c->n_nodes = 1; /* pve2 leaves; zones default to every node */
	for (size_t z = 0; z < f.c->n_zones; z++)
		f.c->zones[z].n_members = 1;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK_INT(count_ops(&p, OP_WG_PEER), 1, "its peer goes");
	CHECK(p.n && p.ops[0].u.peer.flags & WGPEER_REMOVE_ME, "removed one by one, not replaced");
	CHECK_INT(count_ops(&p, OP_FDB_DEL), 2, "its remote goes from both vnets");
	CHECK_INT(p.n, 3, "nothing else");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

static void test_kernel_drift(void)
{
	struct fixture f;
	struct plan p;
	struct diag d;
	struct link_obs *br;

	fixture_load(&f);
	diag_init(&d);
	br = (struct link_obs *)link_find(&f.have.links, "vnet100");
	br->mtu = 1500;
	fdb_table_free(&f.have.fdb); /* every remote deleted out of band */
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK_INT(count_ops(&p, OP_LINK_CHANGE), 1, "bridge mtu");
	CHECK(p.n && strstr(detail_of(&p.ops[0]), "mtu 1500 -> 1390"), "detail: %s",
	      p.n ? detail_of(&p.ops[0]) : "");
	CHECK_INT(count_ops(&p, OP_FDB_ADD), 2, "remotes restored");
	CHECK_INT(p.n, 3, "nothing else");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/*
 * The kernel made vnet100's IPv6 state anew (its MTU was under 1280 and came
 * back): eui64 and a link-local address; vx100's MTU is still under 1280,
 * so it has none yet. STP turned on for vnet200. Each is put back.
 */
static void test_ipv6_state_and_stp(void)
{
	struct link_obs *br, *vx, *br200;
	const struct op *op;
	struct fixture f;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	diag_init(&d);
	br = (struct link_obs *)link_find(&f.have.links, "vnet100");
	vx = (struct link_obs *)link_find(&f.have.links, "vx100");
	br200 = (struct link_obs *)link_find(&f.have.links, "vnet200");
	br->addr_gen_mode = IN6_ADDR_GEN_MODE_EUI64;
	vx->mtu = 1200;
	vx->addr_gen_known = false;
	br200->bridge_stp = true;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	op = find_change(&p, "bridge vnet100", LINK_SET_NO_ADDRGEN);
	CHECK(op && !(op->u.link.mask & LINK_SET_MTU), "vnet100: addrgenmode only");
	CHECK(op && strstr(detail_of(op), "addrgenmode none again, no IPv6 link-local address"),
	      "said: %s", op ? detail_of(op) : "");
	op = find_change(&p, "vxlan vx100", LINK_SET_NO_ADDRGEN);
	CHECK(op && (op->u.link.mask & LINK_SET_MTU) && op->u.link.mtu == 1390,
	      "vx100: its MTU, and the mode its IPv6 state comes back with");
	op = find_change(&p, "bridge vnet200", LINK_SET_NO_STP);
	CHECK(op && strstr(detail_of(op), "stp on -> off"), "vnet200: STP off: %s",
	      op ? detail_of(op) : "");
	CHECK_INT(p.n, 3, "nothing else");
	plan_free(&p);
	/* a link under 1280 bytes that stays there has no IPv6 state to set */
	vx->mtu = 1200;
	CHECK(!link_addrgen_again(vx, 1200), "vx100 at 1200 stays without IPv6 state");
	diag_free(&d);
	fixture_free(&f);
}

/*
 * `bridge fdb append 00:00:00:00:00:00 dev vx100 dst 192.0.2.12 vni 101`, then
 * the plain remote deleted: vx100's frames go to pve2 tagged as VNI 101. The
 * wanted remote is added first, then the odd one removed by all it carries.
 */
static void test_remote_with_another_vni(void)
{
	const struct link_obs *vx;
	struct fdb_table kept;
	struct fdb_entry odd = {0};
	const struct op *add = NULL, *del = NULL;
	struct op_text t;
	struct fixture f;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	diag_init(&d);
	vx = link_find(&f.have.links, "vx100");
	odd.ifindex = vx->ifindex;
	ip_addr_parse("192.0.2.12", &odd.dst);
	odd.x = (struct fdb_extra){.vni = 101, .port = 9999, .has = FDB_HAS_VNI | FDB_HAS_PORT};
	/* vx100's plain remote gone, every other device's kept */
	kept = (struct fdb_table){0};
	for (size_t i = 0; i < f.have.fdb.n_v4; i++) {
		struct fdb_entry e = {0};

		e.ifindex = (int)(f.have.fdb.v4[i] >> 32);
		if (e.ifindex == vx->ifindex)
			continue;
		e.dst.family = AF_INET;
		for (int b = 0; b < 4; b++)
			e.dst.bytes[b] = (uint8_t)(f.have.fdb.v4[i] >> (24 - 8 * b));
		CHECK_INT(fdb_table_add(&kept, &e), 0, "kept");
	}
	CHECK_INT(fdb_table_add(&kept, &odd), 0, "the odd remote");
	CHECK_INT((int)kept.n_odd, 1, "kept apart from the others");
	fdb_table_sort(&kept);
	fdb_table_free(&f.have.fdb);
	f.have.fdb = kept;
	CHECK(!fdb_has(&f.have.fdb, vx->ifindex, &odd.dst), "not taken for the wanted remote");
	CHECK(fdb_has_device(&f.have.fdb, vx->ifindex), "but the device has an entry");
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	for (size_t i = 0; i < p.n; i++) {
		if (p.ops[i].type == OP_FDB_ADD && !add)
			add = &p.ops[i];
		if (p.ops[i].type == OP_FDB_DEL && !del)
			del = &p.ops[i];
	}
	CHECK_INT(p.n, 2, "one add, one delete");
	CHECK(add && del && add < del, "the wanted remote first");
	CHECK(add && !add->u.fdb.x.has, "added as fabricd makes it");
	CHECK(del && del->u.fdb.x.vni == 101 && del->u.fdb.x.port == 9999 &&
		  del->u.fdb.x.has == (FDB_HAS_VNI | FDB_HAS_PORT),
	      "removed by what it carries");
	if (del) {
		op_describe(del, &t);
		CHECK_STR(t.detail, "vni 101, port 9999: not the device's own, set by hand",
			  "what it had");
	}
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/* `ip route del 10.255.0.0/24 dev wgfab0`: the address stays, its route comes back. */
static void test_prefix_route_deleted(void)
{
	struct fixture f;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	diag_init(&d);
	f.have.fabric_addrs.n_routes = 0;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK_INT(p.n, 1, "the route alone");
	if (p.n == 1) {
		CHECK_INT(p.ops[0].type, OP_PREFIX_ROUTE, "a prefix route");
		CHECK_STR(object_of(&p.ops[0]), "route 10.255.0.0/24 dev wgfab0", "its object");
		CHECK(strstr(detail_of(&p.ops[0]), "drift") != NULL, "drift: %s",
		      detail_of(&p.ops[0]));
	}
	plan_free(&p);
	/* another route through the device does not stand in for it */
	f.have.fabric_addrs.routes[0].len = 16;
	f.have.fabric_addrs.n_routes = 1;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK_INT(count_ops(&p, OP_PREFIX_ROUTE), 1, "a /16 is not the /24");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

static void test_foreign_link(void)
{
	struct fixture f;
	struct plan p;
	struct diag d;
	struct link_obs *br;

	fixture_load(&f);
	diag_init(&d);
	br = (struct link_obs *)link_find(&f.have.links, "vnet100");
	set_alias(br, "%s", "");
	CHECK_INT(plan_for(&f, &p, &d), -EEXIST, "a wanted name held by another owner");
	CHECK(d.n == 1 && strstr(d.msgs[0], "bridge vnet100") && strstr(d.msgs[0], "does not own"),
	      "error names the link: %s", d.n ? d.msgs[0] : "");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/*
 * The daemon's way: vnet100's bridge another owner's holds vnet100 alone (a
 * warning), and vnet200's bridge, down, is still brought up.
 */
static void test_foreign_link_holds_its_vnet(void)
{
	struct fixture f;
	struct plan p;
	struct diag d;
	struct link_obs *br;

	fixture_load(&f);
	diag_init(&d);
	f.r.hold_conflicting_vnets = true;
	br = (struct link_obs *)link_find(&f.have.links, "vnet100");
	set_alias(br, "%s", "");
	br->flags &= ~IFF_UP;
	((struct link_obs *)link_find(&f.have.links, "vnet200"))->flags &= ~IFF_UP;
	CHECK_INT(plan_for(&f, &p, &d), 0, "one vnet's conflict does not stop the plan");
	CHECK_INT((int)f.r.n_held, 1, "vnet100 held");
	CHECK(d.n == 0 && d.n_warnings == 1 && strstr(d.warnings[0], "bridge vnet100") &&
		  strstr(d.warnings[0], "fabricd leaves vnet vnet100 as it is until then"),
	      "said as a warning: %s",
	      d.n_warnings ? d.warnings[0]
	      : d.n	   ? d.msgs[0]
			   : "");
	CHECK(p.n == 1 && !strcmp(object_of(&p.ops[0]), "bridge vnet200"),
	      "vnet200 repaired, nothing of vnet100's touched: %zu ops, %s", p.n,
	      p.n ? object_of(&p.ops[0]) : "");
	plan_free(&p);
	diag_free(&d);
	/* one-shot (apply, plan, status): the same is a conflict that stops everything */
	f.r.hold_conflicting_vnets = false;
	diag_init(&d);
	CHECK_INT(plan_for(&f, &p, &d), -EEXIST, "a conflict without hold");
	CHECK_INT((int)f.r.n_held, 0, "nothing held");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/*
 * The daemon's way, a held vnet's bridge under another name: vnet100's
 * bridge renamed by hand (held100, vx100 still its port) and another
 * owner's link made under vnet100. vnet100 is held, and so is its bridge:
 * it is no unwanted bridge to delete with the guests on it (the daemon did
 * until 2026-12-07).
 */
static void test_held_vnets_renamed_bridge_stays(void)
{
	struct fixture f;
	struct link_obs *br, other;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	diag_init(&d);
	f.r.hold_conflicting_vnets = true;
	br = (struct link_obs *)link_find(&f.have.links, "vnet100");
	CHECK(br != NULL, "recorded vnet100");
	if (!br) {
		fixture_free(&f);
		return;
	}
	other = *br;
	snprintf(br->name, sizeof(br->name), "%s", "held100");
	other.ifindex = 9999;
	other.alias = NULL;
	other.master = 0;
	snprintf(other.kind, sizeof(other.kind), "%s", "dummy");
	f.have.links.links =
	    realloc(f.have.links.links, (f.have.links.n + 1) * sizeof(*f.have.links.links));
	f.have.links.links[f.have.links.n++] = other;
	CHECK_INT(plan_for(&f, &p, &d), 0, "one vnet's conflict does not stop the plan");
	CHECK_INT((int)f.r.n_held, 1, "vnet100 held");
	CHECK_INT(count_ops(&p, OP_LINK_DELETE), 0, "held100, vnet100's bridge, left as it is");
	if (p.n)
		plan_print(&p, stderr);
	plan_free(&p);
	diag_free(&d);
	free(f.r.held); /* plan_build's (reconcile_close frees it in the daemon) */
	f.r.held = NULL;
	fixture_free(&f);
}

static void test_fabric_changes(void)
{
	struct fixture f;
	struct plan p;
	struct diag d;

	fixture_load(&f);
	diag_init(&d);
	f.c->fabric.listen_port = 51999;
	f.c->fabric.keepalive = 10;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK_INT(count_ops(&p, OP_WG_DEVICE), 1, "listen port");
	CHECK(p.n && !(p.ops[0].u.dev.flags & WGDEVICE_HAS_PRIVATE_KEY), "key kept: no re-keying");
	CHECK_INT(count_ops(&p, OP_WG_PEER), 1, "keepalive and endpoint port of pve2");
	for (size_t i = 0; i < p.n; i++) {
		if (p.ops[i].type == OP_WG_PEER)
			CHECK(p.ops[i].u.peer.flags & WGPEER_UPDATE_ONLY, "peer changed in place");
	}
	CHECK_INT(p.n, 2, "nothing else");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/* Whether the len bytes of key occur anywhere in the plan's ops. */
static bool ops_hold(const struct plan *p, const uint8_t *key, size_t len)
{
	const uint8_t *b = (const uint8_t *)p->ops;
	size_t n = p->n * sizeof(*p->ops);

	for (size_t i = 0; i + len <= n; i++) {
		if (!memcmp(b + i, key, len))
			return true;
	}
	return false;
}

/*
 * Issue 17: an op is small and holds no key. A re-keyed device and a peer
 * with a new preshared key take the keys from struct reconcile when applied.
 */
static void test_ops_compact_and_keyless(void)
{
	struct fixture f;
	struct wg_device dev;
	struct wg_peer peer;
	struct op_text t;
	struct plan p;
	struct diag d;
	const struct op *dop = NULL, *pop = NULL;

	CHECK(sizeof(struct op) <= 128, "struct op is %zu bytes", sizeof(struct op));
	fixture_load(&f);
	diag_init(&d);
	memset(f.r.private_key, 0xa5, WG_KEY_LEN);
	f.r.have_key = true;
	memset(f.r.public_key, 0x5a, WG_KEY_LEN); /* not the device's: it is re-keyed */
	f.r.psk_managed = true;
	f.r.n_psk = f.c->n_nodes;
	f.r.psk = calloc(f.c->n_nodes, sizeof(*f.r.psk));
	for (size_t i = 0; f.r.psk && i < f.c->n_nodes; i++)
		memset(f.r.psk[i], 0x3c, WG_KEY_LEN);
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	for (size_t i = 0; i < p.n; i++) {
		if (p.ops[i].type == OP_WG_DEVICE)
			dop = &p.ops[i];
		if (p.ops[i].type == OP_WG_PEER && !pop)
			pop = &p.ops[i];
	}
	CHECK(dop && (dop->u.dev.flags & WGDEVICE_HAS_PRIVATE_KEY), "the device is re-keyed");
	CHECK(pop && (pop->u.peer.flags & WGPEER_HAS_PRESHARED_KEY), "a peer gets its key");
	CHECK(!ops_hold(&p, f.r.private_key, WG_KEY_LEN), "no op holds the private key");
	CHECK(!ops_hold(&p, f.r.psk[0], WG_KEY_LEN), "no op holds a preshared key");
	if (dop) {
		fabric_device_of(dop, f.r.private_key, &dev);
		CHECK(!memcmp(dev.private_key, f.r.private_key, WG_KEY_LEN) &&
			  !strcmp(dev.ifname, "wgfab0"),
		      "applied with the key from struct reconcile");
		explicit_bzero(&dev, sizeof(dev));
		op_describe(dop, &t);
		CHECK_STR(t.object, "fabric wgfab0", "the device's object");
		CHECK_STR(t.detail, "private key from the key file", "its detail");
	}
	if (pop) {
		fabric_peer_of(pop, &peer);
		CHECK(!memcmp(peer.preshared_key, f.r.psk[0], WG_KEY_LEN),
		      "the peer's preshared key from struct reconcile");
		op_describe(pop, &t);
		CHECK_STR(t.object, "peer pve2", "the peer's object");
		CHECK(strstr(t.detail, "preshared key") != NULL, "its detail: %s", t.detail);
	}
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/* link_find: bisected in an indexed table, a scan in one changed since (or never indexed). */
static void test_link_index(void)
{
	static const char *const names[] = {"vx300", "lo", "vnet300", "wgfab0", "vnet10", "eth0"};
	struct link_table t = {0};
	const struct link_obs *l;

	t.links = calloc(8, sizeof(*t.links));
	for (size_t i = 0; i < 6; i++) {
		snprintf(t.links[i].name, sizeof(t.links[i].name), "%s", names[i]);
		t.links[i].ifindex = (int)i + 1;
	}
	t.n = 6;
	CHECK_INT(link_table_index(&t), 0, "index");
	for (size_t i = 0; i < 6; i++) {
		l = link_find(&t, names[i]);
		CHECK(l && l->ifindex == (int)i + 1, "%s found by bisection", names[i]);
	}
	CHECK(!link_find(&t, "vnet3") && !link_find(&t, "zz") && !link_find(&t, "a"),
	      "absent names not found");
	CHECK(!link_find(&t, "vnet300-and-a-long-tail"), "a longer name is another name");
	snprintf(t.links[6].name, sizeof(t.links[6].name), "vnet20");
	t.links[6].ifindex = 7;
	t.n = 7; /* added after the index: found by a scan */
	l = link_find(&t, "vnet20");
	CHECK(l && l->ifindex == 7, "a link added after the index is found");
	CHECK_INT(link_table_index(&t), 0, "index again");
	l = link_find(&t, "vnet20");
	CHECK(l && l->ifindex == 7 && t.n_by_name == 7, "and by bisection once indexed again");
	link_table_free(&t);
	CHECK(!t.by_name && !t.n_by_name && !link_find(&t, "lo"), "freed with its index");
}

/*
 * A failed apply whose every failed op met ENODEV on a link that is gone now
 * was overtaken by a deletion (engine/reconcile.h); anything else failed.
 */
static void test_failed_on_vanished_links(void)
{
	struct op ops[2] = {0};
	struct plan p = {.n = 2, .cap = 2, .ops = ops};

	ops[0].failed = ops[0].no_device = true;
	ops[0].ifindex = 0x7ffffff0; /* no link has it */
	CHECK(plan_failed_on_vanished_links(&p), "ENODEV on an index no link has: overtaken");
	ops[1].failed = true;
	CHECK(!plan_failed_on_vanished_links(&p), "another failure beside it: failed");
	ops[1].failed = false;
	ops[0].ifindex = (int)if_nametoindex("lo");
	CHECK(!plan_failed_on_vanished_links(&p), "ENODEV on a link that is there: failed");
	ops[0].ifindex = 0;
	snprintf(ops[0].ifname, sizeof(ops[0].ifname), "fabtest-none0");
	CHECK(plan_failed_on_vanished_links(&p), "by name, no link has it: overtaken");
	snprintf(ops[0].ifname, sizeof(ops[0].ifname), "lo");
	CHECK(!plan_failed_on_vanished_links(&p), "by name, the link is there: failed");
	ops[0].ifname[0] = '\0';
	CHECK(!plan_failed_on_vanished_links(&p), "neither index nor name: cannot tell, failed");
	ops[0].failed = ops[0].no_device = false;
	CHECK(!plan_failed_on_vanished_links(&p), "nothing failed: not overtaken");
}

/*
 * vnet100's zone under EVPN: vx100 as an EVPN device (no learning), its
 * standby gone from the recording; carried: the kernel's guard carries VNI 100.
 */
static void evpn_fixture(struct fixture *f, bool carried)
{
	struct link_obs *vx;
	static const uint8_t vni100[3] = {0, 0, 100};

	fixture_load(f);
	f->c->zones[0].control_plane = CONTROL_PLANE_EVPN;
	vx = (struct link_obs *)link_find(&f->have.links, "vx100");
	CHECK(vx != NULL, "recorded vx100");
	if (vx) {
		vx->vxlan_nolearning = true;
		vx->port_learning = false;
	}
	link_release(&f->have.links.links[--f->have.links.n]); /* add_standby's vs100, the last */
	f->r.boot_now = 100;
	if (!carried)
		return;
	f->have.firewall = firewall_obs_new();
	firewall_obs_set_comment(f->have.firewall, "fabricd:lab 0");
	CHECK_INT(firewall_obs_add_set(f->have.firewall, "carried_vnis", 0), 0, "carried_vnis");
	CHECK_INT(firewall_obs_add_elem(f->have.firewall, "carried_vnis", vni100, 3), 0, "VNI 100");
	CHECK_INT(firewall_obs_finish(f->have.firewall), 0, "finish");
}

static const struct desired_vnet *vnet100(const struct fixture *f)
{
	return desired_find_vnet(&f->want, "vnet100");
}

/* An EVPN vnet's one device: a switch is only its note and the guard's marks. */
static void test_evpn_switch(void)
{
	const struct desired_vnet *v;
	const struct op *op;
	struct link_obs *vx;
	struct fixture f;
	struct plan p;
	struct diag d;

	/* plain, not carried: nothing of vx100 changes; the old standby goes */
	evpn_fixture(&f, false);
	diag_init(&d);
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	switch_mark_stages(&f.r, &f.want, &f.have);
	v = vnet100(&f);
	CHECK(v && !strcmp(v->vxlan, "vx100") && v->port == 4789 && !v->carried,
	      "plain evpn: vx100, not carried");
	CHECK(!find_change(&p, "vxlan vx100", LINK_SET_ALIAS), "no note");
	CHECK_INT(count_ops(&p, OP_VXLAN_CREATE), 0, "vx100 is kept");
	CHECK(p.n_later == 0, "no stage");
	plan_free(&p);

	/* -> secure: carried at once, clear text taken until the grace period ends */
	f.c->zones[0].transport = TRANSPORT_SECURE;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	switch_mark_stages(&f.r, &f.want, &f.have);
	v = vnet100(&f);
	CHECK(v && !strcmp(v->vxlan, "vx100") && v->port == 4789 && v->carried &&
		  v->plain_receiving,
	      "secure evpn: vx100 carried, its members' clear text still taken");
	op = find_change(&p, "vxlan vx100", LINK_SET_ALIAS);
	CHECK(op && !strcmp(alias_of(op), "fabricd:lab clear-until=1031 grace=30 at=131"),
	      "the note: %s", op ? alias_of(op) : "none");
	CHECK_INT(count_ops(&p, OP_VXLAN_CREATE), 0, "vx100 is kept");
	op = find_op(p.ops, p.n, OP_VXLAN_LOCAL, "vxlan vx100");
	CHECK(op && op->phase == PHASE_VXLAN && op->u.dst.bytes[0] == 10 &&
		  strstr(detail_of(op), "VTEP 192.0.2.11 -> 10.255.0.1"),
	      "its VTEP moves to the fabric address, live: %s", op ? detail_of(op) : "none");
	CHECK(p.n_later == 1 && p.later[0].due == 131, "its end is due at 131");
	plan_free(&p);

	/* the note recorded: the stage goes on until it is due, then ends */
	vx = (struct link_obs *)link_find(&f.have.links, "vx100");
	set_alias(vx, "%s clear-until=1031 grace=30 at=131", f.r.owner);
	f.r.boot_now = 130;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	switch_mark_stages(&f.r, &f.want, &f.have);
	CHECK(vnet100(&f)->plain_receiving, "still in the grace period at 130");
	CHECK(!find_change(&p, "vxlan vx100", LINK_SET_ALIAS), "the note stays");
	plan_free(&p);
	f.r.boot_now = 131;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	switch_mark_stages(&f.r, &f.want, &f.have);
	CHECK(vnet100(&f)->carried && !vnet100(&f)->plain_receiving, "over at 131");
	op = find_change(&p, "vxlan vx100", LINK_SET_ALIAS);
	CHECK(op && !strcmp(alias_of(op), "fabricd:lab"), "the note goes");
	CHECK(p.n_later == 0, "nothing later");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);

	/* secure -> plain while carried: it keeps carrying until the grace period ends */
	evpn_fixture(&f, true);
	diag_init(&d);
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	switch_mark_stages(&f.r, &f.want, &f.have);
	CHECK(vnet100(&f)->carried && !vnet100(&f)->plain_receiving, "plain, still carried");
	op = find_change(&p, "vxlan vx100", LINK_SET_ALIAS);
	CHECK(op && !strcmp(alias_of(op), "fabricd:lab carry-until=1031 grace=30 at=131"),
	      "the note: %s", op ? alias_of(op) : "none");
	plan_free(&p);
	/* no grace: plain at once */
	f.r.grace = 0;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	switch_mark_stages(&f.r, &f.want, &f.have);
	CHECK(!vnet100(&f)->carried, "--grace 0: no longer carried");
	CHECK(!find_change(&p, "vxlan vx100", LINK_SET_ALIAS), "no note");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/* The carry's rule, route and rp_filter: made while an EVPN vnet is here, removed after. */
#define RULE4  "rule ipv4 fwmark 0xfab0/0xffff lookup 64176"
#define ROUTE4 "route ipv4 default dev wgfab0 table 64176"

static void test_carry(void)
{
	const struct link_obs *wg;
	const struct op *op;
	struct fixture f;
	struct plan p;
	struct diag d;

	evpn_fixture(&f, false);
	diag_init(&d);
	wg = link_find(&f.have.links, "wgfab0");
	carry_obs_init(&f.have.carry, wg ? wg->ifindex : 0);
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK(f.want.carry, "an EVPN vnet: carry wanted");
	CHECK_INT(count_ops(&p, OP_CARRY_RULE), 1, "one rule (IPv4 underlay)");
	CHECK_INT(count_ops(&p, OP_CARRY_ROUTE), 1, "its route");
	CHECK_INT(count_ops(&p, OP_CARRY_RP_FILTER), 1, "loose rp_filter");
	CHECK(find_op(p.ops, p.n, OP_CARRY_RULE, RULE4) != NULL, "named %s", RULE4);
	CHECK(find_op(p.ops, p.n, OP_CARRY_ROUTE, ROUTE4) != NULL, "named %s", ROUTE4);
	CHECK(f.want.fabric.peers[0].n_allowed_ips == 2, "the peer's underlay in its allowed IPs");
	CHECK_INT(count_ops(&p, OP_WG_PEER), 1, "the peer's allowed IPs change");
	plan_free(&p);

	/* in place: nothing */
	f.have.carry.rule[0] = f.have.carry.route[0] = true;
	f.have.carry.rp_filter = CARRY_RP_FILTER;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK_INT(count_ops(&p, OP_CARRY_RULE) + count_ops(&p, OP_CARRY_ROUTE) +
		      count_ops(&p, OP_CARRY_RP_FILTER),
		  0, "carry in place");
	plan_free(&p);

	/* no EVPN zone any more: the rule and route go, the peer loses the underlay */
	f.c->zones[0].control_plane = CONTROL_PLANE_STATIC;
	CHECK_INT(plan_for(&f, &p, &d), 0, "plan");
	CHECK(!f.want.carry && f.want.fabric.peers[0].n_allowed_ips == 1, "no carry");
	op = find_op(p.ops, p.n, OP_CARRY_RULE, RULE4);
	CHECK(op && op->verb == VERB_DELETE, "rule removed");
	op = find_op(p.ops, p.n, OP_CARRY_ROUTE, ROUTE4);
	CHECK(op && op->verb == VERB_DELETE, "route removed");
	plan_free(&p);

	/* down removes the rule */
	plan_init(&p, f.r.owner);
	CHECK_INT(plan_build_down(&f.r, &f.have, &p), 0, "down");
	CHECK_INT(count_ops(&p, OP_CARRY_RULE), 1, "down: the rule goes");
	plan_free(&p);
	diag_free(&d);
	fixture_free(&f);
}

/* A message of type in buf (zeroed), with its family header of size hdr. */
static struct nlmsghdr *start_msg(char *buf, size_t len, uint16_t type, size_t hdr, void **extra)
{
	struct nlmsghdr *nlh;

	memset(buf, 0, len);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	*extra = mnl_nlmsg_put_extra_header(nlh, hdr);
	return nlh;
}

/* The carry's parse: fabricd's rule exactly, the table's default route via the fabric device. */
static void test_carry_parse(void)
{
	char buf[512];
	struct carry_obs c;
	struct nlmsghdr *nlh;
	struct fib_rule_hdr *frh;
	struct rtmsg *rtm;
	struct netconfmsg *ncm;

	carry_obs_init(&c, 7);
	CHECK(c.rp_filter == -1 && !c.rule[0] && !c.route[0], "nothing read yet");
	for (int pref = 4010; pref <= 4011; pref++) {
		nlh = start_msg(buf, sizeof(buf), RTM_NEWRULE, sizeof(*frh), (void **)&frh);
		frh->family = AF_INET;
		frh->action = FR_ACT_TO_TBL;
		mnl_attr_put_u32(nlh, FRA_PRIORITY, (uint32_t)pref);
		mnl_attr_put_u32(nlh, FRA_FWMARK, CARRY_MARK);
		mnl_attr_put_u32(nlh, FRA_FWMASK, CARRY_MARK_MASK);
		mnl_attr_put_u32(nlh, FRA_TABLE, CARRY_TABLE);
		CHECK_INT(carry_kind.parse(nlh, &c), 1, "a rule is the kind's");
		CHECK(c.rule[0] == (pref == 4011) && !c.rule[1], "pref %d: ours only at 4011",
		      pref);
	}
	for (int oif = 6; oif <= 7; oif++) {
		nlh = start_msg(buf, sizeof(buf), RTM_NEWROUTE, sizeof(*rtm), (void **)&rtm);
		rtm->rtm_family = AF_INET6;
		rtm->rtm_type = RTN_UNICAST;
		mnl_attr_put_u32(nlh, RTA_TABLE, CARRY_TABLE);
		mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)oif);
		CHECK_INT(carry_kind.parse(nlh, &c), 1, "a route is the kind's");
		CHECK(c.route[1] == (oif == 7) && !c.route[0],
		      "oif %d: through the fabric only at 7", oif);
	}
	nlh = start_msg(buf, sizeof(buf), RTM_NEWNETCONF, sizeof(*ncm), (void **)&ncm);
	ncm->ncm_family = AF_INET;
	mnl_attr_put_u32(nlh, NETCONFA_IFINDEX, 7);
	mnl_attr_put_u32(nlh, NETCONFA_RP_FILTER, 1);
	CHECK_INT(carry_kind.parse(nlh, &c), 1, "netconf is the kind's");
	CHECK_INT(c.rp_filter, 1, "the fabric device's rp_filter");
	nlh->nlmsg_type = RTM_NEWLINK;
	CHECK_INT(carry_kind.parse(nlh, &c), 0, "a link is not");
}

static void run_all(void)
{
	test_converged();
	test_add_vnet();
	test_switch_to_plain(30);
	test_switch_to_plain(0);
	test_switch_to_secure(30);
	test_switch_to_secure(0);
	test_retire_stage();
	test_port_options();
	test_hold_stage();
	test_standby_left_by_a_killed_run();
	test_switch_back();
	test_remove_node();
	test_kernel_drift();
	test_remote_with_another_vni();
	test_ipv6_state_and_stp();
	test_prefix_route_deleted();
	test_foreign_link();
	test_foreign_link_holds_its_vnet();
	test_held_vnets_renamed_bridge_stays();
	test_fabric_changes();
	test_ops_compact_and_keyless();
	test_evpn_switch();
	test_carry();
}

int main(void)
{
	test_link_index();
	test_carry_parse();
	test_failed_on_vanished_links();
	run_all();
	as_observed = true;
	run_all();
	return unit_summary("test_plan");
}
