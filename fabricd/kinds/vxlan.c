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

const char *vxlan_role_name(enum vxlan_role role)
{
	switch (role) {
	case VXLAN_SENDS:
		return "sends";
	case VXLAN_LISTENS:
		return "listens";
	case VXLAN_MUTE:
		return "mute";
	}
	return "?";
}

/* The bridge must not learn remote MACs on an EVPN port either: zebra installs them. */
static bool want_learning(const struct vxlan_port *w)
{
	return w->role != VXLAN_MUTE && !w->evpn;
}

static bool want_flood(const struct vxlan_port *w)
{
	return w->role == VXLAN_SENDS;
}

bool vxlan_port_may_send(const struct link_obs *l)
{
	return !strcmp(l->slave_kind, "bridge") && (l->port_learning || l->port_flood);
}

static struct op *add_change(const struct vxlan_port *w, const struct link_obs *have,
			     enum op_phase phase, struct plan *p)
{
	struct op *op = plan_add(p, OP_LINK_CHANGE, phase, VERB_CHANGE, "vxlan %s", w->name);

	if (!op)
		return NULL;
	op->ifindex = have ? have->ifindex : 0;
	snprintf(op->ifname, sizeof(op->ifname), "%s", w->name);
	snprintf(op->master, sizeof(op->master), "%s", w->bridge);
	return op;
}

/*
 * The port options of w's role; have: the port as it is (NULL: new, or it
 * just (re)joined the bridge, so it has the kernel's defaults).
 */
static int plan_port(const struct vxlan_port *w, const struct link_obs *have, struct plan *p)
{
	bool learning = want_learning(w), flood = want_flood(w);
	bool was_learning = have ? have->port_learning : true;
	bool was_flooding = have ? have->port_flood != 0 : true;
	bool flood_differs = have ? have->port_flood != (flood ? LINK_FLOOD_ALL : 0) : !flood;
	bool smaller = (was_learning && !learning) || (was_flooding && !flood);
	struct op *op;

	if (have && have->isolated && have->port_learning == learning && !flood_differs)
		return 0;
	/* a smaller role waits until the vnet's other device has taken over (PHASE_NEIGH) */
	op = add_change(w, have,
			have && smaller && w->role != VXLAN_SENDS ? PHASE_RETIRE : PHASE_VXLAN, p);
	if (!op)
		return -ENOMEM;
	op->change.mask = LINK_SET_ISOLATED;
	op->change.isolated = true;
	if (!have || !have->isolated)
		op_detail(op, "bridge port isolated");
	if (was_learning != learning) {
		op->change.mask |= LINK_SET_LEARNING;
		op->change.learning = learning;
	}
	if (flood_differs) {
		op->change.mask |= LINK_SET_FLOOD;
		op->change.flood = flood;
	}
	if (w->role == VXLAN_MUTE && was_learning)
		op->change.mask |= LINK_SET_FLUSH;
	if (w->evpn)
		op_detail(op, "learning off (evpn)");
	else if (op->change.mask & (LINK_SET_LEARNING | LINK_SET_FLOOD))
		op_detail(op, "%s",
			  w->role == VXLAN_SENDS     ? "sends: learning and flooding on"
			  : w->role == VXLAN_LISTENS ? "listens: learning, no flooding"
						     : "mute: receives only, learned "
						       "entries flushed");
	return 0;
}

static int plan_create(const struct vxlan_port *w, struct plan *p)
{
	char a[IP_ADDR_STRLEN];
	struct op *op = plan_add(p, OP_VXLAN_CREATE, PHASE_VXLAN, VERB_CREATE, "vxlan %s", w->name);

	if (!op)
		return -ENOMEM;
	snprintf(op->ifname, sizeof(op->ifname), "%s", w->name);
	snprintf(op->master, sizeof(op->master), "%s", w->bridge);
	op->mtu = w->mtu;
	op->vni = w->vni;
	op->port = w->port;
	op->local = w->local;
	op->no_learning = w->evpn;
	op_detail(op, "vni %u, port %u, local %s, mtu %u, bridge %s%s", w->vni, w->port,
		  ip_addr_str(&w->local, a, sizeof(a)), w->mtu, w->bridge,
		  w->evpn		   ? ", evpn: no learning"
		  : w->role == VXLAN_SENDS ? ""
					   : ", standby");
	/* the port options are set once it is in the bridge */
	return plan_port(w, NULL, p);
}

/* Attributes the kernel cannot change on a live device. */
static bool immutable_differs(const struct vxlan_port *w, const struct link_obs *have, char *why,
			      size_t len)
{
	char a[IP_ADDR_STRLEN], b[IP_ADDR_STRLEN];

	if (strcmp(have->kind, "vxlan")) {
		snprintf(why, len, "kind %s is not vxlan", have->kind[0] ? have->kind : "unknown");
		return true;
	}
	if (have->vni != w->vni) {
		snprintf(why, len, "vni %u -> %u", have->vni, w->vni);
		return true;
	}
	if (have->port != w->port) {
		snprintf(why, len, "port %u -> %u", have->port, w->port);
		return true;
	}
	if (!ip_addr_equal(&have->local, &w->local)) {
		snprintf(why, len, "local %s -> %s", ip_addr_str(&have->local, a, sizeof(a)),
			 ip_addr_str(&w->local, b, sizeof(b)));
		return true;
	}
	if (have->vxlan_nolearning != w->evpn) {
		snprintf(why, len, "learning %s (control plane %s)",
			 w->evpn ? "on -> off" : "off -> on", w->evpn ? "evpn" : "static");
		return true;
	}
	if (have->vxlan_link) {
		snprintf(why, len, "bound to a lower device");
		return true;
	}
	return false;
}

int vxlan_plan(const struct vxlan_port *want, const struct link_obs *have,
	       const struct link_obs *bridge, struct plan *p, bool *recreated)
{
	struct link_change c = {0};
	char why[128];
	struct op *op;

	*recreated = false;
	if (!have) {
		*recreated = true;
		return plan_create(want, p);
	}
	if (immutable_differs(want, have, why, sizeof(why))) {
		op = plan_add(p, OP_LINK_DELETE, PHASE_DELETE, VERB_DELETE, "vxlan %s", have->name);
		if (!op)
			return -ENOMEM;
		op->ifindex = have->ifindex;
		op_detail(op, "recreated: %s", why);
		*recreated = true;
		return plan_create(want, p);
	}
	if (have->mtu != want->mtu) {
		c.mask |= LINK_SET_MTU;
		c.mtu = want->mtu;
	}
	if (!bridge || have->master != bridge->ifindex) {
		c.mask |= LINK_SET_MASTER;
		c.master = bridge ? bridge->ifindex : 0; /* 0: the bridge is new, look it up */
	}
	if (!(have->flags & IFF_UP))
		c.mask |= LINK_SET_UP;
	if (strcmp(have->alias, want->alias)) {
		c.mask |= LINK_SET_ALIAS;
		snprintf(c.alias, sizeof(c.alias), "%s", want->alias);
	}
	if (c.mask) {
		op = add_change(want, have, PHASE_VXLAN, p);
		if (!op)
			return -ENOMEM;
		op->change = c;
		if (c.mask & LINK_SET_MTU)
			op_detail(op, "mtu %u -> %u", have->mtu, want->mtu);
		if (c.mask & LINK_SET_MASTER)
			op_detail(op, "into bridge %s", want->bridge);
		if (c.mask & LINK_SET_UP)
			op_detail(op, "down -> up");
		if (c.mask & LINK_SET_ALIAS)
			op_detail(op, "alias \"%s\"", want->alias);
	}
	/* port options: set after (re)joining the bridge, which resets them */
	return plan_port(want, (c.mask & LINK_SET_MASTER) ? NULL : have, p);
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
