// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/view.c - the daemon's observed view between passes (engine/view.h):
 * notifications mark objects dirty, a pass reads only those again.
 */
#include <errno.h>
#include <net/if.h>
#include <stddef.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/guard_io.h"
#include "engine/plan.h"
#include "engine/reconcile.h"
#include "engine/view.h"
#include "kinds/guard_priv.h"
#include "kinds/fdb.h"
#include "kinds/kind.h"

static long long mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec;
}

void view_init(struct obs_view *v)
{
	memset(v, 0, sizeof(*v));
}

void view_free(struct obs_view *v)
{
	free(v->made);
	free(v->renamed);
	link_table_free(&v->links);
	fdb_table_free(&v->fdb);
	firewall_obs_free(v->firewall);
	view_init(v);
}

void view_invalidate(struct obs_view *v)
{
	v->links_ok = v->fdb_ok = v->guard_ok = v->gen_known = false;
	v->n_dirty_links = v->n_dirty_fdb = 0;
}

void view_guard_changed(struct obs_view *v)
{
	v->guard_ok = v->gen_known = false;
}

bool view_full_due(const struct obs_view *v, long long now)
{
	return v->full_at && now - v->full_at >= VIEW_FULL_S;
}

/* Adds ifindex to a dirty set; past VIEW_DIRTY_MAX the whole table is read again. */
static void mark(int *set, size_t *n, bool *ok, int ifindex)
{
	if (!*ok)
		return;
	for (size_t i = 0; i < *n; i++) {
		if (set[i] == ifindex)
			return;
	}
	if (*n == VIEW_DIRTY_MAX) {
		*ok = false;
		*n = 0;
		return;
	}
	set[(*n)++] = ifindex;
}

void view_notify(struct obs_view *v, const struct nlmsghdr *nlh)
{
	const struct ifinfomsg *ifi;
	struct fdb_mac mac;
	int ifindex;

	switch (nlh->nlmsg_type) {
	case RTM_NEWLINK:
	case RTM_DELLINK:
		if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifi)))
			return;
		ifi = mnl_nlmsg_get_payload(nlh);
		/* AF_BRIDGE: a port's bridge options, or the port leaving; the link is read */
		mark(v->dirty_links, &v->n_dirty_links, &v->links_ok, ifi->ifi_index);
		/* a device's FDB entries go with it, and the kernel notifies only the first */
		if (nlh->nlmsg_type == RTM_DELLINK && ifi->ifi_family != AF_BRIDGE)
			mark(v->dirty_fdb, &v->n_dirty_fdb, &v->fdb_ok, ifi->ifi_index);
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		/* deleting a whole entry notifies its first remote only: the device is read */
		if (fdb_msg_is_remote(nlh, &ifindex))
			mark(v->dirty_fdb, &v->n_dirty_fdb, &v->fdb_ok, ifindex);
		else if (fdb_parse_mac(nlh, &mac) > 0) /* zebra's: kept for its stale ones */
			mark(v->dirty_fdb, &v->n_dirty_fdb, &v->fdb_ok, mac.ifindex);
		break;
	}
}

/* The first link with an ifindex >= ifindex (the table is ordered by ifindex). */
static size_t link_pos(const struct link_table *t, int ifindex)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->links[mid].ifindex < ifindex)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool view_port_unchanged(const struct obs_view *v, const struct nlmsghdr *nlh)
{
	struct link_obs port;
	const struct link_obs *kept;
	size_t at;

	if (!v->links_ok || link_parse_port(nlh, &port) != 1)
		return false;
	for (size_t i = 0; i < v->n_dirty_links; i++) {
		if (v->dirty_links[i] == port.ifindex)
			return false;
	}
	at = link_pos(&v->links, port.ifindex);
	if (at == v->links.n || v->links.links[at].ifindex != port.ifindex)
		return false;
	kept = &v->links.links[at];
	return !strcmp(kept->slave_kind, "bridge") && link_port_same(kept, &port);
}

static int by_ifindex(const void *a, const void *b)
{
	int x = ((const struct link_obs *)a)->ifindex, y = ((const struct link_obs *)b)->ifindex;

	return (x > y) - (x < y);
}

static void links_order(struct link_table *t)
{
	for (size_t i = 1; i < t->n; i++) {
		if (t->links[i - 1].ifindex > t->links[i].ifindex) {
			qsort(t->links, t->n, sizeof(*t->links), by_ifindex);
			return;
		}
	}
}

/*
 * Puts l in at its ifindex, replacing the link there. The link kind's parse
 * grows the table when n reaches a power of two (kinds/link.c), so the
 * capacity stays capacity_for(n) here: a dump may append to it afterwards.
 * 0 or -ENOMEM.
 */
static int link_put(struct link_table *t, const struct link_obs *l)
{
	size_t i = link_pos(t, l->ifindex);

	if (i < t->n && t->links[i].ifindex == l->ifindex) {
		link_release(&t->links[i]);
		t->links[i] = *l;
		return 0;
	}
	if (!(t->n & (t->n - 1))) {
		struct link_obs *grown = realloc(t->links, capacity_for(t->n + 1) * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		t->links = grown;
	}
	memmove(&t->links[i + 1], &t->links[i], (t->n - i) * sizeof(*t->links));
	t->links[i] = *l;
	t->n++;
	return 0;
}

static void link_drop(struct link_table *t, int ifindex)
{
	size_t i = link_pos(t, ifindex);

	if (i == t->n || t->links[i].ifindex != ifindex)
		return;
	link_release(&t->links[i]);
	memmove(&t->links[i], &t->links[i + 1], (t->n - i - 1) * sizeof(*t->links));
	t->n--;
}

struct link_get {
	struct link_obs l;
	bool found;
};

static int link_get_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_get *g = data;
	struct link_obs l;

	if (link_parse(nlh, &l) < 0)
		return MNL_CB_OK;
	if (link_own_alias(&l) < 0) {
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	if (g->found)
		link_release(&g->l); /* one reply is expected; the last counts */
	g->l = l;
	g->found = true;
	return MNL_CB_OK;
}

static struct link_rename *rename_of(struct obs_view *v, int ifindex)
{
	for (size_t i = 0; i < v->n_renamed; i++) {
		if (v->renamed[i].ifindex == ifindex)
			return &v->renamed[i];
	}
	return NULL;
}

static void rename_drop(struct obs_view *v, struct link_rename *r)
{
	*r = v->renamed[--v->n_renamed];
}

/*
 * A link of fabricd's (an owner mark) read again under another name: its
 * first name is kept until it has it back. 0 or -ENOMEM.
 */
static int add_rename(struct obs_view *v, int ifindex, const char *from)
{
	if (v->n_renamed == v->cap_renamed) {
		size_t cap = v->cap_renamed ? 2 * v->cap_renamed : 8;
		struct link_rename *grown = realloc(v->renamed, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		v->renamed = grown;
		v->cap_renamed = cap;
	}
	v->renamed[v->n_renamed].ifindex = ifindex;
	snprintf(v->renamed[v->n_renamed].from, sizeof(v->renamed[0].from), "%s", from);
	v->n_renamed++;
	return 0;
}

/* A link a pass made that the view reads for the first time: renamed since? */
static int note_made(struct obs_view *v, const struct link_obs *l)
{
	for (size_t i = 0; i < v->n_made; i++) {
		char from[sizeof(v->made[0].from)];

		if (v->made[i].ifindex != l->ifindex)
			continue;
		snprintf(from, sizeof(from), "%s", v->made[i].from);
		v->made[i] = v->made[--v->n_made]; /* read back now */
		return strcmp(from, l->name) ? add_rename(v, l->ifindex, from) : 0;
	}
	return 0;
}

static int note_rename(struct obs_view *v, const struct link_table *t, const struct link_obs *l)
{
	size_t i = link_pos(t, l->ifindex);
	struct link_rename *r = rename_of(v, l->ifindex);

	/* its name back; or another link under a reused index (a rename keeps the kind) */
	if (r && (!strcmp(r->from, l->name) || (i < t->n && t->links[i].ifindex == l->ifindex &&
						strcmp(t->links[i].kind, l->kind)))) {
		rename_drop(v, r);
		return 0;
	}
	if (r)
		return 0;
	if (i == t->n || t->links[i].ifindex != l->ifindex)
		return note_made(v, l);
	if (!strcmp(t->links[i].name, l->name) ||
	    strncmp(link_alias(&t->links[i]), OWNER_PREFIX, strlen(OWNER_PREFIX)))
		return 0;
	return add_rename(v, l->ifindex, t->links[i].name);
}

void view_note_made(struct obs_view *v, const struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct op *op = &p->ops[i];
		int ifindex;

		if ((op->type != OP_BRIDGE_CREATE && op->type != OP_VXLAN_CREATE) || op->failed ||
		    op->skipped || !(ifindex = (int)if_nametoindex(op->ifname)))
			continue;
		if (v->n_made == v->cap_made) {
			size_t cap = v->cap_made ? 2 * v->cap_made : 16;
			struct link_rename *grown = realloc(v->made, cap * sizeof(*grown));

			if (!grown)
				return; /* a rename of it is then not known: as before */
			v->made = grown;
			v->cap_made = cap;
		}
		v->made[v->n_made].ifindex = ifindex;
		snprintf(v->made[v->n_made].from, sizeof(v->made[0].from), "%s", op->ifname);
		v->n_made++;
	}
}

/* A link a pass made that is gone before the view read it: nothing to remember. */
static void made_drop(struct obs_view *v, int ifindex)
{
	for (size_t i = v->n_made; i-- > 0;) {
		if (v->made[i].ifindex == ifindex)
			v->made[i] = v->made[--v->n_made];
	}
}

/* Renames of links that are gone, or have their first name again (after a full read). */
static void renames_prune(struct obs_view *v)
{
	for (size_t i = v->n_renamed; i-- > 0;) {
		size_t at = link_pos(&v->links, v->renamed[i].ifindex);

		if (at == v->links.n || v->links.links[at].ifindex != v->renamed[i].ifindex ||
		    !strcmp(v->links.links[at].name, v->renamed[i].from))
			rename_drop(v, &v->renamed[i]);
	}
}

/* Reads link ifindex again into the view (dropped when it is gone). 0 or -errno. */
static int link_refresh(struct nl_sock *s, struct obs_view *v, int ifindex)
{
	struct link_table *t = &v->links;
	struct link_rename *r;
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct link_get g = {.found = false};
	int ret;

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	ret = nl_request(s, nlh, link_get_cb, &g);
	if (ret == 0 && g.found) {
		ret = note_rename(v, t, &g.l);
		if (ret == 0)
			ret = link_put(t, &g.l); /* the table owns its alias now */
		if (ret < 0)
			link_release(&g.l);
		return ret;
	}
	if (g.found)
		link_release(&g.l);
	if (ret < 0 && ret != -ENODEV)
		return ret;
	link_drop(t, ifindex);
	made_drop(v, ifindex);
	r = rename_of(v, ifindex);
	if (r)
		rename_drop(v, r);
	return 0;
}

struct fdb_get {
	struct fdb_table t;
	int ifindex;
};

static int fdb_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fdb_get *g = data;

	/* that device's only: a kernel that ignores the dump's filter sends every device's */
	if (fdb_table_take(&g->t, nlh, g->ifindex) < 0) {
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static void fdb_reset(void *data)
{
	fdb_table_free(&((struct fdb_get *)data)->t);
}

/* Reads device ifindex's all-zeros entries again (a dump filtered to it). 0 or -errno. */
static int fdb_refresh(struct nl_sock *s, struct fdb_table *t, int ifindex)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETNEIGH, 0);
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	struct fdb_get fresh = {.ifindex = ifindex};
	int ret;

	ndm->ndm_family = AF_BRIDGE;
	ndm->ndm_ifindex = ifindex; /* the kernel dumps that port's entries only */
	ret = nl_dump(s, nlh, fdb_cb, fdb_reset, &fresh);
	if (ret == -ENODEV)
		ret = 0;
	fdb_table_sort(&fresh.t);
	if (ret == 0)
		ret = fdb_table_replace_device(t, ifindex, &fresh.t);
	fdb_table_free(&fresh.t);
	return ret;
}

/*
 * Every link read again (a failed pass, lost notifications, the periodic
 * full read): renames since the table kept are found by comparing the two
 * by index, as the notifications would have told. 0 or -errno.
 */
static int reread_links(struct obs_view *v, struct nl_sock *s)
{
	struct link_table before = v->links;
	int ret;

	memset(&v->links, 0, sizeof(v->links));
	ret = link_dump(s, &v->links);
	links_order(&v->links);
	for (size_t i = 0; ret == 0 && i < v->links.n; i++)
		ret = note_rename(v, &before, &v->links.links[i]);
	link_table_free(&before);
	renames_prune(v);
	if (ret == 0)
		v->n_made = 0; /* each read back above, or gone */
	return ret;
}

static int refresh_links(struct obs_view *v, struct nl_sock *s)
{
	int ret = 0;

	if (!v->links_ok)
		ret = reread_links(v, s);
	for (size_t i = 0; v->links_ok && ret == 0 && i < v->n_dirty_links; i++, v->link_gets++)
		ret = link_refresh(s, v, v->dirty_links[i]);
	v->n_dirty_links = 0;
	v->links_ok = ret == 0;
	return ret;
}

static int refresh_fdb(struct obs_view *v, struct nl_sock *s)
{
	int ret = 0;

	if (!v->fdb_ok)
		ret = fdb_dump(s, &v->fdb);
	for (size_t i = 0; v->fdb_ok && ret == 0 && i < v->n_dirty_fdb; i++, v->fdb_gets++)
		ret = fdb_refresh(s, &v->fdb, v->dirty_fdb[i]);
	v->n_dirty_fdb = 0;
	v->fdb_ok = ret == 0;
	return ret;
}

static int refresh_guard(struct obs_view *v)
{
	int ret;

	uint32_t gen = 0;
	bool have_gen;

	v->guard_cached = v->guard_ok;
	if (v->guard_ok)
		return 0;
	/* read before the table: a change during the dump moves it past what is kept */
	have_gen = firewall_generation(&gen) == 0;
	if (have_gen && v->gen_known && gen == v->gen) {
		v->guard_ok = v->guard_cached = true; /* no transaction since: as read */
		return 0;
	}
	firewall_obs_free(v->firewall);
	v->firewall = NULL;
	ret = firewall_observe(&v->firewall);
	v->guard_ok = ret == 0;
	v->gen_known = have_gen && ret == 0;
	v->gen = gen;
	return ret;
}

/* What this pass reads again: known only when neither table is dumped whole. */
static void note_changes(struct obs_view *v)
{
	v->changes_known = v->links_ok && v->fdb_ok;
	v->n_pass_changed = 0;
	for (size_t i = 0; v->changes_known && i < v->n_dirty_links; i++)
		v->pass_changed[v->n_pass_changed++] = v->dirty_links[i];
	for (size_t i = 0; v->changes_known && i < v->n_dirty_fdb; i++)
		v->pass_changed[v->n_pass_changed++] = v->dirty_fdb[i];
}

int view_observe(struct obs_view *v, struct reconcile *r, struct observed *o)
{
	long long now = mono_s();
	bool full;
	int ret;

	memset(o, 0, sizeof(*o));
	if (!v->full_at || now - v->full_at >= VIEW_FULL_S) {
		bool gen_known = v->gen_known;

		view_invalidate(v);
		v->gen_known = gen_known; /* the periodic read: the guard's generation is told */
	}
	full = !v->links_ok && !v->fdb_ok && !v->guard_ok;
	note_changes(v);
	ret = refresh_links(v, r->rtnl);
	if (ret == 0)
		ret = refresh_fdb(v, r->rtnl);
	if (ret == 0)
		ret = refresh_guard(v);
	if (ret < 0) {
		view_invalidate(v);
		v->changes_known = false;
		return ret;
	}
	if (full) {
		v->full_at = now;
		v->full_reads++;
	}
	/* links_order and the refreshes moved links: index them as they are now (-ENOMEM: scans) */
	(void)link_table_index(&v->links);
	o->links = v->links;
	o->fdb = v->fdb;
	o->firewall = v->firewall;
	o->renamed = v->renamed;
	o->n_renamed = v->n_renamed;
	memset(&v->links, 0, sizeof(v->links));
	memset(&v->fdb, 0, sizeof(v->fdb));
	v->firewall = NULL;
	log_debug("observed view: %s (%lu full reads, %lu link and %lu fdb reads so far)",
		  full ? "read in full" : "kept", v->full_reads, v->link_gets, v->fdb_gets);
	return observe_rest(r, o);
}

void view_reclaim(struct obs_view *v, struct observed *o)
{
	bool lost = !o->links.links; /* freed on the way (every namespace has a link) */

	link_table_free(&v->links);
	fdb_table_free(&v->fdb);
	firewall_obs_free(v->firewall);
	v->links = o->links;
	v->fdb = o->fdb;
	v->firewall = o->firewall;
	memset(&o->links, 0, sizeof(o->links));
	memset(&o->fdb, 0, sizeof(o->fdb));
	o->firewall = NULL;
	if (lost)
		view_invalidate(v); /* read again, all of it */
	links_order(&v->links);	    /* observe_rest may have dumped the links again */
	if (!v->fdb.sorted)
		fdb_table_sort(&v->fdb);
}

bool view_guard_stale(struct obs_view *v, const struct plan *p)
{
	if (!v->guard_cached)
		return false;
	for (size_t i = 0; i < p->n; i++) {
		const struct op *op = &p->ops[i];

		if (op->kind == KIND_GUARD && op->type == OP_FIREWALL_SET && op->text &&
		    strncmp(op->text, FIREWALL_DELTA_MARK, strlen(FIREWALL_DELTA_MARK))) {
			v->guard_ok = v->gen_known = false;
			return true;
		}
	}
	return false;
}
