// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_view.c - the daemon's kept observed view (engine/view.h): which
 * notifications mark which objects dirty (links of either family, a deleted
 * device's FDB entries, all-zeros FDB entries with a remote but not learned
 * MACs), that too many dirty objects mean a full re-read, that ENOBUFS and
 * the periodic re-read invalidate it, and that a whole-table guard plan from
 * a cached guard is planned again (its carried counters are stale) while a
 * set-element delta is not.
 */
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "engine/plan.h"
#include "engine/view.h"
#include "kinds/guard_priv.h"
#include "kinds/kind.h"
#include "unit.h"

static char buf[512] __attribute__((aligned(4)));

static const struct nlmsghdr *link_msg(uint16_t type, unsigned char family, int ifindex)
{
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = family;
	ifi->ifi_index = ifindex;
	return nlh;
}

static const struct nlmsghdr *neigh_msg(uint16_t type, int ifindex, const uint8_t *mac, bool dst)
{
	static const uint8_t ip[4] = {192, 0, 2, 12};
	struct nlmsghdr *nlh;
	struct ndmsg *ndm;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_BRIDGE;
	ndm->ndm_ifindex = ifindex;
	mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	if (dst)
		mnl_attr_put(nlh, NDA_DST, sizeof(ip), ip);
	return nlh;
}

static void valid(struct obs_view *v)
{
	view_init(v);
	v->links_ok = v->fdb_ok = v->guard_ok = true;
	v->full_at = 100;
}

static void test_marks(void)
{
	static const uint8_t zero[6], learned[6] = {2, 0, 0, 0, 0, 1};
	struct obs_view v;

	valid(&v);
	view_notify(&v, link_msg(RTM_NEWLINK, AF_UNSPEC, 7));
	view_notify(&v, link_msg(RTM_NEWLINK, AF_UNSPEC, 7));
	view_notify(&v, link_msg(RTM_NEWLINK, AF_BRIDGE, 8)); /* `bridge link set` */
	CHECK_INT(v.n_dirty_links, 2, "one entry per link, either family");
	CHECK_INT(v.dirty_links[1], 8, "the AF_BRIDGE message's link");
	CHECK_INT(v.n_dirty_fdb, 0, "no FDB change yet");
	view_notify(&v, link_msg(RTM_DELLINK, AF_BRIDGE, 8)); /* a port left its bridge */
	CHECK_INT(v.n_dirty_fdb, 0, "a port leaving its bridge keeps its entries");
	view_notify(&v, link_msg(RTM_DELLINK, AF_UNSPEC, 9));
	CHECK_INT(v.n_dirty_links, 3, "the deleted link");
	CHECK_INT(v.n_dirty_fdb, 1, "a deleted device's entries are read again");
	view_notify(&v, neigh_msg(RTM_DELNEIGH, 10, zero, true));
	view_notify(&v, neigh_msg(RTM_NEWNEIGH, 10, zero, true));
	CHECK_INT(v.n_dirty_fdb, 2, "the device of an all-zeros entry, once");
	CHECK_INT(v.dirty_fdb[1], 10, "the device of an all-zeros entry");
	view_notify(&v, neigh_msg(RTM_NEWNEIGH, 11, learned, true));
	view_notify(&v, neigh_msg(RTM_NEWNEIGH, 12, zero, false));
	CHECK_INT(v.n_dirty_fdb, 2, "learned MACs and entries without a remote are not ours");
	CHECK(v.links_ok && v.fdb_ok && v.guard_ok, "still valid");
	view_guard_changed(&v);
	CHECK(!v.guard_ok && v.links_ok, "an nftables event invalidates the guard only");
	view_free(&v);
}

static void test_overflow_and_timer(void)
{
	struct obs_view v;

	valid(&v);
	for (int i = 1; i <= VIEW_DIRTY_MAX; i++)
		view_notify(&v, link_msg(RTM_NEWLINK, AF_UNSPEC, i));
	CHECK(v.links_ok, "VIEW_DIRTY_MAX links are read one by one");
	view_notify(&v, link_msg(RTM_NEWLINK, AF_UNSPEC, VIEW_DIRTY_MAX + 1));
	CHECK(!v.links_ok && v.n_dirty_links == 0, "one more: the links are dumped");
	CHECK(v.fdb_ok, "the FDB stays");
	view_invalidate(&v);
	CHECK(!v.links_ok && !v.fdb_ok && !v.guard_ok, "ENOBUFS: everything is read again");
	CHECK(!view_full_due(&v, 100 + VIEW_FULL_S - 1), "not due yet");
	CHECK(view_full_due(&v, 100 + VIEW_FULL_S), "due after VIEW_FULL_S");
	v.full_at = 0;
	CHECK(!view_full_due(&v, 100000), "never read: the first pass reads it anyway");
	view_free(&v);
}

static void test_guard_stale(void)
{
	struct obs_view v;
	struct plan p;
	struct op *op;

	valid(&v);
	plan_init(&p, "fabricd:test");
	op = plan_add(&p, KIND_GUARD, OP_FIREWALL_SET, PHASE_GUARD, VERB_CHANGE, NULL);
	op->text = strdup(FIREWALL_DELTA_MARK "add element inet fabricd s { 1 }\n");
	v.guard_cached = true;
	CHECK(!view_guard_stale(&v, &p), "a set-element delta carries no counters");
	CHECK(v.guard_ok, "and keeps the cached guard");
	free(op->text);
	op->text = strdup("table inet fabricd { counter c { packets 5 bytes 7 } }\n");
	v.guard_cached = false;
	CHECK(!view_guard_stale(&v, &p), "a guard read in this pass is fresh");
	v.guard_cached = true;
	CHECK(view_guard_stale(&v, &p), "a whole table from a cached guard: planned again");
	CHECK(!v.guard_ok, "with the guard read again");
	plan_free(&p);
	view_free(&v);
}

int main(void)
{
	test_marks();
	test_overflow_and_timer();
	test_guard_stale();
	return unit_summary("test_view");
}
