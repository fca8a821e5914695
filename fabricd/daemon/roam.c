// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon/roam.c - which peers' endpoints a new definition moved (see roam.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/roam.h"

/* Where the definition says a node is reached: its endpoint, or its underlay and port. */
static bool same_endpoint(const struct cluster *a, const struct node *na, const struct cluster *b,
			  const struct node *nb)
{
	uint16_t pa = (na->flags & NODE_HAS_LISTEN_PORT) ? na->listen_port : a->fabric.listen_port;
	uint16_t pb = (nb->flags & NODE_HAS_LISTEN_PORT) ? nb->listen_port : b->fabric.listen_port;

	if ((na->flags & NODE_HAS_ENDPOINT) != (nb->flags & NODE_HAS_ENDPOINT))
		return false;
	if (na->flags & NODE_HAS_ENDPOINT)
		return !strcmp(na->endpoint_host, nb->endpoint_host) &&
		       na->endpoint_port == nb->endpoint_port;
	return ip_addr_equal(&na->underlay, &nb->underlay) && pa == pb;
}

int roam_mark_moved(struct reconcile *r, const struct cluster *prev, const struct cluster *next)
{
	r->roaming = true;
	free(r->endpoint_moved);
	r->n_endpoint_moved = 0;
	r->endpoint_moved = calloc(next->n_nodes ? next->n_nodes : 1, sizeof(*r->endpoint_moved));
	if (!r->endpoint_moved)
		return -ENOMEM;
	r->n_endpoint_moved = next->n_nodes;
	for (size_t i = 0; prev && i < next->n_nodes; i++) {
		int j = cluster_find_node(prev, next->nodes[i].name);

		/* a node new to the definition gets its endpoint with its new peer */
		if (j >= 0)
			r->endpoint_moved[i] =
			    !same_endpoint(prev, &prev->nodes[j], next, &next->nodes[i]);
	}
	return 0;
}
