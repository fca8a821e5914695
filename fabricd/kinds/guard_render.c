// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guard_render.c - the `inet fabricd` table as nft text, from one node's
 * desired state, and the summary its kernel copy must match. Pure: no kernel
 * access, the same state always gives the same bytes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "kinds/carry.h"
#include "kinds/guard.h"
#include "kinds/guard_priv.h"

/* the input and output hooks' chains, one per UDP port of fabricd's */
#define CHAIN_PLAIN_IN	   "plain_vxlan_in"
#define CHAIN_SECURE_IN	   "secure_vxlan_in"
#define CHAIN_WIREGUARD_IN "wireguard_in"
#define CHAIN_PLAIN_OUT	   "plain_vxlan_out"
#define CHAIN_SECURE_OUT   "secure_vxlan_out"

const char *const firewall_counter_names[FW_N_COUNTERS] = {
    [FW_DROP_PLAIN] = "drop_plain",
    [FW_DROP_SECURE] = "drop_secure",
    [FW_DROP_WIREGUARD] = "drop_wireguard",
    [FW_DROP_LEAK] = "drop_leak",
};

/* --- a growing string ---------------------------------------------------------- */

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->cap ? b->buf + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->len <= (size_t)n)
			cap *= 2;
		char *grown = realloc(b->buf, cap);

		if (!grown) {
			b->failed = true;
			return;
		}
		b->buf = grown;
		b->cap = cap;
	}
}

char *sbuf_take(struct sbuf *b)
{
	char *s = b->failed ? NULL : b->buf;

	if (b->failed)
		free(b->buf);
	else if (!s)
		s = strdup("");
	memset(b, 0, sizeof(*b));
	return s;
}

/* --- string lists ------------------------------------------------------------------- */

int strlist_add(struct strlist *l, const char *s)
{
	char *copy;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		char **grown = realloc(l->v, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		l->v = grown;
		l->cap = cap;
	}
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	l->v[l->n++] = copy;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strlist_sort(struct strlist *l)
{
	size_t out = 0;

	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_str);
	/* a set holds each element once */
	for (size_t i = 0; i < l->n; i++) {
		if (out && !strcmp(l->v[out - 1], l->v[i]))
			free(l->v[i]);
		else
			l->v[out++] = l->v[i];
	}
	l->n = out;
}

void strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* --- set elements -------------------------------------------------------------- */

int key_cmp(const struct firewall_key *a, const struct firewall_key *b)
{
	return memcmp(a, b, sizeof(*a));
}

static int key_sort_cmp(const void *a, const void *b)
{
	return key_cmp(a, b);
}

int elems_add(struct firewall_elems *l, const struct firewall_key *k)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct firewall_key *grown = realloc(l->v, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		l->v = grown;
		l->cap = cap;
	}
	l->v[l->n++] = *k;
	return 0;
}

/*
 * Byte by byte from the last (LSD radix; stable, so the order of memcmp over
 * the whole key), skipping the bytes every key has alike (unused bytes are
 * zero, the length is mostly one): at 32,256 keys a few passes instead of
 * qsort's half a million memcmp calls. 0, or -ENOMEM with l unchanged.
 */
static int radix_sort(struct firewall_elems *l)
{
	struct firewall_key *tmp = malloc(l->n * sizeof(*tmp));
	struct firewall_key *from = l->v, *to = tmp;

	if (!tmp)
		return -ENOMEM;
	for (size_t byte = sizeof(*l->v); byte-- > 0;) {
		size_t count[256] = {0}, at = 0;

		for (size_t i = 0; i < l->n; i++)
			count[((const uint8_t *)&from[i])[byte]]++;
		if (count[((const uint8_t *)&from[0])[byte]] == l->n)
			continue; /* all alike: nothing to order by */
		for (size_t c = 0; c < 256; c++) {
			size_t n = count[c];

			count[c] = at;
			at += n;
		}
		for (size_t i = 0; i < l->n; i++)
			to[count[((const uint8_t *)&from[i])[byte]]++] = from[i];
		from = to;
		to = from == tmp ? l->v : tmp;
	}
	if (from != l->v)
		memcpy(l->v, from, l->n * sizeof(*l->v));
	free(tmp);
	return 0;
}

void elems_sort(struct firewall_elems *l)
{
	size_t out = 0;

	if (l->n > 1 && (l->n < ELEMS_RADIX_MIN || radix_sort(l) < 0))
		qsort(l->v, l->n, sizeof(*l->v), key_sort_cmp);
	for (size_t i = 0; i < l->n; i++) {
		if (!out || key_cmp(&l->v[out - 1], &l->v[i]))
			l->v[out++] = l->v[i];
	}
	l->n = out;
}

bool elems_equal(const struct firewall_elems *a, const struct firewall_elems *b)
{
	return a->n == b->n && (!a->n || !memcmp(a->v, b->v, a->n * sizeof(*a->v)));
}

void elems_free(struct firewall_elems *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void key_make(struct firewall_key *k, const struct ip_addr *addr, long long vni)
{
	size_t alen = addr ? ip_addr_len(addr) : 0;

	memset(k, 0, sizeof(*k));
	memcpy(k->b, addr ? addr->bytes : k->b, alen);
	k->len = (uint8_t)alen;
	if (vni >= 0) {
		k->b[alen] = (uint8_t)(vni >> 16);
		k->b[alen + 1] = (uint8_t)(vni >> 8);
		k->b[alen + 2] = (uint8_t)vni;
		/* alone a VNI is 3 bytes; in a concatenation it takes a whole register */
		k->len = (uint8_t)(alen ? alen + 4 : 3);
	}
}

static unsigned int key_vni(const uint8_t *b)
{
	return (unsigned int)b[0] << 16 | (unsigned int)b[1] << 8 | b[2];
}

void key_text(const struct firewall_key *k, char *out, size_t len)
{
	struct ip_addr a = {0};
	char ip[IP_ADDR_STRLEN];
	size_t alen = k->len == 4 || k->len == 8 ? 4 : 16, used = 0;

	if (k->len == 3) {
		snprintf(out, len, "%u", key_vni(k->b));
		return;
	}
	if (k->len != 4 && k->len != 8 && k->len != 16 && k->len != 20) {
		/* not a key fabricd makes: shown as it is, never equal to a rendered one */
		snprintf(out, len, "0x");
		for (size_t i = 0; i < k->len && i < FW_KEY_MAX && used + 5 < len; i++)
			used += (size_t)snprintf(out + 2 + used, len - 2 - used, "%02x", k->b[i]);
		return;
	}
	a.family = alen == 4 ? AF_INET : AF_INET6;
	memcpy(a.bytes, k->b, alen);
	ip_addr_str(&a, ip, sizeof(ip));
	if (k->len == alen)
		snprintf(out, len, "%s", ip);
	else
		snprintf(out, len, "%s . %u", ip, key_vni(k->b + alen));
}

static int parse_vni(const char *s, long long *vni)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || v > 0xffffff)
		return -EINVAL;
	*vni = (long long)v;
	return 0;
}

int key_parse(const char *text, struct firewall_key *k)
{
	const char *dot = strstr(text, " . ");
	char part[IP_ADDR_STRLEN + 8];
	struct ip_addr a;
	long long vni = -1;

	if (!dot) {
		if (ip_addr_parse(text, &a) == 0) {
			key_make(k, &a, -1);
			return 0;
		}
		if (parse_vni(text, &vni) < 0)
			return -EINVAL;
		key_make(k, NULL, vni);
		return 0;
	}
	if ((size_t)(dot - text) >= sizeof(part))
		return -EINVAL;
	snprintf(part, sizeof(part), "%.*s", (int)(dot - text), text);
	if (ip_addr_parse(part, &a) < 0 || parse_vni(dot + 3, &vni) < 0)
		return -EINVAL;
	key_make(k, &a, vni);
	return 0;
}

const char *const firewall_set_names[FW_N_SETS] = {
    [FW_SET_PLAIN_MEMBERS] = "plain_members",	[FW_SET_SECURE_VNIS] = "secure_vnis",
    [FW_SET_WG_IP] = "wireguard_peers_ip",	[FW_SET_WG_IP6] = "wireguard_peers_ip6",
    [FW_SET_CARRIED_VNIS] = "carried_vnis",	[FW_SET_CARRIED_MEMBERS] = "carried_members",
    [FW_SET_FABRIC_MEMBERS] = "fabric_members",
};

enum firewall_set_id firewall_set_by_name(const char *name)
{
	int i = 0;

	while (i < FW_N_SETS && strcmp(name, firewall_set_names[i]))
		i++;
	return (enum firewall_set_id)i;
}

char *summary_join(struct strlist *lines)
{
	struct sbuf b = {0};

	strlist_sort(lines);
	for (size_t i = 0; i < lines->n; i++)
		sbuf_printf(&b, "%s\n", lines->v[i]);
	return sbuf_take(&b);
}

/* --- what the table holds ----------------------------------------------------------- */

/* The table's content, before it is text. Set elements in render order. */
struct spec {
	const char *fabric_if;
	int underlay_family;
	uint16_t secure_port, listen_port;
	/* an EVPN vnet is here: the chains that carry its VXLAN (a route chain costs every packet)
	 */
	bool carry;
	struct firewall_elems plain_members;   /* "addr . vni" */
	struct firewall_elems secure_vnis;     /* "vni" */
	struct firewall_elems wg_ip, wg_ip6;   /* addresses */
	struct firewall_elems carried_vnis;    /* "vni" */
	struct firewall_elems carried_members; /* "addr . vni" */
	struct firewall_elems fabric_members;  /* "addr . vni", the fabric prefix's family */
	int fabric_family;
};

static void spec_free(struct spec *s)
{
	elems_free(&s->plain_members);
	elems_free(&s->secure_vnis);
	elems_free(&s->wg_ip);
	elems_free(&s->wg_ip6);
	elems_free(&s->carried_vnis);
	elems_free(&s->carried_members);
	elems_free(&s->fabric_members);
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
		return add_addr(&s->wg_ip, a, -1);
	if (a->family == AF_INET6)
		return add_addr(&s->wg_ip6, a, -1);
	return 0; /* a DNS endpoint: resolved only when WireGuard is configured */
}

/* The vnet's (member address, VNI) pairs into set: underlay addresses, or fabric (VTEPs). */
static int add_members(struct firewall_elems *set, const struct node_state *want,
		       const struct desired_vnet *v, bool fabric)
{
	const struct cluster *c = want->cluster;
	const struct zone *z = &c->zones[v->zone];
	int ret = 0;

	for (size_t m = 0; !ret && m < z->n_members; m++) {
		const struct node *n = &c->nodes[z->members[m]];

		if (z->members[m] != want->self)
			ret = add_addr(set, fabric ? &n->fabric_address : &n->underlay, v->vni);
	}
	return ret;
}

/*
 * An EVPN vnet (engine/switch.c): carried, its VXLAN is marked into
 * WireGuard and may leave through nothing else. Through the fabric device
 * it takes its members' VXLAN from their fabric addresses (a secure
 * member's VTEP) and, secure, from their underlay addresses (a member that
 * has not switched yet, carrying); clear text only while plain, or in its
 * grace period after the switch to secure (plain_receiving).
 */
static int add_evpn_vnet(struct spec *s, const struct node_state *want,
			 const struct desired_vnet *v)
{
	bool secure = v->transport == TRANSPORT_SECURE;
	int ret = 0;

	if (!secure || v->plain_receiving)
		ret = add_members(&s->plain_members, want, v, false);
	if (!ret && secure)
		ret = add_members(&s->carried_members, want, v, false);
	if (!ret)
		ret = add_members(&s->fabric_members, want, v, true);
	if (!ret && v->carried)
		ret = add_addr(&s->carried_vnis, NULL, v->vni);
	return ret;
}

/* sealed: false for the table a switching pass loads before its links change */
static int spec_build(const struct node_state *want, bool sealed, struct spec *s)
{
	const struct cluster *c = want->cluster;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	s->fabric_if = want->fabric.ifname[0] ? want->fabric.ifname : FABRIC_IFNAME;
	s->underlay_family = c->nodes[want->self].underlay.family;
	s->secure_port = c->fabric.secure_port;
	s->listen_port = want->fabric.listen_port;
	s->carry = want->carry;
	s->fabric_family = c->fabric.prefix.addr.family;
	for (size_t i = 0; !ret && i < want->n_vnets; i++) {
		const struct desired_vnet *v = &want->vnets[i];
		bool secure = v->transport == TRANSPORT_SECURE;

		if (v->evpn) {
			ret = add_evpn_vnet(s, want, v);
			continue;
		}
		/*
		 * Switching from plain: until its plain device is gone, nodes that
		 * have not switched yet still send this VNI as plain VXLAN, and it
		 * is received from them; until this pass has muted that device, it
		 * may also still leave (the zone's exposure of a moment earlier).
		 */
		if (secure && (v->plain_receiving || (!sealed && v->plain_sending)))
			ret = add_members(&s->plain_members, want, v, false);
		if (secure && !ret && (sealed || !v->plain_sending))
			ret = add_addr(&s->secure_vnis, NULL, v->vni);
		for (size_t r = 0; !secure && !ret && r < v->n_remotes; r++)
			ret = add_addr(&s->plain_members, &v->remotes[r], v->vni);
	}
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
	/* sorted: the text does not depend on the order of the definition */
	elems_sort(&s->plain_members);
	elems_sort(&s->secure_vnis);
	elems_sort(&s->wg_ip);
	elems_sort(&s->wg_ip6);
	elems_sort(&s->carried_vnis);
	elems_sort(&s->carried_members);
	elems_sort(&s->fabric_members);
	return 0;
}

/* --- text ------------------------------------------------------------------------------ */

static void render_set(struct sbuf *b, const char *name, const char *type, const char *what,
		       const struct firewall_elems *elems)
{
	sbuf_printf(b, "\n\t# %s\n\tset %s {\n\t\t%s\n", what, name, type);
	if (elems->n) {
		sbuf_printf(b, "\t\telements = {");
		for (size_t i = 0; i < elems->n; i++) {
			char text[IP_ADDR_STRLEN + 16];

			key_text(&elems->v[i], text, sizeof(text));
			sbuf_printf(b, "%s%s", i ? ",\n\t\t\t     " : " ", text);
		}
		sbuf_printf(b, " }\n");
	}
	sbuf_printf(b, "\t}\n");
}

/* A secure EVPN vnet's VXLAN: marked into WireGuard, dropped on any other device. */
static void render_carry_chains(struct sbuf *b, const struct spec *s)
{
	/* the kernel routes a local packet again when a route chain changes its mark */
	sbuf_printf(b, "\n\tchain carry {\n\t\ttype route hook output priority mangle; policy "
		       "accept;\n");
	sbuf_printf(b,
		    "\t\tudp dport %u @th,96,24 @carried_vnis meta mark set meta mark & 0x%08x | "
		    "0x%08x\n",
		    PLAIN_VXLAN_PORT, ~CARRY_MARK_MASK, CARRY_MARK);
	sbuf_printf(b, "\t}\n");
	/* after that route: output-hook rules still see the device chosen before it */
	sbuf_printf(b, "\n\tchain postrouting {\n\t\ttype filter hook postrouting priority -10; "
		       "policy accept;\n");
	sbuf_printf(b,
		    "\t\tudp dport %u @th,96,24 @carried_vnis oifname != \"%s\" counter name "
		    "\"%s\" drop\n",
		    PLAIN_VXLAN_PORT, s->fabric_if, firewall_counter_names[FW_DROP_LEAK]);
	sbuf_printf(b, "\t}\n");
}

/*
 * Input: one lookup of the UDP port sends fabricd's three kinds of traffic to
 * their own chains, and everything else on at once. With a port test per
 * rule, every packet the node received went through up to 9 tests (a
 * WireGuard datagram through 7 before its own), a cost `bench --reference`
 * measured on the secure path (README, "What fabricd itself costs").
 */
static void render_input_chains(struct sbuf *b, const struct spec *s)
{
	const char *ip = s->underlay_family == AF_INET6 ? "ip6" : "ip";
	const char *fab = s->fabric_if;

	sbuf_printf(b,
		    "\n\tchain input {\n\t\ttype filter hook input priority -10; policy accept;\n");
	sbuf_printf(b,
		    "\t\tudp dport vmap { %u : jump " CHAIN_PLAIN_IN ", %u : jump " CHAIN_SECURE_IN
		    ", %u : jump " CHAIN_WIREGUARD_IN " }\n\t}\n",
		    PLAIN_VXLAN_PORT, s->secure_port, s->listen_port);

	sbuf_printf(b, "\n\tchain " CHAIN_PLAIN_IN " {\n");
	/* the VNI is the 24 bits at byte 4 of the VXLAN header, 8 bytes into UDP */
	sbuf_printf(b, "\t\t%s saddr . @th,96,24 @plain_members accept\n", ip);
	sbuf_printf(b, "\t\tiifname \"%s\" %s saddr . @th,96,24 @carried_members accept\n", fab,
		    ip);
	sbuf_printf(b, "\t\tiifname \"%s\" %s saddr . @th,96,24 @fabric_members accept\n", fab,
		    s->fabric_family == AF_INET6 ? "ip6" : "ip");
	sbuf_printf(b, "\t\tcounter name \"%s\" drop\n\t}\n",
		    firewall_counter_names[FW_DROP_PLAIN]);

	sbuf_printf(b, "\n\tchain " CHAIN_SECURE_IN " {\n");
	sbuf_printf(b, "\t\tiifname \"%s\" accept\n", fab);
	sbuf_printf(b, "\t\tcounter name \"%s\" drop\n\t}\n",
		    firewall_counter_names[FW_DROP_SECURE]);

	sbuf_printf(b, "\n\tchain " CHAIN_WIREGUARD_IN " {\n");
	sbuf_printf(b, "\t\tip saddr @wireguard_peers_ip accept\n");
	sbuf_printf(b, "\t\tip6 saddr @wireguard_peers_ip6 accept\n");
	sbuf_printf(b, "\t\tcounter name \"%s\" drop\n\t}\n",
		    firewall_counter_names[FW_DROP_WIREGUARD]);
}

/* Output: the same dispatch; a secure VNI never leaves as plain VXLAN, secure VXLAN only into
 * WireGuard. */
static void render_output_chains(struct sbuf *b, const struct spec *s)
{
	sbuf_printf(
	    b, "\n\tchain output {\n\t\ttype filter hook output priority -10; policy accept;\n");
	sbuf_printf(b,
		    "\t\tudp dport vmap { %u : jump " CHAIN_PLAIN_OUT
		    ", %u : jump " CHAIN_SECURE_OUT " }\n\t}\n",
		    PLAIN_VXLAN_PORT, s->secure_port);
	sbuf_printf(b,
		    "\n\tchain " CHAIN_PLAIN_OUT " {\n\t\t@th,96,24 @secure_vnis counter name "
		    "\"%s\" drop\n\t}\n",
		    firewall_counter_names[FW_DROP_LEAK]);
	sbuf_printf(b,
		    "\n\tchain " CHAIN_SECURE_OUT " {\n\t\toifname != \"%s\" counter name \"%s\" "
		    "drop\n\t}\n",
		    s->fabric_if, firewall_counter_names[FW_DROP_LEAK]);
}

/* The table body; counter values from carry when given, comment when given. */
static void render_table(struct sbuf *b, const struct spec *s, const char *comment,
			 const struct firewall_counter *carry)
{
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
	render_set(b, "plain_members",
		   s->underlay_family == AF_INET6 ? "typeof ip6 saddr . @th,96,24"
						  : "typeof ip saddr . @th,96,24",
		   "(member underlay address, VNI) of this node's plain vnets", &s->plain_members);
	render_set(b, "secure_vnis", "typeof @th,96,24", "VNIs of this node's secure vnets",
		   &s->secure_vnis);
	render_set(b, "wireguard_peers_ip", "type ipv4_addr",
		   "the other nodes' underlay and endpoint addresses", &s->wg_ip);
	render_set(b, "wireguard_peers_ip6", "type ipv6_addr",
		   "the other nodes' underlay and endpoint addresses", &s->wg_ip6);
	render_set(b, "carried_vnis", "typeof @th,96,24",
		   "VNIs of this node's EVPN vnets carried through WireGuard", &s->carried_vnis);
	render_set(b, "carried_members",
		   s->underlay_family == AF_INET6 ? "typeof ip6 saddr . @th,96,24"
						  : "typeof ip saddr . @th,96,24",
		   "(member underlay address, VNI) of this node's secure EVPN vnets, through "
		   "WireGuard only",
		   &s->carried_members);
	render_set(b, "fabric_members",
		   s->fabric_family == AF_INET6 ? "typeof ip6 saddr . @th,96,24"
						: "typeof ip saddr . @th,96,24",
		   "(member fabric address, VNI) of this node's EVPN vnets, through WireGuard only",
		   &s->fabric_members);

	render_input_chains(b, s);
	render_output_chains(b, s);
	if (s->carry)
		render_carry_chains(b, s);
	sbuf_printf(b, "}\n");
}

/* The chains render_table() writes, as the kernel's copy is summarized (kinds/guard.c). */
static const struct {
	const char *line; /* "chain NAME: TYPE HOOK PRIO POLICY" for base chains */
	int rules;
	bool carry; /* only with an EVPN vnet */
} summary_chains[] = {
    {"chain input: filter input -10 accept", 1, false},
    {"chain output: filter output -10 accept", 1, false},
    {"chain " CHAIN_PLAIN_IN ":", 4, false},
    {"chain " CHAIN_SECURE_IN ":", 2, false},
    {"chain " CHAIN_WIREGUARD_IN ":", 3, false},
    {"chain " CHAIN_PLAIN_OUT ":", 1, false},
    {"chain " CHAIN_SECURE_OUT ":", 1, false},
    {"chain carry: route output -150 accept", 1, true},
    {"chain postrouting: filter postrouting -10 accept", 1, true},
};

static int spec_summary(const struct spec *s, char **out)
{
	struct strlist lines = {0};
	char line[128];
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
	for (size_t i = 0; !ret && i < sizeof(summary_chains) / sizeof(summary_chains[0]); i++) {
		if (summary_chains[i].carry && !s->carry)
			continue;
		snprintf(line, sizeof(line), "%s, %d rules", summary_chains[i].line,
			 summary_chains[i].rules);
		ret = strlist_add(&lines, line);
	}
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

	memset(&bare.plain_members, 0, sizeof(bare.plain_members));
	memset(&bare.secure_vnis, 0, sizeof(bare.secure_vnis));
	memset(&bare.wg_ip, 0, sizeof(bare.wg_ip));
	memset(&bare.wg_ip6, 0, sizeof(bare.wg_ip6));
	memset(&bare.carried_vnis, 0, sizeof(bare.carried_vnis));
	memset(&bare.carried_members, 0, sizeof(bare.carried_members));
	memset(&bare.fabric_members, 0, sizeof(bare.fabric_members));
	render_table(&b, &bare, NULL, NULL);
	text = sbuf_take(&b);
	*failed = !text;
	h = text ? fnv1a(FNV1A_INIT, text, strlen(text)) : 0;
	free(text);
	return h;
}

/* Everything but the text (with_text false), or all of it. */
static int render(const struct node_state *want, const struct firewall_counter *carry, bool sealed,
		  bool with_text, struct firewall_ruleset *out)
{
	struct sbuf b = {0};
	bool failed;
	struct spec s;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = spec_build(want, sealed, &s);
	if (ret < 0)
		return ret;
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
	out->sets[FW_SET_PLAIN_MEMBERS] = s.plain_members;
	out->sets[FW_SET_SECURE_VNIS] = s.secure_vnis;
	out->sets[FW_SET_WG_IP] = s.wg_ip;
	out->sets[FW_SET_WG_IP6] = s.wg_ip6;
	out->sets[FW_SET_CARRIED_VNIS] = s.carried_vnis;
	out->sets[FW_SET_CARRIED_MEMBERS] = s.carried_members;
	out->sets[FW_SET_FABRIC_MEMBERS] = s.fabric_members;
	if (ret < 0)
		firewall_ruleset_free(out);
	return ret;
}

int firewall_render_stage(const struct node_state *want, const struct firewall_counter *carry,
			  bool sealed, struct firewall_ruleset *out)
{
	return render(want, carry, sealed, true, out);
}

int firewall_render_summary(const struct node_state *want, bool sealed,
			    struct firewall_ruleset *out)
{
	return render(want, NULL, sealed, false, out);
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

#define PLAIN_SET   "\n\tset plain_members {\n"
#define ELEMS_START "\n\t\telements = {"
#define ELEM_SEP    ",\n\t\t\t     "

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

static int add_chunk(struct strlist *out, const char *from, const char *to)
{
	struct sbuf b = {0};
	char *s;
	int ret;

	/* the separators' newlines and indent are whitespace to nft */
	sbuf_printf(&b, "add element " TABLE_NAME " plain_members { %.*s }\n", (int)(to - from),
		    from);
	s = sbuf_take(&b);
	if (!s)
		return -ENOMEM;
	ret = strlist_add(out, s);
	free(s);
	return ret;
}

int firewall_load_steps(const char *text, size_t chunk, struct strlist *out)
{
	const char *set = strstr(text, PLAIN_SET);
	const char *set_end = set ? strstr(set + 1, "\n\t}\n") : NULL;
	const char *el = set ? strstr(set, ELEMS_START) : NULL;
	const char *first, *el_end, *p;
	struct sbuf b = {0};
	char *s;

	memset(out, 0, sizeof(*out));
	el_end = el && el < set_end ? strstr(el, " }\n") : NULL;
	first = el_end ? el + strlen(ELEMS_START) + 1 : NULL;
	/* small enough (or not laid out as rendered): the text as it is, one step */
	if (!chunk || !el_end || el_end > set_end || !skip_elems(first, el_end, chunk))
		return strlist_add(out, text);
	/* the table with plain_members empty, then its elements chunk by chunk */
	sbuf_printf(&b, "%.*s%s", (int)(el + 1 - text), text, el_end + strlen(" }\n"));
	s = sbuf_take(&b);
	if (!s || strlist_add(out, s) < 0) {
		free(s);
		strlist_free(out);
		return -ENOMEM;
	}
	free(s);
	for (p = first; p;) {
		const char *next = skip_elems(p, el_end, chunk);
		const char *to = next ? next - strlen(ELEM_SEP) : el_end;

		if (add_chunk(out, p, to) < 0) {
			strlist_free(out);
			return -ENOMEM;
		}
		p = next;
	}
	return 0;
}
