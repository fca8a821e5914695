// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/fdb.c - all-zeros VXLAN FDB entries (head-end replication remotes). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds/fdb.h"
#include "kinds/kind.h"
#include "engine/observe.h"
#include "kinds/vxlan.h"
#include "base/addr.h"

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
		case NDA_VNI:
			if (len == 4) {
				e->x.vni = mnl_attr_get_u32(attr);
				e->x.has |= FDB_HAS_VNI;
			}
			break;
		case NDA_PORT:
			if (len == 2) {
				e->x.port = ntohs(mnl_attr_get_u16(attr));
				e->x.has |= FDB_HAS_PORT;
			}
			break;
		case NDA_IFINDEX:
			if (len == 4) {
				e->x.via = mnl_attr_get_u32(attr);
				e->x.has |= FDB_HAS_VIA;
			}
			break;
		}
	}
	return zero && e->dst.family ? 1 : 0;
}

/*
 * An all-zeros FDB entry with a remote, the only neighbour entries fabricd
 * makes (learned MAC addresses and ARP come and go with guest traffic); its
 * device in *ifindex. The daemon's watch wakes on these and its view marks
 * the device for reading again.
 */
bool fdb_msg_is_remote(const struct nlmsghdr *nlh, int *ifindex)
{
	static const uint8_t zero[6];
	const struct ndmsg *ndm;
	const struct nlattr *attr;
	bool mac = false, dst = false;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ndm)))
		return false;
	ndm = mnl_nlmsg_get_payload(nlh);
	if (ndm->ndm_family != AF_BRIDGE)
		return false;
	mnl_attr_for_each(attr, nlh, sizeof(*ndm))
	{
		if (mnl_attr_get_type(attr) == NDA_LLADDR)
			mac = mnl_attr_get_payload_len(attr) == 6 &&
			      !memcmp(mnl_attr_get_payload(attr), zero, 6);
		else if (mnl_attr_get_type(attr) == NDA_DST)
			dst = true;
	}
	*ifindex = ndm->ndm_ifindex;
	return mac && dst;
}

int fdb_parse_mac(const struct nlmsghdr *nlh, struct fdb_mac *m)
{
	const struct ndmsg *ndm;
	const struct nlattr *attr;
	bool mac = false;

	memset(m, 0, sizeof(*m));
	if ((nlh->nlmsg_type != RTM_NEWNEIGH && nlh->nlmsg_type != RTM_DELNEIGH) ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ndm)))
		return 0;
	ndm = mnl_nlmsg_get_payload(nlh);
	if (ndm->ndm_family != AF_BRIDGE || !(ndm->ndm_flags & NTF_EXT_LEARNED))
		return 0;
	m->ifindex = ndm->ndm_ifindex;
	m->master = !(ndm->ndm_flags & NTF_SELF);
	mnl_attr_for_each(attr, nlh, sizeof(*ndm))
	{
		uint16_t len = mnl_attr_get_payload_len(attr);

		if (mnl_attr_get_type(attr) == NDA_LLADDR && len == 6) {
			memcpy(m->mac, mnl_attr_get_payload(attr), 6);
			mac = memcmp(m->mac, zero_mac, 6) != 0;
		} else if (mnl_attr_get_type(attr) == NDA_DST && (len == 4 || len == 16)) {
			m->dst.family = len == 4 ? AF_INET : AF_INET6;
			memcpy(m->dst.bytes, mnl_attr_get_payload(attr), len);
		}
	}
	/* the device's own with a remote, or the bridge's (to that port) without */
	return mac && (m->master ? !m->dst.family : m->dst.family != 0);
}

void fdb_put(struct nlmsghdr *nlh, int ifindex, const struct op_fdb *remote)
{
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));

	ndm->ndm_family = AF_BRIDGE;
	ndm->ndm_ifindex = ifindex;
	ndm->ndm_state = NUD_NOARP | NUD_PERMANENT;
	/* NTF_SELF: the entry belongs to the VXLAN device's own table, not the bridge's */
	ndm->ndm_flags = NTF_SELF;
	/* a MAC entry's delete: the bridge's first (the kernel does that one first) */
	if (remote->master)
		ndm->ndm_flags |= NTF_MASTER;
	mnl_attr_put(nlh, NDA_LLADDR, sizeof(remote->mac), remote->mac);
	mnl_attr_put(nlh, NDA_DST, ip_addr_len(&remote->dst), remote->dst.bytes);
	if (remote->x.has & FDB_HAS_VNI)
		mnl_attr_put_u32(nlh, NDA_VNI, remote->x.vni);
	if (remote->x.has & FDB_HAS_PORT)
		mnl_attr_put_u16(nlh, NDA_PORT, htons(remote->x.port));
	if (remote->x.has & FDB_HAS_VIA)
		mnl_attr_put_u32(nlh, NDA_IFINDEX, remote->x.via);
}

static int plan_del(struct plan *p, const struct vxlan_port *want, int ifindex,
		    const struct ip_addr *dst, const struct fdb_extra *x)
{
	struct op *op = plan_add(p, KIND_FDB, OP_FDB_DEL, PHASE_NEIGH, VERB_DELETE, want->name);

	if (!op)
		return -ENOMEM;
	op->ifindex = ifindex;
	op->u.fdb.dst = *dst;
	if (x)
		op->u.fdb.x = *x;
	return 0;
}

static int addr_cmp(const void *a, const void *b)
{
	const struct ip_addr *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return memcmp(x->bytes, y->bytes, ip_addr_len(x));
}

/* The device's entries no remote wants; sorted: the wanted remotes, in addr_cmp order. */
static int plan_dels(const struct fdb_table *fdb, const struct ip_addr *sorted,
		     const struct vxlan_port *want, int ifindex, struct plan *p)
{
	struct fdb_cursor c;
	struct ip_addr dst;

	fdb_cursor_start(fdb, ifindex, &c);
	while (fdb_next(fdb, &c, &dst)) {
		if (!bsearch(&dst, sorted, want->n_remotes, sizeof(*sorted), addr_cmp) &&
		    plan_del(p, want, ifindex, &dst, NULL) < 0)
			return -ENOMEM;
	}
	/* after the wanted remote is there: its frames never go astray in between */
	for (size_t i = 0; i < fdb->n_odd; i++) {
		const struct fdb_entry *e = &fdb->odd[i];

		if (e->ifindex == ifindex && plan_del(p, want, ifindex, &e->dst, &e->x) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * An EVPN device: zebra installs its flood entries (fabricd adds none), but a
 * zebra that died (kill -9, the OOM killer) leaves them, and the one started
 * again never learns of a VTEP withdrawn meanwhile. An entry to no member of
 * the zone, in either transport, that zebra does not hold (want->zebra, read
 * by the engine) is stale and goes; one zebra holds (a node that left the
 * zone but still announces it) is zebra's: removed, it comes back at once.
 * Entries with extras are not zebra's: left alone.
 */
bool fdb_evpn_stray(const struct vxlan_port *want, const struct ip_addr *dst, bool with_zebra)
{
	return !ip_addr_in(dst, want->remotes, want->n_remotes) &&
	       !ip_addr_in(dst, want->also, want->n_also) &&
	       !(with_zebra && ip_addr_in(dst, want->zebra, want->n_zebra));
}

static bool mac_in(const uint8_t *mac, const uint8_t (*list)[6], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!memcmp(mac, list[i], 6))
			return true;
	return false;
}

/*
 * The same for zebra's MAC entries (a guest behind a VTEP that left): frames
 * to that MAC went on to a node outside the zone. The bridge's entry for the
 * MAC (to the device's port, extern_learn) goes with it.
 */
bool fdb_evpn_stray_mac(const struct vxlan_port *want, const struct fdb_mac *m, bool with_zebra)
{
	return !m->master && fdb_evpn_stray(want, &m->dst, false) &&
	       !(with_zebra && mac_in(m->mac, want->zebra_macs, want->n_zebra_macs));
}

static int evpn_plan_stale_macs(const struct kind_input *in, struct plan *p)
{
	const struct vxlan_port *want = in->port;
	const struct fdb_mac *m;
	size_t n = fdb_macs_of(&in->have->fdb, in->link->ifindex, &m);

	for (size_t i = 0; i < n; i++) {
		struct op *op;

		if (!fdb_evpn_stray_mac(want, &m[i], true))
			continue;
		op = plan_add(p, KIND_FDB, OP_FDB_DEL, PHASE_NEIGH, VERB_DELETE, want->name);
		if (!op)
			return -ENOMEM;
		op->ifindex = in->link->ifindex;
		op->u.fdb.dst = m[i].dst;
		memcpy(op->u.fdb.mac, m[i].mac, 6);
		/* the bridge's entry for the MAC comes next (fdb_macs_of) */
		op->u.fdb.master =
		    i + 1 < n && m[i + 1].master && !memcmp(m[i + 1].mac, m[i].mac, 6);
	}
	return 0;
}

static int evpn_plan_stale(const struct kind_input *in, struct plan *p)
{
	const struct vxlan_port *want = in->port;
	const struct fdb_table *fdb = &in->have->fdb;
	struct fdb_cursor c;
	struct ip_addr dst;

	if (in->recreated || !in->link || want->role != VXLAN_SENDS)
		return 0;
	/* the MAC entries first: frames to them then flood to the members */
	if (!want->zebra_macs_unknown && evpn_plan_stale_macs(in, p) < 0)
		return -ENOMEM;
	if (want->zebra_unknown)
		return 0;
	fdb_cursor_start(fdb, in->link->ifindex, &c);
	while (fdb_next(fdb, &c, &dst))
		if (fdb_evpn_stray(want, &dst, true) &&
		    plan_del(p, want, in->link->ifindex, &dst, NULL) < 0)
			return -ENOMEM;
	return 0;
}

/*
 * in: port (the device wanted), link (its owned link; NULL only when
 * recreated), recreated, have->fdb. Each wanted remote is bisected in the
 * table (sorted by device and address), each of the device's entries in the
 * wanted remotes sorted: O(R log R) a device, not R².
 */
static int fdb_plan(const struct kind_input *in, struct plan *p)
{
	const struct vxlan_port *want = in->port;
	const struct fdb_table *fdb = &in->have->fdb;
	int ifindex = in->recreated ? 0 : in->link->ifindex;
	struct ip_addr *sorted;
	int ret;

	if (want->evpn)
		return evpn_plan_stale(in, p); /* zebra's flood list and MACs, but stale ones */
	for (size_t r = 0; r < want->n_remotes; r++) {
		struct op *op;

		if (!in->recreated && fdb_has(fdb, ifindex, &want->remotes[r]))
			continue;
		op = plan_add(p, KIND_FDB, OP_FDB_ADD, PHASE_NEIGH, VERB_CREATE, want->name);
		if (!op)
			return -ENOMEM;
		op->ifindex = ifindex;
		op->u.fdb.dst = want->remotes[r];
	}
	if (in->recreated || !fdb_has_device(fdb, ifindex))
		return 0; /* a new device starts empty */
	sorted = malloc((want->n_remotes ? want->n_remotes : 1) * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	if (want->n_remotes)
		memcpy(sorted, want->remotes, want->n_remotes * sizeof(*sorted));
	qsort(sorted, want->n_remotes, sizeof(*sorted), addr_cmp);
	ret = plan_dels(fdb, sorted, want, ifindex, p);
	free(sorted);
	return ret;
}

static int fdb_encode(struct kind_encoder *e, struct op *op)
{
	/* known from the dump, or made earlier in this run */
	int idx = op->ifindex ? op->ifindex : e->ifindex(e, op->ifname);
	struct nlmsghdr *nlh;

	if (!idx)
		return -ENODEV;
	if (op->type == OP_FDB_ADD)
		nlh = e->msg(e, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_APPEND);
	else
		nlh = e->msg(e, RTM_DELNEIGH, 0);
	if (!nlh)
		return -ENOBUFS;
	fdb_put(nlh, idx, &op->u.fdb);
	e->commit(e, nlh);
	return 0;
}

/* The FDB kind's table of the observed state: struct fdb_table (unsorted until fdb_table_sort). */
static int fdb_kind_parse(const struct nlmsghdr *nlh, void *table)
{
	return fdb_table_take(table, nlh, 0) < 0 ? -ENOMEM : 1;
}

/*
 * The object says it all ("fdb vx100 remote 192.0.2.2"), except for an
 * entry with extras: what it had that fabricd never gives one.
 */
static void fdb_describe(const struct op *op, char *buf, size_t len)
{
	const struct fdb_extra *x = &op->u.fdb.x;
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	if (memcmp(op->u.fdb.mac, zero_mac, 6) && len) {
		snprintf(buf, len,
			 "zebra's, stale: its VTEP is no member of the zone and zebra does not "
			 "hold the MAC%s",
			 op->u.fdb.master ? "; the bridge's entry for it too" : "");
		return;
	}
	if (!x->has || !len)
		return;
	if (x->has & FDB_HAS_VNI)
		used += (size_t)snprintf(buf + used, len - used, "vni %u", x->vni);
	if ((x->has & FDB_HAS_PORT) && used < len)
		used += (size_t)snprintf(buf + used, len - used, "%sport %u", used ? ", " : "",
					 x->port);
	if ((x->has & FDB_HAS_VIA) && used < len)
		used += (size_t)snprintf(buf + used, len - used, "%svia ifindex %u",
					 used ? ", " : "", x->via);
	if (used < len)
		snprintf(buf + used, len - used, ": not the device's own, set by hand");
}

const struct kind fdb_kind = {.name = "fdb",
			      .noun = "fdb",
			      .parse = fdb_kind_parse,
			      .plan = fdb_plan,
			      .encode = fdb_encode,
			      .describe = fdb_describe};
