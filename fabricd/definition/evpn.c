// SPDX-License-Identifier: GPL-2.0-or-later
/* definition/evpn.c - the EVPN control plane's part of the definition: rules and roles. */
#include <string.h>

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
			continue; /* not a string: reported */
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
}
