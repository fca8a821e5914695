// SPDX-License-Identifier: GPL-2.0-or-later
/* netlink/route_src.c - RTM_GETROUTE for the source address: this node's underlay address. */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "netlink/nl.h"
#include "netlink/route_src.h"

struct route_answer {
	int family;
	struct ip_addr src;
	bool routed;
};

static int answer_cb(const struct nlmsghdr *nlh, void *data)
{
	struct route_answer *a = data;
	const struct nlattr *attr;
	size_t want = a->family == AF_INET ? 4 : 16;

	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return MNL_CB_OK;
	a->routed = true;
	mnl_attr_for_each(attr, nlh, sizeof(struct rtmsg))
	{
		if (mnl_attr_get_type(attr) != RTA_PREFSRC ||
		    mnl_attr_get_payload_len(attr) != want)
			continue;
		a->src.family = a->family;
		memcpy(a->src.bytes, mnl_attr_get_payload(attr), want);
	}
	return MNL_CB_OK;
}

int nl_route_source(const struct ip_addr *dst, struct ip_addr *src)
{
	struct route_answer a = {.family = dst->family};
	char buf[NL_MSG_BUF];
	struct nl_sock *s = nl_route_shared(); /* the process's: one socket per command */
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	int ret;

	if (!s)
		return -errno;
	nlh = nl_msg_start(s, buf, RTM_GETROUTE, 0);
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (uint8_t)dst->family;
	rtm->rtm_dst_len = ip_addr_host_len(dst);
	mnl_attr_put(nlh, RTA_DST, ip_addr_len(dst), dst->bytes);
	ret = nl_request(s, nlh, answer_cb, &a);
	if (ret == -ENETUNREACH || ret == -EHOSTUNREACH || (ret == 0 && !a.routed))
		return -ENETUNREACH;
	if (ret < 0)
		return ret;
	if (!a.src.family)
		return -EADDRNOTAVAIL;
	*src = a.src;
	return 0;
}
