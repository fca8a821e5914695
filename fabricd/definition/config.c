// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/config.c - the cluster definition loader: JSON text -> struct cluster.
 *
 * The only code that sees jansson's types for the definition. Each value is
 * checked where it stands (type, range, syntax) and every problem is recorded
 * with its JSON path; definition/verify.c then checks the rules that span
 * objects. json_t never leaves this file: values are copied into the model
 * and the document is released before returning.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "definition/config.h"
#include "definition/config_priv.h"
#include "definition/mtu.h"

/* A definition is a few KiB; anything this big is the wrong file. */
#define CONFIG_MAX_SIZE (16U << 20)

static const char *const top_keys[] = {"version", "cluster",	 "fabric", "nodes",
				       "zones",	  "pve_sdn_dir", NULL};
static const char *const fabric_keys[] = {
    "prefix",	    "listen_port",   "secure_port", "keepalive",
    "underlay_mtu", "control_plane", "evpn",	    NULL};
static const char *const evpn_keys[] = {"asn", "route_reflectors", NULL};
static const char *const control_planes[] = {"static", "evpn", NULL};
static const char *const node_keys[] = {
    "name", "underlay", "fabric_address", "public_key", "listen_port", "endpoint", NULL};
static const char *const zone_keys[] = {"name",	    "transport", "mtu_policy", "mtu",
					"nodes",    "vnets",	 "bridges",    "control_plane",
					"pve_zone", "vni_range", NULL};
static const char *const vnet_keys[] = {"name", "vni", "replaces", NULL};
static const char *const transports[] = {"plain", "secure", NULL};
static const char *const mtu_policies[] = {"stable", "max", NULL};
static const char *const bridge_owners[] = {"own", "existing", NULL};

static bool is_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* Appends s to the path at *at, cut short where snprintf into CONFIG_PATH_LEN would cut it. */
static void path_put(char *out, size_t *at, const char *s)
{
	size_t n = strlen(s);

	if (n > CONFIG_PATH_LEN - 1 - *at)
		n = CONFIG_PATH_LEN - 1 - *at;
	memmove(out + *at, s, n);
	*at += n;
	out[*at] = '\0';
}

/*
 * "parent.key", or parent["a.b"] where a key would be ambiguous. Without printf:
 * every field of every vnet gets a path, read again on every change.
 */
static void path_key(char *out, const char *parent, const char *key)
{
	char q[CONFIG_VALUE_LEN];
	bool plain = *key != '\0';
	size_t at = 0;

	for (const char *p = key; *p; p++) {
		if (!is_alnum(*p) && *p != '_' && *p != '-' && *p != '$')
			plain = false;
	}
	if (!plain) {
		config_path(out, "%s[%s]", parent, config_quote(key, q, sizeof(q)));
		return;
	}
	path_put(out, &at, parent);
	if (*parent)
		path_put(out, &at, ".");
	path_put(out, &at, key);
}

static void path_index(char *out, const char *parent, size_t i)
{
	char digits[24], *d = digits + sizeof(digits) - 1;
	size_t at = 0;

	*d = '\0';
	do {
		*--d = (char)('0' + i % 10);
		i /= 10;
	} while (i);
	path_put(out, &at, parent);
	path_put(out, &at, "[");
	path_put(out, &at, d);
	path_put(out, &at, "]");
}

const char *config_jtype(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		break;
	}
	return "no value"; /* "null is no value; give ...", not "null is null" */
}

/* The offending value as the operator wrote it, quoted, escaped and truncated. */
const char *config_jtext(const json_t *v, char *buf, size_t len)
{
	char *s;

	if (json_is_string(v))
		return config_quote(json_string_value(v), buf, len);
	s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!s) {
		snprintf(buf, len, "(value)");
		return buf;
	}
	if (strlen(s) >= len)
		snprintf(buf, len, "%.*s...", (int)len - 4, s);
	else
		snprintf(buf, len, "%s", s);
	free(s);
	return buf;
}

/* Fields that would carry secrets get their own message, not "unknown key". */
static bool is_secret_key(const char *key)
{
	static const char *const words[] = {"private", "preshared", "psk"};
	char lower[128];
	size_t i;

	for (i = 0; i < sizeof(lower) - 1 && key[i]; i++)
		lower[i] = (key[i] >= 'A' && key[i] <= 'Z') ? (char)(key[i] - 'A' + 'a') : key[i];
	lower[i] = '\0';
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strstr(lower, words[i]))
			return true;
	}
	return false;
}

/* Edit distance, bounded to short keys, to suggest the key that was meant. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[33];

	if (la > 32 || lb > 32)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static bool key_allowed(const char *key, const char *const *allowed)
{
	for (size_t i = 0; allowed[i]; i++) {
		if (!strcmp(key, allowed[i]))
			return true;
	}
	return false;
}

/* The allowed key an unknown one most likely meant (at most two edits away), or NULL. */
static const char *key_guess(const char *key, const char *const *allowed)
{
	for (size_t i = 0; allowed[i]; i++) {
		if (distance(key, allowed[i]) <= 2)
			return allowed[i];
	}
	return NULL;
}

/*
 * Every key of obj must be one of allowed. Only an unknown key costs more than
 * a compare: a thousand vnets are a thousand objects, read on every change.
 */
static void check_keys(struct config_loader *l, json_t *obj, const char *path,
		       const char *const *allowed)
{
	char p[CONFIG_PATH_LEN], list[256];
	const char *key, *guess;
	json_t *v;

	json_object_foreach(obj, key, v)
	{
		size_t off = 0;

		if (key_allowed(key, allowed))
			continue;
		list[0] = '\0';
		for (size_t i = 0; allowed[i] && off < sizeof(list); i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
						i ? ", " : "", allowed[i]);
		guess = key_guess(key, allowed);
		path_key(p, path, key);
		if (is_secret_key(key))
			config_error(&l->r, p,
				     "private and preshared keys never belong in the cluster "
				     "definition (every node reads it); remove this key and keep "
				     "each node's private key in /etc/fabricd/private.key "
				     "(mode 0600) on that node");
		else if (guess)
			config_error(&l->r, p, "unknown key; did you mean \"%s\"? (allowed: %s)",
				     guess, list);
		else
			config_error(&l->r, p, "unknown key; remove it (allowed: %s)", list);
	}
}

/* Field getters: config_priv.h says what they return. */
int config_get_value(struct config_loader *l, json_t *obj, const char *parent, const char *key,
		     const char *required, char *path, json_t **out)
{
	path_key(path, parent, key);
	*out = json_object_get(obj, key);
	if (*out)
		return 1;
	if (required)
		config_error(&l->r, path, "missing; add %s", required);
	return 0;
}

int config_get_string(struct config_loader *l, json_t *obj, const char *parent, const char *key,
		      const char *required, char *path, const char **out)
{
	char t[CONFIG_VALUE_LEN];
	json_t *v;
	int ret = config_get_value(l, obj, parent, key, required, path, &v);

	if (ret <= 0)
		return ret;
	if (!json_is_string(v)) {
		config_error(&l->r, path, "%s is %s; give a string (in double quotes)",
			     config_jtext(v, t, sizeof(t)), config_jtype(v));
		return -1;
	}
	*out = json_string_value(v);
	return 1;
}

static int get_int(struct config_loader *l, json_t *obj, const char *parent, const char *key,
		   const char *required, long long min, long long max, char *path, long long *out)
{
	char t[CONFIG_VALUE_LEN];
	json_t *v;
	long long n;
	int ret = config_get_value(l, obj, parent, key, required, path, &v);

	if (ret <= 0)
		return ret;
	if (!config_json_int(v, &n)) {
		config_error(&l->r, path,
			     "%s is %s; give an integer %lld..%lld (no quotes, no fraction)",
			     config_jtext(v, t, sizeof(t)),
			     json_is_real(v) ? "not a whole number" : config_jtype(v), min, max);
		return -1;
	}
	if (n < min || n > max) {
		config_error(&l->r, path, "%s is out of range; give an integer %lld..%lld",
			     config_jtext(v, t, sizeof(t)), min, max);
		return -1;
	}
	*out = n;
	return 1;
}

/* A string from a closed set; *out is its index in names. */
static int get_enum(struct config_loader *l, json_t *obj, const char *parent, const char *key,
		    const char *required, const char *const *names, char *path, int *out)
{
	char t[CONFIG_VALUE_LEN], list[64];
	const char *s;
	size_t off = 0;
	int ret = config_get_string(l, obj, parent, key, required, path, &s);

	if (ret <= 0)
		return ret;
	for (int i = 0; names[i]; i++) {
		if (!strcmp(s, names[i])) {
			*out = i;
			return 1;
		}
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s\"%s\"", i ? " or " : "",
					names[i]);
	}
	config_error(&l->r, path, "%s is not allowed; use %s", config_quote(s, t, sizeof(t)), list);
	return -1;
}

int config_get_container(struct config_loader *l, json_t *obj, const char *parent, const char *key,
			 const char *required, bool array, char *path, json_t **out)
{
	char t[CONFIG_VALUE_LEN];
	int ret = config_get_value(l, obj, parent, key, required, path, out);

	if (ret <= 0)
		return ret;
	if (json_is_null(*out)) {
		config_error(&l->r, path, "is null; give %s, or leave the key out",
			     array ? "an array [...]" : "an object {...}");
		return -1;
	}
	if (array ? !json_is_array(*out) : !json_is_object(*out)) {
		config_error(&l->r, path, "%s is %s; give %s", config_jtext(*out, t, sizeof(t)),
			     config_jtype(*out), array ? "an array [...]" : "an object {...}");
		return -1;
	}
	return 1;
}

static void *alloc_array(struct config_loader *l, size_t n, size_t size);

/* fabric.evpn: names are kept as given; definition/evpn.c checks them against nodes[]. */
static void load_evpn(struct config_loader *l, json_t *obj, const char *path, struct evpn *e)
{
	char p[CONFIG_PATH_LEN], ep[CONFIG_PATH_LEN], t[CONFIG_VALUE_LEN];
	json_t *arr, *v;
	long long n;
	size_t i;

	check_keys(l, obj, path, evpn_keys);
	if (get_int(l, obj, path, "asn", "the cluster's BGP AS number, e.g. \"asn\": 65000", 1,
		    4294967295LL, p, &n) > 0)
		e->asn = (uint32_t)n;
	if (config_get_container(l, obj, path, "route_reflectors", NULL, true, p, &arr) <= 0)
		return;
	if (!(e->reflectors = alloc_array(l, json_array_size(arr), sizeof(*e->reflectors))))
		return;
	json_array_foreach(arr, i, v)
	{
		path_index(ep, p, i);
		if (!json_is_string(v))
			config_error(&l->r, ep, "%s is %s; give a node name as a string",
				     config_jtext(v, t, sizeof(t)), config_jtype(v));
		else if (!json_string_length(v))
			config_error(&l->r, ep, "is empty; give a node name from \"nodes\"");
		else
			snprintf(e->reflectors[i], sizeof(e->reflectors[i]), "%s",
				 json_string_value(v));
	}
	e->n_reflectors = json_array_size(arr);
}

static void load_fabric(struct config_loader *l, json_t *obj, const char *path, struct fabric *f)
{
	json_t *evpn;
	int cp;
	char p[CONFIG_PATH_LEN];
	const char *s;
	long long n;
	int ret;

	check_keys(l, obj, path, fabric_keys);
	if (config_get_string(l, obj, path, "prefix",
			      "the fabric's IP prefix, e.g. \"10.255.0.0/24\"", p, &s) > 0)
		config_parse_prefix(&l->r, p, s, &f->prefix);
	if (get_int(l, obj, path, "listen_port", "the WireGuard UDP port, e.g. 51820", 1, 65535, p,
		    &n) > 0)
		f->listen_port = (uint16_t)n;
	f->secure_port = 4790;
	ret = get_int(l, obj, path, "secure_port", NULL, 1, 65535, p, &n);
	if (ret > 0)
		f->secure_port = (uint16_t)n;
	else if (ret < 0)
		f->secure_port = 0; /* rejected: the verifier skips it */
	f->keepalive = 25;
	if (get_int(l, obj, path, "keepalive", NULL, 0, 65535, p, &n) > 0)
		f->keepalive = (unsigned int)n;
	if (get_int(l, obj, path, "underlay_mtu", NULL, MTU_MIN, MTU_MAX, p, &n) > 0) {
		f->underlay_mtu = (unsigned int)n;
		f->flags |= FABRIC_HAS_UNDERLAY_MTU;
	}
	if (get_enum(l, obj, path, "control_plane", NULL, control_planes, p, &cp) > 0)
		f->control_plane = cp ? CONTROL_PLANE_EVPN : CONTROL_PLANE_STATIC;
	ret = config_get_container(l, obj, path, "evpn", NULL, false, p, &evpn);
	if (ret > 0)
		load_evpn(l, evpn, p, &f->evpn);
	if (ret > 0 || json_object_get(obj, "evpn"))
		f->flags |= FABRIC_HAS_EVPN; /* given, if wrongly: reported once, as such */
}

static void load_node(struct config_loader *l, json_t *obj, const char *path, struct node *n)
{
	char p[CONFIG_PATH_LEN];
	const char *s;
	long long i;

	check_keys(l, obj, path, node_keys);
	if (config_get_string(l, obj, path, "name", "the node's name, e.g. \"pve1\" (its hostname)",
			      p, &s) > 0)
		config_parse_name(&l->r, p, s, FABRICD_NAME_MAX, "node", n->name);
	if (config_get_string(l, obj, path, "underlay", "the node's underlay IP address", p, &s) >
	    0)
		config_parse_addr(&l->r, p, s, &n->underlay);
	if (config_get_string(l, obj, path, "fabric_address",
			      "the node's WireGuard address inside fabric.prefix", p, &s) > 0)
		config_parse_addr(&l->r, p, s, &n->fabric_address);
	if (config_get_string(l, obj, path, "public_key",
			      "the node's WireGuard public key (\"fabricd pubkey < "
			      "/etc/fabricd/private.key\" on that node)",
			      p, &s) > 0)
		config_parse_key(&l->r, p, s, n->public_key);
	if (get_int(l, obj, path, "listen_port", NULL, 1, 65535, p, &i) > 0) {
		n->listen_port = (uint16_t)i;
		n->flags |= NODE_HAS_LISTEN_PORT;
	}
	if (config_get_string(l, obj, path, "endpoint", NULL, p, &s) > 0)
		config_parse_endpoint(&l->r, p, s, n);
}

static void load_vnet(struct config_loader *l, json_t *obj, const char *path, struct vnet *v)
{
	char p[CONFIG_PATH_LEN];
	const char *s;
	long long n;

	check_keys(l, obj, path, vnet_keys);
	if (config_get_string(l, obj, path, "name",
			      "the vnet's name (also its bridge's), e.g. \"vnet100\"", p, &s) > 0)
		config_parse_name(&l->r, p, s, FABRICD_IFNAME_MAX, "vnet", v->name);
	if (get_int(l, obj, path, "vni", "the VXLAN network identifier, 1..16777215", 1, 16777215,
		    p, &n) > 0)
		v->vni = (uint32_t)n;
	if (config_get_string(l, obj, path, "replaces", NULL, p, &s) > 0) {
		char q[CONFIG_VALUE_LEN];

		if (!*s || strlen(s) > FABRICD_IFNAME_MAX || strpbrk(s, "/: \t\n"))
			config_error(&l->r, p,
				     "%s is not an interface name (1..15 bytes, no '/', ':' or "
				     "spaces); name the device to take over, e.g. \"vxlan_blue\"",
				     config_quote(s, q, sizeof(q)));
		else
			memcpy(v->replaces, s, strlen(s) + 1);
	}
}

static void *alloc_array(struct config_loader *l, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		l->oom = -ENOMEM;
	return p;
}

/* Absent: every node. Present: existing node names, each once. */
static void load_members(struct config_loader *l, json_t *zone, const char *path, struct zone *z)
{
	char p[CONFIG_PATH_LEN], ep[CONFIG_PATH_LEN], q[CONFIG_VALUE_LEN], names[160];
	const struct cluster *c = l->c;
	size_t i, off = 0;
	json_t *arr, *v;
	int ret = config_get_container(l, zone, path, "nodes", NULL, true, p, &arr);

	if (ret < 0)
		return;
	if (ret == 0) {
		if (!(z->members = alloc_array(l, c->n_nodes, sizeof(*z->members))))
			return;
		for (i = 0; i < c->n_nodes; i++)
			z->members[z->n_members++] = i;
		return;
	}
	z->flags |= ZONE_HAS_NODES;
	if (!c->n_nodes)
		return; /* "nodes" is missing or wrong, and reported */
	if (!json_array_size(arr)) {
		config_error(
		    &l->r, p,
		    "is empty; list the zone's nodes, or remove the key to put the zone on "
		    "every node");
		return;
	}
	if (!(z->members = alloc_array(l, json_array_size(arr), sizeof(*z->members))))
		return;
	names[0] = '\0';
	for (i = 0; i < c->n_nodes && off < sizeof(names); i++) {
		/* only names that are valid (and so safe to print unquoted) */
		if (name_valid(c->nodes[i].name))
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",
						off ? ", " : "", c->nodes[i].name);
	}
	json_array_foreach(arr, i, v)
	{
		int idx;

		path_index(ep, p, i);
		if (!json_is_string(v)) {
			config_error(&l->r, ep, "%s is %s; give a node name as a string",
				     config_jtext(v, q, sizeof(q)), config_jtype(v));
			continue;
		}
		config_quote(json_string_value(v), q, sizeof(q));
		idx = cluster_find_node(c, json_string_value(v));
		if (idx < 0 || !*json_string_value(v)) {
			config_error(&l->r, ep, "%s is not a node of this cluster; use one of: %s",
				     q, names);
		} else if (zone_has_member(z, (size_t)idx)) {
			config_error(&l->r, ep, "%s is listed twice; list each node once", q);
		} else {
			z->members[z->n_members++] = (size_t)idx;
		}
	}
}

static void load_zone(struct config_loader *l, json_t *obj, const char *path, struct zone *z)
{
	char p[CONFIG_PATH_LEN], ep[CONFIG_PATH_LEN], t[CONFIG_VALUE_LEN];
	json_t *arr, *v;
	const char *s;
	long long n;
	size_t i;
	int e;

	check_keys(l, obj, path, zone_keys);
	if (config_get_string(l, obj, path, "name", "the zone's name, e.g. \"tenant-a\"", p, &s) >
	    0)
		config_parse_name(&l->r, p, s, FABRICD_NAME_MAX, "zone", z->name);
	if (get_enum(l, obj, path, "transport", "\"transport\": \"plain\" or \"secure\"",
		     transports, p, &e) > 0)
		z->transport = e ? TRANSPORT_SECURE : TRANSPORT_PLAIN;
	z->mtu_policy = MTU_POLICY_STABLE;
	if (get_enum(l, obj, path, "mtu_policy", NULL, mtu_policies, p, &e) > 0)
		z->mtu_policy = e ? MTU_POLICY_MAX : MTU_POLICY_STABLE;
	if (get_enum(l, obj, path, "bridges", NULL, bridge_owners, p, &e) > 0 && e)
		z->flags |= ZONE_EXISTING_BRIDGES;
	if (get_int(l, obj, path, "mtu", NULL, MTU_MIN, MTU_MAX, p, &n) > 0) {
		z->mtu = (unsigned int)n;
		z->flags |= ZONE_HAS_MTU;
	}
	z->control_plane = l->c->fabric.control_plane;
	if (get_enum(l, obj, path, "control_plane", NULL, control_planes, p, &e) > 0) {
		z->control_plane = e ? CONTROL_PLANE_EVPN : CONTROL_PLANE_STATIC;
		z->flags |= ZONE_HAS_CONTROL_PLANE;
	}
	load_members(l, obj, path, z);
	if (config_get_container(l, obj, path, "vnets",
				 config_load_pve_zone(l, obj, path, z)
				     ? NULL
				     : "\"vnets\": [] with {\"name\", \"vni\"} objects",
				 true, p, &arr) <= 0)
		return;
	if (!(z->vnets = alloc_array(l, json_array_size(arr), sizeof(*z->vnets))))
		return;
	z->n_vnets = json_array_size(arr);
	json_array_foreach(arr, i, v)
	{
		path_index(ep, p, i);
		if (json_is_object(v))
			load_vnet(l, v, ep, &z->vnets[i]);
		if (json_is_object(v) && z->vnets[i].replaces[0] &&
		    !(z->flags & ZONE_EXISTING_BRIDGES))
			config_error(
			    &l->r, ep,
			    "\"replaces\" takes over a port only in a bridge fabricd does not "
			    "own: add \"bridges\": \"existing\" to the zone");
		else if (!json_is_object(v))
			config_error(&l->r, ep,
				     "%s is %s; give an object {\"name\": ..., \"vni\": ...}",
				     config_jtext(v, t, sizeof(t)), config_jtype(v));
	}
}

static void load_nodes(struct config_loader *l, json_t *root)
{
	char p[CONFIG_PATH_LEN], ep[CONFIG_PATH_LEN], t[CONFIG_VALUE_LEN];
	json_t *arr, *v;
	size_t i;

	if (config_get_container(l, root, "", "nodes", "\"nodes\": [...] with one object per node",
				 true, p, &arr) <= 0)
		return;
	if (!json_array_size(arr)) {
		config_error(&l->r, p, "is empty; list at least one node");
		return;
	}
	if (!(l->c->nodes = alloc_array(l, json_array_size(arr), sizeof(*l->c->nodes))))
		return;
	l->c->n_nodes = json_array_size(arr);
	json_array_foreach(arr, i, v)
	{
		path_index(ep, p, i);
		if (json_is_object(v))
			load_node(l, v, ep, &l->c->nodes[i]);
		else
			config_error(&l->r, ep,
				     "%s is %s; give an object with name, underlay, fabric_address "
				     "and public_key",
				     config_jtext(v, t, sizeof(t)), config_jtype(v));
	}
}

static void load_zones(struct config_loader *l, json_t *root)
{
	char p[CONFIG_PATH_LEN], ep[CONFIG_PATH_LEN], t[CONFIG_VALUE_LEN];
	json_t *arr, *v;
	size_t i;

	if (config_get_container(l, root, "", "zones", NULL, true, p, &arr) <= 0)
		return;
	if (!(l->c->zones = alloc_array(l, json_array_size(arr), sizeof(*l->c->zones))))
		return;
	l->c->n_zones = json_array_size(arr);
	json_array_foreach(arr, i, v)
	{
		path_index(ep, p, i);
		if (json_is_object(v))
			load_zone(l, v, ep, &l->c->zones[i]);
		else
			config_error(&l->r, ep,
				     "%s is %s; give an object with name, transport and vnets",
				     config_jtext(v, t, sizeof(t)), config_jtype(v));
	}
}

static void load_root(struct config_loader *l, json_t *root)
{
	char p[CONFIG_PATH_LEN], t[CONFIG_VALUE_LEN];
	const char *s;
	json_t *v;

	if (!json_is_object(root)) {
		config_error(&l->r, "(top level)",
			     "is %s; a definition is one JSON object {\"version\": 1, ...}",
			     json_is_null(root) ? "null" : config_jtype(root));
		return;
	}
	check_keys(l, root, "", top_keys);
	if (config_get_value(l, root, "", "version", "\"version\": 1", p, &v) > 0) {
		long long version;

		if (!config_json_int(v, &version) || version != 1)
			config_error(&l->r, p,
				     "%s is not supported; this fabricd reads \"version\": 1 (an "
				     "integer)",
				     config_jtext(v, t, sizeof(t)));
		else
			l->c->version = 1;
	}
	if (config_get_string(l, root, "", "cluster",
			      "the cluster's name, e.g. \"cluster\": \"lab\"", p, &s) > 0)
		config_parse_name(&l->r, p, s, FABRICD_NAME_MAX, "cluster", l->c->name);
	if (config_get_container(l, root, "", "fabric",
				 "\"fabric\": {\"prefix\": ..., \"listen_port\": ...}", false, p,
				 &v) > 0)
		load_fabric(l, v, p, &l->c->fabric);
	load_nodes(l, root);
	load_zones(l, root);
	config_load_sdn_dir(l, root);
}

static bool only_whitespace(const char *buf, size_t len)
{
	while (len && memchr(" \t\r\n", *buf, 4))
		buf++, len--;
	return !len;
}

/* source names the input in syntax errors: the file, or "<input>". */
static int load(const char *buf, size_t len, const char *source, struct cluster **out,
		struct diag *diag)
{
	struct config_loader l = {.r = {.d = diag}};
	json_error_t jerr;
	json_t *root;
	int ret = 0;

	*out = NULL;
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) {
		/* jansson's text for it quotes an invisible character */
		config_error(&l.r, source,
			     "starts with a UTF-8 byte order mark; save it as UTF-8 without BOM");
		return -EINVAL;
	}
	if (only_whitespace(buf, len)) {
		config_error(&l.r, source, "is empty; a definition is one JSON object");
		return -EINVAL;
	}
	/* any value: "null" is valid JSON, just not a definition (load_root says so) */
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!root) {
		config_syntax_error(&l.r, source, buf, len, &jerr);
		return -EINVAL;
	}
	l.c = calloc(1, sizeof(*l.c));
	if (!l.c) {
		ret = -ENOMEM;
		goto out;
	}
	load_root(&l, root);
	if (l.oom) {
		ret = l.oom;
		config_error(&l.r, source, "out of memory while loading the definition");
		goto out;
	}
	config_verify(l.c, &l.r);
	if (l.r.errors)
		ret = -EINVAL;
out:
	json_decref(root);
	if (ret) {
		cluster_free(l.c);
		return ret;
	}
	*out = l.c;
	return 0;
}

int config_load_buffer(const char *buf, size_t len, struct cluster **out, struct diag *diag)
{
	return load(buf, len, "<input>", out, diag);
}

int config_load_file(const char *path, struct cluster **out, struct diag *diag)
{
	struct config_report r = {.d = diag};
	char *buf = NULL, *grown;
	size_t len = 0, cap = 0, n;
	FILE *f;
	int ret;

	*out = NULL;
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		config_error(&r, path, "cannot open: %s; %s", strerror(-ret),
			     ret == -ENOENT ? CONFIG_MISSING_HINT : CONFIG_UNREADABLE_HINT);
		return ret;
	}
	config_check_writers(f, path, diag);
	for (;;) {
		if (len == cap) {
			if (cap > CONFIG_MAX_SIZE) {
				ret = -EFBIG;
				config_error(
				    &r, path,
				    "larger than 16 MiB; this is not a cluster definition");
				goto out;
			}
			/* one byte past the limit tells "too big" from "exactly the limit" */
			cap = cap ? cap * 2 : 8192;
			if (cap > CONFIG_MAX_SIZE)
				cap = CONFIG_MAX_SIZE + 1;
			grown = realloc(buf, cap);
			if (!grown) {
				ret = -ENOMEM;
				config_error(&r, path, "out of memory reading the file");
				goto out;
			}
			buf = grown;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		ret = -EIO;
		config_error(&r, path, "cannot read: %s; give the definition file with -c FILE",
			     strerror(errno));
		goto out;
	}
	ret = load(buf, len, path, out, diag);
out:
	free(buf);
	fclose(f);
	return ret;
}
