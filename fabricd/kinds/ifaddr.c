// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/ifaddr.c - interface addresses. */
#include <errno.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/ifaddr.h"

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
	t->entries = NULL;
	t->n = 0;
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
