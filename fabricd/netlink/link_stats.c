// SPDX-License-Identifier: GPL-2.0-or-later
/* netlink/link_stats.c - IFLA_STATS_LINK_64 of every link, in one RTM_GETSTATS dump. */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netlink/link_stats.h"

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_stats_table *t = data;
	const struct if_stats_msg *ifsm;
	const struct nlattr *attr;
	struct link_stats *l;

	if (nlh->nlmsg_type != RTM_NEWSTATS || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifsm)))
		return MNL_CB_OK;
	ifsm = mnl_nlmsg_get_payload(nlh);
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct link_stats *grown = realloc(t->links, cap * sizeof(*grown));

		if (!grown) {
			errno = ENOMEM;
			return MNL_CB_ERROR;
		}
		t->links = grown;
		t->cap = cap;
	}
	l = &t->links[t->n++];
	memset(l, 0, sizeof(*l));
	l->ifindex = (int)ifsm->ifindex;
	mnl_attr_for_each(attr, nlh, sizeof(*ifsm))
	{
		size_t len = mnl_attr_get_payload_len(attr);

		/* older kernels send a shorter struct: copy what is there */
		if (mnl_attr_get_type(attr) == IFLA_STATS_LINK_64)
			memcpy(&l->stats, mnl_attr_get_payload(attr),
			       len < sizeof(l->stats) ? len : sizeof(l->stats));
	}
	return MNL_CB_OK;
}

static void reset(void *data)
{
	struct link_stats_table *t = data;

	t->n = 0; /* a dump that restarts: the array stays for the next */
}

static int by_ifindex(const void *a, const void *b)
{
	const struct link_stats *x = a, *y = b;

	return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

int link_stats_dump(struct nl_sock *s, struct link_stats_table *t)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETSTATS, 0);
	struct if_stats_msg *ifsm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifsm));
	int ret;

	ifsm->family = AF_UNSPEC;
	ifsm->filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64);
	t->n = 0;
	ret = nl_dump(s, nlh, dump_cb, reset, t);
	if (ret < 0) {
		t->n = 0;
		return ret;
	}
	/* dumped in the kernel's order (by index, per hash bucket on old kernels): make sure */
	qsort(t->links, t->n, sizeof(*t->links), by_ifindex);
	return 0;
}

const struct link_stats *link_stats_find_index(const struct link_stats_table *t, int ifindex)
{
	struct link_stats key = {.ifindex = ifindex};

	if (ifindex <= 0 || !t->n)
		return NULL;
	return bsearch(&key, t->links, t->n, sizeof(*t->links), by_ifindex);
}

const struct link_stats *link_stats_find(struct link_stats_table *t, const char *name)
{
	struct link_stats key = {0};
	struct ifreq ifr = {0};

	if (!t->ioctl_tried) {
		t->ioctl_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		t->ioctl_tried = true;
	}
	if (t->ioctl_fd < 0 || strlen(name) >= sizeof(ifr.ifr_name))
		return NULL;
	memcpy(ifr.ifr_name, name, strlen(name) + 1);
	if (ioctl(t->ioctl_fd, SIOCGIFINDEX, &ifr) < 0)
		return NULL;
	key.ifindex = ifr.ifr_ifindex;
	return bsearch(&key, t->links, t->n, sizeof(*t->links), by_ifindex);
}

void link_stats_free(struct link_stats_table *t)
{
	free(t->links);
	if (t->ioctl_tried && t->ioctl_fd >= 0)
		close(t->ioctl_fd);
	memset(t, 0, sizeof(*t));
}
