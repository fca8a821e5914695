// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_guard_pairs.c - the guard's "address . VNI" allow-lists
 * (kinds/guard_render.c makes them address-major, already in the sets'
 * order): against pairs gathered the plain way, vnet by vnet and member by
 * member, then sorted. The definition lists nodes out of address order,
 * zones' members and vnets out of order, and zones over subsets of the
 * nodes, so neither order can come out right by accident.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "definition/config.h"
#include "definition/desired.h"
#include "kinds/guard.h"
#include "kinds/guard_priv.h"
#include "unit.h"

static const char definition[] =
    "{\"version\": 1, \"cluster\": \"pairs\","
    " \"fabric\": {\"prefix\": \"10.255.0.0/24\", \"listen_port\": 51820},"
    " \"nodes\": ["
    "  {\"name\": \"a\", \"underlay\": \"192.0.2.30\", \"fabric_address\": \"10.255.0.9\","
    "   \"public_key\": \"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAUA=\"},"
    "  {\"name\": \"b\", \"underlay\": \"192.0.2.4\", \"fabric_address\": \"10.255.0.200\","
    "   \"public_key\": \"AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAkA=\"},"
    "  {\"name\": \"c\", \"underlay\": \"192.0.2.200\", \"fabric_address\": \"10.255.0.1\","
    "   \"public_key\": \"AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDA0A=\"},"
    "  {\"name\": \"d\", \"underlay\": \"192.0.2.17\", \"fabric_address\": \"10.255.0.50\","
    "   \"public_key\": \"BAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBEA=\"},"
    "  {\"name\": \"e\", \"underlay\": \"192.0.2.1\", \"fabric_address\": \"10.255.0.7\","
    "   \"public_key\": \"BQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBUA=\"}],"
    " \"zones\": ["
    "  {\"name\": \"p1\", \"transport\": \"plain\", \"nodes\": [\"d\", \"a\", \"c\"],"
    "   \"vnets\": [{\"name\": \"v900\", \"vni\": 900}, {\"name\": \"v12\", \"vni\": 12},"
    "              {\"name\": \"v70000\", \"vni\": 70000}]},"
    "  {\"name\": \"s1\", \"transport\": \"secure\", \"nodes\": [\"e\", \"b\", \"a\"],"
    "   \"vnets\": [{\"name\": \"v5\", \"vni\": 5}, {\"name\": \"v256\", \"vni\": 256}]},"
    "  {\"name\": \"s2\", \"transport\": \"secure\","
    "   \"vnets\": [{\"name\": \"v16777215\", \"vni\": 16777215},"
    "              {\"name\": \"v300\", \"vni\": 300}]},"
    "  {\"name\": \"p2\", \"transport\": \"plain\", \"nodes\": [\"a\"],"
    "   \"vnets\": [{\"name\": \"v1\", \"vni\": 1}]}]}";

static int ref_cmp(const void *a, const void *b)
{
	return key_cmp(a, b);
}

/* want's pairs for the vnets select() takes, gathered vnet by vnet, sorted. */
static size_t reference_pairs(const struct node_state *want, bool fabric,
			      bool (*select)(const struct desired_vnet *), struct firewall_key *out)
{
	const struct cluster *c = want->cluster;
	size_t n = 0;

	for (size_t i = 0; i < want->n_vnets; i++) {
		const struct desired_vnet *v = &want->vnets[i];
		const struct zone *z = &c->zones[v->zone];

		for (size_t m = 0; select(v) && m < z->n_members; m++) {
			const struct node *node = &c->nodes[z->members[m]];

			if (z->members[m] != want->self)
				key_make(&out[n++],
					 fabric ? &node->fabric_address : &node->underlay, v->vni);
		}
	}
	qsort(out, n, sizeof(*out), ref_cmp);
	return n;
}

static bool every_vnet(const struct desired_vnet *v)
{
	(void)v;
	return true;
}

/* sealed: a secure vnet takes plain VXLAN only while its plain device receives */
static bool plain_sealed(const struct desired_vnet *v)
{
	return v->transport == TRANSPORT_PLAIN || v->plain_receiving;
}

static void check_set(const struct firewall_elems *got, const struct firewall_key *ref, size_t n,
		      const char *what)
{
	CHECK_INT((int)got->n, (int)n, "%s: one pair per vnet and other member", what);
	for (size_t i = 0; i < got->n && got->n == n; i++) {
		struct firewall_key k;

		elems_get(got, i, &k);
		CHECK(!key_cmp(&k, &ref[i]), "%s: pair %zu in the set's order", what, i);
	}
}

static void check_node(const struct cluster *c, size_t self)
{
	struct firewall_key ref[64];
	struct firewall_ruleset rs;
	struct node_state s;
	struct diag d;
	size_t n;

	diag_init(&d);
	CHECK_INT(desired_build(c, self, 1500, &s, &d), 0, "node %zu's state", self);
	diag_free(&d);
	/* a secure vnet in its grace period: its members' plain VXLAN is still taken */
	for (size_t i = 0; i < s.n_vnets; i++)
		s.vnets[i].plain_receiving = s.vnets[i].vni == 300;
	CHECK_INT(firewall_render(&s, NULL, &rs), 0, "node %zu: rendered", self);
	n = reference_pairs(&s, true, every_vnet, ref);
	check_set(&rs.sets[FW_SET_FABRIC_MEMBERS], ref, n, "fabric_members");
	n = reference_pairs(&s, false, plain_sealed, ref);
	check_set(&rs.sets[FW_SET_PLAIN_MEMBERS], ref, n, "plain_members");
	CHECK_INT((int)rs.sets[FW_SET_CARRIED_MEMBERS].n, 0, "no EVPN vnet: nothing carried");
	firewall_ruleset_free(&rs);
	desired_free(&s);
}

/* Two nodes on one underlay address: the pairs repeat, the set holds each once. */
static void test_elems_sort_drops_repeats_in_order(void)
{
	struct ip_addr a = {.family = AF_INET, .bytes = {192, 0, 2, 1}};
	struct firewall_elems l = {0};
	struct firewall_key k;

	for (int i = 0; i < 3; i++) {
		key_make(&k, &a, i < 2 ? 7 : 8);
		CHECK_INT(elems_add(&l, &k), 0, "add");
	}
	elems_sort(&l);
	CHECK_INT((int)l.n, 2, "in order but repeated: each once");
	elems_free(&l);
}

int main(void)
{
	struct cluster *c = NULL;
	struct diag d;

	diag_init(&d);
	CHECK_INT(config_load_buffer(definition, strlen(definition), &c, &d), 0, "definition");
	if (!c)
		diag_print(&d, stderr);
	diag_free(&d);
	for (size_t self = 0; c && self < c->n_nodes; self++)
		check_node(c, self);
	cluster_free(c);
	test_elems_sort_drops_repeats_in_order();
	return unit_summary("test_guard_pairs");
}
