// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/pve_import.c - Proxmox import, part one: the nodes (corosync.conf
 * and wireguard_node sections) and the WireGuard fabric; pve_import_zones.c
 * maps the zones and vnets, pve_import_out.c writes the JSON.
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

/* Used when Proxmox has no WireGuard fabric (or one without addresses). */
#define DEFAULT_PREFIX "10.255.0.0/24"
#define DEFAULT_PORT   51820

bool imp_name(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n == 0 || n >= len)
		return false;
	for (size_t i = 0; i <= n; i++)
		dst[i] = (char)tolower((unsigned char)src[i]);
	for (size_t i = 0; i < n; i++) {
		if (!islower((unsigned char)dst[i]) && !isdigit((unsigned char)dst[i]) &&
		    (dst[i] != '-' || i == 0))
			return false;
	}
	return true;
}

const char *imp_get(const struct pve_import *imp, const struct pve_file *f,
		    const struct pve_section *s, const char *key)
{
	char where[PVE_WHERE_LEN];
	size_t count;
	const struct pve_kv *kv = pve_section_get(s, key, &count);

	if (count > 1) {
		pve_where(where, f, s, key);
		if (f->dialect == PVE_DIALECT_PERL)
			diag_warn(imp->d, where,
				  "given %zu times; the first is used, as Proxmox does", count);
		else
			diag_add(imp->d, where,
				 "given %zu times; Proxmox rejects the file: keep one", count);
	}
	if (kv && !kv->value) {
		if (f->dialect == PVE_DIALECT_PERL)
			return "1"; /* a bare key is boolean true */
		pve_where(where, f, s, key);
		diag_add(imp->d, where, "has no value");
		return NULL;
	}
	return kv ? kv->value : NULL;
}

int imp_find_node(const struct pve_import *imp, const char *name)
{
	for (size_t i = 0; i < imp->n_nodes; i++)
		if (!strcmp(imp->nodes[i].name, name))
			return (int)i;
	return -1;
}

/* Adds a node named after Proxmox's name; -1 (reported) if it cannot be a fabricd name. */
static int add_node(struct pve_import *imp, const char *pve_name, const char *where)
{
	char name[FABRICD_NAME_MAX + 1];
	struct imp_node *grown, *n;

	if (!imp_name(name, sizeof(name), pve_name)) {
		diag_add(imp->d, where,
			 "node \"%s\" is not a valid fabricd node name (letters, digits, '-', at "
			 "most 63); rename the node",
			 pve_name);
		return -1;
	}
	for (size_t i = 0; i < imp->n_nodes; i++) {
		if (!strcmp(imp->nodes[i].name, name) && strcmp(imp->nodes[i].pve_name, pve_name)) {
			diag_add(
			    imp->d, where,
			    "node \"%s\" and node \"%s\" are both \"%s\" in fabricd (names are "
			    "lowercase); rename one",
			    imp->nodes[i].pve_name, pve_name, name);
			return -1;
		}
	}
	grown = realloc(imp->nodes, (imp->n_nodes + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	imp->nodes = grown;
	n = &grown[imp->n_nodes];
	memset(n, 0, sizeof(*n));
	memcpy(n->name, name, sizeof(name));
	snprintf(n->pve_name, sizeof(n->pve_name), "%s", pve_name);
	n->usable = true;
	return (int)imp->n_nodes++;
}

static int nodes_from_corosync(struct pve_import *imp)
{
	const struct corosync_conf *cc = imp->in->corosync;
	char where[PVE_WHERE_LEN];

	for (size_t i = 0; cc && i < cc->n_nodes; i++) {
		const struct corosync_node *cn = &cc->nodes[i];
		struct imp_node *n;
		int idx;

		snprintf(where, sizeof(where), "%s:%u [nodelist node %s]", imp->in->corosync_name,
			 cn->line, cn->name);
		idx = add_node(imp, cn->name, where);
		if (idx == -ENOMEM)
			return idx;
		if (idx < 0)
			continue;
		n = &imp->nodes[idx];
		n->nodeid = cn->nodeid;
		for (int l = 0; l < COROSYNC_LINKS; l++) {
			if (cn->addr[l] && ip_addr_parse(cn->addr[l], &n->links[n->n_links]) == 0)
				n->n_links++;
			else if (cn->addr[l] && l == 0)
				diag_warn(
				    imp->d, where,
				    "ring0_addr \"%s\" is a host name; fabricd needs an address "
				    "and resolves nothing: the node's underlay comes from another "
				    "link or the WireGuard endpoint",
				    cn->addr[l]);
		}
	}
	return 0;
}

static bool is_fabric_node(const struct pve_section *s, const char *proto, const char *fabric)
{
	size_t n = strlen(fabric);
	char type[32];

	snprintf(type, sizeof(type), "%s_node", proto);
	return !strcmp(s->type, type) && !strncmp(s->id, fabric, n) && s->id[n] == '_';
}

/* The wireguard_fabric the VXLAN zones use, or the only one; NULL if none. */
static const struct pve_section *choose_fabric(struct pve_import *imp)
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

/* The node's WireGuard interfaces in every wireguard fabric (Proxmox allows several). */
static size_t count_interfaces(const struct pve_file *ff, const char *node)
{
	size_t total = 0, count;

	for (size_t i = 0; i < ff->n; i++) {
		const struct pve_section *s = &ff->sections[i];
		const char *us = strchr(s->id, '_');

		if (!strcmp(s->type, "wireguard_node") && us && !strcasecmp(us + 1, node)) {
			pve_section_get(s, "interfaces", &count);
			total += count;
		}
	}
	return total;
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
	const char *ip = imp_get(imp, ff, s, "ip");
	char where[PVE_WHERE_LEN];

	if (!ip || !imp->prefix.addr.family)
		return;
	pve_where(where, ff, s, "ip");
	if (ip_addr_parse(ip, &n->fabric_address) < 0 ||
	    !ip_prefix_contains(&imp->prefix, &n->fabric_address) ||
	    ip_addr_unusable(&n->fabric_address)) {
		diag_add(imp->d, where, "\"%s\" is not an address inside the fabric's ip_prefix",
			 ip);
		memset(&n->fabric_address, 0, sizeof(n->fabric_address));
		n->usable = false;
	}
}

static int fabric_node(struct pve_import *imp, const struct pve_section *s)
{
	const struct pve_file *ff = imp->in->fabrics;
	const char *host = strchr(s->id, '_') + 1, *role = imp_get(imp, ff, s, "role");
	char where[PVE_WHERE_LEN], name[FABRICD_NAME_MAX + 1];
	struct imp_node *n;
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
	if (idx < 0 && (idx = add_node(imp, host, pve_where(where, ff, s, NULL))) < 0)
		return idx == -ENOMEM ? idx : 0;
	n = &imp->nodes[idx];
	if (n->in_fabric) {
		diag_add(imp->d, pve_where(where, ff, s, NULL),
			 "node \"%s\" appears twice in the fabric", host);
		return 0;
	}
	n->in_fabric = true;
	n->fsec = s;
	if (count_interfaces(ff, host) > 1) {
		diag_add(imp->d, pve_where(where, ff, s, "interfaces"),
			 "node \"%s\" has %zu WireGuard interfaces across fabrics; fabricd has one "
			 "per node (key and port): keep one, the first here is used",
			 host, count_interfaces(ff, host));
	}
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

static int read_fabric(struct pve_import *imp)
{
	const struct pve_file *ff = imp->in->fabrics;
	const struct pve_section *f = imp->fabric;
	const char *prefix = imp_get(imp, ff, f, "ip_prefix");
	const char *ka = imp_get(imp, ff, f, "persistent_keepalive");
	char where[PVE_WHERE_LEN], *end;
	int ret = 0;

	if (!prefix)
		prefix = imp_get(imp, ff, f, "ip6_prefix");
	if (prefix && ip_prefix_parse(prefix, &imp->prefix) < 0) {
		diag_add(imp->d, pve_where(where, ff, f, "ip_prefix"),
			 "\"%s\" is not a prefix with zero host bits", prefix);
		memset(&imp->prefix, 0, sizeof(imp->prefix));
	} else if (prefix && (!imp->prefix.len || ip_addr_unusable(&imp->prefix.addr))) {
		/* as fabricd check: routed into wgfab0 on every node */
		diag_add(imp->d, pve_where(where, ff, f, "ip_prefix"),
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
static void fill_fabric_addresses(struct pve_import *imp)
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
			diag_add(imp->d, n->name, "nodeid %lu does not fit %s", host,
				 DEFAULT_PREFIX);
			n->usable = false;
		}
		n->fabric_address.bytes[3] = (uint8_t)host;
	}
}

static void check_node_rules(struct pve_import *imp, struct imp_node *n);

static int finish_nodes(struct pve_import *imp)
{
	char a[IP_ADDR_STRLEN];
	int family = 0;

	fill_fabric_addresses(imp);
	for (size_t i = 0; i < imp->n_nodes; i++) {
		struct imp_node *n = &imp->nodes[i];
		int ret;

		n->underlay = n->endpoint_ip.family ? n->endpoint_ip : n->links[0];
		if (!n->underlay.family) {
			diag_add(imp->d, n->name,
				 "no underlay address: neither a corosync ringN_addr nor the "
				 "WireGuard endpoint is an IP address; write one in corosync.conf");
			n->usable = false;
		} else if (ip_addr_unusable(&n->underlay)) {
			/* as fabricd check: no peer can send to it */
			diag_add(
			    imp->d, n->name,
			    "underlay address %s (%s, from its %s) is not one the other nodes can "
			    "send to; give the node a unicast address there",
			    ip_addr_str(&n->underlay, a, sizeof(a)), ip_addr_unusable(&n->underlay),
			    n->endpoint_ip.family ? "WireGuard endpoint" : "corosync ringN_addr");
			n->usable = false;
		} else if (family && n->underlay.family != family && n->usable) {
			diag_add(
			    imp->d, n->name,
			    "underlay address family differs from the other nodes'; fabricd "
			    "joins nodes of one family: give it an address of the other family");
			n->usable = false;
		} else if (n->usable) {
			family = n->underlay.family;
		}
		if (imp->fabric && !n->in_fabric && n->usable) {
			diag_add(imp->d, n->name,
				 "is in corosync.conf but not in WireGuard fabric \"%s\"; add it "
				 "there in Proxmox (Datacenter > SDN > Fabrics)",
				 imp->fabric->id);
			n->usable = false;
		}
		if (!n->fabric_address.family && n->usable) {
			diag_add(imp->d, n->name,
				 "has no fabric address: give the node an \"ip\" in "
				 "the WireGuard fabric");
			n->usable = false;
		}
		if (!n->port)
			n->port = DEFAULT_PORT;
		if (!n->has_key && n->usable) {
			if (!imp->opts->new_key) {
				diag_add(
				    imp->d, n->name,
				    "Proxmox has no WireGuard key for this node: "
				    "give --generate-keys DIR, or add it to a WireGuard fabric");
				n->usable = false;
				continue;
			}
			ret = imp->opts->new_key(imp->opts->ctx, n->name, n->pub);
			if (ret < 0)
				return ret;
			n->has_key = true;
		}
		if (n->usable)
			check_node_rules(imp, n);
	}
	return 0;
}

/* Host bits of a in prefix p all zero (network) or all one (IPv4 broadcast). */
static bool network_or_broadcast(const struct ip_prefix *p, const struct ip_addr *a)
{
	size_t bits = 8 * ip_addr_len(a);
	bool zeros = true, ones = true;

	if (p->len + 1U >= bits)
		return false; /* /31, /32, /127, /128: every address is a host */
	for (size_t b = p->len; b < bits; b++) {
		bool set = a->bytes[b / 8] & (0x80U >> (b % 8));

		zeros = zeros && !set;
		ones = ones && set;
	}
	return zeros || (ones && a->family == AF_INET);
}

/* What fabricd check requires of nodes that Proxmox does not (or not at parse time). */
static void check_node_rules(struct pve_import *imp, struct imp_node *n)
{
	char a[IP_ADDR_STRLEN];

	if (n->fabric_address.family != imp->prefix.addr.family ||
	    !ip_prefix_contains(&imp->prefix, &n->fabric_address) ||
	    network_or_broadcast(&imp->prefix, &n->fabric_address)) {
		diag_add(imp->d, n->name,
			 "fabric address %s is not a host address of the fabric "
			 "prefix; give the node another ip",
			 ip_addr_str(&n->fabric_address, a, sizeof(a)));
		n->usable = false;
	} else if (ip_prefix_contains(&imp->prefix, &n->underlay) ||
		   (n->endpoint_ip.family && ip_prefix_contains(&imp->prefix, &n->endpoint_ip))) {
		diag_add(imp->d, n->name,
			 "underlay %s is inside the fabric prefix; WireGuard's "
			 "packets would loop: give the fabric another ip_prefix",
			 ip_addr_str(&n->underlay, a, sizeof(a)));
		n->usable = false;
	}
	for (size_t j = 0; n->usable && &imp->nodes[j] < n; j++) {
		const struct imp_node *o = &imp->nodes[j];
		const char *what = NULL;

		if (!o->usable)
			continue;
		if (ip_addr_equal(&o->underlay, &n->underlay))
			what = "underlay address";
		else if (ip_addr_equal(&o->fabric_address, &n->fabric_address))
			what = "fabric address";
		else if (!memcmp(o->pub, n->pub, WG_KEY_LEN))
			what = "WireGuard public key";
		if (what) {
			diag_add(imp->d, n->name,
				 "has the same %s as node %s; give each node its "
				 "own",
				 what, o->name);
			n->usable = false;
		}
	}
}

static void cluster_name(struct pve_import *imp)
{
	const struct corosync_conf *cc = imp->in->corosync;
	const char *name = cc && cc->cluster_name ? cc->cluster_name : "pve";
	size_t j = 0;

	/* "Lab_Cluster" -> "lab-cluster": fabricd's names are [a-z0-9-] */
	for (size_t i = 0; name[i] && j < sizeof(imp->cluster) - 1; i++) {
		char ch = (char)tolower((unsigned char)name[i]);

		if (!isalnum((unsigned char)ch))
			ch = j ? '-' : 'x';
		imp->cluster[j++] = ch;
	}
	imp->cluster[j] = '\0';
	if (!j)
		snprintf(imp->cluster, sizeof(imp->cluster), "pve");
}

int pve_import_run(const struct pve_input *in, const struct pve_import_opts *opts,
		   struct pve_import **out, struct diag *d)
{
	struct pve_import *imp = calloc(1, sizeof(*imp));
	int ret;

	*out = NULL;
	if (!imp)
		return -ENOMEM;
	imp->in = in;
	imp->opts = opts;
	imp->d = d;
	imp->listen_port = DEFAULT_PORT;
	cluster_name(imp);
	ret = nodes_from_corosync(imp);
	imp->fabric = ret == 0 ? choose_fabric(imp) : NULL;
	if (ret == 0 && imp->fabric)
		ret = read_fabric(imp);
	if (ret == 0)
		ret = finish_nodes(imp);
	for (size_t i = 0; ret == 0 && i < imp->n_nodes; i++) {
		if (imp->nodes[i].usable) {
			imp->listen_port = imp->nodes[i].port;
			break;
		}
	}
	if (ret == 0)
		ret = imp_zones(imp);
	if (ret == 0 && pve_import_node_count(imp) == 0)
		diag_add(d, in->corosync_name ? in->corosync_name : "nodes",
			 "no node could be imported (above); nothing to write");
	if (ret < 0) {
		pve_import_free(imp);
		return ret;
	}
	*out = imp;
	return 0;
}

int pve_import_node_key(const struct pve_import *imp, const char *node, const char **pve_name,
			const char **iface, uint8_t pub[32])
{
	int i = imp_find_node(imp, node);

	if (i < 0 || !imp->nodes[i].usable || !imp->nodes[i].key_from_pve)
		return -ENOENT;
	*pve_name = imp->nodes[i].pve_name;
	*iface = imp->nodes[i].iface;
	memcpy(pub, imp->nodes[i].pub, WG_KEY_LEN);
	return 0;
}

size_t pve_import_node_count(const struct pve_import *imp)
{
	size_t n = 0;

	for (size_t i = 0; i < imp->n_nodes; i++)
		n += imp->nodes[i].usable;
	return n;
}

void pve_import_free(struct pve_import *imp)
{
	if (!imp)
		return;
	imp_zones_free(imp);
	for (size_t i = 0; i < imp->n_nodes; i++) {
		for (size_t k = 0; k < imp->nodes[i].n_peers; k++)
			free(imp->nodes[i].peers[k]);
		free(imp->nodes[i].peers);
	}
	free(imp->nodes);
	free(imp);
}
