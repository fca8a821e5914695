// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli/status_evpn.c - the EVPN part of `status`: each BGP peer's session
 * state and the VNIs and remote VTEPs FRR knows, from FRR's JSON show
 * commands (`show bgp l2vpn evpn summary json`, `show evpn vni detail json`).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli/status_evpn.h"
#include "definition/evpn.h"
#include "engine/frr.h"

/* The node whose fabric address is addr, or NULL. */
static const char *node_of(const struct cluster *c, const char *addr)
{
	char a[IP_ADDR_STRLEN];

	for (size_t i = 0; i < c->n_nodes; i++) {
		if (!strcmp(ip_addr_str(&c->nodes[i].fabric_address, a, sizeof(a)), addr))
			return c->nodes[i].name;
	}
	return NULL;
}

static json_t *peers_json(const struct cluster *c, json_t *summary)
{
	json_t *peers = json_array(), *p;
	const char *addr;

	json_object_foreach(json_object_get(summary, "peers"), addr, p)
	{
		const char *node = node_of(c, addr);
		json_t *state = json_object_get(p, "state");

		json_array_append_new(
		    peers, json_pack("{s:s, s:o, s:s, s:I}", "address", addr, "node",
				     node ? json_string(node) : json_null(), "state",
				     json_is_string(state) ? json_string_value(state) : "unknown",
				     "prefixes_received",
				     (json_int_t)json_integer_value(json_object_get(p, "pfxRcd"))));
	}
	return peers;
}

static void add_vni(json_t *vnis, json_t *v)
{
	json_t *vteps = json_array(), *t;
	size_t i;

	json_array_foreach(frr_vni_remote_vteps(v), i, t)
	{
		const char *ip = frr_vtep_address(t);

		if (ip)
			json_array_append_new(vteps, json_string(ip));
	}
	json_array_append_new(
	    vnis, json_pack("{s:I, s:s, s:s, s:o}", "vni",
			    (json_int_t)json_integer_value(json_object_get(v, "vni")), "vxlan",
			    json_is_string(json_object_get(v, "vxlanInterface"))
				? json_string_value(json_object_get(v, "vxlanInterface"))
				: "",
			    "local_vtep",
			    json_is_string(json_object_get(v, "vtepIp"))
				? json_string_value(json_object_get(v, "vtepIp"))
				: "",
			    "remote_vteps", vteps));
}

/* `show evpn vni detail json` is an array in some FRR releases, an object keyed by VNI in others.
 */
static json_t *vnis_json(json_t *detail)
{
	json_t *vnis = json_array(), *v;
	const char *key;
	size_t i;

	if (json_is_array(detail)) {
		json_array_foreach(detail, i, v) add_vni(vnis, v);
	} else {
		json_object_foreach(detail, key, v)
		{
			if (json_is_object(v))
				add_vni(vnis, v);
		}
	}
	return vnis;
}

void status_evpn_add(const struct options *o, const struct cluster *c, size_t self, json_t *j)
{
	json_t *evpn, *summary, *detail;
	char why[512];

	if (!evpn_node_speaks(c, self))
		return;
	evpn = json_pack("{s:I, s:b}", "asn", (json_int_t)c->fabric.evpn.asn, "frr_running",
			 frr_running(o->frr_pathspace, why, sizeof(why)));
	if (!json_is_true(json_object_get(evpn, "frr_running"))) {
		json_object_set_new(evpn, "error", json_string(why));
		json_object_set_new(evpn, "peers", json_array());
		json_object_set_new(evpn, "vnis", json_array());
		json_object_set_new(j, "evpn", evpn);
		return;
	}
	why[0] = '\0';
	detail = NULL;
	/* a stuck FRR: one wait, not two (status is read by a person waiting) */
	if (frr_show_json(o->frr_pathspace, "show bgp l2vpn evpn summary json", &summary, why,
			  sizeof(why)) != -ETIMEDOUT)
		frr_show_json(o->frr_pathspace, "show evpn vni detail json", &detail, why,
			      sizeof(why));
	if (why[0])
		json_object_set_new(evpn, "error", json_string(why));
	json_object_set_new(evpn, "peers", peers_json(c, summary));
	json_object_set_new(evpn, "vnis", vnis_json(detail));
	json_decref(summary);
	json_decref(detail);
	json_object_set_new(j, "evpn", evpn);
}

void status_evpn_print(json_t *j)
{
	json_t *evpn = json_object_get(j, "evpn"), *p, *v, *t;
	size_t i, k;

	if (!evpn)
		return;
	printf("evpn: router bgp %lld, FRR %s\n", json_integer_value(json_object_get(evpn, "asn")),
	       json_is_true(json_object_get(evpn, "frr_running")) ? "running" : "NOT RUNNING");
	if (json_is_string(json_object_get(evpn, "error")))
		printf("  %s\n", json_string_value(json_object_get(evpn, "error")));
	json_array_foreach(json_object_get(evpn, "peers"), i, p)
	{
		json_t *node = json_object_get(p, "node");

		printf("  bgp peer %-15s %-12s %s, %lld prefixes\n",
		       json_string_value(json_object_get(p, "address")),
		       json_is_string(node) ? json_string_value(node) : "(not a node)",
		       json_string_value(json_object_get(p, "state")),
		       json_integer_value(json_object_get(p, "prefixes_received")));
	}
	json_array_foreach(json_object_get(evpn, "vnis"), i, v)
	{
		printf("  vni %lld (%s, local vtep %s): remote vteps",
		       json_integer_value(json_object_get(v, "vni")),
		       json_string_value(json_object_get(v, "vxlan")),
		       json_string_value(json_object_get(v, "local_vtep")));
		json_array_foreach(json_object_get(v, "remote_vteps"), k, t)
		    printf("%s%s", k ? ", " : " ", json_string_value(t));
		printf("%s\n", json_array_size(json_object_get(v, "remote_vteps")) ? "" : " none");
	}
}
