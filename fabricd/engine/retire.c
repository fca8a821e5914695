// SPDX-License-Identifier: GPL-2.0-or-later
/* engine/retire.c - the receive-only stage of a VXLAN device that a vnet has left. */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "base/log.h"
#include "engine/retire.h"

struct port_flags {
	bool seen;
	bool learning, unicast_flood, mcast_flood, bcast_flood;
};

static void parse_brport(const struct nlattr *nest, struct port_flags *f)
{
	const struct nlattr *attr;

	mnl_attr_for_each_nested(attr, nest)
	{
		bool on;

		if (mnl_attr_get_payload_len(attr) < 1)
			continue;
		on = mnl_attr_get_u8(attr) != 0;
		switch (mnl_attr_get_type(attr)) {
		case IFLA_BRPORT_LEARNING:
			f->learning = on;
			break;
		case IFLA_BRPORT_UNICAST_FLOOD:
			f->unicast_flood = on;
			break;
		case IFLA_BRPORT_MCAST_FLOOD:
			f->mcast_flood = on;
			break;
		case IFLA_BRPORT_BCAST_FLOOD:
			f->bcast_flood = on;
			break;
		}
	}
}

static int port_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *attr, *info;
	struct port_flags *f = data;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(struct ifinfomsg)))
		return MNL_CB_OK;
	mnl_attr_for_each(attr, nlh, sizeof(struct ifinfomsg))
	{
		if (mnl_attr_get_type(attr) != IFLA_LINKINFO ||
		    mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0)
			continue;
		mnl_attr_for_each_nested(info, attr)
		{
			if (mnl_attr_get_type(info) == IFLA_INFO_SLAVE_DATA &&
			    mnl_attr_validate(info, MNL_TYPE_NESTED) == 0) {
				f->seen = true;
				parse_brport(info, f);
			}
		}
	}
	return MNL_CB_OK;
}

/* Buffers start zeroed: attribute padding goes to the kernel as it is. */
static int get_port(struct nl_sock *s, int ifindex, struct port_flags *f)
{
	char buf[NL_MSG_BUF] = {0};
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	memset(f, 0, sizeof(*f));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
	return nl_request(s, nlh, port_cb, f);
}

/* on: learning and flooding as a new port has them; off: receive-only, learned entries flushed */
static int set_port(struct nl_sock *s, int ifindex, bool on)
{
	char buf[NL_MSG_BUF] = {0};
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_NEWLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct nlattr *info, *data;

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_SLAVE_KIND, "bridge");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_SLAVE_DATA);
	mnl_attr_put_u8(nlh, IFLA_BRPORT_LEARNING, on);
	mnl_attr_put_u8(nlh, IFLA_BRPORT_UNICAST_FLOOD, on);
	mnl_attr_put_u8(nlh, IFLA_BRPORT_MCAST_FLOOD, on);
	mnl_attr_put_u8(nlh, IFLA_BRPORT_BCAST_FLOOD, on);
	if (!on)
		mnl_attr_put(nlh, IFLA_BRPORT_FLUSH, 0, NULL);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	return nl_request(s, nlh, NULL, NULL);
}

static void wake_at(long long *wake, long long t)
{
	if (t > 0 && (!*wake || t < *wake))
		*wake = t;
}

int retire_ports(struct reconcile *r, const struct observed *have, unsigned int grace,
		 long long *wake)
{
	char err[NL_EXTACK_MAX + 64];
	int changed = 0;

	*wake = 0;
	for (size_t i = 0; i < have->links.n; i++) {
		const struct link_obs *l = &have->links.links[i];
		long long due = link_retire_after(l, r->owner);
		long long quiet_at = due - grace / 2;
		bool closed, want_closed;
		struct port_flags f;
		int ret;

		if (strcmp(l->kind, "vxlan") || strcmp(l->slave_kind, "bridge") ||
		    !link_is_owned(l, r->owner))
			continue;
		if (due && r->now >= due)
			continue; /* the planner deletes it in this pass */
		want_closed = due && r->now >= quiet_at;
		if (due)
			wake_at(wake, want_closed ? due : quiet_at);
		ret = get_port(&r->rtnl, l->ifindex, &f);
		if (ret == -ENODEV)
			continue;
		if (ret < 0 || !f.seen) {
			log_error("vxlan %s: cannot read its bridge port: %s", l->name,
				  nl_strerror(&r->rtnl, ret < 0 ? ret : -EPROTO, err, sizeof(err)));
			return ret < 0 ? ret : -EPROTO;
		}
		closed = !f.learning && !f.unicast_flood && !f.mcast_flood && !f.bcast_flood;
		/* only our own receive-only mark is undone: other port settings are not ours */
		if (want_closed == closed)
			continue;
		ret = set_port(&r->rtnl, l->ifindex, !want_closed);
		if (ret == -ENODEV)
			continue;
		if (ret < 0) {
			log_error("vxlan %s: %s failed: %s", l->name,
				  want_closed ? "making it receive-only" : "restoring its port",
				  nl_strerror(&r->rtnl, ret, err, sizeof(err)));
			return ret;
		}
		if (want_closed)
			log_info("vxlan %s: receive-only until it is removed in %lld s (bridge "
				 "traffic moves to the new transport)",
				 l->name, due - r->now);
		else
			log_info("vxlan %s: learning and flooding on again (back in use)", l->name);
		changed++;
	}
	return changed;
}
