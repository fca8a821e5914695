// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/bridge.c - the Linux bridge of a vnet. */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>
#include <sys/random.h>

#include "kinds/bridge.h"
#include "kinds/kind.h"

void bridge_put_create(struct nlmsghdr *nlh, const char *name, unsigned int mtu)
{
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct nlattr *info;

	/* created down: the message that marks it owned brings it up (see engine/reconcile.c) */
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	/* not yet the bridge's own: see bridge_encode */
	mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "bridge");
	mnl_attr_nest_end(nlh, info);
}

/* What a bridge op's detail says (op.shows). */
enum {
	SHOW_MTU = 1,	  /* create: "mtu N"; change: "mtu OLD -> NEW" */
	SHOW_UP = 2,	  /* change: "down -> up" */
	SHOW_STP = 4,	  /* change: "stp on -> off" */
	SHOW_ADDRGEN = 8, /* change: LINK_ADDRGEN_TEXT */
};

static int plan_create(const struct desired_vnet *v, struct plan *p)
{
	struct op *op =
	    plan_add(p, KIND_BRIDGE, OP_BRIDGE_CREATE, PHASE_LINKS, VERB_CREATE, v->name);

	if (!op)
		return -ENOMEM;
	op->u.create.mtu = v->mtu;
	op->shows = SHOW_MTU;
	return 0;
}

/*
 * in: vnet, link (the owned link of its name, or the vnet's bridge renamed by
 * hand, which gets its name back: a new bridge would leave the guests' ports
 * on the renamed one; NULL: absent).
 */
static int bridge_plan(const struct kind_input *in, struct plan *p)
{
	const struct desired_vnet *v = in->vnet;
	const struct link_obs *have = in->link;
	struct op *op;
	bool addrgen, renamed;

	if (!have)
		return plan_create(v, p);
	if (strcmp(have->kind, "bridge")) {
		/* an owned link of another kind under this name: replace it */
		op = plan_add(p, KIND_LINK, OP_LINK_DELETE, PHASE_DELETE, VERB_DELETE, NULL);
		if (!op)
			return -ENOMEM;
		op_delete_names(op, have->kind, have->name);
		op->ifindex = have->ifindex;
		op_detail(op, "replaced by bridge %s", v->name);
		return plan_create(v, p);
	}
	addrgen = link_addrgen_again(have, v->mtu);
	renamed = strcmp(have->name, v->name) != 0;
	if (have->mtu == v->mtu && (have->flags & IFF_UP) && !have->bridge_stp && !addrgen &&
	    !renamed)
		return 0;
	op = plan_add(p, KIND_BRIDGE, OP_LINK_CHANGE, PHASE_LINKS, VERB_CHANGE, v->name);
	if (!op)
		return -ENOMEM;
	op->ifindex = have->ifindex;
	if (renamed) {
		/* the kernel renames a link that is down: it comes up again */
		op->u.link.mask |= LINK_SET_NAME | LINK_SET_UP;
		op_detail(op, "renamed %s by hand: its name back, its ports kept", have->name);
	}
	if (have->mtu != v->mtu) {
		op->u.link.mask |= LINK_SET_MTU;
		op->u.link.mtu = v->mtu;
		op->u.link.old_mtu = have->mtu;
		op->shows |= SHOW_MTU;
	}
	if (!(have->flags & IFF_UP) && !renamed) {
		op->u.link.mask |= LINK_SET_UP;
		op->shows |= SHOW_UP;
	}
	/* STP would hold every port back on each change and send BPDUs into the tenant */
	if (have->bridge_stp) {
		op->u.link.mask |= LINK_SET_NO_STP;
		op->shows |= SHOW_STP;
	}
	if (addrgen) {
		op->u.link.mask |= LINK_SET_NO_ADDRGEN;
		op->shows |= SHOW_ADDRGEN;
	}
	return 0;
}

static void bridge_describe(const struct op *op, char *buf, size_t len)
{
	if (op->type == OP_BRIDGE_CREATE) {
		snprintf(buf, len, "mtu %u", op->u.create.mtu);
		return;
	}
	if (op->shows & SHOW_MTU)
		text_add(buf, len, "mtu %u -> %u", op->u.link.old_mtu, op->u.link.mtu);
	if (op->shows & SHOW_UP)
		text_add(buf, len, "down -> up");
	if (op->shows & SHOW_STP)
		text_add(buf, len, "stp on -> off");
	if (op->shows & SHOW_ADDRGEN)
		text_add(buf, len, LINK_ADDRGEN_TEXT);
}

/*
 * A bridge made without an address takes its smallest port's, again each
 * time a port comes or goes: a transport switch (a VXLAN device made, one
 * retired) changed it, and a gateway address on the bridge (a Proxmox SDN
 * subnet's) then answered from a MAC its guests had not learned. One given
 * at creation stays (the kernel marks it set, not inherited): a random
 * locally administered unicast address, as systemd-networkd gives.
 */
static void put_fixed_address(struct nlmsghdr *nlh)
{
	uint8_t mac[6];

	if (getrandom(mac, sizeof(mac), 0) != (ssize_t)sizeof(mac))
		return; /* the kernel's own choice then: as before */
	mac[0] = (uint8_t)((mac[0] & 0xfe) | 0x02);
	mnl_attr_put(nlh, IFLA_ADDRESS, sizeof(mac), mac);
}

/*
 * A bridge follows its smallest port's MTU, again each time a port comes,
 * goes or changes, until its MTU is changed (the kernel then marks it set);
 * an MTU given at creation is not marked. A guest's port of 1200 bytes
 * took the bridge to 1200 (the next guests then got 1200 from it, and plan
 * showed a change nobody had made): so the bridge is created one byte below
 * the zone's MTU, and the owner mark sets the zone's, before any port joins.
 * Down until then: no IPv6 link-local address, whichever side of 1280.
 */
static int bridge_encode(struct kind_encoder *e, struct op *op)
{
	struct nlmsghdr *nlh;

	if (op->type != OP_BRIDGE_CREATE)
		return link_encode(e, op);
	e->reserve(e, 4, 4 * KIND_LINK_MSG_MAX);
	nlh = e->msg(e, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	if (!nlh)
		return -ENOBUFS;
	bridge_put_create(nlh, op->ifname, op->u.create.mtu - 1);
	put_fixed_address(nlh);
	return link_encode_create(e, op, nlh, op->u.create.mtu);
}

/* Bridges are links: the link kind reads them (struct link_table). */
const struct kind bridge_kind = {.name = "bridge",
				 .noun = "bridge",
				 .parse = NULL,
				 .plan = bridge_plan,
				 .encode = bridge_encode,
				 .describe = bridge_describe};
