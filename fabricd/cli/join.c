// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli/join.c - `fabricd join -c FILE [-n NODE] [--underlay ADDR]
 * [--key-file FILE] [--rotate-key]`: adds this node to a definition that
 * other nodes share, at the first free fabric address.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "cli/commands.h"
#include "cli/member.h"
#include "definition/config.h"
#include "definition/wgkey.h"

struct join_args {
	const struct options *o;
	struct member *m;
};

/* The definition in f lists node name with public key b64 (a quiet no when it cannot be read). */
static bool lists_key(const struct deffile *f, const char *name, const char *b64)
{
	struct cluster *c = NULL;
	struct diag quiet;
	uint8_t key[WGKEY_LEN];
	bool listed = false;
	int idx;

	diag_init(&quiet);
	if (wgkey_from_base64(b64, key) == 0 &&
	    config_load_buffer(f->text, f->len, &c, &quiet) == 0) {
		idx = cluster_find_node(c, name);
		listed = idx >= 0 && !memcmp(c->nodes[idx].public_key, key, WGKEY_LEN);
	}
	cluster_free(c);
	diag_free(&quiet);
	return listed;
}

static int join_edit(const struct deffile *f, void *data, struct bootstrap_result *res,
		     struct diag *d)
{
	const struct join_args *a = data;
	struct member_request req = {a->m->name, a->m->underlay, a->m->public_key};
	struct cluster *c = NULL;
	int ret;

	if (!f->exists) {
		diag_add(d, f->path,
			 "no such definition: nothing was changed; create it with `fabricd init` "
			 "on the first node, or give the shared definition with -c FILE");
		return -EINVAL;
	}
	/* the underlay follows the route towards the nodes already in the file */
	if (!a->m->underlay[0]) {
		if (config_load_buffer(f->text, f->len, &c, d) < 0) {
			diag_add(d, f->path,
				 "not a valid definition: nothing was changed; fix it first "
				 "(fabricd check -c %s)",
				 a->o->config);
			return -EINVAL;
		}
		ret = member_underlay(a->o, c, a->m);
		cluster_free(c);
		if (ret < 0)
			return -EINVAL;
	}
	if (a->m->leftover_key[0] && !a->o->rotate_key &&
	    lists_key(f, a->m->name, a->m->leftover_key)) {
		/* the definition has the rotation's key: finish it (KEY.new renamed on commit) */
		snprintf(a->m->public_key, sizeof(a->m->public_key), "%s", a->m->leftover_key);
		a->m->leftover_used = true;
	}
	return bootstrap_join(f->text, f->len, &req, a->o->rotate_key, res, d);
}

int cmd_join(const struct options *o)
{
	struct member m = {0};
	struct join_args a = {.o = o, .m = &m};
	struct bootstrap_result res = {0};

	if (member_name(o, &m) < 0 || (o->underlay && member_underlay(o, NULL, &m) < 0))
		return 1;
	if (member_key(o, o->rotate_key, &m) < 0) {
		member_key_abandon(o, &m);
		return 1;
	}
	if (member_edit(o, "join", join_edit, &a, &res) < 0) {
		member_key_abandon(o, &m);
		log_error("%s: node %s did not join", o->config, m.name);
		return 1;
	}
	if (m.leftover_used) {
		log_info("%s: an interrupted key rotation is finished: %s.new, whose public key "
			 "the definition has, replaces it",
			 o->key_file, o->key_file);
		m.key_pending = true;
	}
	if (member_key_commit(o, &m) < 0) {
		bootstrap_result_free(&res);
		return 1;
	}
	switch (res.outcome) {
	case BOOTSTRAP_UNCHANGED:
		printf("%s: node %s is already a member with this key (fabric address %s); "
		       "nothing to change\n",
		       o->config, m.name, res.fabric_address);
		break;
	case BOOTSTRAP_ROTATED:
		printf("%s: node %s has a new key (fabric address %s); running daemons follow: "
		       "the other nodes change their peer, this node its device (nodes without "
		       "the daemon need `fabricd apply`)\n",
		       o->config, m.name, res.fabric_address);
		break;
	default:
		printf("%s: node %s joined (underlay %s, fabric address %s)\n", o->config, m.name,
		       m.underlay, res.fabric_address);
		break;
	}
	bootstrap_result_free(&res);
	return 0;
}
