// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/link.c - read links from the kernel; encoders for link changes and deletes. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/link.h"
#include "kinds/kind.h"

static void copy_str_attr(const struct nlattr *attr, char *dst, size_t len)
{
	if (mnl_attr_validate(attr, MNL_TYPE_STRING) < 0)
		return;
	/* attribute strings may lack the NUL; copy by the payload length */
	size_t n = mnl_attr_get_payload_len(attr);
	const char *src = mnl_attr_get_payload(attr);

	while (n && src[n - 1] == '\0')
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void parse_vxlan_data(const struct nlattr *nest, struct link_obs *l)
{
	const struct nlattr *attr;

	mnl_attr_for_each_nested(attr, nest)
	{
		uint16_t len = mnl_attr_get_payload_len(attr);

		switch (mnl_attr_get_type(attr)) {
		case IFLA_VXLAN_ID:
			if (len == 4)
				l->vni = mnl_attr_get_u32(attr);
			break;
		case IFLA_VXLAN_PORT:
			if (len == 2)
				l->port = ntohs(mnl_attr_get_u16(attr));
			break;
		case IFLA_VXLAN_LOCAL:
			if (len == 4) {
				l->local.family = AF_INET;
				memcpy(l->local.bytes, mnl_attr_get_payload(attr), 4);
			}
			break;
		case IFLA_VXLAN_LOCAL6:
			if (len == 16) {
				l->local.family = AF_INET6;
				memcpy(l->local.bytes, mnl_attr_get_payload(attr), 16);
				l->vxlan_ipv6 = true;
			}
			break;
		case IFLA_VXLAN_GROUP6:
			l->vxlan_ipv6 = true;
			break;
		case IFLA_VXLAN_COLLECT_METADATA:
			l->vxlan_external = len >= 1 && mnl_attr_get_u8(attr);
			l->vxlan_other_rx |= l->vxlan_external;
			break;
		case IFLA_VXLAN_VNIFILTER:
		case IFLA_VXLAN_REMCSUM_RX:
		case IFLA_VXLAN_UDP_ZERO_CSUM6_RX:
			l->vxlan_other_rx |= len >= 1 && mnl_attr_get_u8(attr);
			break;
		case IFLA_VXLAN_GBP: /* flags: present when on */
		case IFLA_VXLAN_GPE:
		case IFLA_VXLAN_REMCSUM_NOPARTIAL:
			l->vxlan_other_rx = true;
			break;
		case IFLA_VXLAN_LEARNING:
			if (len >= 1)
				l->vxlan_nolearning = !mnl_attr_get_u8(attr);
			break;
		case IFLA_VXLAN_LINK:
			if (len == 4)
				l->vxlan_link = (int)mnl_attr_get_u32(attr);
			break;
		case IFLA_VXLAN_TTL:
			if (len >= 1)
				l->vxlan_ttl = mnl_attr_get_u8(attr);
			break;
		}
	}
}

static void parse_brport_data(const struct nlattr *nest, struct link_obs *l)
{
	const struct nlattr *attr;

	mnl_attr_for_each_nested(attr, nest)
	{
		bool on;

		if (mnl_attr_get_payload_len(attr) < 1)
			continue;
		on = mnl_attr_get_u8(attr) != 0;
		switch (mnl_attr_get_type(attr)) {
		case IFLA_BRPORT_ISOLATED:
			l->isolated = on;
			break;
		case IFLA_BRPORT_STATE:
			l->port_state = mnl_attr_get_u8(attr);
			l->port_state_known = true;
			break;
		case IFLA_BRPORT_MULTICAST_ROUTER:
			l->port_mcast_router = mnl_attr_get_u8(attr);
			break;
		case IFLA_BRPORT_LEARNING:
			l->port_learning = on;
			break;
		case IFLA_BRPORT_UNICAST_FLOOD:
			l->port_flood |= on ? LINK_FLOOD_UNICAST : 0;
			break;
		case IFLA_BRPORT_MCAST_FLOOD:
			l->port_flood |= on ? LINK_FLOOD_MCAST : 0;
			break;
		case IFLA_BRPORT_BCAST_FLOOD:
			l->port_flood |= on ? LINK_FLOOD_BCAST : 0;
			break;
		case IFLA_BRPORT_LOCKED:
			l->port_locked = on;
			break;
		case IFLA_BRPORT_NEIGH_SUPPRESS:
			l->port_neigh_suppress = on;
			break;
		}
	}
}

static void parse_bridge_data(const struct nlattr *nest, struct link_obs *l)
{
	const struct nlattr *attr;

	mnl_attr_for_each_nested(attr, nest)
	{
		if (mnl_attr_get_type(attr) == IFLA_BR_STP_STATE &&
		    mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			l->bridge_stp = mnl_attr_get_u32(attr) != 0;
	}
}

/* IFLA_AF_SPEC: the IPv6 address generation mode, when the link has IPv6 state. */
static void parse_af_spec(const struct nlattr *nest, struct link_obs *l)
{
	const struct nlattr *af, *attr;

	mnl_attr_for_each_nested(af, nest)
	{
		if (mnl_attr_get_type(af) != AF_INET6 || mnl_attr_validate(af, MNL_TYPE_NESTED) < 0)
			continue;
		mnl_attr_for_each_nested(attr, af)
		{
			if (mnl_attr_get_type(attr) == IFLA_INET6_ADDR_GEN_MODE &&
			    mnl_attr_validate(attr, MNL_TYPE_U8) == 0) {
				l->addr_gen_mode = mnl_attr_get_u8(attr);
				l->addr_gen_known = true;
			}
		}
	}
}

static void parse_linkinfo(const struct nlattr *nest, struct link_obs *l)
{
	const struct nlattr *attr, *data = NULL, *slave_data = NULL;

	mnl_attr_for_each_nested(attr, nest)
	{
		switch (mnl_attr_get_type(attr)) {
		case IFLA_INFO_KIND:
			copy_str_attr(attr, l->kind, sizeof(l->kind));
			break;
		case IFLA_INFO_SLAVE_KIND:
			copy_str_attr(attr, l->slave_kind, sizeof(l->slave_kind));
			break;
		case IFLA_INFO_DATA:
			if (mnl_attr_validate(attr, MNL_TYPE_NESTED) == 0)
				data = attr;
			break;
		case IFLA_INFO_SLAVE_DATA:
			if (mnl_attr_validate(attr, MNL_TYPE_NESTED) == 0)
				slave_data = attr;
			break;
		}
	}
	/* the kind decides how the data nest reads, and it may come after it */
	if (data && !strcmp(l->kind, "vxlan"))
		parse_vxlan_data(data, l);
	if (data && !strcmp(l->kind, "bridge"))
		parse_bridge_data(data, l);
	if (slave_data && !strcmp(l->slave_kind, "bridge"))
		parse_brport_data(slave_data, l);
}

/* IFLA_IFNAME, IFLA_MTU or IFLA_MASTER into l: what a dump and a port's notification share. */
static void parse_name_mtu_master(const struct nlattr *attr, struct link_obs *l)
{
	if (mnl_attr_get_type(attr) == IFLA_IFNAME)
		copy_str_attr(attr, l->name, sizeof(l->name));
	else if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
		return;
	else if (mnl_attr_get_type(attr) == IFLA_MTU)
		l->mtu = mnl_attr_get_u32(attr);
	else
		l->master = (int)mnl_attr_get_u32(attr);
}

/* An RTM_NEWLINK's header into l (emptied first): its ifinfomsg, or NULL for no such message. */
static const struct ifinfomsg *link_msg_begin(const struct nlmsghdr *nlh, struct link_obs *l)
{
	const struct ifinfomsg *ifi;

	memset(l, 0, sizeof(*l));
	if (nlh->nlmsg_type != RTM_NEWLINK || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifi)))
		return NULL;
	ifi = mnl_nlmsg_get_payload(nlh);
	l->ifindex = ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	return ifi;
}

int link_parse(const struct nlmsghdr *nlh, struct link_obs *l)
{
	const struct ifinfomsg *ifi = link_msg_begin(nlh, l);
	const struct nlattr *attr;

	if (!ifi)
		return -EINVAL;
	mnl_attr_for_each(attr, nlh, sizeof(*ifi))
	{
		switch (mnl_attr_get_type(attr)) {
		case IFLA_IFNAME:
		case IFLA_MTU:
		case IFLA_MASTER:
			parse_name_mtu_master(attr, l);
			break;
		case IFLA_IFALIAS:
			/* the kernel ends it with a NUL; without one it is not read */
			if (memchr(mnl_attr_get_payload(attr), '\0',
				   mnl_attr_get_payload_len(attr)))
				l->alias = mnl_attr_get_payload(attr);
			break;
		case IFLA_GROUP:
			if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
				l->group = mnl_attr_get_u32(attr);
			break;
		case IFLA_LINKINFO:
			if (mnl_attr_validate(attr, MNL_TYPE_NESTED) == 0)
				parse_linkinfo(attr, l);
			break;
		case IFLA_AF_SPEC:
			if (mnl_attr_validate(attr, MNL_TYPE_NESTED) == 0)
				parse_af_spec(attr, l);
			break;
		}
	}
	return l->name[0] ? 0 : -EINVAL;
}

int link_parse_port(const struct nlmsghdr *nlh, struct link_obs *l)
{
	const struct ifinfomsg *ifi = link_msg_begin(nlh, l);
	const struct nlattr *attr;
	bool port = false;

	if (!ifi || ifi->ifi_family != AF_BRIDGE)
		return -EINVAL;
	mnl_attr_for_each(attr, nlh, sizeof(*ifi))
	{
		switch (mnl_attr_get_type(attr)) {
		case IFLA_IFNAME:
		case IFLA_MTU:
		case IFLA_MASTER:
			parse_name_mtu_master(attr, l);
			break;
		case IFLA_PROTINFO:
			if (mnl_attr_validate(attr, MNL_TYPE_NESTED) == 0) {
				parse_brport_data(attr, l);
				port = true;
			}
			break;
		}
	}
	if (!l->name[0])
		return -EINVAL;
	return port && l->master > 0 ? 1 : 0;
}

bool link_port_same(const struct link_obs *a, const struct link_obs *b)
{
	return a->ifindex == b->ifindex && !strcmp(a->name, b->name) && a->flags == b->flags &&
	       a->mtu == b->mtu && a->master == b->master && a->isolated == b->isolated &&
	       a->port_state_known == b->port_state_known && a->port_state == b->port_state &&
	       a->port_mcast_router == b->port_mcast_router &&
	       a->port_learning == b->port_learning && a->port_flood == b->port_flood &&
	       a->port_locked == b->port_locked && a->port_neigh_suppress == b->port_neigh_suppress;
}

static void drop_index(struct link_table *t)
{
	free(t->by_name);
	t->by_name = NULL;
	t->n_by_name = 0;
}

int link_own_alias(struct link_obs *l)
{
	char *copy = strdup(link_alias(l));

	if (!copy)
		return -ENOMEM;
	l->alias = copy;
	return 0;
}

int link_set_alias(struct link_obs *l, const char *alias)
{
	char *copy = strdup(alias);

	if (!copy)
		return -ENOMEM;
	link_release(l);
	l->alias = copy;
	return 0;
}

void link_release(struct link_obs *l)
{
	free((char *)l->alias);
	l->alias = NULL;
}

void link_table_free(struct link_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		link_release(&t->links[i]);
	drop_index(t);
	free(t->links);
	t->links = NULL;
	t->n = 0;
}

static int name_ix_cmp(const void *a, const void *b)
{
	const struct link_name_ix *x = a, *y = b;
	int c = strncmp(x->name, y->name, sizeof(x->name));

	/* equal names (the kernel has none): the earlier link first, as a scan finds it */
	return c ? c : x->at < y->at ? -1 : x->at > y->at;
}

int link_table_index(struct link_table *t)
{
	drop_index(t);
	if (!t->n)
		return 0;
	t->by_name = malloc(t->n * sizeof(*t->by_name));
	if (!t->by_name)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		memcpy(t->by_name[i].name, t->links[i].name, sizeof(t->by_name[i].name));
		t->by_name[i].at = (uint32_t)i;
	}
	qsort(t->by_name, t->n, sizeof(*t->by_name), name_ix_cmp);
	t->n_by_name = t->n;
	return 0;
}

const struct link_obs *link_find(const struct link_table *t, const char *name)
{
	size_t lo = 0, hi = t->n_by_name;

	if (!t->by_name || t->n_by_name != t->n) {
		for (size_t i = 0; i < t->n; i++) {
			if (!strcmp(t->links[i].name, name))
				return &t->links[i];
		}
		return NULL;
	}
	/* the first entry not below name */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strncmp(t->by_name[mid].name, name, sizeof(t->by_name[mid].name)) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->n_by_name && !strcmp(t->links[t->by_name[lo].at].name, name))
		return &t->links[t->by_name[lo].at];
	return NULL;
}

const struct link_obs *link_by_index(const struct link_table *t, int ifindex)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->links[i].ifindex == ifindex)
			return &t->links[i];
	}
	return NULL;
}

bool link_is_owned(const struct link_obs *l, const char *owner)
{
	size_t n = strlen(owner);
	const char *alias = link_alias(l);

	return !strncmp(alias, owner, n) && (alias[n] == '\0' || alias[n] == ' ');
}

/* The positive number after " key" in the notes, or 0. */
static long long note_value(const char *notes, const char *key)
{
	char pat[32];
	const char *at;
	char *end;
	long long t;

	snprintf(pat, sizeof(pat), " %s", key);
	at = strstr(notes, pat);
	if (!at)
		return 0;
	t = strtoll(at + strlen(pat), &end, 10);
	return (*end == '\0' || *end == ' ') && t > 0 ? t : 0;
}

bool link_stage_note(const struct link_obs *l, const char *owner, const char *key,
		     struct stage_note *n)
{
	const char *notes;
	long long grace;

	memset(n, 0, sizeof(*n));
	if (!link_is_owned(l, owner))
		return false;
	notes = link_alias(l) + strlen(owner);
	n->after = note_value(notes, key);
	if (!n->after)
		return false;
	n->at = note_value(notes, "at=");
	grace = note_value(notes, "grace=");
	n->grace = grace > 0 && grace <= 86400 ? (unsigned int)grace : 0;
	return true;
}

static void put_link_header(struct nlmsghdr *nlh, int ifindex, const char *name)
{
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (!ifindex && name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
}

/* Bridge port options, as `ip link set X type bridge_slave isolated on` sends them. */
static void put_brport(struct nlmsghdr *nlh, const struct link_change *c)
{
	struct nlattr *info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	struct nlattr *data;

	mnl_attr_put_strz(nlh, IFLA_INFO_SLAVE_KIND, "bridge");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_SLAVE_DATA);
	if (c->mask & LINK_SET_ISOLATED)
		mnl_attr_put_u8(nlh, IFLA_BRPORT_ISOLATED, c->isolated ? 1 : 0);
	if (c->mask & LINK_SET_LEARNING)
		mnl_attr_put_u8(nlh, IFLA_BRPORT_LEARNING, c->learning ? 1 : 0);
	if (c->mask & LINK_SET_FLOOD) {
		mnl_attr_put_u8(nlh, IFLA_BRPORT_UNICAST_FLOOD, c->flood ? 1 : 0);
		mnl_attr_put_u8(nlh, IFLA_BRPORT_MCAST_FLOOD, c->flood ? 1 : 0);
		mnl_attr_put_u8(nlh, IFLA_BRPORT_BCAST_FLOOD, c->flood ? 1 : 0);
	}
	/* after learning off, so nothing is learned again between the two */
	if (c->mask & LINK_SET_FLUSH)
		mnl_attr_put(nlh, IFLA_BRPORT_FLUSH, 0, NULL);
	if (c->mask & LINK_SET_FORWARDING)
		mnl_attr_put_u8(nlh, IFLA_BRPORT_STATE, BR_STATE_FORWARDING);
	if (c->mask & LINK_SET_MCAST_ROUTER)
		mnl_attr_put_u8(nlh, IFLA_BRPORT_MULTICAST_ROUTER, MDB_RTR_TYPE_PERM);
	if (c->mask & LINK_SET_UNLOCKED)
		mnl_attr_put_u8(nlh, IFLA_BRPORT_LOCKED, 0);
	if (c->mask & LINK_SET_NO_NEIGH_SUPPRESS)
		mnl_attr_put_u8(nlh, IFLA_BRPORT_NEIGH_SUPPRESS, 0);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
}

void link_put_change(struct nlmsghdr *nlh, int ifindex, const char *name,
		     const struct link_change *c)
{
	struct ifinfomsg *ifi;

	put_link_header(nlh, ifindex, name);
	ifi = mnl_nlmsg_get_payload(nlh);
	if (c->mask & LINK_SET_UP) {
		ifi->ifi_flags = IFF_UP;
		ifi->ifi_change = IFF_UP;
	}
	if (c->mask & LINK_SET_MTU)
		mnl_attr_put_u32(nlh, IFLA_MTU, c->mtu);
	/* with an index, a name is a new name: do_setlink renames before it sets the flags */
	if ((c->mask & LINK_SET_NAME) && ifindex)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, c->name);
	if (c->mask & LINK_SET_MASTER)
		mnl_attr_put_u32(nlh, IFLA_MASTER, (uint32_t)c->master);
	if (c->mask & LINK_SET_ALIAS)
		mnl_attr_put_strz(nlh, IFLA_IFALIAS, c->alias);
	if (c->mask & LINK_SET_GROUP)
		mnl_attr_put_u32(nlh, IFLA_GROUP, c->group);
	if (c->mask & LINK_SET_NO_STP) {
		struct nlattr *info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
		struct nlattr *data;

		mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "bridge");
		data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
		mnl_attr_put_u32(nlh, IFLA_BR_STP_STATE, 0);
		mnl_attr_nest_end(nlh, data);
		mnl_attr_nest_end(nlh, info);
	}
	if (c->mask & LINK_SET_NO_ADDRGEN) {
		struct nlattr *spec = mnl_attr_nest_start(nlh, IFLA_AF_SPEC);
		struct nlattr *inet6 = mnl_attr_nest_start(nlh, AF_INET6);

		mnl_attr_put_u8(nlh, IFLA_INET6_ADDR_GEN_MODE, IN6_ADDR_GEN_MODE_NONE);
		mnl_attr_nest_end(nlh, inet6);
		mnl_attr_nest_end(nlh, spec);
	}
	if (c->mask & (LINK_SET_ISOLATED | LINK_SET_LEARNING | LINK_SET_FLOOD | LINK_SET_FLUSH |
		       LINK_SET_FORWARDING | LINK_SET_MCAST_ROUTER | LINK_SET_UNLOCKED |
		       LINK_SET_NO_NEIGH_SUPPRESS))
		put_brport(nlh, c);
}

void link_put_delete(struct nlmsghdr *nlh, int ifindex, const char *name)
{
	put_link_header(nlh, ifindex, name);
}

void link_put_group_delete(struct nlmsghdr *nlh, uint32_t group)
{
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC; /* index 0 and no name: the group names them */
	mnl_attr_put_u32(nlh, IFLA_GROUP, group);
}

/* The smallest MTU that carries IPv6 (RFC 8200): below it the kernel has no IPv6 state. */
#define IPV6_MIN_MTU 1280

bool link_addrgen_again(const struct link_obs *l, unsigned int mtu)
{
	if (mtu < IPV6_MIN_MTU)
		return false; /* no IPv6 state there: the kernel refuses the setting */
	if (l->addr_gen_known)
		return l->addr_gen_mode != IN6_ADDR_GEN_MODE_NONE;
	return l->mtu < IPV6_MIN_MTU;
}

/* One RTM_NEWLINK of c's settings in mask. */
static int send_change(struct kind_encoder *e, struct op *op, int ifindex,
		       const struct link_change *c, unsigned int mask)
{
	struct link_change part = *c;
	struct nlmsghdr *nlh = e->msg(e, RTM_NEWLINK, 0);

	if (!nlh)
		return -ENOBUFS;
	part.mask = c->mask & mask;
	link_put_change(nlh, ifindex, op->ifname, &part);
	e->commit(e, nlh);
	return 0;
}

static int send_down(struct kind_encoder *e, int ifindex)
{
	struct nlmsghdr *nlh = e->msg(e, RTM_NEWLINK, 0);
	struct ifinfomsg *ifi;

	if (!nlh)
		return -ENOBUFS;
	put_link_header(nlh, ifindex, NULL);
	ifi = mnl_nlmsg_get_payload(nlh);
	ifi->ifi_change = IFF_UP;
	e->commit(e, nlh);
	return 0;
}

/*
 * A link change as the kernel needs it: do_setlink applies the up flag before
 * IFLA_AF_SPEC, so a link that should come up without an IPv6 link-local
 * address gets that setting in one message and goes up in the next; and it
 * checks IFLA_AF_SPEC before it sets the MTU, so a link whose MTU comes back
 * to 1280 or more (its IPv6 state with it) gets that setting after the MTU.
 */
static int encode_change(struct kind_encoder *e, struct op *op, int ifindex, struct link_change *c)
{
	const unsigned int af = LINK_SET_NO_ADDRGEN, up = LINK_SET_UP;
	int ret = 0;

	/* the kernel renames only a link that is down: down first, up again after */
	if ((c->mask & LINK_SET_NAME) && (ret = send_down(e, ifindex)) < 0)
		return ret;
	if (!e->ipv6)
		c->mask &= ~af; /* the kernel refuses AF_INET6 settings */
	/* so does it for a link this message takes under 1280 bytes (wgfab0 of a small underlay) */
	if ((c->mask & LINK_SET_MTU) && c->mtu && c->mtu < IPV6_MIN_MTU)
		c->mask &= ~af;
	if (!(c->mask & af))
		return send_change(e, op, ifindex, c, ~0u);
	if (c->mask & LINK_SET_MTU) {
		ret = send_change(e, op, ifindex, c, ~(af | up));
		if (!ret)
			ret = send_change(e, op, ifindex, c, af);
	} else {
		ret = send_change(e, op, ifindex, c, ~up);
	}
	if (!ret && (c->mask & up))
		ret = send_change(e, op, ifindex, c, up);
	return ret;
}

int link_encode_create(struct kind_encoder *e, struct op *op, struct nlmsghdr *nlh,
		       unsigned int set_mtu)
{
	struct link_change c = {.mask = LINK_SET_ALIAS | LINK_SET_GROUP | LINK_SET_NO_ADDRGEN |
					LINK_SET_UP,
				.group = LINK_GROUP_OWNED};
	int idx = e->fresh_ifindex(e);

	if (!idx) {
		snprintf(e->why, sizeof(e->why), "no free interface index found");
		return -EAGAIN;
	}
	((struct ifinfomsg *)mnl_nlmsg_get_payload(nlh))->ifi_index = idx;
	e->commit(e, nlh);
	/* under 1280 bytes a link has no IPv6 state, and the kernel refuses the setting */
	if (op->u.create.mtu && op->u.create.mtu < IPV6_MIN_MTU)
		c.mask &= ~LINK_SET_NO_ADDRGEN;
	if (set_mtu) {
		c.mask |= LINK_SET_MTU;
		c.mtu = set_mtu;
	}
	/* the owner mark, with a stage note when the link is made in a stage (op.text) */
	snprintf(c.alias, sizeof(c.alias), "%s", op->text ? op->text : e->owner);
	return encode_change(e, op, idx, &c);
}

void link_change_of(const struct op *op, struct link_change *c)
{
	const struct op_link *l = &op->u.link;

	memset(c, 0, sizeof(*c));
	c->mask = l->mask;
	c->mtu = l->mtu;
	c->master = l->master;
	c->isolated = l->isolated;
	c->learning = l->learning;
	c->flood = l->flood;
	c->group = l->group;
	if ((c->mask & LINK_SET_ALIAS) && op->text)
		snprintf(c->alias, sizeof(c->alias), "%s", op->text);
	if (c->mask & LINK_SET_NAME)
		snprintf(c->name, sizeof(c->name), "%s", op->ifname);
}

int link_encode(struct kind_encoder *e, struct op *op)
{
	struct link_change c;
	struct nlmsghdr *nlh;

	if (op->type == OP_LINK_CHANGE) {
		link_change_of(op, &c);
		if ((c.mask & LINK_SET_MASTER) && !c.master) {
			c.master = op->u.link.bridge ? e->ifindex(e, op->u.link.bridge) : 0;
			if (!c.master) {
				snprintf(e->why, sizeof(e->why), "bridge not found");
				return -ENODEV;
			}
		}
		/* a rename's down, rename and up go to the kernel in one send */
		e->reserve(e, c.mask & LINK_SET_NAME ? 4 : 2,
			   (c.mask & LINK_SET_NAME ? 4 : 2) * KIND_LINK_MSG_MAX);
		return encode_change(e, op, op->ifindex, &c);
	}
	if (op->type != OP_LINK_DELETE)
		return -EINVAL;
	nlh = e->msg(e, RTM_DELLINK, 0);
	if (!nlh)
		return -ENOBUFS;
	link_put_delete(nlh, op->ifindex, op->ifname);
	e->commit(e, nlh);
	return 0;
}

/* The link kind's table of the observed state: struct link_table. */
static int link_kind_parse(const struct nlmsghdr *nlh, void *table)
{
	struct link_table *t = table;
	struct link_obs l;

	if (link_parse(nlh, &l) < 0)
		return 0; /* not a link we can name: skip it */
	drop_index(t);	  /* link_dump indexes the table once it is complete */
	/* the capacity doubles whenever n reaches a power of two (0, 1, 2, 4, ...) */
	if (!(t->n & (t->n - 1))) {
		struct link_obs *grown = realloc(t->links, (t->n ? 2 * t->n : 1) * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		t->links = grown;
	}
	if (link_own_alias(&l) < 0)
		return -ENOMEM;
	t->links[t->n++] = l;
	return 1;
}

/*
 * The link kind plans nothing by itself: the owned links nobody wants any
 * more are found by engine/reconcile.c, which knows a transport switch keeps
 * some (engine/switch.c); each link kind plans its own link.
 */
static int link_kind_plan(const struct kind_input *in, struct plan *p)
{
	(void)in;
	(void)p;
	return 0;
}

const struct kind link_kind = {.name = "link",
			       .noun = "link",
			       .parse = link_kind_parse,
			       .plan = link_kind_plan,
			       .encode = link_encode,
			       .describe = NULL};
