// SPDX-License-Identifier: GPL-2.0-or-later
/* render.c - print a node's desired objects without touching the kernel. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "kinds/frr.h"
#include "cli/commands.h"
#include "engine/session.h"
#include "definition/desired.h"
#include "base/log.h"
#include "definition/wgkey.h"

static const char *mtu_text(unsigned int mtu, char *buf, size_t len)
{
	if (mtu)
		snprintf(buf, len, "%u", mtu);
	else
		snprintf(buf, len, "from the kernel at apply time");
	return buf;
}

static void render_text(const struct node_state *s)
{
	const struct cluster *c = s->cluster;
	const struct desired_fabric *f = &s->fabric;
	char a[IP_ADDR_STRLEN], b[64], key[WGKEY_B64_LEN];

	printf("node %s of cluster %s\n", c->nodes[s->self].name, c->name);
	if (s->mtu_known)
		printf("underlay MTU %u (%s)\n", s->mtu.underlay,
		       (c->fabric.flags & FABRIC_HAS_UNDERLAY_MTU) ? "definition" : "kernel");
	else
		printf("underlay MTU: not in the definition; apply reads it from the kernel "
		       "(smallest MTU on the routes to the peers)\n");
	printf("fabric %s: address %s/%u, listen port %u, mtu %s\n", f->ifname,
	       ip_addr_str(&f->address.addr, a, sizeof(a)), f->address.len, f->listen_port,
	       mtu_text(f->mtu, b, sizeof(b)));
	for (size_t i = 0; i < f->n_peers; i++) {
		const struct desired_peer *p = &f->peers[i];
		char ips[2 * (IP_ADDR_STRLEN + 6)];

		wgkey_to_base64(key, p->public_key);
		desired_allowed_ips_text(p, ips, sizeof(ips));
		printf("  peer %s %s: endpoint %s%s%s:%u, allowed ips %s, keepalive %u\n",
		       c->nodes[p->node].name, key, p->endpoint_addr.family == AF_INET6 ? "[" : "",
		       p->endpoint_host, p->endpoint_addr.family == AF_INET6 ? "]" : "",
		       p->endpoint_port, ips, p->keepalive);
	}
	for (size_t zi = 0; zi < s->n_zones; zi++) {
		const struct desired_zone *dz = &s->zones[zi];
		const struct zone *z = &c->zones[dz->zone];

		printf("zone %s: transport %s, mtu policy %s, mtu %s\n", z->name,
		       transport_name(z->transport), mtu_policy_name(z->mtu_policy),
		       mtu_text(dz->mtu, b, sizeof(b)));
		if (z->flags & ZONE_PVE_FOLLOW)
			printf("  vnets of Proxmox Simple zone %s (%s/.running-config), VNIs "
			       "%u..%u from their names unless pinned; bridges Proxmox's\n",
			       z->pve_zone, c->pve_sdn_dir, z->vni_first, z->vni_last);
		for (size_t vi = 0; vi < s->n_vnets; vi++) {
			const struct desired_vnet *v = &s->vnets[vi];

			if (v->zone != dz->zone)
				continue;
			printf("  vnet %s: bridge %s mtu %s\n", v->name, v->name,
			       mtu_text(v->mtu, b, sizeof(b)));
			printf("    vxlan %s: vni %u, port %u, local %s, mtu %s\n", v->vxlan,
			       v->vni, v->port, ip_addr_str(&v->local, a, sizeof(a)),
			       mtu_text(v->mtu, b, sizeof(b)));
			for (size_t r = 0; r < v->n_remotes; r++)
				printf("      remote %s%s\n",
				       ip_addr_str(&v->remotes[r], a, sizeof(a)),
				       v->evpn ? " (evpn: announced over BGP, installed by FRR)"
					       : "");
			if (v->standby)
				printf("    standby %s: port %u, local %s, mute (receives secure "
				       "during a switch)\n",
				       v->other_vxlan, v->other_port,
				       ip_addr_str(&v->other_local, a, sizeof(a)));
		}
	}
}

static json_t *json_mtu(unsigned int mtu)
{
	return mtu ? json_integer(mtu) : json_null();
}

static json_t *render_json_vnet(const struct desired_vnet *v)
{
	char a[IP_ADDR_STRLEN];
	json_t *remotes = json_array();

	for (size_t r = 0; r < v->n_remotes; r++)
		json_array_append_new(remotes,
				      json_string(ip_addr_str(&v->remotes[r], a, sizeof(a))));
	json_t *o = json_pack(
	    "{s:s, s:I, s:{s:s, s:o}, s:{s:s, s:I, s:I, s:s, s:o, s:o}}", "name", v->name, "vni",
	    (json_int_t)v->vni, "bridge", "name", v->name, "mtu", json_mtu(v->mtu), "vxlan", "name",
	    v->vxlan, "vni", (json_int_t)v->vni, "port", (json_int_t)v->port, "local",
	    ip_addr_str(&v->local, a, sizeof(a)), "mtu", json_mtu(v->mtu), "remotes", remotes);

	if (o && v->standby)
		json_object_set_new(o, "standby",
				    json_pack("{s:s, s:I, s:s, s:s}", "name", v->other_vxlan,
					      "port", (json_int_t)v->other_port, "local",
					      ip_addr_str(&v->other_local, a, sizeof(a)), "role",
					      "mute"));
	return o;
}

static json_t *render_json(const struct node_state *s)
{
	const struct cluster *c = s->cluster;
	const struct desired_fabric *f = &s->fabric;
	char a[IP_ADDR_STRLEN + 8], ep[FABRICD_HOST_MAX + 16], key[WGKEY_B64_LEN];
	json_t *peers = json_array(), *zones = json_array();

	for (size_t i = 0; i < f->n_peers; i++) {
		const struct desired_peer *p = &f->peers[i];
		bool v6 = p->endpoint_addr.family == AF_INET6;
		char ip[IP_ADDR_STRLEN];

		wgkey_to_base64(key, p->public_key);
		snprintf(ep, sizeof(ep), "%s%s%s:%u", v6 ? "[" : "", p->endpoint_host,
			 v6 ? "]" : "", p->endpoint_port);
		json_t *ips = json_array();

		for (size_t k = 0; k < p->n_allowed_ips; k++) {
			snprintf(a, sizeof(a), "%s/%u",
				 ip_addr_str(&p->allowed_ips[k].addr, ip, sizeof(ip)),
				 p->allowed_ips[k].len);
			json_array_append_new(ips, json_string(a));
		}
		json_array_append_new(peers, json_pack("{s:s, s:s, s:s, s:o, s:I}", "node",
						       c->nodes[p->node].name, "public_key", key,
						       "endpoint", ep, "allowed_ips", ips,
						       "keepalive", (json_int_t)p->keepalive));
	}
	for (size_t zi = 0; zi < s->n_zones; zi++) {
		const struct desired_zone *dz = &s->zones[zi];
		const struct zone *z = &c->zones[dz->zone];
		json_t *vnets = json_array();

		for (size_t vi = 0; vi < s->n_vnets; vi++) {
			if (s->vnets[vi].zone == dz->zone)
				json_array_append_new(vnets, render_json_vnet(&s->vnets[vi]));
		}
		json_array_append_new(zones, json_pack("{s:s, s:s, s:s, s:o, s:o}", "name", z->name,
						       "transport", transport_name(z->transport),
						       "mtu_policy", mtu_policy_name(z->mtu_policy),
						       "mtu", json_mtu(dz->mtu), "vnets", vnets));
	}
	{
		char addr[IP_ADDR_STRLEN], prefix[IP_ADDR_STRLEN + 8];

		snprintf(prefix, sizeof(prefix), "%s/%u",
			 ip_addr_str(&f->address.addr, addr, sizeof(addr)), f->address.len);
		return json_pack(
		    "{s:s, s:s, s:o, s:s, s:{s:s, s:s, s:I, s:o, s:o}, s:o}", "cluster", c->name,
		    "node", c->nodes[s->self].name, "underlay_mtu",
		    json_mtu(s->mtu_known ? s->mtu.underlay : 0), "underlay_mtu_source",
		    (c->fabric.flags & FABRIC_HAS_UNDERLAY_MTU) ? "definition" : "kernel", "fabric",
		    "ifname", f->ifname, "address", prefix, "listen_port",
		    (json_int_t)f->listen_port, "mtu", json_mtu(f->mtu), "peers", peers, "zones",
		    zones);
	}
}

/* The node's part of frr.conf, for EVPN zones (what apply hands to frr-reload.py). */
static void render_frr(const struct node_state *s)
{
	char *block = NULL;

	if (frr_render(s->cluster, s->self, s->owner, &block) == 0 && block)
		printf("frr.conf (fabricd's part, control plane evpn):\n%s", block);
	free(block);
}

int cmd_render(const struct options *o)
{
	struct cluster *c = NULL;
	struct node_state s;
	struct diag diag;
	size_t self;
	int ret = 1;

	diag_init(&diag);
	if (session_load_cluster(o, &c) < 0 || session_find_self(o, c, &self) < 0)
		goto out;
	if (desired_build(c, self,
			  (c->fabric.flags & FABRIC_HAS_UNDERLAY_MTU) ? c->fabric.underlay_mtu : 0,
			  &s, &diag) < 0) {
		diag_print(&diag, stderr);
		goto out;
	}
	diag_print(&diag, stderr);
	if (o->json) {
		json_t *j = render_json(&s);

		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(j);
	} else {
		render_text(&s);
		render_frr(&s);
	}
	desired_free(&s);
	ret = 0;
out:
	diag_free(&diag);
	cluster_free(c);
	return ret;
}
