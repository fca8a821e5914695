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

static int cluster_vnet_ix_cmp(const void *a, const void *b)
{
	const struct cluster_vnet_ix *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	/* equal names (no valid definition has them): the first, as a scan finds it */
	return c ? c : x->at < y->at ? -1 : x->at > y->at;
}

void cluster_vnet_index_make(const struct cluster *c, struct cluster_vnet_index *ix)
{
	size_t n = 0;

	*ix = (struct cluster_vnet_index){.c = c};
	for (size_t i = 0; i < c->n_zones; i++)
		n += c->zones[i].n_vnets;
	ix->by_name = n ? malloc(n * sizeof(*ix->by_name)) : NULL;
	if (!ix->by_name)
		return;
	for (size_t i = 0; i < c->n_zones; i++) {
		for (size_t j = 0; j < c->zones[i].n_vnets; j++, ix->n++)
			ix->by_name[ix->n] =
			    (struct cluster_vnet_ix){.name = c->zones[i].vnets[j].name,
						     .zone = &c->zones[i],
						     .v = &c->zones[i].vnets[j],
						     .at = ix->n};
	}
	qsort(ix->by_name, ix->n, sizeof(*ix->by_name), cluster_vnet_ix_cmp);
}

static const struct vnet *scan(const struct cluster *c, const char *name, const struct zone **zone)
{
	for (size_t i = 0; i < c->n_zones; i++) {
		for (size_t j = 0; j < c->zones[i].n_vnets; j++) {
			if (!strcmp(c->zones[i].vnets[j].name, name)) {
				if (zone)
					*zone = &c->zones[i];
				return &c->zones[i].vnets[j];
			}
		}
	}
	return NULL;
}

const struct vnet *cluster_vnet_index_find(const struct cluster_vnet_index *ix, const char *name,
					   const struct zone **zone)
{
	size_t lo = 0, hi = ix->n;

	if (!ix->by_name)
		return scan(ix->c, name, zone);
	/* the first entry not below name */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ix->by_name[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ix->n || strcmp(ix->by_name[lo].name, name))
		return NULL;
	if (zone)
		*zone = ix->by_name[lo].zone;
	return ix->by_name[lo].v;
}

void cluster_vnet_index_free(struct cluster_vnet_index *ix)
{
	free(ix->by_name);
	ix->by_name = NULL;
	ix->n = 0;
}
