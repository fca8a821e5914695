// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli/init.c - `fabricd init -c FILE --cluster NAME --prefix CIDR
 * [--listen-port N]`: a new definition with this node as its first member
 * (and this node's private key, when it has none yet). An empty file is
 * filled, keeping its owner and mode.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/log.h"
#include "cli/commands.h"
#include "cli/member.h"

struct init_args {
	const struct options *o;
	const struct member *m;
	unsigned int listen_port;
};

static int init_edit(const struct deffile *f, void *data, struct bootstrap_result *res,
		     struct diag *d)
{
	const struct init_args *a = data;
	struct member_request req = {a->m->name, a->m->underlay, a->m->public_key};

	if (f->exists && !deffile_blank(f)) {
		diag_add(d, f->path,
			 "a definition already exists: nothing was changed; add this node to it "
			 "with `fabricd join -c %s`, or remove the file first",
			 a->o->config);
		return -EINVAL;
	}
	return bootstrap_create(a->o->cluster_name, a->o->prefix, a->listen_port, &req, res, d);
}

static int parse_port(const char *text, unsigned int *port)
{
	char *end;
	unsigned long v;

	if (!text) {
		*port = 51820;
		return 0;
	}
	v = strtoul(text, &end, 10);
	if (!*text || *end || v < 1 || v > 65535) {
		log_error("--listen-port \"%s\": give a UDP port, 1..65535", text);
		return -1;
	}
	*port = (unsigned int)v;
	return 0;
}

int cmd_init(const struct options *o)
{
	struct member m = {0};
	struct init_args a = {.o = o, .m = &m};
	struct bootstrap_result res = {0};

	if (!o->cluster_name || !o->prefix) {
		bool both = !o->cluster_name && !o->prefix;

		/* which one: the usage line alone left the operator to compare it */
		log_error("%s missing: give %s%s%s: fabricd init -c FILE --cluster NAME --prefix "
			  "CIDR",
			  both	      ? "--cluster and --prefix are"
			  : o->prefix ? "--cluster is"
				      : "--prefix is",
			  o->cluster_name ? "" : "the cluster's name (such as lab)",
			  both ? " and " : "",
			  o->prefix ? "" : "the fabric's prefix (such as 10.255.0.0/24)");
		return 1;
	}
	if (parse_port(o->listen_port, &a.listen_port) < 0 || member_name(o, &m) < 0 ||
	    member_underlay(o, NULL, &m) < 0)
		return 1;
	if (member_key(o, false, &m) < 0) {
		member_key_abandon(o, &m);
		return 1;
	}
	if (member_edit(o, "init", init_edit, &a, &res) < 0) {
		member_key_abandon(o, &m);
		log_error("%s: not created", o->config);
		return 1;
	}
	if (member_key_commit(o, &m) < 0) {
		bootstrap_result_free(&res);
		return 1;
	}
	printf("%s: cluster %s created with node %s (underlay %s, fabric address %s)\n", o->config,
	       o->cluster_name, m.name, m.underlay, res.fabric_address);
	printf("add the other nodes with `fabricd join -c %s` on each of them\n", o->config);
	bootstrap_result_free(&res);
	return 0;
}
