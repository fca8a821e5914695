// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_firewall.c - the nftables guard's text for fixed nodes (sets, ports,
 * chains, determinism), and the summary of a kernel listing matching it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "definition/config.h"
#include "definition/desired.h"
#include "kinds/guard.h"
#include "kinds/guard_priv.h"
#include "unit.h"

/* What op changes, as `plan` shows it. */
/*
 * Each chain's rules as the kernel's copy is read: verdict and the mark of
 * fabricd's comment (a hash of the rule's text, so fixed for these nodes);
 * input's verdict map with its elements by port.
 */
#define INPUT_PLAIN "accept(8b05ef)"
#define INPUT_VMAP                                                                                 \
	"vmap{4789:jump:plain_vxlan_in,4790:jump:secure_vxlan_in,51820:jump:wireguard_in}(ce1eae)"
#define INPUT_AS_RENDERED     INPUT_PLAIN " " INPUT_VMAP
#define OUTPUT_AS_RENDERED    "drop(9a2957) drop(254902)"
#define PLAIN_IN_AS_RENDERED  "accept(61f959) accept(22c8c2) accept(a213c1) drop(67bd31)"
#define SECURE_IN_AS_RENDERED "accept(22c8c2) accept(a213c1) drop(2145ec)"
#define WG_IN_AS_RENDERED     "accept(ca7e32) accept(5e0206) drop(3f1573)"

static const char *detail_of(const struct op *op)
{
	static struct op_text t;

	op_describe(op, &t);
	return t.detail;
}

static struct cluster *load(const char *path)
{
	struct cluster *c = NULL;
	struct diag d;

	diag_init(&d);
	if (config_load_file(path, &c, &d) < 0) {
		diag_print(&d, stderr);
		c = NULL;
	}
	diag_free(&d);
	return c;
}

static int build(struct cluster *c, const char *node, struct node_state *s)
{
	int self = cluster_find_node(c, node);
	struct diag d;
	int ret;

	if (self < 0)
		return -ENOENT;
	diag_init(&d);
	ret = desired_build(c, (size_t)self, 1500, s, &d);
	diag_free(&d);
	return ret;
}

static void check_has(const char *text, const char *what)
{
	CHECK(strstr(text, what) != NULL, "missing \"%s\" in:\n%s", what, text);
}

static void check_lacks(const char *text, const char *what)
{
	CHECK(strstr(text, what) == NULL, "unexpected \"%s\" in:\n%s", what, text);
}

/* examples/vxlan-3node.json, pve1: plain 100, 101 (all), 300 (pve1+pve3); secure 200 */
static void test_three_node_pve1(void)
{
	struct cluster *c = load("examples/vxlan-3node.json");
	struct firewall_ruleset a, b;
	struct node_state s;

	CHECK(c != NULL, "examples/vxlan-3node.json loads");
	if (!c)
		return;
	CHECK_INT(build(c, "pve1", &s), 0, "desired state of pve1");
	CHECK_INT(firewall_render(&s, NULL, &a), 0, "render");
	CHECK_INT(firewall_render(&s, NULL, &b), 0, "render again");
	CHECK_STR(a.text, b.text, "the same state renders the same bytes");
	CHECK_STR(a.summary, b.summary, "and the same summary");
	CHECK(a.hash == b.hash, "and the same hash");

	check_has(a.text, "table inet fabricd {\n\tcomment \"fabricd:prod ");
	for (int i = 0; i < FW_N_COUNTERS; i++) {
		char line[64];

		snprintf(line, sizeof(line), "\tcounter %s {\n\t}\n", firewall_counter_names[i]);
		check_has(a.text, line);
	}
	/* plain members: pve2 and pve3 for 100 and 101, pve3 only for 300 */
	check_has(a.text, "typeof ip saddr . @th,96,24\n");
	check_has(a.text, "198.51.100.12 . 100");
	check_has(a.text, "198.51.100.13 . 100");
	check_has(a.text, "198.51.100.12 . 101");
	check_has(a.text, "198.51.100.13 . 300");
	check_lacks(a.text, "198.51.100.12 . 300"); /* pve2 is not in zone backup */
	check_lacks(a.text, "198.51.100.11 ");	    /* never itself */
	check_lacks(a.text, "198.51.100.12 . 200"); /* the secure VNI is no plain member */
	check_lacks(a.text, "198.51.100.13 . 200");
	check_has(a.text, "set secure_vnis {\n\t\ttypeof @th,96,24\n\t\telements = { 200 }\n");
	/* WireGuard: pve2, pve3 (whose endpoint is a DNS name: only its underlay) */
	check_has(a.text, "set wireguard_peers_ip {\n\t\ttype ipv4_addr\n"
			  "\t\telements = { 198.51.100.12,\n\t\t\t     198.51.100.13 }\n");
	check_has(a.text, "set wireguard_peers_ip6 {\n\t\ttype ipv6_addr\n\t}\n");
	/* the input chain: a plain member's VXLAN first, then one lookup by port */
	check_has(a.text,
		  "\tchain input {\n"
		  "\t\ttype filter hook input priority -10; policy accept;\n"
		  "\t\tudp dport 4789 ip saddr . @th,96,24 @plain_members accept comment \"fabricd "
		  "8b05ef\"\n"
		  "\t\tudp dport vmap { 4789 : jump plain_vxlan_in, 4790 : jump "
		  "secure_vxlan_in, 51820 : jump wireguard_in } comment \"fabricd ce1eae\"\n"
		  "\t}\n");
	check_has(a.text, "\tchain plain_vxlan_in {\n"
			  "\t\tiifname \"wgfab0\" ip saddr . @th,96,24 @carried_members accept "
			  "comment \"fabricd 61f959\"\n"
			  "\t\tiifname \"wgfab0\" ip saddr . @th,96,24 @fabric_members accept "
			  "comment \"fabricd 22c8c2\"\n"
			  "\t\t@th,96,24 != @node_vnis accept comment \"fabricd a213c1\"\n"
			  "\t\tcounter name \"drop_plain\" drop comment \"fabricd 67bd31\"\n"
			  "\t}\n");
	/* a VNI no vnet of this node has is another VXLAN's: every VNI of the node */
	check_has(a.text,
		  "set node_vnis {\n\t\ttypeof @th,96,24\n"
		  "\t\telements = { 100,\n\t\t\t     101,\n\t\t\t     200,\n\t\t\t     300 }\n");
	/* secure VXLAN from a member's fabric address only, for every vnet (a standby too) */
	check_has(a.text, "set fabric_members {\n\t\ttypeof ip saddr . @th,96,24\n"
			  "\t\telements = { 10.255.0.2 . 100,\n\t\t\t     10.255.0.2 . 101,\n"
			  "\t\t\t     10.255.0.2 . 200,\n\t\t\t     10.255.0.3 . 100,\n"
			  "\t\t\t     10.255.0.3 . 101,\n\t\t\t     10.255.0.3 . 200,\n"
			  "\t\t\t     10.255.0.3 . 300 }\n");
	check_has(a.text, "\tchain secure_vxlan_in {\n"
			  "\t\tiifname \"wgfab0\" ip saddr . @th,96,24 @fabric_members accept "
			  "comment \"fabricd 22c8c2\"\n"
			  "\t\t@th,96,24 != @node_vnis accept comment \"fabricd a213c1\"\n"
			  "\t\tcounter name \"drop_secure\" drop comment \"fabricd 2145ec\"\n"
			  "\t}\n");
	check_has(a.text, "\tchain wireguard_in {\n"
			  "\t\tip saddr @wireguard_peers_ip accept comment \"fabricd ca7e32\"\n"
			  "\t\tip6 saddr @wireguard_peers_ip6 accept comment \"fabricd 5e0206\"\n"
			  "\t\tcounter name \"drop_wireguard\" drop comment \"fabricd 3f1573\"\n"
			  "\t}\n");
	check_has(a.text,
		  "\tchain output {\n"
		  "\t\ttype filter hook output priority -10; policy accept;\n"
		  "\t\tudp dport 4789 @th,96,24 @secure_vnis counter name \"drop_leak\" "
		  "drop comment \"fabricd 9a2957\"\n"
		  "\t\tudp dport 4790 oifname != \"wgfab0\" @th,96,24 @node_vnis counter name "
		  "\"drop_leak\" drop comment \"fabricd 254902\"\n"
		  "\t}\n");
	check_lacks(a.text, "_out");
	check_has(a.summary, "set plain_members\n");
	CHECK_INT(a.sets[FW_SET_PLAIN_MEMBERS].n, 5, "five plain members");
	{
		char first[64], last[64];
		struct firewall_key k;

		elems_get(&a.sets[FW_SET_PLAIN_MEMBERS], 4, &k);
		key_text(&k, last, sizeof(last));
		elems_get(&a.sets[FW_SET_PLAIN_MEMBERS], 0, &k);
		key_text(&k, first, sizeof(first));
		CHECK_STR(first, "198.51.100.12 . 100", "sorted");
		CHECK_STR(last, "198.51.100.13 . 300", "sorted, to the end");
		/* keys as the kernel holds them: a concatenation pads the VNI to 32 bits */
		CHECK_INT(k.len, 8, "IPv4 . VNI");
		CHECK_INT((int)a.sets[FW_SET_PLAIN_MEMBERS].stride, 9, "9 bytes an element");
		CHECK_INT(key_parse("2001:db8::1 . 70000", &k), 0, "parse IPv6 . VNI");
		CHECK(k.len == 20 && k.b[16] == 1 && k.b[17] == 0x11 && k.b[18] == 0x70,
		      "its bytes");
		key_text(&k, first, sizeof(first));
		CHECK_STR(first, "2001:db8::1 . 70000", "and back");
		CHECK_INT(key_parse("200", &k), 0, "a VNI");
		CHECK(k.len == 3 && k.b[2] == 200, "3 bytes");
		CHECK_INT(key_parse("10.0.0.0/8", &k), -EINVAL, "a prefix is not ours");
		CHECK_INT(key_parse("1.2.3.4 . 16777216", &k), -EINVAL, "a VNI has 24 bits");
	}
	check_has(a.summary,
		  "chain input: filter input -10 accept, rules: " INPUT_AS_RENDERED "\n");
	check_has(a.summary,
		  "chain output: filter output -10 accept, rules: " OUTPUT_AS_RENDERED "\n");
	check_has(a.summary, "chain plain_vxlan_in:, rules: " PLAIN_IN_AS_RENDERED "\n");
	check_has(a.summary, "chain secure_vxlan_in:, rules: " SECURE_IN_AS_RENDERED "\n");
	check_has(a.summary, "chain wireguard_in:, rules: " WG_IN_AS_RENDERED "\n");
	/* an IPv4 fabric: IPv4 drops a forwarded packet from the node's address itself */
	check_lacks(a.text, "chain forward");
	check_has(a.summary, "counter drop_forwarded\n");
	/* each rule's comment is the mark the summary shows */
	check_has(a.text, "\t\tcounter name \"drop_plain\" drop comment \"fabricd 67bd31\"\n");
	/* no EVPN vnet: no chain that would cost every packet leaving the node */
	check_lacks(a.text, "chain carry");
	check_lacks(a.summary, "chain postrouting");
	check_has(a.summary, "counter drop_leak\n");
	firewall_ruleset_free(&b);

	/* counters carried over: in the text, not in the hash */
	struct firewall_counter carry[FW_N_COUNTERS] = {{3, 300}, {2, 200}, {1, 100}, {0, 0}};

	CHECK_INT(firewall_render(&s, carry, &b), 0, "render with counters");
	check_has(b.text, "\tcounter drop_plain {\n\t\tpackets 3 bytes 300\n\t}\n");
	CHECK(a.hash == b.hash, "counter values do not change the hash");
	CHECK_STR(a.comment, b.comment, "nor the comment");
	firewall_ruleset_free(&b);
	desired_free(&s);

	/* pve3 listens on 51821; another port is another table */
	CHECK_INT(build(c, "pve3", &s), 0, "desired state of pve3");
	CHECK_INT(firewall_render(&s, NULL, &b), 0, "render pve3");
	check_has(b.text, "51821 : jump wireguard_in } comment");
	check_has(b.text, "198.51.100.11 . 300");
	check_lacks(b.text, "198.51.100.12 . 300");
	CHECK(a.hash != b.hash, "pve1 and pve3 differ");
	firewall_ruleset_free(&b);
	desired_free(&s);

	/*
	 * vnet200 just switched from plain: its old plain device is in its grace
	 * period, so members' plain VXLAN of VNI 200 is still accepted, but none
	 * leaves (VNI 200 is in secure_vnis, which the output chain drops)
	 */
	CHECK_INT(build(c, "pve1", &s), 0, "desired state of pve1");
	for (size_t i = 0; i < s.n_vnets; i++)
		s.vnets[i].plain_receiving = s.vnets[i].plain_sending = s.vnets[i].vni == 200;
	CHECK_INT(firewall_render(&s, NULL, &b), 0, "render during a switch to secure");
	check_has(b.text, "198.51.100.12 . 200");
	check_has(b.text, "198.51.100.13 . 200");
	check_has(b.text, "elements = { 200 }");
	/* the same skeleton: only set elements differ, so a switch changes them alone */
	CHECK(a.hash == b.hash, "the grace period changes set elements only");
	CHECK(b.sets[FW_SET_PLAIN_MEMBERS].n == 7, "the members of VNI 200 too");
	firewall_ruleset_free(&b);

	/* before the pass has muted the plain device, the table still lets it out */
	CHECK_INT(firewall_render_stage(&s, NULL, false, &b), 0, "render before the seal");
	check_has(b.text, "198.51.100.12 . 200");
	check_lacks(b.text, "elements = { 200 }");
	CHECK_INT(b.sets[FW_SET_SECURE_VNIS].n, 0, "no secure VNI yet");
	firewall_ruleset_free(&b);

	/* once it is muted, the early table is the sealed one */
	for (size_t i = 0; i < s.n_vnets; i++)
		s.vnets[i].plain_sending = false;
	CHECK_INT(firewall_render_stage(&s, NULL, false, &b), 0, "render once muted");
	check_has(b.text, "elements = { 200 }");
	firewall_ruleset_free(&b);

	/* the grace period over: the members' plain VXLAN of VNI 200 is dropped again */
	for (size_t i = 0; i < s.n_vnets; i++)
		s.vnets[i].plain_receiving = false;
	CHECK_INT(firewall_render(&s, NULL, &b), 0, "render after the grace period");
	check_lacks(b.text, "198.51.100.12 . 200");
	CHECK(a.hash == b.hash, "the same table as before the switch");
	firewall_ruleset_free(&b);
	desired_free(&s);

	/*
	 * A changed secure port changes the rules and the hash; the summary has
	 * the verdict map's ports as the kernel's copy is read: by port.
	 */
	static const struct {
		uint16_t port;
		const char *rule, *vmap;
	} ports[] = {
	    {4800, "4800 : jump secure_vxlan_in,",
	     "vmap{4789:jump:plain_vxlan_in,4800:jump:secure_vxlan_in,51820:"},
	    {4000, "4000 : jump secure_vxlan_in,",
	     "vmap{4000:jump:secure_vxlan_in,4789:jump:plain_vxlan_in,51820:"},
	};
	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		c->fabric.secure_port = ports[i].port;
		CHECK_INT(build(c, "pve1", &s), 0, "desired state, secure port %u", ports[i].port);
		CHECK_INT(firewall_render(&s, NULL, &b), 0, "render");
		check_has(b.text, ports[i].rule);
		CHECK(a.hash != b.hash, "secure port in the hash");
		check_has(b.summary, ports[i].vmap);
		firewall_ruleset_free(&b);
		desired_free(&s);
	}
	check_has(a.text, "udp dport 4790 oifname != ");
	firewall_ruleset_free(&a);
	cluster_free(c);
}

/* An IPv6 fabric: nothing forwarded goes into it (a node's own traffic only). */
static void test_forward_chain(void)
{
	struct firewall_chain_params p = {.fabric_if = "wgfab0",
					  .underlay_family = AF_INET,
					  .fabric_family = AF_INET6,
					  .secure_port = 4790,
					  .listen_port = 51820};
	struct strlist summary = {0};
	struct sbuf b = {0};
	char *text;

	CHECK_INT(firewall_render_chains(&b, &p, &summary), 0, "render the chains");
	text = sbuf_take(&b);
	CHECK(text != NULL, "text");
	if (text)
		check_has(text, "\tchain forward {\n\t\ttype filter hook forward priority -10; "
				"policy accept;\n\t\toifname \"wgfab0\" counter name "
				"\"drop_forwarded\" drop comment \"fabricd cf2c5f\"\n\t}\n");
	free(text);
	text = summary_join(&summary);
	if (text)
		check_has(text, "chain forward: filter forward -10 accept, rules: drop(cf2c5f)\n");
	free(text);
	strlist_free(&summary);
}

/* IPv6 underlay: ip6 saddr, ipv6 WireGuard set */
static void test_ipv6_underlay(void)
{
	struct cluster *c = load("examples/ipv6-underlay.json");
	struct firewall_ruleset a;
	struct node_state s;

	CHECK(c != NULL, "examples/ipv6-underlay.json loads");
	if (!c)
		return;
	CHECK_INT(build(c, "pve1", &s), 0, "desired state of pve1");
	CHECK_INT(firewall_render(&s, NULL, &a), 0, "render");
	check_has(a.text, "typeof ip6 saddr . @th,96,24\n");
	check_has(a.text, "\t\tudp dport 4789 ip6 saddr . @th,96,24 @plain_members accept comment");
	check_has(a.text, "2001:db8:10::12 . 200");
	check_has(a.text, "set wireguard_peers_ip {\n\t\ttype ipv4_addr\n\t}\n");
	check_has(a.text, "\t\ttype ipv6_addr\n\t\telements = { 2001:db8:10::12,");
	firewall_ruleset_free(&a);
	desired_free(&s);
	/* EVPN: members' VTEPs (IPv4 fabric addresses) in a set of their own family */
	for (size_t z = 0; z < c->n_zones; z++)
		c->zones[z].control_plane = CONTROL_PLANE_EVPN;
	CHECK_INT(build(c, "pve1", &s), 0, "desired state of pve1, evpn");
	CHECK_INT(firewall_render(&s, NULL, &a), 0, "render evpn");
	check_has(a.text, "set carried_members {\n\t\ttypeof ip6 saddr . @th,96,24\n");
	check_has(a.text, "set fabric_members {\n\t\ttypeof ip saddr . @th,96,24\n");
	check_has(a.text,
		  "\t\tiifname \"wgfab0\" ip saddr . @th,96,24 @fabric_members accept comment");
	check_has(a.text, "10.255.1.2 . 100");
	CHECK(s.carry, "evpn: the carry");
	firewall_ruleset_free(&a);
	desired_free(&s);
	cluster_free(c);
}

static const char two_node[] =
    "{\"version\": 1, \"cluster\": \"lab\", \"fabric\": {\"prefix\": \"10.255.0.0/24\","
    " \"listen_port\": 51820, \"underlay_mtu\": 1500},"
    " \"nodes\": [{\"name\": \"pve1\", \"underlay\": \"192.0.2.11\", \"fabric_address\": "
    "\"10.255.0.1\", \"public_key\": \"oT0zKXEx4tThGhDsMxXEouarKAUC9pxhPmhTWncTW2k=\"},"
    " {\"name\": \"pve2\", \"underlay\": \"192.0.2.12\", \"fabric_address\": \"10.255.0.2\","
    " \"public_key\": \"Szc7Zp0f/oNtJswocSJRgtc16WggekigRKMdDoKCyEM=\"}],"
    " \"zones\": [{\"name\": \"p\", \"transport\": \"plain\", \"vnets\": [{\"name\": "
    "\"vnet100\", \"vni\": 100}]}, {\"name\": \"s\", \"transport\": \"secure\", \"vnets\": "
    "[{\"name\": \"vnet200\", \"vni\": 200}]}]}";

/* firewall_plan() against have: its result, how many ops, and the op's verb and detail. */
static void check_plan(const struct node_state *want, const struct firewall_obs *have, int ret,
		       size_t n, enum op_verb verb, const char *detail)
{
	struct plan p;

	plan_init(&p, want->owner);
	CHECK_INT(firewall_plan(want, have, &p), ret, "firewall_plan");
	CHECK_INT(p.n, n, "ops planned");
	if (p.n) {
		CHECK_INT(p.ops[0].type, OP_FIREWALL_SET, "a table replacement");
		CHECK_INT(p.ops[0].phase, PHASE_GUARD, "before any device");
		CHECK_INT(p.ops[0].verb, verb, "verb");
		CHECK(p.ops[0].text && strstr(p.ops[0].text, "table inet fabricd {"), "its text");
		if (detail)
			CHECK(strstr(detail_of(&p.ops[0]), detail) != NULL,
			      "detail \"%s\" lacks \"%s\"", detail_of(&p.ops[0]), detail);
	}
	plan_free(&p);
}

static void check_plan_down(const struct firewall_obs *have, size_t n)
{
	struct plan p;

	plan_init(&p, "fabricd:lab");
	CHECK_INT(firewall_plan_down(have, &p), 0, "firewall_plan_down");
	CHECK_INT(p.n, n, "ops planned for down");
	if (p.n)
		CHECK(p.ops[0].type == OP_FIREWALL_DELETE && p.ops[0].phase == PHASE_UNGUARD,
		      "removed last");
	plan_free(&p);
}

/* Each chain's rules' verdicts as rendered: input, output and the three port chains. */
static const char *const as_rendered[5] = {INPUT_AS_RENDERED, OUTPUT_AS_RENDERED,
					   PLAIN_IN_AS_RENDERED, SECURE_IN_AS_RENDERED,
					   WG_IN_AS_RENDERED};

/*
 * The kernel's copy of the two-node definition's table for pve1 built as
 * engine/guard_nl.c does, from binary keys: its comment, each chain's rules'
 * verdicts, and its member's element left out or a stranger's added.
 */
static struct firewall_obs *obs_build(const char *comment, const char *const verdicts[5],
				      bool drop_member, bool extra_member)
{
	static const uint8_t member[8] = {192, 0, 2, 12, 0, 0, 100, 0}; /* 192.0.2.12 . 100 */
	static const uint8_t stranger[8] = {192, 0, 2, 99, 0, 0, 100, 0};
	static const uint8_t vni100[3] = {0, 0, 100}, vni200[3] = {0, 0, 200},
			     peer[4] = {192, 0, 2, 12};
	/* 10.255.0.2 . 100 and . 200: pve2's fabric address, for each vnet */
	static const uint8_t fabric[2][8] = {{10, 255, 0, 2, 0, 0, 100, 0},
					     {10, 255, 0, 2, 0, 0, 200, 0}};
	struct firewall_obs *fw = firewall_obs_new();

	CHECK(fw != NULL, "an observation");
	if (!fw)
		return NULL;
	if (comment)
		firewall_obs_set_comment(fw, comment);
	for (int i = 0; i < FW_N_COUNTERS; i++)
		CHECK_INT(firewall_obs_add_counter(fw, firewall_counter_names[i],
						   i == FW_DROP_PLAIN ? 5 : 1,
						   i == FW_DROP_PLAIN ? 550 : 10),
			  0, "counter");
	for (int i = 0; i < FW_N_SETS; i++)
		CHECK_INT(firewall_obs_add_set(fw, firewall_set_names[i], 0), 0, "set");
	if (!drop_member)
		firewall_obs_add_elem(fw, "plain_members", member, sizeof(member));
	if (extra_member)
		firewall_obs_add_elem(fw, "plain_members", stranger, sizeof(stranger));
	firewall_obs_add_elem(fw, "secure_vnis", vni200, sizeof(vni200));
	firewall_obs_add_elem(fw, "node_vnis", vni100, sizeof(vni100));
	firewall_obs_add_elem(fw, "node_vnis", vni200, sizeof(vni200));
	firewall_obs_add_elem(fw, "wireguard_peers_ip", peer, sizeof(peer));
	for (int i = 0; i < 2; i++)
		firewall_obs_add_elem(fw, "fabric_members", fabric[i], sizeof(fabric[i]));
	firewall_obs_add_chain(fw, "input", "filter", "input", -10, "accept", verdicts[0]);
	firewall_obs_add_chain(fw, "output", "filter", "output", -10, "accept", verdicts[1]);
	firewall_obs_add_chain(fw, "plain_vxlan_in", NULL, NULL, 0, NULL, verdicts[2]);
	firewall_obs_add_chain(fw, "secure_vxlan_in", NULL, NULL, 0, NULL, verdicts[3]);
	firewall_obs_add_chain(fw, "wireguard_in", NULL, NULL, 0, NULL, verdicts[4]);
	CHECK_INT(firewall_obs_finish(fw), 0, "finish");
	return fw;
}

/* The kernel's copy of rs as rendered, its plain member's element dropped or a stranger's added. */
static struct firewall_obs *obs_from_keys(const struct firewall_ruleset *rs, bool drop_member,
					  bool extra_member)
{
	return obs_build(rs->comment, as_rendered, drop_member, extra_member);
}

/* The kernel's copy with one chain's rules otherwise: the plan's detail for it. */
static const struct {
	const char *what;
	const char *verdicts[5];
	const char *detail;
} drifts[] = {
    {"a rule gone",
     {INPUT_PLAIN, OUTPUT_AS_RENDERED, PLAIN_IN_AS_RENDERED, SECURE_IN_AS_RENDERED,
      WG_IN_AS_RENDERED},
     "kernel copy differs: chain input: filter input -10 accept, rules: " INPUT_PLAIN
     ", where the definition makes chain input: filter input -10 accept, "
     "rules: " INPUT_AS_RENDERED},
    {"a port chain flushed in part",
     {INPUT_AS_RENDERED, OUTPUT_AS_RENDERED, PLAIN_IN_AS_RENDERED, SECURE_IN_AS_RENDERED,
      "accept(ca7e32) accept(5e0206)"},
     "kernel copy differs: chain wireguard_in, rules: accept(ca7e32) accept(5e0206), where the "
     "definition makes chain wireguard_in, rules: " WG_IN_AS_RENDERED},
    /* nft replace rule ... handle N: as many rules, another verdict */
    {"the drop replaced by an accept",
     {INPUT_AS_RENDERED, OUTPUT_AS_RENDERED,
      "accept(61f959) accept(22c8c2) accept(a213c1) accept(by hand)", SECURE_IN_AS_RENDERED,
      WG_IN_AS_RENDERED},
     "kernel copy differs: chain plain_vxlan_in, rules: accept(61f959) accept(22c8c2) "
     "accept(a213c1) accept(by hand), where the definition makes chain plain_vxlan_in, "
     "rules: " PLAIN_IN_AS_RENDERED},
    /* the same verdict, matching something else: only fabricd's comment is missing */
    {"an accept replaced by another accept",
     {INPUT_AS_RENDERED, OUTPUT_AS_RENDERED,
      "accept(61f959) accept(by hand) accept(a213c1) drop(67bd31)", SECURE_IN_AS_RENDERED,
      WG_IN_AS_RENDERED},
     "kernel copy differs: chain plain_vxlan_in, rules: accept(61f959) accept(by hand) "
     "accept(a213c1) drop(67bd31), where the definition makes chain plain_vxlan_in, "
     "rules: " PLAIN_IN_AS_RENDERED},
    /* a comment copied along from another rule of fabricd's */
    {"a rule with another rule's comment",
     {INPUT_AS_RENDERED, OUTPUT_AS_RENDERED, PLAIN_IN_AS_RENDERED,
      "accept(61f959) accept(a213c1) drop(2145ec)", WG_IN_AS_RENDERED},
     "kernel copy differs: chain secure_vxlan_in, rules: accept(61f959) accept(a213c1) "
     "drop(2145ec), "
     "where the "
     "definition makes chain secure_vxlan_in, rules: " SECURE_IN_AS_RENDERED},
    {"the verdict map's plain port sent to accept",
     {INPUT_PLAIN " vmap{4789:accept,4790:jump:secure_vxlan_in,51820:jump:wireguard_in}(ce1eae)",
      OUTPUT_AS_RENDERED, PLAIN_IN_AS_RENDERED, SECURE_IN_AS_RENDERED, WG_IN_AS_RENDERED},
     "kernel copy differs: chain input: filter input -10 accept, rules: " INPUT_PLAIN
     " vmap{4789:accept,4790:jump:secure_vxlan_in,51820:jump:wireguard_in}(ce1eae), where the "
     "definition makes chain input: filter input -10 accept, rules: " INPUT_AS_RENDERED},
    {"the leak rule left counting",
     {INPUT_AS_RENDERED, "drop(9a2957) -(by hand)", PLAIN_IN_AS_RENDERED, SECURE_IN_AS_RENDERED,
      WG_IN_AS_RENDERED},
     "kernel copy differs: chain output: filter output -10 accept, rules: drop(9a2957) "
     "-(by hand), where the definition makes chain output: filter output -10 accept, "
     "rules: " OUTPUT_AS_RENDERED},
    /* until 2026-12-07 only the first was named: the secure port's drop gone was not said */
    {"two chains' drops deleted",
     {INPUT_AS_RENDERED, "drop(254902)", PLAIN_IN_AS_RENDERED, "accept(22c8c2) accept(a213c1)",
      "accept(ca7e32) accept(5e0206)"},
     "kernel copy differs: chain output: filter output -10 accept, rules: drop(254902), where "
     "the definition makes chain output: filter output -10 accept, rules: " OUTPUT_AS_RENDERED
     ", and chain secure_vxlan_in, chain wireguard_in differ too"},
    {"one more chain's drop deleted",
     {INPUT_AS_RENDERED, "drop(254902)", PLAIN_IN_AS_RENDERED, "accept(22c8c2) accept(a213c1)",
      WG_IN_AS_RENDERED},
     "rules: " OUTPUT_AS_RENDERED ", and chain secure_vxlan_in differs too"},
};

static void test_observed_summary(void)
{
	struct firewall_obs *fw = NULL;
	struct cluster *c = NULL;
	struct firewall_counter k;
	struct firewall_ruleset rs;
	struct node_state s;
	struct diag d;
	char other[64];

	diag_init(&d);
	CHECK_INT(config_load_buffer(two_node, strlen(two_node), &c, &d), 0, "two-node loads");
	diag_print(&d, stderr);
	diag_free(&d);
	if (!c)
		return;
	CHECK_INT(build(c, "pve1", &s), 0, "desired state of pve1");
	CHECK_INT(firewall_render(&s, NULL, &rs), 0, "render");

	/* the kernel's copy as rendered: nothing to plan; the comment makes it ours */
	fw = obs_build(rs.comment, as_rendered, false, false);
	check_plan(&s, fw, 0, 0, VERB_CHANGE, NULL);
	check_plan_down(fw, 1);
	CHECK(firewall_obs_counter(fw, FW_DROP_PLAIN, &k) && k.packets == 5 && k.bytes == 550,
	      "drop_plain 5/550");
	CHECK(firewall_obs_counter(fw, FW_DROP_SECURE, &k) && k.packets == 1, "drop_secure 1");
	firewall_obs_free(fw);

	/* each out of sync: apply would replace the table, and the plan says why */
	for (size_t i = 0; i < sizeof(drifts) / sizeof(drifts[0]); i++) {
		fw = obs_build(rs.comment, drifts[i].verdicts, false, false);
		check_plan(&s, fw, 0, 1, VERB_CHANGE, drifts[i].detail);
		firewall_obs_free(fw);
	}

	/* another rendering (the definition changed): replaced, counters carried over */
	fw = obs_build("fabricd:lab 0", as_rendered, false, false);
	check_plan(&s, fw, 0, 1, VERB_CHANGE, "rules changed");
	firewall_obs_free(fw);

	/* not fabricd's (no comment, another cluster): never replaced, left alone by down */
	fw = obs_build(NULL, as_rendered, false, false);
	check_plan(&s, fw, -EEXIST, 0, VERB_CHANGE, NULL);
	check_plan_down(fw, 0);
	firewall_obs_free(fw);
	snprintf(other, sizeof(other), "fabricd:other %016llx", (unsigned long long)rs.hash);
	fw = obs_build(other, as_rendered, false, false);
	check_plan(&s, fw, -EEXIST, 0, VERB_CHANGE, NULL);
	check_plan_down(fw, 0);
	firewall_obs_free(fw);

	/* none yet: created */
	check_plan(&s, NULL, 0, 1, VERB_CREATE, "guard for 1 plain and 1 secure vnets");
	check_plan_down(NULL, 0);

	firewall_ruleset_free(&rs);
	desired_free(&s);
	cluster_free(c);
}

/* Only set elements differ: they change in one transaction, the table stays. */
static void test_delta(void)
{
	struct firewall_obs *fw;
	struct cluster *c = NULL;
	struct firewall_ruleset rs;
	struct node_state s;
	struct diag d;
	struct plan p;

	diag_init(&d);
	CHECK_INT(config_load_buffer(two_node, strlen(two_node), &c, &d), 0, "two-node loads");
	diag_free(&d);
	if (!c || build(c, "pve1", &s) < 0)
		return;
	CHECK_INT(firewall_render(&s, NULL, &rs), 0, "render");

	/* decoded from the keys: the same elements as rendered, nothing to do */
	fw = obs_from_keys(&rs, false, false);
	check_plan(&s, fw, 0, 0, VERB_CHANGE, NULL);
	firewall_obs_free(fw);

	/* a member deleted: one delta op that adds it back, no table text */
	fw = obs_from_keys(&rs, true, false);
	plan_init(&p, s.owner);
	CHECK_INT(firewall_plan(&s, fw, &p), 0, "plan the delta");
	CHECK_INT(p.n, 1, "one op");
	if (p.n == 1) {
		CHECK(!strncmp(p.ops[0].text, FIREWALL_DELTA_MARK, strlen(FIREWALL_DELTA_MARK)),
		      "set elements only");
		check_has(p.ops[0].text,
			  "add element inet fabricd plain_members { 192.0.2.12 . 100 }\n");
		check_lacks(p.ops[0].text, "delete element");
		check_lacks(p.ops[0].text, "table inet fabricd {");
		check_lacks(p.ops[0].text, "secure_vnis");
		check_has(detail_of(&p.ops[0]), "1 added, 0 removed");
		CHECK_INT(p.ops[0].phase, PHASE_GUARD, "before any device");
	}
	plan_free(&p);
	firewall_obs_free(fw);

	/*
	 * a stranger added as well: it goes by the same delta, added first so
	 * that the delete cannot fail on an element already gone (delta_text)
	 */
	fw = obs_from_keys(&rs, true, true);
	plan_init(&p, s.owner);
	CHECK_INT(firewall_plan(&s, fw, &p), 0, "plan the delta");
	CHECK_INT(p.n, 1, "one op");
	if (p.n == 1) {
		const char *text = p.ops[0].text;
		const char *add = strstr(text, "add element inet fabricd plain_members { "
					       "192.0.2.99 . 100 }\n");
		const char *del = strstr(text, "delete element inet fabricd plain_members { "
					       "192.0.2.99 . 100 }\n");

		CHECK(!strncmp(text, FIREWALL_DELTA_MARK, strlen(FIREWALL_DELTA_MARK)),
		      "set elements only");
		check_has(text, "add element inet fabricd plain_members { 192.0.2.12 . 100 }\n");
		CHECK(add && del && add < del, "the stranger is added, then deleted");
		check_lacks(text, "table inet fabricd {");
		check_has(detail_of(&p.ops[0]), "1 added, 1 removed");
	}
	plan_free(&p);
	firewall_obs_free(fw);

	/*
	 * vnet200 switching from plain, its plain device still sending: the early
	 * table opens plain VXLAN of VNI 200, the seal closes it again; both whole
	 * tables, since a vnet is switching (plan_stage says why)
	 */
	fw = obs_from_keys(&rs, false, false);
	for (size_t i = 0; i < s.n_vnets; i++)
		s.vnets[i].plain_receiving = s.vnets[i].plain_sending = s.vnets[i].vni == 200;
	plan_init(&p, s.owner);
	CHECK_INT(firewall_plan(&s, fw, &p), 0, "plan a switch");
	CHECK_INT(p.n, 2, "guard and seal");
	if (p.n == 2) {
		CHECK_INT(p.ops[0].phase, PHASE_GUARD, "the early table first");
		check_has(p.ops[0].text, "table inet fabricd {");
		check_has(p.ops[0].text, "192.0.2.12 . 200");
		CHECK_INT(p.ops[1].phase, PHASE_SEAL, "then the seal");
		check_has(p.ops[1].text, "table inet fabricd {");
	}
	plan_free(&p);
	firewall_obs_free(fw);

	/* a rule gone as well: the whole table */
	fw = obs_from_keys(&rs, true, false);
	firewall_obs_add_chain(fw, "theirs", NULL, NULL, 0, NULL, "accept(by hand)");
	CHECK_INT(firewall_obs_finish(fw), 0, "finish again");
	for (size_t i = 0; i < s.n_vnets; i++)
		s.vnets[i].plain_receiving = s.vnets[i].plain_sending = false;
	check_plan(&s, fw, 0, 1, VERB_CHANGE,
		   "kernel copy has objects the definition does not make: chain theirs, rules: "
		   "accept(by hand)");
	firewall_obs_free(fw);

	/* a key of another length is another set type: the whole table, not a delta */
	fw = obs_from_keys(&rs, false, false);
	CHECK_INT(firewall_obs_add_elem(fw, "secure_vnis", (const uint8_t *)"\x01\x02", 2), 0,
		  "odd");
	CHECK_INT(firewall_obs_finish(fw), 0, "finish");
	check_plan(&s, fw, 0, 1, VERB_CHANGE, "kernel copy has objects");
	firewall_obs_free(fw);

	firewall_ruleset_free(&rs);
	desired_free(&s);
	cluster_free(c);
}

static size_t count_of(const char *text, const char *what)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* Each of a step's elements in the set's chunks exactly once, none in the table's step. */
static void check_chunks(const struct strlist *st, size_t from, size_t to, const char *set,
			 const char *const *elems, size_t n_elems, size_t n_last)
{
	char head[96];

	snprintf(head, sizeof(head), "add element inet fabricd %s { ", set);
	for (size_t i = from; i < to; i++) {
		CHECK(!strncmp(st->v[i], head, strlen(head)) &&
			  st->v[i][strlen(st->v[i]) - 1] == '\n',
		      "step %zu adds elements to %s: %s", i, set, st->v[i]);
		/* a delta's line, as engine/guard_delta.c sends over netlink: one line, ", " */
		CHECK(strchr(st->v[i], '\n') == st->v[i] + strlen(st->v[i]) - 1 &&
			  !strchr(st->v[i], '\t') &&
			  count_of(st->v[i], ", ") + 1 == count_of(st->v[i], " . "),
		      "step %zu is one line of elements joined by \", \": %s", i, st->v[i]);
	}
	CHECK_INT((int)count_of(st->v[to - 1], " . "), (int)n_last,
		  "%s: the last chunk holds the rest", set);
	for (size_t m = 0; m < n_elems; m++) {
		size_t n = 0;

		check_lacks(st->v[0], elems[m]);
		for (size_t i = from; i < to; i++)
			n += count_of(st->v[i], elems[m]);
		CHECK_INT((int)n, 1, "%s in one chunk", elems[m]);
	}
}

/*
 * A new table in steps: the allow-lists plain_members and fabric_members
 * empty first, then their elements in chunks (guard_io.c).
 */
static void test_load_steps(void)
{
	static const char *const members[] = {"198.51.100.12 . 100", "198.51.100.13 . 100",
					      "198.51.100.12 . 101", "198.51.100.13 . 101",
					      "198.51.100.13 . 300"};
	static const char *const fabric[] = {
	    "10.255.0.2 . 100", "10.255.0.2 . 101", "10.255.0.2 . 200", "10.255.0.3 . 100",
	    "10.255.0.3 . 101", "10.255.0.3 . 200", "10.255.0.3 . 300"};
	struct cluster *c = load("examples/vxlan-3node.json");
	struct firewall_ruleset rs;
	struct node_state s;
	struct strlist st;

	CHECK(c != NULL, "examples/vxlan-3node.json loads");
	if (!c)
		return;
	CHECK_INT(build(c, "pve1", &s), 0, "desired state of pve1");
	CHECK_INT(firewall_render(&s, NULL, &rs), 0, "render");
	/* five and seven members: as it is when they fit in a chunk, or chunking is off */
	for (size_t chunk = 0; chunk <= 7; chunk += 7) {
		CHECK_INT(firewall_load_steps(rs.text, chunk, &st), 0, "steps");
		CHECK(st.n == 1 && !strcmp(st.v[0], rs.text), "chunk %zu: one step, the text",
		      chunk);
		strlist_free(&st);
	}
	/* only fabric_members is over 5: plain_members stays in the table */
	CHECK_INT(firewall_load_steps(rs.text, 5, &st), 0, "steps of 5");
	CHECK_INT((int)st.n, 3, "the table, then 5 + 2 fabric members");
	if (st.n == 3) {
		check_has(st.v[0], members[4]);
		check_chunks(&st, 1, 3, "fabric_members", fabric, 7, 2);
	}
	strlist_free(&st);
	CHECK_INT(firewall_load_steps(rs.text, 2, &st), 0, "steps of 2");
	CHECK_INT((int)st.n, 8, "the table, then 2 + 2 + 1 plain and 2 + 2 + 2 + 1 fabric members");
	if (st.n == 8) {
		check_has(st.v[0], "set plain_members {\n\t\ttypeof ip saddr . @th,96,24\n\t}\n");
		check_has(st.v[0], "set fabric_members {\n\t\ttypeof ip saddr . @th,96,24\n\t}\n");
		/* the deny-list comes whole with the table: never laxer while loading */
		check_has(st.v[0],
			  "set secure_vnis {\n\t\ttypeof @th,96,24\n\t\telements = { 200 }\n");
		check_has(st.v[0], "198.51.100.13 }\n"); /* wireguard_peers_ip kept */
		check_has(st.v[0], "@plain_members accept comment");
		check_has(st.v[0], "@fabric_members accept comment");
		CHECK_INT((int)(strlen(st.v[0]) + 700 > strlen(rs.text)), 1,
			  "the rest of the table");
		check_chunks(&st, 1, 4, "plain_members", members, 5, 1);
		check_chunks(&st, 4, 8, "fabric_members", fabric, 7, 1);
	}
	strlist_free(&st);
	firewall_ruleset_free(&rs);
	desired_free(&s);
	cluster_free(c);
}

/* EVPN vnets (engine/switch.c): carried into WireGuard by the mark, members by transport. */
static void test_evpn_carry(void)
{
	struct cluster *c = NULL;
	struct firewall_ruleset rs;
	struct desired_vnet *sec, *pln;
	struct node_state s;
	struct diag d;
	struct firewall_key key;
	char text[64];

	diag_init(&d);
	CHECK_INT(config_load_buffer(two_node, strlen(two_node), &c, &d), 0, "two-node loads");
	diag_free(&d);
	if (!c)
		return;
	c->zones[0].control_plane = c->zones[1].control_plane = CONTROL_PLANE_EVPN;
	if (build(c, "pve1", &s) < 0) {
		cluster_free(c);
		return;
	}
	pln = (struct desired_vnet *)desired_find_vnet(&s, "vnet100");
	sec = (struct desired_vnet *)desired_find_vnet(&s, "vnet200");
	CHECK(sec && pln && !strcmp(sec->vxlan, "vx200") && sec->port == 4789,
	      "a secure EVPN vnet's device is vx<VNI> on 4789");
	CHECK(sec && sec->local.family == AF_INET && sec->local.bytes[0] == 10,
	      "its VTEP: the fabric address");
	/* steady: the secure VNI carried, its member only through wgfab0 */
	sec->carried = true;
	CHECK_INT(firewall_render(&s, NULL, &rs), 0, "render");
	CHECK_INT(rs.sets[FW_SET_CARRIED_VNIS].n, 1, "one carried VNI");
	elems_get(&rs.sets[FW_SET_CARRIED_VNIS], 0, &key);
	key_text(&key, text, sizeof(text));
	CHECK_STR(text, "200", "VNI 200 carried");
	CHECK_INT(rs.sets[FW_SET_CARRIED_MEMBERS].n, 1,
		  "the secure vnet's member, not switched yet");
	elems_get(&rs.sets[FW_SET_CARRIED_MEMBERS], 0, &key);
	key_text(&key, text, sizeof(text));
	CHECK_STR(text, "192.0.2.12 . 200", "pve2's underlay address . 200");
	CHECK_INT(rs.sets[FW_SET_FABRIC_MEMBERS].n, 2, "the VTEPs of secure members, both vnets");
	elems_get(&rs.sets[FW_SET_FABRIC_MEMBERS], 0, &key);
	key_text(&key, text, sizeof(text));
	CHECK_STR(text, "10.255.0.2 . 100", "pve2's fabric address . 100");
	CHECK_INT(rs.sets[FW_SET_PLAIN_MEMBERS].n, 1, "plain members: the plain vnet's only");
	CHECK_INT(rs.sets[FW_SET_SECURE_VNIS].n, 0,
		  "not a secure_vnis deny: its carried VXLAN must pass the output chain");
	check_has(rs.text, "\tchain carry {\n\t\ttype route hook output priority mangle; policy "
			   "accept;\n\t\tudp dport 4789 @th,96,24 @carried_vnis meta mark set meta "
			   "mark & 0xffff0000 | 0x0000fab0 comment \"fabricd 77fb12\"\n\t}\n");
	check_has(rs.text,
		  "\tchain postrouting {\n\t\ttype filter hook postrouting priority -10; "
		  "policy accept;\n\t\tudp dport 4789 @th,96,24 @carried_vnis oifname != "
		  "\"wgfab0\" counter name \"drop_leak\" drop comment \"fabricd 56cc42\"\n\t}\n");
	check_has(rs.summary, "chain carry: route output -150 accept, rules: -(77fb12)\n");
	check_has(rs.summary,
		  "chain postrouting: filter postrouting -10 accept, rules: drop(56cc42)\n");
	firewall_ruleset_free(&rs);
	/* just switched to secure: clear text still taken */
	sec->plain_receiving = true;
	CHECK_INT(firewall_render(&s, NULL, &rs), 0, "render");
	CHECK_INT(rs.sets[FW_SET_PLAIN_MEMBERS].n, 2, "the switched vnet's member too");
	firewall_ruleset_free(&rs);
	/* just switched to plain: still carried, clear text taken */
	sec->plain_receiving = false;
	sec->transport = TRANSPORT_PLAIN;
	CHECK_INT(firewall_render(&s, NULL, &rs), 0, "render");
	CHECK_INT(rs.sets[FW_SET_CARRIED_VNIS].n, 1, "still carried");
	CHECK_INT(rs.sets[FW_SET_CARRIED_MEMBERS].n, 0, "plain: clear text either way");
	CHECK_INT(rs.sets[FW_SET_FABRIC_MEMBERS].n, 2, "secure members' VTEPs through WireGuard");
	CHECK_INT(rs.sets[FW_SET_PLAIN_MEMBERS].n, 2, "both plain");
	firewall_ruleset_free(&rs);
	desired_free(&s);
	cluster_free(c);
}

/* n VNI keys from first on (3 bytes each), sorted. */
static void vni_keys(struct firewall_elems *l, uint32_t first, size_t n)
{
	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < n; i++) {
		struct firewall_key k = {.len = 3};
		uint32_t v = first + (uint32_t)i;

		k.b[0] = (uint8_t)(v >> 16);
		k.b[1] = (uint8_t)(v >> 8);
		k.b[2] = (uint8_t)v;
		CHECK_INT(elems_add(l, &k), 0, "add a key");
	}
	elems_sort(l);
}

/*
 * Set sizes (README "Scale": a sized set's dump is linear): none under
 * FW_SIZED_MIN, 2-4 times the elements above; kept while have and what want
 * adds fit and it is not 8 times too big.
 */
static void test_set_sizes(void)
{
	static const struct {
		size_t have_n;	     /* VNIs 1.. */
		uint32_t want_first; /* VNIs want_first.. */
		size_t want_n;
		uint32_t have_size, size; /* declared, and what to declare */
		const char *what;
	} keep[] = {
	    {3000, 1, 3100, 8192, 8192, "growth that fits"},
	    /* a delta adds before it deletes: 3000 there and 5200 new do not fit 8192 */
	    {3000, 100000, 5200, 8192, 16384, "what the delta adds does not fit: fresh"},
	    {3000, 1, 1024, 8192, 8192, "an eighth: kept"},
	    {3000, 1, 1023, 8192, 0, "under an eighth and small: no size"},
	    /* declared without a size (an older fabricd's table) */
	    {3000, 1, 3000, 0, 8192, "unsized and large: fresh"},
	    {10, 1, 12, 0, 0, "unsized and small: none"},
	};
	struct firewall_elems want, have;

	CHECK_INT((int)firewall_set_size_fresh(0), 0, "empty: no size");
	CHECK_INT((int)firewall_set_size_fresh(FW_SIZED_MIN - 1), 0, "small: no size");
	CHECK_INT((int)firewall_set_size_fresh(FW_SIZED_MIN), 2 * FW_SIZED_MIN, "at the minimum");
	CHECK_INT((int)firewall_set_size_fresh(1025), 4096, "just over a power of two");
	CHECK_INT((int)firewall_set_size_fresh(32256), 65536, "the bench's plain_members");

	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		vni_keys(&have, 1, keep[i].have_n);
		vni_keys(&want, keep[i].want_first, keep[i].want_n);
		CHECK_INT((int)firewall_set_size_keep(&want, &have, keep[i].have_size),
			  (int)keep[i].size, "%s", keep[i].what);
		elems_free(&want);
		elems_free(&have);
	}
}

int main(void)
{
	test_load_steps();
	test_three_node_pve1();
	test_ipv6_underlay();
	test_forward_chain();
	test_observed_summary();
	test_delta();
	test_evpn_carry();
	test_set_sizes();
	return unit_summary("test_firewall");
}
