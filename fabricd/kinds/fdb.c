// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/fdb.c - all-zeros VXLAN FDB entries (head-end replication remotes). */
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/fdb.h"

static const uint8_t zero_mac[6];

int fdb_parse(const struct nlmsghdr *nlh, struct fdb_entry *e)
{
	const struct ndmsg *ndm;
	const struct nlattr *attr;
	bool zero = false;

	memset(e, 0, sizeof(*e));
	if (nlh->nlmsg_type != RTM_NEWNEIGH || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ndm)))
		return 0;
	ndm = mnl_nlmsg_get_payload(nlh);
	if (ndm->ndm_family != AF_BRIDGE)
		return 0;
	e->ifindex = ndm->ndm_ifindex;
	mnl_attr_for_each(attr, nlh, sizeof(*ndm))
	{
		uint16_t len = mnl_attr_get_payload_len(attr);

		switch (mnl_attr_get_type(attr)) {
		case NDA_LLADDR:
			zero = len == 6 && !memcmp(mnl_attr_get_payload(attr), zero_mac, 6);
			break;
		case NDA_DST:
			if (len == 4 || len == 16) {
				e->dst.family = len == 4 ? AF_INET : AF_INET6;
				memcpy(e->dst.bytes, mnl_attr_get_payload(attr), len);
			}
			break;
		}
	}
	return zero && e->dst.family ? 1 : 0;
}

static int fdb_dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fdb_table *t = data;
	struct fdb_entry e, *grown;

	if (fdb_parse(nlh, &e) <= 0)
		return MNL_CB_OK;
	grown = realloc(t->entries, (t->n + 1) * sizeof(*grown));
	if (!grown) {
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	t->entries = grown;
	t->entries[t->n++] = e;
	return MNL_CB_OK;
}

static void fdb_table_reset(void *data)
{
	fdb_table_free(data);
}

void fdb_table_free(struct fdb_table *t)
{
	free(t->entries);
	t->entries = NULL;
	t->n = 0;
}

int fdb_dump(struct nl_sock *s, struct fdb_table *t)
{
	char buf[NL_MSG_BUF];
	struct nlmsghdr *nlh = nl_msg_start(s, buf, RTM_GETNEIGH, 0);
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	int ret;

	ndm->ndm_family = AF_BRIDGE;
	fdb_table_free(t);
	ret = nl_dump(s, nlh, fdb_dump_cb, fdb_table_reset, t);
	if (ret < 0)
		fdb_table_free(t);
	return ret;
}

bool fdb_has(const struct fdb_table *t, int ifindex, const struct ip_addr *dst)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->entries[i].ifindex == ifindex && ip_addr_equal(&t->entries[i].dst, dst))
			return true;
	}
	return false;
}

void fdb_put(struct nlmsghdr *nlh, int ifindex, const struct ip_addr *dst)
{
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));

	ndm->ndm_family = AF_BRIDGE;
	ndm->ndm_ifindex = ifindex;
	ndm->ndm_state = NUD_NOARP | NUD_PERMANENT;
	/* NTF_SELF: the entry belongs to the VXLAN device's own table, not the bridge's */
	ndm->ndm_flags = NTF_SELF;
	mnl_attr_put(nlh, NDA_LLADDR, sizeof(zero_mac), zero_mac);
	mnl_attr_put(nlh, NDA_DST, ip_addr_len(dst), dst->bytes);
}
