// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/link_group.c - a phase's link deletes as one RTM_DELLINK: each link
 * unregistered alone costs the kernel an RCU wait (about 30 ms), a group of
 * them one wait for all. The links go into LINK_GROUP_DELETING (an
 * RTM_NEWLINK each, cheap), a dump checks that the group holds exactly them,
 * and one message deletes the group. A link in that group that is not
 * fabricd's is never deleted: the links then go one by one, as after any
 * error here.
 */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/log.h"
#include "engine/link_group.h"
#include "engine/observe.h"

struct group_run {
	struct reconcile *r;
	const struct plan *p;
	const struct link_group_pacing *pace;
	size_t *ops; /* indexes of the ops whose links go in the group */
	size_t n;
	struct link_table t;
};

static bool groupable(const struct op *op, int phase)
{
	return (int)op->phase == phase && op->type == OP_LINK_DELETE && op->ifindex > 0 &&
	       !op->failed;
}

static bool is_candidate(const struct group_run *g, int ifindex)
{
	for (size_t i = 0; i < g->n; i++) {
		if (g->p->ops[g->ops[i]].ifindex == ifindex)
			return true;
	}
	return false;
}

static void warn_stranger(const struct link_obs *l)
{
	log_warn("link %s: in interface group %u, which fabricd keeps for the links it deletes, "
		 "and not fabricd's (alias \"%s\"): fabricd deletes its links one by one; move "
		 "it to another group (ip link set %s group default)",
		 l->name, LINK_GROUP_DELETING, link_alias(l), l->name);
}

static void move_error(void *cookie, int err, const char *extack, void *data)
{
	(void)cookie;
	(void)err;
	(void)extack;
	*(bool *)data = true;
}

/* The links ops[from..to) into the group (and restore[] back into fabricd's own). */
static int move_links(struct group_run *g, size_t from, size_t to, const int *restore,
		      size_t n_restore)
{
	struct nl_batch *b;
	bool failed = false;

	b = nl_batch_new(g->r->rtnl, move_error, &failed);
	if (!b)
		return -ENOMEM;
	if (g->pace->max_links)
		nl_batch_set_pacing(b, g->pace->max_links, g->pace->pause_us);
	for (size_t i = 0; i < n_restore + (to - from); i++) {
		bool back = i < n_restore;
		struct link_change c = {.mask = LINK_SET_GROUP,
					.group = back ? LINK_GROUP_OWNED : LINK_GROUP_DELETING};
		int ifindex = back ? restore[i] : g->p->ops[g->ops[from + i - n_restore]].ifindex;
		struct nlmsghdr *nlh = nl_batch_msg(b, RTM_NEWLINK, 0);

		link_put_change(nlh, ifindex, NULL, &c);
		nl_batch_commit(b, nlh, NULL);
	}
	if (nl_batch_finish(b) < 0 || failed)
		return -EIO;
	return 0;
}

/*
 * Before the first move: the group must hold no stranger. fabricd's own
 * links found there (a pass stopped between its moves and its delete) that
 * this phase keeps go back to LINK_GROUP_OWNED with the first moves;
 * candidates no longer there are left to the per-link path.
 */
static int check_before(struct group_run *g, int **restore, size_t *n_restore)
{
	size_t kept = 0;

	if (link_dump(g->r->rtnl, &g->t) < 0)
		return -EIO;
	*restore = calloc(g->t.n + 1, sizeof(**restore));
	if (!*restore)
		return -ENOMEM;
	for (size_t i = 0; i < g->t.n; i++) {
		const struct link_obs *l = &g->t.links[i];

		if (l->group != LINK_GROUP_DELETING || is_candidate(g, l->ifindex))
			continue;
		if (!link_is_owned(l, g->r->owner)) {
			warn_stranger(l);
			return -EEXIST;
		}
		(*restore)[(*n_restore)++] = l->ifindex;
	}
	for (size_t i = 0; i < g->n; i++) {
		if (link_by_index(&g->t, g->p->ops[g->ops[i]].ifindex))
			g->ops[kept++] = g->ops[i];
	}
	g->n = kept;
	return 0;
}

/* After the moves: the group holds exactly ops[from..to). */
static int check_after(struct group_run *g, size_t from, size_t to)
{
	size_t in_group = 0;

	if (link_dump(g->r->rtnl, &g->t) < 0)
		return -EIO;
	for (size_t i = 0; i < g->t.n; i++) {
		const struct link_obs *l = &g->t.links[i];

		if (l->group != LINK_GROUP_DELETING)
			continue;
		in_group++;
		if (!link_is_owned(l, g->r->owner)) {
			warn_stranger(l);
			return -EEXIST;
		}
	}
	for (size_t i = from; i < to; i++) {
		const struct link_obs *l = link_by_index(&g->t, g->p->ops[g->ops[i]].ifindex);

		if (!l || l->group != LINK_GROUP_DELETING)
			return -ENOENT;
	}
	return in_group == to - from ? 0 : -EEXIST;
}

static int delete_chunk(struct group_run *g, size_t from, size_t to, const int *restore,
			size_t n_restore)
{
	char buf[NL_MSG_BUF] = {0};
	int ret = move_links(g, from, to, restore, n_restore);

	/* the moves are link events too: wireguard-go reads them before the deletes' */
	if (!ret && g->pace->max_links && g->pace->wait)
		g->pace->wait(g->pace->wait_data);
	if (!ret)
		ret = check_after(g, from, to);
	if (ret < 0)
		return ret;
	link_put_group_delete(nl_msg_start(g->r->rtnl, buf, RTM_DELLINK, 0), LINK_GROUP_DELETING);
	/* the kernel checks the whole group first: on an error nothing was deleted */
	return nl_request(g->r->rtnl, (struct nlmsghdr *)buf, NULL, NULL) < 0 ? -EIO : 0;
}

/* Group by group, paced; returns how many ops' links are gone. */
static size_t delete_chunks(struct group_run *g, const int *restore, size_t n_restore, bool *done)
{
	const struct link_group_pacing *pace = g->pace;
	size_t step = pace->max_links ? pace->max_links : g->n, gone = 0;

	for (size_t from = 0; from < g->n && g->n - from >= 2; from += step) {
		size_t to = from + step < g->n ? from + step : g->n;

		if (from && pace->max_links) {
			usleep(pace->pause_us);
			if (pace->wait)
				pace->wait(pace->wait_data);
		}
		if (delete_chunk(g, from, to, from ? NULL : restore, from ? 0 : n_restore) < 0)
			break; /* these and the rest one by one */
		for (size_t i = from; i < to; i++)
			done[g->ops[i]] = true;
		gone += to - from;
		log_debug("links: %zu deleted as interface group %u", to - from,
			  LINK_GROUP_DELETING);
	}
	return gone;
}

bool *link_group_delete(struct reconcile *r, const struct plan *p, int phase,
			const struct link_group_pacing *pace, size_t *events)
{
	struct group_run g = {.r = r, .p = p, .pace = pace};
	int *restore = NULL;
	size_t n_restore = 0, gone = 0;
	bool *done = NULL;

	for (size_t i = 0; i < p->n; i++)
		g.n += groupable(&p->ops[i], phase);
	if (g.n < 2)
		return NULL;
	g.ops = calloc(g.n, sizeof(*g.ops));
	done = calloc(p->n, sizeof(*done));
	if (!g.ops || !done)
		goto out;
	g.n = 0;
	for (size_t i = 0; i < p->n; i++) {
		if (groupable(&p->ops[i], phase))
			g.ops[g.n++] = i;
	}
	if (check_before(&g, &restore, &n_restore) == 0)
		gone = delete_chunks(&g, restore, n_restore, done);
	*events += 2 * gone + n_restore;
out:
	free(restore);
	free(g.ops);
	link_table_free(&g.t);
	if (!gone) {
		free(done);
		return NULL;
	}
	return done;
}
