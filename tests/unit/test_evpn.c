// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_evpn.c - the EVPN control plane without FRR: the definition's keys and
 * their errors, roles (full mesh, route reflectors), the rendered FRR
 * fragment (golden text), splicing into a foreign frr.conf, and the planner's
 * hooks (no static FDB remotes, VXLAN learning off, one FRR op).
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <linux/if_bridge.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "definition/config.h"
#include "definition/desired.h"
#include "definition/evpn.h"
#include "engine/frr.h"
#include "engine/observe.h"
#include "engine/plan.h"
#include "kinds/frr.h"
#include "kinds/kind.h"
#include "kinds/vxlan.h"
#include "unit.h"

/* What op changes, as `plan` shows it. */
static const char *detail_of(const struct op *op)
{
	static struct op_text t;

	op_describe(op, &t);
	return t.detail;
}

#define K1 "t4trv5Xh2YF5ozt+bXxYVHI2m7/vbmEufLZk1+4J31Q="
#define K2 "CXmRQWxEZ/Ip0OBIkUEY9l845AwSoxglz2nf2WfBQgs="
#define K3 "oT0zKXEx4tThGhDsMxXEouarKAUC9pxhPmhTWncTW2k="

#define NODES                                                                                      \
	" \"nodes\": [\n"                                                                          \
	"  {\"name\": \"pve1\", \"underlay\": \"192.0.2.11\", \"fabric_address\": \"10.255.0.1\"," \
	" \"public_key\": \"" K1 "\"},\n"                                                          \
	"  {\"name\": \"pve2\", \"underlay\": \"192.0.2.12\", \"fabric_address\": \"10.255.0.2\"," \
	" \"public_key\": \"" K2 "\"},\n"                                                          \
	"  {\"name\": \"pve3\", \"underlay\": \"192.0.2.13\", \"fabric_address\": \"10.255.0.3\"," \
	" \"public_key\": \"" K3 "\"}],\n"

/* fabric extra keys, zone extra keys */
static char *definition(const char *fabric_extra, const char *zone_extra)
{
	char *s = NULL;

	if (asprintf(
		&s,
		"{\"version\": 1, \"cluster\": \"lab\",\n"
		" \"fabric\": {\"prefix\": \"10.255.0.0/24\", \"listen_port\": 51820%s},\n" NODES
		" \"zones\": [\n"
		"  {\"name\": \"ev\", \"transport\": \"secure\"%s,"
		" \"vnets\": [{\"name\": \"vnet100\", \"vni\": 100}]},\n"
		"  {\"name\": \"st\", \"transport\": \"plain\", \"nodes\": [\"pve1\", \"pve2\"],"
		" \"vnets\": [{\"name\": \"vnet200\", \"vni\": 200}]}]}\n",
		fabric_extra, zone_extra) < 0)
		return NULL;
	return s;
}

static struct cluster *load(const char *fabric_extra, const char *zone_extra, struct diag *d)
{
	struct cluster *c = NULL;
	char *text = definition(fabric_extra, zone_extra);

	diag_init(d);
	if (text)
		config_load_buffer(text, strlen(text), &c, d);
	free(text);
	return c;
}

static int has(const struct diag *d, const char *path, const char *msg)
{
	for (size_t i = 0; i < d->n; i++) {
		if (!strncmp(d->msgs[i], path, strlen(path)) && strstr(d->msgs[i], msg))
			return 1;
	}
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "  got: %s\n", d->msgs[i]);
	return 0;
}

static const struct {
	const char *name, *fabric, *zone, *path, *msg;
} errors[] = {
    {"evpn zone without fabric.evpn", "", ", \"control_plane\": \"evpn\"", "fabric.evpn: missing",
     "add \"evpn\": {\"asn\": 65000}"},
    {"fabric evpn without fabric.evpn", ", \"control_plane\": \"evpn\"", "", "fabric.evpn: missing",
     "uses the evpn control plane"},
    {"evpn null", ", \"evpn\": null", ", \"control_plane\": \"evpn\"",
     "fabric.evpn:", "is null; give an object"},
    {"evpn without asn", ", \"evpn\": {}", ", \"control_plane\": \"evpn\"",
     "fabric.evpn.asn: missing", "AS number"},
    {"asn zero", ", \"evpn\": {\"asn\": 0}", ", \"control_plane\": \"evpn\"", "fabric.evpn.asn: 0",
     "1..4294967295"},
    {"asn too big", ", \"evpn\": {\"asn\": 4294967296}", ", \"control_plane\": \"evpn\"",
     "fabric.evpn.asn: 4294967296", "out of range"},
    {"asn a string", ", \"evpn\": {\"asn\": \"65000\"}", ", \"control_plane\": \"evpn\"",
     "fabric.evpn.asn:", "give an integer"},
    {"unknown evpn key", ", \"evpn\": {\"asn\": 65000, \"as\": 1}", ", \"control_plane\": \"evpn\"",
     "fabric.evpn.as:", "unknown key"},
    {"unknown reflector", ", \"evpn\": {\"asn\": 65000, \"route_reflectors\": [\"pve9\"]}",
     ", \"control_plane\": \"evpn\"", "fabric.evpn.route_reflectors[0]:", "not a node"},
    {"reflector twice", ", \"evpn\": {\"asn\": 65000, \"route_reflectors\": [\"pve1\", \"pve1\"]}",
     ", \"control_plane\": \"evpn\"", "fabric.evpn.route_reflectors[1]:", "listed twice"},
    {"reflector empty", ", \"evpn\": {\"asn\": 65000, \"route_reflectors\": [\"pve1\", \"\"]}",
     ", \"control_plane\": \"evpn\"",
     "fabric.evpn.route_reflectors[1]:", "is empty; give a node name"},
    {"reflector not a string", ", \"evpn\": {\"asn\": 65000, \"route_reflectors\": [1]}",
     ", \"control_plane\": \"evpn\"", "fabric.evpn.route_reflectors[0]:", "node name as a string"},
    {"reflector in no evpn zone",
     ", \"control_plane\": \"evpn\", \"evpn\": {\"asn\": 65000, \"route_reflectors\": [\"pve3\"]}",
     ", \"control_plane\": \"static\"", "fabric.evpn.route_reflectors[0]:", "in no EVPN zone"},
    {"bad control plane", "", ", \"control_plane\": \"bgp\"",
     "zones[0].control_plane:", "use \"static\" or \"evpn\""},
    {"bad fabric control plane", ", \"control_plane\": 1", "",
     "fabric.control_plane:", "give a string"},
};

static void test_errors(void)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		struct diag d;
		struct cluster *c = load(errors[i].fabric, errors[i].zone, &d);

		CHECK(!c, "%s: must not load", errors[i].name);
		CHECK(has(&d, errors[i].path, errors[i].msg), "%s: want \"%s ...%s\"",
		      errors[i].name, errors[i].path, errors[i].msg);
		/* one mistake, one error: no follow-on ("missing", "in no EVPN zone") */
		CHECK(d.n == 1, "%s: %zu errors", errors[i].name, d.n);
		cluster_free(c);
		diag_free(&d);
	}
}

static void test_roles(void)
{
	struct diag d;
	struct cluster *c =
	    load(", \"evpn\": {\"asn\": 65000}", ", \"control_plane\": \"evpn\"", &d);

	CHECK(c && d.n == 0, "zone override loads");
	if (!c)
		return;
	CHECK_INT(c->zones[0].control_plane, CONTROL_PLANE_EVPN, "zone evpn");
	CHECK_INT(c->zones[1].control_plane, CONTROL_PLANE_STATIC, "default static");
	CHECK_INT(c->fabric.evpn.asn, 65000, "asn");
	CHECK(evpn_peers(c, 0, 1) && evpn_peers(c, 1, 2) && evpn_peers(c, 0, 2), "full mesh");
	CHECK(!evpn_peers(c, 1, 1), "no session with itself");
	cluster_free(c);
	diag_free(&d);

	c = load(", \"control_plane\": \"evpn\", \"evpn\": {\"asn\": 4200000000, "
		 "\"route_reflectors\": [\"pve1\"]}",
		 "", &d);
	CHECK(c && d.n == 0, "fabric evpn with a reflector loads");
	if (!c)
		return;
	CHECK_INT(c->zones[1].control_plane, CONTROL_PLANE_EVPN, "fabric default inherited");
	CHECK_INT(c->fabric.evpn.asn, 4200000000U, "4-byte asn");
	CHECK(evpn_is_reflector(c, 0) && !evpn_is_reflector(c, 1), "reflector role");
	CHECK(evpn_peers(c, 0, 1) && evpn_peers(c, 2, 0), "clients peer with the reflector");
	CHECK(!evpn_peers(c, 1, 2), "clients do not peer with each other");
	cluster_free(c);
	diag_free(&d);
}

static const char golden_pve2[] =
    "! fabricd:lab begin (written by fabricd from the cluster definition; edits are lost)\n"
    "router bgp 65000\n"
    " bgp router-id 10.255.0.2\n"
    " no bgp default ipv4-unicast\n"
    " neighbor fabricd peer-group\n"
    " neighbor fabricd remote-as internal\n"
    " neighbor fabricd update-source 10.255.0.2\n"
    " neighbor fabricd timers 3 9\n"
    " neighbor fabricd timers connect 2\n"
    " neighbor 10.255.0.1 peer-group fabricd\n"
    " neighbor 10.255.0.3 peer-group fabricd\n"
    " !\n"
    " address-family l2vpn evpn\n"
    "  neighbor fabricd activate\n"
    "  advertise-all-vni\n"
    " exit-address-family\n"
    "exit\n"
    "! fabricd:lab end\n";

static const char foreign[] = "frr defaults datacenter\n"
			      "hostname pve2\n"
			      "!\n"
			      "router bgp 65099 vrf blue\n"
			      " bgp router-id 1.1.1.1\n"
			      "exit\n"
			      "!\n"
			      "router ospf\n"
			      "exit\n";

static void test_render_and_splice(void)
{
	struct diag d;
	struct cluster *c =
	    load(", \"evpn\": {\"asn\": 65000}", ", \"control_plane\": \"evpn\"", &d);
	char *block = NULL, *conf = NULL, *again = NULL, *back = NULL, *got = NULL, line[128];

	if (!c)
		return;
	CHECK_INT(frr_render(c, 1, "fabricd:lab", &block), 0, "render");
	CHECK_STR(block, golden_pve2, "pve2's fragment");
	CHECK_INT(frr_block_neighbors(block), 2, "two neighbors");
	CHECK_INT(frr_splice(foreign, "fabricd:lab", block, &conf), 0, "splice in");
	CHECK(conf && !strncmp(conf, foreign, strlen(foreign)), "foreign part first, unchanged");
	CHECK_INT(frr_extract(conf, "fabricd:lab", &got), 0, "extract");
	CHECK_STR(got, block, "the block comes back as written");
	CHECK_INT(frr_extract(conf, "fabricd:other", &back), 0, "another cluster's block");
	CHECK(!back, "is not ours");
	CHECK_INT(frr_splice(conf, "fabricd:lab", block, &again), 0, "splice again");
	CHECK_STR(again, conf, "splicing the same block changes nothing");
	CHECK_INT(frr_foreign_bgp(conf, "fabricd:lab", line, sizeof(line)), 0,
		  "a VRF instance and our own are no conflict");
	free(back);
	CHECK_INT(frr_splice(conf, "fabricd:lab", NULL, &back), 0, "splice out");
	CHECK_STR(back, foreign, "down leaves exactly the foreign file");
	CHECK_INT(
	    frr_foreign_bgp("hostname x\nrouter bgp 64512\n", "fabricd:lab", line, sizeof(line)), 2,
	    "a default-VRF instance is found");
	CHECK_STR(line, "router bgp 64512", "and quoted");
	{
		/* vtysh `write` dropped the markers: the stanza with fabricd's peer group is ours
		 */
		const char *body = strchr(golden_pve2, '\n') + 1;
		char *written = NULL, *found = NULL, *fixed = NULL;
		size_t blen = strlen(body) - strlen("! fabricd:lab end\n");

		if (asprintf(&written, "%s%.*s!\nline vty\nexit\n", foreign, (int)blen, body) > 0) {
			CHECK_INT(frr_foreign_bgp(written, "fabricd:lab", line, sizeof(line)), 0,
				  "an unmarked fabricd part is no conflict");
			frr_extract(written, "fabricd:lab", &found);
			CHECK(found && !strncmp(found, "router bgp 65000\n", 17) &&
				  strlen(found) == blen,
			      "the unmarked part is found, up to its exit");
			frr_splice(written, "fabricd:lab", block, &fixed);
			CHECK(fixed && strstr(fixed, golden_pve2) && strstr(fixed, "line vty\n") &&
				  !strncmp(fixed, foreign, strlen(foreign)),
			      "and replaced by the marked part, the rest kept");
		}
		free(written);
		free(found);
		free(fixed);
	}
	{
		/* the end marker deleted by hand, the operator's lines after the block */
		const char *after = "interface eth0\n description ops-after\nexit\n!\n";
		size_t upto = strlen(golden_pve2) - strlen("! fabricd:lab end\n");
		char *cut = NULL, *out = NULL, *gone = NULL;

		if (asprintf(&cut, "%s%.*s%s", foreign, (int)upto, golden_pve2, after) > 0) {
			frr_splice(cut, "fabricd:lab", block, &out);
			CHECK(out && strstr(out, golden_pve2) && strstr(out, after),
			      "the block ends at its router's exit; what follows is kept: %s", out);
			frr_splice(cut, "fabricd:lab", NULL, &gone);
			CHECK(gone && !strstr(gone, "router bgp 65000") && strstr(gone, after) &&
				  !strncmp(gone, foreign, strlen(foreign)),
			      "and down keeps it too: %s", gone);
		}
		free(cut);
		free(out);
		free(gone);
	}
	free(block);
	CHECK_INT(frr_render(c, 2, "fabricd:lab", &block), 0, "pve3 renders");
	CHECK(block && strstr(block, "neighbor 10.255.0.1 peer-group") &&
		  !strstr(block, "neighbor 10.255.0.3 peer-group"),
	      "pve3 peers with the others, not itself");
	free(block);
	free(conf);
	free(again);
	free(back);
	free(got);
	cluster_free(c);
	diag_free(&d);

	c = load(", \"evpn\": {\"asn\": 65000, \"route_reflectors\": [\"pve1\"]}",
		 ", \"control_plane\": \"evpn\"", &d);
	if (!c)
		return;
	frr_render(c, 0, "fabricd:lab", &block);
	CHECK(block && strstr(block, "route-reflector-client") && frr_block_neighbors(block) == 2,
	      "the reflector has every other node as client");
	free(block);
	frr_render(c, 1, "fabricd:lab", &block);
	CHECK(block && !strstr(block, "route-reflector-client") && frr_block_neighbors(block) == 1,
	      "a client peers with the reflector only");
	free(block);
	cluster_free(c);
	diag_free(&d);
}

static void test_desired_and_plan(void)
{
	struct node_state s;
	struct diag d;
	struct cluster *c =
	    load(", \"evpn\": {\"asn\": 65000}", ", \"control_plane\": \"evpn\"", &d);
	const struct desired_vnet *ev, *st;
	struct plan p;
	char *block = NULL;

	if (!c)
		return;
	CHECK_INT(desired_build(c, 0, 1500, &s, &d), 0, "desired");
	ev = desired_find_vnet(&s, "vnet100");
	st = desired_find_vnet(&s, "vnet200");
	CHECK(ev && ev->evpn && ev->n_remotes == 2, "evpn vnet: members known (for the guard)");
	CHECK(st && !st->evpn && st->n_remotes == 1, "static vnet keeps its remote");
	plan_init(&p, s.owner);
	CHECK_INT(frr_plan(&s, "", NULL, &p, &d), 0, "plan frr");
	CHECK(p.n == 1 && p.ops[0].type == OP_FRR_CONFIG && p.ops[0].verb == VERB_CREATE &&
		  p.ops[0].text,
	      "one op creates fabricd's part");
	block = p.n ? strdup(p.ops[0].text) : NULL;
	plan_free(&p);
	{
		/* frr.conf unread (a link of the frr user's): nothing planned from it, said */
		static struct observed have; /* large: not on the stack */
		struct kind_input in = {.want = &s, .have = &have, .diag = &d};
		size_t errors_before = d.n;

		have.frr.read_error = EPERM;
		snprintf(have.frr.path, sizeof(have.frr.path), "/etc/frr/frr.conf");
		plan_init(&p, s.owner);
		CHECK_INT(frr_kind.plan(&in, &p), 0, "plan with frr.conf unread");
		CHECK(p.n == 0 && d.n == errors_before + 1 &&
			  strstr(d.msgs[d.n - 1], "/etc/frr/frr.conf: cannot read it: it is a "
						  "symbolic link of another user's"),
		      "an error where fabricd's part is wanted, no op: %s",
		      d.n ? d.msgs[d.n - 1] : "(none)");
		plan_free(&p);
		diag_free(&d);
		diag_init(&d);
	}
	plan_init(&p, s.owner);
	CHECK_INT(frr_plan(&s, block ? block : "", block, &p, &d), 0, "plan again");
	CHECK_INT(p.n, 0, "the same block: nothing to do");
	plan_free(&p);
	if (block && strstr(block, "neighbor 10.255.0.3 peer-group")) {
		char *old = strdup(block);

		memcpy(strstr(old, "neighbor 10.255.0.3 peer-group") + 18, "9", 1);
		plan_init(&p, s.owner);
		CHECK_INT(frr_plan(&s, old, old, &p, &d), 0, "plan a changed block");
		CHECK(p.n == 1 && p.ops[0].verb == VERB_CHANGE &&
			  strstr(detail_of(&p.ops[0]), "-neighbor 10.255.0.9 peer-group fabricd") &&
			  strstr(detail_of(&p.ops[0]), "+neighbor 10.255.0.3 peer-group fabricd"),
		      "plan shows the changed lines: %s", p.n ? detail_of(&p.ops[0]) : "(none)");
		plan_free(&p);
		free(old);
	}
	plan_init(&p, s.owner);
	frr_plan(&s, "router bgp 1\n", NULL, &p, &d);
	CHECK(p.n == 0 && d.n == 1 && strstr(d.msgs[0], "frr.conf: has \"router bgp 1\""),
	      "a foreign default-VRF instance is a conflict");
	plan_free(&p);
	{
		/* what down plans for fabricd's part of frr.conf, from what was read of it */
		static const struct {
			bool block, cut_short;
			int read_error;
			size_t ops;
			const char *detail, *name;
		} downs[] = {
		    {true, false, 0, 1, "via frr-reload.py", "down removes it"},
		    /* nothing in the file, but a reload cut short: FRR may still run the part */
		    {false, true, 0, 1, "via frr-reload.py", "down reloads it without the part"},
		    {false, false, 0, 0, NULL, "nothing of fabricd's: nothing to remove"},
		    /* a file that could not be read may hold the part: down tries, and says why not
		     */
		    {false, false, EPERM, 1, "if it holds one: /etc/frr/frr.conf cannot be read",
		     "frr.conf unread: down plans to remove a part it cannot see"},
		};
		static struct frr_obs frr; /* large (a path): not on the stack */

		for (size_t i = 0; i < sizeof(downs) / sizeof(downs[0]); i++) {
			memset(&frr, 0, sizeof(frr));
			frr.block = downs[i].block ? block : NULL;
			frr.reload_cut_short = downs[i].cut_short;
			frr.read_error = downs[i].read_error;
			snprintf(frr.path, sizeof(frr.path), "/etc/frr/frr.conf");
			plan_init(&p, s.owner);
			CHECK_INT(frr_plan_down(&frr, &p), 0, "%s", downs[i].name);
			CHECK(p.n == downs[i].ops &&
				  (!p.n || (p.ops[0].verb == VERB_DELETE && !p.ops[0].text &&
					    strstr(detail_of(&p.ops[0]), downs[i].detail))),
			      "%s: %s", downs[i].name, p.n ? detail_of(&p.ops[0]) : "(none)");
			plan_free(&p);
		}
	}
	free(block);
	desired_free(&s);
	cluster_free(c);
	diag_free(&d);
}

/* vxlan_kind's plan for device v on link have, in bridge. */
static int plan_vxlan(const struct vxlan_port *v, const struct link_obs *have,
		      const struct link_obs *bridge, struct plan *p, bool *recreated)
{
	struct kind_input in = {.port = v, .link = have, .bridge = bridge, .made = recreated};

	return vxlan_kind.plan(&in, p);
}

static const struct op *find_op(const struct plan *p, enum op_type type, unsigned int mask)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->ops[i].type == type && (p->ops[i].u.link.mask & mask) == mask)
			return &p->ops[i];
	}
	return NULL;
}

/* The VXLAN planner's EVPN hooks: learning off at creation, recreate, port learning. */
static void test_vxlan_learning(void)
{
	struct vxlan_port v = {.bridge = "vnet100",
			       .vni = 100,
			       .port = 4790,
			       .mtu = 1390,
			       .evpn = true,
			       .role = VXLAN_SENDS,
			       .alias = "fabricd:lab"};
	struct link_obs have = {.ifindex = 7,
				.name = "vs100",
				.kind = "vxlan",
				.vni = 100,
				.port = 4790,
				.mtu = 1390,
				.master = 5,
				.flags = IFF_UP,
				.isolated = true,
				.port_mcast_router = MDB_RTR_TYPE_PERM,
				.port_flood = LINK_FLOOD_ALL,
				.alias = "fabricd:lab"};
	struct link_obs bridge = {.ifindex = 5, .name = "vnet100", .kind = "bridge"};
	const struct op *op;
	struct plan p;
	bool recreated;

	snprintf(v.name, sizeof(v.name), "vs100");
	ip_addr_parse("10.255.0.1", &v.local);
	have.local = v.local;
	plan_init(&p, "fabricd:lab");
	CHECK_INT(plan_vxlan(&v, NULL, &bridge, &p, &recreated), 0, "create");
	op = find_op(&p, OP_VXLAN_CREATE, 0);
	CHECK(op && op->u.create.no_learning, "an EVPN device is created with learning off");
	op = find_op(&p, OP_LINK_CHANGE, LINK_SET_ISOLATED | LINK_SET_LEARNING);
	CHECK(op && !op->u.link.learning, "and its bridge port learns nothing");
	plan_free(&p);

	plan_init(&p, "fabricd:lab");
	plan_vxlan(&v, &have, &bridge, &p, &recreated);
	CHECK(recreated && find_op(&p, OP_LINK_DELETE, 0) &&
		  strstr(detail_of(&p.ops[0]), "learning"),
	      "a learning device becomes EVPN: recreated (learning is fixed at creation)");
	plan_free(&p);

	have.vxlan_nolearning = true;
	have.port_learning = true;
	plan_init(&p, "fabricd:lab");
	plan_vxlan(&v, &have, &bridge, &p, &recreated);
	CHECK(!recreated && p.n == 1 && find_op(&p, OP_LINK_CHANGE, LINK_SET_LEARNING),
	      "port learning back on: turned off again, nothing else");
	plan_free(&p);

	have.port_learning = false;
	plan_init(&p, "fabricd:lab");
	plan_vxlan(&v, &have, &bridge, &p, &recreated);
	CHECK_INT(p.n, 0, "an EVPN device as it should be: nothing to do");
	plan_free(&p);

	v.evpn = false;
	plan_init(&p, "fabricd:lab");
	plan_vxlan(&v, &have, &bridge, &p, &recreated);
	CHECK(recreated, "back to static: recreated with learning on");
	plan_free(&p);
}

static void test_pathspace_names(void)
{
	CHECK_INT(frr_pathspace_check("pve1-fd1234"), 0, "a plain name");
	CHECK_INT(frr_pathspace_check("a_b.c"), 0, "underscore and dot");
	CHECK_INT(frr_pathspace_check(""), -1, "empty");
	CHECK_INT(frr_pathspace_check("../etc"), -1, "a path");
	CHECK_INT(frr_pathspace_check(".hidden"), -1, "leading dot");
	CHECK_INT(frr_pathspace_check("a b"), -1, "a space");
}

/* s with every from replaced by to (malloc'd; s is freed) */
static char *replace_all(char *s, const char *from, const char *to)
{
	size_t n = 0, lf = strlen(from), lt = strlen(to);
	char *out, *o;

	for (const char *p = strstr(s, from); p; p = strstr(p + lf, from))
		n++;
	out = malloc(strlen(s) + n * lt + 1);
	o = out;
	for (const char *p = s, *hit; out; p = hit + lf) {
		hit = strstr(p, from);
		if (!hit) {
			strcpy(o, p);
			break;
		}
		memcpy(o, p, (size_t)(hit - p));
		o += hit - p;
		memcpy(o, to, lt);
		o += lt;
	}
	free(s);
	return out;
}

/* What FRR 8.4 cannot carry is refused at check: an IPv6 fabric, an IPv6 plain VTEP. */
static void test_families(void)
{
	static const struct {
		const char *name, *from[3], *to[3], *fabric, *path, *msg;
	} cases[] = {
	    {"IPv6 fabric prefix",
	     {"10.255.0.0/24", "\"10.255.0.", NULL},
	     {"fd00:255::/64", "\"fd00:255::", NULL},
	     ", \"control_plane\": \"evpn\", \"evpn\": {\"asn\": 65000}",
	     "fabric.prefix:",
	     "brings no IPv6 session up over wgfab0"},
	    {"plain zone over an IPv6 underlay",
	     {"\"192.0.2.", NULL, NULL},
	     {"\"2001:db8::", NULL, NULL},
	     ", \"control_plane\": \"evpn\", \"evpn\": {\"asn\": 65000}",
	     "zones[1].transport:",
	     "takes no IPv6 VTEP (node \"pve1\"'s underlay is IPv6)"},
	    {"secure zone over an IPv6 underlay: works", /* its VTEP is the IPv4 fabric address */
	     {"\"192.0.2.", NULL, NULL},
	     {"\"2001:db8::", NULL, NULL},
	     ", \"evpn\": {\"asn\": 65000}",
	     NULL,
	     NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = definition(cases[i].fabric, ", \"control_plane\": \"evpn\"");
		struct cluster *c = NULL;
		struct diag d;

		for (size_t k = 0; text && k < 3 && cases[i].from[k]; k++)
			text = replace_all(text, cases[i].from[k], cases[i].to[k]);
		diag_init(&d);
		if (text)
			config_load_buffer(text, strlen(text), &c, &d);
		if (cases[i].path)
			CHECK(!c && has(&d, cases[i].path, cases[i].msg), "%s", cases[i].name);
		else
			CHECK(c && d.n == 0, "%s", cases[i].name);
		free(text);
		cluster_free(c);
		diag_free(&d);
	}
}

/* FRR's `show running-config` against fabricd's block (a vtysh change by hand). */
static void test_running_lacks(void)
{
	char line[160] = "";
	/* the running config as FRR 8.4 shows it: no markers, a VRF router first */
	const char *running = "frr version 8.4.4\nfrr defaults datacenter\n!\n"
			      "router bgp 65099 vrf blue\n bgp router-id 1.1.1.1\n"
			      " address-family l2vpn evpn\n  advertise-all-vni\n"
			      " exit-address-family\nexit\n!\n";
	char *full = NULL, *lacking = NULL;
	const char *router = strstr(golden_pve2, "router bgp 65000");
	const char *aav = strstr(golden_pve2, "  advertise-all-vni\n");

	CHECK(router && aav, "golden block has its router and advertise-all-vni");
	if (!router || !aav)
		return;
	/* the block's own lines, without the markers, after the VRF router */
	CHECK(asprintf(&full, "%s%.*s!\nend\n", running,
		       (int)(strstr(router, "! fabricd:lab end") - router), router) > 0,
	      "asprintf");
	CHECK(asprintf(&lacking, "%s%.*s%s", running, (int)(aav - router), router,
		       aav + strlen("  advertise-all-vni\n")) > 0,
	      "asprintf");
	CHECK(!frr_running_lacks(full, golden_pve2, line, sizeof(line)), "everything runs");
	/* what a version or profile may not show when it is its default: not compared */
	{
		char *hidden = strdup(full), *w = hidden;

		for (const char *r = full; hidden && *r;) {
			const char *nl = strchr(r, '\n');
			size_t n = nl ? (size_t)(nl - r + 1) : strlen(r);

			if (!memmem(r, n, " timers ", 8) && !memmem(r, n, "no bgp default", 14)) {
				memmove(w, r, n);
				w += n;
			}
			r += n;
		}
		if (hidden)
			*w = '\0';
		CHECK(hidden && !strstr(hidden, "timers") &&
			  !frr_running_lacks(hidden, golden_pve2, line, sizeof(line)),
		      "timers and no bgp default ipv4-unicast not shown: nothing lacks");
		free(hidden);
	}
	CHECK(frr_running_lacks(lacking, golden_pve2, line, sizeof(line)) &&
		  !strcmp(line, "advertise-all-vni"),
	      "advertise-all-vni of the VRF router does not count for fabricd's");
	CHECK(frr_running_lacks(running, golden_pve2, line, sizeof(line)) &&
		  !strcmp(line, "router bgp 65000"),
	      "no router bgp 65000 at all");
	free(full);
	free(lacking);
}

int main(void)
{
	test_families();
	test_pathspace_names();
	test_vxlan_learning();
	test_errors();
	test_roles();
	test_render_and_splice();
	test_running_lacks();
	test_desired_and_plan();
	return unit_summary("test_evpn");
}
