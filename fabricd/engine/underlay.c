// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/underlay.c - the underlay's MTU and this node's address on it, from the kernel's routes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "engine/resolve.h"
#include "engine/route.h"
#include "engine/underlay.h"

/*
 * The route towards each other node's underlay address, asked once a pass
 * (indexed like c->nodes; self's is not asked): the MTU measurement and the
 * source-address check both read it. Until 2026-12-07 each asked the kernel
 * itself, 2 x (N - 1) RTM_GETROUTE a pass (126 at 64 nodes).
 */
struct peer_route {
	int ret; /* route_get's: 0 or -errno */
	struct route_hop hop;
	/* towards the node's endpoint, where it is an IP literal other than its underlay
	 * address (family 0: none): WireGuard sends there */
	struct ip_addr endpoint;
	int endpoint_ret;
	struct route_hop endpoint_hop;
};

static void survey_routes(struct nl_sock *rtnl, const struct cluster *c, size_t self,
			  struct peer_route *r)
{
	int wg_family = cluster_wg_family(c, c->nodes[self].underlay.family);

	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = &c->nodes[i];

		r[i].ret = i == self ? -ENOENT : route_get(rtnl, &n->underlay, &r[i].hop);
		/* a name as it resolved (resolve_cluster_names asked before the survey) */
		if (i == self || !(n->flags & NODE_HAS_ENDPOINT) ||
		    (ip_addr_parse(n->endpoint_host, &r[i].endpoint) < 0 &&
		     !resolve_cached(n->endpoint_host, n->endpoint_port, wg_family,
				     &r[i].endpoint)) ||
		    ip_addr_equal(&r[i].endpoint, &n->underlay)) {
			memset(&r[i].endpoint, 0, sizeof(r[i].endpoint));
			continue;
		}
		r[i].endpoint_ret = route_get(rtnl, &r[i].endpoint, &r[i].endpoint_hop);
	}
}

/*
 * The path MTU towards node i (route_hop_mtu), or the lookup's -errno: the
 * smaller of the routes to its underlay address (plain VXLAN) and to its
 * endpoint literal (WireGuard, as wg-quick measures per endpoint; until
 * 2026-12-07 only the underlay's was asked, and a narrower path to an
 * endpoint left wgfab0 too large: WireGuard's largest packets fragmented).
 * via (when given) is the address of the narrower one.
 */
static int path_mtu(const struct peer_route *r, const struct link_table *links,
		    const struct cluster *c, size_t i, unsigned int *mtu,
		    const struct ip_addr **via)
{
	unsigned int m;
	int ret = r[i].ret < 0 ? r[i].ret : route_hop_mtu(links, &r[i].hop, mtu);

	if (via)
		*via = &c->nodes[i].underlay;
	if (ret < 0 || !r[i].endpoint.family || r[i].endpoint_ret < 0 ||
	    route_hop_mtu(links, &r[i].endpoint_hop, &m) < 0 || m >= *mtu)
		return ret;
	*mtu = m;
	if (via)
		*via = &r[i].endpoint;
	return 0;
}

/*
 * Each node measures its own underlay, and nodes that measure differently
 * build different MTUs for one zone: a frame the larger node sends is lost
 * at the smaller one's port, with no ICMP to say so. Where every link is
 * Ethernet's 1500 they agree; any other value is one that another node may
 * not share, so it is said, once per value a process measures (the daemon
 * measures every pass).
 */
static void warn_unshared_mtu(unsigned int mtu)
{
	static unsigned int warned;

	if (mtu == 1500 || mtu == warned)
		return;
	warned = mtu;
	log_warn("fabric.underlay_mtu is not set, and this node's underlay carries %u bytes, "
		 "not 1500: every node measures its own, and a zone whose MTU differs between "
		 "nodes loses its largest frames; set fabric.underlay_mtu to the smallest "
		 "underlay MTU of the cluster",
		 mtu);
}

/*
 * The smallest path MTU towards the other nodes (0: none reachable), the
 * node it leads to and the address it was asked for (via). Stops at the
 * first node without a route when unreachable is given (its index there,
 * the lookup's -errno returned).
 */
static int smallest_path(const struct peer_route *r, const struct link_table *links,
			 const struct cluster *c, size_t self, unsigned int *mtu, size_t *narrow,
			 const struct ip_addr **via, size_t *unreachable)
{
	*mtu = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct ip_addr *to;
		unsigned int m;
		int ret;

		if (i == self)
			continue;
		ret = path_mtu(r, links, c, i, &m, &to);
		if (ret < 0 && unreachable) {
			*unreachable = i;
			return ret;
		}
		if (ret == 0 && (!*mtu || m < *mtu)) {
			*mtu = m;
			*narrow = i;
			*via = to;
		}
	}
	return 0;
}

/*
 * The underlay MTU when the definition does not give it: the smallest path
 * MTU towards the other nodes, as wg-quick computes it per endpoint (1500,
 * with a warning, for a cluster of one). 0, or -errno with the node it
 * cannot reach in diag.
 */
static int measure_mtu(const struct peer_route *r, const struct cluster *c, size_t self,
		       const struct link_table *links, unsigned int *mtu, struct diag *diag)
{
	char a[IP_ADDR_STRLEN], path[FABRICD_NAME_MAX + 8];
	const struct ip_addr *via;
	size_t narrow, gone;
	int ret = smallest_path(r, links, c, self, mtu, &narrow, &via, &gone);

	if (ret < 0) {
		/* every node without a route, not only the first: a cut link loses them all */
		for (size_t i = gone; i < c->n_nodes; i++) {
			unsigned int m;
			int err = ret;

			if (i != gone && i == self)
				continue;
			if (i != gone && (err = path_mtu(r, links, c, i, &m, NULL)) >= 0)
				continue;
			snprintf(path, sizeof(path), "node %s", c->nodes[i].name);
			diag_add(diag, path,
				 "no route to its underlay address %s (%s): fix the underlay "
				 "routing, or set fabric.underlay_mtu",
				 ip_addr_str(&c->nodes[i].underlay, a, sizeof(a)), strerror(-err));
		}
		return ret;
	}
	if (!*mtu) {
		/* a cluster of one has no route to ask about */
		*mtu = 1500;
		log_warn("no other node to measure the underlay MTU against: assuming 1500; "
			 "set fabric.underlay_mtu to be explicit");
	}
	warn_unshared_mtu(*mtu);
	return 0;
}

/*
 * A value written in the file is trusted (a jumbo cluster hears nothing),
 * except where this node's routes say it cannot be: larger than a path
 * carries, plain VXLAN's largest frames are dropped without a word. A node
 * without a route is said by the fabric's own failures, not here.
 */
static void check_given_mtu(const struct peer_route *r, const struct link_table *links,
			    const struct cluster *c, size_t self)
{
	static unsigned int warned_given, warned_path;
	unsigned int given = c->fabric.underlay_mtu, smallest;
	const struct ip_addr *via = NULL;
	size_t narrow = 0;
	char a[IP_ADDR_STRLEN];

	smallest_path(r, links, c, self, &smallest, &narrow, &via, NULL);
	if (!smallest || smallest >= given || (given == warned_given && smallest == warned_path))
		return;
	warned_given = given;
	warned_path = smallest;
	log_warn("fabric.underlay_mtu is %u, but this node's route to node %s (%s) carries %u "
		 "bytes: plain VXLAN frames larger than that are lost and WireGuard's are "
		 "fragmented; lower fabric.underlay_mtu to %u, or raise the underlay's MTU on "
		 "every node",
		 given, c->nodes[narrow].name, ip_addr_str(via, a, sizeof(a)), smallest, smallest);
}

/* Whether the other nodes' guards take WireGuard from src as this node's: its underlay
 * address, or the IP literal of its endpoint. */
static bool guards_accept(const struct node *n, const struct ip_addr *src)
{
	struct ip_addr e;

	if (ip_addr_equal(&n->underlay, src))
		return true;
	return (n->flags & NODE_HAS_ENDPOINT) && ip_addr_parse(n->endpoint_host, &e) == 0 &&
	       ip_addr_equal(&e, src);
}

/*
 * WireGuard has no source address of its own: it sends from the one the
 * kernel's route picks. The other nodes' guards take WireGuard only from
 * this node's underlay address (or endpoint literal), so where the route
 * picks another address of this host (a second address on the interface; a
 * SLAAC or temporary IPv6 address beside a static one) every handshake this
 * node starts is dropped there (counter drop_wireguard), and a secure zone
 * works only while the other side starts the sessions: said once per
 * (node, address) a process sees.
 */
static void check_source(const struct peer_route *r, const struct cluster *c, size_t self)
{
	static struct ip_addr warned_src;
	static char warned_node[FABRICD_NAME_MAX + 1];
	const struct node *me = &c->nodes[self];
	char a[IP_ADDR_STRLEN], b[IP_ADDR_STRLEN], d[IP_ADDR_STRLEN];

	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *peer = &c->nodes[i];
		struct ip_addr to = peer->underlay;
		struct route_hop hop;

		/* WireGuard sends to the endpoint where it is an IP literal */
		if ((peer->flags & NODE_HAS_ENDPOINT) &&
		    ip_addr_parse(peer->endpoint_host, &to) < 0)
			to = peer->underlay;
		/* an endpoint of the other family: that node's guard takes it from anywhere */
		if (i == self || to.family != me->underlay.family)
			continue;
		/* the survey's answer, towards the endpoint where that is another address */
		hop = r[i].endpoint.family ? r[i].endpoint_hop : r[i].hop;
		if ((r[i].endpoint.family ? r[i].endpoint_ret : r[i].ret) < 0)
			continue;
		if (!hop.src.family || guards_accept(me, &hop.src))
			continue;
		if (!strcmp(warned_node, peer->name) && ip_addr_equal(&hop.src, &warned_src))
			return;
		snprintf(warned_node, sizeof(warned_node), "%s", peer->name);
		warned_src = hop.src;
		ip_addr_str(&to, d, sizeof(d));
		ip_addr_str(&me->underlay, a, sizeof(a));
		ip_addr_str(&hop.src, b, sizeof(b));
		log_warn("nodes[%zu].underlay: this host sends to node %s (%s) from %s, not from "
			 "its underlay address %s: WireGuard sends from the route's source, and "
			 "node %s's guard drops WireGuard from %s (counter drop_wireguard), so the "
			 "sessions this node starts fail; make %s the source of that route (`ip "
			 "route replace %s dev DEV src %s`, or make it the interface's first "
			 "address), or give %s as this node's underlay",
			 self, peer->name, d, b, a, peer->name, b, a, d, a, b);
		return;
	}
	warned_node[0] = '\0';
}

/*
 * A warning (once per address a process sees) when this node's underlay
 * address is not an address of this host: its VXLAN devices send from it.
 * When it is, check_source.
 */
static void check_local(struct nl_sock *rtnl, const struct peer_route *r, const struct cluster *c,
			size_t self)
{
	static struct ip_addr warned;
	const struct ip_addr *own = &c->nodes[self].underlay;
	struct route_hop hop;
	char a[IP_ADDR_STRLEN];
	int ret;

	ret = route_get(rtnl, own, &hop);
	if (ret == 0 && hop.local) {
		/* the warning's last word: an IPv6 address is local only after DAD */
		if (ip_addr_equal(own, &warned))
			log_info("nodes[%zu].underlay: %s is an address of this host now", self,
				 ip_addr_str(own, a, sizeof(a)));
		memset(&warned, 0, sizeof(warned));
		check_source(r, c, self);
		return;
	}
	if (ip_addr_equal(own, &warned))
		return;
	warned = *own;
	log_warn("nodes[%zu].underlay: %s is not an address of this host (or not yet: an IPv6 "
		 "address is while duplicate address detection runs), yet node %s's plain "
		 "VXLAN devices send from it and the other nodes accept its traffic only from "
		 "it: correct the address in the definition, give this host that address, or "
		 "name this host's node with -n",
		 self, ip_addr_str(own, a, sizeof(a)), c->nodes[self].name);
}

int underlay_survey(struct nl_sock *rtnl, const struct cluster *c, size_t self,
		    const struct link_table *links, unsigned int *mtu, struct diag *diag)
{
	struct peer_route *r = calloc(c->n_nodes ? c->n_nodes : 1, sizeof(*r));
	int ret = 0;

	if (!r) {
		diag_add(diag, "fabric",
			 "out of memory asking the routes to the %zu nodes; run again", c->n_nodes);
		return -ENOMEM;
	}
	survey_routes(rtnl, c, self, r);
	check_local(rtnl, r, c, self);
	if (c->fabric.flags & FABRIC_HAS_UNDERLAY_MTU) {
		*mtu = c->fabric.underlay_mtu;
		check_given_mtu(r, links, c, self);
	} else {
		ret = measure_mtu(r, c, self, links, mtu, diag);
	}
	free(r);
	return ret;
}
