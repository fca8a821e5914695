// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/ifaddr.c - interface addresses. */
#include <errno.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/ifaddr.h"
#include "kinds/kind.h"
#include "engine/observe.h"

int ifaddr_parse(const struct nlmsghdr *nlh, struct ifaddr_entry *e)
{
	const struct ifaddrmsg *ifa;
	const struct nlattr *attr;
	const struct nlattr *local = NULL, *address = NULL, *use;
	uint16_t len;

	memset(e, 0, sizeof(*e));
	if (nlh->nlmsg_type != RTM_NEWADDR || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifa)))
		return -EINVAL;
	ifa = mnl_nlmsg_get_payload(nlh);
	mnl_attr_for_each(attr, nlh, sizeof(*ifa))
	{
		if (mnl_attr_get_type(attr) == IFA_LOCAL)
			local = attr;
		else if (mnl_attr_get_type(attr) == IFA_ADDRESS)
			address = attr;
	}
	/* IFA_LOCAL is the address; IFA_ADDRESS is the peer on point-to-point links */
	use = local ? local : address;
	if (!use)
		return -EINVAL;
	len = mnl_attr_get_payload_len(use);
	if ((ifa->ifa_family == AF_INET && len != 4) ||
	    (ifa->ifa_family == AF_INET6 && len != 16) ||
	    (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6))
		return -EINVAL;
	e->ifindex = (int)ifa->ifa_index;
	e->prefix.addr.family = ifa->ifa_family;
	memcpy(e->prefix.addr.bytes, mnl_attr_get_payload(use), len);
	e->prefix.len = ifa->ifa_prefixlen;
	return 0;
}

void ifaddr_table_free(struct ifaddr_table *t)
{
	free(t->entries);
	free(t->routes);
	t->entries = NULL;
	t->routes = NULL;
	t->n = t->n_routes = 0;
}

void ifaddr_put(struct nlmsghdr *nlh, int ifindex, const struct ip_prefix *p)
{
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));

	ifa->ifa_family = (uint8_t)p->addr.family;
	ifa->ifa_prefixlen = p->len;
	ifa->ifa_index = (unsigned int)ifindex;
	mnl_attr_put(nlh, IFA_LOCAL, ip_addr_len(&p->addr), p->addr.bytes);
	mnl_attr_put(nlh, IFA_ADDRESS, ip_addr_len(&p->addr), p->addr.bytes);
	/* no duplicate address detection on the fabric: the definition guarantees uniqueness */
	if (p->addr.family == AF_INET6)
		mnl_attr_put_u32(nlh, IFA_FLAGS, IFA_F_NODAD);
}

/* Whether the address's prefix route is there (a host-length address has none). */
static bool prefix_route_present(const struct ifaddr_table *t, const struct ip_prefix *addr)
{
	struct ip_prefix net = ip_prefix_network(addr);

	if (addr->len >= ip_addr_host_len(&addr->addr))
		return true;
	for (size_t i = 0; i < t->n_routes; i++) {
		if (t->routes[i].len == net.len && ip_addr_equal(&t->routes[i].addr, &net.addr))
			return true;
	}
	return false;
}

/* A delete of every address of the fabric device other than pfx. */
static int plan_removals(const struct ifaddr_table *addrs, const struct link_obs *l,
			 const struct ip_prefix *pfx, struct plan *p)
{
	for (size_t i = 0; l && i < addrs->n; i++) {
		const struct ip_prefix *h = &addrs->entries[i].prefix;
		struct op *op;

		/* the kernel's own IPv6 link-local address is not ours to remove */
		if (ip_addr_is_link_local(&h->addr) ||
		    (ip_addr_equal(&h->addr, &pfx->addr) && h->len == pfx->len))
			continue;
		op = plan_add(p, KIND_IFADDR, OP_ADDR_DEL, PHASE_NEIGH, VERB_DELETE, FABRIC_IFNAME);
		if (!op)
			return -ENOMEM;
		op->ifindex = l->ifindex;
		op->u.prefix = *h;
	}
	return 0;
}

static int plan_address(const struct link_obs *l, const struct ip_prefix *pfx, struct plan *p)
{
	struct op *op =
	    plan_add(p, KIND_IFADDR, OP_ADDR_ADD, PHASE_NEIGH, VERB_CREATE, FABRIC_IFNAME);

	if (!op)
		return -ENOMEM;
	op->ifindex = l ? l->ifindex : 0;
	op->u.prefix = *pfx;
	return 0;
}

/*
 * Only the prefix length changes (/24 -> /16): the address with the new
 * length goes on before the old one goes. Over IPv4 the kernel flushes every
 * route with an address as source when the last copy of that address goes
 * (an operator's `ip route ... src FABRIC_ADDRESS`), and two copies with
 * different masks are both primary. Anything else goes old first: a new
 * IPv4 address in the old one's subnet would be its secondary, which the
 * kernel deletes with the primary (promote_secondaries is off by default);
 * IPv6 refuses a second copy of one address, and keeps such routes, without
 * their source.
 */
static bool add_first(const struct ifaddr_table *addrs, const struct ip_prefix *pfx)
{
	if (pfx->addr.family != AF_INET)
		return false;
	for (size_t i = 0; i < addrs->n; i++) {
		if (ip_addr_equal(&addrs->entries[i].prefix.addr, &pfx->addr))
			return true;
	}
	return false;
}

/* in: want (its fabric address), link (the fabric device, NULL: not made yet), have->fabric_addrs.
 */
static int ifaddr_plan(const struct kind_input *in, struct plan *p)
{
	const struct ip_prefix *pfx = &in->want->fabric.address;
	const struct ifaddr_table *addrs = &in->have->fabric_addrs;
	const struct link_obs *l = in->link;
	bool present = false;
	struct op *op;
	int ret;

	for (size_t i = 0; l && i < addrs->n; i++)
		present |= ip_addr_equal(&addrs->entries[i].prefix.addr, &pfx->addr) &&
			   addrs->entries[i].prefix.len == pfx->len;
	if (present && !prefix_route_present(addrs, pfx)) {
		op = plan_add(p, KIND_IFADDR, OP_PREFIX_ROUTE, PHASE_NEIGH, VERB_CREATE,
			      FABRIC_IFNAME);
		if (!op)
			return -ENOMEM;
		op->ifindex = l->ifindex;
		op->u.prefix = *pfx;
		op_detail(op, "drift: the fabric address's prefix route was deleted");
	}
	if (present)
		return plan_removals(addrs, l, pfx, p);
	if (l && add_first(addrs, pfx)) {
		ret = plan_address(l, pfx, p);
		return ret < 0 ? ret : plan_removals(addrs, l, pfx, p);
	}
	ret = plan_removals(addrs, l, pfx, p);
	return ret < 0 ? ret : plan_address(l, pfx, p);
}

/* The route the kernel makes with the address: `ip route` shows "proto kernel". */
static int encode_prefix_route(struct kind_encoder *e, const struct op *op, int ifindex)
{
	struct nlmsghdr *nlh = e->msg(e, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE);
	struct ip_prefix net = ip_prefix_network(&op->u.prefix);
	bool v6 = net.addr.family == AF_INET6;
	struct rtmsg *rtm;

	if (!nlh)
		return -ENOBUFS;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (uint8_t)net.addr.family;
	rtm->rtm_dst_len = net.len;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_KERNEL;
	rtm->rtm_scope = v6 ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put(nlh, RTA_DST, ip_addr_len(&net.addr), net.addr.bytes);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)ifindex);
	if (v6)
		mnl_attr_put_u32(nlh, RTA_PRIORITY, 256); /* the kernel's metric for it */
	else
		mnl_attr_put(nlh, RTA_PREFSRC, 4, op->u.prefix.addr.bytes);
	e->commit(e, nlh);
	return 0;
}

static int ifaddr_encode(struct kind_encoder *e, struct op *op)
{
	/* known from the dump, or made earlier in this run */
	int idx = op->ifindex ? op->ifindex : e->ifindex(e, op->ifname);
	struct nlmsghdr *nlh;

	if (!idx)
		return -ENODEV;
	if (op->type == OP_PREFIX_ROUTE)
		return encode_prefix_route(e, op, idx);
	if (op->type == OP_ADDR_ADD)
		nlh = e->msg(e, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
	else
		nlh = e->msg(e, RTM_DELADDR, 0);
	if (!nlh)
		return -ENOBUFS;
	ifaddr_put(nlh, idx, &op->u.prefix);
	e->commit(e, nlh);
	return 0;
}

/* A main-table unicast route through the link t->ifindex into t->routes. */
static int parse_route(const struct nlmsghdr *nlh, struct ifaddr_table *t)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a, *dst = NULL;
	uint32_t table = rtm->rtm_table, oif = 0;
	struct ip_prefix *grown, r = {.len = rtm->rtm_dst_len};

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*rtm)) || rtm->rtm_type != RTN_UNICAST ||
	    (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6))
		return 0;
	mnl_attr_for_each(a, nlh, sizeof(*rtm))
	{
		if (mnl_attr_get_type(a) == RTA_TABLE && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			table = mnl_attr_get_u32(a);
		else if (mnl_attr_get_type(a) == RTA_OIF && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			oif = mnl_attr_get_u32(a);
		else if (mnl_attr_get_type(a) == RTA_DST)
			dst = a;
	}
	r.addr.family = rtm->rtm_family;
	if (table != RT_TABLE_MAIN || !t->ifindex || oif != (uint32_t)t->ifindex || !dst ||
	    mnl_attr_get_payload_len(dst) != ip_addr_len(&r.addr))
		return 0;
	memcpy(r.addr.bytes, mnl_attr_get_payload(dst), ip_addr_len(&r.addr));
	grown = realloc(t->routes, (t->n_routes + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	t->routes = grown;
	t->routes[t->n_routes++] = r;
	return 1;
}

/*
 * The kind's table: struct ifaddr_table, keeping only the link t->ifindex's
 * addresses (0: all) and the main table's routes through it.
 */
static int ifaddr_kind_parse(const struct nlmsghdr *nlh, void *table)
{
	struct ifaddr_table *t = table;
	struct ifaddr_entry e, *grown;

	if (nlh->nlmsg_type == RTM_NEWROUTE)
		return parse_route(nlh, t);
	if (ifaddr_parse(nlh, &e) < 0 || (t->ifindex && e.ifindex != t->ifindex))
		return 0;
	grown = realloc(t->entries, (t->n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	t->entries = grown;
	t->entries[t->n++] = e;
	return 1;
}

/* The object says it all: "address 10.255.0.1/16 on wgfab0". */
static void ifaddr_describe(const struct op *op, char *buf, size_t len)
{
	(void)op;
	if (len)
		buf[0] = '\0';
}

const struct kind ifaddr_kind = {.name = "address",
				 .noun = "address",
				 .parse = ifaddr_kind_parse,
				 .plan = ifaddr_plan,
				 .encode = ifaddr_encode,
				 .describe = ifaddr_describe};
