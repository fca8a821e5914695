// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_underlay.c - one pass's look at the underlay (engine/underlay.h) asks
 * the kernel for each other node's route once: the MTU measurement and the
 * source-address check share the answer (until 2026-12-07 each asked, 2 x
 * (N - 1) + 1 RTM_GETROUTE a pass: 127 at 64 nodes). The nodes' underlay
 * addresses are 127.0.0.x of this process's namespace: routes the kernel
 * answers everywhere, through lo. Counts the requests by the socket's
 * sequence number.
 */
#include <net/if.h>
#include <stdio.h>

#include "engine/underlay.h"
#include "unit.h"

#define NODES 64

static struct node nodes[NODES];

/* A cluster of n nodes, node i at 127.0.0.(i + 1). */
static struct cluster cluster_of(size_t n)
{
	struct cluster c = {.version = 1, .name = "lab", .n_nodes = n, .nodes = nodes};
	char a[32];

	for (size_t i = 0; i < n; i++) {
		nodes[i] = (struct node){0};
		snprintf(nodes[i].name, sizeof(nodes[i].name), "pve%zu", i + 1);
		snprintf(a, sizeof(a), "127.0.0.%zu", i + 1);
		ip_addr_parse(a, &nodes[i].underlay);
	}
	return c;
}

/* The RTM_GETROUTE requests of one underlay_survey, and its MTU. */
static unsigned int requests(struct nl_sock *s, const struct cluster *c,
			     const struct link_table *links, unsigned int *mtu)
{
	uint32_t seq = s->seq;
	struct diag d;
	int ret;

	diag_init(&d);
	*mtu = 0;
	ret = underlay_survey(s, c, 0, links, mtu, &d);
	CHECK_INT(ret, 0, "the survey of %zu nodes", c->n_nodes);
	CHECK_INT(d.n, 0, "no error for %zu nodes", c->n_nodes);
	diag_free(&d);
	return s->seq - seq;
}

int main(void)
{
	struct nl_sock s;
	struct link_obs lo = {.ifindex = (int)if_nametoindex("lo"), .name = "lo", .mtu = 65536};
	struct link_table links = {.n = 1, .links = &lo};
	struct cluster c;
	unsigned int mtu;

	if (nl_open(&s, NETLINK_ROUTE) < 0 || !lo.ifindex) {
		printf("test_underlay: skipped: no rtnetlink or no lo\n");
		return UNIT_EXIT_SKIP;
	}
	/* measured: one lookup a peer, one towards the own address */
	c = cluster_of(NODES);
	CHECK_INT(requests(&s, &c, &links, &mtu), NODES, "64 nodes, underlay_mtu measured");
	CHECK_INT(mtu, 65536, "lo's MTU measured");
	c = cluster_of(3);
	CHECK_INT(requests(&s, &c, &links, &mtu), 3, "3 nodes, measured");
	/* given: its check reads the same answers */
	c = cluster_of(NODES);
	c.fabric.flags |= FABRIC_HAS_UNDERLAY_MTU;
	c.fabric.underlay_mtu = 1500;
	CHECK_INT(requests(&s, &c, &links, &mtu), NODES, "64 nodes, underlay_mtu given");
	CHECK_INT(mtu, 1500, "the given MTU");
	/* an endpoint literal other than the underlay: WireGuard's route is asked too */
	c = cluster_of(NODES);
	snprintf(nodes[1].endpoint_host, sizeof(nodes[1].endpoint_host), "127.0.1.2");
	nodes[1].endpoint_port = 51820;
	nodes[1].flags |= NODE_HAS_ENDPOINT;
	CHECK_INT(requests(&s, &c, &links, &mtu), NODES + 1, "64 nodes, one endpoint elsewhere");
	nl_close(&s);
	return unit_summary("test_underlay");
}
