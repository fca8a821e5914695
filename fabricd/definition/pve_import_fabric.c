// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/pve_import_fabric.c - Proxmox import, the WireGuard fabric: which
 * wireguard_fabric is imported, its prefix and keepalive, and each
 * wireguard_node's interface (port, key), endpoint, fabric address and peers.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "definition/config_priv.h"
#include "definition/pve_import_priv.h"
#include "definition/wgkey.h"

static bool is_fabric_node(const struct pve_section *s, const char *proto, const char *fabric)
{
	size_t n = strlen(fabric);
	char type[32];

	snprintf(type, sizeof(type), "%s_node", proto);
	return !strcmp(s->type, type) && !strncmp(s->id, fabric, n) && s->id[n] == '_';
}

/* The wireguard_fabric the VXLAN zones use, or the only one; NULL if none. */
const struct pve_section *imp_choose_fabric(struct pve_import *imp)
{
	const struct pve_file *zf = imp->in->zones, *ff = imp->in->fabrics;
	const struct pve_section *chosen = NULL, *only = NULL;
	size_t n_wg = 0;
	char where[PVE_WHERE_LEN];

	for (size_t i = 0; i < ff->n; i++) {
		if (!strcmp(ff->sections[i].type, "wireguard_fabric")) {
			only = &ff->sections[i];
			n_wg++;
		}
	}
	for (size_t i = 0; i < zf->n; i++) {
		const struct pve_section *z = &zf->sections[i];
		const char *fab =
		    strcasecmp(z->type, "vxlan") ? NULL : imp_get(imp, zf, z, "fabric");

		for (size_t j = 0; fab && j < ff->n; j++) {
			const struct pve_section *f = &ff->sections[j];

			if (strcmp(f->type, "wireguard_fabric") || strcmp(f->id, fab) ||
			    pve_section_get(z, "peers", NULL))
				continue;
			if (!chosen) {
				chosen = f;
			} else if (chosen != f) {
				diag_add(
				    imp->d, pve_where(where, zf, z, "fabric"),
				    "zone uses WireGuard fabric \"%s\" while another zone uses "
				    "\"%s\"; fabricd has one fabric: move the zone to \"%s\"",
				    fab, chosen->id, chosen->id);
			}
		}
	}
	if (!chosen && n_wg == 1)
		chosen = only;
	for (size_t i = 0; i < ff->n; i++) {
		if (!strcmp(ff->sections[i].type, "wireguard_fabric") && &ff->sections[i] != chosen)
			diag_warn(imp->d, pve_where(where, ff, &ff->sections[i], NULL),
				  "not imported: fabricd has one WireGuard fabric and uses \"%s\"",
				  chosen ? chosen->id : "?");
	}
	return chosen;
}

static void read_interface(struct pve_import *imp, const struct pve_section *s, struct imp_node *n)
{
	const struct pve_file *ff = imp->in->fabrics;
	const struct pve_kv *kv = pve_section_get(s, "interfaces", NULL);
	char where[PVE_WHERE_LEN], err[160];
	struct pve_props p;
	const char *name, *port, *key, *ip;
	char *end;
	unsigned long v;

	pve_where(where, ff, s, "interfaces");
	if (!kv || !kv->value) {
		diag_add(imp->d, where, "missing: the node has no WireGuard interface; add one");
		n->usable = false;
		return;
	}
	if (pve_props_parse(kv->value, &p, err, sizeof(err)) < 0) {
		diag_add(imp->d, where, "\"%s\": %s", kv->value, err);
		n->usable = false;
		return;
	}
	name = pve_props_get(&p, "name");
	port = pve_props_get(&p, "listen_port");
	key = pve_props_get(&p, "public_key");
	ip = pve_props_get(&p, "ip");
	v = port ? strtoul(port, &end, 10) : 0;
	/* Proxmox's interface names are 1..8 characters (the fabric-id pattern) */
	if (!name || !*name || strlen(name) > 8 || !port || *end || v == 0 || v > 65535) {
		diag_add(imp->d, where, "needs name (1..8 characters) and listen_port 1..65535");
		n->usable = false;
	} else {
		snprintf(n->iface, sizeof(n->iface), "%s", name);
		n->port = (uint16_t)v;
	}
	if (key && wgkey_from_base64(key, n->pub) == 0) {
		n->has_key = n->key_from_pve = true;
	} else if (key) {
		diag_add(imp->d, where, "public_key \"%s\" is not a base64 WireGuard key", key);
		n->usable = false;
	}
	if (ip && ip_prefix_parse(ip, &n->iface_net) < 0) {
		/* "10.249.0.3/24": an address with its network, host bits set */
		char addr[IP_ADDR_STRLEN];
		const char *slash = strchr(ip, '/');

		snprintf(addr, sizeof(addr), "%.*s", slash ? (int)(slash - ip) : 0, ip);
		if (!slash || ip_addr_parse(addr, &n->iface_net.addr) < 0)
			diag_warn(imp->d, where, "ip \"%s\" is not an address/length; ignored", ip);
		else
			n->iface_net.len = (uint8_t)strtoul(slash + 1, NULL, 10);
	}
	if (pve_props_get(&p, "ip6"))
		diag_warn(imp->d, where,
			  "ip6 of interface %s is not imported (fabricd gives the "
			  "fabric one address family)",
			  name ? name : "?");
	pve_props_free(&p);
}

static int add_peer(struct imp_node *n, const char *peer)
{
	char **grown = realloc(n->peers, (n->n_peers + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	n->peers = grown;
	grown[n->n_peers] = strdup(peer);
	if (!grown[n->n_peers])
		return -ENOMEM;
	for (char *p = grown[n->n_peers]; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	n->n_peers++;
	return 0;
}

static int read_peers(struct pve_import *imp, const struct pve_section *s, struct imp_node *n)
{
	const struct pve_file *ff = imp->in->fabrics;
	char where[PVE_WHERE_LEN], err[160];
	int ret = 0;

	pve_where(where, ff, s, "peers");
	for (size_t i = 0; i < s->n_kv && ret == 0; i++) {
		struct pve_props p;
		const char *type, *node;

		if (strcmp(s->kv[i].key, "peers") || !s->kv[i].value)
			continue;
		if (pve_props_parse(s->kv[i].value, &p, err, sizeof(err)) < 0) {
			diag_add(imp->d, where, "\"%s\": %s", s->kv[i].value, err);
			continue;
		}
		type = pve_props_get(&p, "type");
		node = pve_props_get(&p, "node");
		if (type && !strcmp(type, "internal") && node)
			ret = add_peer(n, node);
		else if (!type || strcmp(type, "external") || !node)
			diag_add(imp->d, where,
				 "\"%s\" needs type=internal|external and node=", s->kv[i].value);
		if (pve_props_get(&p, "endpoint") || pve_props_get(&p, "allowed_ips") ||
		    pve_props_get(&p, "skip_route_generation"))
			diag_warn(
			    imp->d, where,
			    "peer %s: endpoint, allowed_ips and skip_route_generation are not "
			    "imported (fabricd's peers reach each other's underlay and carry "
			    "only the fabric addresses)",
			    node ? node : "?");
		pve_props_free(&p);
	}
	return ret;
}

static void read_endpoint(struct pve_import *imp, const struct pve_section *s, struct imp_node *n)
{
	const char *ep = imp_get(imp, imp->in->fabrics, s, "endpoint");
	char where[PVE_WHERE_LEN];

	if (!ep)
		return;
	if (ip_addr_parse(ep, &n->endpoint_ip) == 0)
		return;
	if (hostname_valid(ep) && strlen(ep) < sizeof(n->endpoint_host))
		snprintf(n->endpoint_host, sizeof(n->endpoint_host), "%s", ep);
	else
		diag_add(
		    imp->d, pve_where(where, imp->in->fabrics, s, "endpoint"),
		    "\"%s\" is neither an address nor a host name (without port); ignored, the "
		    "node is reached at its corosync address",
		    ep);
}

static void read_fabric_address(struct pve_import *imp, const struct pve_section *s,
				struct imp_node *n)
{
	const struct pve_file *ff = imp->in->fabrics;
	/* the node's address in the prefix's family: ip in ip_prefix, ip6 in ip6_prefix */
	bool v6 = imp->prefix.addr.family == AF_INET6;
	const char *ip = imp_get(imp, ff, s, v6 ? "ip6" : "ip");
	char where[PVE_WHERE_LEN];

	if (!ip || !imp->prefix.addr.family)
		return;
	pve_where(where, ff, s, v6 ? "ip6" : "ip");
	if (ip_addr_parse(ip, &n->fabric_address) < 0 ||
	    !ip_prefix_contains(&imp->prefix, &n->fabric_address) ||
	    ip_addr_unusable(&n->fabric_address)) {
		diag_add(imp->d, where, "\"%s\" is not an address inside the fabric's %s", ip,
			 v6 ? "ip6_prefix" : "ip_prefix");
		memset(&n->fabric_address, 0, sizeof(n->fabric_address));
		n->usable = false;
	}
}

/*
 * Keys Proxmox's fabric sections have (proxmox-ve-config's section config);
 * others are reported: a misspelt persistent_keepalive would otherwise
 * silently turn keepalives off.
 */
static const char *const fabric_keys[] = {"ip_prefix", "ip6_prefix", "persistent_keepalive", NULL};
static const char *const node_keys[] = {"role", "endpoint", "allowed_ips", "interfaces", "peers",
					"ip",	"ip6",	    "public_key",  NULL};

static void note_unknown_keys(struct pve_import *imp, const struct pve_section *s,
			      const char *const *keys)
{
	char where[PVE_WHERE_LEN];

	for (size_t i = 0; i < s->n_kv; i++) {
		size_t k = 0;

		while (keys[k] && strcmp(keys[k], s->kv[i].key))
			k++;
		if (!keys[k])
			diag_warn(imp->d, pve_where(where, imp->in->fabrics, s, s->kv[i].key),
				  "not a key of Proxmox's %s sections; ignored (Proxmox refuses "
				  "unknown keys in fabrics.cfg: check its spelling)",
				  s->type);
	}
}

static int fabric_node(struct pve_import *imp, const struct pve_section *s)
{
	const struct pve_file *ff = imp->in->fabrics;
	const char *host = strchr(s->id, '_') + 1, *role = imp_get(imp, ff, s, "role");
	char where[PVE_WHERE_LEN], name[FABRICD_NAME_MAX + 1];
	struct imp_node *n;
	size_t n_ifaces;
	int idx;

	if (role && !strcmp(role, "external")) {
		diag_add(
		    imp->d, pve_where(where, ff, s, "role"),
		    "external WireGuard node \"%s\" is not imported: fabricd's fabric has only "
		    "cluster nodes; connect it outside fabricd",
		    host);
		return 0;
	}
	idx = imp_name(name, sizeof(name), host) ? imp_find_node(imp, name) : -1;
	if (idx < 0 && (idx = imp_add_node(imp, host, pve_where(where, ff, s, NULL))) < 0)
		return idx == -ENOMEM ? idx : 0;
	n = &imp->nodes[idx];
	if (n->in_fabric) {
		diag_add(imp->d, pve_where(where, ff, s, NULL),
			 "node \"%s\" appears twice in the fabric", host);
		return 0;
	}
	n->in_fabric = true;
	n->fsec = s;
	note_unknown_keys(imp, s, node_keys);
	/* another fabric's interfaces are that fabric's: it is not imported (choose_fabric) */
	pve_section_get(s, "interfaces", &n_ifaces);
	if (n_ifaces > 1)
		diag_add(imp->d, pve_where(where, ff, s, "interfaces"),
			 "node \"%s\" has %zu WireGuard interfaces in fabric %s; fabricd has one "
			 "per node (key and port): keep one in Proxmox",
			 host, n_ifaces, imp->fabric->id);
	read_interface(imp, s, n);
	read_endpoint(imp, s, n);
	read_fabric_address(imp, s, n);
	if (n->iface_net.addr.family && n->fabric_address.family)
		diag_warn(imp->d, pve_where(where, ff, s, "interfaces"),
			  "the interface's own ip is not imported: fabricd puts the node ip (the "
			  "fabric address) on its WireGuard device");
	if (pve_section_get(s, "allowed_ips", NULL))
		diag_warn(imp->d, pve_where(where, ff, s, "allowed_ips"),
			  "not imported: fabricd routes only fabric addresses through WireGuard");
	return read_peers(imp, s, n);
}

static bool lists(const struct imp_node *n, const char *peer)
{
	for (size_t i = 0; i < n->n_peers; i++)
		if (!strcmp(n->peers[i], peer))
			return true;
	return false;
}

/* Proxmox peer lists are per node and directed; fabricd is a full mesh. */
static void check_peers(struct pve_import *imp)
{
	char where[PVE_WHERE_LEN];

	for (size_t i = 0; i < imp->n_nodes; i++) {
		const struct imp_node *a = &imp->nodes[i];

		if (!a->in_fabric)
			continue;
		pve_where(where, imp->in->fabrics, a->fsec, "peers");
		for (size_t k = 0; k < a->n_peers; k++) {
			int j = imp_find_node(imp, a->peers[k]);

			if (j < 0 || !imp->nodes[j].in_fabric)
				diag_add(imp->d, where,
					 "peer \"%s\" is not an internal node of "
					 "this fabric",
					 a->peers[k]);
			else if (!lists(&imp->nodes[j], a->name))
				diag_add(imp->d, where,
					 "lists %s but %s does not list %s: fabricd connects every "
					 "pair both ways; add the missing peer in Proxmox",
					 a->peers[k], a->peers[k], a->name);
		}
		for (size_t j = i + 1; j < imp->n_nodes; j++) {
			const struct imp_node *b = &imp->nodes[j];

			if (b->in_fabric && !lists(a, b->name) && !lists(b, a->name))
				diag_warn(
				    imp->d, where,
				    "%s and %s are not peers in Proxmox; fabricd connects them",
				    a->name, b->name);
		}
	}
}

int imp_read_fabric(struct pve_import *imp)
{
	const struct pve_file *ff = imp->in->fabrics;
	const struct pve_section *f = imp->fabric;
	const char *prefix_key = imp_get(imp, ff, f, "ip_prefix") ? "ip_prefix" : "ip6_prefix";
	/* fabricd's fabric has one family: IPv4 when Proxmox's has both */
	const char *prefix = imp_get(imp, ff, f, prefix_key);
	const char *ka = imp_get(imp, ff, f, "persistent_keepalive");
	char where[PVE_WHERE_LEN], *end;
	int ret = 0;

	if (prefix && ip_prefix_parse(prefix, &imp->prefix) < 0) {
		diag_add(imp->d, pve_where(where, ff, f, prefix_key),
			 "\"%s\" is not a prefix with zero host bits", prefix);
		memset(&imp->prefix, 0, sizeof(imp->prefix));
	} else if (prefix && (!imp->prefix.len || ip_addr_unusable(&imp->prefix.addr))) {
		/* as fabricd check: routed into wgfab0 on every node */
		diag_add(imp->d, pve_where(where, ff, f, prefix_key),
			 "\"%s\" is not unicast address space of hosts; give the fabric a "
			 "private prefix in Proxmox",
			 prefix);
		memset(&imp->prefix, 0, sizeof(imp->prefix));
	}
	if (ka) {
		unsigned long v = strtoul(ka, &end, 10);

		if (*end || v > 65535)
			diag_add(imp->d, pve_where(where, ff, f, "persistent_keepalive"),
				 "\"%s\" is not 0..65535 seconds", ka);
		else
			imp->keepalive = (unsigned int)v;
	}
	note_unknown_keys(imp, f, fabric_keys);
	for (size_t i = 0; i < ff->n && ret == 0; i++)
		if (is_fabric_node(&ff->sections[i], "wireguard", f->id))
			ret = fabric_node(imp, &ff->sections[i]);
	check_peers(imp);
	return ret;
}

/*
 * Fabric addresses where Proxmox gave none: the WireGuard interfaces' own
 * ip=CIDR when they share one network, else DEFAULT_PREFIX by corosync nodeid.
 */
void imp_fill_fabric_addresses(struct pve_import *imp)
{
	bool from_iface = imp->n_nodes > 0;
	char where[PVE_WHERE_LEN];

	if (imp->prefix.addr.family)
		return;
	for (size_t i = 0; i < imp->n_nodes && from_iface; i++) {
		struct ip_prefix net = ip_prefix_network(&imp->nodes[i].iface_net);

		/* what a network or address check refuses (loopback, ...) is no fabric */
		from_iface = net.addr.family != 0 && net.len && !ip_addr_unusable(&net.addr) &&
			     !ip_addr_unusable(&imp->nodes[i].iface_net.addr);
		if (i == 0)
			imp->prefix = net;
		from_iface = from_iface && imp->prefix.len == net.len &&
			     ip_addr_equal(&imp->prefix.addr, &net.addr);
	}
	if (from_iface) {
		for (size_t i = 0; i < imp->n_nodes; i++)
			imp->nodes[i].fabric_address = imp->nodes[i].iface_net.addr;
		return;
	}
	ip_prefix_parse(DEFAULT_PREFIX, &imp->prefix);
	snprintf(where, sizeof(where), "%s", imp->fabric ? imp->fabric->id : "fabric");
	diag_warn(imp->d, where,
		  "Proxmox gives the nodes no fabric addresses: fabricd uses %s, node N gets "
		  ".N (corosync nodeid); edit fabric.prefix and fabric_address if that range "
		  "is in use",
		  DEFAULT_PREFIX);
	for (size_t i = 0; i < imp->n_nodes; i++) {
		struct imp_node *n = &imp->nodes[i];
		unsigned long host = n->nodeid ? n->nodeid : i + 1;

		n->fabric_address = imp->prefix.addr;
		if (host > 254) {
			diag_add(imp->d, n->name,
				 "nodeid %lu does not fit %s, where fabricd numbers the nodes "
				 "when Proxmox gives no fabric addresses: give the WireGuard "
				 "fabric an ip_prefix and each node an ip in Proxmox "
				 "(Datacenter > SDN > Fabrics)",
				 host, DEFAULT_PREFIX);
			n->usable = false;
		}
		n->fabric_address.bytes[3] = (uint8_t)host;
	}
}
