// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/vxlan.c - the VXLAN device of a vnet. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>

#include "kinds/vxlan.h"
#include "kinds/kind.h"

void vxlan_put_create(struct nlmsghdr *nlh, const struct op *op, int master)
{
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct nlattr *info, *data;

	/* created down: the message that marks it owned brings it up (see engine/reconcile.c) */
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, op->ifname);
	mnl_attr_put_u32(nlh, IFLA_MTU, op->mtu);
	if (master)
		mnl_attr_put_u32(nlh, IFLA_MASTER, (uint32_t)master);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "vxlan");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	mnl_attr_put_u32(nlh, IFLA_VXLAN_ID, op->vni);
	mnl_attr_put_u16(nlh, IFLA_VXLAN_PORT, htons(op->port));
	if (op->local.family == AF_INET)
		mnl_attr_put(nlh, IFLA_VXLAN_LOCAL, 4, op->local.bytes);
	else
		mnl_attr_put(nlh, IFLA_VXLAN_LOCAL6, 16, op->local.bytes);
	if (op->no_learning)
		mnl_attr_put_u8(nlh, IFLA_VXLAN_LEARNING, 0);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
}

/* The bridge must not learn remote MACs on an EVPN port either: zebra installs them. */
static void evpn_port_learning_off(const struct desired_vnet *v, struct op *op)
{
	if (!v->evpn)
		return;
	op->change.mask |= LINK_SET_LEARNING;
	op->change.learning = false;
	op_detail(op, "learning off (evpn)");
}

static int plan_create(const struct desired_vnet *v, struct plan *p)
{
	char a[IP_ADDR_STRLEN];
	struct op *op =
	    plan_add(p, OP_VXLAN_CREATE, PHASE_VXLAN, VERB_CREATE, "vxlan %s", v->vxlan);

	if (!op)
		return -ENOMEM;
	snprintf(op->ifname, sizeof(op->ifname), "%s", v->vxlan);
	snprintf(op->master, sizeof(op->master), "%s", v->name);
	op->mtu = v->mtu;
	op->vni = v->vni;
	op->port = v->port;
	op->local = v->local;
	op->no_learning = v->evpn;
	op_detail(op, "vni %u, port %u, local %s, mtu %u, bridge %s%s", v->vni, v->port,
		  ip_addr_str(&v->local, a, sizeof(a)), v->mtu, v->name,
		  v->evpn ? ", evpn: no learning" : "");
	/* the second port's isolation is set once it is in the bridge */
	op = plan_add(p, OP_LINK_CHANGE, PHASE_VXLAN, VERB_CHANGE, "vxlan %s", v->vxlan);
	if (!op)
		return -ENOMEM;
	snprintf(op->ifname, sizeof(op->ifname), "%s", v->vxlan);
	op->change.mask = LINK_SET_ISOLATED;
	op->change.isolated = true;
	op_detail(op, "bridge port isolated");
	evpn_port_learning_off(v, op);
	return 0;
}

/* Attributes the kernel cannot change on a live device. */
static bool immutable_differs(const struct desired_vnet *v, const struct link_obs *have, char *why,
			      size_t len)
{
	char a[IP_ADDR_STRLEN], b[IP_ADDR_STRLEN];

	if (strcmp(have->kind, "vxlan")) {
		snprintf(why, len, "kind %s is not vxlan", have->kind[0] ? have->kind : "unknown");
		return true;
	}
	if (have->vni != v->vni) {
		snprintf(why, len, "vni %u -> %u", have->vni, v->vni);
		return true;
	}
	if (have->port != v->port) {
		snprintf(why, len, "port %u -> %u", have->port, v->port);
		return true;
	}
	if (!ip_addr_equal(&have->local, &v->local)) {
		snprintf(why, len, "local %s -> %s", ip_addr_str(&have->local, a, sizeof(a)),
			 ip_addr_str(&v->local, b, sizeof(b)));
		return true;
	}
	if (have->vxlan_nolearning != v->evpn) {
		snprintf(why, len, "learning %s (control plane %s)",
			 v->evpn ? "on -> off" : "off -> on", v->evpn ? "evpn" : "static");
		return true;
	}
	if (have->vxlan_link) {
		snprintf(why, len, "bound to a lower device");
		return true;
	}
	return false;
}

int vxlan_plan(const struct desired_vnet *v, const struct link_obs *have,
	       const struct link_obs *bridge, const char *owner, struct plan *p, bool *recreated)
{
	struct link_change c = {0};
	char why[128];
	struct op *op;

	*recreated = false;
	if (!have) {
		*recreated = true;
		return plan_create(v, p);
	}
	if (immutable_differs(v, have, why, sizeof(why))) {
		op = plan_add(p, OP_LINK_DELETE, PHASE_DELETE, VERB_DELETE, "vxlan %s", have->name);
		if (!op)
			return -ENOMEM;
		op->ifindex = have->ifindex;
		op_detail(op, "recreated: %s", why);
		*recreated = true;
		return plan_create(v, p);
	}
	if (have->mtu != v->mtu) {
		c.mask |= LINK_SET_MTU;
		c.mtu = v->mtu;
	}
	if (!bridge || have->master != bridge->ifindex) {
		c.mask |= LINK_SET_MASTER;
		c.master = bridge ? bridge->ifindex : 0; /* 0: the bridge is new, look it up */
	}
	if (!(have->flags & IFF_UP))
		c.mask |= LINK_SET_UP;
	if (strcmp(have->alias, owner)) {
		/* wanted again before its grace period ended: no longer retiring */
		c.mask |= LINK_SET_ALIAS;
		snprintf(c.alias, sizeof(c.alias), "%s", owner);
	}
	if (!c.mask && have->isolated && !(v->evpn && have->port_learning))
		return 0;
	if (c.mask) {
		op = plan_add(p, OP_LINK_CHANGE, PHASE_VXLAN, VERB_CHANGE, "vxlan %s", v->vxlan);
		if (!op)
			return -ENOMEM;
		op->ifindex = have->ifindex;
		snprintf(op->ifname, sizeof(op->ifname), "%s", have->name);
		snprintf(op->master, sizeof(op->master), "%s", v->name);
		op->change = c;
		if (c.mask & LINK_SET_MTU)
			op_detail(op, "mtu %u -> %u", have->mtu, v->mtu);
		if (c.mask & LINK_SET_MASTER)
			op_detail(op, "into bridge %s", v->name);
		if (c.mask & LINK_SET_UP)
			op_detail(op, "down -> up");
		if (c.mask & LINK_SET_ALIAS)
			op_detail(op, "back in use, no longer retiring");
	}
	/* isolation is a port option: set it after (re)joining the bridge */
	if (!have->isolated || (c.mask & LINK_SET_MASTER) || (v->evpn && have->port_learning)) {
		op = plan_add(p, OP_LINK_CHANGE, PHASE_VXLAN, VERB_CHANGE, "vxlan %s", v->vxlan);
		if (!op)
			return -ENOMEM;
		op->ifindex = have->ifindex;
		snprintf(op->ifname, sizeof(op->ifname), "%s", have->name);
		op->change.mask = LINK_SET_ISOLATED;
		op->change.isolated = true;
		op_detail(op, "bridge port isolated");
		evpn_port_learning_off(v, op);
	}
	return 0;
}

static int vxlan_encode(struct kind_encoder *e, struct op *op)
{
	int master = e->ifindex(e, op->master);
	struct nlmsghdr *nlh;

	if (!master) {
		snprintf(e->why, sizeof(e->why), "bridge not found");
		return -ENODEV;
	}
	e->reserve(e, 3, 3 * KIND_LINK_MSG_MAX);
	nlh = e->msg(e, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	if (!nlh)
		return -ENOBUFS;
	vxlan_put_create(nlh, op, master);
	return link_encode_create(e, op, nlh);
}

const struct kind vxlan_kind = {.name = "vxlan", .encode = vxlan_encode};
