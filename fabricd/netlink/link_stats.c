// SPDX-License-Identifier: GPL-2.0-or-later
/* netlink/link_stats.c - IFLA_STATS64 of every link, in one RTM_GETLINK dump. */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netlink/link_stats.h"

struct stats_attrs {
	const struct nlattr *name, *stats;
};

static int attr_cb(const struct nlattr *attr, void *data)
{
	struct stats_attrs *a = data;

	switch (mnl_attr_get_type(attr)) {
	case IFLA_IFNAME:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
			a->name = attr;
		break;
	case IFLA_STATS64:
		/* older kernels send a shorter struct: copy what is there */
		a->stats = attr;
		break;
	}
	return MNL_CB_OK;
}

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_stats_table *t = data;
	struct stats_attrs a = {0};
	struct link_stats *grown, *l;
	size_t len;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    mnl_attr_parse(nlh, sizeof(struct ifinfomsg), attr_cb, &a) < 0 || !a.name)
		return MNL_CB_OK;
	grown = realloc(t->links, (t->n + 1) * sizeof(*grown));
	if (!grown) {
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	t->links = grown;
	l = &t->links[t->n++];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", mnl_attr_get_str(a.name));
	if (a.stats) {
		len = mnl_attr_get_payload_len(a.stats);
		memcpy(&l->stats, mnl_attr_get_payload(a.stats),
		       len < sizeof(l->stats) ? len : sizeof(l->stats));
	}
	return MNL_CB_OK;
}

static void reset(void *data)
{
	link_stats_free(data);
}

int link_stats_dump(struct nl_sock *s, struct link_stats_table *t)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	int ret;

	ifi->ifi_family = AF_UNSPEC;
	link_stats_free(t);
	ret = nl_dump(s, nlh, dump_cb, reset, t);
	if (ret < 0)
		link_stats_free(t);
	return ret;
}

const struct link_stats *link_stats_find(const struct link_stats_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++) {
		if (!strcmp(t->links[i].name, name))
			return &t->links[i];
	}
	return NULL;
}

void link_stats_free(struct link_stats_table *t)
{
	free(t->links);
	t->links = NULL;
	t->n = 0;
}
