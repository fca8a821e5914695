// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/pve_import_zones.c - Proxmox import, part two: VXLAN zones and
 * their vnets become fabricd zones; EVPN zones, vlan-aware vnets and peers
 * outside the cluster are reported; subnets and controllers are noted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "definition/mtu.h"
#include "definition/pve_import_priv.h"

#define PROXMOX_DEFAULT_MTU 1450 /* what Proxmox gives a VXLAN zone without "mtu" */
#define ASSUMED_UNDERLAY    1500

/* Keys a VXLAN zone may have that fabricd reads or knowingly leaves to Proxmox. */
static const char *const zone_keys[] = {"peers",      "fabric", "nodes",     "mtu",
					"vxlan-port", "ipam",	"dns",	     "reversedns",
					"dnszone",    "digest", "vrf-vxlan", NULL};

static bool known(const char *const *keys, const char *key)
{
	for (size_t i = 0; keys[i]; i++)
		if (!strcmp(keys[i], key))
			return true;
	return false;
}

/* The node a peer address belongs to (corosync links, WireGuard endpoint), or -1. */
static int peer_node(const struct pve_import *imp, const struct ip_addr *a)
{
	for (size_t i = 0; i < imp->n_nodes; i++) {
		const struct imp_node *n = &imp->nodes[i];

		if (ip_addr_equal(&n->underlay, a) || ip_addr_equal(&n->endpoint_ip, a))
			return (int)i;
		for (size_t l = 0; l < n->n_links; l++)
			if (ip_addr_equal(&n->links[l], a))
				return (int)i;
	}
	return -1;
}

/* The corosync node with the literal address a, or NULL (only not imported ones are asked). */
static const struct corosync_node *corosync_node_at(const struct pve_import *imp,
						    const struct ip_addr *a)
{
	const struct corosync_conf *cc = imp->in->corosync;
	struct ip_addr b;

	for (size_t i = 0; cc && i < cc->n_nodes; i++)
		for (int l = 0; l < COROSYNC_LINKS; l++)
			if (cc->nodes[i].addr[l] && ip_addr_parse(cc->nodes[i].addr[l], &b) == 0 &&
			    ip_addr_equal(&b, a))
				return &cc->nodes[i];
	return NULL;
}

/*
 * A peer that is a corosync node not imported (said above, at the node):
 * the zone goes on without it, named here (with --partial it is written so;
 * following, the others carry it meanwhile). false: the peer is no node.
 */
static bool peer_of_node_not_imported(struct pve_import *imp, const char *where, const char *peer,
				      const struct ip_addr *a, int idx)
{
	const char *cn_file = imp->in->corosync_name ? imp->in->corosync_name : "corosync.conf";
	const struct corosync_node *cn = idx < 0 ? corosync_node_at(imp, a) : NULL;
	char name[FABRICD_NAME_MAX + 1];

	if (idx >= 0)
		diag_warn(imp->d, where,
			  "peer %s is node %s, which was not imported (above, at \"%s\"); the "
			  "zone leaves it out: fix the node%s",
			  peer, imp->nodes[idx].name, imp->nodes[idx].name, imp_again(imp));
	else if (cn)
		diag_warn(imp->d, where,
			  "peer %s is node %s of %s, which was not imported (above, at %s:%u: its "
			  "name %s); the zone leaves it out: rename the node%s",
			  peer, cn->name, cn_file, cn_file, cn->line,
			  imp_name(name, sizeof(name), cn->name)
			      ? "is another node's once lowercased"
			      : "is not a fabricd node name",
			  imp_again(imp));
	return idx >= 0 || cn;
}

static bool imported(const struct pve_import *imp, const char *pve_name)
{
	char name[FABRICD_NAME_MAX + 1];
	int idx = imp_name(name, sizeof(name), pve_name) ? imp_find_node(imp, name) : -1;

	return idx >= 0 && imp->nodes[idx].usable;
}

/* Into buf: corosync nodes with a host name for an address (the peer may be one), or "". */
static void host_name_hint(const struct pve_import *imp, char *buf, size_t len)
{
	const struct corosync_conf *cc = imp->in->corosync;
	struct ip_addr b;
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; cc && i < cc->n_nodes; i++)
		for (int l = 0; l < COROSYNC_LINKS && used < len; l++)
			if (cc->nodes[i].addr[l] && ip_addr_parse(cc->nodes[i].addr[l], &b) < 0) {
				used += (size_t)snprintf(
				    buf + used, len - used, "%s node %s%s has ring%d_addr \"%s\"",
				    used ? "," : "; in corosync.conf,", cc->nodes[i].name,
				    imported(imp, cc->nodes[i].name) ? ""
								     : " (not imported, above)",
				    l, cc->nodes[i].addr[l]);
				break;
			}
	if (used && used < len)
		snprintf(buf + used, len - used,
			 ", a host name fabricd does not resolve: if this peer is that node, write "
			 "its address there instead");
}

/*
 * Peers that are all the nodes' WireGuard addresses: Proxmox carried the zone
 * inside the fabric, so fabricd makes it secure. 1 = a mix (reported).
 */
static int transport_from_peers(struct pve_import *imp, const char *where, struct imp_zone *z,
				int n_wg, int n_underlay)
{
	z->transport = n_wg && !n_underlay ? TRANSPORT_SECURE : TRANSPORT_PLAIN;
	if (!n_wg)
		return 0;
	if (n_underlay) {
		diag_add(imp->d, where,
			 "%d peer(s) are nodes' addresses in WireGuard fabric \"%s\" and %d their "
			 "underlay addresses: Proxmox sends part of the zone inside WireGuard and "
			 "part outside; give the zone \"fabric %s\" instead of peers (secure), or "
			 "only underlay addresses (plain)",
			 n_wg, imp->fabric->id, n_underlay, imp->fabric->id);
		return 1;
	}
	diag_warn(imp->d, where,
		  "the peers are the nodes' addresses in WireGuard fabric \"%s\": Proxmox sends "
		  "the zone inside WireGuard, so fabricd carries it secure (\"fabric %s\" "
		  "instead of peers in Proxmox says the same)",
		  imp->fabric->id, imp->fabric->id);
	return 0;
}

static int members_from_peers(struct pve_import *imp, const struct pve_section *s,
			      struct imp_zone *z, const char *peers)
{
	const struct pve_file *zf = imp->in->zones;
	char where[PVE_WHERE_LEN], ua[IP_ADDR_STRLEN], hint[512];
	char **items;
	int n = pve_split_list(peers, &items), n_wg = 0, n_underlay = 0;
	bool ok = true;

	if (n < 0)
		return n;
	pve_where(where, zf, s, "peers");
	for (int k = 0; k < n; k++) {
		struct ip_addr a;
		bool parsed = ip_addr_parse(items[k], &a) == 0;
		/* a WireGuard address first: a corosync link may run inside the fabric too */
		int wg = parsed ? imp_wg_node(imp, &a) : -1;
		int idx = wg >= 0 || !parsed ? wg : peer_node(imp, &a);

		if (parsed && (idx < 0 || !imp->nodes[idx].usable) &&
		    peer_of_node_not_imported(imp, where, items[k], &a, idx))
			continue;
		if (idx < 0) {
			host_name_hint(imp, hint, sizeof(hint));
			diag_add(imp->d, where,
				 "\"%s\" is not an address of a cluster node (corosync.conf, "
				 "WireGuard endpoint or fabric address); fabricd builds VXLAN only "
				 "between "
				 "its nodes%s",
				 items[k], hint);
			ok = false;
			continue;
		}
		z->member[idx] = true;
		if (wg >= 0)
			n_wg++;
		else
			n_underlay++;
		if (wg < 0 && !ip_addr_equal(&imp->nodes[idx].underlay, &a))
			diag_warn(imp->d, where,
				  "%s is node %s; fabricd carries the zone over its underlay %s",
				  items[k], imp->nodes[idx].name,
				  ip_addr_str(&imp->nodes[idx].underlay, ua, sizeof(ua)));
	}
	pve_strv_free(items);
	if (!ok)
		return 1;
	return transport_from_peers(imp, where, z, n_wg, n_underlay);
}

/* A zone's "nodes" item that names no imported node: a corosync node not imported, or none. */
static void nodes_item_unknown(struct pve_import *imp, const char *where, const char *item)
{
	const struct corosync_conf *cc = imp->in->corosync;
	const char *cn_file = imp->in->corosync_name ? imp->in->corosync_name : "corosync.conf";

	for (size_t i = 0; cc && i < cc->n_nodes; i++)
		if (cc->nodes[i].name && !strcmp(cc->nodes[i].name, item)) {
			diag_warn(imp->d, where,
				  "\"%s\" is node %s of %s, which was not imported (above, at "
				  "%s:%u); the zone leaves it out: fix the node%s",
				  item, item, cn_file, cn_file, cc->nodes[i].line, imp_again(imp));
			return;
		}
	diag_warn(imp->d, where, "\"%s\" is not a cluster node; ignored, as Proxmox does", item);
}

/*
 * A node Proxmox builds the zone's vnets on (in = its "nodes", or every node)
 * whose address the peers lack: Proxmox gives it the bridges, fabricd leaves
 * it out of the zone, and its guests there would lose the vnet. Said.
 */
static void warn_not_in_peers(struct pve_import *imp, const struct pve_section *s,
			      const struct imp_zone *z, const bool *in)
{
	char where[PVE_WHERE_LEN];

	for (size_t i = 0; i < imp->n_nodes; i++)
		if (in[i] && !z->member[i] && imp->nodes[i].usable)
			diag_warn(imp->d, pve_where(where, imp->in->zones, s, "peers"),
				  "node %s is in the zone (Proxmox builds its vnets there) but "
				  "none of its addresses is a peer: fabricd leaves it out of the "
				  "zone, and guests on %s in these vnets reach no other node; add "
				  "its address to peers in Proxmox, or take it out of the zone's "
				  "nodes",
				  imp->nodes[i].name, imp->nodes[i].name);
}

/* "nodes hv1,hv2" restricts the zone; absent = every node. from_peers: members from peers. */
static int restrict_nodes(struct pve_import *imp, const struct pve_section *s, struct imp_zone *z,
			  bool from_peers)
{
	const char *list = imp_get(imp, imp->in->zones, s, "nodes");
	char where[PVE_WHERE_LEN], name[FABRICD_NAME_MAX + 1];
	bool *in = calloc(imp->n_nodes + 1, sizeof(*in));
	char **items = NULL;
	int n = 0;

	if (!in)
		return -ENOMEM;
	if (list && (n = pve_split_list(list, &items)) < 0) {
		free(in);
		return n;
	}
	for (size_t i = 0; !list && i < imp->n_nodes; i++)
		in[i] = true;
	for (int k = 0; k < n; k++) {
		int idx = imp_name(name, sizeof(name), items[k]) ? imp_find_node(imp, name) : -1;

		if (idx < 0)
			nodes_item_unknown(imp, pve_where(where, imp->in->zones, s, "nodes"),
					   items[k]);
		else
			in[idx] = true;
	}
	if (from_peers)
		warn_not_in_peers(imp, s, z, in);
	for (size_t i = 0; i < imp->n_nodes; i++)
		z->member[i] = z->member[i] && in[i];
	free(in);
	if (items)
		pve_strv_free(items);
	return 0;
}

/* Secure over the WireGuard fabric; plain over OpenFabric/OSPF/BGP fabrics. 1 = unmappable. */
static int transport_from_fabric(struct pve_import *imp, const struct pve_section *s,
				 struct imp_zone *z, const char *fabric)
{
	const struct pve_file *ff = imp->in->fabrics;
	char where[PVE_WHERE_LEN];

	pve_where(where, imp->in->zones, s, "fabric");
	if (imp->fabric && !strcmp(imp->fabric->id, fabric)) {
		z->transport = TRANSPORT_SECURE;
		for (size_t i = 0; i < imp->n_nodes; i++)
			z->member[i] = imp->nodes[i].in_fabric;
		return 0;
	}
	for (size_t i = 0; i < ff->n; i++) {
		const char *type = ff->sections[i].type;
		size_t tl = strlen(type);

		if (strcmp(ff->sections[i].id, fabric) || tl < 7 ||
		    strcmp(type + tl - 7, "_fabric"))
			continue;
		if (!strcmp(type, "wireguard_fabric"))
			return 1; /* a second WireGuard fabric: reported by choose_fabric */
		diag_warn(imp->d, where,
			  "zone runs over %.*s fabric \"%s\"; fabricd carries it plain between the "
			  "nodes' underlay addresses instead of the fabric's router IPs",
			  (int)(tl - 7), type, fabric);
		z->transport = TRANSPORT_PLAIN;
		for (size_t n = 0; n < imp->n_nodes; n++)
			z->member[n] = true;
		return 0;
	}
	/* the running configuration's fabrics are those of the last SDN Apply */
	if (!strncmp(ff->name, ".running-config", strlen(".running-config")))
		diag_add(imp->d, where,
			 "fabric \"%s\" is not in the applied configuration (%s): apply the SDN "
			 "configuration in Proxmox, or import the pending one (--pending)",
			 fabric, ff->name);
	else
		diag_add(imp->d, where, "fabric \"%s\" is not in %s; add it there in Proxmox",
			 fabric, ff->name);
	return 1;
}

/*
 * Proxmox's mtu carries over only where it does not exceed fabricd's. A
 * node that measures its underlay (opts->measured) keeps it as it is: the
 * node's build compares it with what its underlay carries.
 */
static void zone_mtu(struct pve_import *imp, const struct pve_section *s, struct imp_zone *z,
		     unsigned int pve_default)
{
	const char *text = imp_get(imp, imp->in->zones, s, "mtu");
	unsigned int underlay =
	    imp->opts->underlay_mtu ? imp->opts->underlay_mtu : ASSUMED_UNDERLAY;
	struct zone model = {.transport = z->transport, .mtu_policy = MTU_POLICY_STABLE};
	char where[PVE_WHERE_LEN], assumed[64] = "";
	unsigned int computed, pve;
	struct mtu_plan plan;
	int family = 0;
	char *end;

	pve_where(where, imp->in->zones, s, text ? "mtu" : NULL);
	pve = text ? (unsigned int)strtoul(text, &end, 10) : pve_default;
	if (text && (*end || pve < MTU_MIN || pve > MTU_MAX)) {
		diag_warn(imp->d, where,
			  "\"%s\" is not an MTU; dropped: the zone gets what the underlay carries",
			  text);
		return;
	}
	z->guest_mtu = pve;
	if (imp->opts->measured) {
		if (text)
			z->mtu = pve;
		return;
	}
	for (size_t i = 0; i < imp->n_nodes && !family; i++)
		family = imp->nodes[i].usable ? imp->nodes[i].underlay.family : 0;
	if (!family || mtu_plan_compute(underlay, family, family, imp->prefix.addr.family, &plan))
		return;
	mtu_zone(&plan, &model, &computed);
	if (!imp->opts->underlay_mtu)
		snprintf(assumed, sizeof(assumed), " (assuming a %u underlay; see --underlay-mtu)",
			 ASSUMED_UNDERLAY);
	if (pve > computed) {
		diag_warn(imp->d, where,
			  "guests had MTU %u under Proxmox%s; fabricd gives the zone %u%s: lower "
			  "the guests' MTU or raise the underlay's",
			  pve, text ? "" : " (its default)", computed, assumed);
	} else if (text) {
		z->mtu = pve;
		if (pve < computed)
			diag_warn(imp->d, where, "%u kept: it lowers fabricd's %u%s", pve, computed,
				  assumed);
	}
}

static void note_unused_keys(struct pve_import *imp, const struct pve_section *s)
{
	char where[PVE_WHERE_LEN];

	for (size_t i = 0; i < s->n_kv; i++) {
		const char *k = s->kv[i].key;

		pve_where(where, imp->in->zones, s, k);
		if (!known(zone_keys, k))
			diag_warn(imp->d, where, "unknown key; dropped, as Proxmox does");
		else if (!strcmp(k, "dns") || !strcmp(k, "reversedns") || !strcmp(k, "dnszone") ||
			 (!strcmp(k, "ipam") && s->kv[i].value && strcmp(s->kv[i].value, "pve")))
			diag_warn(imp->d, where, "not imported: Proxmox keeps doing IPAM and DNS");
		else if (!strcmp(k, "vxlan-port") && s->kv[i].value &&
			 strcmp(s->kv[i].value, "4789"))
			diag_warn(imp->d, where,
				  "%s not imported: fabricd's plain VXLAN uses port 4789 (secure "
				  "uses fabric.secure_port)",
				  s->kv[i].value);
	}
}

static struct imp_zone *new_zone(struct pve_import *imp, const struct pve_section *s)
{
	struct imp_zone *grown = realloc(imp->zones, (imp->n_zones + 1) * sizeof(*grown));
	struct imp_zone *z;

	if (!grown)
		return NULL;
	imp->zones = grown;
	z = &grown[imp->n_zones];
	memset(z, 0, sizeof(*z));
	z->sec = s;
	z->member = calloc(imp->n_nodes + 1, sizeof(*z->member));
	z->vnets = json_array();
	if (!z->member || !z->vnets) {
		free(z->member);
		json_decref(z->vnets);
		return NULL;
	}
	imp->n_zones++;
	return z;
}

static void drop_last_zone(struct pve_import *imp)
{
	struct imp_zone *z = &imp->zones[--imp->n_zones];

	free(z->member);
	json_decref(z->vnets);
}

/* s's fabricd name into name (FABRICD_NAME_MAX + 1); false, said at where, when it has none. */
static bool zone_name(struct pve_import *imp, const char *where, const struct pve_section *s,
		      char *name)
{
	if (!imp_name(name, FABRICD_NAME_MAX + 1, s->id)) {
		diag_add(imp->d, where, "zone id is not a fabricd zone name; rename the zone");
		return false;
	}
	for (size_t i = 0; i < imp->n_zones; i++) {
		if (!strcmp(imp->zones[i].name, name)) {
			diag_add(imp->d, where,
				 "zones \"%s\" and \"%s\" are both \"%s\" in fabricd (names are "
				 "lowercase); rename one",
				 imp->zones[i].sec->id, s->id, name);
			return false;
		}
	}
	return true;
}

static int vxlan_zone(struct pve_import *imp, const struct pve_section *s)
{
	const struct pve_file *zf = imp->in->zones;
	const char *peers = imp_get(imp, zf, s, "peers"), *fabric = imp_get(imp, zf, s, "fabric");
	char where[PVE_WHERE_LEN], name[FABRICD_NAME_MAX + 1];
	struct imp_zone *z;
	int ret;

	pve_where(where, zf, s, NULL);
	if (!zone_name(imp, where, s, name))
		return 0;
	if (!(z = new_zone(imp, s)))
		return -ENOMEM;
	memcpy(z->name, name, sizeof(name));
	if (peers && fabric)
		diag_warn(imp->d, pve_where(where, zf, s, "fabric"),
			  "both peers and fabric are set (the API forbids it); peers wins, as in "
			  "Proxmox");
	if (peers) {
		ret = members_from_peers(imp, s, z, peers);
	} else if (fabric) {
		ret = transport_from_fabric(imp, s, z, fabric);
	} else {
		diag_add(imp->d, where, "VXLAN zone has neither peers nor fabric; give one");
		ret = 1;
	}
	if (ret == 0)
		ret = restrict_nodes(imp, s, z, peers != NULL);
	if (ret != 0) {
		drop_last_zone(imp);
		return ret < 0 ? ret : 0;
	}
	zone_mtu(imp, s, z, PROXMOX_DEFAULT_MTU);
	note_unused_keys(imp, s);
	z->all_nodes = true;
	for (size_t i = 0; i < imp->n_nodes; i++)
		z->all_nodes = z->all_nodes && (z->member[i] || !imp->nodes[i].usable);
	return 0;
}

/* --simple: a zone following Proxmox's Simple zone s, on every node (pve_follow.h). */
static int simple_zone(struct pve_import *imp, const struct pve_section *s)
{
	char where[PVE_WHERE_LEN], name[FABRICD_NAME_MAX + 1];
	struct imp_zone *z;

	pve_where(where, imp->in->zones, s, NULL);
	if (!zone_name(imp, where, s, name))
		return 0;
	if (!(z = new_zone(imp, s)))
		return -ENOMEM;
	memcpy(z->name, name, sizeof(name));
	z->transport = strcmp(imp->opts->simple, "secure") ? TRANSPORT_PLAIN : TRANSPORT_SECURE;
	z->follow = true;
	z->all_nodes = true; /* Proxmox's "nodes" is followed at run time */
	for (size_t i = 0; i < imp->n_nodes; i++)
		z->member[i] = true;
	/* Proxmox gives a Simple zone's bridges no MTU of their own: 1500 */
	zone_mtu(imp, s, z, 1500);
	return 0;
}

static int read_zones(struct pve_import *imp)
{
	const struct pve_file *zf = imp->in->zones;
	char where[PVE_WHERE_LEN];
	int ret = 0;

	for (size_t i = 0; i < zf->n && ret == 0; i++) {
		const struct pve_section *s = &zf->sections[i];

		pve_where(where, zf, s, NULL);
		if (!strcasecmp(s->type, "vxlan"))
			ret = vxlan_zone(imp, s);
		else if (!strcasecmp(s->type, "evpn"))
			diag_add(imp->d, where,
				 "EVPN zone not imported: its VRF, gateways and exit nodes (layer "
				 "3) have no counterpart in fabricd, which carries layer 2 only; "
				 "keep it in Proxmox, or move its vnets to a VXLAN zone (fabricd's "
				 "own EVPN for them: fabric.control_plane \"evpn\", README "
				 "\"EVPN control plane\")");
		else if (!strcmp(s->type, "simple") && imp->opts->simple)
			ret = simple_zone(imp, s);
		else if (!strcasecmp(s->type, "simple") || !strcasecmp(s->type, "vlan") ||
			 !strcasecmp(s->type, "qinq"))
			diag_warn(
			    imp->d, where,
			    "not a VXLAN zone: Proxmox keeps building it (see README, Proxmox "
			    "VE; --simple plain|secure carries Simple zones)");
		else
			diag_warn(imp->d, where, "unknown zone type; dropped, as Proxmox does");
	}
	return ret;
}

static const char *const vnet_keys[] = {"zone",		 "tag",	   "alias", "vlanaware",
					"isolate-ports", "digest", NULL};

/* isolate-ports set true (its value is checked as vlanaware's is) */
static bool isolated_ports(struct pve_import *imp, const struct pve_file *vf,
			   const struct pve_section *s)
{
	const char *v = imp_get(imp, vf, s, "isolate-ports");
	bool on = false;

	return v && pve_parse_bool(vf->dialect, v, &on) == 0 && on;
}

/* 1 = the vnet does not map (reported) */
static int vnet_checks(struct pve_import *imp, const struct pve_section *s, uint32_t *vni)
{
	const struct pve_file *vf = imp->in->vnets;
	const char *tag = imp_get(imp, vf, s, "tag"), *va = imp_get(imp, vf, s, "vlanaware");
	char where[PVE_WHERE_LEN];
	unsigned long v;
	bool aware = false;
	char *end;

	if (va && pve_parse_bool(vf->dialect, va, &aware) < 0) {
		diag_warn(imp->d, pve_where(where, vf, s, "vlanaware"),
			  "\"%s\" is not 1 or 0; dropped, as Proxmox does", va);
		aware = false;
	}
	if (aware) {
		diag_add(imp->d, pve_where(where, vf, s, "vlanaware"),
			 "vlan-aware vnets are not imported: fabricd's bridges carry one "
			 "untagged segment; make it a vnet per VLAN");
		return 1;
	}
	if (isolated_ports(imp, vf, s)) {
		diag_add(imp->d, pve_where(where, vf, s, "isolate-ports"),
			 "not imported: Proxmox isolates the guests' ports, and fabricd's VXLAN "
			 "ports are isolated too (a vnet's plain and secure devices must never "
			 "forward to each other), so its guests would reach no other node; clear "
			 "isolate-ports on the vnet in Proxmox first");
		return 1;
	}
	v = tag ? strtoul(tag, &end, 10) : 0;
	if (!tag || *end || v < 1 || v > 16777215) {
		diag_add(imp->d, pve_where(where, vf, s, "tag"),
			 "a VXLAN vnet needs a tag (VNI) 1..16777215");
		return 1;
	}
	for (size_t i = 0; i < imp->n_vnis; i++) {
		if (imp->vnis[i] == v) {
			diag_add(imp->d, pve_where(where, vf, s, "tag"),
				 "VNI %lu is also vnet %s's; VNIs are unique in the cluster", v,
				 imp->vnet_names[i]);
			return 1;
		}
	}
	for (size_t i = 0; i < s->n_kv; i++) {
		const char *k = s->kv[i].key;

		pve_where(where, vf, s, k);
		if (!known(vnet_keys, k))
			diag_warn(imp->d, where, "unknown key; dropped, as Proxmox does");
		else if (!strcmp(k, "alias"))
			diag_warn(imp->d, where, "not imported: fabricd has no counterpart");
	}
	*vni = (uint32_t)v;
	return 0;
}

static int remember_vnet(struct pve_import *imp, const char *name, uint32_t vni)
{
	uint32_t *vnis = realloc(imp->vnis, (imp->n_vnis + 1) * sizeof(*vnis));
	char **names;

	if (!vnis)
		return -ENOMEM;
	imp->vnis = vnis;
	names = realloc(imp->vnet_names, (imp->n_vnis + 1) * sizeof(*names));
	if (!names)
		return -ENOMEM;
	imp->vnet_names = names;
	if (!(names[imp->n_vnis] = strdup(name)))
		return -ENOMEM;
	vnis[imp->n_vnis++] = vni;
	return 0;
}

static struct imp_zone *zone_of(struct pve_import *imp, const char *pve_id)
{
	for (size_t i = 0; i < imp->n_zones; i++)
		if (!strcmp(imp->zones[i].sec->id, pve_id))
			return &imp->zones[i];
	return NULL;
}

/* Whether Proxmox's zones have one of that id (imported or not). */
static bool zone_defined(const struct pve_import *imp, const char *pve_id)
{
	for (size_t i = 0; i < imp->in->zones->n; i++)
		if (!strcmp(imp->in->zones->sections[i].id, pve_id))
			return true;
	return false;
}

/* A vnet of a followed Simple zone: what check and run will warn of is said now. */
static void follow_vnet(struct pve_import *imp, const struct imp_zone *z,
			const struct pve_section *s)
{
	const struct pve_file *vf = imp->in->vnets;
	const char *va = imp_get(imp, vf, s, "vlanaware");
	char where[PVE_WHERE_LEN];
	bool aware = false;

	if (va && pve_parse_bool(vf->dialect, va, &aware) == 0 && aware)
		pve_warn_vlanaware(imp->d, pve_where(where, vf, s, NULL), z->name);
}

static int read_vnet(struct pve_import *imp, const struct pve_section *s)
{
	const struct pve_file *vf = imp->in->vnets;
	const char *zone = imp_get(imp, vf, s, "zone");
	char where[PVE_WHERE_LEN], name[FABRICD_IFNAME_MAX + 1];
	struct imp_zone *z = zone ? zone_of(imp, zone) : NULL;
	uint32_t vni;

	pve_where(where, vf, s, NULL);
	if (strcmp(s->type, "vnet")) {
		diag_warn(imp->d, where, "unknown section type; dropped, as Proxmox does");
		return 0;
	}
	if (!zone) {
		diag_warn(imp->d, where, "no zone; dropped, as Proxmox does");
		return 0;
	}
	if (!z && !zone_defined(imp, zone)) {
		diag_warn(imp->d, where,
			  "its zone \"%s\" is not in %s; dropped, as Proxmox does (give the vnet "
			  "an existing zone)",
			  zone, imp->in->zones->name);
		return 0;
	}
	if (!z) {
		diag_warn(imp->d, where,
			  "not imported: its zone \"%s\" is not imported either (see its message)",
			  zone);
		return 0;
	}
	if (z->follow) { /* read from .running-config at run time, with its VNI */
		follow_vnet(imp, z, s);
		return 0;
	}
	/* the vnet is its bridge's name, which Linux keeps as written: no lowercasing here */
	for (const char *p = s->id; *p; p++) {
		if (*p >= 'A' && *p <= 'Z') {
			diag_add(
			    imp->d, where,
			    "vnet id has upper-case letters; fabricd names the bridge after the "
			    "vnet in lower case, so Proxmox's bridge \"%s\" and its guests' ports "
			    "would not be the fabric's: rename the vnet in Proxmox (lower case)",
			    s->id);
			return 0;
		}
	}
	if (!imp_name(name, sizeof(name), s->id)) {
		diag_add(imp->d, where,
			 "vnet id is not a fabricd vnet name (letters, digits, '-', at most 15); "
			 "rename the vnet");
		return 0;
	}
	if (name_reserved(name)) {
		diag_add(imp->d, where,
			 "vnet id is the name of a device fabricd creates itself (wgfab0, "
			 "vx<VNI>, vs<VNI>): rename the vnet in Proxmox");
		return 0;
	}
	if (name_kernel_refuses(name)) {
		diag_add(imp->d, where,
			 "vnet id cannot be an interface name (the kernel refuses \"all\" and "
			 "\"default\", and every network namespace has \"lo\"): rename the vnet "
			 "in Proxmox");
		return 0;
	}
	if (vnet_checks(imp, s, &vni))
		return 0;
	if (remember_vnet(imp, name, vni) < 0 ||
	    json_array_append_new(
		z->vnets, json_pack("{s:s, s:I}", "name", name, "vni", (json_int_t)vni)) < 0)
		return -ENOMEM;
	return 0;
}

static void note_others(struct pve_import *imp)
{
	const struct pve_file *sf = imp->in->subnets, *cf = imp->in->controllers;
	char where[PVE_WHERE_LEN];

	for (size_t i = 0; i < sf->n; i++)
		diag_warn(imp->d, pve_where(where, sf, &sf->sections[i], NULL),
			  "not imported: fabricd builds layer 2 only; Proxmox keeps the gateway, "
			  "SNAT and DHCP of Simple zones, a pure VXLAN zone ignores subnets");
	for (size_t i = 0; i < cf->n; i++)
		diag_warn(
		    imp->d, pve_where(where, cf, &cf->sections[i], NULL),
		    "controller not imported: fabricd runs its own BGP EVPN where the "
		    "definition asks for it (fabric.control_plane \"evpn\", fabric.evpn.asn), "
		    "not taken from Proxmox's controller");
}

int imp_zones(struct pve_import *imp)
{
	const struct pve_file *vf = imp->in->vnets;
	int ret = read_zones(imp);

	for (size_t i = 0; i < vf->n && ret == 0; i++)
		ret = read_vnet(imp, &vf->sections[i]);
	if (ret == 0)
		note_others(imp);
	return ret;
}

void imp_zones_free(struct pve_import *imp)
{
	for (size_t i = 0; i < imp->n_zones; i++) {
		free(imp->zones[i].member);
		json_decref(imp->zones[i].vnets);
	}
	free(imp->zones);
	for (size_t i = 0; i < imp->n_vnis; i++)
		free(imp->vnet_names[i]);
	free(imp->vnet_names);
	free(imp->vnis);
}
