// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check.c - "fabricd check -c FILE": load and validate a definition
 * without touching the kernel. Every problem is listed, one per line, so a
 * file is fixed in one pass; --json gives the same for programs.
 */
#include <stdio.h>

#include <jansson.h>

#include "cli/commands.h"
#include "definition/config.h"
#include "definition/model.h"
#include "definition/pve_follow.h"
#include "base/log.h"

static json_t *string_list(char **items, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		if (json_array_append_new(arr, json_string(items[i])) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static int print_json(bool ok, const struct diag *d)
{
	json_t *doc = json_pack("{s:b, s:o, s:o}", "ok", ok, "errors", string_list(d->msgs, d->n),
				"warnings", string_list(d->warnings, d->n_warnings));
	int ret = -1;

	/* diag strings are UTF-8 from a valid JSON input, or ASCII we wrote */
	if (doc && json_dumpf(doc, stdout, JSON_INDENT(2)) == 0) {
		fputc('\n', stdout);
		ret = 0;
	}
	json_decref(doc);
	return ret;
}

/*
 * The vnets a zone that follows Proxmox will carry: they are not in the
 * file, so what check read from .running-config is shown.
 */
static void print_followed(const struct cluster *c)
{
	for (size_t i = 0; i < c->n_zones; i++) {
		const struct zone *z = &c->zones[i];

		if (!(z->flags & ZONE_PVE_FOLLOW))
			continue;
		printf("zone %s (%s, follows Proxmox zone %s): %zu vnet%s%s", z->name,
		       transport_name(z->transport), z->pve_zone, z->n_vnets,
		       z->n_vnets == 1 ? "" : "s", z->n_vnets ? ":" : "");
		for (size_t k = 0; k < z->n_vnets; k++)
			printf(" %s (VNI %u)%s", z->vnets[k].name, z->vnets[k].vni,
			       k + 1 < z->n_vnets ? "," : "");
		printf("\n");
	}
}

/*
 * check -n NODE: the operator asks whether this file is right for that node;
 * a node the file does not name is the answer "no".
 */
static int check_node(const struct options *o, const struct cluster *c, struct diag *d)
{
	if (!o->node || cluster_find_node(c, o->node) >= 0)
		return 0;
	/* as render, plan and apply say it ("PVE1" was only "not in the definition") */
	if (!name_valid(o->node)) {
		diag_add(d, "nodes",
			 "-n \"%.80s\" is not a node name (lower-case letters, digits and '-', at "
			 "most %d): give the node's name in the definition with -n NODE",
			 o->node, FABRICD_NAME_MAX);
		return -1;
	}
	diag_add(d, "nodes",
		 "node \"%s\" (-n) is not in the definition: give one of its nodes with -n, or "
		 "add this node with `fabricd join -c FILE`",
		 o->node);
	return -1;
}

int cmd_check(const struct options *o)
{
	struct cluster *c = NULL;
	struct diag d;
	size_t vnets = 0;
	int ret;

	diag_init(&d);
	ret = definition_load_file(o->config, &c, &d); /* with Proxmox's vnets */
	if (ret == 0)
		ret = check_node(o, c, &d);
	if (o->json) {
		if (print_json(ret == 0, &d) < 0) {
			log_error("check: out of memory writing JSON");
			ret = -1;
		}
	} else if (ret == 0) {
		for (size_t i = 0; i < c->n_zones; i++)
			vnets += c->zones[i].n_vnets;
		printf("%s: ok (%zu node%s, %zu zone%s, %zu vnet%s)\n", o->config, c->n_nodes,
		       c->n_nodes == 1 ? "" : "s", c->n_zones, c->n_zones == 1 ? "" : "s", vnets,
		       vnets == 1 ? "" : "s");
		print_followed(c);
		diag_print(&d, stderr);
	} else {
		diag_print(&d, stderr);
	}
	cluster_free(c);
	diag_free(&d);
	return ret == 0 ? 0 : 1;
}
