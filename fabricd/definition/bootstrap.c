// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/bootstrap.c - init/join/leave as edits of the definition's JSON.
 *
 * The input is validated by the loader first (an edit never "repairs" a file
 * it does not understand), the edit is made on jansson's tree of that same
 * text (so keys keep their order and every value it does not touch stays as
 * it was), and the result is validated again: an edit that would produce an
 * invalid definition (a duplicate underlay address, a key another node
 * already uses, an IPv6 node in an IPv4 cluster) is refused with the
 * loader's own JSON paths.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "definition/bootstrap.h"
#include "definition/config.h"
#include "definition/pve_follow.h"
#include "definition/wgkey.h"

/* a + offset, within the address's width; false when it overflows */
static bool addr_add(struct ip_addr *a, uint64_t offset)
{
	unsigned int carry = 0;

	for (size_t i = ip_addr_len(a); i-- > 0;) {
		unsigned int sum = a->bytes[i] + (unsigned int)(offset & 0xff) + carry;

		a->bytes[i] = (uint8_t)sum;
		carry = sum >> 8;
		offset >>= 8;
	}
	return !carry && !offset;
}

static bool address_used(const struct cluster *c, const struct ip_addr *a)
{
	for (size_t i = 0; i < c->n_nodes; i++) {
		if (ip_addr_equal(&c->nodes[i].fabric_address, a))
			return true;
	}
	return false;
}

static int free_address_in(const struct cluster *c, const struct ip_prefix *p, struct ip_addr *out)
{
	unsigned int host_bits = (unsigned int)(ip_addr_len(&p->addr) * 8) - p->len;
	uint64_t first = 1, last;

	if (host_bits >= 64) {
		last = UINT64_MAX;
	} else {
		last = (UINT64_C(1) << host_bits) - 1;
		/* IPv4 keeps its broadcast address; /31 and /32 have none (RFC 3021) */
		if (p->addr.family == AF_INET && host_bits >= 2)
			last--;
		if (host_bits < 2)
			first = 0;
	}
	/* at most n_nodes addresses are taken: the loop ends after n_nodes + 1 tries */
	for (uint64_t off = first; off <= last; off++) {
		struct ip_addr a = p->addr;

		if (!addr_add(&a, off))
			break;
		if (!address_used(c, &a)) {
			*out = a;
			return 0;
		}
		if (off == UINT64_MAX)
			break;
	}
	return -ENOSPC;
}

int bootstrap_free_address(const struct cluster *c, struct ip_addr *out)
{
	return free_address_in(c, &c->fabric.prefix, out);
}

void bootstrap_result_free(struct bootstrap_result *res)
{
	free(res->text);
	res->text = NULL;
}

int bootstrap_finish(json_t *root, struct bootstrap_result *res, struct diag *d)
{
	struct cluster *check = NULL;
	char *body = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	size_t len;
	int ret;

	if (!body) {
		diag_add(d, "definition", "out of memory while writing the edited definition");
		return -ENOMEM;
	}
	len = strlen(body);
	res->text = malloc(len + 2);
	if (!res->text) {
		free(body);
		diag_add(d, "definition", "out of memory while writing the edited definition");
		return -ENOMEM;
	}
	memcpy(res->text, body, len);
	memcpy(res->text + len, "\n", 2);
	free(body);
	ret = config_load_buffer(res->text, len + 1, &check, d);
	/* as `fabricd check`: a followed Proxmox zone must exist and be followed once */
	if (ret == 0)
		ret = pve_follow_load(check, d);
	cluster_free(check);
	if (ret < 0) {
		diag_add(d, "definition",
			 "the edited definition would not be valid (see above); nothing was "
			 "changed: fix what these paths name, or give other values");
		bootstrap_result_free(res);
		return -EINVAL;
	}
	return 0;
}

static json_t *node_object(const struct member_request *m, const struct ip_addr *fabric,
			   struct bootstrap_result *res)
{
	ip_addr_str(fabric, res->fabric_address, sizeof(res->fabric_address));
	return json_pack("{s:s, s:s, s:s, s:s}", "name", m->name, "underlay", m->underlay,
			 "fabric_address", res->fabric_address, "public_key", m->public_key);
}

int bootstrap_create(const char *cluster, const char *prefix, unsigned int listen_port,
		     const struct member_request *m, struct bootstrap_result *res, struct diag *d)
{
	struct cluster none = {0};
	struct ip_prefix p;
	struct ip_addr addr;
	json_t *root, *node;
	int ret;

	memset(res, 0, sizeof(*res));
	if (ip_prefix_parse(prefix, &p) < 0) {
		diag_add(d, "--prefix",
			 "\"%s\" is not a prefix: give one such as 10.255.0.0/24 or fd00:255::/64 "
			 "(host bits zero)",
			 prefix);
		return -EINVAL;
	}
	if (listen_port < 1 || listen_port > 65535) {
		diag_add(d, "--listen-port", "%u is not a UDP port: give 1..65535", listen_port);
		return -EINVAL;
	}
	if (free_address_in(&none, &p, &addr) < 0) {
		diag_add(d, "--prefix", "%s has no address for a node: give a larger prefix",
			 prefix);
		return -EINVAL;
	}
	/* a /32 (/128) holds this node alone: every join would fail */
	if (ip_addr_len(&p.addr) * 8 - p.len < 1)
		diag_warn(d, "--prefix",
			  "%s holds one node's address, this one's: no node can join; give a "
			  "prefix with room for the cluster (such as a %s)",
			  prefix, ip_addr_len(&p.addr) == 4 ? "/24" : "/64");
	node = node_object(m, &addr, res);
	root = json_pack("{s:i, s:s, s:{s:s, s:i}, s:[o], s:[]}", "version", 1, "cluster", cluster,
			 "fabric", "prefix", prefix, "listen_port", (int)listen_port, "nodes", node,
			 "zones");
	if (!root) {
		diag_add(d, "definition", "out of memory while building the definition");
		return -ENOMEM;
	}
	ret = bootstrap_finish(root, res, d);
	json_decref(root);
	res->outcome = BOOTSTRAP_ADDED;
	return ret;
}

int bootstrap_load(const char *text, size_t len, struct cluster **c, json_t **root, struct diag *d)
{
	json_error_t jerr;

	*root = NULL;
	if (config_load_buffer(text, len, c, d) < 0) {
		diag_add(d, "definition",
			 "the definition is not valid (see above): nothing was changed; fix it "
			 "first (fabricd check -c FILE)");
		return -EINVAL;
	}
	*root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!*root) {
		diag_add(d, "definition", "cannot be read again: %s", jerr.text);
		cluster_free(*c);
		*c = NULL;
		return -EINVAL;
	}
	return 0;
}

static int join_existing(const struct cluster *c, json_t *nodes, size_t idx,
			 const struct member_request *m, bool rotate_key,
			 struct bootstrap_result *res, struct diag *d)
{
	uint8_t key[WGKEY_LEN];
	char path[64], have[IP_ADDR_STRLEN];
	struct ip_addr underlay;
	bool same, moved;

	ip_addr_str(&c->nodes[idx].fabric_address, res->fabric_address,
		    sizeof(res->fabric_address));
	snprintf(path, sizeof(path), "nodes[%zu].public_key", idx);
	if (wgkey_from_base64(m->public_key, key) < 0) {
		diag_add(d, "--key-file", "the key does not give a valid public key");
		return -EINVAL;
	}
	same = !memcmp(key, c->nodes[idx].public_key, WGKEY_LEN);
	ip_addr_str(&c->nodes[idx].underlay, have, sizeof(have));
	moved = ip_addr_parse(m->underlay, &underlay) == 0 &&
		!ip_addr_equal(&underlay, &c->nodes[idx].underlay);
	if (same) {
		/* join never moves a member: say so when its address looks different now */
		if (moved) {
			snprintf(path, sizeof(path), "nodes[%zu].underlay", idx);
			diag_warn(d, path,
				  "node %s is listed with %s, but this node's underlay address is "
				  "now %s: join left it as it is; edit %s if the node moved",
				  m->name, have, m->underlay, path);
		}
		res->outcome = BOOTSTRAP_UNCHANGED;
		return 0;
	}
	/* another key and another address: likely another host with the same name */
	if (moved) {
		diag_add(d, path,
			 "node %s is already a member, listed with underlay %s and another "
			 "public key, and this host's underlay address is %s: nothing was "
			 "changed; if this is another host, give it a name of its own with "
			 "-n NODE; if it is %s, give --underlay %s (edit nodes[%zu].underlay "
			 "first if it moved)",
			 m->name, have, m->underlay, m->name, have, idx);
		return -EINVAL;
	}
	if (!rotate_key) {
		diag_add(d, path,
			 "node %s is already a member with another public key than the one of "
			 "this node's key file: nothing was changed; restore the key file that "
			 "belongs to it, or give the node a new key with `fabricd join "
			 "--rotate-key`",
			 m->name);
		return -EINVAL;
	}
	if (json_object_set_new(json_array_get(nodes, idx), "public_key",
				json_string(m->public_key)) < 0) {
		diag_add(d, path, "out of memory");
		return -ENOMEM;
	}
	res->outcome = BOOTSTRAP_ROTATED;
	return 1; /* changed: the caller writes the tree */
}

int bootstrap_join(const char *text, size_t len, const struct member_request *m, bool rotate_key,
		   struct bootstrap_result *res, struct diag *d)
{
	struct cluster *c = NULL;
	json_t *root = NULL, *nodes, *node;
	struct ip_addr addr;
	int idx, ret;

	memset(res, 0, sizeof(*res));
	ret = bootstrap_load(text, len, &c, &root, d);
	if (ret < 0)
		return ret;
	nodes = json_object_get(root, "nodes");
	idx = cluster_find_node(c, m->name);
	if (idx >= 0) {
		ret = join_existing(c, nodes, (size_t)idx, m, rotate_key, res, d);
		if (ret > 0)
			ret = bootstrap_finish(root, res, d);
		goto out;
	}
	if (bootstrap_free_address(c, &addr) < 0) {
		char p[IP_ADDR_STRLEN];

		diag_add(d, "fabric.prefix",
			 "%s/%u has no free address left for node %s: nothing was changed; give "
			 "the cluster a larger prefix first",
			 ip_addr_str(&c->fabric.prefix.addr, p, sizeof(p)), c->fabric.prefix.len,
			 m->name);
		ret = -EINVAL;
		goto out;
	}
	node = node_object(m, &addr, res);
	if (!node || json_array_append_new(nodes, node) < 0) {
		diag_add(d, "nodes", "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	res->outcome = BOOTSTRAP_ADDED;
	ret = bootstrap_finish(root, res, d);
out:
	json_decref(root);
	cluster_free(c);
	return ret;
}

/* Removes name from each zones[].nodes list; -EINVAL when one would be left empty. */
static int leave_zones(json_t *root, const char *name, struct bootstrap_result *res, struct diag *d)
{
	json_t *zones = json_object_get(root, "zones"), *zone;
	size_t i;
	int ret = 0;

	json_array_foreach(zones, i, zone)
	{
		json_t *list = json_object_get(zone, "nodes");

		for (size_t j = 0; json_is_array(list) && j < json_array_size(list); j++) {
			const char *member = json_string_value(json_array_get(list, j));

			if (!member || strcmp(member, name))
				continue;
			json_array_remove(list, j);
			res->zones_left++;
			if (json_array_size(list) == 0) {
				char path[64];

				snprintf(path, sizeof(path), "zones[%zu].nodes", i);
				diag_add(d, path,
					 "node %s is the only member of zone %s: nothing was "
					 "changed; remove the zone, or add another node to its "
					 "nodes, first",
					 name, json_string_value(json_object_get(zone, "name")));
				ret = -EINVAL;
			}
			break;
		}
	}
	return ret;
}

/*
 * Removes name from fabric.evpn.route_reflectors, as from the zones' node lists; -EINVAL
 * when it is the only reflector (an empty list is a full mesh: every node's sessions change).
 */
static int leave_reflectors(json_t *root, const char *name, struct bootstrap_result *res,
			    struct diag *d)
{
	json_t *evpn = json_object_get(json_object_get(root, "fabric"), "evpn");
	json_t *list = json_object_get(evpn, "route_reflectors");

	for (size_t i = 0; json_is_array(list) && i < json_array_size(list); i++) {
		const char *member = json_string_value(json_array_get(list, i));
		char path[64];

		if (!member || strcmp(member, name))
			continue;
		if (json_array_size(list) > 1) {
			json_array_remove(list, i);
			res->reflector_left = true;
			return 0;
		}
		snprintf(path, sizeof(path), "fabric.evpn.route_reflectors[%zu]", i);
		diag_add(d, path,
			 "node %s is the only route reflector: nothing was changed; name another "
			 "reflector first (a list that holds both, applied on every node, then the "
			 "other alone), then leave",
			 name);
		return -EINVAL;
	}
	return 0;
}

int bootstrap_leave(const char *text, size_t len, const char *name, struct bootstrap_result *res,
		    struct diag *d)
{
	struct cluster *c = NULL;
	json_t *root = NULL;
	int idx, ret;

	memset(res, 0, sizeof(*res));
	ret = bootstrap_load(text, len, &c, &root, d);
	if (ret < 0)
		return ret;
	idx = cluster_find_node(c, name);
	if (idx < 0) {
		res->outcome = BOOTSTRAP_UNCHANGED;
		goto out;
	}
	if (c->n_nodes == 1) {
		diag_add(d, "nodes",
			 "node %s is the only node of the definition, which needs at least one: "
			 "nothing was changed; to dissolve the cluster, stop fabricd, run "
			 "`fabricd down` and delete the file",
			 name);
		ret = -EINVAL;
		goto out;
	}
	json_array_remove(json_object_get(root, "nodes"), (size_t)idx);
	ret = leave_zones(root, name, res, d);
	if (leave_reflectors(root, name, res, d) < 0)
		ret = -EINVAL;
	if (ret < 0)
		goto out;
	res->outcome = BOOTSTRAP_REMOVED;
	ret = bootstrap_finish(root, res, d);
out:
	json_decref(root);
	cluster_free(c);
	return ret;
}
