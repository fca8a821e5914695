// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verify.c - the rules of a definition that span objects: unique
 * names, addresses, keys and VNIs; fabric addresses inside the prefix; one
 * underlay family; ports that do not collide; zone MTUs that fit.
 *
 * It reads only the model. Fields that conversion rejected are zero and are
 * skipped, so one mistake is reported once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "definition/config_priv.h"
#include "definition/mtu.h"

#define VXLAN_PORT 4789 /* IANA VXLAN: plain zones use it, nothing else may */

static const char *family_name(int family)
{
	return family == AF_INET6 ? "IPv6" : "IPv4";
}

static bool key_is_set(const uint8_t *key)
{
	for (size_t i = 0; i < WG_KEY_LEN; i++) {
		if (key[i])
			return true;
	}
	return false;
}

enum { SEEN_NAME = 1, SEEN_UNDERLAY = 2, SEEN_FABRIC = 4, SEEN_KEY = 8, SEEN_ENDPOINT = 16 };

/* Where peers reach node n: its endpoint's host and port, or its underlay at its listen port. */
static uint16_t reached_at(const struct cluster *c, const struct node *n, char *host, size_t len)
{
	if (n->flags & NODE_HAS_ENDPOINT) {
		snprintf(host, len, "%s", n->endpoint_host);
		return n->endpoint_port;
	}
	ip_addr_str(&n->underlay, host, len);
	return node_listen_port(c, n);
}

/*
 * Two nodes, one with an endpoint at least, reached at one place: the same
 * port and host (an address in any spelling). Two underlays are compared
 * on their own (SEEN_UNDERLAY).
 */
static bool same_endpoint(const struct cluster *c, const struct node *a, const struct node *b)
{
	char ha[FABRICD_HOST_MAX + 1], hb[FABRICD_HOST_MAX + 1];
	struct ip_addr x, y;

	if (!((a->flags | b->flags) & NODE_HAS_ENDPOINT) ||
	    reached_at(c, a, ha, sizeof(ha)) != reached_at(c, b, hb, sizeof(hb)))
		return false;
	if (ip_addr_parse(ha, &x) == 0 && ip_addr_parse(hb, &y) == 0)
		return ip_addr_equal(&x, &y);
	return strcasecmp(ha, hb) == 0;
}

/* Node i against an earlier node j; *seen keeps each field to one report. */
static void verify_node_pair(const struct cluster *c, size_t i, size_t j, unsigned int *seen,
			     struct config_report *r)
{
	const struct node *a = &c->nodes[i], *b = &c->nodes[j];
	char path[CONFIG_PATH_LEN], q[CONFIG_VALUE_LEN], s[IP_ADDR_STRLEN];

	if (!(*seen & SEEN_NAME) && a->name[0] && !strcmp(a->name, b->name)) {
		*seen |= SEEN_NAME;
		config_path(path, "nodes[%zu].name", i);
		config_error(r, path,
			     "%s is also the name of nodes[%zu]; node names must be unique",
			     config_quote(a->name, q, sizeof(q)), j);
	}
	if (!(*seen & SEEN_UNDERLAY) && a->underlay.family &&
	    ip_addr_equal(&a->underlay, &b->underlay)) {
		*seen |= SEEN_UNDERLAY;
		config_path(path, "nodes[%zu].underlay", i);
		config_error(r, path,
			     "\"%s\" is also the underlay address of nodes[%zu]; give each node "
			     "its own",
			     ip_addr_str(&a->underlay, s, sizeof(s)), j);
	}
	if (!(*seen & SEEN_FABRIC) && a->fabric_address.family &&
	    ip_addr_equal(&a->fabric_address, &b->fabric_address)) {
		*seen |= SEEN_FABRIC;
		config_path(path, "nodes[%zu].fabric_address", i);
		config_error(r, path,
			     "\"%s\" is also the fabric address of nodes[%zu]; give each node its "
			     "own address inside fabric.prefix",
			     ip_addr_str(&a->fabric_address, s, sizeof(s)), j);
	}
	/* WireGuard tells peers by key, not address: one of the two is reached wrongly */
	if (!(*seen & SEEN_ENDPOINT) && same_endpoint(c, a, b)) {
		bool mine = a->flags & NODE_HAS_ENDPOINT;
		const struct node *e = mine ? a : b;

		*seen |= SEEN_ENDPOINT;
		config_path(path, "nodes[%zu].endpoint", mine ? i : j);
		config_error(r, path,
			     "%s, port %u, is also where nodes[%zu] is reached (its %s); two nodes "
			     "cannot be reached at one address and port (behind one NAT, give each "
			     "its own port)",
			     config_quote(e->endpoint_host, q, sizeof(q)), e->endpoint_port,
			     mine ? j : i,
			     ((mine ? b : a)->flags & NODE_HAS_ENDPOINT)
				 ? "endpoint"
				 : "underlay address and listen port");
	}
	if (!(*seen & SEEN_KEY) && key_is_set(a->public_key) &&
	    !memcmp(a->public_key, b->public_key, WG_KEY_LEN)) {
		*seen |= SEEN_KEY;
		config_path(path, "nodes[%zu].public_key", i);
		config_error(r, path,
			     "is also the public key of nodes[%zu]; every node needs its own key "
			     "pair (run \"fabricd genkey\" on each node)",
			     j);
	}
}

/*
 * The fabric prefix is routed into wgfab0 on every node: it must be unicast
 * space, and not everything.
 */
static void verify_prefix(const struct cluster *c, struct config_report *r)
{
	const struct ip_prefix *p = &c->fabric.prefix;
	char ps[IP_ADDR_STRLEN];
	const char *why;

	if (!p->addr.family)
		return;
	ip_addr_str(&p->addr, ps, sizeof(ps));
	if (p->len == 0)
		config_error(
		    r, "fabric.prefix",
		    "\"%s/0\" is every address: its route into the fabric would take all "
		    "traffic; give a private prefix such as 10.255.0.0/24 or fd00:255::/64",
		    ps);
	else if ((why = ip_addr_unusable(&p->addr)))
		config_error(
		    r, "fabric.prefix",
		    "\"%s/%u\" is %s address space, which cannot carry the fabric; give a private "
		    "prefix such as 10.255.0.0/24 or fd00:255::/64",
		    ps, p->len, why);
}

/* Where a fabric address may not be: outside the prefix, on its edges, or no host's. */
static void verify_fabric_address(const struct cluster *c, size_t i, struct config_report *r)
{
	const struct ip_prefix *p = &c->fabric.prefix;
	const struct ip_addr *a = &c->nodes[i].fabric_address;
	char path[CONFIG_PATH_LEN], s[IP_ADDR_STRLEN], ps[IP_ADDR_STRLEN];
	unsigned int bits = ip_addr_host_len(a);
	bool network = true, broadcast = true;
	const char *why;

	if (!a->family || !p->addr.family)
		return;
	config_path(path, "nodes[%zu].fabric_address", i);
	ip_addr_str(a, s, sizeof(s));
	ip_addr_str(&p->addr, ps, sizeof(ps));
	if (a->family != p->addr.family) {
		config_error(r, path,
			     "\"%s\" is %s but fabric.prefix \"%s/%u\" is %s; give an address "
			     "inside fabric.prefix",
			     s, family_name(a->family), ps, p->len, family_name(p->addr.family));
		return;
	}
	if (!ip_prefix_contains(p, a)) {
		config_error(r, path,
			     "\"%s\" is outside fabric.prefix \"%s/%u\"; give an address inside it",
			     s, ps, p->len);
		return;
	}
	if ((why = ip_addr_unusable(a))) {
		config_error(r, path,
			     "\"%s\" (%s) cannot be a node's address; give a unicast address "
			     "inside fabric.prefix",
			     s, why);
		return;
	}
	/* /31 and /127 are point-to-point links where both addresses are hosts */
	if (p->len + 1U >= bits)
		return;
	for (unsigned int bit = p->len; bit < bits; bit++) {
		bool set = a->bytes[bit / 8] & (0x80 >> (bit % 8));

		network = network && !set;
		broadcast = broadcast && set;
	}
	if (network)
		config_error(r, path,
			     "\"%s\" is the network address of fabric.prefix \"%s/%u\"; give a "
			     "host address inside it",
			     s, ps, p->len);
	else if (broadcast && a->family == AF_INET)
		config_error(r, path,
			     "\"%s\" is the broadcast address of fabric.prefix \"%s/%u\"; give a "
			     "host address inside it",
			     s, ps, p->len);
}

/*
 * An underlay (or endpoint) address must be a unicast one a peer can send
 * to (a multicast remote would turn head-end replication into a multicast
 * group), and outside the fabric prefix, which would route WireGuard's own
 * packets into its tunnel.
 */
static void verify_underlay_outside(const struct cluster *c, size_t i, struct config_report *r)
{
	const struct node *n = &c->nodes[i];
	const struct ip_prefix *p = &c->fabric.prefix;
	char path[CONFIG_PATH_LEN], s[IP_ADDR_STRLEN], ps[IP_ADDR_STRLEN];
	const char *why;
	struct ip_addr ep;

	if (n->underlay.family && (why = ip_addr_unusable(&n->underlay))) {
		config_path(path, "nodes[%zu].underlay", i);
		config_error(r, path,
			     "\"%s\" (%s) is not an address the other nodes can send to; give "
			     "the one this node is reached at on the underlay (unicast%s)",
			     ip_addr_str(&n->underlay, s, sizeof(s)), why,
			     n->underlay.family == AF_INET6 ? ", global or ULA" : "");
	}
	if ((n->flags & NODE_HAS_ENDPOINT) && ip_addr_parse(n->endpoint_host, &ep) == 0 &&
	    (why = ip_addr_unusable(&ep))) {
		config_path(path, "nodes[%zu].endpoint", i);
		config_error(r, path,
			     "\"%s\" (%s) is not an address the other nodes can send to; give "
			     "the one this node is reached at (unicast%s)",
			     n->endpoint_host, why, ep.family == AF_INET6 ? ", global or ULA" : "");
	}
	if (!p->addr.family)
		return;
	ip_addr_str(&p->addr, ps, sizeof(ps));
	if (n->underlay.family && ip_prefix_contains(p, &n->underlay)) {
		config_path(path, "nodes[%zu].underlay", i);
		config_error(r, path,
			     "\"%s\" is inside fabric.prefix \"%s/%u\"; the fabric prefix must not "
			     "overlap the underlay (WireGuard's packets would loop into the "
			     "tunnel), choose another prefix",
			     ip_addr_str(&n->underlay, s, sizeof(s)), ps, p->len);
	}
	if ((n->flags & NODE_HAS_ENDPOINT) && ip_addr_parse(n->endpoint_host, &ep) == 0 &&
	    ip_prefix_contains(p, &ep)) {
		config_path(path, "nodes[%zu].endpoint", i);
		config_error(r, path,
			     "\"%s\" is inside fabric.prefix \"%s/%u\"; an endpoint must be "
			     "reachable outside the fabric",
			     n->endpoint_host, ps, p->len);
	}
}

static void verify_nodes(const struct cluster *c, struct config_report *r)
{
	const struct node *first = NULL;
	char path[CONFIG_PATH_LEN], s[IP_ADDR_STRLEN];

	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = &c->nodes[i];
		unsigned int seen = 0;

		for (size_t j = 0; j < i; j++)
			verify_node_pair(c, i, j, &seen, r);
		verify_fabric_address(c, i, r);
		verify_underlay_outside(c, i, r);
		if (!n->underlay.family)
			continue;
		if (!first) {
			first = n;
		} else if (n->underlay.family != first->underlay.family) {
			config_path(path, "nodes[%zu].underlay", i);
			config_error(r, path,
				     "\"%s\" is %s but nodes[%zu].underlay is %s; all underlay "
				     "addresses must be of one family (VXLAN cannot join IPv4 to "
				     "IPv6)",
				     ip_addr_str(&n->underlay, s, sizeof(s)),
				     family_name(n->underlay.family), (size_t)(first - c->nodes),
				     family_name(first->underlay.family));
		}
	}
}

/*
 * WireGuard, plain VXLAN (4789) and secure VXLAN bind UDP sockets of their
 * own on every node; two on one port fail with EADDRINUSE at apply time.
 */
static void verify_ports(const struct cluster *c, struct config_report *r)
{
	const struct fabric *f = &c->fabric;
	char path[CONFIG_PATH_LEN];

	if (f->secure_port == VXLAN_PORT)
		config_error(r, "fabric.secure_port",
			     "4789 is the plain VXLAN port, and one VNI cannot use it twice; "
			     "choose another (default 4790)");
	if (f->listen_port == VXLAN_PORT)
		config_error(r, "fabric.listen_port",
			     "4789 is the plain VXLAN port; choose another for WireGuard (51820 "
			     "is usual)");
	else if (f->listen_port && f->listen_port == f->secure_port)
		/* listen_port is always in the file; secure_port may be the default */
		config_error(r, "fabric.listen_port",
			     "%u is also the secure VXLAN port (fabric.secure_port, default "
			     "4790); give WireGuard and VXLAN different ports",
			     f->listen_port);
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = &c->nodes[i];

		if (!(n->flags & NODE_HAS_LISTEN_PORT))
			continue;
		config_path(path, "nodes[%zu].listen_port", i);
		if (n->listen_port == VXLAN_PORT || n->listen_port == f->secure_port)
			config_error(
			    r, path,
			    "%u is a VXLAN port (plain 4789, secure %u); choose another for "
			    "WireGuard",
			    n->listen_port, f->secure_port);
	}
}

/* A vnet's place in the definition, for the duplicate checks' sorted index. */
struct vnet_ref {
	const struct vnet *v;
	size_t zone, at;
};

/* The earlier vnet of the same name and of the same VNI, found for each vnet in one sort each. */
struct vnet_dups {
	struct vnet_ref *refs;	      /* in definition order */
	const struct vnet_ref **name; /* per vnet: the first vnet of its name, if it is another */
	const struct vnet_ref **vni;
	size_t n;
};

/* Ties in definition order: the first of a group is the one every other is reported against. */
static int ref_by_name(const void *a, const void *b)
{
	const struct vnet_ref *x = *(const struct vnet_ref *const *)a;
	const struct vnet_ref *y = *(const struct vnet_ref *const *)b;
	int c = strcmp(x->v->name, y->v->name);

	return c ? c : (x > y) - (x < y);
}

static int ref_by_vni(const void *a, const void *b)
{
	const struct vnet_ref *x = *(const struct vnet_ref *const *)a;
	const struct vnet_ref *y = *(const struct vnet_ref *const *)b;

	if (x->v->vni != y->v->vni)
		return x->v->vni < y->v->vni ? -1 : 1;
	return (x > y) - (x < y);
}

static bool same_name(const struct vnet *a, const struct vnet *b)
{
	return !strcmp(a->name, b->name);
}

static bool same_vni(const struct vnet *a, const struct vnet *b)
{
	return a->vni == b->vni;
}

static bool no_name(const struct vnet *v)
{
	return !v->name[0];
}

static bool no_vni(const struct vnet *v)
{
	return !v->vni;
}

/* Sorted by key, then definition order: each vnet's first of its key, when that is another. */
static void first_of_key(struct vnet_dups *d, const struct vnet_ref **sorted,
			 int (*cmp)(const void *, const void *),
			 bool (*same)(const struct vnet *, const struct vnet *),
			 bool (*unset)(const struct vnet *), const struct vnet_ref **out)
{
	const struct vnet_ref *first = NULL;

	qsort(sorted, d->n, sizeof(*sorted), cmp);
	for (size_t i = 0; i < d->n; i++) {
		const struct vnet_ref *x = sorted[i];

		if (unset(x->v)) /* not given, or rejected: reported already */
			continue;
		if (first && same(first->v, x->v))
			out[x - d->refs] = first;
		else
			first = x;
	}
}

static void vnet_dups_free(struct vnet_dups *d)
{
	free(d->refs);
	free(d->name);
	free(d->vni);
	memset(d, 0, sizeof(*d));
}

/* -1 when memory ran out. */
static int vnet_dups_find(const struct cluster *c, struct vnet_dups *d)
{
	const struct vnet_ref **sorted;
	size_t n = 0;

	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < c->n_zones; i++)
		n += c->zones[i].n_vnets;
	d->refs = calloc(n + 1, sizeof(*d->refs));
	d->name = calloc(n + 1, sizeof(*d->name));
	d->vni = calloc(n + 1, sizeof(*d->vni));
	sorted = calloc(n + 1, sizeof(*sorted));
	if (!d->refs || !d->name || !d->vni || !sorted) {
		free(sorted);
		vnet_dups_free(d);
		return -1;
	}
	for (size_t i = 0; i < c->n_zones; i++) {
		for (size_t k = 0; k < c->zones[i].n_vnets; k++)
			d->refs[d->n++] = (struct vnet_ref){&c->zones[i].vnets[k], i, k};
	}
	for (size_t i = 0; i < d->n; i++)
		sorted[i] = &d->refs[i];
	first_of_key(d, sorted, ref_by_name, same_name, no_name, d->name);
	first_of_key(d, sorted, ref_by_vni, same_vni, no_vni, d->vni);
	free(sorted);
	return 0;
}

/*
 * One vnet: a reserved name, and a name or VNI an earlier vnet has (reported
 * against the first vnet that has it).
 */
static void verify_vnet(const struct vnet_ref *x, const struct vnet_ref *same_name,
			const struct vnet_ref *same_vni, struct config_report *r)
{
	const struct vnet *v = x->v;
	char path[CONFIG_PATH_LEN], q[CONFIG_VALUE_LEN];

	config_quote(v->name, q, sizeof(q));
	if (name_reserved(v->name)) {
		config_path(path, "zones[%zu].vnets[%zu].name", x->zone, x->at);
		config_error(r, path,
			     "%s is the name of a device fabricd creates itself (wgfab0, vx<VNI>, "
			     "vs<VNI>); choose another vnet name",
			     q);
	}
	if (name_kernel_refuses(v->name)) {
		config_path(path, "zones[%zu].vnets[%zu].name", x->zone, x->at);
		config_error(r, path,
			     "%s cannot be an interface name (the kernel refuses \"all\" and "
			     "\"default\", and every network namespace has \"lo\"); choose another "
			     "vnet name",
			     q);
	}
	if (same_name) {
		config_path(path, "zones[%zu].vnets[%zu].name", x->zone, x->at);
		config_error(r, path,
			     "%s is also the name of zones[%zu].vnets[%zu]; vnet names are bridge "
			     "names and must be unique in the cluster",
			     q, same_name->zone, same_name->at);
	}
	if (same_vni) {
		config_path(path, "zones[%zu].vnets[%zu].vni", x->zone, x->at);
		config_error(r, path,
			     "%u is also the VNI of zones[%zu].vnets[%zu]; give each vnet its own "
			     "VNI",
			     v->vni, same_vni->zone, same_vni->at);
	}
}

static void verify_zones(const struct cluster *c, struct config_report *r)
{
	char path[CONFIG_PATH_LEN], q[CONFIG_VALUE_LEN];
	struct vnet_dups dups;
	size_t at = 0;

	if (vnet_dups_find(c, &dups) < 0) {
		config_error(r, "zones", "out of memory checking the vnets; try again");
		return;
	}
	for (size_t i = 0; i < c->n_zones; i++) {
		const struct zone *z = &c->zones[i];

		for (size_t j = 0; j < i && z->name[0]; j++) {
			if (strcmp(z->name, c->zones[j].name))
				continue;
			config_path(path, "zones[%zu].name", i);
			config_error(r, path,
				     "%s is also the name of zones[%zu]; zone names must be unique",
				     config_quote(z->name, q, sizeof(q)), j);
			break;
		}
		for (size_t k = 0; k < z->n_vnets; k++, at++)
			verify_vnet(&dups.refs[at], dups.name[at], dups.vni[at], r);
	}
	vnet_dups_free(&dups);
}

static void warn_small(size_t i, unsigned int mtu, bool lowered, struct config_report *r)
{
	char path[CONFIG_PATH_LEN];

	config_path(path, lowered ? "zones[%zu].mtu" : "zones[%zu]", i);
	diag_warn(r->d, path, "the zone MTU %u is below %u, so guests in it cannot carry IPv6; %s",
		  mtu, MTU_IPV6_MIN,
		  lowered ? "raise zones[].mtu if IPv6 is needed"
			  : "raise fabric.underlay_mtu if IPv6 is needed");
}

static void verify_mtu(const struct cluster *c, struct config_report *r)
{
	const struct fabric *f = &c->fabric;
	int underlay_family = 0;
	struct mtu_plan plan;
	char path[CONFIG_PATH_LEN];

	for (size_t i = 0; i < c->n_nodes && !underlay_family; i++)
		underlay_family = c->nodes[i].underlay.family;
	/* an IPv6 link is never under 1280 bytes: such a value cannot be the underlay's */
	if ((f->flags & FABRIC_HAS_UNDERLAY_MTU) && f->underlay_mtu < MTU_IPV6_MIN &&
	    underlay_family && cluster_wg_family(c, underlay_family) == AF_INET6) {
		config_error(
		    r, "fabric.underlay_mtu",
		    "%u is under 1280, the smallest MTU of an IPv6 link, and the nodes "
		    "reach each other over IPv6 (nodes[].underlay, nodes[].endpoint): give "
		    "the real underlay MTU (1500 on most networks)",
		    f->underlay_mtu);
		return;
	}
	if (!(f->flags & FABRIC_HAS_UNDERLAY_MTU) || !underlay_family || !f->prefix.addr.family) {
		/* the computed MTU is only known at run time; an override bounds it */
		for (size_t i = 0; i < c->n_zones; i++) {
			const struct zone *z = &c->zones[i];

			if ((z->flags & ZONE_HAS_MTU) && z->mtu < MTU_IPV6_MIN)
				warn_small(i, z->mtu, true, r);
		}
		return;
	}
	if (mtu_plan_compute(f->underlay_mtu, underlay_family,
			     cluster_wg_family(c, underlay_family), f->prefix.addr.family,
			     &plan) < 0) {
		config_error(r, "fabric.underlay_mtu",
			     "%u leaves no room for WireGuard and VXLAN headers; give the real "
			     "underlay MTU (1500 on most networks)",
			     f->underlay_mtu);
		return;
	}
	/* under 1280 bytes the kernel keeps no IPv6 state on wgfab0: its address is refused */
	if (f->prefix.addr.family == AF_INET6 && plan.fabric < MTU_IPV6_MIN) {
		config_error(r, "fabric.underlay_mtu",
			     "%u leaves wgfab0 %u bytes, under the 1280 an IPv6 fabric "
			     "(fabric.prefix) needs: give at least %u, or an IPv4 fabric prefix",
			     f->underlay_mtu, plan.fabric,
			     f->underlay_mtu + MTU_IPV6_MIN - plan.fabric);
		return;
	}
	for (size_t i = 0; i < c->n_zones; i++) {
		const struct zone *z = &c->zones[i];
		unsigned int computed, mtu = mtu_zone(&plan, z, &computed);

		if ((z->flags & ZONE_HAS_MTU) && z->mtu > computed) {
			config_path(path, "zones[%zu].mtu", i);
			config_error(
			    r, path,
			    "%u is above the zone's computed MTU %u (underlay %u, transport "
			    "%s, mtu_policy %s); \"mtu\" may only lower it: give at most %u "
			    "or remove it",
			    z->mtu, computed, f->underlay_mtu, transport_name(z->transport),
			    mtu_policy_name(z->mtu_policy), computed);
			continue;
		}
		if (mtu < MTU_IPV6_MIN)
			warn_small(i, mtu, mtu < computed, r);
	}
}

void config_verify(const struct cluster *c, struct config_report *r)
{
	verify_prefix(c, r);
	verify_nodes(c, r);
	verify_ports(c, r);
	verify_zones(c, r);
	verify_mtu(c, r);
	evpn_verify(c, r);
}
