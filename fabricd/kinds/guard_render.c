// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guard_render.c - the `inet fabricd` table as nft text, from one node's
 * desired state, and the summary its kernel copy must match. Pure: no kernel
 * access, the same state always gives the same bytes.
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "kinds/guard.h"
#include "kinds/guard_priv.h"

const char *const firewall_counter_names[FW_N_COUNTERS] = {
    [FW_DROP_PLAIN] = "drop_plain",	    [FW_DROP_SECURE] = "drop_secure",
    [FW_DROP_WIREGUARD] = "drop_wireguard", [FW_DROP_LEAK] = "drop_leak",
    [FW_DROP_FORWARDED] = "drop_forwarded",
};

/* --- what the table holds ----------------------------------------------------------- */

/* The table's content, before it is text. Set elements in render order. */
struct spec {
	const char *fabric_if;
	int underlay_family;
	uint16_t secure_port, listen_port;
	/* an EVPN vnet is here: the chains that carry its VXLAN (a route chain costs every packet)
	 */
	bool carry;
	/* by set id (kinds/guard.h: FW_SET_*; fabric_members in the fabric prefix's family) */
	struct firewall_elems sets[FW_N_SETS];
	uint32_t size[FW_N_SETS]; /* declared sizes (0: none) */
	int fabric_family;
	int wg_any_family; /* WireGuard of this family from anywhere (firewall_chain_params) */
};

static void spec_free(struct spec *s)
{
	for (int i = 0; i < FW_N_SETS; i++)
		elems_free(&s->sets[i]);
}

static int add_addr(struct firewall_elems *l, const struct ip_addr *a, long long vni)
{
	struct firewall_key k;

	key_make(&k, a, vni);
	return elems_add(l, &k);
}

static int add_wg_peer(struct spec *s, const struct ip_addr *a)
{
	if (a->family == AF_INET)
		return add_addr(&s->sets[FW_SET_WG_IP], a, -1);
	if (a->family == AF_INET6)
		return add_addr(&s->sets[FW_SET_WG_IP6], a, -1);
	return 0; /* a DNS endpoint: resolved only when WireGuard is configured */
}

/* The "address . VNI" allow-lists a vnet's other members go into (vnet_pairs()). */
enum {
	PAIRS_PLAIN = 1 << 0,	/* plain_members: underlay addresses */
	PAIRS_CARRIED = 1 << 1, /* carried_members: underlay addresses */
	PAIRS_FABRIC = 1 << 2,	/* fabric_members: fabric addresses */
};

/*
 * An EVPN vnet (engine/switch.c): carried, its VXLAN is marked into
 * WireGuard and may leave through nothing else. Through the fabric device
 * it takes its members' VXLAN from their fabric addresses (a secure
 * member's VTEP) and, secure, from their underlay addresses (a member that
 * has not switched yet, carrying); clear text only while plain, or in its
 * grace period after the switch to secure (plain_receiving).
 */
static unsigned int evpn_vnet_pairs(const struct desired_vnet *v)
{
	bool secure = v->transport == TRANSPORT_SECURE;
	unsigned int sets = PAIRS_FABRIC;

	if (!secure || v->plain_receiving)
		sets |= PAIRS_PLAIN;
	if (secure)
		sets |= PAIRS_CARRIED;
	return sets;
}

/* sealed: false for the table a switching pass loads before its links change */
static unsigned int vnet_pairs(const struct desired_vnet *v, bool sealed)
{
	bool secure = v->transport == TRANSPORT_SECURE;
	/*
	 * Secure VXLAN only from the zone's members' fabric addresses:
	 * WireGuard authenticates a node of the cluster, not a member of the
	 * zone. A plain vnet's too: its standby secure device takes a member's
	 * secure VXLAN when that member switches first.
	 */
	unsigned int sets = PAIRS_FABRIC;

	if (v->evpn)
		return evpn_vnet_pairs(v);
	/*
	 * A plain vnet takes its members' plain VXLAN. Switching from plain:
	 * until its plain device is gone, nodes that have not switched yet
	 * still send this VNI as plain VXLAN, and it is received from them;
	 * until this pass has muted that device, it may also still leave (the
	 * zone's exposure of a moment earlier).
	 */
	if (!secure || v->plain_receiving || (!sealed && v->plain_sending))
		sets |= PAIRS_PLAIN;
	return sets;
}

/* Whether the vnet's VNI is in secure_vnis (never leaves as plain VXLAN) or carried_vnis. */
static int add_vnet_vnis(struct spec *s, const struct desired_vnet *v, bool sealed)
{
	if (v->evpn)
		return v->carried ? add_addr(&s->sets[FW_SET_CARRIED_VNIS], NULL, v->vni) : 0;
	if (v->transport == TRANSPORT_SECURE && (sealed || !v->plain_sending))
		return add_addr(&s->sets[FW_SET_SECURE_VNIS], NULL, v->vni);
	return 0;
}

/* Other members of v's zone: one (address, VNI) pair each in a members set. */
static size_t other_members(const struct node_state *want, const struct desired_vnet *v)
{
	const struct zone *z = &want->cluster->zones[v->zone];

	return z->n_members - (size_t)zone_has_member(z, want->self);
}

/*
 * Room for the large sets: plain_members, nearly all of it the plain vnets'
 * (remote, VNI) pairs (32,256 at 64 nodes x 1024 vnets), and fabric_members,
 * a pair per vnet and other member (64,512): one array each, not a doubling
 * series of them, every fresh page of which the daemon's pass touches
 * (README, "Scale").
 */
static int reserve_members(struct spec *s, const struct node_state *want, const uint8_t *pairs)
{
	size_t plain = 0, fabric = 0;

	for (size_t i = 0; i < want->n_vnets; i++) {
		if (pairs[i] & PAIRS_PLAIN)
			plain += other_members(want, &want->vnets[i]);
		fabric += other_members(want, &want->vnets[i]);
	}
	if (elems_reserve(&s->sets[FW_SET_PLAIN_MEMBERS], plain) < 0)
		return -ENOMEM;
	return elems_reserve(&s->sets[FW_SET_FABRIC_MEMBERS], fabric);
}

/* What the pairs are made of: the nodes in one address's order, the vnets by VNI. */
struct pairs_order {
	size_t *nodes; /* the other nodes */
	size_t n_nodes;
	size_t *vnets;	 /* want->vnets indices */
	uint8_t *member; /* [zone * cluster nodes + node]: a member of the zone */
	bool fabric;	 /* nodes ordered by fabric address, else by underlay */
	const struct cluster *c;
};

static const struct ip_addr *pair_addr(const struct cluster *c, size_t node, bool fabric)
{
	return fabric ? &c->nodes[node].fabric_address : &c->nodes[node].underlay;
}

/* qsort_r's context: the order being sorted */
static int by_address(const void *a, const void *b, void *ctx)
{
	const struct pairs_order *o = ctx;
	const struct ip_addr *x = pair_addr(o->c, *(const size_t *)a, o->fabric);
	const struct ip_addr *y = pair_addr(o->c, *(const size_t *)b, o->fabric);
	struct firewall_key kx, ky;

	key_make(&kx, x, 0);
	key_make(&ky, y, 0);
	return key_cmp(&kx, &ky);
}

static int by_vni(const void *a, const void *b, void *ctx)
{
	const struct node_state *want = ctx;
	uint32_t x = want->vnets[*(const size_t *)a].vni, y = want->vnets[*(const size_t *)b].vni;

	return (x > y) - (x < y);
}

static void pairs_order_free(struct pairs_order *o)
{
	free(o->nodes);
	free(o->vnets);
	free(o->member);
}

static int pairs_order_init(struct pairs_order *o, const struct node_state *want)
{
	const struct cluster *c = want->cluster;

	memset(o, 0, sizeof(*o));
	o->c = c;
	o->nodes = calloc(c->n_nodes ? c->n_nodes : 1, sizeof(*o->nodes));
	o->vnets = calloc(want->n_vnets ? want->n_vnets : 1, sizeof(*o->vnets));
	o->member = calloc(c->n_zones && c->n_nodes ? c->n_zones * c->n_nodes : 1, 1);
	if (!o->nodes || !o->vnets || !o->member) {
		pairs_order_free(o);
		return -ENOMEM;
	}
	for (size_t z = 0; z < c->n_zones; z++) {
		for (size_t m = 0; m < c->zones[z].n_members; m++)
			o->member[z * c->n_nodes + c->zones[z].members[m]] = 1;
	}
	for (size_t n = 0; n < c->n_nodes; n++) {
		if (n != want->self)
			o->nodes[o->n_nodes++] = n;
	}
	for (size_t i = 0; i < want->n_vnets; i++)
		o->vnets[i] = i;
	qsort_r(o->vnets, want->n_vnets, sizeof(*o->vnets), by_vni, (void *)want);
	return 0;
}

/*
 * One "address . VNI" set: for each other node in its address's order, the
 * vnets (by VNI) whose zone it is a member of and whose pairs go into this
 * set. Made in the set's order, it needs no sort: sorting 97,000 pairs made
 * in vnet order was two thirds of rendering the guard at 64 nodes x 1024
 * vnets (README, "Scale").
 */
static int add_pairs(struct firewall_elems *set, unsigned int bit, bool fabric,
		     struct pairs_order *o, const struct node_state *want, const uint8_t *pairs)
{
	const struct cluster *c = want->cluster;
	int ret = 0;

	o->fabric = fabric;
	qsort_r(o->nodes, o->n_nodes, sizeof(*o->nodes), by_address, o);
	for (size_t k = 0; !ret && k < o->n_nodes; k++) {
		const struct ip_addr *a = pair_addr(c, o->nodes[k], fabric);
		const uint8_t *member = o->member + o->nodes[k];

		for (size_t j = 0; !ret && j < want->n_vnets; j++) {
			const struct desired_vnet *v = &want->vnets[o->vnets[j]];

			if ((pairs[o->vnets[j]] & bit) && member[v->zone * c->n_nodes])
				ret = add_addr(set, a, v->vni);
		}
	}
	return ret;
}

static int add_member_pairs(struct spec *s, const struct node_state *want, const uint8_t *pairs)
{
	struct pairs_order o;
	int ret = pairs_order_init(&o, want);

	if (!ret)
		ret =
		    add_pairs(&s->sets[FW_SET_PLAIN_MEMBERS], PAIRS_PLAIN, false, &o, want, pairs);
	if (!ret)
		ret = add_pairs(&s->sets[FW_SET_CARRIED_MEMBERS], PAIRS_CARRIED, false, &o, want,
				pairs);
	if (!ret)
		ret =
		    add_pairs(&s->sets[FW_SET_FABRIC_MEMBERS], PAIRS_FABRIC, true, &o, want, pairs);
	pairs_order_free(&o);
	return ret;
}

/*
 * The family of this node's endpoint literal where it is not its underlay's
 * (an IPv6 endpoint in an IPv4 cluster): its peers reach it from their own
 * addresses of that family, which no definition has. 0 otherwise.
 */
static int own_endpoint_family(const struct cluster *c, size_t self)
{
	const struct node *n = &c->nodes[self];
	struct ip_addr a;

	if (!(n->flags & NODE_HAS_ENDPOINT) || ip_addr_parse(n->endpoint_host, &a) < 0)
		return 0;
	return a.family != n->underlay.family ? a.family : 0;
}

/* sealed: false for the table a switching pass loads before its links change */
static int spec_build(const struct node_state *want, bool sealed, struct spec *s)
{
	const struct cluster *c = want->cluster;
	uint8_t *pairs = calloc(want->n_vnets ? want->n_vnets : 1, 1);
	int ret = pairs ? 0 : -ENOMEM;

	memset(s, 0, sizeof(*s));
	s->fabric_if = want->fabric.ifname[0] ? want->fabric.ifname : FABRIC_IFNAME;
	s->underlay_family = c->nodes[want->self].underlay.family;
	s->secure_port = c->fabric.secure_port;
	s->listen_port = want->fabric.listen_port;
	s->carry = want->carry;
	s->fabric_family = c->fabric.prefix.addr.family;
	s->wg_any_family = own_endpoint_family(c, want->self);
	for (size_t i = 0; !ret && i < want->n_vnets; i++) {
		pairs[i] = (uint8_t)vnet_pairs(&want->vnets[i], sealed);
		ret = add_vnet_vnis(s, &want->vnets[i], sealed);
		if (!ret)
			ret = add_addr(&s->sets[FW_SET_NODE_VNIS], NULL, want->vnets[i].vni);
	}
	if (!ret)
		ret = reserve_members(s, want, pairs);
	if (!ret)
		ret = add_member_pairs(s, want, pairs);
	free(pairs);
	for (size_t i = 0; !ret && i < want->fabric.n_peers; i++) {
		const struct desired_peer *p = &want->fabric.peers[i];

		ret = add_wg_peer(s, &c->nodes[p->node].underlay);
		if (!ret)
			ret = add_wg_peer(s, &p->endpoint_addr);
	}
	if (ret) {
		spec_free(s);
		return ret;
	}
	/* sorted (the member pairs are already): the text does not follow the definition's order */
	for (int i = 0; i < FW_N_SETS; i++)
		elems_sort(&s->sets[i]);
	return 0;
}

/* --- text ------------------------------------------------------------------------------ */

/* Set id of s as name, of type, with what it holds as a comment. */
static void render_set(struct sbuf *b, const struct spec *s, int id, const char *name,
		       const char *type, const char *what)
{
	const struct firewall_elems *elems = &s->sets[id];

	sbuf_printf(b, "\n\t# %s\n\tset %s {\n\t\t%s\n", what, name, type);
	if (s->size[id])
		sbuf_printf(b, "\t\tsize %u\n", s->size[id]);
	if (elems->n) {
		sbuf_printf(b, "\t\telements = {");
		for (size_t i = 0; i < elems->n; i++) {
			char text[IP_ADDR_STRLEN + 16];
			struct firewall_key k;

			elems_get(elems, i, &k);
			key_text(&k, text, sizeof(text));
			sbuf_printf(b, "%s%s", i ? ",\n\t\t\t     " : " ", text);
		}
		sbuf_printf(b, " }\n");
	}
	sbuf_printf(b, "\t}\n");
}

static struct firewall_chain_params chain_params(const struct spec *s)
{
	return (struct firewall_chain_params){.fabric_if = s->fabric_if,
					      .underlay_family = s->underlay_family,
					      .fabric_family = s->fabric_family,
					      .secure_port = s->secure_port,
					      .listen_port = s->listen_port,
					      .carry = s->carry,
					      .wg_any_family = s->wg_any_family};
}

char *firewall_text_recount(const char *text, const struct firewall_obs *now)
{
	struct sbuf b = {0};
	const char *p = text;

	/* render_table writes the counters in their order, each "packets N bytes M" */
	for (int i = 0; i < FW_N_COUNTERS; i++) {
		unsigned long long packets, bytes;
		struct firewall_counter c;
		char head[64];
		const char *at, *end;

		snprintf(head, sizeof(head), "\tcounter %s {\n\t\t", firewall_counter_names[i]);
		at = strstr(p, head);
		if (!at || !firewall_obs_counter(now, (enum firewall_counter_id)i, &c))
			continue;
		at += strlen(head);
		end = strchr(at, '\n');
		if (!end || sscanf(at, "packets %llu bytes %llu", &packets, &bytes) != 2)
			continue;
		sbuf_printf(&b, "%.*spackets %llu bytes %llu", (int)(at - p), p,
			    c.packets > packets ? (unsigned long long)c.packets : packets,
			    c.bytes > bytes ? (unsigned long long)c.bytes : bytes);
		p = end;
	}
	sbuf_printf(&b, "%s", p);
	return sbuf_take(&b);
}

/* The table body; counter values from carry when given, comment when given. */
static void render_table(struct sbuf *b, const struct spec *s, const char *comment,
			 const struct firewall_counter *carry)
{
	struct firewall_chain_params params = chain_params(s);

	sbuf_printf(b, "table " FIREWALL_FAMILY " " FIREWALL_TABLE " {\n");
	if (comment)
		sbuf_printf(b, "\tcomment \"%s\"\n", comment);
	for (int i = 0; i < FW_N_COUNTERS; i++) {
		sbuf_printf(b, "\tcounter %s {\n", firewall_counter_names[i]);
		if (carry)
			sbuf_printf(b, "\t\tpackets %llu bytes %llu\n",
				    (unsigned long long)carry[i].packets,
				    (unsigned long long)carry[i].bytes);
		sbuf_printf(b, "\t}\n");
	}
	render_set(b, s, FW_SET_PLAIN_MEMBERS, "plain_members",
		   s->underlay_family == AF_INET6 ? "typeof ip6 saddr . @th,96,24"
						  : "typeof ip saddr . @th,96,24",
		   "(member underlay address, VNI) of this node's plain vnets");
	render_set(b, s, FW_SET_SECURE_VNIS, "secure_vnis", "typeof @th,96,24",
		   "VNIs of this node's secure vnets");
	render_set(b, s, FW_SET_WG_IP, "wireguard_peers_ip", "type ipv4_addr",
		   "the other nodes' underlay and endpoint addresses");
	render_set(b, s, FW_SET_WG_IP6, "wireguard_peers_ip6", "type ipv6_addr",
		   "the other nodes' underlay and endpoint addresses");
	render_set(b, s, FW_SET_CARRIED_VNIS, "carried_vnis", "typeof @th,96,24",
		   "VNIs of this node's EVPN vnets carried through WireGuard");
	render_set(b, s, FW_SET_CARRIED_MEMBERS, "carried_members",
		   s->underlay_family == AF_INET6 ? "typeof ip6 saddr . @th,96,24"
						  : "typeof ip saddr . @th,96,24",
		   "(member underlay address, VNI) of this node's secure EVPN vnets, through "
		   "WireGuard only");
	render_set(b, s, FW_SET_FABRIC_MEMBERS, "fabric_members",
		   s->fabric_family == AF_INET6 ? "typeof ip6 saddr . @th,96,24"
						: "typeof ip saddr . @th,96,24",
		   "(member fabric address, VNI) of this node's vnets, through WireGuard only");
	render_set(b, s, FW_SET_NODE_VNIS, "node_vnis", "typeof @th,96,24",
		   "VNIs of this node's vnets: plain VXLAN of any other VNI is not fabricd's");

	firewall_render_chains(b, &params, NULL);
	sbuf_printf(b, "}\n");
}

static int spec_summary(const struct spec *s, char **out)
{
	struct strlist lines = {0};
	struct firewall_chain_params params = chain_params(s);
	struct sbuf text = {0};
	char line[256];
	int ret = 0;

	*out = NULL;
	for (int i = 0; !ret && i < FW_N_COUNTERS; i++) {
		snprintf(line, sizeof(line), "counter %s", firewall_counter_names[i]);
		ret = strlist_add(&lines, line);
	}
	for (int i = 0; !ret && i < FW_N_SETS; i++) {
		snprintf(line, sizeof(line), "set %s", firewall_set_names[i]);
		ret = strlist_add(&lines, line);
	}
	/* the chains' lines come with their text, which is not needed here */
	if (!ret)
		ret = firewall_render_chains(&text, &params, &lines);
	free(sbuf_take(&text));
	if (!ret) {
		*out = summary_join(&lines);
		if (!*out)
			ret = -ENOMEM;
	}
	strlist_free(&lines);
	return ret;
}

/* The skeleton's hash: the table without set elements, comment and counter values. */
static uint64_t skeleton_hash(const struct spec *s, bool *failed)
{
	struct spec bare = *s;
	struct sbuf b = {0};
	uint64_t h;
	char *text;

	for (int i = 0; i < FW_N_SETS; i++)
		memset(&bare.sets[i], 0, sizeof(bare.sets[i]));
	render_table(&b, &bare, NULL, NULL);
	text = sbuf_take(&b);
	*failed = !text;
	h = text ? fnv1a(FNV1A_INIT, text, strlen(text)) : 0;
	free(text);
	return h;
}

uint32_t firewall_set_size_fresh(size_t n)
{
	uint32_t size = FW_SIZED_MIN;

	if (n < FW_SIZED_MIN)
		return 0;
	while (size < n && size < (UINT32_C(1) << 30))
		size <<= 1;
	return size * 2;
}

/* Everything but the text (with_text false), or all of it; sizes NULL: fresh ones. */
static int render(const struct node_state *want, const struct firewall_counter *carry, bool sealed,
		  const uint32_t *sizes, bool with_text, struct firewall_ruleset *out)
{
	struct sbuf b = {0};
	bool failed;
	struct spec s;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = spec_build(want, sealed, &s);
	if (ret < 0)
		return ret;
	for (int i = 0; i < FW_N_SETS; i++) {
		s.size[i] = sizes ? sizes[i] : firewall_set_size_fresh(s.sets[i].n);
		out->sizes[i] = s.size[i];
	}
	out->hash = skeleton_hash(&s, &failed);
	snprintf(out->comment, sizeof(out->comment), "%s %016llx", want->owner,
		 (unsigned long long)out->hash);
	if (with_text) {
		render_table(&b, &s, out->comment, carry);
		out->text = sbuf_take(&b);
		failed = failed || !out->text;
	}
	ret = failed ? -ENOMEM : spec_summary(&s, &out->summary);
	/* the sets move into the ruleset */
	for (int i = 0; i < FW_N_SETS; i++)
		out->sets[i] = s.sets[i];
	if (ret < 0)
		firewall_ruleset_free(out);
	return ret;
}

int firewall_render_stage(const struct node_state *want, const struct firewall_counter *carry,
			  bool sealed, struct firewall_ruleset *out)
{
	return render(want, carry, sealed, NULL, true, out);
}

int firewall_render_summary(const struct node_state *want, bool sealed,
			    struct firewall_ruleset *out)
{
	return render(want, NULL, sealed, NULL, false, out);
}

int firewall_render_sized(const struct node_state *want, const struct firewall_counter *carry,
			  bool sealed, const uint32_t *sizes, bool with_text,
			  struct firewall_ruleset *out)
{
	return render(want, carry, sealed, sizes, with_text, out);
}

int firewall_render(const struct node_state *want, const struct firewall_counter *carry,
		    struct firewall_ruleset *out)
{
	return firewall_render_stage(want, carry, true, out);
}

void firewall_ruleset_free(struct firewall_ruleset *rs)
{
	if (!rs)
		return;
	free(rs->text);
	free(rs->summary);
	for (int i = 0; i < FW_N_SETS; i++)
		elems_free(&rs->sets[i]);
	memset(rs, 0, sizeof(*rs));
}

/* --- loading a new table in steps -------------------------------------------------- */

#define ELEMS_START "\n\t\telements = {"
#define ELEM_SEP    ",\n\t\t\t     "

/* The allow-lists loaded in chunks, in render order: partly loaded, they let less in. */
static const char *const chunked_sets[] = {"plain_members", "fabric_members"};
#define N_CHUNKED (sizeof(chunked_sets) / sizeof(chunked_sets[0]))

/* A set's elements in the rendered text: "\n\t\telements = { A,SEP B }\n". */
struct elems_block {
	const char *name;
	const char *start; /* the newline before "elements" */
	const char *first; /* the first element */
	const char *end;   /* " }\n" after the last */
};

/* After n separators from p (n > 0), or NULL when there are fewer. */
static const char *skip_elems(const char *p, const char *end, size_t n)
{
	for (; p && n; n--) {
		p = strstr(p, ELEM_SEP);
		if (!p || p >= end)
			return NULL;
		p += strlen(ELEM_SEP);
	}
	return p;
}

/* Whether set name holds more than chunk elements in text, laid out as rendered. */
static bool find_large_set(const char *text, const char *name, size_t chunk,
			   struct elems_block *blk)
{
	char head[64];
	const char *set, *set_end;

	snprintf(head, sizeof(head), "\n\tset %s {\n", name);
	set = strstr(text, head);
	set_end = set ? strstr(set + 1, "\n\t}\n") : NULL;
	blk->name = name;
	blk->start = set ? strstr(set, ELEMS_START) : NULL;
	if (!set_end || !blk->start || blk->start > set_end)
		return false;
	blk->end = strstr(blk->start, " }\n");
	if (!blk->end || blk->end > set_end)
		return false;
	blk->first = blk->start + strlen(ELEMS_START) + 1;
	return skip_elems(blk->first, blk->end, chunk) != NULL;
}

static int add_chunk(struct strlist *out, const char *set, const char *from, const char *to)
{
	struct sbuf b = {0};
	char *s;
	int ret;

	/*
	 * one line, elements joined by ", ": the form of a delta's lines, which
	 * engine/guard_delta.c sends over netlink (nft reads it alike)
	 */
	sbuf_printf(&b, "add element " TABLE_NAME " %s { ", set);
	for (const char *p = from; p < to;) {
		const char *sep = strstr(p, ELEM_SEP);
		const char *stop = sep && sep < to ? sep : to;

		sbuf_printf(&b, "%s%.*s", p == from ? "" : ", ", (int)(stop - p), p);
		p = stop == to ? to : stop + strlen(ELEM_SEP);
	}
	sbuf_printf(&b, " }\n");
	s = sbuf_take(&b);
	if (!s)
		return -ENOMEM;
	ret = strlist_add(out, s);
	free(s);
	return ret;
}

/* The table with the blocks' elements left out: their sets declared empty. */
static int add_bare_table(struct strlist *out, const char *text, const struct elems_block *blk,
			  size_t n)
{
	struct sbuf b = {0};
	const char *from = text;
	char *s;
	int ret;

	for (size_t i = 0; i < n; i++) {
		sbuf_printf(&b, "%.*s", (int)(blk[i].start + 1 - from), from);
		from = blk[i].end + strlen(" }\n");
	}
	sbuf_printf(&b, "%s", from);
	s = sbuf_take(&b);
	if (!s)
		return -ENOMEM;
	ret = strlist_add(out, s);
	free(s);
	return ret;
}

int firewall_load_steps(const char *text, size_t chunk, struct strlist *out)
{
	struct elems_block blk[N_CHUNKED];
	size_t n = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; chunk && i < N_CHUNKED; i++)
		n += find_large_set(text, chunked_sets[i], chunk, &blk[n]);
	/* small enough (or not laid out as rendered): the text as it is, one step */
	if (!n)
		return strlist_add(out, text);
	ret = add_bare_table(out, text, blk, n);
	for (size_t i = 0; !ret && i < n; i++) {
		for (const char *p = blk[i].first; !ret && p;) {
			const char *next = skip_elems(p, blk[i].end, chunk);
			const char *to = next ? next - strlen(ELEM_SEP) : blk[i].end;

			ret = add_chunk(out, blk[i].name, p, to);
			p = next;
		}
	}
	if (ret)
		strlist_free(out);
	return ret;
}
