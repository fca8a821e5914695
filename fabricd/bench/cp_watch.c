// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cp_watch.c - `bench --control-plane`: the moment a new vnet's flood
 * entries are in the kernel, seen by listening, not by asking.
 *
 * Asking (a link lookup and an FDB dump every millisecond) was how the
 * daemon's one-vnet time used to be taken, but an FDB dump walks all 64,512
 * entries under the RTNL lock, which the daemon's own link creations wait
 * for: the bench slowed down what it measured. The kernel announces every
 * link and FDB change to its rtnetlink groups anyway; the bench counts the
 * all-zeros entries announced on ports of the bridge, and asks once, after
 * the count is reached, to confirm.
 */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "bench/cp_watch.h"
#include "bench/labnet.h"
#include "kinds/fdb.h"

/* Room for the kernel's announcements of a whole pass: never drop one. */
#define WATCH_RCVBUF (8 << 20)

int cp_flood_watch_open(int net_fd, const char *bridge, struct cp_flood_watch *w)
{
	unsigned int groups[] = {RTNLGRP_LINK, RTNLGRP_NEIGH};
	int size = WATCH_RCVBUF, fd, ret;

	memset(w, 0, sizeof(*w));
	snprintf(w->bridge, sizeof(w->bridge), "%s", bridge);
	ret = labnet_nl_open_in(net_fd, &w->s);
	if (ret < 0)
		return ret;
	fd = mnl_socket_get_fd(w->s.mnl);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		if (mnl_socket_setsockopt(w->s.mnl, NETLINK_ADD_MEMBERSHIP, &groups[i],
					  sizeof(groups[i])) < 0) {
			ret = -errno;
			cp_flood_watch_close(w);
			return ret;
		}
	}
	return 0;
}

void cp_flood_watch_close(struct cp_flood_watch *w)
{
	nl_close(&w->s);
}

static bool is_port(const struct cp_flood_watch *w, int ifindex)
{
	for (size_t i = 0; i < w->n_ports; i++) {
		if (w->ports[i] == ifindex)
			return true;
	}
	return false;
}

/* A link announced: the bridge itself, or a port joining it. */
static void on_link(struct cp_flood_watch *w, const struct nlmsghdr *nlh)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	const char *name = NULL;
	int master = 0;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifi)))
		return;
	mnl_attr_for_each(attr, nlh, sizeof(*ifi))
	{
		if (mnl_attr_get_type(attr) == IFLA_IFNAME &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			name = mnl_attr_get_str(attr);
		else if (mnl_attr_get_type(attr) == IFLA_MASTER &&
			 mnl_attr_get_payload_len(attr) == sizeof(uint32_t))
			master = (int)mnl_attr_get_u32(attr);
	}
	if (name && !strcmp(name, w->bridge))
		w->bridge_index = ifi->ifi_index;
	else if (w->bridge_index && master == w->bridge_index && !is_port(w, ifi->ifi_index) &&
		 w->n_ports < CP_WATCH_MAX_PORTS)
		w->ports[w->n_ports++] = ifi->ifi_index;
}

/* An all-zeros entry announced: remembered once per device and remote. */
static void on_neigh(struct cp_flood_watch *w, const struct nlmsghdr *nlh)
{
	struct fdb_entry e;

	if (nlh->nlmsg_type != RTM_NEWNEIGH || fdb_parse(nlh, &e) <= 0)
		return;
	for (size_t i = 0; i < w->n_seen; i++) {
		if (w->seen[i].ifindex == e.ifindex && ip_addr_equal(&w->seen[i].dst, &e.dst))
			return;
	}
	if (w->n_seen < CP_WATCH_MAX_ENTRIES)
		w->seen[w->n_seen++] = e;
}

static int on_message(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type == RTM_NEWLINK)
		on_link(data, nlh);
	else
		on_neigh(data, nlh);
	return MNL_CB_OK;
}

/* Entries seen on the bridge's ports: an entry may come before its device joins. */
static unsigned int on_ports(const struct cp_flood_watch *w)
{
	unsigned int n = 0;

	for (size_t i = 0; i < w->n_seen; i++)
		n += is_port(w, w->seen[i].ifindex);
	return n;
}

int cp_flood_watch_wait(struct cp_flood_watch *w, unsigned int want, double seconds,
			const volatile sig_atomic_t *stop)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int fd = mnl_socket_get_fd(w->s.mnl);
	double until_ms = clock_mono_ms() + seconds * 1000;

	while (on_ports(w) < want) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		double left_ms = until_ms - clock_mono_ms();
		ssize_t n;

		if (left_ms <= 0 || (stop && *stop))
			return 0;
		/* short waits: a stop request is noticed within 100 ms */
		if (poll(&p, 1, left_ms > 100 ? 100 : (int)left_ms + 1) < 0 && errno != EINTR)
			return -errno;
		if (!(p.revents & POLLIN))
			continue;
		n = mnl_socket_recvfrom(w->s.mnl, buf, sizeof(buf));
		if (n < 0)
			return -errno; /* ENOBUFS: announcements were lost */
		if (mnl_cb_run(buf, (size_t)n, 0, 0, on_message, w) < 0)
			return -errno;
	}
	return 1;
}
