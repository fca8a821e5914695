// SPDX-License-Identifier: GPL-2.0-or-later
/* cli.c - load the definition and find this node, for every node command. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "diag.h"
#include "log.h"

int cli_load_cluster(const struct options *o, struct cluster **out)
{
	struct diag diag;
	int ret;

	diag_init(&diag);
	ret = config_load_file(o->config, out, &diag);
	diag_print(&diag, stderr);
	diag_free(&diag);
	if (ret < 0) {
		log_error("%s: definition not valid, nothing was changed; fix the errors above",
			  o->config);
		return -1;
	}
	return 0;
}

int cli_find_self(const struct options *o, const struct cluster *c, size_t *self)
{
	char host[256] = "";
	const char *name = o->node;
	int idx;

	if (!name) {
		if (gethostname(host, sizeof(host) - 1) < 0) {
			log_error("cannot read this host's name: give the node with -n NODE");
			return -1;
		}
		/* "pve1.example.org" is node "pve1" */
		host[strcspn(host, ".")] = '\0';
		name = host;
	}
	idx = cluster_find_node(c, name);
	if (idx < 0) {
		log_error("node \"%s\" is not in %s: give one of its nodes with -n NODE", name,
			  o->config);
		return -1;
	}
	*self = (size_t)idx;
	return 0;
}
