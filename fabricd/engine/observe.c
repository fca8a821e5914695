// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/observe.c - every read of the kernel's state a pass needs: the link,
 * FDB and address dumps (parsed by the kinds), the guard's table and the
 * fabric device's WireGuard state.
 */
#include <errno.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/netconf.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "engine/observe.h"
#include "kinds/fabric.h"
#include "engine/reconcile.h"
#include "engine/guard_io.h"
#include "kinds/kind.h"

/* One message of a dump into its kind's table (struct kind.parse). */
struct dump_into {
	const struct kind *kind;
	void *table;
};

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct dump_into *d = data;

	if (d->kind->parse(nlh, d->table) < 0) {
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static void link_table_reset(void *data)
{
	link_table_free(((struct dump_into *)data)->table);
}

int link_dump(struct nl_sock *s, struct link_table *t)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct dump_into d = {&link_kind, t};
	int ret;

	ifi->ifi_family = AF_UNSPEC;
	/* leave out per-VF and stats blocks: smaller dumps, nothing we read */
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	link_table_free(t);
	ret = nl_dump(s, nlh, dump_cb, link_table_reset, &d);
	if (ret >= 0 && link_table_index(t) < 0)
		ret = -ENOMEM; /* the plans look links up by name */
	if (ret < 0)
		link_table_free(t);
	return ret;
}

static void fdb_table_reset(void *data)
{
	fdb_table_free(((struct dump_into *)data)->table);
}

int fdb_dump(struct nl_sock *s, struct fdb_table *t)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETNEIGH, 0);
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	struct dump_into d = {&fdb_kind, t};
	int ret;

	ndm->ndm_family = AF_BRIDGE;
	fdb_table_free(t);
	ret = nl_dump(s, nlh, dump_cb, fdb_table_reset, &d);
	if (ret < 0)
		fdb_table_free(t);
	else
		fdb_table_sort(t); /* the plans look entries up by device and address */
	return ret;
}

static void ifaddr_reset(void *data)
{
	ifaddr_table_free(((struct dump_into *)data)->table);
}

static void routes_reset(void *data)
{
	struct ifaddr_table *t = ((struct dump_into *)data)->table;

	free(t->routes);
	t->routes = NULL;
	t->n_routes = 0;
}

/* The main table's routes through ifindex, where the address's prefix route must be. */
static int prefix_routes_dump(struct nl_sock *s, int ifindex, struct ifaddr_table *t)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETROUTE, 0);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	struct dump_into d = {&ifaddr_kind, t};

	rtm->rtm_family = AF_UNSPEC;
	/* strict checking: the kernel sends that table's routes through that link alone */
	rtm->rtm_table = RT_TABLE_MAIN;
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)ifindex);
	return nl_dump(s, nlh, dump_cb, routes_reset, &d);
}

int ifaddr_dump(struct nl_sock *s, int ifindex, struct ifaddr_table *t)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETADDR, 0);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	struct dump_into d = {&ifaddr_kind, t};
	int ret;

	ifa->ifa_family = AF_UNSPEC;
	/* strict checking lets the kernel filter by link */
	ifa->ifa_index = (unsigned int)ifindex;
	ifaddr_table_free(t);
	t->ifindex = ifindex;
	ret = nl_dump(s, nlh, dump_cb, ifaddr_reset, &d);
	if (ret >= 0 && ifindex)
		ret = prefix_routes_dump(s, ifindex, t);
	if (ret < 0)
		ifaddr_table_free(t);
	return ret;
}

static void carry_reset(void *data)
{
	struct carry_obs *c = ((struct dump_into *)data)->table;

	carry_obs_init(c, c->fabric_ifindex);
}

int carry_dump(struct nl_sock *s, int fabric_ifindex, struct carry_obs *c)
{
	char buf[NL_MSG_BUF];
	struct dump_into d = {&carry_kind, c};
	struct nlmsghdr *nlh;
	struct fib_rule_hdr *frh;
	struct rtmsg *rtm;
	struct netconfmsg *ncm;
	int ret;

	carry_obs_init(c, fabric_ifindex);
	nlh = nl_msg_start(s, buf, RTM_GETRULE, 0);
	frh = mnl_nlmsg_put_extra_header(nlh, sizeof(*frh));
	frh->family = AF_UNSPEC; /* both families */
	ret = nl_dump(s, nlh, dump_cb, carry_reset, &d);
	if (ret < 0)
		return ret;
	/* strict checking: the kernel sends that table's routes alone (none if it has none) */
	nlh = nl_msg_start(s, buf, RTM_GETROUTE, 0);
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, RTA_TABLE, CARRY_TABLE);
	ret = nl_dump(s, nlh, dump_cb, NULL, &d);
	if (ret < 0 || !fabric_ifindex)
		return ret;
	nlh = nl_msg_start(s, buf, RTM_GETNETCONF, 0);
	ncm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ncm));
	ncm->ncm_family = AF_INET;
	mnl_attr_put_u32(nlh, NETCONFA_IFINDEX, (uint32_t)fabric_ifindex);
	ret = nl_request(s, nlh, dump_cb, &d); /* its reply, as a dump's messages */
	/* a kernel without IPv4 on the device: nothing to loosen */
	return ret == -ENODEV || ret == -EOPNOTSUPP ? 0 : ret;
}

void observed_free(struct observed *o)
{
	link_table_free(&o->links);
	fdb_table_free(&o->fdb);
	ifaddr_table_free(&o->fabric_addrs);
	wg_device_free(o->wg);
	firewall_obs_free(o->firewall);
	frr_obs_free(&o->frr);
	memset(o, 0, sizeof(*o));
}

/*
 * The fabric device vanished while it was read (wireguard-go exits when its
 * link-event socket overflows, which thousands of link changes can do, even
 * a while after they ended): read the links again, so that the plan sees it
 * absent and builds it again instead of failing with ENODEV.
 */
/* Whether the fabric device now has another index than wg (it went and came back). */
static bool ifindex_changed(const struct link_obs *wg)
{
	unsigned int idx = if_nametoindex(FABRIC_IFNAME);

	return idx && (int)idx != wg->ifindex;
}

static int fabric_vanished(struct reconcile *r, struct observed *o, const struct link_obs **wg)
{
	int ret;

	log_warn("fabric %s: vanished while fabricd read it (wireguard-go exited?); it is "
		 "built again",
		 FABRIC_IFNAME);
	ifaddr_table_free(&o->fabric_addrs);
	wg_device_free(o->wg);
	o->wg = NULL;
	o->wg_error = false;
	ret = link_dump(r->rtnl, &o->links);
	*wg = ret < 0 ? NULL : link_find(&o->links, FABRIC_IFNAME);
	return ret;
}

/* The fabric device's addresses and WireGuard state, when it exists. 0 or -errno. */
static int observe_fabric(struct reconcile *r, struct observed *o, const struct link_obs *wg)
{
	int ret = 0;

	for (int tries = 0; wg && tries < 3; tries++) {
		ret = ifaddr_dump(r->rtnl, wg->ifindex, &o->fabric_addrs);
		if (ret == -ENODEV) {
			ret = fabric_vanished(r, o, &wg);
			if (ret < 0)
				return ret;
			continue;
		}
		if (ret < 0)
			return ret;
		/* an existing device decides the backend: a TUN is wireguard-go's */
		wg_backend_of_link_kind(wg->kind, &r->backend);
		o->wg_adopt = !link_is_owned(wg, r->owner) && !link_alias(wg)[0] &&
			      wg_started_by_fabricd(r->backend, FABRIC_IFNAME);
		if ((link_is_owned(wg, r->owner) || o->wg_adopt) &&
		    wg_get(r->backend, FABRIC_IFNAME, &o->wg) < 0) {
			o->wg = NULL;
			o->wg_error = true;
			/* unreadable because it is gone: the same as absent */
			if (!if_nametoindex(FABRIC_IFNAME) || ifindex_changed(wg)) {
				ret = fabric_vanished(r, o, &wg);
				if (ret < 0)
					return ret;
				continue;
			}
		}
		return 0;
	}
	return ret;
}

struct guard_read {
	struct firewall_obs *fw;
	int ret;
};

static void *read_guard(void *arg)
{
	struct guard_read *g = arg;

	g->ret = firewall_observe(&g->fw);
	return NULL;
}

int observe(struct reconcile *r, struct observed *o)
{
	struct guard_read guard = {0};
	pthread_t thread;
	bool threaded;
	int ret;

	memset(o, 0, sizeof(*o));
	/*
	 * The guard is read on a thread of its own meanwhile (its own netlink
	 * socket and observation): at scale its set elements take as long to
	 * dump as the FDB (the kernel restarts a set's walk every 32 KiB), and
	 * the kernel does either dump on the CPU of the thread that asks.
	 */
	threaded = pthread_create(&thread, NULL, read_guard, &guard) == 0;
	ret = link_dump(r->rtnl, &o->links);
	if (ret >= 0)
		ret = fdb_dump(r->rtnl, &o->fdb);
	if (threaded)
		pthread_join(thread, NULL);
	else
		read_guard(&guard);
	o->firewall = guard.fw;
	if (ret >= 0)
		ret = guard.ret;
	if (ret < 0)
		goto fail;
	ret = observe_rest(r, o);
	if (ret < 0)
		goto fail;
	return 0;
fail:
	observed_free(o);
	return ret;
}

int observe_rest(struct reconcile *r, struct observed *o)
{
	const struct link_obs *wg;
	int ret;

	ret = frr_observe(r->frr_pathspace, r->owner, &o->frr);
	if (ret < 0)
		return ret;
	wg = link_find(&o->links, FABRIC_IFNAME);
	/* not one renamed by hand (the daemon saw it): it waited 3 s for a name that never came */
	if ((!wg || !link_alias(wg)[0]) && !fabric_renamed(o, r->owner) &&
	    wg_started_by_fabricd(r->backend, FABRIC_IFNAME)) {
		/*
		 * A fabricd killed while starting it (the mark is set last): let it
		 * finish, then adopt it. Its link may be there before its socket.
		 */
		wg_wait_started(r->backend, FABRIC_IFNAME);
		ret = link_dump(r->rtnl, &o->links);
		if (ret < 0)
			return ret;
		wg = link_find(&o->links, FABRIC_IFNAME);
	}
	ret = observe_fabric(r, o, wg);
	if (ret < 0)
		return ret;
	/* the fabric device as it is now (observe_fabric may have read the links again) */
	wg = link_find(&o->links, FABRIC_IFNAME);
	return carry_dump(r->rtnl, wg ? wg->ifindex : 0, &o->carry);
}
