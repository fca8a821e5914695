// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli/zone.c - zones and vnets without editing JSON by hand:
 *
 *   fabricd zone add -c FILE ZONE --transport plain|secure [--vnet NAME:VNI]...
 *                    [--nodes NODE,...] [--pve-zone ID]
 *   fabricd zone remove -c FILE ZONE
 *   fabricd vnet add -c FILE --zone ZONE NAME:VNI...
 *   fabricd vnet remove -c FILE NAME...
 *
 * The edit is the one init/join/leave make (cli/member.c: the definition's
 * lock, the edit on its text, validation, an atomic replace); a zone without
 * --nodes is on every node, so nodes that join later carry it too.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cli/commands.h"
#include "cli/getopt_say.h"
#include "cli/member.h"
#include "definition/model.h"
#include "definition/zone_edit.h"

#define MAX_ITEMS 256 /* vnets or nodes in one command */

struct zone_args {
	struct options o;   /* o.config: -c FILE, or the default */
	const char *config; /* -c FILE as given */
	const char *action;
	const char *zone;      /* zone add|remove: the positional; vnet add: --zone */
	const char *transport; /* --transport */
	struct vnet_request vnets[MAX_ITEMS];
	size_t n_vnets;
	const char *names[MAX_ITEMS]; /* vnet remove: the positionals; zone add: --nodes */
	size_t n_names;
	bool has_nodes;
	char *nodes_copy;
	const char *pve_zone; /* --pve-zone: follow this Proxmox Simple zone */
};

static const char zone_usage[] =
    "usage: fabricd zone add -c FILE ZONE --transport plain|secure [--vnet NAME:VNI]... "
    "[--nodes NODE,...] [--pve-zone ID]\n"
    "       fabricd zone remove -c FILE ZONE\n"
    "       (and --lock-wait SECONDS: how long to wait for another edit of FILE, default 30)";
static const char vnet_usage[] =
    "usage: fabricd vnet add -c FILE --zone ZONE NAME:VNI...\n"
    "       fabricd vnet remove -c FILE NAME...\n"
    "       (and --lock-wait SECONDS: how long to wait for another edit of FILE, default 30)";

static int add_vnet(struct zone_args *a, const char *arg, const char *option)
{
	struct diag d;
	int ret;

	if (a->n_vnets == MAX_ITEMS) {
		log_error("%s: at most %d vnets in one command", option, MAX_ITEMS);
		return -1;
	}
	diag_init(&d);
	ret = vnet_request_parse(arg, option, &a->vnets[a->n_vnets], &d);
	diag_print(&d, stderr);
	diag_free(&d);
	if (ret < 0)
		return -1;
	a->n_vnets++;
	return 0;
}

/*
 * A single-valued option into *field: given again with another value it is
 * refused (the last one won unseen: `--zone a --zone b` added to b). 0, or -1 (said).
 */
static int take_once(const char **field, const char *name, const char *arg, const char *hint)
{
	if (!arg[0]) {
		log_error("%s \"\": give a value%s", name, hint);
		return -1;
	}
	if (*field && strcmp(*field, arg)) {
		log_error("%s given twice (\"%s\", then \"%s\"): give it once%s", name, *field, arg,
			  hint);
		return -1;
	}
	*field = arg;
	return 0;
}

/* --nodes a,b,c into a->names */
static int split_nodes(struct zone_args *a, const char *list)
{
	char *save = NULL, *tok;

	/* a second --nodes replaced the first: `--nodes pve1 --nodes pve2` was pve2 alone */
	if (a->has_nodes) {
		log_error("--nodes given twice: give one comma-separated list, such as --nodes "
			  "pve1,pve2");
		return -1;
	}
	a->nodes_copy = strdup(list);
	if (!a->nodes_copy) {
		log_error("out of memory");
		return -1;
	}
	a->has_nodes = true;
	a->n_names = 0;
	for (tok = strtok_r(a->nodes_copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (a->n_names == MAX_ITEMS) {
			log_error("--nodes: at most %d nodes", MAX_ITEMS);
			return -1;
		}
		a->names[a->n_names++] = tok;
	}
	if (!a->n_names) {
		log_error("--nodes \"%s\": give node names separated by commas, or leave --nodes "
			  "out to put the zone on every node",
			  list);
		return -1;
	}
	return 0;
}

enum { OPT_TRANSPORT = 256, OPT_VNET, OPT_NODES, OPT_ZONE, OPT_PVE_ZONE, OPT_LOCK_WAIT };

static int parse_one(struct zone_args *a, int c, const char *usage)
{
	switch (c) {
	case 'c':
		if (take_once(&a->config, "-c", optarg, " (the definition file's path)") < 0)
			return -1;
		a->o.config = optarg;
		return 0;
	case 'v':
		log_set_verbose(true);
		return 0;
	case OPT_TRANSPORT:
		return take_once(&a->transport, "--transport", optarg, " (plain or secure)");
	case OPT_VNET:
		return add_vnet(a, optarg, "--vnet");
	case OPT_NODES:
		return split_nodes(a, optarg);
	case OPT_ZONE:
		return take_once(&a->zone, "--zone", optarg, " (the zone the vnets go into)");
	case OPT_PVE_ZONE:
		return take_once(&a->pve_zone, "--pve-zone", optarg, " (a Proxmox Simple zone)");
	case OPT_LOCK_WAIT:
		return cli_parse_seconds("lock-wait", optarg, 3600, &a->o.lock_wait);
	case 'h':
		printf("%s\n", usage);
		exit(cli_exit_status(0));
	default:
		return -1; /* said by parse_args() */
	}
}

/* argv[0] is "zone" or "vnet", then the action and its arguments, options anywhere */
static int parse_args(int argc, char **argv, struct zone_args *a, const char *usage)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"transport", required_argument, NULL, OPT_TRANSPORT},
	    {"vnet", required_argument, NULL, OPT_VNET},
	    {"nodes", required_argument, NULL, OPT_NODES},
	    {"zone", required_argument, NULL, OPT_ZONE},
	    {"pve-zone", required_argument, NULL, OPT_PVE_ZONE},
	    {"lock-wait", required_argument, NULL, OPT_LOCK_WAIT},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	optind = 0; /* the caller's getopt state is not ours */
	opterr = 0; /* a refused option is said in one line */
	while ((c = getopt_long(argc, argv, ":c:vh", opts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			cli_bad_option(argv[0], c, argv, opts,
				       !strcmp(argv[0], "zone") ? "fabricd zone" : "fabricd vnet");
			return -1;
		}
		if (parse_one(a, c, usage) < 0)
			return -1;
	}
	/* getopt moved the positionals to the end; argv[0] ("zone", "vnet") is not one */
	if (optind >= argc) {
		log_error("%s", usage);
		return -1;
	}
	a->action = argv[optind++];
	a->o.argc = argc - optind;
	a->o.argv = argv + optind;
	return 0;
}

/* The locked edit of the definition, by action. */
static int zone_edit(const struct deffile *f, void *data, struct bootstrap_result *res,
		     struct diag *d)
{
	const struct zone_args *a = data;
	struct zone_request z = {
	    a->zone,	a->transport, a->vnets, a->n_vnets, a->has_nodes ? a->names : NULL,
	    a->n_names, a->pve_zone};

	if (!f->exists) {
		diag_add(d, f->path,
			 "no such definition: nothing was changed; create it with `fabricd init`, "
			 "or give the definition with -c FILE");
		return -EINVAL;
	}
	if (!strcmp(a->action, "zone add"))
		return zone_edit_add(f->text, f->len, &z, res, d);
	if (!strcmp(a->action, "zone remove"))
		return zone_edit_remove(f->text, f->len, a->zone, res, d);
	if (!strcmp(a->action, "vnet add"))
		return vnet_edit_add(f->text, f->len, a->zone, a->vnets, a->n_vnets, res, d);
	return vnet_edit_remove(f->text, f->len, a->names, a->n_names, res, d);
}

static int run_edit(struct zone_args *a)
{
	struct bootstrap_result res = {0};
	int ret = member_edit(&a->o, a->action, zone_edit, a, &res);

	if (ret < 0) {
		log_error("%s: %s: nothing was changed", a->o.config, a->action);
		return 1;
	}
	if (res.outcome == BOOTSTRAP_UNCHANGED && !strcmp(a->action, "zone remove"))
		printf("%s: there is no zone %s; nothing to change\n", a->o.config, a->zone);
	else if (res.outcome == BOOTSTRAP_UNCHANGED && !strcmp(a->action, "vnet remove"))
		printf("%s: no zone has %s; nothing to change\n", a->o.config, res.absent);
	else if (res.outcome == BOOTSTRAP_UNCHANGED)
		printf("%s: zone %s already has this transport and these vnets; nothing to "
		       "change\n",
		       a->o.config, a->zone);
	else if (!strcmp(a->action, "zone add"))
		printf("%s: zone %s added (%s, %zu vnet%s%s%s, %s)\n", a->o.config, a->zone,
		       a->transport, res.changed, res.changed == 1 ? "" : "s",
		       a->pve_zone ? " pinned, the rest from Proxmox zone " : "",
		       a->pve_zone ? a->pve_zone : "",
		       a->has_nodes ? "on the nodes listed" : "on every node, joining nodes too");
	else if (!strcmp(a->action, "zone remove"))
		printf("%s: zone %s removed with its %zu vnet%s; running daemons remove them\n",
		       a->o.config, a->zone, res.changed, res.changed == 1 ? "" : "s");
	else
		printf("%s: %zu vnet%s %s%s%s%s; running daemons follow\n", a->o.config,
		       res.changed, res.changed == 1 ? "" : "s",
		       strcmp(a->action, "vnet add") ? "removed" : "added",
		       res.absent[0] ? " (no zone has " : "", res.absent,
		       res.absent[0] ? ": left as it was)" : "");
	bootstrap_result_free(&res);
	free(a->nodes_copy);
	return 0;
}

/*
 * zone ACTION's arguments, when they do not fit: said (what is wrong first;
 * the usage line alone left the operator to compare it), true.
 */
static bool zone_arguments_wrong(const struct zone_args *a, const char *action)
{
	if (a->o.argc > 1)
		log_error("zone %s: unexpected argument \"%s\": one zone per command", action,
			  a->o.argv[1]);
	else if (a->zone)
		log_error("zone %s: --zone is for vnet add; give the zone's name alone", action);
	else if (a->o.argc < 1)
		log_error("zone %s: the zone's name is missing", action);
	else if (strcmp(action, "add") &&
		 (a->transport || a->n_vnets || a->has_nodes || a->pve_zone))
		log_error("zone remove: --transport, --vnet, --nodes and --pve-zone are for zone "
			  "add; zone remove takes the zone's name alone");
	else
		return false;
	return true;
}

static int zone_positionals(struct zone_args *a, const char *action)
{
	bool add = !strcmp(action, "add");

	if (strcmp(action, "add") && strcmp(action, "remove")) {
		log_error("zone \"%s\": use zone add or zone remove\n%s", action, zone_usage);
		return -1;
	}
	if (zone_arguments_wrong(a, action)) {
		log_error("%s", zone_usage);
		return -1;
	}
	a->zone = a->o.argv[0];
	if (add &&
	    (!a->transport || (strcmp(a->transport, "plain") && strcmp(a->transport, "secure")))) {
		log_error("--transport%s%s%s: give plain (VXLAN over the underlay) or secure "
			  "(VXLAN inside the WireGuard fabric)",
			  a->transport ? " \"" : "", a->transport ? a->transport : "",
			  a->transport ? "\"" : " is missing");
		return -1;
	}
	return 0;
}

int cmd_zone(const struct options *o)
{
	static struct zone_args a; /* the vnet table is large */
	char action[32];

	memset(&a, 0, sizeof(a));
	a.o = *o;
	if (parse_args(o->argc, o->argv, &a, zone_usage) < 0 ||
	    zone_positionals(&a, a.action) < 0) {
		free(a.nodes_copy);
		return 1;
	}
	snprintf(action, sizeof(action), "zone %s", a.action);
	a.action = action;
	return run_edit(&a);
}

/* A vnet to remove: a vnet name (a typo of the form is refused, not "not found"), once. */
static int add_removal(struct zone_args *a, const char *name)
{
	if (!name_valid(name) || strlen(name) > 15) {
		log_error("vnet remove: \"%s\" is not a vnet name: give NAME (at most 15 of a-z, "
			  "0-9 and -; no :VNI), as in the definition's zones[].vnets[].name",
			  name);
		return -1;
	}
	for (size_t i = 0; i < a->n_names; i++)
		if (!strcmp(a->names[i], name))
			return 0; /* given twice: removed once */
	if (a->n_names == MAX_ITEMS) {
		log_error("vnet remove: at most %d vnets in one command", MAX_ITEMS);
		return -1;
	}
	a->names[a->n_names++] = name;
	return 0;
}

static int vnet_positionals(struct zone_args *a, const char *action)
{
	bool add = !strcmp(action, "add");

	if (strcmp(action, "add") && strcmp(action, "remove")) {
		log_error("vnet \"%s\": use vnet add or vnet remove\n%s", action, vnet_usage);
		return -1;
	}
	if (add && !a->zone) {
		log_error("vnet add: --zone is missing: give the zone the vnets go into\n%s",
			  vnet_usage);
		return -1;
	}
	if (a->o.argc < 1 || a->transport || a->n_vnets || a->has_nodes || (add != !!a->zone)) {
		log_error("%s", vnet_usage);
		return -1;
	}
	for (int i = 0; i < a->o.argc; i++) {
		if (add && add_vnet(a, a->o.argv[i], "vnet add") < 0)
			return -1;
		if (!add && add_removal(a, a->o.argv[i]) < 0)
			return -1;
	}
	return 0;
}

int cmd_vnet(const struct options *o)
{
	static struct zone_args a;
	char action[32];

	memset(&a, 0, sizeof(a));
	a.o = *o;
	if (parse_args(o->argc, o->argv, &a, vnet_usage) < 0 ||
	    vnet_positionals(&a, a.action) < 0) {
		free(a.nodes_copy);
		return 1;
	}
	snprintf(action, sizeof(action), "vnet %s", a.action);
	a.action = action;
	return run_edit(&a);
}
