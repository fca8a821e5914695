// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/pve_running.c - .running-config JSON -> pve_file sections (see
 * pve_running.h). Perl's to_json writes keys in hash order, so sections are
 * sorted by id to make the import reproducible.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "definition/config.h"
#include "definition/pve_running.h"

#define RUNNING ".running-config"
/* what to do about a .running-config that cannot be read */
#define TODO "run SDN \"Apply\" in Proxmox again (it writes this file)"

/* A scalar as the *.cfg file would hold it; NULL for containers. */
static int scalar_text(const json_t *v, char *buf, size_t len, const char **out)
{
	*out = buf;
	if (json_is_string(v))
		*out = json_string_value(v);
	else if (json_is_integer(v))
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%.17g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%d", json_is_true(v) ? 1 : 0);
	else
		return -EINVAL;
	return 0;
}

/* {"hv1":1,"hv2":1} (a decoded node set) -> "hv1,hv2" */
static char *set_text(const json_t *obj)
{
	const char *k;
	json_t *v;
	size_t len = 1;
	char *s;

	json_object_foreach((json_t *)obj, k, v)
	{
		len += strlen(k) + 1;
	}
	s = calloc(1, len);
	if (!s)
		return NULL;
	json_object_foreach((json_t *)obj, k, v)
	{
		if (*s)
			strcat(s, ",");
		strcat(s, k);
	}
	return s;
}

static int add_value(struct pve_section *s, const char *key, const json_t *v, const char *where,
		     struct diag *diag)
{
	char buf[64];
	const char *text;
	size_t i;
	json_t *item;
	int ret;

	if (json_is_null(v))
		return 0;
	if (json_is_object(v)) {
		char *joined = set_text(v);

		if (!joined)
			return -ENOMEM;
		ret = pve_section_add(s, key, joined, 0);
		free(joined);
		return ret;
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, item)
		{
			if ((ret = add_value(s, key, item, where, diag)) < 0)
				return ret;
		}
		return 0;
	}
	if (scalar_text(v, buf, sizeof(buf), &text) < 0) {
		diag_warn(diag, where, "key %s has a value of an unexpected type; ignored", key);
		return 0;
	}
	return pve_section_add(s, key, text, 0);
}

static int add_section(struct pve_file *f, const char *part, const char *id, const json_t *obj,
		       struct diag *diag)
{
	const json_t *type = json_object_get(obj, "type");
	struct pve_section *s;
	char where[PVE_WHERE_LEN];
	const char *k;
	json_t *v;
	int ret;

	snprintf(where, sizeof(where), "%s %s.ids.%s", RUNNING, part, id);
	if (!json_is_object(obj) || !json_is_string(type)) {
		diag_warn(diag, where, "not an object with a \"type\"; ignored");
		return 0;
	}
	s = pve_file_add_section(f, json_string_value(type), id, 0);
	if (!s)
		return -ENOMEM;
	json_object_foreach((json_t *)obj, k, v)
	{
		/* "type" is the header; "id" repeats it for fabric entries; "digest" is Proxmox's
		 */
		if (!strcmp(k, "type") || !strcmp(k, "id") || !strcmp(k, "digest"))
			continue;
		if ((ret = add_value(s, k, v, where, diag)) < 0)
			return ret;
	}
	return 0;
}

static int read_part(const json_t *root, const char *part, struct pve_file *f, struct diag *diag)
{
	const json_t *ids = json_object_get(json_object_get(root, part), "ids");
	const char *id;
	json_t *obj;
	int ret;

	if (!ids)
		return 0;
	if (!json_is_object(ids)) {
		diag_add(diag, RUNNING, "\"%s.ids\" is not an object; is this a Proxmox file?",
			 part);
		return -EINVAL;
	}
	json_object_foreach((json_t *)ids, id, obj)
	{
		if ((ret = add_section(f, part, id, obj, diag)) < 0)
			return ret;
	}
	pve_file_sort(f);
	return 0;
}

int pve_running_parse(const char *text, size_t len, struct pve_running *out, struct diag *diag)
{
	static const char *const parts[] = {"zones", "vnets", "subnets", "controllers", "fabrics"};
	struct pve_file *files[] = {&out->zones, &out->vnets, &out->subnets, &out->controllers,
				    &out->fabrics};
	static const char *const names[] = {RUNNING " (zones)", RUNNING " (vnets)",
					    RUNNING " (subnets)", RUNNING " (controllers)",
					    RUNNING " (fabrics)"};
	json_error_t jerr;
	json_t *root, *version;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < 5; i++) {
		files[i]->name = names[i];
		files[i]->dialect = i == 4 ? PVE_DIALECT_RUST : PVE_DIALECT_PERL;
	}
	out->version = -1;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!json_is_object(root)) {
		/* a duplicate key by its JSON path, a syntax error by its line and column */
		if (root || config_json_check(text, len, RUNNING, TODO, diag) == 0)
			diag_add(diag, RUNNING, "not a JSON object; %s", TODO);
		json_decref(root);
		return -EINVAL;
	}
	version = json_object_get(root, "version");
	if (json_is_integer(version))
		out->version = (long)json_integer_value(version);
	for (size_t i = 0; i < 5 && ret == 0; i++)
		ret = read_part(root, parts[i], files[i], diag);
	json_decref(root);
	if (ret < 0)
		pve_running_free(out);
	return ret;
}

void pve_running_free(struct pve_running *r)
{
	if (!r)
		return;
	pve_file_free(&r->zones);
	pve_file_free(&r->vnets);
	pve_file_free(&r->subnets);
	pve_file_free(&r->controllers);
	pve_file_free(&r->fabrics);
}
