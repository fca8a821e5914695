// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/zone_edit.c - zones and vnets added to and removed from the
 * definition's JSON (`fabricd zone|vnet add|remove`).
 *
 * Same pattern as definition/bootstrap.c: the loader validates the input,
 * the edit is made on jansson's tree of that text (JSON_PRESERVE_ORDER), and
 * bootstrap_finish() validates the result, so every rule of the format (names,
 * unique VNIs, members that exist, MTUs) is the loader's own, reported with
 * its JSON paths. Only what the loader cannot know is checked here: whether
 * a zone or vnet of that name is already there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "definition/config.h"
#include "definition/zone_edit.h"

int vnet_request_parse(const char *arg, const char *option, struct vnet_request *v, struct diag *d)
{
	const char *colon = strrchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : 0;
	char *end;

	if (!colon || n == 0 || n >= sizeof(v->name)) {
		diag_add(d, option,
			 "\"%s\" is not NAME:VNI: give a vnet name (at most 15 of a-z, 0-9 and "
			 "-), a colon and its VNI, e.g. vnet100:100",
			 arg);
		return -EINVAL;
	}
	memcpy(v->name, arg, n);
	v->name[n] = '\0';
	errno = 0;
	v->vni = strtoll(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || colon[1] == '-' || colon[1] == '+') {
		diag_add(d, option, "\"%s\": the VNI \"%s\" is not a number: give 1..16777215", arg,
			 colon + 1);
		return -EINVAL;
	}
	return 0;
}

static int find_zone(const struct cluster *c, const char *name)
{
	for (size_t i = 0; i < c->n_zones; i++) {
		if (!strcmp(c->zones[i].name, name))
			return (int)i;
	}
	return -1;
}

static const struct vnet *find_vnet(const struct zone *z, const char *name)
{
	for (size_t i = 0; i < z->n_vnets; i++) {
		if (!strcmp(z->vnets[i].name, name))
			return &z->vnets[i];
	}
	return NULL;
}

/* The zones' names, for a message that says which exist. */
static void zone_names(const struct cluster *c, char *out, size_t len)
{
	size_t off = 0;

	out[0] = '\0';
	for (size_t i = 0; i < c->n_zones && off < len; i++)
		off +=
		    (size_t)snprintf(out + off, len - off, "%s%s", i ? ", " : "", c->zones[i].name);
	if (!c->n_zones)
		snprintf(out, len, "none yet");
}

/* vnets as {"name", "vni"} objects appended to arr; -ENOMEM */
static int append_vnets(json_t *arr, const struct vnet_request *vnets, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_t *v =
		    json_pack("{s:s, s:I}", "name", vnets[i].name, "vni", (json_int_t)vnets[i].vni);

		if (!v || json_array_append_new(arr, v) < 0)
			return -ENOMEM;
	}
	return 0;
}

static bool name_listed(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(names[i], name))
			return true;
	}
	return false;
}

/* The same node set, in any order: --nodes pve2,pve1 is the zone of ["pve1", "pve2"]. */
static bool same_members(const struct cluster *c, const struct zone *have,
			 const struct zone_request *z)
{
	if (!z->nodes)
		return !(have->flags & ZONE_HAS_NODES);
	if (!(have->flags & ZONE_HAS_NODES) || have->n_members != z->n_nodes)
		return false;
	for (size_t i = 0; i < z->n_nodes; i++) {
		int idx = cluster_find_node(c, z->nodes[i]);

		if (idx < 0 || !zone_has_member(have, (size_t)idx))
			return false;
	}
	for (size_t j = 0; j < have->n_members; j++) {
		if (!name_listed(z->nodes, z->n_nodes, c->nodes[have->members[j]].name))
			return false;
	}
	return true;
}

/* zone z is already zones[idx]: unchanged when it is as asked, an error otherwise */
static int zone_exists(const struct cluster *c, size_t idx, const struct zone_request *z,
		       struct bootstrap_result *res, struct diag *d)
{
	const struct zone *have = &c->zones[idx];
	const char *transport = have->transport == TRANSPORT_SECURE ? "secure" : "plain";
	bool same = !strcmp(transport, z->transport) && same_members(c, have, z) &&
		    !strcmp(have->pve_zone, z->pve_zone ? z->pve_zone : "");
	char path[64];

	for (size_t i = 0; same && i < z->n_vnets; i++) {
		const struct vnet *v = find_vnet(have, z->vnets[i].name);

		same = v && (long long)v->vni == z->vnets[i].vni;
	}
	if (same) {
		res->outcome = BOOTSTRAP_UNCHANGED;
		return 0;
	}
	snprintf(path, sizeof(path), "zones[%zu]", idx);
	diag_add(d, path,
		 "zone %s already exists (transport %s, %zu vnets, %s) and differs from what "
		 "was asked: nothing was changed; add vnets with `fabricd vnet add --zone %s "
		 "NAME:VNI`, switch its transport with `fabricd set-transport %s plain|secure`, "
		 "change its node list by editing zones[%zu].nodes (`fabricd check` validates "
		 "the file, the daemons follow; removing the zone would remove its vnets on "
		 "every node), or remove it first with `fabricd zone remove %s`",
		 have->name, transport, have->n_vnets,
		 have->flags & ZONE_HAS_NODES ? "its own node list" : "on every node", have->name,
		 have->name, idx, have->name);
	return -EINVAL;
}

static json_t *zone_object(const struct zone_request *z)
{
	json_t *obj = json_pack("{s:s, s:s}", "name", z->name, "transport", z->transport);
	json_t *nodes = z->nodes ? json_array() : NULL, *vnets = json_array();
	bool ok = obj && vnets && (!z->nodes || nodes);

	for (size_t i = 0; ok && z->nodes && i < z->n_nodes; i++)
		ok = json_array_append_new(nodes, json_string(z->nodes[i])) == 0;
	ok = ok && append_vnets(vnets, z->vnets, z->n_vnets) == 0;
	if (ok && nodes) {
		ok = json_object_set(obj, "nodes", nodes) == 0;
	}
	if (ok && z->pve_zone)
		ok = json_object_set_new(obj, "pve_zone", json_string(z->pve_zone)) == 0;
	if (!z->pve_zone || z->n_vnets) /* a followed zone's vnets are Proxmox's, pins aside */
		ok = ok && json_object_set(obj, "vnets", vnets) == 0;
	json_decref(nodes);
	json_decref(vnets);
	if (!ok) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

int zone_edit_add(const char *text, size_t len, const struct zone_request *z,
		  struct bootstrap_result *res, struct diag *d)
{
	struct cluster *c = NULL;
	json_t *root = NULL, *obj;
	int idx, ret;

	memset(res, 0, sizeof(*res));
	ret = bootstrap_load(text, len, &c, &root, d);
	if (ret < 0)
		return ret;
	idx = find_zone(c, z->name);
	if (idx >= 0) {
		ret = zone_exists(c, (size_t)idx, z, res, d);
		goto out;
	}
	obj = zone_object(z);
	if (!obj || json_array_append_new(json_object_get(root, "zones"), obj) < 0) {
		diag_add(d, "zones", "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	res->outcome = BOOTSTRAP_ADDED;
	res->changed = z->n_vnets;
	ret = bootstrap_finish(root, res, d);
out:
	json_decref(root);
	cluster_free(c);
	return ret;
}

int zone_edit_remove(const char *text, size_t len, const char *name, struct bootstrap_result *res,
		     struct diag *d)
{
	struct cluster *c = NULL;
	json_t *root = NULL;
	int idx, ret;

	memset(res, 0, sizeof(*res));
	ret = bootstrap_load(text, len, &c, &root, d);
	if (ret < 0)
		return ret;
	idx = find_zone(c, name);
	if (idx < 0) {
		res->outcome = BOOTSTRAP_UNCHANGED;
		goto out;
	}
	res->changed = c->zones[idx].n_vnets;
	json_array_remove(json_object_get(root, "zones"), (size_t)idx);
	res->outcome = BOOTSTRAP_REMOVED;
	ret = bootstrap_finish(root, res, d);
out:
	json_decref(root);
	cluster_free(c);
	return ret;
}

/* The vnets of zones[idx] not there yet, appended to its tree; -ENOMEM */
static int add_missing(const struct zone *have, json_t *zone, const struct vnet_request *vnets,
		       size_t n, struct bootstrap_result *res)
{
	json_t *arr = json_object_get(zone, "vnets");

	/* a zone that follows Proxmox may have none: its first pin makes the list */
	if (!arr && (json_object_set_new(zone, "vnets", json_array()) < 0 ||
		     !(arr = json_object_get(zone, "vnets"))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct vnet *v = find_vnet(have, vnets[i].name);

		/* the same name with another VNI is appended: the loader names the clash */
		if (v && (long long)v->vni == vnets[i].vni)
			continue;
		if (append_vnets(arr, &vnets[i], 1) < 0)
			return -ENOMEM;
		res->changed++;
	}
	return 0;
}

int vnet_edit_add(const char *text, size_t len, const char *zone, const struct vnet_request *vnets,
		  size_t n, struct bootstrap_result *res, struct diag *d)
{
	struct cluster *c = NULL;
	json_t *root = NULL;
	char names[256];
	int idx, ret;

	memset(res, 0, sizeof(*res));
	ret = bootstrap_load(text, len, &c, &root, d);
	if (ret < 0)
		return ret;
	idx = find_zone(c, zone);
	if (idx < 0) {
		zone_names(c, names, sizeof(names));
		diag_add(
		    d, "zones",
		    "there is no zone \"%s\" (zones: %s): nothing was changed; create it "
		    "with `fabricd zone add %s --transport plain|secure`, or give one of these",
		    zone, names, zone);
		ret = -EINVAL;
		goto out;
	}
	ret =
	    add_missing(&c->zones[idx], json_array_get(json_object_get(root, "zones"), (size_t)idx),
			vnets, n, res);
	if (ret < 0) {
		diag_add(d, "zones", "out of memory");
		goto out;
	}
	res->outcome = res->changed ? BOOTSTRAP_ADDED : BOOTSTRAP_UNCHANGED;
	if (res->changed)
		ret = bootstrap_finish(root, res, d);
out:
	json_decref(root);
	cluster_free(c);
	return ret;
}

/* Removes vnet name from whichever zone's "vnets" has it; whether one did. */
static bool remove_vnet(json_t *zones, const char *name)
{
	size_t i, j;
	json_t *zone, *v;

	json_array_foreach(zones, i, zone)
	{
		json_t *arr = json_object_get(zone, "vnets");

		json_array_foreach(arr, j, v)
		{
			const char *have = json_string_value(json_object_get(v, "name"));

			if (have && !strcmp(have, name)) {
				json_array_remove(arr, j);
				return true;
			}
		}
	}
	return false;
}

int vnet_edit_remove(const char *text, size_t len, const char *const *names, size_t n,
		     struct bootstrap_result *res, struct diag *d)
{
	struct cluster *c = NULL;
	json_t *root = NULL, *zones;
	int ret;

	memset(res, 0, sizeof(*res));
	ret = bootstrap_load(text, len, &c, &root, d);
	if (ret < 0)
		return ret;
	zones = json_object_get(root, "zones");
	for (size_t i = 0; i < n; i++) {
		size_t off = strlen(res->absent);

		if (remove_vnet(zones, names[i]))
			res->changed++;
		else if (off < sizeof(res->absent))
			snprintf(res->absent + off, sizeof(res->absent) - off, "%s%s",
				 off ? ", " : "", names[i]);
	}
	res->outcome = res->changed ? BOOTSTRAP_REMOVED : BOOTSTRAP_UNCHANGED;
	if (res->changed)
		ret = bootstrap_finish(root, res, d);
	json_decref(root);
	cluster_free(c);
	return ret;
}
