// SPDX-License-Identifier: GPL-2.0-or-later
/* definition/model.c - helpers over the cluster definition structs. */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "definition/model.h"

void cluster_free(struct cluster *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_zones; i++) {
		free(c->zones[i].members);
		free(c->zones[i].vnets);
	}
	free(c->zones);
	free(c->nodes);
	free(c->fabric.evpn.reflectors);
	free(c);
}

int cluster_find_node(const struct cluster *c, const char *name)
{
	for (size_t i = 0; i < c->n_nodes; i++) {
		if (!strcmp(c->nodes[i].name, name))
			return (int)i;
	}
	return -1;
}

bool name_reserved(const char *s)
{
	if (!strcmp(s, "wgfab0"))
		return true;
	if (s[0] != 'v' || (s[1] != 'x' && s[1] != 's') || !s[2])
		return false;
	return strspn(s + 2, "0123456789") == strlen(s + 2);
}

bool name_kernel_refuses(const char *s)
{
	return !strcmp(s, "all") || !strcmp(s, "default") || !strcmp(s, "lo");
}

bool name_valid(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > FABRICD_NAME_MAX || *s == '-')
		return false;
	for (; *s; s++) {
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= '0' && *s <= '9') && *s != '-')
			return false;
	}
	return true;
}

uint16_t node_listen_port(const struct cluster *c, const struct node *n)
{
	return (n->flags & NODE_HAS_LISTEN_PORT) ? n->listen_port : c->fabric.listen_port;
}

int cluster_wg_family(const struct cluster *c, int underlay_family)
{
	struct ip_addr a;

	if (underlay_family == AF_INET6)
		return AF_INET6;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = &c->nodes[i];

		if ((n->flags & NODE_HAS_ENDPOINT) && ip_addr_parse(n->endpoint_host, &a) == 0 &&
		    a.family == AF_INET6)
			return AF_INET6;
	}
	return underlay_family;
}

int zone_has_member(const struct zone *z, size_t idx)
{
	for (size_t i = 0; i < z->n_members; i++) {
		if (z->members[i] == idx)
			return 1;
	}
	return 0;
}

const char *transport_name(enum transport t)
{
	return t == TRANSPORT_SECURE ? "secure" : "plain";
}

const char *mtu_policy_name(enum mtu_policy p)
{
	return p == MTU_POLICY_MAX ? "max" : "stable";
}

const char *control_plane_name(enum control_plane cp)
{
	return cp == CONTROL_PLANE_EVPN ? "evpn" : "static";
}
