// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/pve_follow.c - a zone's vnets from a Proxmox Simple zone in
 * .running-config, VNIs derived from the vnet names (see pve_follow.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "definition/config.h"
#include "definition/pve_follow.h"
#include "definition/pve_load.h"

/* The vnets one following zone will carry, and where each came from. */
struct followed {
	size_t n;
	struct vnet *vnets;
	bool *derived;			 /* VNI from the name, not a pin */
	const struct pve_section **secs; /* Proxmox's section of each */
	bool has_members;		 /* Proxmox's zone names its nodes */
	unsigned int pve_mtu;		 /* its "mtu", 0 when unset */
	size_t n_members;
	size_t *members; /* indices into cluster.nodes, definition order */
};

/* What the check sees: the new vnets of following zones, the definition's of the others. */
struct view {
	const struct cluster *c;
	const struct pve_running *r;
	struct followed *f; /* one per zone; n_vnets 0 for zones that do not follow */
};

bool pve_follows(const struct cluster *c)
{
	for (size_t i = 0; i < c->n_zones; i++) {
		if (c->zones[i].flags & ZONE_PVE_FOLLOW)
			return true;
	}
	return false;
}

void pve_follow_path(const struct cluster *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s/.running-config",
		 c->pve_sdn_dir[0] ? c->pve_sdn_dir : "/etc/pve/sdn");
}

uint32_t pve_follow_vni(const char *id, uint32_t first, uint32_t last)
{
	uint32_t h = 2166136261U; /* FNV-1a: the same on every node, any architecture */

	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		h = (h ^ *p) * 16777619U;
	return first + h % (last - first + 1);
}

static const struct pve_section *find_section(const struct pve_file *f, const char *id)
{
	for (size_t i = 0; i < f->n; i++) {
		if (!strcmp(f->sections[i].id, id))
			return &f->sections[i];
	}
	return NULL;
}

static const char *vnet_zone(const struct pve_section *s)
{
	const struct pve_kv *kv = pve_section_get(s, "zone", NULL);

	return kv && kv->value ? kv->value : "";
}

/* A bridge name fabricd can carry: a-z, 0-9, 1..15 bytes, not one of its own devices. */
static const char *vnet_name_problem(const char *id)
{
	const char *p;

	if (strlen(id) > FABRICD_IFNAME_MAX)
		return "is longer than an interface name (15 bytes)";
	for (p = id; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			return "has characters other than a-z and 0-9 (fabricd's vnet names are "
			       "lower case)";
	}
	if (name_reserved(id))
		return "is the name of a device fabricd creates itself (wgfab0, vx<VNI>, vs<VNI>)";
	if (name_kernel_refuses(id))
		return "cannot be an interface name (the kernel refuses \"all\" and \"default\", "
		       "and every network namespace has \"lo\")";
	return NULL;
}

static void followed_free(struct followed *f)
{
	free(f->vnets);
	free(f->derived);
	free(f->secs);
	free(f->members);
	memset(f, 0, sizeof(*f));
}

/* The Simple zone z follows, or NULL with the problem in d. */
static const struct pve_section *simple_zone(const struct cluster *c, size_t i,
					     const struct pve_running *r, struct diag *d)
{
	const struct zone *z = &c->zones[i];
	const struct pve_section *s = find_section(&r->zones, z->pve_zone);
	char path[64], where[PVE_WHERE_LEN];

	snprintf(path, sizeof(path), "zones[%zu].pve_zone", i);
	for (size_t j = 0; j < i; j++) {
		if ((c->zones[j].flags & ZONE_PVE_FOLLOW) &&
		    !strcmp(c->zones[j].pve_zone, z->pve_zone)) {
			diag_add(d, path,
				 "Proxmox zone %s is followed by zones[%zu] already; let one zone "
				 "of the definition follow it",
				 z->pve_zone, j);
			return NULL;
		}
	}
	if (!s) {
		diag_add(d, path,
			 "Proxmox has no zone %s in %s; create it as a Simple zone (Datacenter > "
			 "SDN > Zones) and Apply, or give the id of an existing one",
			 z->pve_zone, r->zones.name);
		return NULL;
	}
	if (strcmp(s->type, "simple")) {
		diag_add(d, pve_where(where, &r->zones, s, NULL),
			 "is a %s zone, which Proxmox builds itself; zones[%zu] (%s) follows "
			 "Simple zones only: move the vnets to a Simple zone in Proxmox, or use "
			 "`fabricd run --sdn-dir` for VXLAN zones",
			 s->type, i, z->name);
		return NULL;
	}
	return s;
}

/*
 * Proxmox's zone "nodes" (its bridges exist there only) become the zone's
 * members, unless the definition lists them itself. Names are matched
 * lower-cased, as import-pve writes them; one fabricd does not know is said.
 */
static int follow_members(const struct cluster *c, size_t i, const struct pve_section *zs,
			  const struct pve_running *r, struct followed *f, struct diag *d)
{
	const struct pve_kv *kv = pve_section_get(zs, "nodes", NULL);
	char where[PVE_WHERE_LEN];
	char **items = NULL;
	int n;

	if (!kv || !kv->value || (c->zones[i].flags & ZONE_HAS_NODES))
		return 0;
	n = pve_split_list(kv->value, &items);
	if (n <= 0) {
		pve_strv_free(items); /* none listed: every node, as in Proxmox */
		return n;
	}
	f->members = calloc(c->n_nodes ? c->n_nodes : 1, sizeof(*f->members));
	if (!f->members) {
		pve_strv_free(items);
		return -ENOMEM;
	}
	f->has_members = true;
	for (size_t k = 0; k < c->n_nodes; k++) {
		for (int m = 0; m < n; m++) {
			if (!strcasecmp(items[m], c->nodes[k].name)) {
				f->members[f->n_members++] = k;
				break;
			}
		}
	}
	for (int m = 0; m < n; m++) {
		bool known = false;

		for (size_t k = 0; k < f->n_members && !known; k++)
			known = !strcasecmp(items[m], c->nodes[f->members[k]].name);
		if (!known)
			diag_warn(
			    d, pve_where(where, &r->zones, zs, "nodes"),
			    "%s is not a node of the definition; zone %s is not carried there",
			    items[m], c->zones[i].name);
	}
	pve_strv_free(items);
	return 0;
}

/* A boolean key of a vnet set true (1, or a bare key in the Perl files). */
static bool vnet_flag(const struct pve_file *f, const struct pve_section *s, const char *key)
{
	const struct pve_kv *kv = pve_section_get(s, key, NULL);
	bool on = false;

	return kv && pve_parse_bool(f->dialect, kv->value, &on) == 0 && on;
}

/* Fills f with Proxmox's vnets of zone i; pins come from the definition. 0 or -errno. */
static int collect(const struct cluster *c, size_t i, const struct pve_running *r,
		   struct followed *f, struct diag *d)
{
	const struct zone *z = &c->zones[i];
	char where[PVE_WHERE_LEN];
	size_t n = 0;
	int ret = 0;

	for (size_t k = 0; k < r->vnets.n; k++)
		n += !strcmp(vnet_zone(&r->vnets.sections[k]), z->pve_zone);
	f->vnets = calloc(n ? n : 1, sizeof(*f->vnets));
	f->derived = calloc(n ? n : 1, sizeof(*f->derived));
	f->secs = calloc(n ? n : 1, sizeof(*f->secs));
	if (!f->vnets || !f->derived || !f->secs)
		return -ENOMEM;
	for (size_t k = 0; k < r->vnets.n; k++) {
		const struct pve_section *s = &r->vnets.sections[k];
		const char *problem = vnet_name_problem(s->id);
		struct vnet *v = &f->vnets[f->n];

		if (strcmp(vnet_zone(s), z->pve_zone))
			continue;
		pve_where(where, &r->vnets, s, NULL);
		if (problem) {
			diag_add(d, where,
				 "the vnet id %s; fabricd cannot carry it in zone %s: rename the "
				 "vnet in Proxmox (a-z and 0-9) and Apply",
				 problem, z->name);
			ret = -EINVAL; /* and the other vnets' problems too */
			continue;
		}
		if (vnet_flag(&r->vnets, s, "vlanaware"))
			pve_warn_vlanaware(d, where, z->name);
		if (vnet_flag(&r->vnets, s, "isolate-ports")) {
			diag_add(
			    d, pve_where(where, &r->vnets, s, "isolate-ports"),
			    "fabricd cannot carry vnet %s: Proxmox isolates its guests' ports, "
			    "and fabricd's VXLAN ports are isolated too (a vnet's plain and "
			    "secure devices must never forward to each other), so its guests "
			    "would reach no other node; clear isolate-ports on the vnet in "
			    "Proxmox and Apply",
			    s->id);
			ret = -EINVAL; /* and the other vnets' problems too */
			continue;
		}
		snprintf(v->name, sizeof(v->name), "%s", s->id);
		v->vni = pve_follow_vni(s->id, z->vni_first, z->vni_last);
		f->derived[f->n] = true;
		for (size_t p = 0; p < z->n_vnets; p++) {
			if (!strcmp(z->vnets[p].name, s->id)) {
				*v = z->vnets[p];
				f->derived[f->n] = false;
			}
		}
		f->secs[f->n++] = s;
	}
	return ret;
}

/* Pins for vnets Proxmox does not have (any more): not carried, said once. */
static void warn_stale_pins(const struct cluster *c, size_t i, const struct followed *f,
			    struct diag *d)
{
	const struct zone *z = &c->zones[i];
	char path[64];

	for (size_t p = 0; p < z->n_vnets; p++) {
		bool found = false;

		for (size_t k = 0; k < f->n && !found; k++)
			found = !strcmp(f->vnets[k].name, z->vnets[p].name);
		if (found)
			continue;
		snprintf(path, sizeof(path), "zones[%zu].vnets[%zu]", i, p);
		diag_warn(d, path,
			  "vnet %s is pinned but Proxmox zone %s has no such vnet; not carried "
			  "(remove the pin, or create the vnet in Proxmox)",
			  z->vnets[p].name, z->pve_zone);
	}
}

static const struct vnet *view_vnet(const struct view *w, size_t i, size_t k)
{
	return w->f[i].vnets ? &w->f[i].vnets[k] : &w->c->zones[i].vnets[k];
}

static size_t view_n(const struct view *w, size_t i)
{
	return w->f[i].vnets ? w->f[i].n : w->c->zones[i].n_vnets;
}

/* Names vnet k of zone i for a message: Proxmox's section, or the definition's path. */
static const char *describe(const struct view *w, size_t i, size_t k, char *buf, size_t len)
{
	char where[PVE_WHERE_LEN];

	if (w->f[i].vnets)
		snprintf(buf, len, "%s (zone %s, VNI %s)",
			 pve_where(where, &w->r->vnets, w->f[i].secs[k], NULL), w->c->zones[i].name,
			 w->f[i].derived[k] ? "from its name" : "pinned");
	else
		snprintf(buf, len, "zones[%zu].vnets[%zu] (%s)", i, k, view_vnet(w, i, k)->name);
	return buf;
}

static bool vni_used(const struct view *w, uint32_t vni)
{
	for (size_t i = 0; i < w->c->n_zones; i++) {
		for (size_t k = 0; k < view_n(w, i); k++) {
			if (view_vnet(w, i, k)->vni == vni)
				return true;
		}
	}
	return false;
}

/* A VNI in zone i's range no vnet has, searched from vni on (for the message). */
static uint32_t free_vni(const struct view *w, size_t i, uint32_t vni)
{
	const struct zone *z = &w->c->zones[i];

	for (uint32_t n = 0; n < 4096; n++) {
		uint32_t v =
		    vni + n > z->vni_last ? z->vni_first + (vni + n - z->vni_last - 1) : vni + n;

		if (!vni_used(w, v))
			return v;
	}
	return vni;
}

/* The one that is derived is reported (it is the one to pin); else the later one. */
static void report_vni(const struct view *w, size_t i, size_t k, size_t j, size_t m, struct diag *d)
{
	char a[PVE_WHERE_LEN + 64], b[PVE_WHERE_LEN + 64];
	size_t ri = i, rk = k, oi = j, ok = m;
	const struct vnet *v;

	if (!(w->f[i].vnets && w->f[i].derived[k]) && w->f[j].vnets && w->f[j].derived[m]) {
		ri = j, rk = m, oi = i, ok = k;
	}
	v = view_vnet(w, ri, rk);
	describe(w, oi, ok, b, sizeof(b));
	if (w->f[ri].vnets && w->f[ri].derived[rk] && w->f[oi].vnets && w->f[oi].derived[ok])
		diag_add(d, describe(w, ri, rk, a, sizeof(a)),
			 "VNI %u is also the VNI of %s; pin the vnet added last to a free VNI "
			 "(the other keeps its VNI) in its zone's \"vnets\": {\"name\": \"%s\", "
			 "\"vni\": %u} (zone %s) or {\"name\": \"%s\", \"vni\": %u} (zone %s)",
			 v->vni, b, v->name, free_vni(w, ri, v->vni), w->c->zones[ri].name,
			 view_vnet(w, oi, ok)->name, free_vni(w, oi, v->vni), w->c->zones[oi].name);
	else if (w->f[ri].vnets && w->f[ri].derived[rk])
		diag_add(d, describe(w, ri, rk, a, sizeof(a)),
			 "VNI %u is also the VNI of %s; pin this vnet to a free VNI in zone %s's "
			 "\"vnets\": {\"name\": \"%s\", \"vni\": %u}",
			 v->vni, b, w->c->zones[ri].name, v->name, free_vni(w, ri, v->vni));
	else
		diag_add(d, describe(w, ri, rk, a, sizeof(a)),
			 "VNI %u is also the VNI of %s; give each vnet its own VNI", v->vni, b);
}

/* Names and VNIs unique across the cluster. Returns the number of problems. */
static unsigned int check_unique(const struct view *w, struct diag *d)
{
	char a[PVE_WHERE_LEN + 64], b[PVE_WHERE_LEN + 64];
	unsigned int errors = 0;

	for (size_t i = 0; i < w->c->n_zones; i++) {
		for (size_t k = 0; k < view_n(w, i); k++) {
			const struct vnet *v = view_vnet(w, i, k);

			for (size_t j = 0; j <= i; j++) {
				for (size_t m = 0; m < (j == i ? k : view_n(w, j)); m++) {
					const struct vnet *o = view_vnet(w, j, m);

					if (!strcmp(v->name, o->name)) {
						errors++;
						diag_add(d, describe(w, i, k, a, sizeof(a)),
							 "bridge %s is also %s; vnet names must be "
							 "unique in the cluster: rename one",
							 v->name, describe(w, j, m, b, sizeof(b)));
					} else if (v->vni == o->vni) {
						errors++;
						report_vni(w, i, k, j, m, d);
					}
				}
			}
		}
	}
	return errors;
}

/* The zone's "mtu" (its guests' MTU in Proxmox), 0 when unset or not a number. */
static unsigned int zone_mtu(const struct pve_section *zs)
{
	const struct pve_kv *kv = pve_section_get(zs, "mtu", NULL);
	unsigned long v;
	char *end;

	if (!kv || !kv->value)
		return 0;
	v = strtoul(kv->value, &end, 10);
	return *end || v > 65535 ? 0 : (unsigned int)v;
}

static int build(const struct cluster *c, const struct pve_running *r, struct followed *f,
		 struct diag *d)
{
	struct view w = {.c = c, .r = r, .f = f};
	int ret = 0;

	for (size_t i = 0; i < c->n_zones; i++) {
		if (!(c->zones[i].flags & ZONE_PVE_FOLLOW))
			continue;
		const struct pve_section *zs = simple_zone(c, i, r, d);
		int one;

		if (!zs) {
			ret = -EINVAL;
			continue;
		}
		one = collect(c, i, r, &f[i], d);
		if (one == 0)
			one = follow_members(c, i, zs, r, &f[i], d);
		if (one == 0)
			f[i].pve_mtu = zone_mtu(zs);

		if (one == -ENOMEM)
			return one;
		if (one < 0)
			ret = one;
		else
			warn_stale_pins(c, i, &f[i], d);
	}
	if (ret == 0 && check_unique(&w, d))
		ret = -EINVAL;
	return ret;
}

int pve_follow_apply(struct cluster *c, const struct pve_running *r, struct diag *d)
{
	struct followed *f = calloc(c->n_zones ? c->n_zones : 1, sizeof(*f));
	int ret;

	if (!f)
		return -ENOMEM;
	ret = build(c, r, f, d);
	for (size_t i = 0; i < c->n_zones; i++) {
		struct zone *z = &c->zones[i];

		if (ret == 0 && f[i].vnets) {
			free(z->vnets);
			z->vnets = f[i].vnets;
			z->n_vnets = f[i].n;
			f[i].vnets = NULL;
		}
		if (ret == 0 && (z->flags & ZONE_PVE_FOLLOW))
			z->pve_mtu = f[i].pve_mtu;
		if (ret == 0 && f[i].has_members) {
			free(z->members);
			z->members = f[i].members;
			z->n_members = f[i].n_members;
			f[i].members = NULL;
		}
		followed_free(&f[i]);
	}
	free(f);
	return ret;
}

int pve_follow_load(struct cluster *c, struct diag *d)
{
	struct pve_running r;
	char path[PATH_MAX];
	char *text;
	size_t len;
	int ret;

	if (!pve_follows(c))
		return 0;
	pve_follow_path(c, path, sizeof(path));
	ret = pve_read_file(path, &text, &len);
	if (ret < 0) {
		diag_add(d, path,
			 "cannot read: %s; a zone with \"pve_zone\" takes its vnets from "
			 "Proxmox's deployed SDN configuration: run SDN \"Apply\" in Proxmox "
			 "(Datacenter > SDN), or set \"pve_sdn_dir\" to where it is "
			 "(fabricd down works without it)",
			 strerror(-ret));
		return ret;
	}
	ret = pve_running_parse(text, len, &r, d);
	free(text);
	if (ret == -EINVAL)
		diag_add(d, path,
			 "not Proxmox's deployed SDN configuration (above): run SDN \"Apply\" "
			 "in Proxmox (Datacenter > SDN) to write it again, or set "
			 "\"pve_sdn_dir\" to where it is (fabricd down works without it)");
	if (ret == 0)
		ret = pve_follow_apply(c, &r, d);
	pve_running_free(&r);
	return ret;
}

int definition_load_file(const char *path, struct cluster **out, struct diag *d)
{
	int ret = config_load_file(path, out, d);

	if (ret == 0 && (ret = pve_follow_load(*out, d)) < 0) {
		cluster_free(*out);
		*out = NULL;
	}
	return ret;
}
