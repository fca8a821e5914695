// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/bridge.c - the Linux bridge of a vnet. */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>

#include "kinds/bridge.h"
#include "kinds/kind.h"

void bridge_put_create(struct nlmsghdr *nlh, const char *name, unsigned int mtu)
{
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct nlattr *info;

	/* created down: the message that marks it owned brings it up (see engine/reconcile.c) */
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	/* an MTU set here sticks: the bridge no longer follows its smallest port */
	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "bridge");
	mnl_attr_nest_end(nlh, info);
}

static int plan_create(const struct desired_vnet *v, struct plan *p)
{
	struct op *op =
	    plan_add(p, OP_BRIDGE_CREATE, PHASE_LINKS, VERB_CREATE, "bridge %s", v->name);

	if (!op)
		return -ENOMEM;
	snprintf(op->ifname, sizeof(op->ifname), "%s", v->name);
	op->mtu = v->mtu;
	op_detail(op, "mtu %u", v->mtu);
	return 0;
}

int bridge_plan(const struct desired_vnet *v, const struct link_obs *have, struct plan *p)
{
	struct link_change c = {0};
	struct op *op;

	if (!have)
		return plan_create(v, p);
	if (strcmp(have->kind, "bridge")) {
		/* an owned link of another kind under this name: replace it */
		op = plan_add(p, OP_LINK_DELETE, PHASE_DELETE, VERB_DELETE, "%s %s",
			      have->kind[0] ? have->kind : "link", have->name);
		if (!op)
			return -ENOMEM;
		op->ifindex = have->ifindex;
		op_detail(op, "replaced by bridge %s", v->name);
		return plan_create(v, p);
	}
	op = NULL;
	if (have->mtu != v->mtu) {
		c.mask |= LINK_SET_MTU;
		c.mtu = v->mtu;
	}
	if (!(have->flags & IFF_UP))
		c.mask |= LINK_SET_UP;
	if (!c.mask)
		return 0;
	op = plan_add(p, OP_LINK_CHANGE, PHASE_LINKS, VERB_CHANGE, "bridge %s", v->name);
	if (!op)
		return -ENOMEM;
	op->ifindex = have->ifindex;
	snprintf(op->ifname, sizeof(op->ifname), "%s", have->name);
	op->change = c;
	if (c.mask & LINK_SET_MTU)
		op_detail(op, "mtu %u -> %u", have->mtu, v->mtu);
	if (c.mask & LINK_SET_UP)
		op_detail(op, "down -> up");
	return 0;
}

static int bridge_encode(struct kind_encoder *e, struct op *op)
{
	struct nlmsghdr *nlh;

	e->reserve(e, 3, 3 * KIND_LINK_MSG_MAX);
	nlh = e->msg(e, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	if (!nlh)
		return -ENOBUFS;
	bridge_put_create(nlh, op->ifname, op->mtu);
	return link_encode_create(e, op, nlh);
}

const struct kind bridge_kind = {.name = "bridge", .encode = bridge_encode};
