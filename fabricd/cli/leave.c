// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli/leave.c - `fabricd leave -c FILE [-n NODE]`: removes the node from the
 * definition, from its zones' node lists and from the EVPN route reflectors;
 * the other nodes' daemons then remove its peer and FDB entries.
 */
#include <errno.h>
#include <stdio.h>

#include "base/log.h"
#include "cli/commands.h"
#include "cli/member.h"

static int leave_edit(const struct deffile *f, void *data, struct bootstrap_result *res,
		      struct diag *d)
{
	const struct member *m = data;

	if (!f->exists) {
		diag_add(d, f->path,
			 "no such definition: nothing was changed; give the shared definition "
			 "with -c FILE");
		return -EINVAL;
	}
	return bootstrap_leave(f->text, f->len, m->name, res, d);
}

int cmd_leave(const struct options *o)
{
	struct member m = {0};
	struct bootstrap_result res = {0};

	if (member_name(o, &m) < 0)
		return 1;
	if (member_edit(o, "leave", leave_edit, &m, &res) < 0) {
		log_error("%s: node %s did not leave", o->config, m.name);
		return 1;
	}
	if (res.outcome == BOOTSTRAP_UNCHANGED) {
		printf("%s: node %s is not a member; nothing to change\n", o->config, m.name);
		return 0;
	}
	printf("%s: node %s left", o->config, m.name);
	if (res.reflector_left)
		printf(" (and fabric.evpn.route_reflectors)");
	if (res.zones_left)
		printf(" (and the node lists of %zu zone%s)", res.zones_left,
		       res.zones_left == 1 ? "" : "s");
	printf("; the other nodes' daemons remove its peer and FDB entries\n");
	printf("on %s, stop fabricd; `fabricd down -c %s` there removes its fabric\n", m.name,
	       o->config);
	if (res.zones_left)
		printf("a later `fabricd join` of %s does not put it back into those zones' node "
		       "lists: add it to their \"nodes\" in %s by hand then\n",
		       m.name, o->config);
	bootstrap_result_free(&res);
	return 0;
}
