// SPDX-License-Identifier: GPL-2.0-or-later
/* cli/reconcile.c - `plan`, `apply` and `down`: one node converging to its share. */
#include <stdio.h>

#include "base/log.h"
#include "cli/commands.h"
#include "engine/ifupdown.h"
#include "engine/lock.h"
#include "engine/reconcile.h"
#include "engine/session.h"

int cmd_plan(const struct options *o)
{
	struct session s;
	int ret = 1;

	/* plan never waits for the node lock: it changes nothing */
	if (session_open(&s, o) < 0 || session_load_keys(&s, o, false) < 0 || session_plan(&s) < 0)
		goto out;
	plan_print(&s.plan, stdout);
	ret = s.plan.n ? 2 : 0;
	if (!s.plan.n)
		printf("%s: nothing to change\n", s.cluster->nodes[s.self].name);
out:
	session_free(&s);
	return ret;
}

/* The node lock for command, taken before the kernel is read: the plan must stay true. */
static int lock_node(struct node_lock *lock, const struct session *s, const struct options *o,
		     const char *command)
{
	return node_lock_take(lock, s->cluster->nodes[s->self].name, command, o->lock_wait * 1000U,
			      false);
}

int cmd_apply(const struct options *o)
{
	struct node_lock lock = {.fd = -1};
	struct session s;
	int ret = 1;

	if (session_open(&s, o) < 0 || lock_node(&lock, &s, o, "apply") < 0 ||
	    session_load_keys(&s, o, true) < 0 || session_plan(&s) < 0)
		goto out;
	if (session_apply(&s, "apply") == 0)
		ret = 0;
out:
	session_free(&s);
	node_lock_release(&lock);
	return ret;
}

int cmd_down(const struct options *o)
{
	struct node_lock lock = {.fd = -1};
	struct session s;
	int ret = 1;

	if (session_open_down(&s, o) < 0 || lock_node(&lock, &s, o, "down") < 0)
		goto out;
	if (observe(&s.r, &s.have) < 0) {
		log_error("cannot read the kernel's state");
		goto out;
	}
	if (plan_build_down(&s.r, &s.have, &s.plan) < 0)
		goto out;
	if (session_apply(&s, "down") == 0) {
		struct node_state none = {0};

		ret = 0;
		ifupdown_sync(&none, o->ifupdown_file); /* nothing left to keep */
	}
out:
	session_free(&s);
	node_lock_release(&lock);
	return ret;
}
