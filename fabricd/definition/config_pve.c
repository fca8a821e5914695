// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/config_pve.c - the definition's keys that follow Proxmox VE's SDN: a zone's
 * "pve_zone" (its vnets come from that Simple zone's .running-config, its bridges are
 * Proxmox's) with its "vni_range", and the top-level "pve_sdn_dir".
 */
#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "definition/config_priv.h"
#include "definition/model.h"

/* A Proxmox zone or vnet id as Proxmox allows it: a letter, then letters and digits, 2..8. */
static bool pve_id_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 2 || n > PVE_ZONE_ID_MAX || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
		return false;
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return false;
	}
	return true;
}

/* "vni_range": [first, last], both 1..16777215, first <= last. */
static void load_vni_range(struct config_loader *l, json_t *obj, const char *path, struct zone *z)
{
	char p[CONFIG_PATH_LEN], t[CONFIG_VALUE_LEN];
	json_t *arr;
	long long a, b;

	z->vni_first = PVE_VNI_FIRST;
	z->vni_last = PVE_VNI_LAST;
	if (config_get_container(l, obj, path, "vni_range", NULL, true, p, &arr) <= 0)
		return;
	if (json_array_size(arr) != 2 || !config_json_int(json_array_get(arr, 0), &a) ||
	    !config_json_int(json_array_get(arr, 1), &b) || a < 1 || b > 16777215 || a > b) {
		config_error(&l->r, p,
			     "%s is not a VNI range; give [first, last], integers 1..16777215 with "
			     "first <= last, e.g. [%u, %u] (the default)",
			     config_jtext(arr, t, sizeof(t)), PVE_VNI_FIRST, PVE_VNI_LAST);
		return;
	}
	z->vni_first = (uint32_t)a;
	z->vni_last = (uint32_t)b;
}

/*
 * "pve_zone": the zone carries the vnets of this Proxmox Simple zone, read
 * from .running-config (pve_follow.h); the bridges are then Proxmox's.
 * Returns whether the key is there (the zone's "vnets" are then optional).
 */
bool config_load_pve_zone(struct config_loader *l, json_t *obj, const char *path, struct zone *z)
{
	char p[CONFIG_PATH_LEN], q[CONFIG_VALUE_LEN];
	const char *s;
	json_t *v;
	int ret = config_get_string(l, obj, path, "pve_zone", NULL, p, &s);

	if (ret == 0) {
		if (config_get_value(l, obj, path, "vni_range", NULL, p, &v) > 0)
			config_error(&l->r, p,
				     "is for a zone that follows a Proxmox Simple zone; add "
				     "\"pve_zone\": \"<its id>\" or remove the key");
		return false;
	}
	z->flags |= ZONE_PVE_FOLLOW;
	if (ret > 0 && !pve_id_ok(s))
		config_error(&l->r, p,
			     "%s is not a Proxmox zone id (a letter, then letters and digits, 2..8 "
			     "characters); give the id of the Simple zone as Proxmox shows it",
			     config_quote(s, q, sizeof(q)));
	else if (ret > 0)
		memcpy(z->pve_zone, s, strlen(s) + 1);
	if (config_get_value(l, obj, path, "bridges", NULL, p, &v) > 0 && json_is_string(v) &&
	    !strcmp(json_string_value(v), "own"))
		config_error(&l->r, p,
			     "\"own\" cannot be: a Proxmox Simple zone's bridges are Proxmox's; "
			     "remove the key (\"pve_zone\" implies \"existing\")");
	z->flags |= ZONE_EXISTING_BRIDGES;
	load_vni_range(l, obj, path, z);
	return true;
}

/* "pve_sdn_dir": an absolute directory, default Proxmox's /etc/pve/sdn. */
void config_load_sdn_dir(struct config_loader *l, json_t *root)
{
	char p[CONFIG_PATH_LEN], q[CONFIG_VALUE_LEN];
	const char *s = "/etc/pve/sdn";

	if (config_get_string(l, root, "", "pve_sdn_dir", NULL, p, &s) < 0)
		return;
	if (s[0] != '/' || strlen(s) > FABRICD_SDN_DIR_MAX)
		config_error(&l->r, p,
			     "%s is not an absolute path of at most %d bytes; give Proxmox's SDN "
			     "directory, /etc/pve/sdn (the default)",
			     config_quote(s, q, sizeof(q)), FABRICD_SDN_DIR_MAX);
	else
		memcpy(l->c->pve_sdn_dir, s, strlen(s) + 1);
}
