// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/route.c - route lookups towards the peers, for the underlay MTU and source address. */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <string.h>

#include "engine/route.h"

static void parse_metrics(const struct nlattr *nest, struct route_hop *hop)
{
	const struct nlattr *attr;

	mnl_attr_for_each_nested(attr, nest)
	{
		if (mnl_attr_get_type(attr) == RTAX_MTU &&
		    mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			hop->mtu = mnl_attr_get_u32(attr);
	}
}

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct route_hop *hop = data;
	const struct nlattr *attr;

	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return MNL_CB_OK;
	hop->local = ((const struct rtmsg *)mnl_nlmsg_get_payload(nlh))->rtm_type == RTN_LOCAL;
	mnl_attr_for_each(attr, nlh, sizeof(struct rtmsg))
	{
		switch (mnl_attr_get_type(attr)) {
		case RTA_OIF:
			if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
				hop->oif = (int)mnl_attr_get_u32(attr);
			break;
		case RTA_PREFSRC:
			if (mnl_attr_get_payload_len(attr) == 4 ||
			    mnl_attr_get_payload_len(attr) == 16) {
				hop->src.family =
				    mnl_attr_get_payload_len(attr) == 4 ? AF_INET : AF_INET6;
				memcpy(hop->src.bytes, mnl_attr_get_payload(attr),
				       mnl_attr_get_payload_len(attr));
			}
			break;
		case RTA_METRICS:
			if (mnl_attr_validate(attr, MNL_TYPE_NESTED) == 0)
				parse_metrics(attr, hop);
			break;
		}
	}
	return MNL_CB_OK;
}

int route_get(struct nl_sock *s, const struct ip_addr *dst, struct route_hop *hop)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETROUTE, 0);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	int ret;

	memset(hop, 0, sizeof(*hop));
	rtm->rtm_family = (uint8_t)dst->family;
	rtm->rtm_dst_len = ip_addr_host_len(dst);
	mnl_attr_put(nlh, RTA_DST, ip_addr_len(dst), dst->bytes);
	ret = nl_request(s, nlh, route_cb, hop);
	if (ret < 0)
		return ret;
	return hop->oif ? 0 : -ENETUNREACH;
}

int route_hop_mtu(const struct link_table *links, const struct route_hop *hop, unsigned int *mtu)
{
	const struct link_obs *l = link_by_index(links, hop->oif);

	if (!l)
		return -ENODEV;
	*mtu = hop->mtu && hop->mtu < l->mtu ? hop->mtu : l->mtu;
	return 0;
}
