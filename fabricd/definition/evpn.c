// SPDX-License-Identifier: GPL-2.0-or-later
/* definition/evpn.c - the EVPN control plane's part of the definition: rules and roles. */
#include <string.h>
#include <sys/socket.h>

#include "definition/config_priv.h"
#include "definition/evpn.h"

bool evpn_node_speaks(const struct cluster *c, size_t idx)
{
	for (size_t i = 0; i < c->n_zones; i++) {
		const struct zone *z = &c->zones[i];

		if (z->control_plane == CONTROL_PLANE_EVPN && zone_has_member(z, idx))
			return true;
	}
	return false;
}

bool evpn_is_reflector(const struct cluster *c, size_t idx)
{
	const struct evpn *e = &c->fabric.evpn;

	for (size_t i = 0; i < e->n_reflectors; i++) {
		if (!strcmp(e->reflectors[i], c->nodes[idx].name))
			return true;
	}
	return false;
}

bool evpn_peers(const struct cluster *c, size_t a, size_t b)
{
	if (a == b || !evpn_node_speaks(c, a) || !evpn_node_speaks(c, b))
		return false;
	/* without reflectors a full mesh; with them, every session has a reflector on one end */
	if (!c->fabric.evpn.n_reflectors)
		return true;
	return evpn_is_reflector(c, a) || evpn_is_reflector(c, b);
}

static void verify_reflectors(const struct cluster *c, struct config_report *r)
{
	const struct evpn *e = &c->fabric.evpn;
	char path[CONFIG_PATH_LEN], q[CONFIG_VALUE_LEN];

	for (size_t i = 0; i < e->n_reflectors; i++) {
		int idx = cluster_find_node(c, e->reflectors[i]);

		if (!e->reflectors[i][0])
			continue; /* not a string, or empty: reported */
		config_path(path, "fabric.evpn.route_reflectors[%zu]", i);
		config_quote(e->reflectors[i], q, sizeof(q));
		if (idx < 0) {
			config_error(r, path,
				     "%s is not a node of this cluster; name a node from \"nodes\"",
				     q);
			continue;
		}
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(e->reflectors[j], e->reflectors[i])) {
				config_error(r, path, "%s is listed twice; list each node once", q);
				break;
			}
		}
		if (!evpn_node_speaks(c, (size_t)idx))
			config_error(r, path,
				     "%s is in no EVPN zone, so it runs no BGP; name a member of "
				     "an EVPN zone",
				     q);
	}
}

/*
 * What FRR 8.4 cannot carry: BGP runs between fabric addresses, and bgpd
 * does not bring an IPv6 session up over wgfab0 (no link-local address on
 * it: "nexthop_set failed"); zebra takes no IPv6 VTEP ("Local VTEP IP:
 * 0.0.0.0", nothing installed), and a plain zone's VTEP is the underlay
 * address. Both used to pass check and apply and leave the zone dead.
 */
static void verify_families(const struct cluster *c, struct config_report *r)
{
	char path[CONFIG_PATH_LEN];
	bool fabric_v6 = c->fabric.prefix.addr.family == AF_INET6, told = false;

	for (size_t i = 0; i < c->n_zones; i++) {
		const struct zone *z = &c->zones[i];

		if (z->control_plane != CONTROL_PLANE_EVPN)
			continue;
		if (fabric_v6 && !told) {
			config_error(r, "fabric.prefix",
				     "IPv6, but zone \"%s\" uses EVPN, whose BGP sessions run "
				     "between fabric addresses, and FRR 8.4's bgpd brings no IPv6 "
				     "session up over wgfab0; give an IPv4 fabric.prefix, or make "
				     "the zone static",
				     z->name);
			told = true;
		}
		for (size_t m = 0; z->transport == TRANSPORT_PLAIN && m < z->n_members; m++) {
			const struct node *n = &c->nodes[z->members[m]];

			if (n->underlay.family != AF_INET6)
				continue;
			config_path(path, "zones[%zu].transport", i);
			config_error(
			    r, path,
			    "a plain EVPN zone's VTEPs are its members' underlay addresses, "
			    "and FRR 8.4's zebra takes no IPv6 VTEP (node \"%s\"'s underlay "
			    "is IPv6); make the zone secure (the IPv4 fabric address is its "
			    "VTEP then), or static",
			    n->name);
			break;
		}
	}
}

void evpn_verify(const struct cluster *c, struct config_report *r)
{
	const char *user = NULL;
	for (size_t i = 0; !user && i < c->n_zones; i++) {
		if (c->zones[i].control_plane == CONTROL_PLANE_EVPN)
			user = c->zones[i].name;
	}
	if (c->fabric.control_plane == CONTROL_PLANE_EVPN && !user)
		user = "(no zone yet)";
	if (!(c->fabric.flags & FABRIC_HAS_EVPN)) {
		if (user)
			config_error(r, "fabric.evpn",
				     "missing, but zone \"%s\" uses the evpn control plane; add "
				     "\"evpn\": {\"asn\": 65000} to \"fabric\"",
				     user);
		return;
	}
	verify_reflectors(c, r);
	verify_families(c, r);
}
