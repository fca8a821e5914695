// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/pve_import_out.c - Proxmox import, part three: the cluster
 * definition (DESIGN.md, version 1) of everything that mapped. Private keys
 * never go here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "definition/pve_import_priv.h"
#include "definition/wgkey.h"

static json_t *node_json(const struct pve_import *imp, const struct imp_node *n)
{
	char under[IP_ADDR_STRLEN], fab[IP_ADDR_STRLEN], key[WGKEY_B64_LEN],
	    ep[FABRICD_HOST_MAX + 8];
	json_t *o;

	wgkey_to_base64(key, n->pub);
	o = json_pack("{s:s, s:s, s:s, s:s}", "name", n->name, "underlay",
		      ip_addr_str(&n->underlay, under, sizeof(under)), "fabric_address",
		      ip_addr_str(&n->fabric_address, fab, sizeof(fab)), "public_key", key);
	if (o && n->port != imp->listen_port)
		json_object_set_new(o, "listen_port", json_integer(n->port));
	/* a WireGuard endpoint given as a host name is reached by name, at the node's port */
	if (o && n->endpoint_host[0]) {
		snprintf(ep, sizeof(ep), "%s:%u", n->endpoint_host, n->port);
		json_object_set_new(o, "endpoint", json_string(ep));
	}
	/* an endpoint of the other family than the underlay's (pve_import.c) */
	if (o && n->endpoint_other_family) {
		char addr[IP_ADDR_STRLEN];

		ip_addr_str(&n->endpoint_ip, addr, sizeof(addr));
		snprintf(ep, sizeof(ep), n->endpoint_ip.family == AF_INET6 ? "[%s]:%u" : "%s:%u",
			 addr, n->port);
		json_object_set_new(o, "endpoint", json_string(ep));
	}
	return o;
}

static json_t *fabric_json(const struct pve_import *imp)
{
	char addr[IP_ADDR_STRLEN], prefix[IP_ADDR_STRLEN + 4];
	json_t *o;

	snprintf(prefix, sizeof(prefix), "%s/%u",
		 ip_addr_str(&imp->prefix.addr, addr, sizeof(addr)), imp->prefix.len);
	/* Proxmox's keepalive is off unless set; fabricd's default is 25: write it always */
	o = json_pack("{s:s, s:i, s:i}", "prefix", prefix, "listen_port", imp->listen_port,
		      "keepalive", (int)imp->keepalive);
	if (o && imp->opts->underlay_mtu)
		json_object_set_new(o, "underlay_mtu", json_integer(imp->opts->underlay_mtu));
	return o;
}

static json_t *zone_json(const struct pve_import *imp, const struct imp_zone *z)
{
	json_t *o =
	    json_pack("{s:s, s:s}", "name", z->name, "transport", transport_name(z->transport));
	json_t *members = json_array();
	size_t n = 0;

	if (!o || !members)
		goto fail;
	for (size_t i = 0; i < imp->n_nodes; i++) {
		if (z->member[i] && imp->nodes[i].usable) {
			json_array_append_new(members, json_string(imp->nodes[i].name));
			n++;
		}
	}
	if (n == 0) {
		json_decref(members);
		json_decref(o);
		return json_null(); /* skipped by the caller */
	}
	if (!z->all_nodes)
		json_object_set_new(o, "nodes", members);
	else
		json_decref(members);
	if (z->mtu)
		json_object_set_new(o, "mtu", json_integer(z->mtu));
	if (z->follow)
		json_object_set_new(o, "pve_zone", json_string(z->sec->id));
	else
		json_object_set(o, "vnets", z->vnets);
	return o;
fail:
	json_decref(members);
	json_decref(o);
	return NULL;
}

static json_t *definition(const struct pve_import *imp)
{
	json_t *nodes = json_array(), *zones = json_array(), *def;
	char where[PVE_WHERE_LEN];

	for (size_t i = 0; nodes && i < imp->n_nodes; i++)
		if (imp->nodes[i].usable)
			json_array_append_new(nodes, node_json(imp, &imp->nodes[i]));
	for (size_t i = 0; zones && i < imp->n_zones; i++) {
		json_t *z = zone_json(imp, &imp->zones[i]);

		if (json_is_null(z))
			diag_warn(
			    imp->d, pve_where(where, imp->in->zones, imp->zones[i].sec, NULL),
			    "no imported node is a member (its peers, nodes or fabric, above); "
			    "the zone and its vnets are left out: give it nodes of "
			    "the cluster in Proxmox%s",
			    imp_again(imp));
		else
			json_array_append_new(zones, z);
	}
	def = json_pack("{s:i, s:s, s:o, s:o, s:o}", "version", 1, "cluster", imp->cluster,
			"fabric", fabric_json(imp), "nodes", nodes, "zones", zones);
	for (size_t i = 0; def && i < imp->n_zones; i++) {
		if (imp->zones[i].follow && imp->opts->sdn_dir &&
		    strcmp(imp->opts->sdn_dir, "/etc/pve/sdn")) {
			json_object_set_new(def, "pve_sdn_dir", json_string(imp->opts->sdn_dir));
			break;
		}
	}
	return def;
}

char *pve_import_json(const struct pve_import *imp)
{
	json_t *def = definition(imp);
	char *text = def ? json_dumps(def, JSON_INDENT(2)) : NULL;
	char *with_nl = NULL;

	json_decref(def);
	if (text && (with_nl = malloc(strlen(text) + 2)))
		snprintf(with_nl, strlen(text) + 2, "%s\n", text);
	free(text);
	return with_nl;
}
