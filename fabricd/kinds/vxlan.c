// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/vxlan.c - the VXLAN device of a vnet. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/vxlan.h"
#include "kinds/kind.h"

/* IFLA_VXLAN_LOCAL or IFLA_VXLAN_LOCAL6, by the address's family. */
static void put_local(struct nlmsghdr *nlh, const struct ip_addr *local)
{
	if (local->family == AF_INET)
		mnl_attr_put(nlh, IFLA_VXLAN_LOCAL, 4, local->bytes);
	else
		mnl_attr_put(nlh, IFLA_VXLAN_LOCAL6, 16, local->bytes);
}

void vxlan_put_create(struct nlmsghdr *nlh, const struct op *op, int master)
{
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct nlattr *info, *data;

	/* created down: the message that marks it owned brings it up (see engine/reconcile.c) */
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, op->ifname);
	mnl_attr_put_u32(nlh, IFLA_MTU, op->u.create.mtu);
	if (master)
		mnl_attr_put_u32(nlh, IFLA_MASTER, (uint32_t)master);
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "vxlan");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	mnl_attr_put_u32(nlh, IFLA_VXLAN_ID, op->u.create.vni);
	mnl_attr_put_u16(nlh, IFLA_VXLAN_PORT, htons(op->u.create.port));
	put_local(nlh, &op->u.create.local);
	if (op->u.create.no_learning)
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

/* What a VXLAN op's detail says (op.shows). */
enum {
	SHOW_ISOLATED = 1,	 /* port: "bridge port isolated" */
	SHOW_EVPN = 2,		 /* port: "learning off (evpn)" */
	SHOW_ROLE = 4,		 /* port: what its role does */
	SHOW_MTU = 8,		 /* device: "mtu OLD -> NEW" */
	SHOW_INTO_BRIDGE = 16,	 /* device: "into bridge B" */
	SHOW_UP = 32,		 /* device: "down -> up" */
	SHOW_ALIAS = 64,	 /* device: the new alias (op.text) */
	SHOW_FORWARDING = 128,	 /* port: "bridge port forwarding again" */
	SHOW_MCAST_ROUTER = 256, /* port: "multicast router port" */
	SHOW_ADDRGEN = 512,	 /* device: LINK_ADDRGEN_TEXT */
	SHOW_UNLOCKED = 1024,	 /* port: "bridge port unlocked" */
	SHOW_NO_SUPPRESS = 2048, /* port: "bridge port neigh_suppress off" */
};

static struct op *add_change(const struct vxlan_port *w, const struct link_obs *have,
			     enum op_phase phase, struct plan *p)
{
	struct op *op = plan_add(p, KIND_VXLAN, OP_LINK_CHANGE, phase, VERB_CHANGE, w->name);

	if (!op)
		return NULL;
	op->ifindex = have ? have->ifindex : 0;
	op->u.link.bridge = w->bridge;
	op->u.link.role = (uint8_t)w->role;
	return op;
}

/*
 * neigh_suppress on a static vnet's port keeps ARP and ND announcements
 * from the other nodes: drift. On an EVPN port it is EVPN's ARP/ND
 * suppression (FRR's documented setting, Proxmox's bridge-arp-nd-suppress):
 * the bridge answers from the neighbours zebra installs. Left alone there.
 */
static bool suppress_drift(const struct vxlan_port *w, const struct link_obs *have)
{
	return have && have->port_neigh_suppress && !w->evpn;
}

/*
 * The port options of w's role; have: the port as it is (NULL: new, or it
 * just (re)joined the bridge, so it has the kernel's defaults).
 */
static int plan_port(const struct vxlan_port *w, const struct link_obs *have, bool stuck,
		     struct plan *p)
{
	bool learning = want_learning(w), flood = want_flood(w);
	bool was_learning = have ? have->port_learning : true;
	bool was_flooding = have ? have->port_flood != 0 : true;
	bool flood_differs = have ? have->port_flood != (flood ? LINK_FLOOD_ALL : 0) : !flood;
	bool smaller = (was_learning && !learning) || (was_flooding && !flood);
	struct op *op;
	struct op_link *c;

	if (have && have->isolated && have->port_learning == learning && !flood_differs && !stuck &&
	    have->port_mcast_router == MDB_RTR_TYPE_PERM && !have->port_locked &&
	    !suppress_drift(w, have))
		return 0;
	/* a smaller role waits until the vnet's other device has taken over (PHASE_NEIGH) */
	op = add_change(w, have,
			have && smaller && w->role != VXLAN_SENDS ? PHASE_RETIRE
			: !have && w->late			  ? PHASE_STANDBY
								  : PHASE_VXLAN,
			p);
	if (!op)
		return -ENOMEM;
	c = &op->u.link;
	c->mask = LINK_SET_ISOLATED;
	c->isolated = true;
	if (!have || !have->isolated)
		op->shows |= SHOW_ISOLATED;
	if (was_learning != learning) {
		c->mask |= LINK_SET_LEARNING;
		c->learning = learning;
	}
	if (flood_differs) {
		c->mask |= LINK_SET_FLOOD;
		c->flood = flood;
	}
	if (w->role == VXLAN_MUTE && was_learning)
		c->mask |= LINK_SET_FLUSH;
	if (stuck) {
		c->mask |= LINK_SET_FORWARDING;
		op->shows |= SHOW_FORWARDING;
	}
	if (have && have->port_locked) {
		c->mask |= LINK_SET_UNLOCKED;
		op->shows |= SHOW_UNLOCKED;
	}
	if (suppress_drift(w, have)) {
		c->mask |= LINK_SET_NO_NEIGH_SUPPRESS;
		op->shows |= SHOW_NO_SUPPRESS;
	}
	/*
	 * The port to the rest of the segment takes all multicast, whatever the
	 * bridge snooped: group members and queriers behind the other nodes
	 * are learned on one transport's device, and after a switch the other
	 * one carries the frames (with a querier, snooped groups would wait up
	 * to 125 s for its next query).
	 */
	if (!have || have->port_mcast_router != MDB_RTR_TYPE_PERM) {
		c->mask |= LINK_SET_MCAST_ROUTER;
		if (have)
			op->shows |= SHOW_MCAST_ROUTER;
	}
	if (w->evpn)
		op->shows |= SHOW_EVPN;
	else if (c->mask & (LINK_SET_LEARNING | LINK_SET_FLOOD))
		op->shows |= SHOW_ROLE;
	return 0;
}

static int plan_create(const struct vxlan_port *w, struct plan *p)
{
	struct op *op = plan_add(p, KIND_VXLAN, OP_VXLAN_CREATE,
				 w->late ? PHASE_STANDBY : PHASE_VXLAN, VERB_CREATE, w->name);

	if (!op)
		return -ENOMEM;
	op->u.create.bridge = w->bridge;
	op->u.create.mtu = w->mtu;
	op->u.create.vni = w->vni;
	op->u.create.port = w->port;
	op->u.create.local = w->local;
	op->u.create.no_learning = w->evpn;
	op->u.create.role = (uint8_t)w->role;
	/* made in a stage (a retiring device made again): its note from the start */
	if (strchr(w->alias, ' ') && !(op->text = strdup(w->alias)))
		return -ENOMEM;
	/* the port options are set once it is in the bridge */
	return plan_port(w, NULL, false, p);
}

static void describe_create(const struct op *op, char *buf, size_t len)
{
	char a[IP_ADDR_STRLEN];

	snprintf(buf, len, "vni %u, port %u, local %s, mtu %u, bridge %s%s", op->u.create.vni,
		 op->u.create.port, ip_addr_str(&op->u.create.local, a, sizeof(a)),
		 op->u.create.mtu, op->u.create.bridge,
		 op->u.create.no_learning	    ? ", evpn: no learning"
		 : op->u.create.role == VXLAN_SENDS ? ""
						    : ", standby");
}

static void vxlan_describe(const struct op *op, char *buf, size_t len)
{
	const struct op_link *c = &op->u.link;

	if (op->type == OP_VXLAN_CREATE) {
		describe_create(op, buf, len);
		return;
	}
	if (op->type == OP_VXLAN_LOCAL)
		return; /* op.note: "VTEP a -> b" or the TTL */
	if (op->shows & SHOW_MTU)
		text_add(buf, len, "mtu %u -> %u", c->old_mtu, c->mtu);
	if (op->shows & SHOW_INTO_BRIDGE)
		text_add(buf, len, "into bridge %s", c->bridge);
	if (op->shows & SHOW_UP)
		text_add(buf, len, "down -> up");
	if (op->shows & SHOW_ALIAS)
		text_add(buf, len, "alias \"%s\"", op->text ? op->text : "");
	if (op->shows & SHOW_ADDRGEN)
		text_add(buf, len, LINK_ADDRGEN_TEXT);
	if (op->shows & SHOW_ISOLATED)
		text_add(buf, len, "bridge port isolated");
	if (op->shows & SHOW_FORWARDING)
		text_add(buf, len,
			 "bridge port forwarding again (its state was changed by hand; "
			 "fabricd's bridges run no STP)");
	if (op->shows & SHOW_MCAST_ROUTER)
		text_add(buf, len, "multicast router port");
	if (op->shows & SHOW_UNLOCKED)
		text_add(buf, len,
			 "bridge port unlocked (locked by hand, it dropped every frame "
			 "from the other nodes)");
	if (op->shows & SHOW_NO_SUPPRESS)
		text_add(buf, len,
			 "bridge port neigh_suppress off (set by hand, it kept duplicate "
			 "address detection and gratuitous ARP from the other nodes)");
	if (op->shows & SHOW_EVPN)
		text_add(buf, len, "learning off (evpn)");
	else if (op->shows & SHOW_ROLE)
		text_add(buf, len, "%s",
			 c->role == VXLAN_SENDS	    ? "sends: learning and flooding on"
			 : c->role == VXLAN_LISTENS ? "listens: learning, no flooding"
						    : "mute: receives only, learned "
						      "entries flushed");
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
	/* an EVPN device's VTEP follows its transport, live (zebra announces the new one) */
	if (!ip_addr_equal(&have->local, &w->local) &&
	    !(w->evpn && have->local.family == w->local.family)) {
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

/*
 * A port that is up in an up bridge but not forwarding (`bridge link set
 * ... state 0`, 1 or 2: disabled, listening, learning): it carries nothing,
 * and nothing else would say so. Without kernel STP (fabricd's bridges have
 * none) such a port is forwarding, and nothing moves it on from another
 * state.
 */
static bool port_stuck(const struct link_obs *have, const struct link_obs *bridge,
		       unsigned int changing)
{
	return have && bridge && !(changing & (LINK_SET_MASTER | LINK_SET_UP)) &&
	       (have->flags & IFF_UP) && (bridge->flags & IFF_UP) && have->port_state_known &&
	       have->port_state != BR_STATE_FORWARDING;
}

/*
 * in: port (the device wanted), link (the owned link of that name or NULL),
 * bridge (the vnet's bridge if it exists and is kept); sets *in->made when
 * the device is (re)created.
 */
static int vxlan_plan(const struct kind_input *in, struct plan *p)
{
	const struct vxlan_port *want = in->port;
	const struct link_obs *have = in->link, *bridge = in->bridge;
	struct op_link c = {0};
	unsigned int shows = 0;
	char why[128], a[IP_ADDR_STRLEN], b[IP_ADDR_STRLEN];
	struct op *op;

	*in->made = false;
	if (!have) {
		*in->made = true;
		return plan_create(want, p);
	}
	if (immutable_differs(want, have, why, sizeof(why))) {
		op = plan_add(p, KIND_LINK, OP_LINK_DELETE, PHASE_DELETE, VERB_DELETE, NULL);
		if (!op)
			return -ENOMEM;
		op_delete_names(op, "vxlan", have->name);
		op->ifindex = have->ifindex;
		op_detail(op, "recreated: %s", why);
		*in->made = true;
		return plan_create(want, p);
	}
	/*
	 * An EVPN device's VTEP follows its transport; a fixed TTL set by hand
	 * (`ip link set ... type vxlan ttl 1`) ends the tunnel at a routed
	 * underlay's first router. Both are changed on the live device.
	 */
	if (!ip_addr_equal(&have->local, &want->local) || have->vxlan_ttl) {
		op = plan_add(p, KIND_VXLAN, OP_VXLAN_LOCAL, PHASE_VXLAN, VERB_CHANGE, have->name);
		if (!op)
			return -ENOMEM;
		op->ifindex = have->ifindex;
		op->u.dst = want->local;
		if (!ip_addr_equal(&have->local, &want->local))
			op_detail(op, "VTEP %s -> %s", ip_addr_str(&have->local, a, sizeof(a)),
				  ip_addr_str(&want->local, b, sizeof(b)));
		else
			op_detail(op, "ttl %u -> the route's hop limit (it was set by hand)",
				  have->vxlan_ttl);
	}
	if (have->mtu != want->mtu) {
		c.mask |= LINK_SET_MTU;
		c.mtu = want->mtu;
		c.old_mtu = have->mtu;
		shows |= SHOW_MTU;
	}
	if (!bridge || have->master != bridge->ifindex) {
		c.mask |= LINK_SET_MASTER;
		c.master = bridge ? bridge->ifindex : 0; /* 0: the bridge is new, look it up */
		shows |= SHOW_INTO_BRIDGE;
	}
	if (!(have->flags & IFF_UP)) {
		c.mask |= LINK_SET_UP;
		shows |= SHOW_UP;
	}
	if (strcmp(link_alias(have), want->alias)) {
		c.mask |= LINK_SET_ALIAS;
		shows |= SHOW_ALIAS;
	}
	if (link_addrgen_again(have, want->mtu)) {
		c.mask |= LINK_SET_NO_ADDRGEN;
		shows |= SHOW_ADDRGEN;
	}
	if (c.mask) {
		op = add_change(want, have, PHASE_VXLAN, p);
		if (!op)
			return -ENOMEM;
		c.bridge = op->u.link.bridge;
		c.role = op->u.link.role;
		op->u.link = c;
		op->shows = (uint16_t)shows;
		if ((c.mask & LINK_SET_ALIAS) && !(op->text = strdup(want->alias)))
			return -ENOMEM;
	}
	/* port options: set after (re)joining the bridge, which resets them */
	return plan_port(want, (c.mask & LINK_SET_MASTER) ? NULL : have,
			 port_stuck(have, bridge, c.mask), p);
}

/*
 * `ip link set NAME type vxlan local ADDR ttl 0`: the kernel changes both on
 * a live device (TTL 0: the route's hop limit, as fabricd makes them).
 */
static int encode_local(struct kind_encoder *e, const struct op *op)
{
	struct nlmsghdr *nlh = e->msg(e, RTM_NEWLINK, 0);
	struct nlattr *info, *data;
	struct ifinfomsg *ifi;

	if (!nlh)
		return -ENOBUFS;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = op->ifindex;
	info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "vxlan");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	put_local(nlh, &op->u.dst);
	mnl_attr_put_u8(nlh, IFLA_VXLAN_TTL, 0);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	e->commit(e, nlh);
	return 0;
}

/*
 * A bridge without an address of its own (Proxmox's, `bridges: existing`)
 * takes its smallest port's, anew whenever a port comes or goes; a
 * transport switch makes and retires VXLAN ports, and its gateway address
 * then answered from another MAC. A vnet's secure device exists in both
 * transports (the plain vnet's mute standby) and is made with the smaller
 * address, 02:00:..., its plain device with 02:01:...: such a bridge keeps
 * the secure device's through every switch. The rest is a hash of the local
 * address and VNI: one node's devices differ from another's.
 */
static void put_address(struct nlmsghdr *nlh, const struct op *op)
{
	const struct ip_addr *local = &op->u.create.local;
	uint32_t h = 2166136261u; /* FNV-1a */
	uint8_t mac[6] = {0x02, strncmp(op->ifname, "vs", 2) ? 0x01 : 0x00};

	for (size_t i = 0; i < sizeof(local->bytes); i++)
		h = (h ^ local->bytes[i]) * 16777619u;
	for (int i = 0; i < 4; i++)
		h = (h ^ ((op->u.create.vni >> (8 * i)) & 0xff)) * 16777619u;
	for (int i = 0; i < 4; i++)
		mac[2 + i] = (uint8_t)(h >> (8 * i));
	mnl_attr_put(nlh, IFLA_ADDRESS, sizeof(mac), mac);
}

static int vxlan_encode(struct kind_encoder *e, struct op *op)
{
	int master;
	struct nlmsghdr *nlh;

	if (op->type == OP_VXLAN_LOCAL)
		return encode_local(e, op);
	if (op->type != OP_VXLAN_CREATE)
		return link_encode(e, op);
	master = op->u.create.bridge ? e->ifindex(e, op->u.create.bridge) : 0;
	if (!master) {
		snprintf(e->why, sizeof(e->why), "bridge not found");
		return -ENODEV;
	}
	e->reserve(e, 3, 3 * KIND_LINK_MSG_MAX);
	nlh = e->msg(e, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	if (!nlh)
		return -ENOBUFS;
	vxlan_put_create(nlh, op, master);
	put_address(nlh, op);
	return link_encode_create(e, op, nlh, 0);
}

/* VXLAN devices are links: the link kind reads them (struct link_table). */
const struct kind vxlan_kind = {.name = "vxlan",
				.noun = "vxlan",
				.parse = NULL,
				.plan = vxlan_plan,
				.encode = vxlan_encode,
				.describe = vxlan_describe};
