// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kinds/carry.c - the policy rule, the route and the rp_filter that carry
 * secure EVPN vnets' VXLAN into WireGuard (kinds/carry.h). One kind for the
 * three: they exist together, for one reason.
 */
#include <errno.h>
#include <linux/fib_rules.h>
#include <linux/ip.h>
#include <linux/netconf.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>

#include "engine/observe.h"
#include "kinds/carry.h"
#include "kinds/kind.h"

void carry_obs_init(struct carry_obs *c, int fabric_ifindex)
{
	memset(c, 0, sizeof(*c));
	c->rp_filter = -1;
	c->fabric_ifindex = fabric_ifindex;
}

static int family_slot(int family)
{
	return family == AF_INET ? 0 : family == AF_INET6 ? 1 : -1;
}

static uint32_t attr_u32(const struct nlattr *a)
{
	return a && mnl_attr_validate(a, MNL_TYPE_U32) == 0 ? mnl_attr_get_u32(a) : 0;
}

/* fabricd's rule: exactly the priority, mark, mask and table it makes. */
static void parse_rule(const struct nlmsghdr *nlh, struct carry_obs *c)
{
	const struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[FRA_MAX + 1] = {0}, *a;
	int slot = family_slot(frh->family);
	uint32_t table;

	if (slot < 0 || frh->action != FR_ACT_TO_TBL)
		return;
	mnl_attr_for_each(a, nlh, sizeof(*frh))
	{
		if (mnl_attr_get_type(a) <= FRA_MAX)
			tb[mnl_attr_get_type(a)] = a;
	}
	table = tb[FRA_TABLE] ? attr_u32(tb[FRA_TABLE]) : frh->table;
	if (attr_u32(tb[FRA_PRIORITY]) == CARRY_RULE_PREF &&
	    attr_u32(tb[FRA_FWMARK]) == CARRY_MARK && attr_u32(tb[FRA_FWMASK]) == CARRY_MARK_MASK &&
	    table == CARRY_TABLE)
		c->rule[slot] = true;
}

/* A default route of CARRY_TABLE through the fabric device. */
static void parse_route(const struct nlmsghdr *nlh, struct carry_obs *c)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	int slot = family_slot(rtm->rtm_family);
	uint32_t table = rtm->rtm_table, oif = 0;

	if (slot < 0 || rtm->rtm_dst_len || rtm->rtm_type != RTN_UNICAST)
		return;
	mnl_attr_for_each(a, nlh, sizeof(*rtm))
	{
		if (mnl_attr_get_type(a) == RTA_TABLE)
			table = attr_u32(a);
		else if (mnl_attr_get_type(a) == RTA_OIF)
			oif = attr_u32(a);
	}
	if (table == CARRY_TABLE && c->fabric_ifindex && oif == (uint32_t)c->fabric_ifindex)
		c->route[slot] = true;
}

static void parse_netconf(const struct nlmsghdr *nlh, struct carry_obs *c)
{
	const struct netconfmsg *ncm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	int ifindex = 0, rp = -1;

	if (ncm->ncm_family != AF_INET)
		return;
	mnl_attr_for_each(a, nlh, sizeof(*ncm))
	{
		if (mnl_attr_get_type(a) == NETCONFA_IFINDEX)
			ifindex = (int)attr_u32(a);
		else if (mnl_attr_get_type(a) == NETCONFA_RP_FILTER)
			rp = (int)attr_u32(a);
	}
	if (ifindex && ifindex == c->fabric_ifindex)
		c->rp_filter = rp;
}

/* The kind's table: struct carry_obs. Rules, routes and netconf replies. */
static int carry_parse(const struct nlmsghdr *nlh, void *table)
{
	struct carry_obs *c = table;

	switch (nlh->nlmsg_type) {
	case RTM_NEWRULE:
		if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(struct fib_rule_hdr)))
			parse_rule(nlh, c);
		return 1;
	case RTM_NEWROUTE:
		if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(struct rtmsg)))
			parse_route(nlh, c);
		return 1;
	case RTM_NEWNETCONF:
		if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(struct netconfmsg)))
			parse_netconf(nlh, c);
		return 1;
	default:
		return 0;
	}
}

static struct op *carry_op(struct plan *p, enum op_type type, enum op_phase phase,
			   enum op_verb verb, int family)
{
	struct op *op = plan_add(p, KIND_CARRY, type, phase, verb,
				 type == OP_CARRY_RULE ? NULL : FABRIC_IFNAME);

	if (op)
		op->u.family = family;
	return op;
}

/* The fabric device is made (again) in this pass: routes and settings go with the old one. */
static bool fabric_made(const struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->ops[i].type == OP_WG_CREATE)
			return true;
	}
	return false;
}

/*
 * in: want (carry, the node's underlay family), have (carry, links); p: the
 * fabric's ops planned so far. The route and rp_filter wait for the fabric
 * device (PHASE_NEIGH and PHASE_FABRIC_LINK come after it is made).
 */
static int carry_plan(const struct kind_input *in, struct plan *p)
{
	const struct carry_obs *have = &in->have->carry;
	const struct link_obs *fab = link_find(&in->have->links, FABRIC_IFNAME);
	int family = in->want->cluster->nodes[in->want->self].underlay.family;
	int fabric_family = in->want->cluster->fabric.prefix.addr.family;
	bool fresh = fabric_made(p);
	struct op *op;

	for (int slot = 0; slot < 2; slot++) {
		int f = slot ? AF_INET6 : AF_INET;
		/* VXLAN goes to VTEPs of both families: the underlay's and the fabric's */
		bool wanted = in->want->carry && (f == family || f == fabric_family);
		bool route = have->route[slot] && !fresh;

		if (wanted != have->rule[slot]) {
			op = carry_op(p, OP_CARRY_RULE, PHASE_NEIGH,
				      wanted ? VERB_CREATE : VERB_DELETE, f);
			if (!op)
				return -ENOMEM;
			op_detail(op, wanted ? "carries secure EVPN vnets' VXLAN into WireGuard"
					     : "no EVPN vnet here");
		}
		if (wanted != route && (wanted || fab)) {
			op = carry_op(p, OP_CARRY_ROUTE, PHASE_NEIGH,
				      wanted ? VERB_CREATE : VERB_DELETE, f);
			if (!op)
				return -ENOMEM;
			op->ifindex = fab && !fresh ? fab->ifindex : 0;
		}
	}
	if (in->want->carry && family == AF_INET && (fresh || have->rp_filter != CARRY_RP_FILTER)) {
		op = carry_op(p, OP_CARRY_RP_FILTER, PHASE_FABRIC_LINK, VERB_CHANGE, AF_INET);
		if (!op)
			return -ENOMEM;
		op->ifindex = fab && !fresh ? fab->ifindex : 0;
		if (have->rp_filter >= 0 && !fresh)
			op_detail(op,
				  "%d -> %d (loose: VXLAN through WireGuard has underlay sources)",
				  have->rp_filter, CARRY_RP_FILTER);
		else
			op_detail(op, "%d (loose: VXLAN through WireGuard has underlay sources)",
				  CARRY_RP_FILTER);
	}
	return 0;
}

int carry_plan_down(const struct carry_obs *have, struct plan *p)
{
	/* the route and the setting go with the fabric device */
	for (int slot = 0; slot < 2; slot++) {
		if (have->rule[slot] && !carry_op(p, OP_CARRY_RULE, PHASE_DELETE, VERB_DELETE,
						  slot ? AF_INET6 : AF_INET))
			return -ENOMEM;
	}
	return 0;
}

static int encode_rule(struct kind_encoder *e, const struct op *op)
{
	bool del = op->verb == VERB_DELETE;
	struct nlmsghdr *nlh =
	    e->msg(e, del ? RTM_DELRULE : RTM_NEWRULE, del ? 0 : NLM_F_CREATE | NLM_F_EXCL);
	struct fib_rule_hdr *frh;

	if (!nlh)
		return -ENOBUFS;
	frh = mnl_nlmsg_put_extra_header(nlh, sizeof(*frh));
	frh->family = (uint8_t)op->u.family;
	frh->action = FR_ACT_TO_TBL;
	frh->table = RT_TABLE_UNSPEC; /* above 255: FRA_TABLE */
	mnl_attr_put_u32(nlh, FRA_PRIORITY, CARRY_RULE_PREF);
	mnl_attr_put_u32(nlh, FRA_FWMARK, CARRY_MARK);
	mnl_attr_put_u32(nlh, FRA_FWMASK, CARRY_MARK_MASK);
	mnl_attr_put_u32(nlh, FRA_TABLE, CARRY_TABLE);
	if (!del)
		mnl_attr_put_u8(nlh, FRA_PROTOCOL, CARRY_PROTO);
	e->commit(e, nlh);
	return 0;
}

static int encode_route(struct kind_encoder *e, const struct op *op, int ifindex)
{
	bool del = op->verb == VERB_DELETE;
	struct nlmsghdr *nlh =
	    e->msg(e, del ? RTM_DELROUTE : RTM_NEWROUTE, del ? 0 : NLM_F_CREATE | NLM_F_REPLACE);
	struct rtmsg *rtm;

	if (!nlh)
		return -ENOBUFS;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (uint8_t)op->u.family;
	rtm->rtm_table = RT_TABLE_UNSPEC;
	rtm->rtm_protocol = del ? RTPROT_UNSPEC : CARRY_PROTO;
	rtm->rtm_scope = del ? RT_SCOPE_NOWHERE : RT_SCOPE_LINK;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_TABLE, CARRY_TABLE);
	if (ifindex)
		mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)ifindex);
	e->commit(e, nlh);
	return 0;
}

/* `ip link set` has no word for it: IFLA_AF_SPEC { AF_INET { IFLA_INET_CONF { rp_filter } } }. */
static int encode_rp_filter(struct kind_encoder *e, int ifindex)
{
	struct nlmsghdr *nlh = e->msg(e, RTM_NEWLINK, 0);
	struct nlattr *spec, *inet, *conf;
	struct ifinfomsg *ifi;

	if (!nlh)
		return -ENOBUFS;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	spec = mnl_attr_nest_start(nlh, IFLA_AF_SPEC);
	inet = mnl_attr_nest_start(nlh, AF_INET);
	conf = mnl_attr_nest_start(nlh, IFLA_INET_CONF);
	mnl_attr_put_u32(nlh, IPV4_DEVCONF_RP_FILTER, CARRY_RP_FILTER);
	mnl_attr_nest_end(nlh, conf);
	mnl_attr_nest_end(nlh, inet);
	mnl_attr_nest_end(nlh, spec);
	e->commit(e, nlh);
	return 0;
}

static int carry_encode(struct kind_encoder *e, struct op *op)
{
	int idx = 0;

	if (op->type == OP_CARRY_RULE)
		return encode_rule(e, op);
	if (op->verb != VERB_DELETE) {
		/* known from the dump, or made earlier in this run */
		idx = op->ifindex ? op->ifindex : e->ifindex(e, op->ifname);
		if (!idx)
			return -ENODEV;
	}
	if (op->type == OP_CARRY_ROUTE)
		return encode_route(e, op, idx);
	if (op->type == OP_CARRY_RP_FILTER)
		return encode_rp_filter(e, idx);
	return -EINVAL;
}

/* The object and op.note say it all. */
static void carry_describe(const struct op *op, char *buf, size_t len)
{
	(void)op;
	if (len)
		buf[0] = '\0';
}

const struct kind carry_kind = {.name = "carry",
				.noun = "carry",
				.parse = carry_parse,
				.plan = carry_plan,
				.encode = carry_encode,
				.describe = carry_describe};
