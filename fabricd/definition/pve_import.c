// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/pve_import.c - Proxmox import, part one: the nodes (corosync.conf,
 * their underlay, their rules); pve_import_fabric.c reads the WireGuard
 * fabric (wireguard_fabric and wireguard_node sections), pve_import_zones.c
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
int imp_add_node(struct pve_import *imp, const char *pve_name, const char *where)
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
		idx = imp_add_node(imp, cn->name, where);
		if (idx == -ENOMEM)
			return idx;
		if (idx < 0)
			continue;
		n = &imp->nodes[idx];
		n->in_corosync = true;
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

static void check_node_rules(struct pve_import *imp, struct imp_node *n);

/* The node's first address in family: its WireGuard endpoint, else a corosync address. */
static const struct ip_addr *address_in(const struct imp_node *n, int family)
{
	if (n->endpoint_ip.family == family)
		return &n->endpoint_ip;
	for (size_t l = 0; l < n->n_links; l++) {
		if (n->links[l].family == family)
			return &n->links[l];
	}
	return NULL;
}

int imp_wg_node(const struct pve_import *imp, const struct ip_addr *a)
{
	for (size_t i = 0; imp->fabric && i < imp->n_nodes; i++) {
		const struct imp_node *n = &imp->nodes[i];

		if (n->in_fabric &&
		    (ip_addr_equal(&n->fabric_address, a) || ip_addr_equal(&n->iface_net.addr, a)))
			return (int)i;
	}
	return -1;
}

/*
 * n's corosync address in family that a VXLAN zone's peers name, or NULL:
 * Proxmox sent the zone's VXLAN from there (its local VTEP is the peer among
 * the node's own addresses), so the guests' traffic stays on that network
 * and does not move onto another link (a dedicated corosync ring0, say).
 * A link that is a WireGuard address (corosync run inside the fabric) is none:
 * Proxmox sent the zone inside WireGuard, and no underlay can be in the fabric.
 */
static const struct ip_addr *peer_link(const struct pve_import *imp, const struct imp_node *n,
				       int family)
{
	const struct pve_file *zf = imp->in->zones;
	const struct ip_addr *found = NULL;

	for (size_t i = 0; zf && i < zf->n && !found; i++) {
		const struct pve_section *s = &zf->sections[i];
		const struct pve_kv *kv =
		    strcasecmp(s->type, "vxlan") ? NULL : pve_section_get(s, "peers", NULL);
		char **items = NULL;
		int cnt = kv && kv->value ? pve_split_list(kv->value, &items) : -1;

		for (int k = 0; k < cnt && !found; k++) {
			struct ip_addr a;

			for (size_t l = 0;
			     ip_addr_parse(items[k], &a) == 0 && l < n->n_links && !found; l++)
				if (n->links[l].family == family &&
				    ip_addr_equal(&n->links[l], &a) && imp_wg_node(imp, &a) < 0)
					found = &n->links[l];
		}
		if (cnt >= 0)
			pve_strv_free(items);
	}
	return found;
}

/*
 * The underlay's one family (VXLAN cannot join IPv4 to IPv6): the one more
 * nodes have an address in; on a tie, the one more nodes prefer (their
 * WireGuard endpoint, else the one link the VXLAN zones' peers name, else
 * their first corosync address), then IPv4. So the
 * odd node out is the one blamed, never the rest of the cluster.
 */
static int underlay_family(const struct pve_import *imp)
{
	size_t have4 = 0, have6 = 0, prefer4 = 0, prefer6 = 0;

	for (size_t i = 0; i < imp->n_nodes; i++) {
		const struct imp_node *n = &imp->nodes[i];
		const struct ip_addr *peer4 = peer_link(imp, n, AF_INET),
				     *peer6 = peer_link(imp, n, AF_INET6);
		int preferred = n->endpoint_ip.family ? n->endpoint_ip.family
				: peer4 && !peer6     ? AF_INET
				: peer6 && !peer4     ? AF_INET6
						      : n->links[0].family;

		have4 += address_in(n, AF_INET) != NULL;
		have6 += address_in(n, AF_INET6) != NULL;
		prefer4 += preferred == AF_INET;
		prefer6 += preferred == AF_INET6;
	}
	if (have4 != have6)
		return have4 > have6 ? AF_INET : AF_INET6;
	return prefer6 > prefer4 ? AF_INET6 : AF_INET;
}

/* n's underlay in family; a WireGuard endpoint of the other family stays its endpoint. */
static void choose_underlay(struct pve_import *imp, struct imp_node *n, int family)
{
	const struct ip_addr *a = address_in(n, family);
	const struct ip_addr *p = n->endpoint_ip.family ? NULL : peer_link(imp, n, family);
	char ep[IP_ADDR_STRLEN], ul[IP_ADDR_STRLEN];

	n->underlay = n->endpoint_ip.family ? n->endpoint_ip : p ? *p : n->links[0];
	if (!a || !n->underlay.family || n->underlay.family == family)
		return;
	n->underlay = *a;
	if (!n->endpoint_ip.family)
		return;
	n->endpoint_other_family = true;
	diag_warn(imp->d, n->name,
		  "WireGuard endpoint %s is IPv%d and the other nodes' underlay IPv%d: its "
		  "corosync address %s is the underlay (VXLAN joins one family), the "
		  "endpoint stays WireGuard's",
		  ip_addr_str(&n->endpoint_ip, ep, sizeof(ep)), family == AF_INET ? 6 : 4,
		  family == AF_INET ? 4 : 6, ip_addr_str(&n->underlay, ul, sizeof(ul)));
}

/*
 * A corosync node the WireGuard fabric lacks. Following (--sdn-dir), it is
 * one `pvecm add` put there before the fabric has it: the others go on
 * without it meanwhile. A file written without it would be incomplete.
 */
static void leave_out_of_fabric(struct pve_import *imp, struct imp_node *n)
{
	(imp->opts->measured ? diag_warn : diag_add)(
	    imp->d, n->name,
	    "is in corosync.conf but not in WireGuard fabric \"%s\"%s; add it there in "
	    "Proxmox (Datacenter > SDN > Fabrics)",
	    imp->fabric->id,
	    imp->opts->measured ? ": left out of fabricd's fabric until it is" : "");
	n->usable = false;
}

/* A node in corosync.conf or the WireGuard fabric but not in both. */
static void check_membership(struct pve_import *imp, struct imp_node *n)
{
	if (imp->fabric && !n->in_fabric && n->usable)
		leave_out_of_fabric(imp, n);
	/* `pvecm delnode` leaves the fabric as it was: the node stays a member */
	if (imp->in->corosync && n->in_fabric && !n->in_corosync && n->usable)
		diag_warn(imp->d, n->name,
			  "is in WireGuard fabric \"%s\" but not in corosync.conf (removed "
			  "from the cluster?): imported from the fabric alone, a member as "
			  "before; if it left, remove it from the fabric in Proxmox "
			  "(Datacenter > SDN > Fabrics)",
			  imp->fabric->id);
}

static int finish_nodes(struct pve_import *imp)
{
	int family = underlay_family(imp);
	char a[IP_ADDR_STRLEN];

	imp_fill_fabric_addresses(imp);
	for (size_t i = 0; i < imp->n_nodes; i++) {
		struct imp_node *n = &imp->nodes[i];
		int ret;

		choose_underlay(imp, n, family);
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
		} else if (n->underlay.family != family) {
			diag_add(imp->d, n->name,
				 "has only IPv%d addresses and the other nodes' underlay is IPv%d; "
				 "fabricd joins nodes of one family (VXLAN cannot join IPv4 to "
				 "IPv6): give it an IPv%d corosync address or WireGuard endpoint",
				 family == AF_INET ? 6 : 4, family == AF_INET ? 4 : 6,
				 family == AF_INET ? 4 : 6);
			n->usable = false;
		}
		check_membership(imp, n);
		if (!n->fabric_address.family && n->usable) {
			diag_add(imp->d, n->name,
				 "has no fabric address: give the node an \"%s\" in "
				 "the WireGuard fabric",
				 imp->prefix.addr.family == AF_INET6 ? "ip6" : "ip");
			n->usable = false;
		}
		if (!n->port)
			n->port = DEFAULT_PORT;
		if (!n->has_key && n->usable) {
			if (!imp->opts->new_key) {
				if (imp->opts->measured) /* --sdn-dir: nothing to give keys to */
					diag_add(
					    imp->d, n->name,
					    "Proxmox has no WireGuard key for this node, so "
					    "--sdn-dir has none to follow: add the nodes to a "
					    "WireGuard fabric (PVE 9.2), or write a definition "
					    "with `fabricd import-pve --generate-keys DIR -o "
					    "FILE` and use -c FILE");
				else
					diag_add(
					    imp->d, n->name,
					    "Proxmox has no WireGuard key for this node: "
					    "give --generate-keys DIR, or add it to a WireGuard "
					    "fabric");
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

void pve_cluster_name(const char *corosync_name, char *buf, size_t len)
{
	const char *name = corosync_name ? corosync_name : "pve";
	size_t j = 0;

	/* "Lab_Cluster" -> "lab-cluster": fabricd's names are [a-z0-9-] */
	for (size_t i = 0; name[i] && j < len - 1; i++) {
		char ch = (char)tolower((unsigned char)name[i]);

		if (!isalnum((unsigned char)ch))
			ch = j ? '-' : 'x';
		buf[j++] = ch;
	}
	buf[j] = '\0';
	if (!j)
		snprintf(buf, len, "pve");
}

static void cluster_name(struct pve_import *imp)
{
	const struct corosync_conf *cc = imp->in->corosync;

	pve_cluster_name(cc ? cc->cluster_name : NULL, imp->cluster, sizeof(imp->cluster));
}

const char *imp_again(const struct pve_import *imp)
{
	return imp->opts->measured ? " (this node maps Proxmox's files again when they change)"
				   : " and import again";
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
	imp->fabric = ret == 0 ? imp_choose_fabric(imp) : NULL;
	if (ret == 0 && imp->fabric)
		ret = imp_read_fabric(imp);
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
	if (ret == 0 && imp->n_nodes == 0) /* an empty file: pmxcfs without quorum? */
		diag_add(
		    d, in->corosync_name ? in->corosync_name : "nodes",
		    "names no node (no nodelist), nor does a WireGuard fabric; nothing to "
		    "write: give the cluster's corosync.conf (--corosync FILE), written whole");
	else if (ret == 0 && pve_import_node_count(imp) == 0)
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

unsigned int pve_import_guest_mtu(const struct pve_import *imp, const char *zone)
{
	for (size_t i = 0; i < imp->n_zones; i++) {
		if (!strcmp(imp->zones[i].name, zone))
			return imp->zones[i].guest_mtu;
	}
	return 0;
}
